"""Pure AWS logic, tested directly: names, lifecycle math against S3's rules, policy documents, node pool choices."""

from __future__ import annotations

import itertools
import re

import pulumi
import pytest
from helpers import platform_dict
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from components import catalog
from components.aws import policies
from components.aws.lifecycle import lifecycle
from components.aws.naming import bucket_name
from components.aws.network import _first_zones
from components.aws.node_group import (
    EFA_INTERFACES,
    MAX_SPOT_TYPES,
    ami_type,
    efa_interfaces,
    instance_types,
    node_taints,
    system_ami_type,
)
from components.spec import CapacityType, GpuPoolSpec, Placement, SpecError, Tiering, load_platform
from components.spec.aws import WarmStorageClass, lustre_zone_index, placement_group, single_subnet

AWS_ROWS = catalog.instance_types("aws")
names = st.from_regex(r"[a-z][a-z0-9-]{0,23}", fullmatch=True)
environments = st.one_of(st.from_regex(r"[a-z][a-z0-9-]{1,15}", fullmatch=True), st.sampled_from(["xn--prod", "sthree-x"]))


@given(environments, st.sampled_from(["us-east-1", "ap-southeast-5", "us-gov-west-1"]), names,
       st.from_regex(r"\d{12}", fullmatch=True), st.sampled_from(["data", "logs"]))
def test_bucket_names_are_valid_stable_and_unique_per_account(environment: str, region: str, name: str, account: str, kind: str) -> None:
    physical = bucket_name(environment, region, name, account, kind)
    assert 3 <= len(physical) <= 63
    assert re.fullmatch(r"[a-z0-9][a-z0-9-]*[a-z0-9]", physical)
    assert not physical.startswith(("xn--", "sthree-", "amzn-s3-demo-"))
    assert physical == bucket_name(environment, region, name, account, kind)
    assert physical != bucket_name(environment, region, name, str(int(account) ^ 1).zfill(12), kind)
    assert physical != bucket_name(environment, region, name, account, "logs" if kind == "data" else "data")


# --- lifecycle ------------------------------------------------------------------------------------------------

@st.composite
def tierings(draw: st.DrawFn) -> dict[str, int | None]:
    """Thresholds as gaps (small ones included: S3's 30-day rules live there), each tier possibly skipped."""
    fields = ("warm_after_days", "cold_after_days", "archive_after_days", "expire_after_days")
    day, tiering = 0, {}
    for field in fields:
        day += draw(st.integers(min_value=1, max_value=120))
        tiering[field] = day if draw(st.booleans()) else None
    return tiering


def s3_accepts(rules, warm_class: WarmStorageClass) -> None:  # noqa: ANN001
    """S3's own lifecycle validation, as an oracle (docs: lifecycle transition considerations)."""
    transition_days = [t.days for t in rules.transitions]
    assert transition_days == sorted(set(transition_days))
    for t in rules.transitions:
        if t.storage_class == "STANDARD_IA":
            assert t.days >= 30
    for before, after in itertools.pairwise(rules.transitions):
        if before.storage_class == "STANDARD_IA":
            assert after.days >= before.days + 30
    if rules.expire_after_days is not None and transition_days:
        assert rules.expire_after_days > transition_days[-1]


@settings(max_examples=200, deadline=None)
@given(tiering=tierings(), warm_class=st.sampled_from(list(WarmStorageClass)), versioned=st.booleans())
def test_every_tiering_the_spec_accepts_is_a_lifecycle_s3_accepts(tiering, warm_class, versioned) -> None:  # noqa: ANN001
    warm, cold, archive, expire = tiering.values()
    data = platform_dict({"aws": {"warm_storage_class": warm_class.value, "regions": {"us-east-1": {
        "network": {"cidr": "10.0.0.0/16"}, "buckets": {"b": {"tiering": tiering, "versioning": versioned}}}}}})
    try:
        spec = load_platform(data)
    except SpecError:
        assume(False)
    bucket = spec.clouds.aws.regions["us-east-1"].buckets["b"]
    rules = lifecycle(bucket.tiering, warm_class, versioned=versioned, noncurrent_expire_after_days=bucket.noncurrent_expire_after_days)
    s3_accepts(rules, warm_class)
    classes = [t.storage_class for t in rules.transitions]
    order = ["STANDARD_IA" if warm_class is WarmStorageClass.STANDARD_IA else "INTELLIGENT_TIERING", "GLACIER_IR", "DEEP_ARCHIVE"]
    assert classes == [c for c, d in zip(order, (warm, cold, archive)) if d is not None]
    assert rules.expire_after_days == expire
    assert (rules.noncurrent_expire_after_days is not None) == versioned


def test_default_tiering_is_ia_then_glacier_ir_then_deep_archive() -> None:
    rules = lifecycle(Tiering(), WarmStorageClass.STANDARD_IA, versioned=True, noncurrent_expire_after_days=90)
    assert [(t.days, t.storage_class) for t in rules.transitions] == [(30, "STANDARD_IA"), (90, "GLACIER_IR"), (365, "DEEP_ARCHIVE")]
    assert rules.expire_after_days is None and rules.noncurrent_expire_after_days == 90


