"""Stack rules see each resource's outputs, not its inputs: in preview the values a provider computes are unknown,
after `pulumi up` they are what the cloud reports (S3's default SSE-S3 encryption, every pool of a cluster, upper-case
Cloud Storage locations). The rules must be right in both states."""

from __future__ import annotations

import pytest
from policy_helpers import UNKNOWN, resource, run_resource, run_stack
from pulumi_policy.proxy import UnknownValueError

BUCKET, BUCKET_V2 = "aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2"
SSE = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
VERSIONING = "aws:s3/bucketVersioning:BucketVersioning"
KEY = "arn:aws:kms:us-east-1:123456789012:key/k"
NO_SSE = "bucket has no default encryption configuration: S3 encrypts its objects with S3-managed keys (SSE-S3), not a customer-managed KMS key"
SSE_S3 = "bucket's default encryption is AES256 and no encryption configuration sets it to aws:kms or aws:kms:dsse with a customer-managed kmsMasterKeyId"
UNVERSIONED = "versioning is not configured; enable it so deletes and overwrites can be undone"

GKE_CLUSTER, GKE_POOL = "gcp:container/cluster:Cluster", "gcp:container/nodePool:NodePool"
AKS_CLUSTER, AKS_POOL = "azure-native:containerservice:ManagedCluster", "azure-native:containerservice:AgentPool"
H100 = {"machineType": "a3-highgpu-8g", "guestAccelerators": [{"type": "nvidia-h100-80gb", "count": 8}]}
CPU = {"machineType": "e2-standard-8"}


def sse_s3(algorithm: str = "AES256", key: str = "") -> dict:
    """Bucket outputs after `pulumi up`: S3 reports a default encryption for every bucket (SSE-S3 unless set)."""
    return {"serverSideEncryptionConfiguration": {"rule": {
        "applyServerSideEncryptionByDefault": {"sseAlgorithm": algorithm, "kmsMasterKeyId": key}, "bucketKeyEnabled": False}}}


def messages(rule: str, resources: list, config: dict | None = None) -> list[tuple[str, str]]:
    """(resource name, or "" for the stack, message) of each violation."""
    return [((urn or "").split("::")[-1], message) for urn, message in run_stack(rule, resources, config)]


# --- S3 default encryption and versioning (computed inline outputs of Bucket and BucketV2) ---

def test_a_bare_bucket_in_preview_is_flagged_though_its_computed_settings_are_unknown() -> None:
    # Before, the unknown sentinel (a non-empty string) counted as an inline setting, so neither rule ever fired.
    bucket = resource(BUCKET, {"bucket": "data-1", "serverSideEncryptionConfiguration": UNKNOWN, "versioning": UNKNOWN}, "data")
    bucket_v2 = resource(BUCKET_V2, {"bucket": "logs-1", "serverSideEncryptionConfigurations": UNKNOWN, "versionings": UNKNOWN}, "models")
    assert messages("aws-s3-bucket-default-encryption", [bucket, bucket_v2]) == [("data", NO_SSE), ("models", NO_SSE)]
    assert messages("aws-s3-bucket-versioning", [bucket, bucket_v2]) == [("data", UNVERSIONED), ("models", UNVERSIONED)]


def test_a_bare_bucket_after_up_is_flagged_though_s3_reports_its_default_encryption() -> None:
    bucket = resource(BUCKET, {"bucket": "data-1", **sse_s3(), "versioning": {"enabled": False, "mfaDelete": False}}, "data")
    bucket_v2 = resource(BUCKET_V2, {"bucket": "models-1", "versionings": [{"enabled": False, "mfaDelete": False}],
                                     "serverSideEncryptionConfigurations": [{"rules": [{"bucketKeyEnabled": False,
                                         "applyServerSideEncryptionByDefaults": [{"sseAlgorithm": "AES256", "kmsMasterKeyId": ""}]}]}]}, "models")
    assert messages("aws-s3-bucket-default-encryption", [bucket, bucket_v2]) == [("data", SSE_S3), ("models", SSE_S3)]
    assert messages("aws-s3-bucket-versioning", [bucket, bucket_v2]) == [("data", UNVERSIONED), ("models", UNVERSIONED)]


