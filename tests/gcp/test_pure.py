"""Pure GCP logic: names that must follow GCS/IAM/Lustre rules, lifecycle rules, CIDR layout, pool sizing,
TPU slice settings, load balancer annotations (property tests where the input space is large)."""

from __future__ import annotations

import json
import re
from ipaddress import IPv4Network

from hypothesis import given, settings
from hypothesis import strategies as st

from components import catalog
from components.gcp.flow_logs import sink_filter
from components.gcp.kms import rotation_period
from components.gcp.lifecycle import STORAGE_CLASSES, lifecycle_rules
from components.gcp.load_balancer import service_annotations, ssl_profile
from components.gcp.naming import bucket_name, lustre_filesystem, resource_id, service_account_id
from components.gcp.network import node_subnet
from components.gcp.tpu import tpu_node_pool_settings
from components.spec import BucketSpec, ComplianceProfile, TpuSliceSpec
from components.spec.gcp import initial_nodes_per_zone, lustre_range, tpu_node_pool_names, zone_region

label = st.from_regex(r"[a-z][a-z0-9-]{0,23}", fullmatch=True)
project = st.from_regex(r"[a-z][a-z0-9-]{4,28}[a-z0-9]", fullmatch=True)
region = st.from_regex(r"[a-z]{2,12}-[a-z]{4,12}[1-9]", fullmatch=True)
BUCKET = re.compile(r"^[a-z0-9][a-z0-9_-]{1,61}[a-z0-9]$")
ACCOUNT = re.compile(r"^[a-z][-a-z0-9]{4,28}[a-z0-9]$")
RFC1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


@settings(deadline=None)
@given(project, label, region, label)
def test_bucket_names_are_valid_gcs_names(p: str, env: str, r: str, b: str) -> None:
    name = bucket_name(p, env, r, b)
    assert BUCKET.match(name), name
    assert "google" not in name and not name.startswith("goog")


@settings(deadline=None)
@given(project, label, region, label, label)
def test_bucket_names_differ_when_any_part_differs(p: str, env: str, r: str, a: str, b: str) -> None:
    assert (bucket_name(p, env, r, a) == bucket_name(p, env, r, b)) == (a == b)


def test_bucket_name_with_google_in_the_project() -> None:
    name = bucket_name("google-ml-prod", "prod", "us-central1", "data")
    assert "google" not in name and BUCKET.match(name)


@settings(deadline=None)
@given(label, region, st.from_regex(r"[a-z][a-z0-9-]{0,40}", fullmatch=True))
def test_service_account_ids_fit_iam_rules(env: str, r: str, purpose: str) -> None:
    assert ACCOUNT.match(service_account_id(env, r, purpose))


def test_short_ids_stay_readable() -> None:
    assert service_account_id("prod", "us-central1", "gke-nodes") == "prod-us-central1-gke-nodes"
    assert resource_id("prod", "us-central1", "scratch") == "prod-us-central1-scratch"


@settings(deadline=None)
@given(st.lists(label, min_size=1, max_size=4), st.integers(min_value=12, max_value=100))
def test_resource_ids_fit_rfc1035_and_their_length(parts: list[str], max_length: int) -> None:
    name = resource_id(*parts, max_length=max_length)
    assert RFC1035.match(name) and len(name) <= max_length


@settings(deadline=None)
@given(label)
def test_lustre_filesystem_names_are_eight_letters_or_digits(name: str) -> None:
    assert re.fullmatch(r"[a-z0-9]{1,8}", lustre_filesystem(name))


tier_days = st.one_of(st.none(), st.integers(min_value=1, max_value=3000))


