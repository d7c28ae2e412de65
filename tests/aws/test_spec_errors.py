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
    ("certificate-from-another-region", f"{R}/inference/certificate",
     "arn:aws:acm:eu-west-1:123456789012:certificate/2d3e4f50-6172-8394-a5b6-c7d8e9f0a1b2", f"{E}.inference.certificate",
     ["eu-west-1", "us-east-1"]),
    ("inference-service-not-a-kubernetes-name", f"{R}/inference/service_name", "Inference_1", f"{E}.inference.service_name",
     ["'Inference_1'", "^[a-z]([-a-z0-9]*[a-z0-9])?$"]),
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
