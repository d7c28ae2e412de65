"""Bad GCP input stops `load_platform` with the config path, the value given and what is allowed, before any
resource is registered: the issue's four cases, then every GCP-only check."""

from __future__ import annotations

from typing import Any

import pytest
from gcp.support import COMPLIANCE, PROD_GCP, PROJECT, gcp_platform
from helpers import DELETE, change, platform_dict

from components.spec import SpecError, load_platform

U = "platform.clouds.gcp.regions.us-central1"
W = "platform.clouds.gcp.regions.europe-west4"
G = "platform.clouds.gcp"


def problems(gcp: dict[str, Any], **top: Any) -> dict[str, str]:
    top.setdefault("compliance", COMPLIANCE)
    with pytest.raises(SpecError) as caught:
        load_platform(gcp_platform(gcp, **top))
    return dict(caught.value.issues)


R = "regions/us-central1"
# (id, path in clouds.gcp, new value, expected error path, fragments the message must contain)
CASES = [
    # the issue's cases
    ("v5e-topology-3x3", f"{R}/tpu_slices/serve", {"generation": "v5e", "topology": "3x3"}, f"{U}.tpu_slices.serve.topology",
     ["'3x3'", "tpu-v5e", "1x1, 2x2, 2x4, 4x4, 4x8, 8x8, 8x16, 16x16"]),
    ("h100-machine-gcp-lacks", f"{R}/gpu_pools/train", {"instance_type": "a3-highgpu-16g"}, f"{U}.gpu_pools.train.instance_type",
     ["'a3-highgpu-16g'", "not in the gcp catalog", "a3-highgpu-8g", "a3-megagpu-8g"]),
    ("h100-count-gcp-lacks", f"{R}/gpu_pools/train", {"accelerator": "h100-80gb", "accelerators_per_node": 16},
     f"{U}.gpu_pools.train.accelerators_per_node", ["16x h100-80gb", "1, 2, 4, 8"]),
    ("aws-h100-type-on-gcp", f"{R}/gpu_pools/train", {"instance_type": "p5.48xlarge"}, f"{U}.gpu_pools.train.instance_type",
     ["'p5.48xlarge'", "a3-highgpu-8g"]),
    ("lustre-below-minimum", f"{R}/lustre/scratch/size_gib", 9000, f"{U}.lustre.scratch.size_gib",
     ["got 9000 GiB", "from 18000 GiB", "500 MB/s/TiB"]),
    ("lustre-throughput-not-a-tier", f"{R}/lustre/scratch/throughput_mbps_per_tib", 200, f"{U}.lustre.scratch.throughput_mbps_per_tib",
     ["200", "125, 250, 500, 1000"]),
    # GCP-only checks
    ("zone-outside-region", "zones/us-central1", ["us-central1-a", "us-east1-b", "us-central1-c"], f"{G}.zones.us-central1[1]",
     ["'us-east1-b'", "not in region us-central1", "us-central1-<letter>"]),
    ("zones-count-differs", "zones/us-central1", ["us-central1-a", "us-central1-b"], f"{G}.zones.us-central1",
     ["lists 2 zones", "network.zones of us-central1 is 3"]),
    ("zones-for-unknown-region", "zones/us-east1", ["us-east1-b", "us-east1-c", "us-east1-d"], f"{G}.zones.us-east1",
     ["'us-east1'", "not declared", "us-central1, europe-west4"]),
    ("tpu-zone-for-unknown-slice", "tpu_zones/us-central1/nope", "us-central1-b", f"{G}.tpu_zones.us-central1.nope",
     ["'nope'", "pretrain, serve"]),
    ("pool-zone-outside-region", f"{R}/gpu_pools/compact/zones", ["europe-west4-a"], f"{U}.gpu_pools.compact.zones[0]",
     ["'europe-west4-a'", "us-central1-<letter>"]),
    ("compact-over-several-zones", f"{R}/gpu_pools/compact/zones", [], f"{U}.gpu_pools.compact.zones",
     ["'compact'", "one zone", "got 0"]),
    ("compact-with-queued-provisioning", f"{R}/gpu_pools/batch", {"accelerator": "h100-80gb", "accelerators_per_node": 8,
     "capacity": "queued", "placement": "compact", "zones": ["us-central1-a"]}, f"{U}.gpu_pools.batch.placement",
     ["'queued'", "a3-highgpu-8g", "allowed: none"]),
    ("dws-pool-with-a-minimum", f"{R}/gpu_pools/flex/min_nodes", 1, f"{U}.gpu_pools.flex.min_nodes", ["got 1", "flex_start", "min_nodes 0"]),
    ("operator-driver-without-operator", f"{R}/gpu_pools/train/driver", "operator", f"{U}.gpu_pools.train.driver",
     ["'operator'", "gpu_operator_on_gke", "allowed without it: cloud"]),
    ("gpu-pool-named-system", f"{R}/gpu_pools/system", {"accelerator": "l4"}, f"{U}.gpu_pools.system",
     ["'system'", "the system pool"]),
    ("gpu-pool-clashes-with-tpu-pool", f"{R}/gpu_pools/pretrain-1", {"accelerator": "l4"}, f"{U}.tpu_slices.pretrain",
     ["'pretrain-1'", "GPU pool 'pretrain-1'"]),
    ("tpu-vm-on-dws", "regions/europe-west4/tpu_slices/research/capacity", "flex_start", f"{W}.tpu_slices.research.capacity",
     ["'flex_start'", "on_demand, spot, reserved"]),
    # mode queued_resource: what pulumi-gcp 10.2.0's V2QueuedResource cannot express is refused, never dropped
    ("queued-resource-on-spot", "regions/europe-west4/tpu_slices/batch/capacity", "spot", f"{W}.tpu_slices.batch.capacity",
     ["capacity 'spot'", "mode 'queued_resource'", "pulumi-gcp 10.2.0", "no spot, reservation", "allowed: on_demand", "mode 'tpu_vm'"]),
    ("queued-resource-reserved", "regions/europe-west4/tpu_slices/batch", {"generation": "v6e", "topology": "4x4",
     "mode": "queued_resource", "capacity": "reserved", "reservation": "v6e-res"}, f"{W}.tpu_slices.batch.capacity",
     ["capacity 'reserved'", "allowed: on_demand", "mode 'tpu_vm' (on_demand, spot, reserved)"]),
    ("queued-resource-on-dws", "regions/europe-west4/tpu_slices/batch/capacity", "flex_start", f"{W}.tpu_slices.batch.capacity",
     ["capacity 'flex_start'", "allowed: on_demand", "mode 'gke'"]),
    ("queued-resource-service-account", "regions/europe-west4/tpu_slices/batch/service_account",
     f"tpu@{PROJECT}.iam.gserviceaccount.com", f"{W}.tpu_slices.batch.service_account",
     [f"'tpu@{PROJECT}.iam.gserviceaccount.com'", "mode 'queued_resource'", "takes no service account",
      "Compute Engine default service account", "allowed: unset", "mode 'tpu_vm'"]),
    ("service-account-on-gke-slice", f"{R}/tpu_slices/serve/service_account", f"tpu@{PROJECT}.iam.gserviceaccount.com",
     f"{U}.tpu_slices.serve.service_account", ["'tpu@", "only used by mode 'tpu_vm'", "allowed with mode 'gke': unset"]),
    ("lustre-network-too-small", f"{R}/network/cidr", "10.20.0.0/22", f"{U}.network.cidr",
     ["/23", "10.20.2.0/24", "/21 network or larger"]),
    ("lustre-cluster-below-signed-modules", f"{R}/cluster/kubernetes_version", "1.33", f"{U}.cluster.kubernetes_version",
     ["got 1.33", "Lustre client module", "Secure Boot", "from 1.34", "leave it unset"]),
    ("flow-logs-kept-too-long", f"{R}/network/flow_log_retention_days", 4000, f"{U}.network.flow_log_retention_days",
     ["got 4000", "1 to 3650"]),
    ("system-pool-smaller-than-zones", f"{R}/cluster/system_pool", {"min_nodes": 1, "max_nodes": 2},
     f"{U}.cluster.system_pool.max_nodes", ["got 2", "3 zones", "at least 3"]),
    ("admin-not-an-iam-member", f"{R}/cluster/admins", ["ml-platform@example.com"], f"{U}.cluster.admins[0]",
     ["'ml-platform@example.com'", "group:<email>"]),
    ("inference-without-cluster", "regions/europe-west4/cluster", DELETE, f"{W}.inference", ["GKE", "add `cluster:`"]),
    ("traffic-dial-on-gcp", f"{R}/inference/traffic_percent", 50, f"{U}.inference.traffic_percent", ["got 50", "allowed on GCP: 100"]),
    ("health-paths-differ", f"{R}/inference/health_check_path", "/ready", f"{G}.global_endpoint",
     ["us-central1: /ready", "europe-west4: /health"]),
    ("certificate-not-a-resource", "global_endpoint/certificate", "arn:aws:acm:us-east-1:1:certificate/x", f"{G}.global_endpoint.certificate",
     ["'arn:aws:acm", "projects/<project>/global/sslCertificates/<name>"]),
]