@pytest.mark.parametrize("outputs", [
    {"bucket": "data-1", "serverSideEncryptionConfiguration": UNKNOWN, "versioning": UNKNOWN},  # preview
    {"bucket": "data-1", **sse_s3("aws:kms", KEY), "versioning": {"enabled": True, "mfaDelete": False}},  # after up
])
def test_a_bucket_with_side_resources_passes_in_preview_and_after_up(outputs: dict) -> None:
    bucket = resource(BUCKET, outputs, "data")
    kms = {"rules": [{"applyServerSideEncryptionByDefault": {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": KEY}}]}
    side = [resource(SSE, {"bucket": "data-1", **kms}, "data-sse", deps=[bucket]),
            resource(VERSIONING, {"bucket": "data-1", "versioningConfiguration": {"status": "Enabled"}}, "data-v", deps=[bucket])]
    assert run_stack("aws-s3-bucket-default-encryption", [bucket, *side]) == []
    assert run_stack("aws-s3-bucket-versioning", [bucket, *side]) == []


def test_inline_kms_without_a_key_is_reported_and_with_a_key_unknown_in_preview_is_not_judged() -> None:
    aws_managed = resource(BUCKET, {"bucket": "a-1", **sse_s3("aws:kms")}, "aws-managed")
    assert messages("aws-s3-bucket-default-encryption", [aws_managed]) == [("aws-managed", (
        "bucket's default encryption names no kmsMasterKeyId, so it uses the AWS-managed key; name a customer-managed key"))]
    # The program set aws:kms with the ARN of a key made in the same update: unknown, so not yet SSE-S3 nor compliant
    pending = resource(BUCKET, {"bucket": "p-1", **sse_s3("aws:kms", UNKNOWN)}, "pending")
    bare = resource(BUCKET, {"bucket": "b-1", "serverSideEncryptionConfiguration": UNKNOWN}, "bare")
    with pytest.raises(UnknownValueError):
        run_stack("aws-s3-bucket-default-encryption", [pending, bare], found=(found := []))
    assert [(urn.split("::")[-1], message) for urn, message in found] == [("bare", NO_SSE)]


def test_inline_versioning_counts_only_when_known_and_enabled() -> None:
    enabled = resource(BUCKET_V2, {"versionings": [{"enabled": True, "mfaDelete": False}]}, "kept")
    suspended = resource(BUCKET_V2, {"versionings": [{"enabled": False, "mfaDelete": False}]}, "dropped")
    assert messages("aws-s3-bucket-versioning", [enabled, suspended]) == [("dropped", UNVERSIONED)]


# --- gpu-cap-per-environment: a cluster's outputs list its separately managed pools too ---

def gke_cluster(pools: list[dict], name: str = "train") -> object:
    """GKE cluster outputs after `pulumi up`: nodePools lists every pool, the NodePool resources' too."""
    return resource(GKE_CLUSTER, {"name": name, "id": f"projects/p/locations/europe-west4/clusters/{name}",
                                  "location": "europe-west4", "removeDefaultNodePool": True, "nodePools": pools}, name)


def gke_pool(name: str, total_max: int, node_config: dict = H100) -> dict:
    # The provider reports 0 for the per-zone limits a pool with total limits does not use.
    return {"name": name, "nodeConfig": node_config, "nodeCount": 0, "initialNodeCount": 0, "nodeLocations": ["europe-west4-a", "europe-west4-b"],
            "autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": total_max, "minNodeCount": 0, "maxNodeCount": 0}}


@pytest.mark.parametrize(("ref", "linked"), [
    ("projects/p/locations/europe-west4/clusters/train", True),  # cluster=cluster.id: the pool depends on the cluster
    ("train", False),  # a literal cluster name: no dependency, matched by the cluster's name
])
def test_a_gke_pool_resource_listed_in_its_cluster_outputs_is_counted_once(ref: str, linked: bool) -> None:
    cluster = gke_cluster([gke_pool("system", 3, CPU), gke_pool("h100", 4)])
    pool = resource(GKE_POOL, {**gke_pool("h100", 4), "cluster": ref, "location": "europe-west4"}, "h100",
                    deps=[cluster] if linked else [])
    # Another cluster's inline pool of the same name is no separate resource: it still counts.
    other = gke_cluster([gke_pool("h100", 2)], name="serve")
    assert messages("gpu-cap-per-environment", [cluster, pool, other], {"maxGpusPerEnvironment": 40}) == [
        ("", "accelerator pools can scale to 48 accelerators in total; the environment cap is 40")]  # (4 + 2) x 8, not (4 + 4 + 2) x 8


def test_a_new_gke_cluster_whose_pool_list_is_unknown_in_preview_counts_only_its_pool_resources() -> None:
    """A cluster given no inline pools has `nodePools` unknown in a preview's outputs: none are declared inline (the
    list will hold the pool resources), so the cap is checked on a first preview instead of "can't run"."""
    cluster = resource(GKE_CLUSTER, {"name": "train", "location": "europe-west4", "removeDefaultNodePool": True,
                                     "nodePools": UNKNOWN}, "train")
    pool = resource(GKE_POOL, {**gke_pool("h100", 4), "cluster": UNKNOWN, "location": "europe-west4"}, "h100", deps=[cluster])
    assert messages("gpu-cap-per-environment", [cluster, pool], {"maxGpusPerEnvironment": 16}) == [
        ("", "accelerator pools can scale to 32 accelerators in total; the environment cap is 16")]
    # Without removeDefaultNodePool the default pool (nodeConfig, initialNodeCount per zone) counts as well.
    default = resource(GKE_CLUSTER, {"name": "serve", "location": "europe-west4-a", "nodePools": UNKNOWN,
                                     "nodeConfig": H100, "initialNodeCount": 1}, "serve")
    assert messages("gpu-cap-per-environment", [default], {"maxGpusPerEnvironment": 4}) == [
        ("", "accelerator pools can scale to 8 accelerators in total; the environment cap is 4")]


def test_a_gke_pool_resource_without_zones_takes_its_clusters_node_locations() -> None:
    """A NodePool that names no nodeLocations runs in its cluster's: two here, not the three of a region's default."""
    cluster = resource(GKE_CLUSTER, {"name": "train", "location": "europe-west4", "removeDefaultNodePool": True,
                                     "nodeLocations": ["europe-west4-a", "europe-west4-b"], "nodePools": UNKNOWN}, "train")
    pool = resource(GKE_POOL, {"name": "h100", "nodeConfig": H100, "location": "europe-west4",
                               "autoscaling": {"minNodeCount": 0, "maxNodeCount": 1}}, "h100", deps=[cluster])
    assert messages("gpu-cap-per-environment", [cluster, pool], {"maxGpusPerEnvironment": 8}) == [
        ("", "accelerator pools can scale to 16 accelerators in total; the environment cap is 8")]  # 2 zones x 1 x 8


def test_residency_leaves_a_key_vault_key_to_its_vault() -> None:
    """A Key Vault key takes no location (it is in its vault's), so it reports one only after creation."""
    key = resource("azure-native:keyvault:Key", {"keyName": "k", "location": UNKNOWN}, "key")
    vault = resource("azure-native:keyvault:Vault", {"vaultName": "v", "location": "westus2"}, "vault")
    assert messages("data-residency", [key, vault], {"allowedRegions": ["westeurope"]}) == [
        ("vault", "region westus2 is outside the allowed regions westeurope")]


def test_an_aks_agent_pool_listed_in_its_cluster_outputs_is_counted_once() -> None:
    gpu = {"name": "gpu", "vmSize": "Standard_ND96isr_H100_v5", "count": 1, "minCount": 1, "maxCount": 4, "enableAutoScaling": True}
    cluster = resource(AKS_CLUSTER, {"name": "aks-1a2b", "agentPoolProfiles": [
        {"name": "system", "vmSize": "Standard_D4s_v5", "count": 3}, gpu]}, "aks")
    pool = resource(AKS_POOL, {**gpu, "provisioningState": "Succeeded"}, "gpu", deps=[cluster])
    assert messages("gpu-cap-per-environment", [cluster, pool], {"maxGpusPerEnvironment": 16}) == [
        ("", "accelerator pools can scale to 32 accelerators in total; the environment cap is 16")]  # 4 x 8 once, not 64


# --- GKE per-zone node counts ---

@pytest.mark.parametrize(("props", "expected"), [
    ({"location": "us-central1", "autoscaling": {"minNodeCount": 0, "maxNodeCount": 2}}, "48 accelerators (3 zones x 2 x 8)"),
    ({"location": "us-central1-a", "autoscaling": {"minNodeCount": 0, "maxNodeCount": 2}}, "16 accelerators (2 x 8)"),
    ({"location": "us-central1", "nodeLocations": ["us-central1-a", "us-central1-b"], "nodeCount": 2}, "32 accelerators (2 zones x 2 x 8)"),
    ({"location": "us-central1", "autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": 2}}, "16 accelerators (2 x 8)"),
    ({"autoscaling": {"minNodeCount": 0, "maxNodeCount": 2}}, "48 accelerators (3 zones x 2 x 8)"),  # no location: assume regional
    # outputs: per-zone limits with the unused totals reported as 0
    ({"location": "us-central1", "nodeLocations": ["us-central1-a", "us-central1-b", "us-central1-f", "us-central1-c"], "nodeCount": 1,
      "autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": 0, "minNodeCount": 1, "maxNodeCount": 2}}, "64 accelerators (4 zones x 2 x 8)"),
])
def test_gke_per_zone_node_counts_are_multiplied_by_the_pool_zones(props: dict, expected: str) -> None:
    found = run_resource("gpu-cap-per-pool", GKE_POOL, {"cluster": "c", "nodeConfig": H100, **props}, {"maxGpusPerPool": 8})
    assert found == [f"pool can scale to {expected}; the cap is 8"]


def test_inline_and_default_gke_pools_take_the_cluster_zones() -> None:
    # A zonal cluster's nodeLocations leave out its own zone, which holds nodes too.
    zonal = {"location": "us-central1-a", "nodeLocations": ["us-central1-b"],
             "nodePools": [{"name": "gpu", "nodeConfig": H100, "autoscaling": {"minNodeCount": 1, "maxNodeCount": 2}}]}
    assert run_resource("gpu-cap-per-pool", GKE_CLUSTER, zonal, {"maxGpusPerPool": 8}) == [
        "node pool gpu: pool can scale to 32 accelerators (2 zones x 2 x 8); the cap is 8"]
    assert run_resource("dev-pools-spot-or-scale-to-zero", GKE_CLUSTER, zonal, {"environment": "dev"}) == [
        "node pool gpu: dev h100-80gb pool keeps 2 on-demand nodes running; use spot or min 0"]
    regional = {"location": "europe-west4", "initialNodeCount": 1, "nodeConfig": H100}
    assert run_resource("gpu-cap-per-pool", GKE_CLUSTER, regional, {"maxGpusPerPool": 8}) == [
        "default node pool: pool can scale to 24 accelerators (3 zones x 1 x 8); the cap is 8"]


# --- data-residency: Cloud Storage multi-regions and predefined dual-regions ---

@pytest.mark.parametrize(("location", "allowed", "finding"), [
    ("US", ["europe-west4"], "multi-region us (any region of the continent) is outside the allowed regions europe-west4"),
    ("EU", ["europe-west4", "europe-north1"],
     "multi-region eu (any region of the continent) is outside the allowed regions europe-west4, europe-north1"),
    ("EU", ["EU"], None),
    ("ASIA", ["asia"], None),
    ("EUR4", ["europe-north1", "europe-west4"], None),
    ("EUR4", ["eur4"], None),
    ("NAM4", ["us-central1", "us-east1"], None),
    ("EUR4", ["europe-west4"],
     "dual-region eur4 (europe-north1 and europe-west4) is outside the allowed regions europe-west4"),
    ("EUR5", ["europe-west1", "europe-west4"],
     "dual-region eur5 (europe-west1 and europe-west2) is outside the allowed regions europe-west1, europe-west4"),
    ("EUROPE-WEST4", ["europe-west4"], None),
])
def test_gcs_multi_and_dual_regions_pass_only_when_all_their_regions_are_allowed(location: str, allowed: list, finding: str | None) -> None:
    bucket = resource("gcp:storage/bucket:Bucket", {"name": "b", "location": location}, "b")
    assert messages("data-residency", [bucket], {"allowedRegions": allowed}) == ([("b", finding)] if finding else [])


def test_data_zones_treat_dual_regions_like_data_residency() -> None:
    zones = {"dataZones": {"eu": ["europe-north1", "europe-west4"]}}
    inside = resource("gcp:storage/bucket:Bucket", {"location": "EUR4", "labels": {"data-zone": "eu"}}, "inside")
    continent = resource("gcp:storage/bucket:Bucket", {"location": "EU", "labels": {"data-zone": "eu"}}, "continent")
    assert messages("data-zone-residency", [inside, continent], zones) == [
        ("continent", "data-zone eu data is in eu; allowed: europe-north1, europe-west4")]
