"""Bad AWS input stops `load_platform` with the config path, the value given and what is allowed — before any
resource is registered."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import DELETE, change, platform_dict

from components.spec import SpecError, load_platform

E = "platform.clouds.aws.regions.us-east-1"
W = "platform.clouds.aws.regions.eu-west-1"
G = "platform.clouds.aws.global_endpoint"
R = "regions/us-east-1"
SSO_ROLE = "AWSReservedSSO_PlatformAdmin_0123456789abcdef"


# (id, path in clouds.aws, new value, expected error path, fragments the message must contain)
CASES = [
    ("lustre-1000-gib", f"{R}/lustre/train/size_gib", 1000, f"{E}.lustre.train.size_gib",
     ["1000 GiB", "1200 GiB, 2400 GiB or a multiple of 2400 GiB", "PERSISTENT_2"]),
    ("lustre-throughput-300", f"{R}/lustre/train/throughput_mbps_per_tib", 300, f"{E}.lustre.train.throughput_mbps_per_tib",
     ["300", "125, 250, 500, 1000"]),
    ("gpu-aws-does-not-offer", f"{R}/gpu_pools/l4-spot", {"accelerator": "h100-nvl-94gb"}, f"{E}.gpu_pools.l4-spot.accelerator",
     ["'h100-nvl-94gb'", "not offered on aws", "h100-80gb", "trainium2"]),
    ("instance-type-not-in-catalog", f"{R}/gpu_pools/l4-spot", {"instance_type": "p3.2xlarge"}, f"{E}.gpu_pools.l4-spot.instance_type",
     ["p3.2xlarge", "p5.48xlarge"]),
    ("efa-on-a-type-without-efa", f"{R}/gpu_pools/l4-spot/efa", True, f"{E}.gpu_pools.l4-spot.efa",
     ["g6.xlarge", "does not support EFA", "p5"]),
    ("retention-not-a-cloudwatch-period", f"{R}/network/flow_log_retention_days", 45, f"{E}.network.flow_log_retention_days",
     ["got 45", "30, 60, 90"]),
    ("admin-not-an-iam-arn", f"{R}/cluster/admins", ["alice@example.com"], f"{E}.cluster.admins[0]",
     ["'alice@example.com'", "arn:aws:iam::<account>:role/<name>"]),
    ("admin-sso-role-without-its-path", f"{R}/cluster/admins", [f"arn:aws:iam::123456789012:role/{SSO_ROLE}"],
     f"{E}.cluster.admins[0]", [f"'arn:aws:iam::123456789012:role/{SSO_ROLE}'", "IAM Identity Center (SSO) role without its path",
                                "/aws-reserved/sso.amazonaws.com/",
                                "arn:aws:iam::<account>:role/aws-reserved/sso.amazonaws.com/[<region>/]AWSReservedSSO_"]),
    ("deployer-sso-role-under-another-path", "deployers", [f"arn:aws:iam::123456789012:role/teams/{SSO_ROLE}"],
     "platform.clouds.aws.deployers[0]", [f"role/teams/{SSO_ROLE}'", "without its path /aws-reserved/sso.amazonaws.com/"]),
    ("deployer-not-an-iam-arn", "deployers", ["arn:aws:sts::123456789012:assumed-role/deployer/ci"],
     "platform.clouds.aws.deployers[0]", ["'arn:aws:sts::123456789012:assumed-role/deployer/ci'", "is not an IAM role or user ARN",
                                          "arn:aws:iam::<account>:role/<name>"]),
    ("certificate-from-another-region", f"{R}/inference/certificate",
     "arn:aws:acm:eu-west-1:123456789012:certificate/2d3e4f50-6172-8394-a5b6-c7d8e9f0a1b2", f"{E}.inference.certificate",
     ["eu-west-1", "us-east-1"]),
    ("inference-service-not-a-kubernetes-name", f"{R}/inference/service_name", "Inference_1", f"{E}.inference.service_name",
     ["'Inference_1'", "lower-case letters, digits and '-', starting with a letter"]),
    ("inference-namespace-kube-system", f"{R}/inference/service_namespace", "kube-system", f"{E}.inference.service_namespace",
     ["'kube-system'", "kube-*"]),
    ("inference-pod-selector-empty", f"{R}/inference/pod_selector", {}, f"{E}.inference.pod_selector",
     ["pod_selector is empty", "no endpoints"]),
    ("inference-pod-selector-bad-key", f"{R}/inference/pod_selector", {"app name": "llm"}, f"{E}.inference.pod_selector",
     ["'app name'", "not a Kubernetes qualified name", "at most 63"]),
    ("inference-pod-selector-bad-value", f"{R}/inference/pod_selector", {"app": "llm/"}, f"{E}.inference.pod_selector",
     ["'llm/'", "of 'app'", "not a Kubernetes label value"]),
    ("inference-pod-selector-empty-value", f"{R}/inference/pod_selector", {"app": ""}, f"{E}.inference.pod_selector",
     ["of 'app'", "is empty"]),
    ("certificate-not-an-arn", f"{R}/inference/certificate", "my-cert", f"{E}.inference.certificate",
     ["'my-cert'", "arn:aws:acm:us-east-1"]),
    ("reservation-not-a-capacity-block-id", f"{R}/gpu_pools/h100-train/reservation", "my-block", f"{E}.gpu_pools.h100-train.reservation",
     ["'my-block'", "Capacity Block", "cr- followed by 17 hex digits"]),
    ("pool-zone-not-in-region", f"{R}/gpu_pools/l4-spot/zones", ["eu-west-1a"], f"{E}.gpu_pools.l4-spot.zones[0]",
     ["'eu-west-1a'", "us-east-1a, us-east-1b"]),
    ("efa-pool-across-zones", f"{R}/gpu_pools/trn2-train/zones", ["us-east-1a", "us-east-1b"], f"{E}.gpu_pools.trn2-train.zones",
     ["2 zones", "EFA traffic is not routed between subnets", "one zone"]),
    ("capacity-block-without-its-zone", f"{R}/gpu_pools/h100-train/zones", DELETE, f"{E}.gpu_pools.h100-train.zones",
     ["not set", "Capacity Block cr-0a1b2c3d4e5f60718 is in one availability zone", "set zones: [<the zone of cr-0a1b2c3d4e5f60718>]"]),
    ("capacity-block-across-zones", f"{R}/gpu_pools/h100-train/zones", ["us-east-1a", "us-east-1b"], f"{E}.gpu_pools.h100-train.zones",
     ["2 zones given", "subnets must all be in it"]),
    ("odcr-without-its-zone", f"{R}/gpu_pools/odcr", {"instance_type": "p4d.24xlarge", "capacity": "reserved",
                                                      "reservation": "cr-0123456789abcdef0"},
     f"{E}.gpu_pools.odcr.zones", ["not set", "On-Demand Capacity Reservation cr-0123456789abcdef0"]),
    ("glacier-too-soon-after-ia", f"{R}/buckets/ckpt/tiering/cold_after_days", 45, f"{E}.buckets.ckpt.tiering.cold_after_days",
     ["got 45", "STANDARD_IA at least 30 days", "60 or more"]),
    ("ia-before-30-days", f"{R}/buckets/ckpt/tiering/warm_after_days", 7, f"{E}.buckets.ckpt.tiering.warm_after_days",
     ["got 7", "30 days"]),
    ("system-pool-name-taken", f"{R}/gpu_pools/system", {"accelerator": "l4"}, f"{E}.gpu_pools.system", ["'system'", "CPU pool"]),
    ("inference-without-cluster", "regions/eu-west-1/cluster", DELETE, f"{W}.inference", ["add `cluster:`"]),
    ("waf-on-a-network-load-balancer", "inference_load_balancer", "network", f"{G}.waf", ["Application Load Balancers", "waf: false"]),
    ("global-certificate-unused-on-aws", "global_endpoint/certificate", "projects/p/global/sslCertificates/c", f"{G}.certificate",
     ["inference.certificate"]),
    ("latency-dns-needs-a-zone", "global_endpoint/routing", "latency_dns", f"{G}.routing", ["domain and hosted_zone_id"]),
    ("anycast-domain-without-a-zone", "global_endpoint/domain", "infer.example.com", f"{G}.hosted_zone_id",
     ["domain 'infer.example.com'", "Route 53 alias record to the Global Accelerator", "set hosted_zone_id",
      "exported global_endpoint.dns_name"]),
    ("zone-without-a-domain", "global_endpoint/hosted_zone_id", "Z0123456789ABCDEFGHIJ", f"{G}.domain",
     ["hosted_zone_id 'Z0123456789ABCDEFGHIJ' is given without domain", "set domain"]),
    ("zone-not-a-zone-id", "global_endpoint/hosted_zone_id", "example.com", f"{G}.hosted_zone_id",
     ["'example.com' is not a Route 53 hosted zone ID"]),
    ("domain-not-a-host-name", "global_endpoint/domain", "https://infer.example.com/v1", f"{G}.domain",
     ["'https://infer.example.com/v1' is not a host name (it is a URL)", "did you mean 'infer.example.com'?"]),
    ("eks-minor-without-an-autoscaler-chart", f"{R}/cluster/kubernetes_version", "1.31", f"{E}.cluster.kubernetes_version",
     ["'1.31'", "cluster-autoscaler", "1.32, 1.33, 1.34, 1.35"]),
    ("unknown-aws-setting", "flow_logs", "s3", "platform.clouds.aws.flow_logs", ["unknown field", "flow_log_destination"]),
]


@pytest.mark.parametrize(("path", "value", "where", "fragments"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_names_path_value_and_allowed(prod_config: dict[str, Any], path: str, value: Any, where: str,
                                                fragments: list[str]) -> None:
    data = platform_dict({"aws": change(prod_config, path, value)}, environment="prod",
                         compliance={"data_zones": {"eu": ["eu-west-1"]}})
    with pytest.raises(SpecError) as caught:
        load_platform(data)
    messages = dict(caught.value.issues)
    assert where in messages, f"{where} not in {list(messages)}"
    for fragment in fragments:
        assert fragment in messages[where], f"{fragment!r} not in {messages[where]!r}"


def test_a_route_53_record_name_may_end_in_a_dot(prod_config: dict[str, Any]) -> None:
    """Route 53 takes a record name in its absolute form; only a managed certificate needs the bare name."""
    config = change(change(prod_config, "global_endpoint/domain", "infer.example.com."), "global_endpoint/routing", "latency_dns")
    config = change(config, "global_endpoint/hosted_zone_id", "Z0123456789ABCDEFGHIJ")
    spec = load_platform(platform_dict({"aws": config}, environment="prod", compliance={"data_zones": {"eu": ["eu-west-1"]}}))
    assert spec.clouds.aws.global_endpoint.domain == "infer.example.com."


def test_ia_before_30_days_names_the_alternatives(prod_config: dict[str, Any]) -> None:
    """S3 takes objects to STANDARD_IA no sooner than 30 days after creation (Transition, Days); Intelligent-Tiering
    has no minimum, so the same age is fine with it."""
    where = f"{E}.buckets.ckpt.tiering.warm_after_days"
    bad = change(prod_config, f"{R}/buckets/ckpt/tiering/warm_after_days", 7)
    compliance = {"data_zones": {"eu": ["eu-west-1"]}}
    with pytest.raises(SpecError) as caught:
        load_platform(platform_dict({"aws": bad}, environment="prod", compliance=compliance))
    messages = [message for path, message in caught.value.issues if path == where]
    assert len(messages) == 1, messages
    for fragment in ["got 7", "STANDARD_IA", "30 days after creation", "30 or more", "warm_storage_class 'intelligent_tiering'"]:
        assert fragment in messages[0]
    spec = load_platform(platform_dict({"aws": {**bad, "warm_storage_class": "intelligent_tiering"}}, environment="prod",
                                       compliance=compliance))
    assert spec.clouds.aws.regions["us-east-1"].buckets["ckpt"].tiering.warm_after_days == 7


def test_the_reference_config_is_valid(prod_config: dict[str, Any]) -> None:
    load_platform(platform_dict({"aws": prod_config}, environment="prod", compliance={"data_zones": {"eu": ["eu-west-1"]}}))


def test_errors_come_before_any_resource_is_registered(prod_config: dict[str, Any]) -> None:
    """A bad spec fails in load_platform; build_platform is never reached (no traceback, one message per problem)."""
    bad = change(change(prod_config, f"{R}/lustre/train/size_gib", 1000), f"{R}/lustre/train/throughput_mbps_per_tib", 300)
    with pytest.raises(SpecError) as caught:
        load_platform(platform_dict({"aws": bad}, compliance={"data_zones": {"eu": ["eu-west-1"]}}))
    assert str(caught.value).startswith("invalid platform config (")
    assert any(path.endswith("lustre.train.throughput_mbps_per_tib") for path, _ in caught.value.issues)


def test_any_eks_minor_is_accepted_without_the_kubernetes_layer(prod_config: dict[str, Any]) -> None:
    """Only the layer's Cluster Autoscaler ties the cluster to the pinned minors."""
    config = change(prod_config, f"{R}/cluster/kubernetes_version", "1.31")
    spec = load_platform(platform_dict({"aws": config}, environment="prod", addons={"enabled": False},
                                       compliance={"data_zones": {"eu": ["eu-west-1"]}}))
    assert spec.clouds.aws.regions["us-east-1"].cluster.kubernetes_version == "1.31"


