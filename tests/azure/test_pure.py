"""Pure Azure logic, property-tested: global names, subnet layout, lifecycle math, AKS mappings."""

from __future__ import annotations

import re
from ipaddress import IPv4Network

from hypothesis import given, settings
from hypothesis import strategies as st

from components import catalog
from components.azure.cluster import UPGRADE_CHANNELS
from components.azure.gpu_pool import SPOT_TAINT, capacity_settings, node_labels, node_taints
from components.azure.lifecycle import account_sku, blob_lifecycle
from components.azure.naming import AUTONAME_SUFFIX, alphanumeric_name, fitted_name, global_name
from components.azure.etcd_key import ETCD_VAULT_KIND
from components.azure.network import APISERVER_SUBNET, inference_frontend_ip, subnet_layout
from components.spec import BucketSpec, GpuPoolSpec, Tiering, TransitEncryption, UpgradeChannel
from components.spec.azure import (
    AKS_APISERVER_PREFIX,
    LUSTRE_SLOTS,
    aks_apiserver_subnet,
    aks_mig_profile,
    aks_mig_profiles,
    aks_pool_name,
    lustre_subnet_prefix,
    lustre_subnets,
    transit_enforcement,
)

words = st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=0, max_size=40)
uuids = st.uuids().map(str)


@given(kind=st.sampled_from(["st", "kv", "fl", "inf"]), parts=st.lists(words, max_size=4), unique=uuids,
       max_length=st.integers(min_value=12, max_value=63))
def test_global_names_fit_azure_rules(kind: str, parts: list[str], unique: str, max_length: int) -> None:
    name = global_name(kind, parts, unique, max_length=max_length)
    assert re.fullmatch(r"[a-z][a-z0-9]{2,}", name)
    assert len(kind) + 8 <= len(name) <= max_length
    assert name.startswith(kind)
    assert name == global_name(kind, parts, unique, max_length=max_length)  # stable across runs


@given(parts=st.lists(words, min_size=1, max_size=3), unique=uuids, other=uuids)
def test_global_names_differ_per_subscription_and_per_part(parts: list[str], unique: str, other: str) -> None:
    if unique != other:
        assert global_name("st", parts, unique) != global_name("st", parts, other)
    # parts that only differ beyond the truncation point still give different names
    long = ["x" * 30]
    assert global_name("st", [*long, "a"], unique) != global_name("st", [*long, "b"], unique)


@given(parts=st.lists(st.from_regex(r"[a-z0-9-]{1,20}", fullmatch=True), min_size=1, max_size=3))
def test_alphanumeric_names_start_with_a_letter(parts: list[str]) -> None:
    name = alphanumeric_name(*parts)
    assert re.fullmatch(r"[a-z][a-z0-9]*", name)


@given(logical=st.from_regex(r"[a-z][a-z0-9-]{0,90}[a-z0-9]", fullmatch=True), max_length=st.integers(min_value=24, max_value=90))
def test_a_fitted_name_is_the_auto_name_while_it_fits_else_a_short_stable_one(logical: str, max_length: int) -> None:
    name = fitted_name(logical, max_length)
    if len(logical) + AUTONAME_SUFFIX <= max_length:
        assert name is None  # azure-native's auto-name (logical + 8 random hex) fits: it stays, nothing is replaced
        return
    assert name is not None and len(name) <= max_length and re.fullmatch(r"[a-z][a-z0-9-]*[a-z0-9]", name)
    assert name == fitted_name(logical, max_length)  # stable across runs
    assert fitted_name(logical + "x", max_length) != name  # names that differ only past the cut stay distinct


networks = st.builds(
    lambda octet, prefix: IPv4Network(f"10.{octet}.0.0/{prefix}"),
    st.integers(min_value=0, max_value=255), st.integers(min_value=16, max_value=22))


