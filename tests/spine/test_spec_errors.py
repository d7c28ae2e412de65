"""Bad config gives one clear message per problem: the config path, the value given and what is allowed."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import AZURE_ONLY, DELETE, platform_dict
from helpers import change as set_path
from helpers import full_platform_dict as valid
from hypothesis import given
from hypothesis import strategies as st

from components.spec import Platform, SpecError, StackConfigError, load_platform, platform_config_value

AWS_REGION = "platform.clouds.aws.regions.us-east-1"
GCP_REGION = "platform.clouds.gcp.regions.us-central1"


A = "clouds/aws/regions/us-east-1"
G = "clouds/gcp/regions/us-central1"

# (id, config path to change, new value, expected error path, fragments the message must contain)
CASES = [
    ("min-greater-than-max", f"{A}/gpu_pools/train/min_nodes", 6, f"{AWS_REGION}.gpu_pools.train.max_nodes", ["max_nodes (4)", "min_nodes (6)"]),
    ("unknown-field-typo", f"{A}/gpu_pools/train/max_node", 3, f"{AWS_REGION}.gpu_pools.train.max_node", ["unknown field", "did you mean 'max_nodes'"]),
    ("bad-enum", f"{A}/gpu_pools/train/capacity", "cheap", f"{AWS_REGION}.gpu_pools.train.capacity", ["'cheap'", "'spot'", "'on_demand'"]),
    ("tpu-as-gpu-accelerator", f"{A}/gpu_pools/train/accelerator", "tpu-v5e", f"{AWS_REGION}.gpu_pools.train.accelerator",
     ["'tpu-v5e' is a TPU", "GCP-only", "tpu_slices", "{generation: v5e, topology: 1x1}", "h100-80gb"]),
    ("accelerator-of-another-cloud", f"{G}/gpu_pools/l4-spot/accelerator", "trainium2", f"{GCP_REGION}.gpu_pools.l4-spot.accelerator",
     ["'trainium2' is not offered on gcp (it is offered on aws)", "allowed: a100-40gb"]),
    ("accelerator-without-its-memory", f"{A}/gpu_pools/train/accelerator", "h100", f"{AWS_REGION}.gpu_pools.train.accelerator",
     ["'h100' is not offered on aws (did you mean 'h100-80gb'?)"]),
    ("instance-type-unknown", f"{A}/gpu_pools/train", {"instance_type": "p9.mega", "max_nodes": 1}, f"{AWS_REGION}.gpu_pools.train.instance_type", ["p9.mega", "p5.48xlarge"]),
    ("tpu-on-aws", f"{A}/tpu_slices", {"x": {"generation": "v5e", "topology": "2x4"}}, f"{AWS_REGION}.tpu_slices.x", ["GCP-only"]),
    ("tpu-bad-topology", f"{G}/tpu_slices/pretrain/topology", "3x3", f"{GCP_REGION}.tpu_slices.pretrain.topology", ["3x3", "2x4"]),
    ("lustre-bad-size", f"{A}/lustre/scratch/size_gib", 1000, f"{AWS_REGION}.lustre.scratch.size_gib", ["1000", "2400"]),
    ("lustre-bad-throughput", f"{A}/lustre/scratch/throughput_mbps_per_tib", 300, f"{AWS_REGION}.lustre.scratch.throughput_mbps_per_tib", ["300", "125", "1000"]),
    ("lustre-unknown-bucket", f"{A}/lustre/scratch/bucket", "models", f"{AWS_REGION}.lustre.scratch.bucket", ["'models'", "datasets"]),
    ("cidr-overlap", f"{G}/network/cidr", "10.10.128.0/17", f"{GCP_REGION}.network.cidr", ["10.10.128.0/17", "overlaps", "10.10.0.0/16"]),
    ("cidr-public", f"{A}/network/cidr", "8.8.0.0/16", f"{AWS_REGION}.network.cidr", ["8.8.0.0/16", "private"]),
    ("cidr-too-large", f"{A}/network/cidr", "10.0.0.0/8", f"{AWS_REGION}.network.cidr", ["/8", "/16 to /22"]),
    ("cidr-not-a-cidr", f"{A}/network/cidr", "10.0.0.300/16", f"{AWS_REGION}.network.cidr", ["10.0.0.300/16"]),
    ("region-outside-residency", "compliance/allowed_regions", ["us-central1"], AWS_REGION, ["us-east-1", "allowed_regions", "us-central1"]),
    ("region-name-wrong-cloud", "clouds/aws/regions", {"westeurope": {"network": {"cidr": "10.30.0.0/16"}}}, "platform.clouds.aws.regions.westeurope", ["westeurope", "us-east-1"]),
    ("mig-without-profile", f"{A}/gpu_pools/train/sharing", {"mode": "mig"}, f"{AWS_REGION}.gpu_pools.train.sharing.mig_profile", ["mig_profile"]),
    ("mig-profile-not-offered", f"{A}/gpu_pools/train/sharing", {"mode": "mig", "mig_profile": "9g.999gb"}, f"{AWS_REGION}.gpu_pools.train.sharing.mig_profile", ["9g.999gb", "allowed"]),
    ("mps-not-on-aws", f"{A}/gpu_pools/train/sharing", {"mode": "mps", "replicas_per_gpu": 4}, f"{AWS_REGION}.gpu_pools.train.sharing.mode", ["mps", "GKE"]),
    ("reserved-without-reservation", f"{A}/gpu_pools/train/capacity", "reserved", f"{AWS_REGION}.gpu_pools.train.reservation", ["reservation"]),
    ("capacity-block-without-reservation-on-gcp", f"{G}/gpu_pools/l4-spot", {"accelerator": "l4", "capacity": "capacity_block"},
     f"{GCP_REGION}.gpu_pools.l4-spot.reservation", ["capacity 'capacity_block' (AWS EC2 Capacity Blocks for ML, AWS only) needs reservation"]),
    ("flex-start-on-aws", f"{A}/gpu_pools/train/capacity", "flex_start", f"{AWS_REGION}.gpu_pools.train.capacity", ["flex_start", "gcp-only"]),
    ("pool-without-cluster", f"{A}/cluster", DELETE, f"{AWS_REGION}.gpu_pools.train", ["cluster"]),
    ("bad-pool-name", f"{A}/gpu_pools/Train_1", {"accelerator": "l4"}, f"{AWS_REGION}.gpu_pools.Train_1", ["'Train_1'", "lower-case"]),
    ("missing-labels", "labels", DELETE, "platform.labels", ["required"]),
    ("label-value-invalid", "labels/cost_center", "CC 12", "platform.labels.cost_center", ["CC 12"]),
    ("public-api-without-cidrs", f"{A}/cluster/api_access", "public_restricted", f"{AWS_REGION}.cluster.authorized_cidrs", ["authorized_cidrs"]),
    ("private-api-public-cidr", f"{A}/cluster/authorized_cidrs", ["203.0.113.0/24"], f"{AWS_REGION}.cluster.authorized_cidrs",
     ["203.0.113.0/24", "not a private range", "10.0.0.0/8", "public_restricted"]),
    ("tiering-out-of-order", f"{A}/buckets/datasets/tiering", {"warm_after_days": 90, "cold_after_days": 60}, f"{AWS_REGION}.buckets.datasets.tiering.cold_after_days", ["60", "90"]),
    ("s3-ia-too-early", f"{A}/buckets/datasets/tiering", {"warm_after_days": 7}, f"{AWS_REGION}.buckets.datasets.tiering.warm_after_days", ["7", "30"]),
    ("autoclass-on-aws", f"{A}/buckets/datasets/autoclass", True, f"{AWS_REGION}.buckets.datasets.autoclass", ["GCP-only"]),
    ("no-cloud", "clouds", {}, "platform.clouds", ["at least one"]),
    ("wrong-type", f"{A}/gpu_pools/train/max_nodes", "many", f"{AWS_REGION}.gpu_pools.train.max_nodes", ["'many'", "integer"]),
    ("data-zone-undefined", f"{A}/buckets/datasets/data_zone", "apac", f"{AWS_REGION}.buckets.datasets.data_zone", ["'apac'", "eu"]),
    ("data-outside-its-zone", f"{A}/buckets/datasets/data_zone", "eu", f"{AWS_REGION}.buckets.datasets.data_zone", ["us-east-1", "'eu'", "eu-west-1"]),
    ("reserved-team-name", "teams/kube-ops", {"gpu_quota": 1}, "platform.teams.kube-ops", ["kube-ops", "reserved", "monitoring"]),
    ("reserved-team-name-autoneg", "teams/autoneg-system", {"gpu_quota": 1}, "platform.teams.autoneg-system", ["autoneg-system", "reserved"]),
    # AKS's Azure-managed Calico (network_policy: calico) runs in the Tigera operator's namespaces
    ("reserved-team-name-calico", "teams/calico-system", {"gpu_quota": 1}, "platform.teams.calico-system", ["calico-system", "reserved"]),
    ("reserved-team-name-tigera", "teams/tigera-operator", {"gpu_quota": 1}, "platform.teams.tigera-operator", ["tigera-operator", "reserved"]),
    ("efa-on-non-efa-type", f"{A}/gpu_pools/train", {"accelerator": "l4", "max_nodes": 2, "efa": True}, f"{AWS_REGION}.gpu_pools.train.efa", ["EFA"]),
    ("team-name-ending-in-a-hyphen", "teams/research-", {"gpu_quota": 1}, "platform.teams.research-", ["'research-'", "ending with a letter or digit"]),
    ("taint-value-with-a-space", f"{A}/gpu_pools/train/taints", [{"key": "team", "value": "ml team"}],
     f"{AWS_REGION}.gpu_pools.train.taints[0].value", ["'ml team'", "not a Kubernetes label value"]),
    ("taint-key-not-a-qualified-name", f"{A}/gpu_pools/train/taints", [{"key": "-team"}],
     f"{AWS_REGION}.gpu_pools.train.taints[0].key", ["'-team'", "qualified name"]),
    ("node-label-under-kubernetes-io", f"{A}/gpu_pools/train/labels", {"node-role.kubernetes.io/gpu": ""},
     f"{AWS_REGION}.gpu_pools.train.labels", ["'node-role.kubernetes.io/gpu'", "reserved by Kubernetes"]),
    ("node-label-the-toolkit-sets", f"{A}/gpu_pools/train/labels", {"ai-infra/pool": "x"},
     f"{AWS_REGION}.gpu_pools.train.labels", ["'ai-infra/pool'", "the toolkit's own"]),
    ("node-label-value-too-long", f"{A}/gpu_pools/train/labels", {"team": "x" * 64},
     f"{AWS_REGION}.gpu_pools.train.labels", ["value of label 'team'", "at most 63"]),
    # The path names the field that holds the refused value (user audit).
    ("lustre-scratch-bad-size", f"{A}/lustre/scratch", {"deployment": "scratch", "size_gib": 1000},
     f"{AWS_REGION}.lustre.scratch.size_gib", ["SCRATCH_2", "got 1000 GiB", "1200 GiB"]),
    ("lustre-deployment-not-offered", f"{G}/lustre", {"fs": {"deployment": "scratch", "size_gib": 9000}},
     f"{GCP_REGION}.lustre.fs.deployment", ["scratch", "allowed deployments: persistent"]),
    ("tpu-unknown-generation", f"{G}/tpu_slices/pretrain/generation", "v7", f"{GCP_REGION}.tpu_slices.pretrain.generation",
     ["'v7'", "v5e", "v6e"]),
    ("tpu-topology-typo", f"{G}/tpu_slices/pretrain/topology", "2by4", f"{GCP_REGION}.tpu_slices.pretrain.topology", ["'2by4'", "valid: 1x1"]),
    ("gpu-count-not-offered", f"{A}/gpu_pools/train/accelerators_per_node", 3, f"{AWS_REGION}.gpu_pools.train.accelerators_per_node",
     ["3x h100-80gb", "allowed counts: 8"]),
    ("instance-type-count-mismatch", f"{A}/gpu_pools/train", {"instance_type": "p5.48xlarge", "accelerators_per_node": 4},
     f"{AWS_REGION}.gpu_pools.train.accelerators_per_node", ["p5.48xlarge", "8 accelerators per node", "not 4"]),
    ("instance-type-accelerator-mismatch", f"{A}/gpu_pools/train", {"instance_type": "p5.48xlarge", "accelerator": "l4"},
     f"{AWS_REGION}.gpu_pools.train.accelerator", ["p5.48xlarge", "h100-80gb", "not 'l4'"]),
    ("neuron-with-gpu-sharing", f"{A}/gpu_pools/train", {"accelerator": "trainium2", "sharing": {"mode": "time_slicing", "replicas_per_gpu": 2}},
     f"{AWS_REGION}.gpu_pools.train.sharing.mode", ["'time_slicing'", "trainium2", "allowed: none"]),
    ("neuron-with-gpu-operator", f"{A}/gpu_pools/train", {"accelerator": "trainium2", "driver": "operator"},
     f"{AWS_REGION}.gpu_pools.train.driver", ["'operator'", "trainium2", "allowed: cloud"]),
    # The value given is always shown (user audit: 5 was dropped because "5" is in "50").
    ("disk-below-minimum", f"{A}/gpu_pools/train/disk_size_gib", 5, f"{AWS_REGION}.gpu_pools.train.disk_size_gib",
     ["from 50 to 16384", "got 5"]),
    # Label keys: the rule in words, matching the pattern (user audit: the text said 24 characters).
    ("label-key-invalid", "labels/extra", {"Bad Key": "x"}, "platform.labels.extra.Bad Key",
     ["label key 'Bad Key'", "1 to 63", "'_' and '-'", "starting with a lower-case letter"]),
    ("label-key-too-long", "labels/extra", {"k" * 64: "x"}, f"platform.labels.extra.{'k' * 64}", ["1 to 63"]),
    ("label-value-with-a-dot", "labels/owner", "jane.doe", "platform.labels.owner", ["label value 'jane.doe'", "'_' and '-'"]),
    # A YAML number where text is expected: say how to quote it (user audit: 1.30 became 1.3).
    ("kubernetes-version-as-a-number", f"{A}/cluster/kubernetes_version", 1.30, f"{AWS_REGION}.cluster.kubernetes_version",
     ["got the number 1.3", "write it as a string", "'1.30'"]),
    ("residency-entry-typo", "compliance/allowed_regions", ["us-east-1", "us-centrl1"], "platform.compliance.allowed_regions[1]",
     ["'us-centrl1'", "did you mean 'us-central1'", "regions.json"]),
    ("data-zone-entry-typo", "compliance/data_zones", {"eu": ["eu-wst-1"]}, "platform.compliance.data_zones.eu[0]",
     ["'eu-wst-1'", "did you mean 'eu-west-1'"]),
]


def test_valid_config_loads() -> None:
    spec = load_platform(valid())
    assert isinstance(spec, Platform)
    assert spec.protected  # "test" is not dev


@pytest.mark.parametrize(("change", "value", "path", "fragments"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_config_names_path_value_and_allowed(change: str, value: Any, path: str, fragments: list[str]) -> None:
    with pytest.raises(SpecError) as caught:
        load_platform(set_path(valid(), change, value))
    issues = dict(caught.value.issues)
    assert path in issues, f"expected an issue at {path}; got {caught.value}"
    for fragment in fragments:
        assert fragment.lower() in issues[path].lower(), f"{fragment!r} not in {issues[path]!r}"


@pytest.mark.parametrize(
    "changes",
    [
        # two shape problems (pydantic stage)
        [(f"{A}/gpu_pools/train/min_nodes", 6), (f"{A}/network/nat", "triple")],
        # two semantic problems (checks stage)
        [(f"{A}/lustre/scratch/size_gib", 1000), (f"{G}/network/cidr", "10.10.0.0/16")],
    ],
    ids=["shape", "semantic"],
)
def test_message_lists_every_problem_of_a_stage_at_once(changes: list[tuple[str, Any]]) -> None:
    data = valid()
    for path, value in changes:
        data = set_path(data, path, value)
    with pytest.raises(SpecError) as caught:
        load_platform(data)
    text = str(caught.value)
    assert text.startswith("invalid platform config (2 problems):"), text
    assert "Traceback" not in text


def test_distinct_mistake_kinds_are_covered() -> None:
    # The issue asks for at least 15 distinct kinds of mistake.
    assert len({c[0] for c in CASES}) >= 15


def _issues(data: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(SpecError) as caught:
        load_platform(data)
    return caught.value.issues


@pytest.mark.parametrize(
    ("change", "value", "right", "wrong"),
    [
        (f"{A}/lustre/scratch", {"deployment": "scratch", "size_gib": 1000}, f"{AWS_REGION}.lustre.scratch.size_gib",
         f"{AWS_REGION}.lustre.scratch.deployment"),
        (f"{G}/tpu_slices/pretrain/generation", "v7", f"{GCP_REGION}.tpu_slices.pretrain.generation",
         f"{GCP_REGION}.tpu_slices.pretrain.topology"),
        (f"{A}/gpu_pools/train/accelerators_per_node", 3, f"{AWS_REGION}.gpu_pools.train.accelerators_per_node",
         f"{AWS_REGION}.gpu_pools.train.accelerator"),
    ],
    ids=["lustre-size", "tpu-generation", "gpu-count"],
)
def test_problem_is_reported_once_at_the_field_holding_the_value(change: str, value: Any, right: str, wrong: str) -> None:
    paths = [path for path, _ in _issues(set_path(valid(), change, value))]
    assert paths == [right]
    assert wrong not in paths


@pytest.mark.parametrize("value", [0, 1, 5, 10, 49, -50])
def test_value_is_shown_even_when_its_digits_are_in_the_bound(value: int) -> None:
    [(path, message)] = _issues(set_path(valid(), f"{A}/gpu_pools/train/disk_size_gib", value))
    assert message == f"expected an integer from 50 to 16384, got {value}"


def test_value_is_not_repeated_when_the_message_states_it() -> None:
    [(_, message)] = _issues(set_path(valid(), f"{A}/network/cidr", "10.0.0.0/8"))
    assert message.count("10.0.0.0/8") == 1 and "(got" not in message


def test_number_for_a_text_field_without_a_valid_quoted_form_gets_no_quote_hint() -> None:
    # "12" would still break the environment pattern, so quoting is not the fix to suggest.
    [(_, message)] = _issues(set_path(valid(), "environment", 12))
    assert message == "expected a string, got the number 12"


def test_region_typo_is_rejected_with_a_suggestion_and_the_list() -> None:
    data = set_path(set_path(valid(), "compliance/allowed_regions", DELETE), "clouds/aws/regions/us-est-1", {"network": {"cidr": "10.30.0.0/16"}})
    [(path, message)] = _issues(data)
    assert path == "platform.clouds.aws.regions.us-est-1"
    assert message.startswith("unknown aws region 'us-est-1'; did you mean ")
    assert "'us-east-1'" in message and "components/catalog/data/regions.json" in message
    assert "https://docs.aws.amazon.com/global-infrastructure/latest/regions/aws-regions.html" in message


def test_gcp_region_typo_suggests_the_region() -> None:
    data = set_path(set_path(valid(), "compliance/allowed_regions", DELETE), "clouds/gcp/regions", {"us-centrl1": {"network": {"cidr": "10.20.0.0/16"}}})
    [(path, message)] = _issues(data)
    assert path == "platform.clouds.gcp.regions.us-centrl1"
    assert "unknown gcp region 'us-centrl1'; did you mean 'us-central1'?" in message


def test_region_of_another_cloud_names_the_cloud() -> None:
    data = set_path(valid(), "clouds/aws/regions/westeurope", {"network": {"cidr": "10.30.0.0/16"}})
    data["compliance"]["allowed_regions"].append("westeurope")  # a valid (Azure) region: only the placement is wrong
    [(path, message)] = _issues(data)
    assert path == "platform.clouds.aws.regions.westeurope"
    assert message == ("'westeurope' is an Azure region, not an AWS region: move it under clouds.azure.regions "
                       "(aws regions are named like us-east-1)")


def test_unknown_region_without_a_close_name_says_what_names_look_like() -> None:
    [(path, message)] = _issues(set_path(valid(), "compliance/allowed_regions", ["us-east-1", "us-central1", "qqqq"]))
    assert path == "platform.compliance.allowed_regions[2]"
    assert message.startswith("unknown region 'qqqq' (regions are named like us-east-1, us-central1, westeurope)")


def test_messages_are_one_line() -> None:
    data = valid()
    for change, value in [(f"{A}/cluster/kubernetes_version", 1.3), ("labels/extra", {"Bad Key": "x"}),
                          (f"{A}/gpu_pools/train/disk_size_gib", 5)]:
        data = set_path(data, change, value)
    for _, message in _issues(data):
        assert "\n" not in message


# --- Fuzz review (F4, F5, F12, F13, F16): labels the clouds would refuse, rules in words, empty keys and lists ---------

EXTRA_LIMIT = ("got {n} extra labels; at most 38 are allowed: AWS and Azure allow 50 tags per resource, the platform sets 5 of "
               "its own (environment, owner, team, cost-center, managed-by) and a resource carries up to 7 more (an EKS "
               "cluster's EBS volume: the 7 tags of the EBS CSI driver)")


@pytest.mark.parametrize("platform", [valid(), platform_dict({"aws": valid()["clouds"]["aws"]}), platform_dict(AZURE_ONLY)],
                         ids=["all-clouds", "aws-only", "azure-only"])
def test_extra_labels_leave_room_for_the_tags_every_resource_carries(platform: dict[str, Any]) -> None:
    # F4: 50 extra labels made 55 default tags on every AWS resource (AWS and Azure take 50): an AWS- or Azure-only
    # platform gets the 38-label limit too, not GCP's 56.
    fits = {f"label-{i}": "x" for i in range(38)}
    assert load_platform(set_path(platform, "labels/extra", fits)).labels.extra == fits
    assert _issues(set_path(platform, "labels/extra", {**fits, "one-more": "x"})) == [("platform.labels.extra", EXTRA_LIMIT.format(n=39))]


def test_a_gcp_only_platform_has_gcps_64_labels_to_fill() -> None:
    # GCP takes 64 labels per resource: less the platform's 5 and a TPU VM's 3, 56 extra labels fit there.
    gcp_only = set_path(valid(), "clouds", {"gcp": valid()["clouds"]["gcp"]})
    fits = {f"label-{i}": "x" for i in range(56)}
    assert load_platform(set_path(gcp_only, "labels/extra", fits)).labels.extra == fits
    assert _issues(set_path(gcp_only, "labels/extra", {**fits, "one-more": "x"})) == [(
        "platform.labels.extra", "got 57 extra labels; at most 56 are allowed: GCP allows 64 labels per resource, the "
        "platform sets 5 of its own (environment, owner, team, cost-center, managed-by) and a resource carries up to 3 "
        "more (a TPU VM's slice, slice-index and reservation)")]


def test_the_extra_label_limit_is_the_cloud_limit_less_the_tags_a_resource_gets_otherwise() -> None:
    from components.spec.common import CLOUD_TAG_LIMIT, MAX_EXTRA_LABELS, MOST_RESOURCE_TAGS, PLATFORM_TAG_KEYS

    assert (CLOUD_TAG_LIMIT, len(PLATFORM_TAG_KEYS), MOST_RESOURCE_TAGS, MAX_EXTRA_LABELS) == (50, 5, 7, 38)
    spec = load_platform(valid())
    assert tuple(spec.tags()) == PLATFORM_TAG_KEYS  # no extra labels: the platform's own tags only


TOOLKIT_KEYS = ("environment, owner, team, cost-center, managed-by, data-zone, data-class, slice, slice-index, reservation")


@pytest.mark.parametrize(("key", "source"), [
    ("environment", "set by platform.environment"),
    ("owner", "set by platform.labels.owner"),
    ("team", "set by platform.labels.team"),
    ("cost-center", "set by platform.labels.cost_center"),
    ("managed-by", "always 'ai-infra'"),
    ("data-zone", "set by a bucket's or Lustre file system's data_zone"),
    ("data-class", "set by a bucket's data_class"),
    ("slice", "the TPU slice's name, on its TPU VMs"),
    ("slice-index", "the slice's index, on TPU VMs"),
    ("reservation", "a TPU slice's reservation, on its TPU VMs"),
])
def test_an_extra_label_may_not_replace_a_tag_the_toolkit_sets(key: str, source: str) -> None:
    # F5: `extra: {environment: prod}` on a dev stack relabelled every resource prod (Platform.tags() merges extra last).
    assert _issues(set_path(valid(), "labels/extra", {"tier": "gold", key: "x"})) == [
        (f"platform.labels.extra.{key}", f"label key '{key}' is a tag the toolkit sets itself ({source}); an extra label may "
                                         f"not replace it. Keys the toolkit sets: {TOOLKIT_KEYS}")]


def test_every_tag_the_platform_sets_is_refused_in_extra() -> None:
    from components.spec.common import TOOLKIT_TAG_KEYS

    spec = load_platform(valid())
    assert set(spec.data_tags("eu")) <= set(TOOLKIT_TAG_KEYS)
    paths = [path for path, _ in _issues(set_path(valid(), "labels/extra", {"managed-by": "terraform", "environment": "prod"}))]
    assert paths == ["platform.labels.extra.managed-by", "platform.labels.extra.environment"]  # each key, in the order given


@pytest.mark.parametrize(("change", "value", "path", "message"), [
    # F12: the rule in words, not the regex.
    ("environment", "Dev", "platform.environment",
     "environment name 'Dev' is invalid; environment names are 2 to 16 lower-case letters, digits and '-', starting with a letter"),
    ("clouds/gcp/project", "Acme-ML-Dev", "platform.clouds.gcp.project",
     "project ID 'Acme-ML-Dev' is invalid; project IDs are 6 to 30 lower-case letters, digits and '-', starting with a letter, "
     "ending with a letter or digit"),
    ("clouds/azure", {"regions": {"eastus2": {"network": {"cidr": "10.30.0.0/16"}}}, "hpc_cache_principal_id": "hpc-cache"},
     "platform.clouds.azure.hpc_cache_principal_id",
     "GUID 'hpc-cache' is invalid; GUIDs are 32 hex digits in groups of 8, 4, 4, 4 and 12 joined by '-', like "
     "00000000-0000-0000-0000-000000000000"),
    (f"{A}/cluster/kubernetes_version", "1.3", f"{AWS_REGION}.cluster.kubernetes_version",
     "Kubernetes version '1.3' is invalid; Kubernetes versions are 1. and a two-digit minor version, like 1.33"),
    # A pattern that lists the values reads as an enum, with the nearest value.
    (f"{A}/gpu_pools/train/taints", [{"key": "dedicated", "effect": "NoScheduel"}], f"{AWS_REGION}.gpu_pools.train.taints[0].effect",
     "Input should be 'NoSchedule', 'PreferNoSchedule' or 'NoExecute' (got 'NoScheduel'); did you mean 'NoSchedule'?"),
    (f"{A}/gpu_pools/train/taints", [{"key": "dedicated", "effect": "Evict"}], f"{AWS_REGION}.gpu_pools.train.taints[0].effect",
     "Input should be 'NoSchedule', 'PreferNoSchedule' or 'NoExecute' (got 'Evict')"),
    # Enums suggest the nearest value too, in any case.
    (f"{A}/gpu_pools/train/capacity", "Spot", f"{AWS_REGION}.gpu_pools.train.capacity",
     "Input should be 'on_demand', 'spot', 'reserved', 'capacity_block', 'flex_start' or 'queued' (got 'Spot'); did you mean 'spot'?"),
    (f"{A}/gpu_pools/train/capacity", "on-demand", f"{AWS_REGION}.gpu_pools.train.capacity",
     "Input should be 'on_demand', 'spot', 'reserved', 'capacity_block', 'flex_start' or 'queued' (got 'on-demand'); "
     "did you mean 'on_demand'?"),
    # F13: a null or empty key is named as such, at the mapping that holds it (the offline reader writes ~ as 'None').
    ("teams", {"None": {"gpu_quota": 1}}, "platform.teams",
     "a team name is null or empty (YAML reads ~, null and a key with nothing before the ':' as null); team names are "
     "lower-case letters, digits and '-', starting with a letter, ending with a letter or digit, at most 24 characters"),
    ("teams", {"": {"gpu_quota": 1}}, "platform.teams",
     "a team name is null or empty (YAML reads ~, null and a key with nothing before the ':' as null); team names are "
     "lower-case letters, digits and '-', starting with a letter, ending with a letter or digit, at most 24 characters"),
    (f"{A}/gpu_pools", {"None": {"accelerator": "l4"}}, f"{AWS_REGION}.gpu_pools",
     "a gpu pool name is null or empty (YAML reads ~, null and a key with nothing before the ':' as null); gpu pool names are "
     "lower-case letters, digits and '-', starting with a letter, ending with a letter or digit, at most 24 characters"),
    ("labels/extra", {"": "x"}, "platform.labels.extra",
     "a label key is null or empty (YAML reads ~, null and a key with nothing before the ':' as null); label keys are "
     "1 to 63 lower-case letters, digits, '_' and '-', starting with a lower-case letter"),
    # F16: an empty residency list refuses every region: say so once, at the list.
    ("compliance/allowed_regions", [], "platform.compliance.allowed_regions",
     "allowed_regions is empty, so no region would be allowed; list the regions resources may be placed in, or leave "
     "allowed_regions out for no restriction"),
    ("compliance/data_zones", {"eu": []}, "platform.compliance.data_zones.eu",
     "data zone 'eu' lists no regions, so data of this zone could be stored nowhere; list the regions it may live in"),
], ids=["environment", "gcp-project", "guid", "kubernetes-version", "taint-effect-typo", "taint-effect-unknown", "enum-case",
        "enum-typo", "null-team-key", "empty-team-key", "null-pool-key", "empty-label-key", "empty-allowed-regions",
        "empty-data-zone"])
def test_fuzz_review_messages(change: str, value: Any, path: str, message: str) -> None:
    assert _issues(set_path(valid(), change, value)) == [(path, message)]


def test_an_empty_data_zone_is_not_reported_again_at_the_data_in_it() -> None:
    data = set_path(valid(), "compliance/data_zones", {"eu": []})
    data = set_path(data, f"{A}/buckets/datasets/data_zone", "eu")
    assert [path for path, _ in _issues(data)] == ["platform.compliance.data_zones.eu"]


def test_a_null_team_key_in_a_stack_file_is_named_as_null(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    # F13 end to end: YAML `~:` under teams, as the fuzz review wrote it. The Pulumi CLI refuses the whole stack file
    # (only string keys: workspace/project.go SimplifyMarshalledValue), so the plan does too, at the key's line; the
    # spec's own message for a null team name (test above) is what a program building its platform in code gets.
    import yaml
    from pathlib import Path

    from aiinfra.cli import main

    root = Path(__file__).resolve().parents[2]
    (tmp_path / "Pulumi.yaml").write_text("name: ai-infra\nruntime: python\n")
    (tmp_path / "__main__.py").write_text((root / "stacks" / "__main__.py").read_text())
    text = yaml.safe_dump({"config": {"ai-infra:platform": set_path(valid(), "environment", "lab")}})
    text = text.replace("    research:", "    ~:")
    (tmp_path / "Pulumi.lab.yaml").write_text(text)
    [(line, column)] = [(n, row.index("~:") + 1) for n, row in enumerate(text.splitlines(), 1) if row.strip() == "~:"]
    assert main(["validate", "--program", str(tmp_path), "--stack", "lab"]) == 1
    assert capsys.readouterr().err == (
        f"error: {tmp_path / 'Pulumi.lab.yaml'}:{line}:{column}: the Pulumi CLI refuses this file: key '~' is null, not a "
        "string; allowed: string keys only, at any depth (quote it: '\"~\"')\n")


@pytest.mark.parametrize(("path", "value", "where", "allowed"), [
    (f"{G}/gpu_pools/train", {"accelerator": "l4", "capacity": "capacity_block", "reservation": "cb-l4"},
     f"{GCP_REGION}.gpu_pools.train.capacity",
     "capacity 'capacity_block' is aws-only; gcp allows on_demand, spot, reserved, flex_start, queued"),
    (f"{A}/gpu_pools/train/capacity", "flex_start", f"{AWS_REGION}.gpu_pools.train.capacity",
     "capacity 'flex_start' is gcp-only; aws allows on_demand, spot, reserved, capacity_block"),
], ids=["capacity-block-on-gcp", "flex-start-on-aws"])
def test_capacity_of_another_cloud_lists_what_this_cloud_allows(path: str, value: str, where: str, allowed: str) -> None:
    assert (where, allowed) in _issues(set_path(valid(), path, value))


# --- Review of 243 broken configs: the near miss named, the fix written out ------------------------------------------

RESERVED = ("not allowed: amazon-cloudwatch, app-routing-system, autoneg-system, calico-system, default, gatekeeper-system, "
            "gmp-public, gmp-system, gpu-operator, kueue-system, monitoring, tigera-operator, kube-*, gke-*")
YAML12 = "YAML 1.2, which Pulumi reads, takes only true and false as booleans"


@pytest.mark.parametrize(("change", "value", "path", "message"), [
    (f"{A}/gpu_pools/train", {"accelerator": "L4", "max_nodes": 2}, f"{AWS_REGION}.gpu_pools.train.accelerator",
     "accelerator 'L4' is not offered on aws (did you mean 'l4'?); allowed: a100-40gb, a100-80gb, a10g, b200, h100-80gb, "
     "h200-141gb, inferentia2, l4, l40s, t4, trainium, trainium2"),
    (f"{A}/network/cidr", "10.10.0.1/16", f"{AWS_REGION}.network.cidr",
     "'10.10.0.1/16' has host bits set: a network is written with every bit after its /16 prefix zero; did you mean "
     "'10.10.0.0/16'?"),
    (f"{A}/network/cidr", "10.10.0.0/8", f"{AWS_REGION}.network.cidr",
     "'10.10.0.0/8' has host bits set: a network is written with every bit after its /8 prefix zero; did you mean '10.0.0.0/8'?"),
    (f"{A}/cluster", {"api_access": "private", "authorized_cidrs": ["192.168.7.1/24"]}, f"{AWS_REGION}.cluster.authorized_cidrs[0]",
     "'192.168.7.1/24' has host bits set: a network is written with every bit after its /24 prefix zero; did you mean "
     "'192.168.7.0/24'?"),
    ("teams/kube-system", {}, "platform.teams.kube-system",
     f"team name 'kube-system' is reserved for a namespace the Kubernetes layer or the clusters' add-ons use; {RESERVED}"),
    (f"{A}/gpu_pools/train/efa", "yes", f"{AWS_REGION}.gpu_pools.train.efa",
     f"expected a boolean (true or false), got the string 'yes'; {YAML12}: write true"),
    ("protect_stateful", "off", "platform.protect_stateful",
     f"expected a boolean (true or false), got the string 'off'; {YAML12}: write false"),
    ("teams/research/can_borrow", "No", "platform.teams.research.can_borrow",
     f"expected a boolean (true or false), got the string 'No'; {YAML12}: write false"),
    ("addons/enabled", "ON", "platform.addons.enabled", f"expected a boolean (true or false), got the string 'ON'; {YAML12}: write true"),
    (f"{G}/buckets", {"ckpt": {"autoclass": "y"}}, f"{GCP_REGION}.buckets.ckpt.autoclass",
     f"expected a boolean (true or false), got the string 'y'; {YAML12}: write true"),
], ids=["accelerator-case", "cidr-host-bits", "cidr-host-bits-short-prefix", "authorized-cidr-host-bits", "reserved-team-path",
        "efa-yes", "protect-off", "can-borrow-no", "addons-on", "autoclass-y"])
def test_review_messages(change: str, value: Any, path: str, message: str) -> None:
    assert _issues(set_path(valid(), change, value)) == [(path, message)]


def test_a_reserved_team_is_named_with_the_other_problems_of_its_stage() -> None:
    # A key check runs with the field checks: a reserved team no longer waits for the rest of the config to be valid.
    data = set_path(set_path(valid(), "teams/kube-ops", {}), f"{A}/gpu_pools/train/min_nodes", 6)
    assert [path for path, _ in _issues(data)] == [f"{AWS_REGION}.gpu_pools.train.max_nodes", "platform.teams.kube-ops"]


@given(st.sampled_from(["true", "false", "yes", "no", "on", "off", "y", "n"]), st.data())
def test_every_spelling_of_a_boolean_in_quotes_gets_the_boolean_to_write(word: str, data: st.DataObject) -> None:
    spelt = "".join(c.upper() if data.draw(st.booleans()) else c for c in word)
    meant = "true" if word in ("true", "yes", "on", "y") else "false"
    [(_, message)] = _issues(set_path(valid(), "protect_stateful", spelt))
    assert message.startswith(f"expected a boolean (true or false), got the string {spelt!r}; ")
    assert message.endswith(f"write it without quotes: {meant}" if word in ("true", "false") else f"write {meant}")


@pytest.mark.parametrize(("keys", "message"), [
    (["aws:region", "ai-infra:platfrom"],
     "stack 'dev' has no ai-infra:platform config, but has 'ai-infra:platfrom': did you mean ai-infra:platform? Config keys "
     "are exact and case-sensitive; rename it to ai-infra:platform"),
    (["ai-infra:Platform"],
     "stack 'dev' has no ai-infra:platform config, but has 'ai-infra:Platform': did you mean ai-infra:platform? Config keys "
     "are exact and case-sensitive; rename it to ai-infra:platform"),
    (["aiinfra:platform", "ai_infra:platforms", "gcp:project"],
     "stack 'dev' has no ai-infra:platform config, but has 'aiinfra:platform' and 'ai_infra:platforms': did you mean "
     "ai-infra:platform? Config keys are exact and case-sensitive; rename the one you meant to ai-infra:platform"),
    (["aws:region", "ai-infra:policy", "ai-infra:platformVersion"], "stack 'dev' has no ai-infra:platform config; see README 'Config reference'"),
], ids=["typo", "case", "two-near-misses", "none-near"])
def test_a_missing_platform_names_the_near_miss_key(keys: list[str], message: str) -> None:
    with pytest.raises(StackConfigError) as caught:
        platform_config_value(None, stack="dev", secret=False, config_keys=keys)
    assert str(caught.value) == message