# --- Names, labels, health check paths and settings AWS would refuse at `pulumi up` ---------------------------------

LONG_ENVIRONMENT = "ml-platform-prod"  # 16 characters, the longest environment name the spec takes


def _issues(aws_config: dict[str, Any], **top: Any) -> dict[str, list[str]]:
    """Config path -> messages of every issue `load_platform` reports for this AWS config ({} when it loads)."""
    top.setdefault("environment", "prod")
    top.setdefault("compliance", {"data_zones": {"eu": ["eu-west-1"]}})
    try:
        load_platform(platform_dict({"aws": aws_config}, **top))
    except SpecError as err:
        found: dict[str, list[str]] = {}
        for path, message in err.issues:
            found.setdefault(path, []).append(message)
        return found
    return {}


def _one_pool(pool_name: str, **pool: Any) -> dict[str, Any]:
    return {"regions": {"us-east-1": {"network": {"cidr": "10.9.0.0/16"}, "cluster": {},
                                      "gpu_pools": {pool_name: {"accelerator": "l4", **pool}}}}}


def test_node_group_auto_name_fits_eks_63_characters() -> None:
    """EKS node group names take at most 63 characters; Pulumi names the group `<environment>-<region>-<pool>-nodegroup`
    plus "-" and 7 random hex digits. 16 + 1 + 9 + 1 + 18 + 10 + 8 = 63: an 18-character pool name is the longest that
    fits with a 16-character environment in us-east-1."""
    assert _issues(_one_pool("a" * 18), environment=LONG_ENVIRONMENT) == {}
    pool = "gpu-pool-for-llm-ft"  # 19 characters: 64
    issues = _issues(_one_pool(pool), environment=LONG_ENVIRONMENT)
    assert issues == {f"{E}.gpu_pools.{pool}": [
        f"pool name '{pool}' (19 characters) makes the EKS node group name "
        f"'ml-platform-prod-us-east-1-{pool}-nodegroup-<7 random characters>' 64 characters long; EKS allows at most 63: "
        "with environment 'ml-platform-prod' and region 'us-east-1' the pool name may have at most 18 characters; "
        "shorten the pool name"]}