@pytest.mark.parametrize(("case", "path", "value", "where", "fragments"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_names_path_value_and_allowed(case: str, path: str, value: Any, where: str, fragments: list[str]) -> None:
    found = problems(change(PROD_GCP, path, value))
    assert where in found, f"{case}: {found}"
    for fragment in fragments:
        assert fragment in found[where], f"{case}: {fragment!r} not in {found[where]!r}"


def test_tpu_on_aws_is_rejected_with_the_place_to_put_it() -> None:
    data = platform_dict({"aws": {"regions": {"us-east-1": {
        "network": {"cidr": "10.10.0.0/16"}, "cluster": {},
        "tpu_slices": {"pretrain": {"generation": "v5p", "topology": "2x2x2"}}}}}})
    with pytest.raises(SpecError) as caught:
        load_platform(data)
    found = dict(caught.value.issues)
    where = "platform.clouds.aws.regions.us-east-1.tpu_slices.pretrain"
    assert "GCP-only" in found[where] and "aws has no TPUs" in found[where]
    assert "platform.clouds.gcp.regions.<region>.tpu_slices" in found[where]


def test_tpu_on_azure_is_rejected_too() -> None:
    data = platform_dict({"azure": {"regions": {"westeurope": {
        "network": {"cidr": "10.10.0.0/16", "transit_encryption": "monitor"}, "cluster": {},
        "tpu_slices": {"serve": {"generation": "v6e", "topology": "2x2"}}}}}})
    with pytest.raises(SpecError, match="TPU slices are GCP-only; azure has no TPUs"):
        load_platform(data)


def test_errors_come_before_any_resource_is_registered(plan) -> None:  # noqa: ANN001
    """`load_from_config` turns the same problems into one RunError, and nothing is registered."""
    import json

    from components.compose import build_platform, load_from_config

    bad = change(PROD_GCP, f"{R}/tpu_slices/serve/topology", "3x3")
    config = {"ai-infra:platform": json.dumps(gcp_platform(bad, compliance=COMPLIANCE))}
    with pytest.raises(Exception, match=r"tpu_slices\.serve\.topology: topology '3x3'"):
        plan(lambda: build_platform(load_from_config()), config=config)


def test_cluster_name_must_fit_gke() -> None:
    gcp = {"project": PROJECT, "regions": {"northamerica-northeast12": {"network": {"cidr": "10.20.0.0/16"}, "cluster": {}}}}
    found = problems(gcp, environment="integration-test")
    message = found["platform.clouds.gcp.regions.northamerica-northeast12.cluster"]
    assert "'integration-test-northamerica-northeast12'" in message and "41 characters" in message and "40" in message


def test_project_id_must_be_a_gcp_project_id() -> None:
    found = problems(change({"project": PROJECT, "regions": {"us-central1": {"network": {"cidr": "10.20.0.0/16"}}}}, "project", "Acme_ML"))
    assert "Acme_ML" in found[f"{G}.project"]


def test_gke_slice_without_a_cluster_names_both_vm_modes() -> None:
    bad = change(PROD_GCP, "regions/europe-west4/tpu_slices/research/mode", "gke")
    found = problems(change(bad, "regions/europe-west4/cluster", DELETE))
    assert "add `cluster:` or use mode 'tpu_vm' or 'queued_resource'" in found[f"{W}.tpu_slices.research"]


def issues_of(gcp: dict[str, Any]) -> dict[str, str]:
    """The issues of a GCP config ({} when it loads)."""
    try:
        load_platform(gcp_platform(gcp, compliance=COMPLIANCE))
    except SpecError as caught:
        return dict(caught.issues)
    return {}


HOST_RULE = ("a bare fully qualified host name such as infer.example.com: at least two labels of 1 to 63 letters, digits "
             "and '-' (not starting or ending with '-'), at most 253 characters, no scheme, path, port, wildcard or trailing '.'")
MANAGED = "domain is the global endpoint's public host name, for which the load balancer's Google-managed certificate is issued"
ACCOUNT_FORMS = ("<account-id>@<project>.iam.gserviceaccount.com, <project-number>-compute@developer.gserviceaccount.com "
                 "(the Compute Engine default) or <project>@appspot.gserviceaccount.com")
VM_ACCOUNT = "regions/europe-west4/tpu_slices/research/service_account"
LONG_LABEL = "a" * 64
RESERVATION_FORMS = ("a reservation name (1 to 63 lower-case letters, digits and '-', starting with a letter, not ending "
                     "with '-') or projects/<project>/reservations/<name> for one shared from another project")
# (id, path in clouds.gcp, new value, expected error path, the exact message)
EXACT = [
    ("inference-certificate-unused", f"{R}/inference/certificate", "arn:aws:acm:us-east-1:123456789012:certificate/x",
     f"{U}.inference.certificate",
     "'arn:aws:acm:us-east-1:123456789012:certificate/x' is not used on GCP: a GCP region has no regional listener (the "
     "global load balancer reaches the GKE Service through NEGs), so TLS ends at the global endpoint; remove it and set "
     "platform.clouds.gcp.global_endpoint.domain (a Google-managed certificate) or global_endpoint.certificate "
     "(projects/<project>/global/sslCertificates/<name>)"),
    ("domain-is-a-url", "global_endpoint/domain", "https://Infer.Example.com/api", f"{G}.global_endpoint.domain",
     f"'https://Infer.Example.com/api' is not a host name (it is a URL); {MANAGED}; allowed: {HOST_RULE}; "
     "did you mean 'infer.example.com'?"),
    ("domain-with-port", "global_endpoint/domain", "infer.example.com:443", f"{G}.global_endpoint.domain",
     f"'infer.example.com:443' is not a host name (it has a port); {MANAGED}; allowed: {HOST_RULE}; "
     "did you mean 'infer.example.com'?"),
    ("domain-with-path", "global_endpoint/domain", "infer.example.com/v1", f"{G}.global_endpoint.domain",
     f"'infer.example.com/v1' is not a host name (it has a path); {MANAGED}; allowed: {HOST_RULE}; "
     "did you mean 'infer.example.com'?"),
    ("domain-wildcard", "global_endpoint/domain", "*.example.com", f"{G}.global_endpoint.domain",
     f"'*.example.com' is not a host name (it has a wildcard); {MANAGED}; allowed: {HOST_RULE}"),
    ("domain-single-label", "global_endpoint/domain", "infer", f"{G}.global_endpoint.domain",
     f"'infer' is not a host name (it is a single label); {MANAGED}; allowed: {HOST_RULE}"),
    ("domain-trailing-dot", "global_endpoint/domain", "infer.example.com.", f"{G}.global_endpoint.domain",
     f"'infer.example.com.' is not a host name (it ends in '.'); {MANAGED}; allowed: {HOST_RULE}; "
     "did you mean 'infer.example.com'?"),
    ("domain-label-starts-with-hyphen", "global_endpoint/domain", "-infer.example.com", f"{G}.global_endpoint.domain",
     f"'-infer.example.com' is not a host name (label '-infer' is not 1 to 63 letters, digits and '-' starting and ending "
     f"with a letter or digit); {MANAGED}; allowed: {HOST_RULE}"),
    ("domain-label-too-long", "global_endpoint/domain", f"{LONG_LABEL}.example.com", f"{G}.global_endpoint.domain",
     f"'{LONG_LABEL}.example.com' is not a host name (label '{LONG_LABEL}' is not 1 to 63 letters, digits and '-' starting "
     f"and ending with a letter or digit); {MANAGED}; allowed: {HOST_RULE}"),
    ("domain-too-long", "global_endpoint/domain", ".".join(["a" * 63] * 4), f"{G}.global_endpoint.domain",
     f"'{'.'.join(['a' * 63] * 4)}' is not a host name (it has 255 characters); {MANAGED}; allowed: {HOST_RULE}"),
    ("domain-ip-address", "global_endpoint/domain", "203.0.113.10", f"{G}.global_endpoint.domain",
     f"'203.0.113.10' is not a host name (its last label is all digits); {MANAGED}; allowed: {HOST_RULE}"),
    ("domain-with-own-certificate", "global_endpoint", {"domain": "infer.example.com/v1",
     "certificate": f"projects/{PROJECT}/global/sslCertificates/infer-tls"}, f"{G}.global_endpoint.domain",
     f"'infer.example.com/v1' is not a host name (it has a path); domain is the global endpoint's public host name; "
     f"allowed: {HOST_RULE}; did you mean 'infer.example.com'?"),
    ("tpu-vm-account-not-an-email", VM_ACCOUNT, "tpu-runner", f"{W}.tpu_slices.research.service_account",
     f"'tpu-runner' is not a service account email; allowed: {ACCOUNT_FORMS}"),
    ("tpu-vm-account-user-email", VM_ACCOUNT, "ml-platform@example.com", f"{W}.tpu_slices.research.service_account",
     f"'ml-platform@example.com' is not a service account email; allowed: {ACCOUNT_FORMS}"),
    ("tpu-vm-account-iam-member-form", VM_ACCOUNT, f"serviceAccount:tpu-vm@{PROJECT}.iam.gserviceaccount.com",
     f"{W}.tpu_slices.research.service_account",
     f"'serviceAccount:tpu-vm@{PROJECT}.iam.gserviceaccount.com' is not a service account email; allowed: {ACCOUNT_FORMS}; "
     "drop the 'serviceAccount:' prefix (that is the IAM member form)"),
    ("tpu-vm-account-id-too-long", VM_ACCOUNT, f"{'t' * 31}@{PROJECT}.iam.gserviceaccount.com",
     f"{W}.tpu_slices.research.service_account",
     f"'{'t' * 31}@{PROJECT}.iam.gserviceaccount.com' is not a service account email; allowed: {ACCOUNT_FORMS}"),
    ("tpu-vm-account-upper-case", VM_ACCOUNT, f"TPU-VM@{PROJECT}.iam.gserviceaccount.com", f"{W}.tpu_slices.research.service_account",
     f"'TPU-VM@{PROJECT}.iam.gserviceaccount.com' is not a service account email; allowed: {ACCOUNT_FORMS}"),
    ("tpu-vm-account-resource-name", VM_ACCOUNT, f"projects/{PROJECT}/serviceAccounts/tpu-vm@{PROJECT}.iam.gserviceaccount.com",
     f"{W}.tpu_slices.research.service_account",
     f"'projects/{PROJECT}/serviceAccounts/tpu-vm@{PROJECT}.iam.gserviceaccount.com' is not a service account email; "
     f"allowed: {ACCOUNT_FORMS}"),
    # Reservations: a label value on TPU VMs, a Compute Engine name everywhere (RFC 1035, 63 characters at most).
    ("reservation-self-link", f"{R}/gpu_pools/train/reservation",
     f"https://www.googleapis.com/compute/v1/projects/{PROJECT}/zones/us-central1-a/reservations/a3-res",
     f"{U}.gpu_pools.train.reservation",
     f"'https://www.googleapis.com/compute/v1/projects/{PROJECT}/zones/us-central1-a/reservations/a3-res' is not a Compute "
     f"Engine reservation; allowed: {RESERVATION_FORMS}"),
    ("reservation-upper-case", "regions/europe-west4/tpu_slices/pretrain", {"generation": "v5p", "topology": "2x2x2",
     "capacity": "reserved", "reservation": "V5P-Res"}, f"{W}.tpu_slices.pretrain.reservation",
     f"'V5P-Res' is not a Compute Engine reservation; allowed: {RESERVATION_FORMS}"),
    ("reservation-name-too-long", f"{R}/gpu_pools/train/reservation", "r" * 64, f"{U}.gpu_pools.train.reservation",
     f"'{'r' * 64}' is not a Compute Engine reservation; allowed: {RESERVATION_FORMS}"),
    # Mutation review gaps: the bounds themselves.
    ("tpu-capacity-block", f"{R}/tpu_slices/serve/capacity", "capacity_block", f"{U}.tpu_slices.serve.capacity",
     "capacity 'capacity_block' is AWS-only; TPU slices take on_demand, spot, reserved, flex_start or queued"),
    ("flow-logs-kept-3651-days", "regions/europe-west4/network/flow_log_retention_days", 3651, f"{W}.network.flow_log_retention_days",
     "got 3651; Cloud Logging buckets keep logs 1 to 3650 days"),
    ("domain-254-characters", "global_endpoint/domain", ".".join(["a" * 63] * 3 + ["a" * 62]), f"{G}.global_endpoint.domain",
     f"'{'.'.join(['a' * 63] * 3 + ['a' * 62])}' is not a host name (it has 254 characters); {MANAGED}; allowed: {HOST_RULE}"),
]


@pytest.mark.parametrize(("case", "path", "value", "where", "message"), EXACT, ids=[c[0] for c in EXACT])
def test_gcp_only_checks_give_the_exact_message(case: str, path: str, value: Any, where: str, message: str) -> None:
    found = issues_of(change(PROD_GCP, path, value))
    assert found.get(where) == message, f"{case}: {found}"


# (id, path in clouds.gcp, a value GCP accepts)
ACCEPTED = [
    ("inference-without-certificate", f"{R}/inference/certificate", None),
    ("domain-subdomain", "global_endpoint/domain", "infer.staging.example.com"),
    ("domain-apex-with-digits-and-hyphens", "global_endpoint/domain", "ml-2.example.co.uk"),
    ("domain-mixed-case", "global_endpoint/domain", "Infer.Example.com"),
    ("domain-idn-punycode", "global_endpoint/domain", "xn--bcher-kva.example"),
    ("domain-63-character-label", "global_endpoint/domain", f"{'a' * 63}.example.com"),
    ("domain-253-characters", "global_endpoint/domain", ".".join(["a" * 63] * 3 + ["a" * 61])),
    ("tpu-vm-user-managed-account", VM_ACCOUNT, f"tpu-vm@{PROJECT}.iam.gserviceaccount.com"),
    ("tpu-vm-account-of-another-project", VM_ACCOUNT, "tpu-runner-01@shared-ml-123.iam.gserviceaccount.com"),
    ("tpu-vm-account-of-domain-scoped-project", VM_ACCOUNT, "tpu-runner@ml-prod.example.com.iam.gserviceaccount.com"),
    ("tpu-vm-compute-default-account", VM_ACCOUNT, "123456789012-compute@developer.gserviceaccount.com"),
    ("tpu-vm-app-engine-default-account", VM_ACCOUNT, f"{PROJECT}@appspot.gserviceaccount.com"),
    ("reservation-shared-from-another-project", f"{R}/gpu_pools/train/reservation", "projects/capacity-hub/reservations/a3-res"),
    ("reservation-63-characters", f"{R}/gpu_pools/train/reservation", "r" * 63),
    ("flow-logs-kept-3650-days", "regions/europe-west4/network/flow_log_retention_days", 3650),
]


@pytest.mark.parametrize(("case", "path", "value"), ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_values_gcp_accepts_still_load(case: str, path: str, value: Any) -> None:
    assert issues_of(change(PROD_GCP, path, value)) == {}, case
