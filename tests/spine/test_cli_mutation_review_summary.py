"""Tests from a mutation review of the plan summary (aiinfra/plan/summary.py) and the "Diagnostics:" block
(aiinfra/plan/diagnostics.py): behaviour a changed line left every other test passing on.

They pin what a reader of `aiinfra plan` sees: the facts shown when an input is left to the cloud's default (an AKS pool
without autoscaling or a mode, a load balancer without a type, a GCP network without `autoCreateSubnetworks`), facts that
must not break on an unknown or malformed input, the region a component is filed under (a region whose name starts
another's, the resources' own region, zones, an unknown region), and how a logged message is headed and shown.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import resource_record, write_program

from aiinfra.cli import main
from aiinfra.plan.diagnostics import Diagnostic
from aiinfra.plan.runtime import UNKNOWN, PlanResult, ResourceRecord
from aiinfra.plan.summary import render_summary

STACK = "urn:pulumi:prod::ai-infra::pulumi:pulumi:Stack::ai-infra-prod"


def _record(type_: str, name: str, inputs: dict[str, Any] | None = None, parent: str = STACK,
            custom: bool = True) -> ResourceRecord:
    return resource_record(type_, name, inputs, parent, custom)


def _component(type_: str, name: str) -> ResourceRecord:
    return _record(type_, name, custom=False)


def _summary(*records: ResourceRecord, diagnostics: list[Diagnostic] | None = None) -> list[str]:
    stack = _record("pulumi:pulumi:Stack", "ai-infra-prod", parent="", custom=False)
    return render_summary(PlanResult(project="ai-infra", stack="prod", resources=[stack, *records],
                                     diagnostics=diagnostics or [])).splitlines()


# --- facts of inputs left to the cloud's defaults ----------------------------------------------------------------------

def test_aks_pools_without_autoscaling_or_a_mode_show_their_count_as_user_pools() -> None:
    """A pool without autoscaling shows its fixed `count` (`?` when it has none), a pool without a `mode` is a user
    pool (AKS's default), named unless its name is its mode; an agent pool without a `vmSize` shows `?`, not `None`."""
    cluster = _component("ai-infra:azure:Cluster", "prod-eastus2")
    lines = _summary(cluster, _record("azure-native:containerservice:ManagedCluster", "aks", {
        "location": "eastus2", "kubernetesVersion": "1.33",
        "agentPoolProfiles": [{"name": "system", "mode": "System", "vmSize": "Standard_D4ds_v5", "count": 3},
                              {"name": "gpu", "vmSize": "Standard_NC24ads_A100_v4"}]}, parent=cluster.urn),
        _record("azure-native:containerservice:AgentPool", "spare", {"minCount": 0, "maxCount": 2}, parent=cluster.urn))
    assert ("      - ManagedCluster aks: k8s 1.33, upgrade channel=none, private=None; system pool: Standard_D4ds_v5 "
            "3 nodes; user pool gpu: Standard_NC24ads_A100_v4 (1x a100-80gb) ? nodes") in lines
    assert "      - AgentPool spare: ? Regular 0..2 nodes" in lines


def test_load_balancers_networks_and_services_read_with_the_apis_defaults() -> None:
    """An ALB is the default load balancer type; a GCP network that does not set `autoCreateSubnetworks` is an auto-mode
    VPC (only `false` makes it custom-mode); an EKS cluster without a version gets EKS's default; a Service is internal
    only when the Azure annotation says "true"."""
    edge = _component("ai-infra:aws:InferenceEndpoint", "prod-us-east-1-inference")
    lines = _summary(
        edge,
        _record("aws:lb/loadBalancer:LoadBalancer", "lb", {"region": "us-east-1", "internal": False}, parent=edge.urn),
        _record("aws:eks/cluster:Cluster", "eks", {"region": "us-east-1"}, parent=edge.urn),
        _record("gcp:compute/network:Network", "auto", {}, parent=edge.urn),
        _record("gcp:compute/network:Network", "custom", {"autoCreateSubnetworks": False}, parent=edge.urn),
        _record("kubernetes:core/v1:Service", "svc", {
            "metadata": {"namespace": "inference", "name": "llm",
                         "annotations": {"service.beta.kubernetes.io/azure-load-balancer-internal": "false"}},
            "spec": {"type": "LoadBalancer", "ports": [{"port": 443}]}}, parent=edge.urn))
    assert "      - LoadBalancer lb: application, internal=False" in lines
    assert "      - Cluster eks: k8s default, public endpoint=None" in lines
    assert "      - Network auto: VPC" in lines and "      - Network custom: custom-mode VPC" in lines
    assert "      - Service svc: inference/llm LoadBalancer :443" in lines  # "false": not internal


# --- facts that must not break on what an offline plan cannot know -----------------------------------------------------

def test_facts_under_an_unknown_object_or_a_malformed_value_read_as_missing() -> None:
    """An object known only after deploy (EKS's `vpcConfig`) reads as missing below it instead of failing the summary;
    a GKE maintenance window without an end shows no window; a TPU topology that is not `AxB` shows no chip count; an
    accelerator entry known only after deploy is left out."""
    pools = _component("ai-infra:gcp:TpuSlice", "prod-us-central1-v5e")
    lines = _summary(
        pools,
        _record("aws:eks/cluster:Cluster", "eks", {"version": "1.33", "vpcConfig": UNKNOWN}, parent=pools.urn),
        _record("gcp:container/cluster:Cluster", "gke", {
            "releaseChannel": {"channel": "REGULAR"},
            "maintenancePolicy": {"recurringWindow": {"startTime": "2024-01-07T15:00:00Z",
                                                      "recurrence": "FREQ=WEEKLY;BYDAY=SU"}}}, parent=pools.urn),
        _record("gcp:container/nodePool:NodePool", "odd", {
            "location": "us-central1", "nodeConfig": {"machineType": "n2-standard-8", "guestAccelerators": [UNKNOWN]},
            "placementPolicy": {"tpuTopology": "2xfour"}, "nodeCount": 2}, parent=pools.urn))
    assert "      - Cluster eks: k8s 1.33, public endpoint=None" in lines
    assert "      - Cluster gke: private endpoint=None, channel=REGULAR" in lines
    assert "      - NodePool odd: n2-standard-8 tpu slice 2xfour 2 nodes" in lines


# --- the region a component is filed under -----------------------------------------------------------------------------

def _regions(lines: list[str]) -> dict[str, list[str]]:
    """Region line -> the component headers under it (the summary's second and third levels)."""
    regions: dict[str, list[str]] = {}
    current = None
    for line in lines:
        if line.startswith("  ") and not line.startswith("   "):
            current = regions.setdefault(line.strip(), [])
        elif line.startswith("    ") and not line.startswith("     ") and current is not None:
            current.append(line.strip().split("  (")[0])
    return regions


def test_a_region_whose_name_starts_another_does_not_take_its_components() -> None:
    """`europe-west1` is the start of `europe-west10`: a component named for europe-west10 is filed there, not under
    europe-west1 (the longer region name is tried first)."""
    west1 = _component("ai-infra:gcp:Cluster", "prod-europe-west1")
    west10 = _component("ai-infra:gcp:Cluster", "prod-europe-west10")
    # The resources hold no region: only the names say where each component is.
    regions = _regions(_summary(
        west1, west10,
        _record("gcp:compute/network:Network", "a", {}, parent=west1.urn),
        _record("gcp:compute/network:Network", "b", {}, parent=west10.urn),
        _record("gcp:storage/bucket:Bucket", "one", {"location": "EUROPE-WEST1"}),
        _record("gcp:storage/bucket:Bucket", "ten", {"location": "EUROPE-WEST10"})))
    assert regions["europe-west1"] == ["Cluster prod-europe-west1"]
    assert regions["europe-west10"] == ["Cluster prod-europe-west10"]


def test_a_component_without_a_region_in_its_name_takes_its_resources_most_common_region() -> None:
    """A component whose name names no region is filed under the region most of its resources are in (a zone counting
    as its region); one whose resources name none is `global`."""
    shared = _component("ai-infra:gcp:Storage", "prod-shared")
    dns = _component("ai-infra:gcp:Dns", "prod-dns")
    regions = _regions(_summary(
        shared, dns,
        _record("gcp:storage/bucket:Bucket", "a", {"location": "US-CENTRAL1"}, parent=shared.urn),
        _record("gcp:container/nodePool:NodePool", "b", {"location": "us-central1-a"}, parent=shared.urn),
        _record("gcp:storage/bucket:Bucket", "c", {"location": "us-east1"}, parent=shared.urn),
        _record("gcp:dns/managedZone:ManagedZone", "zone", {}, parent=dns.urn)))
    assert regions == {"global": ["Dns prod-dns"], "us-central1": ["Storage prod-shared"]}


def test_loose_resources_in_a_zone_or_an_unknown_region_are_placed_by_region() -> None:
    """Outside components, a resource in a zone is listed under the zone's region, and one whose region is known only
    after deploy under the provider's default region (never under the unknown value's placeholder)."""
    lines = _summary(
        _record("gcp:container/nodePool:NodePool", "zonal", {"location": "us-central1-a", "nodeCount": 1}),
        _record("aws:s3/bucketV2:BucketV2", "later", {"region": UNKNOWN}))
    at = lines.index("resources outside components")
    assert lines[at + 1:] == [
        "  aws / provider default region", "    1 x aws:s3/bucketV2:BucketV2", "      - 1 bucket",
        "  gcp / us-central1", "    1 x gcp:container/nodePool:NodePool", "      - NodePool zonal: ? 1 nodes",
    ]


def test_a_component_named_global_is_filed_under_its_resources_region() -> None:
    """`global` is no region a component's name can name: one called `prod-global-lb` is filed under the region of
    its resources, even when another resource's location is `global`."""
    lb = _component("ai-infra:gcp:LoadBalancer", "prod-global-lb")
    regions = _regions(_summary(
        lb,
        _record("gcp:compute/backendService:BackendService", "a", {"region": "us-central1"}, parent=lb.urn),
        _record("gcp:compute/backendService:BackendService", "b", {"region": "us-central1"}, parent=lb.urn),
        _record("gcp:compute/globalAddress:GlobalAddress", "ip", {"location": "global"})))
    assert regions["us-central1"] == ["LoadBalancer prod-global-lb"]


# --- order: the same plan reads the same whatever order the SDK registered it in ---------------------------------------

def test_regions_kinds_and_facts_are_listed_in_a_fixed_order() -> None:
    """A cloud's regions are sorted, so are the kinds of resources outside components in one place, and two resources
    of one name by type; registered in the reverse order, the plan still reads the same."""
    west, east = _component("ai-infra:aws:Network", "prod-us-west-2"), _component("ai-infra:aws:Network", "prod-us-east-1")
    records = [
        west, east,
        _record("aws:ec2/vpc:Vpc", "main", {"region": "us-west-2", "cidrBlock": "10.1.0.0/16"}, parent=west.urn),
        _record("aws:eks/cluster:Cluster", "main", {"region": "us-west-2", "version": "1.33"}, parent=west.urn),
        _record("aws:ec2/vpc:Vpc", "main", {"region": "us-east-1", "cidrBlock": "10.0.0.0/16"}, parent=east.urn),
        _record("aws:s3/bucketV2:BucketV2", "logs", {"region": "eu-west-1"}),
        _record("aws:kms/key:Key", "logs-key", {"region": "eu-west-1"}),
    ]
    expected = [
        "", "aws", "  us-east-1", "    Network prod-us-east-1  (1 resource)", "      - Vpc main: 10.0.0.0/16",
        "  us-west-2", "    Network prod-us-west-2  (2 resources)",
        "      - Vpc main: 10.1.0.0/16", "      - Cluster main: k8s 1.33, public endpoint=None",  # by name, then type
        "", "resources outside components", "  aws / eu-west-1",
        "    1 x aws:kms/key:Key", "    1 x aws:s3/bucketV2:BucketV2", "      - 1 KMS key, 1 bucket",
    ]
    for order in (records, records[::-1]):
        assert _summary(*order)[1:] == expected


def test_a_program_that_registers_nothing_plans_zero_resources() -> None:
    """The first line counts in the plural from zero, as English does: `0 resources and 0 components`."""
    assert _summary() == ["Plan for ai-infra/prod: 0 resources and 0 components to create, and the stack"]


# --- the Diagnostics: block --------------------------------------------------------------------------------------------

def test_a_message_on_a_components_child_is_headed_by_the_childs_own_type() -> None:
    """The block is set off by a blank line, and a message logged on a resource inside a component is headed
    `<type> (<name>):` with the resource's own type, as `pulumi preview` heads it, not the parent types its URN
    carries; an empty message still shows its severity."""
    child = "urn:pulumi:prod::ai-infra::ai-infra:aws:Lustre$aws:fsx/lustreFileSystem:LustreFileSystem::scratch"
    lines = _summary(diagnostics=[Diagnostic("warning", "no backup", child), Diagnostic("info", "", "")])
    assert lines[-6:] == ["", "Diagnostics:", "  aws:fsx/lustreFileSystem:LustreFileSystem (scratch):",
                          "    warning: no backup", "  pulumi:pulumi:Stack (ai-infra-prod):", "    info: "]


def test_a_program_that_logs_an_empty_message_still_plans(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`pulumi.log.warn("")` is a message like any other: the plan succeeds and shows it under its resource."""
    program = write_program(tmp_path, "import pulumi\n"
                                      "bucket = pulumi.CustomResource('aws:s3/bucket:Bucket', 'logs', {})\n"
                                      "pulumi.log.warn('', resource=bucket)\n")
    assert main(["plan", "--program", str(program), "--stack", "dev", "--no-policy"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[out.index("Diagnostics:") + 1:] == ["  aws:s3/bucket:Bucket (logs):", "    warning: "]