def test_node_group_name_limit_counts_the_region_and_environment() -> None:
    """The finding's example: staging in ap-southeast-2 with a 24-character pool name (65 characters); the longest
    region (14 characters) and environment (16) leave 13 characters for the pool name."""
    pool = "h100-capacity-block-east"
    config = {"regions": {"ap-southeast-2": {"network": {"cidr": "10.9.0.0/16"}, "cluster": {},
                                             "gpu_pools": {pool: {"accelerator": "l4"}}}}}
    issues = _issues(config, environment="staging")
    message = issues["platform.clouds.aws.regions.ap-southeast-2.gpu_pools.h100-capacity-block-east"][0]
    assert "'staging-ap-southeast-2-h100-capacity-block-east-nodegroup-<7 random characters>' 65 characters long" in message
    assert "the pool name may have at most 22 characters" in message
    assert _issues({"regions": {"ap-southeast-2": {**config["regions"]["ap-southeast-2"],
                                                   "gpu_pools": {"a" * 13: {"accelerator": "l4"}}}}},
                   environment=LONG_ENVIRONMENT) == {}


def test_the_checked_node_group_name_is_the_planned_one(plan_aws) -> None:  # noqa: ANN001
    """The check's name is the node group resource's Pulumi name, and the resource sets no name of its own, so
    pulumi-aws auto-names it (`<name>-<7 hex>`): the check and the component agree."""
    from components.spec.aws import AUTONAME_SUFFIX, EKS_NODE_GROUP_NAME_MAX, node_group_resource_name

    pool = "a" * 18
    plan = plan_aws(_one_pool(pool), environment=LONG_ENVIRONMENT)
    name = node_group_resource_name(LONG_ENVIRONMENT, "us-east-1", pool)
    inputs = plan.one("aws:eks/nodeGroup:NodeGroup", name).inputs
    assert "nodeGroupName" not in inputs and "nodeGroupNamePrefix" not in inputs
    assert len(name) + AUTONAME_SUFFIX == EKS_NODE_GROUP_NAME_MAX