# --- policies -------------------------------------------------------------------------------------------------

BUCKET = "arn:aws:s3:::prod-datasets-0123abcd"
KEY = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"


def test_bucket_policy_denies_plain_http_old_tls_and_other_encryption() -> None:
    statements = {s["Sid"]: s for s in policies.bucket_policy(BUCKET, KEY)["Statement"]}
    assert all(s["Effect"] == "Deny" and s["Principal"] == "*" for s in statements.values())
    tls = statements["DenyInsecureTransport"]
    assert tls["Resource"] == [BUCKET, f"{BUCKET}/*"] and tls["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    assert statements["DenyTlsOlderThan12"]["Condition"] == {"NumericLessThan": {"s3:TlsVersion": "1.2"}}
    assert statements["DenyUploadsNotEncryptedWithKms"]["Condition"] == {
        "StringNotEqualsIfExists": {"s3:x-amz-server-side-encryption": "aws:kms"}}
    assert statements["DenyUploadsWithAnotherKmsKey"]["Condition"] == {
        "StringNotEqualsIfExists": {"s3:x-amz-server-side-encryption-aws-kms-key-id": KEY}}


def test_log_bucket_policy_admits_log_delivery_for_this_account_only() -> None:
    without_lb = {s["Sid"]: s for s in policies.log_bucket_policy(BUCKET, "123456789012", None)["Statement"]}
    assert "LoadBalancerAccessLogs" not in without_lb
    assert without_lb["S3ServerAccessLogs"]["Principal"] == {"Service": "logging.s3.amazonaws.com"}
    assert without_lb["S3ServerAccessLogs"]["Condition"] == {"StringEquals": {"aws:SourceAccount": "123456789012"}}
    assert without_lb["LogDeliveryWrite"]["Resource"] == f"{BUCKET}/*/AWSLogs/123456789012/*"
    # ALB access logs: tests/aws/test_elb_logs.py.


def test_key_policy_scopes_service_use_to_the_account_and_region() -> None:
    statements = policies.key_policy("123456789012", "aws-us-gov", "us-gov-west-1", "amazonaws.com")["Statement"]
    admin = statements[0]
    assert admin["Principal"] == {"AWS": "arn:aws-us-gov:iam::123456789012:root"} and admin["Action"] == "kms:*"
    for statement in statements[2:]:
        assert statement["Principal"] == {"AWS": "*"}
        assert statement["Condition"]["StringEquals"]["kms:CallerAccount"] == "123456789012"
        assert statement["Condition"]["StringEquals"]["kms:ViaService"].endswith(".us-gov-west-1.amazonaws.com")
        assert "kms:*" not in statement["Action"]


def test_irsa_trust_is_one_service_account_with_the_sts_audience() -> None:
    issuer = "https://oidc.eks.us-east-1.amazonaws.com/id/ABCDEF"
    statement = policies.irsa_trust("arn:aws:iam::123456789012:oidc-provider/x", issuer, "kube-system", "aws-node")["Statement"][0]
    assert statement["Action"] == "sts:AssumeRoleWithWebIdentity"
    assert statement["Condition"] == {"StringEquals": {
        "oidc.eks.us-east-1.amazonaws.com/id/ABCDEF:sub": "system:serviceaccount:kube-system:aws-node",
        "oidc.eks.us-east-1.amazonaws.com/id/ABCDEF:aud": "sts.amazonaws.com"}}


def test_flow_log_delivery_is_limited_to_one_log_group() -> None:
    group = "arn:aws:logs:us-east-1:123456789012:log-group:/ai-infra/prod-us-east-1/vpc-flow-logs"
    statement = policies.flow_log_delivery(group)["Statement"][0]
    assert statement["Resource"] == [group, f"{group}:*"] and "*" not in statement["Resource"]


# --- node pools -----------------------------------------------------------------------------------------------


def pool(row: catalog.GpuInstance, **fields) -> GpuPoolSpec:  # noqa: ANN003
    return GpuPoolSpec(instance_type=row.instance_type, **fields)


@pytest.mark.parametrize("row", AWS_ROWS, ids=lambda r: r.instance_type)
def test_instance_types_and_ami_for_every_catalog_row(row: catalog.GpuInstance) -> None:
    assert instance_types(row, pool(row)) == [row.instance_type]
    spot = instance_types(row, pool(row, capacity=CapacityType.SPOT))
    assert spot[0] == row.instance_type and len(spot) == len(set(spot)) <= MAX_SPOT_TYPES
    for name in spot:
        other = catalog.find_instance("aws", name)
        assert (other.accelerator, other.accelerator_count) == (row.accelerator, row.accelerator_count)
    if row.efa:
        for name in instance_types(row, pool(row, capacity=CapacityType.SPOT, efa=True)):
            assert efa_interfaces(catalog.find_instance("aws", name)) == efa_interfaces(row)
    expected = "AL2023_x86_64_NEURON" if row.vendor == "aws-neuron" else "AL2023_x86_64_NVIDIA"
    assert ami_type(row, pool(row)) == expected


@pytest.mark.parametrize(("instance_type", "arm"), [
    ("m6i.xlarge", False), ("c5.large", False), ("g4dn.xlarge", False), ("r5b.large", False), ("inf2.xlarge", False),
    ("m7g.xlarge", True), ("c7gn.large", True), ("m6gd.2xlarge", True), ("t4g.medium", True), ("a1.large", True),
    ("r8g.xlarge", True), ("is4gen.large", True)])
def test_system_pool_ami_follows_the_cpu_architecture(instance_type: str, arm: bool) -> None:
    assert system_ami_type(instance_type) == ("AL2023_ARM_64_STANDARD" if arm else "AL2023_x86_64_STANDARD")


def test_efa_interface_table_covers_known_types_only() -> None:
    for name in EFA_INTERFACES:
        row = catalog.find_instance("aws", name)
        assert row is not None and row.efa, name


taints = st.lists(st.builds(dict, key=st.sampled_from(["nvidia.com/gpu", "team", "dedicated"]),
                            value=st.sampled_from(["", "true", "research"]),
                            effect=st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"])), max_size=5)


@given(row=st.sampled_from(AWS_ROWS), extra=taints)
def test_taints_start_with_the_accelerator_taint_and_never_repeat_key_and_effect(row: catalog.GpuInstance, extra: list) -> None:
    result = node_taints(row, pool(row, taints=extra))
    first = result[0]
    assert (first.key, first.effect) == (("aws.amazon.com/neuron" if row.vendor == "aws-neuron" else "nvidia.com/gpu"), "NO_SCHEDULE")
    pairs = [(t.key, t.effect) for t in result]
    assert len(pairs) == len(set(pairs))
    assert {t.effect for t in result} <= {"NO_SCHEDULE", "PREFER_NO_SCHEDULE", "NO_EXECUTE"}


@pytest.mark.parametrize(("capacity", "compact", "efa"), list(itertools.product(
    [CapacityType.ON_DEMAND, CapacityType.SPOT, CapacityType.RESERVED, CapacityType.CAPACITY_BLOCK], [False, True], [False, True])))
def test_placement_groups_only_on_request_and_never_on_reserved_capacity(capacity: CapacityType, compact: bool, efa: bool) -> None:
    reservation = "cr-0123456789abcdef0" if capacity in (CapacityType.RESERVED, CapacityType.CAPACITY_BLOCK) else None
    spec = GpuPoolSpec(instance_type="p5.48xlarge", capacity=capacity, reservation=reservation, efa=efa,
                       placement=Placement.COMPACT if compact else Placement.NONE)
    assert placement_group(spec) == (compact and reservation is None)
    assert single_subnet(spec) == (efa or placement_group(spec) or reservation is not None)  # reserved capacity is in one zone


def test_too_few_zones_is_a_clear_deploy_time_error() -> None:
    assert _first_zones(["us-west-1a", "us-west-1c", "us-west-1d"], 2, "us-west-1") == ["us-west-1a", "us-west-1c"]
    with pytest.raises(pulumi.RunError, match=r"regions.us-west-1.network.zones: 3, but us-west-1 has 2 standard availability zones .*us-west-1a, us-west-1c"):
        _first_zones(["us-west-1a", "us-west-1c"], 3, "us-west-1")


@pytest.mark.parametrize("zones", [("us-east-1b", "us-east-1c"), ("us-east-1c", "us-east-1b")], ids=["b-then-c", "c-then-b"])
def test_lustre_goes_in_the_first_zone_when_pinned_pools_are_in_different_zones(zones: tuple[str, str]) -> None:
    """Pools pinned to two zones share none: Lustre goes in the first zone (subnet_ids[0]), not one of theirs."""
    pools = {f"p{i}": {"accelerator": "l4", "max_nodes": 1, "zones": [zone]} for i, zone in enumerate(zones)}
    data = platform_dict({"aws": {"regions": {"us-east-1": {"network": {"cidr": "10.9.0.0/16"}, "cluster": {}, "gpu_pools": pools}}}})
    spec = load_platform(data).clouds.aws.regions["us-east-1"]
    assert lustre_zone_index(spec, ["us-east-1a", "us-east-1b", "us-east-1c"]) == 0
    one_zone = load_platform(platform_dict({"aws": {"regions": {"us-east-1": {
        "network": {"cidr": "10.9.0.0/16"}, "cluster": {}, "gpu_pools": {"p": {**pools["p0"]}}}}}})).clouds.aws.regions["us-east-1"]
    assert lustre_zone_index(one_zone, ["us-east-1a", "us-east-1b", "us-east-1c"]) == ["us-east-1b", "us-east-1c"].index(zones[0]) + 1