@given(cidr=networks, count=st.integers(min_value=0, max_value=LUSTRE_SLOTS), apiserver=st.booleans())
def test_subnet_layout_is_disjoint_and_inside_the_network(cidr: IPv4Network, count: int, apiserver: bool) -> None:
    names = [f"fs{i}" for i in range(count)]
    layout = subnet_layout(cidr, names, apiserver=apiserver)
    assert set(layout) == {"nodes", "endpoints", "lb", *(f"lustre-{n}" for n in names), *([APISERVER_SUBNET] if apiserver else [])}
    blocks = list(layout.values())
    assert all(b.subnet_of(cidr) for b in blocks)
    assert not any(a.overlaps(b) for i, a in enumerate(blocks) for b in blocks[i + 1:])
    # adding a file system never moves the others (a moved subnet would replace the file system)
    assert subnet_layout(cidr, names[:-1], apiserver=apiserver).items() <= layout.items()
    ip = inference_frontend_ip(cidr)
    assert ip in layout["lb"] and int(ip) - int(layout["lb"].network_address) >= 4  # clear of Azure's reserved addresses


@given(cidr=networks, count=st.integers(min_value=0, max_value=LUSTRE_SLOTS))
def test_the_apiserver_subnet_is_a_fixed_28_apart_from_every_other_subnet(cidr: IPv4Network, count: int) -> None:
    names = [f"fs{i}" for i in range(count)]
    layout = subnet_layout(cidr, names, apiserver=True)
    apiserver = layout.pop(APISERVER_SUBNET)
    # AKS's minimum (/28), created last, and in the same place whatever the Lustre count (a moved delegated subnet
    # would move the API server)
    assert apiserver.prefixlen == AKS_APISERVER_PREFIX and apiserver == aks_apiserver_subnet(cidr)
    assert list(subnet_layout(cidr, names, apiserver=True))[-1] == APISERVER_SUBNET
    assert apiserver.subnet_of(cidr) and not any(apiserver.overlaps(b) for b in layout.values())
    # nor does it overlap a Lustre slot that isn't used yet, or any subnet of the layout without it
    assert not any(apiserver.overlaps(slot) for slot in lustre_subnets(cidr))
    assert subnet_layout(cidr, names) == layout


@given(cidr=networks)
def test_a_file_system_beyond_the_lustre_slots_is_refused(cidr: IPv4Network) -> None:
    names = [f"fs{i}" for i in range(LUSTRE_SLOTS + 1)]
    try:
        subnet_layout(cidr, names, apiserver=True)
    except ValueError as error:
        assert str(error) == (f"8 Lustre file systems need 8 subnets; network {cidr} has 7 Lustre slots; "
                              "allowed: at most 7 file systems per region")
    else:
        raise AssertionError("8 file systems were laid out")


@given(cidr=networks)
def test_lustre_slots_are_in_the_third_quarter(cidr: IPv4Network) -> None:
    slots = lustre_subnets(cidr)
    third = list(cidr.subnets(prefixlen_diff=2))[2]
    assert len(slots) == LUSTRE_SLOTS == 7 and all(s.subnet_of(third) and s.prefixlen == cidr.prefixlen + 5 for s in slots)
    # the eighth block of the quarter is the API server's, and the Lustre slots keep their places
    assert aks_apiserver_subnet(cidr).subnet_of(list(third.subnets(prefixlen_diff=3))[7])
    assert slots == list(third.subnets(prefixlen_diff=3))[:7]


@given(environment=st.from_regex(r"[a-z][a-z0-9-]{0,30}", fullmatch=True), region=st.from_regex(r"[a-z0-9]{1,30}", fullmatch=True),
       unique=uuids)
def test_the_etcd_vault_name_fits_key_vault_whatever_the_environment_and_region(environment: str, region: str, unique: str) -> None:
    # Key Vault names: 3-24 letters, digits and hyphens, starting with a letter, ending with a letter or digit
    name = global_name(ETCD_VAULT_KIND, (environment, region), unique)
    assert re.fullmatch(r"[a-z][a-z0-9]{2,23}", name) and name.startswith("kvetcd")


@given(small=st.integers(min_value=1, max_value=10**6), extra=st.integers(min_value=0, max_value=10**6))
def test_bigger_file_systems_never_need_smaller_subnets(small: int, extra: int) -> None:
    assert lustre_subnet_prefix(small + extra) <= lustre_subnet_prefix(small)
    assert lustre_subnet_prefix(16 * 1024) == 27 and lustre_subnet_prefix(400 * 1024) == 23


