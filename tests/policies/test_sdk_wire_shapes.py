"""Rules read the shapes the typed provider SDKs put on the wire: each case plans real SDK classes on the mock runtime
and runs the rule on the inputs the engine would send. (Inline settings, single objects in one SDK class and lists in
another, were misread before: a compliant BucketV2 was denied, and inline GPU pools were never counted.)"""

from __future__ import annotations

from collections.abc import Callable

import pulumi
import pulumi_aws as aws
import pulumi_azure_native as azure
import pulumi_gcp as gcp
from policy_helpers import preview_stack, resource, run_resource, run_stack

from aiinfra.plan.runtime import run_program

KEY = "arn:aws:kms:us-east-1:123456789012:key/k"
H100_NODE = gcp.container.ClusterNodePoolNodeConfigArgs(
    machine_type="a3-highgpu-8g", service_account="nodes@p.iam.gserviceaccount.com",
    guest_accelerators=[gcp.container.ClusterNodePoolNodeConfigGuestAcceleratorArgs(type="nvidia-h100-80gb", count=8)])


def planned(build: Callable[[], None]) -> dict[str, tuple[str, dict]]:
    """name -> (type, wire inputs) of what `build` registers through the typed SDK classes."""
    result = run_program(build, project="p", stack="s")
    return {r.name: (r.type, r.inputs) for r in result.resources}


def check(rule: str, build: Callable[[], None], name: str, config: dict | None = None) -> list[str]:
    type_, inputs = planned(build)[name]
    return run_resource(rule, type_, inputs, config, resource_name=name)


def bucket_v2(algorithm: str, versioned: bool) -> Callable[[], None]:
    def build() -> None:
        aws.s3.BucketV2("b", server_side_encryption_configurations=[aws.s3.BucketV2ServerSideEncryptionConfigurationArgs(
            rules=[aws.s3.BucketV2ServerSideEncryptionConfigurationRuleArgs(
                apply_server_side_encryption_by_defaults=[
                    aws.s3.BucketV2ServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                        sse_algorithm=algorithm, kms_master_key_id=KEY if algorithm == "aws:kms" else None)])])],
            versionings=[aws.s3.BucketV2VersioningArgs(enabled=versioned)])
    return build


def bucket(algorithm: str) -> Callable[[], None]:
    def build() -> None:
        aws.s3.Bucket("b", server_side_encryption_configuration=aws.s3.BucketServerSideEncryptionConfigurationArgs(
            rule=aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                apply_server_side_encryption_by_default=aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                    sse_algorithm=algorithm))))
    return build


def stack_of(build: Callable[[], None]) -> list:
    """The stack as AnalyzeStack gets it in a preview (with the dependencies that name a new resource's owner)."""
    return preview_stack(build)


def on_inputs(build: Callable[[], None]) -> list:
    """The stack's resources on their inputs alone (no computed outputs, no dependencies)."""
    return [resource(type_, inputs, name) for name, (type_, inputs) in planned(build).items() if not type_.startswith("pulumi:")]


def test_inline_bucket_v2_encryption_and_versioning_count_as_set() -> None:
    resources = stack_of(bucket_v2("aws:kms", versioned=True))
    assert run_stack("aws-s3-bucket-default-encryption", resources) == []
    assert run_stack("aws-s3-bucket-versioning", resources) == []
    unversioned = stack_of(bucket_v2("aws:kms", versioned=False))
    assert [m for _, m in run_stack("aws-s3-bucket-versioning", unversioned)] == [
        "versioning is not configured; enable it so deletes and overwrites can be undone"]


def test_inline_sse_s3_is_reported_like_a_missing_configuration() -> None:
    # A bucket's inline setting is judged by the stack rule alone (on the outputs, where S3 reports its SSE-S3 default).
    assert run_stack("aws-s3-bucket-default-encryption", stack_of(bucket_v2("aws:kms", versioned=True))) == []
    expected = ["bucket's default encryption is AES256 and no encryption configuration sets it to aws:kms or aws:kms:dsse "
                "with a customer-managed kmsMasterKeyId"]
    for build in (bucket_v2("AES256", versioned=True), bucket("AES256")):
        assert [m for _, m in run_stack("aws-s3-bucket-default-encryption", stack_of(build))] == expected
        assert check("aws-s3-kms-encryption", build, "b") == []  # not reported twice