def test_node_labels_and_taints_fit_eks_limits(prod_config: dict[str, Any]) -> None:
    """EKS takes label keys and values of 1 to 63 characters and taint keys of 1 to 63, taint values 0 to 63
    (API_UpdateLabelsPayload, API_Taint); Kubernetes allows a 253-character prefix and empty label values."""
    key_64 = "example.com/" + "k" * 52
    taint_64 = "example.com/" + "t" * 52
    pool = f"{R}/gpu_pools/l4-spot"
    bad = change(change(prod_config, f"{pool}/labels", {key_64: "x", "tier": ""}), f"{pool}/taints",
                 [{"key": "team", "value": "research"}, {"key": taint_64, "value": "", "effect": "NoExecute"}])
    where = f"{E}.gpu_pools.l4-spot"
    assert _issues(bad) == {
        f"{where}.labels.{key_64}": [
            f"label key '{key_64}' has 64 characters; EKS node group labels take keys of 1 to 63 characters, prefix and "
            "'/' included (Kubernetes allows a longer prefix, EKS does not); shorten the key"],
        f"{where}.labels.tier": [
            "label 'tier' has an empty value; EKS node group labels take values of 1 to 63 characters (Kubernetes allows "
            "an empty value, EKS does not); give it a value"],
        f"{where}.taints[1]": [
            f"taint key '{taint_64}' has 64 characters; EKS node group taints take keys of 1 to 63 characters, prefix and "
            "'/' included (Kubernetes allows a longer prefix, EKS does not); shorten the key"],
    }
    good = change(change(prod_config, f"{pool}/labels", {key_64[:-1]: "v" * 63}), f"{pool}/taints",
                  [{"key": taint_64[:-1], "value": ""}, {"key": "t", "value": "v" * 63, "effect": "NoExecute"}])
    assert _issues(good) == {}