days = st.one_of(st.none(), st.integers(min_value=1, max_value=3000))


@given(warm=days, cold=days, archive=days, expire=days, versioning=st.booleans(), noncurrent=st.integers(min_value=1, max_value=365))
def test_lifecycle_actions_keep_the_spec_order(warm: int | None, cold: int | None, archive: int | None, expire: int | None,
                                               versioning: bool, noncurrent: int) -> None:
    steps = [d for d in (warm, cold, archive, expire) if d is not None]
    if steps != sorted(set(steps)):
        return  # the spec rejects unordered thresholds
    bucket = BucketSpec(tiering=Tiering(warm_after_days=warm, cold_after_days=cold, archive_after_days=archive, expire_after_days=expire),
                        versioning=versioning, noncurrent_expire_after_days=noncurrent)
    plan = blob_lifecycle(bucket)
    actions = plan.base_blob_actions
    assert list(actions.values()) == steps
    assert list(actions) == [a for a, d in zip(("tier_to_cool", "tier_to_cold", "tier_to_archive", "delete"), (warm, cold, archive, expire)) if d is not None]
    assert plan.delete_versions == (noncurrent if versioning else None)
    # Archive needs locally redundant storage; everything else stays zone-redundant
    assert account_sku(bucket) == ("Standard_LRS" if archive is not None else "Standard_ZRS")


@given(name=st.from_regex(r"[a-z][a-z0-9-]{0,23}", fullmatch=True))
def test_aks_pool_names_fit_aks_rules(name: str) -> None:
    pool = aks_pool_name(name)
    assert re.fullmatch(r"[a-z][a-z0-9]{0,11}", pool)


def test_every_catalog_mig_profile_maps_to_an_aks_gpu_instance_profile() -> None:
    allowed = {"MIG1g", "MIG2g", "MIG3g", "MIG4g", "MIG7g"}
    rows = [r for r in catalog.instance_types("azure") if r.mig_profiles]
    assert rows
    for row in rows:
        on_aks = aks_mig_profiles(row.mig_profiles)
        assert {aks_mig_profile(p) for p in on_aks} == {aks_mig_profile(p) for p in row.mig_profiles} <= allowed
        assert len(on_aks) == len({aks_mig_profile(p) for p in on_aks})  # one partition per compute size
    assert aks_mig_profiles(("1g.10gb", "1g.20gb", "2g.20gb")) == ["1g.10gb", "2g.20gb"]


@settings(max_examples=50)
@given(row=st.sampled_from(catalog.instance_types("azure")), capacity=st.sampled_from(["on_demand", "spot"]),
       extra=st.lists(st.sampled_from(["team=a", "nvidia.com/gpu=true"]), max_size=2))
def test_gpu_pools_always_carry_the_accelerator_taint(row: catalog.GpuInstance, capacity: str, extra: list[str]) -> None:
    taints = [{"key": t.split("=")[0], "value": t.split("=")[1], "effect": "NoSchedule"} for t in extra]
    pool = GpuPoolSpec(instance_type=row.instance_type, capacity=capacity, taints=taints)
    result = node_taints(pool, row)
    assert result[0] == "nvidia.com/gpu=true:NoSchedule"
    assert len(result) == len(set(result))
    assert (SPOT_TAINT in result) == (capacity == "spot")
    settings_ = capacity_settings(pool)
    if capacity == "spot":
        assert settings_ == {"scale_set_priority": "Spot", "scale_set_eviction_policy": "Delete", "spot_max_price": -1}
    else:
        assert settings_ == {"scale_set_priority": "Regular"}
    labels = node_labels("p", pool, row)
    assert labels["ai-infra/accelerator"] == row.accelerator and labels["ai-infra/capacity"] == capacity


def test_enum_mappings_cover_every_spec_value() -> None:
    assert set(UPGRADE_CHANNELS) == set(UpgradeChannel)
    assert set(UPGRADE_CHANNELS.values()) <= {"rapid", "stable", "patch", "node-image", "none"}
    assert {transit_enforcement(m) for m in TransitEncryption} == {"DropUnencrypted", "AllowUnencrypted"}
    assert transit_enforcement(TransitEncryption.ENFORCE) == "DropUnencrypted"
