"""Whole-platform properties: protection outside dev, stable URNs, resource budget per region."""

from __future__ import annotations

from pathlib import Path

from helpers import assert_urns_match_snapshot

from aiinfra.plan.runtime import PlanResult

STATEFUL = {
    "gcp:kms/keyRing:KeyRing",
    "gcp:kms/cryptoKey:CryptoKey",
    "gcp:storage/bucket:Bucket",
    "gcp:lustre/instance:Instance",
    "gcp:logging/projectBucketConfig:ProjectBucketConfig",
    "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember",  # a key's grants unlock the data as much as the key
}
PROTECTED_ONLY = {"gcp:container/cluster:Cluster"}
"""Protected outside dev but deleted, not kept, when finally unprotected and removed."""
ENDPOINT_IP = ("gcp:compute/globalAddress:GlobalAddress", "prod-global-ip")
"""The global endpoint's anycast IP, which DNS points at: protected like a cluster (Lustre's internal range is not)."""
SNAPSHOT = Path(__file__).parent / "snapshots" / "prod_urns.txt"


def test_stateful_resources_are_protected_outside_dev(prod_plan: PlanResult, dev_plan: PlanResult) -> None:
    prod = [r for r in prod_plan.resources if r.type in STATEFUL]
    assert {r.type for r in prod} == STATEFUL
    for record in prod:
        assert record.protect and record.retainOnDelete, record.name
    protected_only = [r for r in prod_plan.resources if r.type in PROTECTED_ONLY] + [prod_plan.one(*ENDPOINT_IP)]
    assert {r.type for r in protected_only} == PROTECTED_ONLY | {ENDPOINT_IP[0]}
    assert all(r.protect and not r.retainOnDelete for r in protected_only)
    assert not [r for r in prod_plan.resources if r.protect and r not in protected_only and r.type not in STATEFUL]
    dev = [r for r in dev_plan.resources if r.type in STATEFUL]
    assert dev and not any(r.protect or r.retainOnDelete for r in dev)


def test_dev_is_small_and_scales_to_zero(dev_plan: PlanResult) -> None:
    gpu = dev_plan.one("gcp:container/nodePool:NodePool", "dev-us-central1-dev-pool").inputs
    assert (gpu["nodeConfig"]["spot"], gpu["autoscaling"]["totalMinNodeCount"], gpu["initialNodeCount"]) == (True, 0, 0)
    assert dev_plan.one("gcp:container/cluster:Cluster").inputs["nodeLocations"] == ["us-central1-a", "us-central1-b"]
    assert len(dev_plan.of_type("gcp:compute/routerNat:RouterNat")) == 1
    assert not dev_plan.of_type("gcp:compute/backendService:BackendService")
    assert 25 <= sum(r.custom for r in dev_plan.resources) <= 50


def test_a_full_prod_region_stays_within_the_resource_budget(prod_plan: PlanResult) -> None:
    region = [r for r in prod_plan.resources if r.name.startswith("prod-us-central1")]
    assert 40 <= len(region) <= 90, len(region)


def test_urns_match_the_snapshot(prod_plan: PlanResult) -> None:
    assert_urns_match_snapshot([r.urn for r in prod_plan.resources], SNAPSHOT)