def test_the_toolkits_own_node_labels_and_taints_fit_eks_limits() -> None:
    """Only the pool's own labels and taints are checked: what the toolkit adds fits for every AWS instance type, the
    longest pool name and every capacity type and sharing mode."""
    from components import catalog
    from components.k8s.sharing import sharing_node_labels
    from components.aws.node_group import autoscaler_gpu_labels
    from components.spec import CapacityType, Cloud, GpuPoolSpec, MigStrategy, accelerator_node_labels, accelerator_taint
    from components.spec.compute import GpuSharing, SharingMode

    for row in catalog.instance_types("aws"):
        sharings = [GpuSharing(mode=SharingMode.MIG, mig_profile=p) for p in row.mig_profiles]
        sharings += [GpuSharing(mode=mode, replicas_per_gpu=48) for mode in (SharingMode.TIME_SLICING, SharingMode.MPS)]
        for capacity in CapacityType:
            pool = GpuPoolSpec.model_construct(instance_type=row.instance_type, capacity=capacity)  # any capacity, unvalidated
            labels = accelerator_node_labels("p" * 24, pool, row)
            labels.update(autoscaler_gpu_labels(row, GpuPoolSpec.model_construct(sharing=GpuSharing()), MigStrategy.SINGLE))
            for sharing in sharings:
                labels.update(sharing_node_labels(Cloud.AWS, row.accelerator, sharing, False))
            assert all(1 <= len(k) <= 63 and 1 <= len(v) <= 63 for k, v in labels.items()), labels
        key, value, _ = accelerator_taint(row)
        assert 1 <= len(key) <= 63 and len(value) <= 63


