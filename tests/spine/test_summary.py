"""The plan summary: resources grouped by cloud, region and component, with the key facts (GPU types and counts,
node min/max, storage sizes)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import resource_record
from hypothesis import given
from hypothesis import strategies as st

from aiinfra.plan.runtime import UNKNOWN, PlanResult, ResourceRecord
from aiinfra.plan.summary import render_summary

STACK = "urn:pulumi:dev::ai-infra::pulumi:pulumi:Stack::ai-infra-dev"


def record(type_: str, name: str, inputs: dict[str, Any] | None = None, parent: str = STACK,
           custom: bool = True) -> ResourceRecord:
    return resource_record(type_, name, inputs, parent, custom, stack="dev")


def component(type_: str, name: str) -> ResourceRecord:
    return record(type_, name, custom=False)


def plan(*records: ResourceRecord) -> PlanResult:
    return PlanResult(project="ai-infra", stack="dev",
                      resources=[record("pulumi:pulumi:Stack", "ai-infra-dev", custom=False), *records])


def test_components_are_grouped_by_cloud_and_region_with_their_facts() -> None:
    train = component("ai-infra:aws:GpuNodePool", "dev-us-east-1-train")
    scratch = component("ai-infra:aws:Lustre", "dev-us-east-1-scratch")
    gke = component("ai-infra:gcp:GpuPool", "dev-us-central1-l4")
    aks = component("ai-infra:azure:GpuPool", "dev-eastus2-serve")
    vnet = component("ai-infra:azure:Network", "dev-eastus2")
    text = render_summary(plan(
        train, scratch, gke, aks, vnet,
        record("aws:eks/nodeGroup:NodeGroup", "train-ng", {
            "instanceTypes": ["p5.48xlarge"], "amiType": "AL2023_x86_64_NVIDIA", "capacityType": "SPOT",
            "scalingConfig": {"minSize": 0, "maxSize": 4, "desiredSize": 0}}, parent=train.urn),
        record("aws:fsx/lustreFileSystem:LustreFileSystem", "scratch-fs", {
            "storageCapacity": 1200, "deploymentType": "SCRATCH_2"}, parent=scratch.urn),
        record("aws:s3/bucketV2:BucketV2", "scratch-bucket", {"region": "us-east-1"}, parent=scratch.urn),
        record("gcp:container/nodePool:NodePool", "l4-pool", {
            "location": "us-central1", "nodeConfig": {"machineType": "g2-standard-4", "spot": True,
                                                      "guestAccelerators": [{"count": 1, "type": "nvidia-l4"}]},
            "autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": 2}}, parent=gke.urn),
        record("azure-native:containerservice:AgentPool", "serve-pool", {
            "vmSize": "Standard_NC24ads_A100_v4", "minCount": 1, "maxCount": 3}, parent=aks.urn),
        # An agent pool takes no location: the region comes from the component's name, known from other inputs.
        record("azure-native:network:VirtualNetwork", "vnet", {
            "location": "eastus2", "addressSpace": {"addressPrefixes": ["10.40.0.0/16"]}}, parent=vnet.urn),
        record("aws:s3/bucketV2:BucketV2", "loose-bucket", {"region": "us-east-1"}),
    ))
    assert text.splitlines() == [
        "Plan for ai-infra/dev: 7 resources and 5 components to create, and the stack",
        "",
        "aws",
        "  us-east-1",
        "    Lustre dev-us-east-1-scratch  (2 resources)",
        "      - LustreFileSystem scratch-fs: 1200 GiB SCRATCH_2",  # SCRATCH_2's throughput is fixed: none set
        "      - 1 bucket",
        "    GpuNodePool dev-us-east-1-train  (1 resource)",
        "      - NodeGroup train-ng: p5.48xlarge (8x h100-80gb) AL2023_x86_64_NVIDIA SPOT 0..4 nodes",
        "",
        "azure",
        "  eastus2",
        "    Network dev-eastus2  (1 resource)",
        "      - VirtualNetwork vnet: 10.40.0.0/16",
        "    GpuPool dev-eastus2-serve  (1 resource)",
        "      - AgentPool serve-pool: Standard_NC24ads_A100_v4 (1x a100-80gb) Regular 1..3 nodes",
        "",
        "gcp",
        "  us-central1",
        "    GpuPool dev-us-central1-l4  (1 resource)",
        "      - NodePool l4-pool: g2-standard-4 1x nvidia-l4 spot 0..2 nodes",
        "",
        "resources outside components",
        "  aws / us-east-1",
        "    1 x aws:s3/bucketV2:BucketV2",
        "      - 1 bucket",
    ]


def test_unknown_and_uncatalogued_values_read_as_such() -> None:
    pool = component("ai-infra:aws:GpuNodePool", "dev-us-east-1-custom")
    text = render_summary(plan(pool, record("aws:eks/nodeGroup:NodeGroup", "ng", {
        "instanceTypes": ["x9.huge"], "scalingConfig": {"minSize": 1, "maxSize": UNKNOWN}}, parent=pool.urn)))
    # A type the catalog doesn't know is shown as given; an unknown size as '?', never as the sentinel.
    assert "      - NodeGroup ng: x9.huge ON_DEMAND 1..? nodes" in text.splitlines()
    assert UNKNOWN not in text


def test_provisioned_lustre_throughput_is_shown() -> None:
    fs = component("ai-infra:aws:Lustre", "dev-us-east-1-train")
    text = render_summary(plan(fs, record("aws:fsx/lustreFileSystem:LustreFileSystem", "train-fs", {
        "storageCapacity": 4800, "deploymentType": "PERSISTENT_2", "perUnitStorageThroughput": 500}, parent=fs.urn)))
    assert "      - LustreFileSystem train-fs: 4800 GiB PERSISTENT_2 500 MB/s/TiB" in text.splitlines()


def test_counts_read_in_the_plural_from_two() -> None:
    store = component("ai-infra:aws:Bucket", "dev-us-east-1-data")
    text = render_summary(plan(store, *(record("aws:s3/bucketV2:BucketV2", f"b{i}", {"region": "us-east-1"}, parent=store.urn)
                                        for i in range(2)), record("aws:kms/key:Key", "k", parent=store.urn)))
    assert "      - 1 KMS key, 2 buckets" in text.splitlines()


def test_instance_types_with_the_same_accelerators_name_them_once() -> None:
    pool = component("ai-infra:aws:GpuNodePool", "dev-us-east-1-l4")
    text = render_summary(plan(pool, *(record("aws:eks/nodeGroup:NodeGroup", name, {
        "instanceTypes": types, "capacityType": "SPOT", "scalingConfig": {"minSize": 0, "maxSize": 4}}, parent=pool.urn)
        for name, types in (("same", ["g6.xlarge", "g6.2xlarge"]), ("mixed", ["g6.xlarge", "g6e.xlarge", "m6i.large"])))))
    lines = text.splitlines()
    assert "      - NodeGroup same: g6.xlarge, g6.2xlarge (1x l4) SPOT 0..4 nodes" in lines
    assert "      - NodeGroup mixed: g6.xlarge (1x l4), g6e.xlarge (1x l40s), m6i.large SPOT 0..4 nodes" in lines
    assert "    GpuNodePool dev-us-east-1-l4  (2 resources)" in lines


def test_providers_are_listed_apart_with_their_region() -> None:
    text = render_summary(plan(*(record(f"pulumi:providers:{package}", name, inputs) for package, name, inputs in (
        ("aws", "default_7_0_0", {"region": "us-east-1"}), ("kubernetes", "eks", {}), ("kubernetes", "gke", {})))))
    assert text.splitlines()[-4:] == ["", "providers", "  1 x aws, region us-east-1", "  2 x kubernetes"]
    assert "resources outside components" not in text


def test_an_aks_cluster_without_a_version_shows_its_upgrade_channel() -> None:
    cluster = component("ai-infra:azure:Cluster", "prod-eastus2")
    text = render_summary(plan(cluster, record("azure-native:containerservice:ManagedCluster", "aks", {
        "location": "eastus2", "autoUpgradeProfile": {"upgradeChannel": "stable"},
        "apiServerAccessProfile": {"enablePrivateCluster": True}}, parent=cluster.urn)))
    assert "      - ManagedCluster aks: k8s AKS default, upgrade channel=stable, private=True" in text.splitlines()


def test_endpoints_and_volume_claims_show_reach_and_size() -> None:
    endpoint = component("ai-infra:aws:InferenceEndpoint", "prod-us-east-1-inference")
    front_door = component("ai-infra:azure:FrontDoor", "prod-frontdoor")
    volumes = component("ai-infra:kubernetes:LustreVolumes", "prod-us-east-1-lustre")
    text = render_summary(plan(
        endpoint, front_door, volumes,
        record("aws:lb/loadBalancer:LoadBalancer", "lb", {"region": "us-east-1", "internal": True,
                                                          "loadBalancerType": "application"}, parent=endpoint.urn),
        record("aws:globalaccelerator/endpointGroup:EndpointGroup", "eg", {"endpointGroupRegion": "us-east-1"},
               parent=endpoint.urn),
        record("azure-native:cdn:AFDOrigin", "origin", {"hostName": "10.80.224.10", "sharedPrivateLinkResource": {
            "privateLinkLocation": "eastus2"}}, parent=front_door.urn),
        record("kubernetes:core/v1:PersistentVolumeClaim", "pvc", {
            "metadata": {"namespace": "research", "name": "train"},
            "spec": {"resources": {"requests": {"storage": "4800Gi"}}}}, parent=volumes.urn),
        record("kubernetes:core/v1:Service", "svc", {
            "metadata": {"namespace": "inference", "name": "llm",
                         "annotations": {"service.beta.kubernetes.io/azure-load-balancer-internal": "true"}},
            "spec": {"type": "LoadBalancer", "ports": [{"port": 8080}]}}, parent=volumes.urn),
        record("kubernetes:core/v1:Service", "plain", {"metadata": {"namespace": "inference", "name": "llm"},
                                                      "spec": {"ports": [{"port": 80}, {"port": 443}]}}, parent=volumes.urn),
    ))
    lines = text.splitlines()
    assert "      - LoadBalancer lb: application, internal=True" in lines
    assert "      - EndpointGroup eg: us-east-1, traffic dial 100%" in lines  # AWS's default dial when none is set
    assert "      - AFDOrigin origin: 10.80.224.10 through Private Link in eastus2" in lines
    assert "      - PersistentVolumeClaim pvc: research/train 4800Gi" in lines
    assert "      - Service svc: inference/llm LoadBalancer :8080, internal" in lines
    assert "      - Service plain: inference/llm ClusterIP :80,443" in lines  # the API's default type


NETWORK = component("ai-infra:aws:Network", "dev-us-east-1")
CLUSTER = component("ai-infra:aws:Cluster", "dev-us-east-1")  # the same name as the network: ordered by type
VOLUMES = component("ai-infra:kubernetes:LustreVolumes", "dev-us-east-1-lustre")
SAME_NAMES = [
    NETWORK, CLUSTER, VOLUMES,
    record("aws:ec2/vpc:Vpc", "vpc", {"region": "us-east-1", "cidrBlock": "10.10.0.0/16"}, parent=NETWORK.urn),
    record("aws:eks/cluster:Cluster", "eks", {"region": "us-east-1", "version": "1.35"}, parent=CLUSTER.urn),
    *(record("kubernetes:core/v1:PersistentVolumeClaim", f"{team}-pvc", {"metadata": {"namespace": team, "name": "scratch"}},
             parent=VOLUMES.urn) for team in ("research", "inference", "applied-ml")),
]


@given(st.permutations(SAME_NAMES))
def test_the_summary_does_not_depend_on_registration_order(records: list[ResourceRecord]) -> None:
    assert render_summary(plan(*records)) == render_summary(plan(*SAME_NAMES))


def test_maintenance_windows_show_day_start_and_length() -> None:
    gke = record("gcp:container/cluster:Cluster", "dev-us-central1-gke", {
        "privateClusterConfig": {"enablePrivateEndpoint": True}, "releaseChannel": {"channel": "REGULAR"},
        "maintenancePolicy": {"recurringWindow": {"startTime": "2024-01-07T15:00:00Z", "endTime": "2024-01-08T03:00:00Z",
                                                  "recurrence": "FREQ=WEEKLY;BYDAY=SU"}}})
    aks = record("azure-native:containerservice:MaintenanceConfiguration", "dev-eastus2-aks-maintenance-upgrade", {
        "configName": "aksManagedAutoUpgradeSchedule", "maintenanceWindow": {
            "schedule": {"weekly": {"dayOfWeek": "Sunday", "intervalWeeks": 1}}, "startTime": "11:00", "durationHours": 8}})
    text = render_summary(plan(gke, aks))
    assert "private endpoint=True, channel=REGULAR, maintenance SU 15:00 UTC for 12 h" in text  # across midnight
    assert "aksManagedAutoUpgradeSchedule: Sunday 11:00 UTC for 8 h" in text
    unknown = record("gcp:container/cluster:Cluster", "x", {"maintenancePolicy": {"recurringWindow": UNKNOWN}})
    assert "maintenance" not in render_summary(plan(unknown))


@pytest.mark.parametrize("start", [UNKNOWN, "[secret]", "2024-01-07T15:00:00"])
def test_a_gke_window_with_a_time_unknown_secret_or_without_a_zone_reads_as_unknown(start: str) -> None:
    """A start time computed from another resource's output (unknown in a preview), a secret one, or one without the
    zone its end has: the summary shows the window as `?` instead of failing the plan with a traceback."""
    gke = record("gcp:container/cluster:Cluster", "dev-us-central1-gke", {"maintenancePolicy": {"recurringWindow": {
        "startTime": start, "endTime": "2024-01-08T03:00:00Z", "recurrence": "FREQ=WEEKLY;BYDAY=SU"}}})
    assert "maintenance window ?" in render_summary(plan(gke))


def test_a_gke_pool_without_autoscaling_or_a_node_count_shows_unknown_nodes() -> None:
    pool = record("gcp:container/nodePool:NodePool", "dev-us-central1-system", {"nodeConfig": {"machineType": "e2-standard-4"}})
    assert "NodePool dev-us-central1-system: e2-standard-4 ? nodes" in render_summary(plan(pool))