def test_a_bucket_policy_given_as_an_object_is_read() -> None:
    def build(condition: dict) -> Callable[[], None]:
        def program() -> None:
            b = aws.s3.BucketV2("b")
            aws.s3.BucketPolicy("b-policy", bucket=b.id, policy={"Version": "2012-10-17", "Statement": [{
                "Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": "*", "Condition": condition}]})
        return program

    tls = stack_of(build({"Bool": {"aws:SecureTransport": "false"}}))
    assert run_stack("aws-s3-bucket-tls-only", tls) == []
    other = stack_of(build({"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}}))
    assert [m for _, m in run_stack("aws-s3-bucket-tls-only", other)] == [
        "no bucket policy denies non-TLS (aws:SecureTransport=false) requests"]


def test_inline_gke_node_pools_are_pools() -> None:
    def build() -> None:
        gcp.container.Cluster("gke", location="europe-west4", node_pools=[gcp.container.ClusterNodePoolArgs(
            name="train", node_config=H100_NODE, autoscaling=gcp.container.ClusterNodePoolAutoscalingArgs(min_node_count=0, max_node_count=20),
            network_config=gcp.container.ClusterNodePoolNetworkConfigArgs(enable_private_nodes=False))])

    # max_node_count is per zone, and a regional (europe-west4) pool without node_locations spans three zones; this
    # read 160 (20 x 8) before, as if the per-zone maximum were the pool's.
    assert check("gpu-cap-per-pool", build, "gke", {"maxGpusPerPool": 64}) == [
        "node pool train: pool can scale to 480 accelerators (3 zones x 20 x 8); the cap is 64"]
    assert check("allowed-accelerators", build, "gke", {"allowedAccelerators": ["l4"]}) == [
        "node pool train: accelerator h100-80gb is not allowed here; allowed: l4"]
    assert "node pool train: nodes have public IPs (networkConfig.enablePrivateNodes is false)" in check(
        "gcp-gke-private-cluster", build, "gke")
    assert check("gcp-gke-shielded-nodes", build, "gke") == ["node pool train: secure boot is off"]
    found = run_stack("gpu-cap-per-environment", on_inputs(build), {"maxGpusPerEnvironment": 100})
    assert [m for _, m in found] == ["accelerator pools can scale to 480 accelerators in total; the environment cap is 100"]


def test_a_kept_default_gke_pool_is_checked_and_a_removed_one_is_not() -> None:
    def build(remove: bool) -> Callable[[], None]:
        return lambda: gcp.container.Cluster("gke", location="europe-west4", initial_node_count=1, remove_default_node_pool=remove)

    assert check("gcp-gke-node-service-account", build(False), "gke") == [
        "default node pool: nodes use the default compute service account (project Editor)"]
    assert check("gcp-gke-node-service-account", build(True), "gke") == []


def test_a_node_pool_with_public_nodes_is_reported() -> None:
    def build() -> None:
        gcp.container.NodePool("pool", cluster="c", node_config=gcp.container.NodePoolNodeConfigArgs(
            service_account="nodes@p.iam.gserviceaccount.com"),
            network_config=gcp.container.NodePoolNetworkConfigArgs(enable_private_nodes=False))

    assert check("gcp-gke-private-cluster", build, "pool") == ["nodes have public IPs (networkConfig.enablePrivateNodes is false)"]


def test_a_gke_cluster_with_ip_endpoints_off_has_no_public_endpoint() -> None:
    def build(ip_access: bool) -> Callable[[], None]:
        return lambda: gcp.container.Cluster(
            "gke", location="europe-west4", initial_node_count=1, remove_default_node_pool=True,
            private_cluster_config=gcp.container.ClusterPrivateClusterConfigArgs(enable_private_nodes=True),
            control_plane_endpoints_config=gcp.container.ClusterControlPlaneEndpointsConfigArgs(
                ip_endpoints_config=gcp.container.ClusterControlPlaneEndpointsConfigIpEndpointsConfigArgs(enabled=ip_access),
                dns_endpoint_config=gcp.container.ClusterControlPlaneEndpointsConfigDnsEndpointConfigArgs(allow_external_traffic=True)))

    assert check("gcp-gke-private-cluster", build(False), "gke") == []
    assert check("gcp-gke-private-cluster", build(True), "gke") == [
        "the control plane endpoint is public without an authorized-networks allowlist"]


def test_inline_aks_agent_pools_are_pools() -> None:
    def build() -> None:
        azure.containerservice.ManagedCluster("aks", resource_group_name="rg", dns_prefix="aks", agent_pool_profiles=[
            azure.containerservice.ManagedClusterAgentPoolProfileArgs(name="gpu", vm_size="Standard_ND96isr_H100_v5",
                                                                     count=20, min_count=1, max_count=20, enable_auto_scaling=True)])

    assert check("gpu-cap-per-pool", build, "aks", {"maxGpusPerPool": 64}) == [
        "agent pool gpu: pool can scale to 160 accelerators (20 x 8); the cap is 64"]
    assert check("accelerator-pool-tainted", build, "aks") == [
        "agent pool gpu: h100-80gb pool has no accelerator taint: CPU pods can land on its nodes"]
    assert check("dev-pools-spot-or-scale-to-zero", build, "aks", {"environment": "dev"}) == [
        "agent pool gpu: dev h100-80gb pool keeps 1 on-demand nodes running; use spot or min 0"]


def test_residency_reads_the_azure_native_provider_location() -> None:
    def build() -> None:
        provider = azure.Provider("westeu", location="westeurope")
        azure.resources.ResourceGroup("rg", opts=pulumi.ResourceOptions(provider=provider))

    records = planned(build)
    group = resource(records["rg"][0], records["rg"][1], "rg", provider=records["westeu"][1])
    assert [m for _, m in run_stack("data-residency", [group], {"allowedRegions": ["eastus2"]})] == [
        "region westeurope is outside the allowed regions eastus2"]
    assert run_stack("data-residency", [group], {"allowedRegions": ["westeurope"]}) == []


def test_residency_reads_an_azure_location_given_by_its_display_name() -> None:
    """Azure takes "West Europe" for westeurope; both the resource's location and the allowed list may use either."""
    def build() -> None:
        azure.resources.ResourceGroup("rg", location="West Europe")

    type_, inputs = planned(build)["rg"]
    group = resource(type_, inputs, "rg")
    assert run_stack("data-residency", [group], {"allowedRegions": ["westeurope"]}) == []
    assert run_stack("data-residency", [resource(type_, {"location": "westeurope"}, "rg")], {"allowedRegions": ["West Europe"]}) == []
    assert [m for _, m in run_stack("data-residency", [group], {"allowedRegions": ["eastus2"]})] == [
        "region westeurope is outside the allowed regions eastus2"]
    assert run_stack("data-zone-residency", [resource(type_, {**inputs, "tags": {"data-zone": "eu"}}, "rg")],
                     {"dataZones": {"eu": ["West Europe"]}}) == []


def test_data_zones_allow_zones_of_their_regions_and_read_the_provider_region() -> None:
    zones = {"dataZones": {"eu": ["europe-west4", "eu-west-1"]}}
    zonal = resource("gcp:lustre/instance:Instance", {"location": "europe-west4-b", "labels": {"data-zone": "eu"}}, "fs")
    assert run_stack("data-zone-residency", [zonal], zones) == []
    aws_bucket = resource("aws:s3/bucketV2:BucketV2", {"tags": {"data-zone": "eu"}}, "b", provider={"region": "us-east-1"})
    assert [m for _, m in run_stack("data-zone-residency", [aws_bucket], zones)] == [
        "data-zone eu data is in us-east-1; allowed: europe-west4, eu-west-1"]
