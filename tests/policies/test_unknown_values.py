"""Values unknown during preview: a rule either decides without them or says it can't run, never crashes and
never reports a violation it did not see. Stack rules still check every resource they can."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from policy_helpers import RULES, UNKNOWN, resource, run_resource, run_stack
from pulumi_policy.proxy import UnknownValueError

from aiinfra_policy.registry import Rule, type_matches

from aiinfra.plan.program import plan_stack
from aiinfra.plan.project import load_project

ROOT = Path(__file__).resolve().parents[2]
@cache
def samples() -> list[tuple[str, dict[str, Any]]]:
    """Prod resources of every type, one per distinct set of property paths (a security group with open ingress
    and one without are both here): real shapes from every cloud and the Kubernetes layer, in a fixed order."""
    found: dict[tuple[str, frozenset[tuple[str, ...]]], dict[str, Any]] = {}
    for record in plan_stack(load_project(ROOT), "prod").resources:
        if record.custom and not record.type.startswith("pulumi:"):
            found.setdefault((record.type, frozenset(paths(record.inputs))), record.inputs)
    return sorted(((type_, inputs) for (type_, _), inputs in found.items()), key=lambda s: (s[0], sorted(paths(s[1]))))


def paths(value: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every property path in `value` (two elements of each list)."""
    children = value.items() if isinstance(value, dict) else enumerate(value[:2]) if isinstance(value, list) else ()
    for key, child in children:
        yield (*prefix, str(key))
        yield from paths(child, (*prefix, str(key)))


def unknown_at(inputs: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    inputs = copy.deepcopy(inputs)
    node: Any = inputs
    for key in path[:-1]:
        node = node[int(key)] if isinstance(node, list) else node[key]
    node[int(path[-1]) if isinstance(node, list) else path[-1]] = UNKNOWN
    return inputs


def _findings(rule: Rule, type_: str, props: dict[str, Any]) -> list[str] | None:
    """What the rule reports on one resource; None when it says it can't run during preview."""
    try:
        if rule.stack:
            return [message for _, message in run_stack(rule.name, [resource(type_, props, "r")])]
        return run_resource(rule.name, type_, props)
    except UnknownValueError:  # the SDK turns this into its "can't run during preview" advisory
        return None


def test_an_unknown_value_anywhere_in_real_inputs_is_neither_a_crash_nor_a_finding() -> None:
    failures, clean = [], 0
    for type_, inputs in samples():
        for rule in RULES.values():
            if not rule.stack and not type_matches(rule.types, type_):
                continue
            passed = _findings(rule, type_, inputs) == []
            clean += passed
            for path in paths(inputs):
                where = f"{rule.name} on {type_} with {'.'.join(path)} unknown"
                try:
                    found = _findings(rule, type_, unknown_at(inputs, path))
                except Exception as err:  # noqa: BLE001 collected, so one run lists every failure
                    failures.append(f"{where}: {err!r}")
                    continue
                if found and passed:  # the known value passed: the unknown one can't be a violation
                    failures.append(f"{where}: reported {found[0]!r}")
    assert not failures, "\n".join(failures[:20])
    assert len({type_ for type_, _ in samples()}) > 60  # the sample covers the prod plan's types, not a handful
    assert clean > 300  # and most rule/resource pairs start from a passing resource


def _checked_past_unknown(rule: str, unknown: Any, known: Any, config: dict | None = None) -> list:
    """Run a stack rule with a resource whose value is unknown first; return what it reported before saying so."""
    found: list = []
    with pytest.raises(UnknownValueError):
        run_stack(rule, [unknown, known], config, found=found)
    return found


def test_an_unknown_region_is_not_reported_as_outside_the_allowed_ones() -> None:
    # e.g. `location=resource_group.location` of a group that takes its location from provider config
    pending = resource("azure-native:storage:StorageAccount", {"location": UNKNOWN}, "pending")
    elsewhere = resource("aws:s3/bucket:Bucket", {"region": "us-east-1"}, "elsewhere")
    found = _checked_past_unknown("data-residency", pending, elsewhere, {"allowedRegions": ["eu-west-1"]})
    assert found == [(elsewhere.urn, "region us-east-1 is outside the allowed regions eu-west-1")]


def test_unknown_tags_are_skipped_and_the_other_resources_still_checked() -> None:
    computed = resource("aws:ec2/vpc:Vpc", {"tags": UNKNOWN}, "computed")
    bare = resource("gcp:storage/bucket:Bucket", {"labels": {"team": "ml"}}, "bare")
    assert _checked_past_unknown("required-tags", computed, bare) == [(bare.urn, "missing tags: environment, cost-center")]


def test_a_data_zone_bucket_with_an_unknown_location_is_not_judged() -> None:
    pending = resource("gcp:storage/bucket:Bucket", {"labels": {"data-zone": "eu"}, "location": UNKNOWN}, "pending")
    misplaced = resource("gcp:storage/bucket:Bucket", {"labels": {"data-zone": "eu"}, "location": "US-CENTRAL1"}, "misplaced")
    found = _checked_past_unknown("data-zone-residency", pending, misplaced, {"dataZones": {"eu": ["europe-west4"]}})
    assert found == [(misplaced.urn, "data-zone eu data is in us-central1; allowed: europe-west4")]


def test_a_gke_pool_whose_autoscaling_is_unknown_cannot_be_capped() -> None:
    pool = {"nodeConfig": {"machineType": "a3-highgpu-8g", "guestAccelerators": [{"type": "nvidia-h100-80gb", "count": 8}]},
            "autoscaling": UNKNOWN}
    with pytest.raises(UnknownValueError):
        run_resource("gpu-cap-per-pool", "gcp:container/nodePool:NodePool", pool)


@pytest.mark.parametrize(("rule", "type_", "props"), [
    ("aws-security-group-no-open-admin-ingress", "aws:ec2/securityGroup:SecurityGroup",
     {"ingress": [{"protocol": "tcp", "fromPort": 22, "toPort": 22, "cidrBlocks": [UNKNOWN]}]}),
    ("azure-nsg-no-open-admin-ingress", "azure-native:network:NetworkSecurityGroup",
     {"securityRules": [{"direction": "Inbound", "access": "Allow", "sourceAddressPrefixes": [UNKNOWN],
                         "destinationPortRange": "22"}]}),
    ("gcp-firewall-no-open-admin-ingress", "gcp:compute/firewall:Firewall",
     {"direction": "INGRESS", "sourceRanges": ["0.0.0.0/0"], "allows": [{"protocol": "tcp", "ports": [UNKNOWN]}]}),
])
def test_an_unknown_source_or_port_of_admin_ingress_is_not_a_silent_pass(rule: str, type_: str, props: dict) -> None:
    with pytest.raises(UnknownValueError):
        run_resource(rule, type_, props)