def test_health_check_path_fits_the_load_balancer(prod_config: dict[str, Any]) -> None:
    """ELB target groups take a health check path of 1 to 1024 characters (CreateTargetGroup, HealthCheckPath)."""
    regional = change(prod_config, "global_endpoint", DELETE)
    where = f"{E}.inference.health_check_path"
    assert _issues(change(regional, f"{R}/inference/health_check_path", "/" + "a" * 1023)) == {}
    issues = _issues(change(regional, f"{R}/inference/health_check_path", "/" + "a" * 1024))
    assert issues == {where: [f"'/{'a' * 39}...' has 1025 characters; the load balancer's target group health check takes "
                              "a path of at most 1024 characters; shorten it"]}


def test_health_check_path_fits_global_accelerator(prod_config: dict[str, Any]) -> None:
    """Behind the anycast global endpoint the path also goes to Global Accelerator's endpoint groups, which take at
    most 255 characters (EndpointGroup, HealthCheckPath); latency-based DNS does not use it."""
    where = f"{E}.inference.health_check_path"
    assert _issues(change(prod_config, f"{R}/inference/health_check_path", "/" + "a" * 254)) == {}
    issues = _issues(change(prod_config, f"{R}/inference/health_check_path", "/" + "a" * 255))
    assert issues == {where: [f"'/{'a' * 39}...' has 256 characters; Global Accelerator (global_endpoint routing 'anycast') "
                              "health-checks the regional load balancers on a path of at most 255 characters; shorten it"]}
    latency = change(change(prod_config, "global_endpoint", {"routing": "latency_dns", "domain": "infer.example.com",
                                                            "hosted_zone_id": "Z0123456789ABCDEFGHIJ"}),
                     f"{R}/inference/health_check_path", "/" + "a" * 255)
    assert _issues(latency) == {}


def test_soft_delete_days_is_a_config_error_on_aws(prod_config: dict[str, Any]) -> None:
    """S3 has no soft delete: a soft_delete_days given on AWS would do nothing, so it is reported like other settings a
    cloud has no use for (pod_cidr on AWS, autoclass off GCP). Its default is not a setting the config gives."""
    where = f"{E}.buckets.ckpt.soft_delete_days"
    assert _issues(change(prod_config, f"{R}/buckets/ckpt/soft_delete_days", 14)) == {where: [
        "soft_delete_days 14 has no effect on AWS: S3 has no soft delete; deleted and overwritten objects stay as "
        "noncurrent versions (versioning) for noncurrent_expire_after_days (14); remove soft_delete_days"]}
    unversioned = change(change(prod_config, f"{R}/buckets/ckpt/soft_delete_days", 7), f"{R}/buckets/ckpt/versioning", False)
    assert _issues(unversioned) == {where: [
        "soft_delete_days 7 has no effect on AWS: S3 has no soft delete; versioning is off, so this bucket keeps no deleted "
        "or overwritten objects (turn versioning on to keep them as noncurrent versions for noncurrent_expire_after_days); "
        "remove soft_delete_days"]}
    spec = load_platform(platform_dict({"aws": prod_config}, environment="prod", compliance={"data_zones": {"eu": ["eu-west-1"]}}))
    assert spec.clouds.aws.regions["us-east-1"].buckets["ckpt"].soft_delete_days == 7  # the default, not given: fine