@settings(deadline=None)
@given(tier_days, tier_days, tier_days, tier_days, st.booleans(), st.booleans(), st.integers(min_value=1, max_value=365))
def test_lifecycle_rules_only_ever_move_objects_colder(warm, cold, archive, expire, autoclass, versioning, noncurrent) -> None:  # noqa: ANN001
    steps = [d for d in (warm, cold, archive, expire) if d is not None]
    if steps != sorted(set(steps)):
        return  # the spec rejects unordered tiers
    bucket = BucketSpec(tiering={"warm_after_days": warm, "cold_after_days": cold, "archive_after_days": archive,
                                 "expire_after_days": expire}, autoclass=autoclass, versioning=versioning,
                        noncurrent_expire_after_days=noncurrent)
    rules = lifecycle_rules(bucket)
    moves = [r for r in rules if r.action == "SetStorageClass"]
    if autoclass:
        assert not moves  # GCS refuses SetStorageClass rules with Autoclass
    else:
        assert [m.age_days for m in moves] == [d for d in (warm, cold, archive) if d is not None]
    for move in moves:
        target = STORAGE_CLASSES.index(move.storage_class)
        assert move.matches_storage_classes == STORAGE_CLASSES[:target]
    deletes = [r for r in rules if r.action == "Delete"]
    assert any(d.age_days == expire and d.with_state == "LIVE" for d in deletes) == (expire is not None)
    assert any(d.with_state == "ARCHIVED" and d.days_since_noncurrent == noncurrent for d in deletes) == versioning
    assert rules[-1].action == "AbortIncompleteMultipartUpload"


@settings(deadline=None)
@given(st.integers(min_value=16, max_value=22), st.integers(min_value=0, max_value=255))
def test_network_layout_keeps_node_subnet_and_lustre_range_apart(prefix: int, second: int) -> None:
    cidr = IPv4Network((f"10.{second}.0.0", prefix), strict=False)
    nodes, lustre = node_subnet(cidr), lustre_range(cidr)
    assert nodes.subnet_of(cidr) and lustre.subnet_of(cidr) and not nodes.overlaps(lustre)
    assert (nodes.prefixlen, lustre.prefixlen) == (prefix + 1, prefix + 2)


@settings(deadline=None)
@given(st.integers(min_value=0, max_value=1000), st.integers(min_value=1, max_value=6))
def test_initial_nodes_per_zone_meet_the_total_minimum(minimum: int, zones: int) -> None:
    per_zone = initial_nodes_per_zone(minimum, zones)
    if minimum == 0:
        assert per_zone == 0
    else:
        assert per_zone * zones >= minimum > (per_zone - 1) * zones


@settings(deadline=None)
@given(label, st.integers(min_value=1, max_value=64), st.integers(min_value=1, max_value=64))
def test_adding_slices_never_renames_a_node_pool(name: str, a: int, b: int) -> None:
    small, large = sorted((a, b))
    assert tpu_node_pool_names(name, large)[:small] == tpu_node_pool_names(name, small)


def test_every_catalog_slice_is_one_node_pool_of_whole_vms() -> None:
    for generation in catalog.tpu_generations():
        for topology in generation.topologies:
            spec = TpuSliceSpec(generation=generation.name, topology=topology)
            plan = catalog.resolve_tpu_slice(generation.name, topology)
            settings = tpu_node_pool_settings(spec, plan)
            assert plan.node_count * plan.chips_per_vm == plan.chips
            assert settings["autoscaling"].max_node_count == plan.node_count
            placement = settings.get("placement_policy")
            assert (placement is not None) == plan.multi_host
            if placement is not None:
                assert placement.tpu_topology == topology


def test_small_pure_helpers() -> None:
    assert rotation_period(90) == "7776000s"
    assert zone_region("us-central1-a") == "us-central1" and zone_region("us-central1") is None
    assert ssl_profile([ComplianceProfile.BASELINE, ComplianceProfile.SOC2]) == "MODERN"
    assert ssl_profile([ComplianceProfile.BASELINE, ComplianceProfile.PCI]) == "RESTRICTED"
    assert sink_filter("n") == ('resource.type="gce_subnetwork" AND resource.labels.subnetwork_name="n" AND '
                                '(log_id("compute.googleapis.com/vpc_flows") OR log_id("compute.googleapis.com/firewall"))')
    annotations = service_annotations(8080, "neg", "be")
    assert json.loads(annotations["cloud.google.com/neg"]) == {"exposed_ports": {"8080": {"name": "neg"}}}
    assert json.loads(annotations["controller.autoneg.dev/neg"])["backend_services"]["8080"][0]["name"] == "be"
