"""Review 6 (config fuzzing): configs a cloud would refuse at `pulumi up`, or silently ignore, are refused when the
config loads, each with its config path, the value given and what is allowed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml
from helpers import DELETE, change, platform_dict, run_platform, spec_issues

from components.spec import load_platform
from components.spec.common import RESERVED_NAMESPACES_RULE

ROOT = Path(__file__).resolve().parents[2]
STAGING: dict[str, Any] = yaml.safe_load((ROOT / "stacks" / "Pulumi.staging.yaml").read_text())["config"]["ai-infra:platform"]
AWS, GCP, AZURE = "clouds/aws/regions/us-east-1", "clouds/gcp/regions/us-central1", "clouds/azure/regions/eastus2"
AWS_PATH, GCP_PATH, AZURE_PATH = (f"platform.{p.replace('/', '.')}" for p in (AWS, GCP, AZURE))


def staging(*changes: tuple[str, Any]) -> dict[str, Any]:
    data = STAGING
    for path, value in changes:
        data = change(data, path, value)
    return data


issues = spec_issues


def test_the_staging_stack_loads() -> None:
    load_platform(staging())


# --- 1. inference.service_namespace ---------------------------------------------------------------------------------

@pytest.mark.parametrize("namespace", ["monitoring", "default", "gpu-operator", "kueue-system", "gmp-system", "kube-system",
                                       "gke-managed-system", "autoneg-system"])
def test_the_inference_namespace_may_not_be_one_the_platform_uses(namespace: str) -> None:
    # The layer would create a second Namespace object of that name: AlreadyExists half-way through `pulumi up`.
    assert issues(staging((f"{GCP}/inference/service_namespace", namespace))) == [(
        f"{GCP_PATH}.inference.service_namespace",
        f"service_namespace '{namespace}' is a namespace the Kubernetes layer or the cluster's add-ons use, which the layer "
        "would create a second time (`pulumi up` fails with AlreadyExists); put the inference Service in a namespace of its "
        f"own, or a team's; not allowed: {RESERVED_NAMESPACES_RULE}")]


def test_the_inference_namespace_may_be_a_teams() -> None:
    # The team owns the namespace and the Service joins it (components/k8s/inference.py: team_namespaces).
    spec = load_platform(staging((f"{GCP}/inference/service_namespace", "research")))
    assert spec.clouds.gcp.regions["us-central1"].inference.service_namespace == "research"


# --- 2. reserved team names ----------------------------------------------------------------------------------------

RESERVED = ("amazon-cloudwatch, app-routing-system, autoneg-system, calico-system, default, gatekeeper-system, gmp-public, "
            "gmp-system, gpu-operator, kueue-system, monitoring, tigera-operator, kube-*, gke-*")


def test_the_reserved_names_in_words() -> None:
    assert RESERVED_NAMESPACES_RULE == RESERVED


@pytest.mark.parametrize("team", ["gke-gmp-system", "gke-managed-cim", "gke-connect", "app-routing-system", "amazon-cloudwatch"])
def test_add_on_namespaces_are_reserved_team_names(team: str) -> None:
    assert issues(staging((f"teams/{team}", {}))) == [(
        f"platform.teams.{team}",
        f"team name '{team}' is reserved for a namespace the Kubernetes layer or the clusters' add-ons use; not allowed: "
        f"{RESERVED}")]


def test_a_team_named_gke_alone_is_not_reserved() -> None:
    assert "gke" in load_platform(staging(("teams/gke", {}))).teams


# --- 3. taints ------------------------------------------------------------------------------------------------------

def taints(*items: tuple[str, str, str]) -> list[dict[str, str]]:
    return [{"key": k, "value": v, "effect": e} for k, v, e in items]


def test_a_pools_taints_may_not_repeat_a_key_and_effect() -> None:
    data = staging((f"{AWS}/gpu_pools/l4-serve/taints", taints(("dedicated", "a", "NoSchedule"), ("dedicated", "b", "NoSchedule"))))
    assert issues(data) == [(
        f"{AWS_PATH}.gpu_pools.l4-serve.taints[1]",
        "taint dedicated with effect NoSchedule repeats taints[0]; Kubernetes takes one taint per key and effect "
        "(\"taints must be unique by key and effect pair\"): keep one")]


def test_one_key_may_carry_two_effects() -> None:
    data = staging((f"{AWS}/gpu_pools/l4-serve/taints", taints(("dedicated", "a", "NoSchedule"), ("dedicated", "a", "NoExecute"),
                                                               ("nvidia.com/gpu", "true", "NoExecute"))))
    assert len(load_platform(data).clouds.aws.regions["us-east-1"].gpu_pools["l4-serve"].taints) == 3


@pytest.mark.parametrize(("region", "pool", "taint", "written"), [
    (AWS, "l4-serve", ("nvidia.com/gpu", "x", "NoSchedule"), "nvidia.com/gpu=true:NoSchedule"),
    (GCP, "l4-serve", ("nvidia.com/gpu", "present", "NoSchedule"), "nvidia.com/gpu=present:NoSchedule"),  # GKE's own value
    (AZURE, "a100-serve", ("nvidia.com/gpu", "true", "NoSchedule"), "nvidia.com/gpu=true:NoSchedule"),
], ids=["aws", "gcp", "azure"])
def test_a_pool_taint_may_not_take_the_accelerator_taints_key_and_effect(region: str, pool: str, taint: tuple[str, str, str],
                                                                         written: str) -> None:
    path = f"platform.{region.replace('/', '.')}.gpu_pools.{pool}.taints[0]"
    assert issues(staging((f"{region}/gpu_pools/{pool}/taints", taints(taint)))) == [(
        path, f"taint nvidia.com/gpu with effect NoSchedule is the accelerator taint the toolkit sets on every NVIDIA GPU pool "
              f"({written}); a node takes one taint per key and effect: remove it, or use another key or effect")]


def test_a_neuron_pool_taint_may_not_take_the_neuron_taint() -> None:
    data = staging((f"{AWS}/gpu_pools/trn", {"accelerator": "trainium2", "taints": taints(("aws.amazon.com/neuron", "", "NoSchedule"))}))
    assert issues(data) == [(
        f"{AWS_PATH}.gpu_pools.trn.taints[0]",
        "taint aws.amazon.com/neuron with effect NoSchedule is the accelerator taint the toolkit sets on every AWS Neuron pool "
        "(aws.amazon.com/neuron=true:NoSchedule); a node takes one taint per key and effect: remove it, or use another key or "
        "effect")]


def test_an_aks_spot_pool_taint_may_not_take_the_spot_taint() -> None:
    spot = ("kubernetes.azure.com/scalesetpriority", "spot", "NoSchedule")
    assert issues(staging((f"{AZURE}/gpu_pools/a100-serve/taints", taints(spot)))) == [(
        f"{AZURE_PATH}.gpu_pools.a100-serve.taints[0]",
        "taint kubernetes.azure.com/scalesetpriority with effect NoSchedule is the taint AKS sets on every spot pool "
        "(kubernetes.azure.com/scalesetpriority=spot:NoSchedule); a node takes one taint per key and effect: remove it, or "
        "use another key or effect")]


# --- 4-6. the API server's allowlist --------------------------------------------------------------------------------

def cluster(region: str, api_access: str, cidrs: list[str]) -> tuple[str, Any]:
    return (f"{region}/cluster", {"api_access": api_access, "authorized_cidrs": cidrs})


@pytest.mark.parametrize("api_access,cidr", [("private", "10.99.0.0/16"), ("public_restricted", "198.51.100.0/24")])
def test_an_authorized_network_listed_twice_is_refused(api_access: str, cidr: str) -> None:
    # AWS names a security group rule after each entry: two of one name are a duplicate URN.
    assert issues(staging(cluster(AWS, api_access, [cidr, "10.98.0.0/16" if api_access == "private" else "52.94.0.0/16", cidr]))) == [
        (f"{AWS_PATH}.cluster.authorized_cidrs[2]", f"{cidr} is listed twice (also authorized_cidrs[0]); list each network once")]


@pytest.mark.parametrize(("region", "network", "cidr"), [(AWS, "10.30.0.0/16", "10.30.0.0/16"), (AWS, "10.30.0.0/16", "10.30.4.0/24"),
                                                         (GCP, "10.40.0.0/16", "10.40.0.0/16")])
def test_a_private_authorized_network_inside_the_clusters_own_is_refused(region: str, network: str, cidr: str) -> None:
    # EKS: a second rule for the VPC's CIDR is InvalidPermission.Duplicate; GKE lists the network itself already.
    assert issues(staging(cluster(region, "private", [cidr]))) == [(
        f"platform.{region.replace('/', '.')}.cluster.authorized_cidrs[0]",
        f"{cidr} is inside this region's network cidr {network}, which the toolkit already admits to the API server; remove it "
        "(authorized_cidrs lists the other networks that reach it)")]


def test_a_private_network_around_the_clusters_own_is_accepted() -> None:
    spec = load_platform(staging(cluster(AWS, "private", ["10.0.0.0/8"])))  # a VPN's whole 10/8, the VPC in it
    assert [str(c) for c in spec.clouds.aws.regions["us-east-1"].cluster.authorized_cidrs] == ["10.0.0.0/8"]


@pytest.mark.parametrize(("cidr", "overlaps"), [
    ("10.0.0.0/8", "10.0.0.0/8 (private, RFC 1918)"),
    ("192.168.7.0/24", "192.168.0.0/16 (private, RFC 1918)"),
    ("100.64.0.0/10", "100.64.0.0/10 (shared address space, RFC 6598)"),
    ("169.254.0.0/16", "169.254.0.0/16 (link-local)"),
    ("127.0.0.1/32", "127.0.0.0/8 (loopback)"),
    ("8.0.0.0/6", "10.0.0.0/8 (private, RFC 1918)"),
    ("224.0.0.0/3", "224.0.0.0/4 (multicast) and 240.0.0.0/4 (reserved, RFC 1112)"),
])
def test_a_public_endpoint_takes_public_ranges_only(cidr: str, overlaps: str) -> None:
    assert issues(staging(cluster(AWS, "public_restricted", [cidr]))) == [(
        f"{AWS_PATH}.cluster.authorized_cidrs[0]",
        f"{cidr} is not a public range: it overlaps {overlaps}, addresses no client reaches a public endpoint from (EKS refuses "
        "them); list your public egress ranges, or use api_access 'private' for networks that reach the cluster privately")]


def test_public_ranges_are_accepted_at_a_public_endpoint() -> None:
    cidrs = ["52.94.0.0/16", "203.0.113.0/24", "198.51.100.7/32"]
    for region in (AWS, GCP, AZURE):
        load_platform(staging(cluster(region, "public_restricted", cidrs)))


def public(n: int) -> list[str]:
    return [f"20.{i // 256}.{i % 256}.0/24" for i in range(n)]


def private(n: int) -> list[str]:
    return [f"172.16.{i}.0/24" for i in range(n)]


@pytest.mark.parametrize(("region", "api_access", "ranges", "limit", "why"), [
    (AWS, "public_restricted", public, 40, "EKS takes at most 40 public access CIDR ranges per cluster, a quota AWS does not raise"),
    (GCP, "public_restricted", public, 50, "GKE takes at most 50 authorized networks for a public endpoint"),
    (GCP, "private", private, 99, "GKE takes at most 100 authorized networks for a private endpoint, and the toolkit adds the "
                                  "cluster's own network as one of them"),
    (AZURE, "public_restricted", public, 200, "AKS takes at most 200 authorized IP ranges"),
], ids=["eks-public", "gke-public", "gke-private", "aks-public"])
def test_authorized_networks_stay_within_the_clouds_limit(region: str, api_access: str, ranges: Any, limit: int, why: str) -> None:
    load_platform(staging(cluster(region, api_access, ranges(limit))))
    assert issues(staging(cluster(region, api_access, ranges(limit + 1)))) == [(
        f"platform.{region.replace('/', '.')}.cluster.authorized_cidrs",
        f"got {limit + 1} entries; {why}: allowed with api_access '{api_access}': at most {limit}; merge adjacent ranges into "
        "larger prefixes")]


@pytest.mark.parametrize("region", [AWS, AZURE])
def test_no_limit_where_the_list_is_no_api_field(region: str) -> None:
    # EKS: a private endpoint's entries are security group rules (an adjustable quota); AKS: not sent for a private API.
    load_platform(staging(cluster(region, "private", private(120))))


# --- 7. settings of another cloud -----------------------------------------------------------------------------------

def test_upgrade_channel_is_refused_on_aws() -> None:
    assert issues(staging((f"{AWS}/cluster/upgrade_channel", "rapid"))) == [(
        f"{AWS_PATH}.cluster.upgrade_channel",
        "upgrade_channel 'rapid' has no effect on AWS: EKS has no release channels and never upgrades a cluster by itself (the "
        "toolkit pins kubernetes_version, default 1.35); remove upgrade_channel and set kubernetes_version to choose the minor")]


def test_upgrade_channel_is_taken_on_gke_and_aks() -> None:
    spec = load_platform(staging((f"{GCP}/cluster/upgrade_channel", "rapid"), (f"{AZURE}/cluster/upgrade_channel", "stable")))
    assert spec.clouds.gcp.regions["us-central1"].cluster.upgrade_channel.value == "rapid"


@pytest.mark.parametrize(("cloud", "name", "service"), [
    ("aws", "AWS", "AWS Global Accelerator (or Route 53 latency records)"),
    ("gcp", "GCP", "a global external Application Load Balancer"),
])
def test_azure_tier_is_refused_on_other_clouds(cloud: str, name: str, service: str) -> None:
    assert issues(staging((f"clouds/{cloud}/global_endpoint/azure_tier", "standard"))) == [(
        f"platform.clouds.{cloud}.global_endpoint.azure_tier",
        f"azure_tier 'standard' is Azure-only (the Front Door tier); the {name} global endpoint is {service}, which has no "
        "tier: remove azure_tier")]


def test_autoclass_takes_no_class_transitions() -> None:
    bucket = {"autoclass": True, "tiering": {"warm_after_days": 10, "cold_after_days": None, "expire_after_days": 400}}
    assert issues(staging((f"{GCP}/buckets/datasets", bucket))) == [(
        f"{GCP_PATH}.buckets.datasets.tiering.warm_after_days",
        "warm_after_days 10 has no effect with autoclass: Autoclass moves objects between storage classes itself, so the "
        "bucket gets no class transitions; remove it (expire_after_days still applies), or set autoclass to false")]


def test_autoclass_with_an_expiry_only_is_accepted() -> None:
    load_platform(staging((f"{GCP}/buckets/datasets", {"autoclass": True, "tiering": {"expire_after_days": 400}})))
    load_platform(staging((f"{GCP}/buckets/datasets", {"autoclass": True})))  # the default tiering is not "given"


def test_more_network_zones_than_the_gcp_region_has_stop_the_preview() -> None:
    from components.compose.gcp import default_zones

    us_east1 = ["us-east1-b", "us-east1-c", "us-east1-d"]
    assert default_zones("us-east1", us_east1, 2) == ["us-east1-b", "us-east1-c"]
    assert default_zones("us-east1", [], 3) == []  # nothing looked up yet
    with pytest.raises(pulumi.RunError) as caught:
        default_zones("us-east1", [*us_east1, "us-east1-ai1b"], 4)  # an AI zone is never a default zone
    assert str(caught.value) == ("platform.clouds.gcp.regions.us-east1.network.zones: 4, but us-east1 has 3 zones (us-east1-b, "
                                 "us-east1-c, us-east1-d); allowed: 2 to 3")


def test_the_zone_count_is_checked_in_a_plan() -> None:
    # The offline planner answers every region with zones a, b, c, d and f.
    spec = load_platform(platform_dict({"gcp": {"project": "acme-ml-test", "regions": {
        "us-central1": {"network": {"cidr": "10.20.0.0/16", "zones": 6}}}}}))
    with pytest.raises(pulumi.RunError, match=r"^platform\.clouds\.gcp\.regions\.us-central1\.network\.zones: 6, but us-central1 "
                                              r"has 5 zones \(.*\); allowed: 2 to 5$"):
        run_platform(spec)


# --- 8. null for an optional block ----------------------------------------------------------------------------------

NULL = "got null (an empty value): YAML reads `{key}:` with nothing after it as null, not as an empty mapping; "


@pytest.mark.parametrize(("path", "message"), [
    (f"{AWS}/cluster", "write `cluster: {}` for a cluster with the default settings, or remove the key for no cluster"),
    (f"{GCP}/inference", "write `inference: {}` for an inference service with the default settings, or remove the key for no "
                         "inference service"),
    ("clouds/gcp/global_endpoint", "write `global_endpoint: {}` for a global endpoint with the default settings, or remove the "
                                   "key for no global endpoint"),
    ("clouds/azure", "give the Azure settings under it (its regions at least), or remove the key for no Azure regions"),
], ids=["cluster", "inference", "global-endpoint", "cloud"])
def test_null_for_an_optional_block_is_refused(path: str, message: str) -> None:
    if path == f"{AWS}/cluster":  # what needs the cluster goes too, so the null is the one problem
        data = staging((f"{AWS}/gpu_pools", {}), (f"{AWS}/inference", DELETE), ("clouds/aws/global_endpoint", DELETE),
                       (path, None))
    elif path == f"{GCP}/inference":
        data = staging(("clouds/gcp/global_endpoint", DELETE), (path, None))
    else:
        data = staging((path, None))
    assert issues(data) == [(f"platform.{path.replace('/', '.')}", NULL.format(key=path.rsplit("/", 1)[1]) + message)]


def test_an_empty_cluster_key_in_a_stack_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Editing `cluster: {}` to `cluster:` planned the cluster's deletion.
    from aiinfra.cli import main

    (tmp_path / "Pulumi.yaml").write_text("name: ai-infra\nruntime: python\n")
    (tmp_path / "__main__.py").write_text((ROOT / "stacks" / "__main__.py").read_text())
    text = (ROOT / "stacks" / "Pulumi.staging.yaml").read_text()
    (tmp_path / "Pulumi.staging.yaml").write_text(text.replace("            cluster: {}\n", "            cluster:\n", 1))
    assert main(["validate", "--program", str(tmp_path), "--stack", "staging"]) == 1
    assert capsys.readouterr().err == (
        f"error: invalid platform config (1 problem):\n  {AWS_PATH}.cluster: {NULL.format(key='cluster')}write `cluster: {{}}` "
        "for a cluster with the default settings, or remove the key for no cluster\n")


# --- 9. messages ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("path", "value", "where", "message"), [
    ("clouds/azure/regions", {}, "platform.clouds.azure.regions",
     "expected at least 1 region, got none; list the azure regions to deploy to, or remove clouds.azure"),
    (f"{AWS}/gpu_pools/l4-serve/max_nodes", -1, f"{AWS_PATH}.gpu_pools.l4-serve.max_nodes", "expected an integer from 1 to 1000, got -1"),
    (f"{AWS}/network/zones", 7, f"{AWS_PATH}.network.zones", "expected an integer from 2 to 6, got 7"),
    ("teams/research/gpu_quota", -1, "platform.teams.research.gpu_quota", "expected an integer of 0 or more, got -1"),
    (f"{AWS}/network/cidr", "10.30.0.0", f"{AWS_PATH}.network.cidr",
     "network cidr '10.30.0.0' has no prefix length; a network is written as its first address, '/' and the prefix length, "
     "like '10.30.0.0/16'"),
    (f"{AWS}/network/service_cidr", "172.20.0.9", f"{AWS_PATH}.network.service_cidr",
     "service_cidr '172.20.0.9' has no prefix length; a network is written as its first address, '/' and the prefix length, "
     "like '172.20.0.0/16'"),
], ids=["empty-regions", "max-nodes", "zones", "quota", "cidr-without-prefix", "service-cidr-without-prefix"])
def test_messages_state_the_rule(path: str, value: Any, where: str, message: str) -> None:
    assert issues(staging((path, value))) == [(where, message)]


def test_a_single_address_is_still_an_authorized_network() -> None:
    spec = load_platform(staging(cluster(AWS, "public_restricted", ["198.51.100.7"])))
    assert str(spec.clouds.aws.regions["us-east-1"].cluster.authorized_cidrs[0]) == "198.51.100.7/32"


@pytest.mark.parametrize("where", ["cloud", "cluster", "inference", "global_endpoint"])
def test_the_editor_schema_refuses_the_null_blocks_the_loader_refuses(where: str) -> None:
    import json

    import jsonschema

    schema = json.loads((Path(__file__).resolve().parents[2] / "docs" / "platform.schema.json").read_text())
    region = {"network": {"cidr": "10.0.0.0/16"}, "cluster": {}}
    aws = {"regions": {"us-east-1": region}}
    if where == "cloud":
        clouds = {"aws": aws, "gcp": None}
    elif where == "global_endpoint":
        clouds = {"aws": {**aws, "global_endpoint": None}}
    else:
        clouds = {"aws": {"regions": {"us-east-1": {**region, where: None}}}}
    platform = {"environment": "dev", "labels": {"owner": "a", "team": "b", "cost_center": "c"}, "clouds": clouds}
    with pytest.raises(jsonschema.ValidationError, match="None is not of type 'object'"):
        jsonschema.validate(platform, schema)
    jsonschema.validate({**platform, "clouds": {"aws": aws}}, schema)  # the same without the null block is valid