def test_no_reference_stack_sets_soft_delete_days_on_aws() -> None:
    from pathlib import Path

    import yaml

    for stack_file in sorted((Path(__file__).resolve().parents[2] / "stacks").glob("Pulumi.*.yaml")):
        platform = yaml.safe_load(stack_file.read_text())["config"]["ai-infra:platform"]
        regions = platform["clouds"].get("aws", {}).get("regions", {})
        assert not [b for r in regions.values() for b in (r.get("buckets") or {}).values() if "soft_delete_days" in b], stack_file


def test_sso_roles_with_their_path_are_accepted(prod_config: dict[str, Any]) -> None:
    # The path IAM gives Identity Center roles, with the Identity Center region outside us-east-1.
    roles = [f"arn:aws:iam::123456789012:role/aws-reserved/sso.amazonaws.com/{SSO_ROLE}",
             f"arn:aws:iam::123456789012:role/aws-reserved/sso.amazonaws.com/eu-west-1/{SSO_ROLE}"]
    config = change(change(prod_config, f"{R}/cluster/admins", roles), "deployers", roles)
    assert _issues(config) == {}


def test_no_deployers_needs_an_admin_on_every_cluster_for_the_kubernetes_layer(prod_config: dict[str, Any]) -> None:
    """With `deployers: []` nobody but a cluster's admins reaches its API, where the Kubernetes layer installs: eu-west-1
    has no admins."""
    issues = _issues(change(prod_config, "deployers", []))
    assert list(issues) == ["platform.clouds.aws.deployers"]
    message = issues["platform.clouds.aws.deployers"][0]
    for fragment in ["deployers is empty", "in eu-west-1", "no admins", "regions.eu-west-1.cluster.admins", "leave deployers out"]:
        assert fragment in message, message
    assert _issues(change(prod_config, "deployers", []), addons={"enabled": False}) == {}
    with_admins = change(change(prod_config, "deployers", []), "regions/eu-west-1/cluster/admins", ["arn:aws:iam::123456789012:role/a"])
    assert _issues(with_admins) == {}


# --- Mutation review gaps ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("given", [{"domain": "infer.example.com"}, {"hosted_zone_id": "Z0123456789ABCDEFGHIJ"}],
                         ids=["domain-only", "zone-only"])
def test_latency_dns_needs_both_domain_and_hosted_zone_id(prod_config: dict[str, Any], given: dict[str, str]) -> None:
    """One without the other would reach components/aws/endpoint.py's assert at preview."""
    config = change(prod_config, "global_endpoint", {"routing": "latency_dns", **given})
    assert _issues(config) == {f"{G}.routing": ["routing 'latency_dns' needs domain and hosted_zone_id"]}


def test_ia_at_29_days_is_refused_and_30_loads(prod_config: dict[str, Any]) -> None:
    """S3: "Days' in Transition action must be greater than or equal to 30 for storageClass 'STANDARD_IA'"."""
    path = f"{R}/buckets/ckpt/tiering/warm_after_days"
    assert _issues(change(prod_config, path, 29)) == {f"{E}.buckets.ckpt.tiering.warm_after_days": [
        "got 29; S3 moves objects to STANDARD_IA no sooner than 30 days after creation; set 30 or more, or warm_storage_class "
        "'intelligent_tiering' (no minimum age)"]}
    assert _issues(change(prod_config, path, 30)) == {}


def test_a_pool_may_not_name_more_zones_than_the_network_spans(prod_config: dict[str, Any]) -> None:
    zones = ["us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d"]
    assert _issues(change(prod_config, f"{R}/gpu_pools/l4-spot/zones", zones)) == {
        f"{E}.gpu_pools.l4-spot.zones": ["4 zones given; this network spans 3"]}
    assert _issues(change(prod_config, f"{R}/gpu_pools/l4-spot/zones", zones[:3])) == {}
