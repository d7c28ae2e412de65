"""Behaviour of gcp/gpu_pool, azure/gpu_pool, gcp/flow_logs and azure/flow_logs that a fifth hand mutation review found
no test pinning, as the clouds would receive it: a pool's own PreferNoSchedule taint in GKE's effect name; the AKS pool
settings AKS fixes at creation (the GPU driver among them) named for replacement; a reserved AKS pool that is not
registered until its capacity reservation group has been checked; the flow log bucket left unlocked; and the flow log
storage account letting Network Watcher in as a trusted Azure service."""

from __future__ import annotations

import copy
import pulumi
import pytest
from azure.conftest import PROD_AZURE, azure_platform
from azure.conftest import plan_platform as plan_azure_platform
from azure.test_reservations import BATCH, H200, ReservationGroupMocks
from gcp.support import COMPLIANCE, DEV_GCP, PROD_GCP, by_name, gcp_platform
from gcp.support import plan_platform as plan_gcp_platform

from aiinfra.plan.runtime import PlanResult, run_program
from components.compose import build_platform
from components.spec import load_platform

AGENT_POOL = "azure-native:containerservice:AgentPool"


# --- gcp/gpu_pool ----------------------------------------------------------------------------------------------------


def test_a_pools_prefer_no_schedule_taint_reaches_gke_as_prefer_no_schedule() -> None:
    """A soft taint only steers pods away; sent as NO_SCHEDULE it would keep every pod without the toleration off the
    pool, and GKE's node taints would disagree with the spec's."""
    gcp = copy.deepcopy(DEV_GCP)
    gcp["regions"]["us-central1"]["gpu_pools"]["dev"]["taints"] = [
        {"key": "team", "value": "research", "effect": "PreferNoSchedule"}]
    plan = plan_gcp_platform(gcp_platform(gcp, environment="dev"), stack="dev")
    assert by_name(plan, "dev-us-central1-dev-pool")["nodeConfig"]["taints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"},
        {"key": "team", "value": "research", "effect": "PREFER_NO_SCHEDULE"}]


# --- gcp/flow_logs ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gcp_plan() -> PlanResult:
    return plan_gcp_platform(gcp_platform(PROD_GCP, environment="prod", compliance=COMPLIANCE), stack="prod")


def test_the_flow_log_bucket_is_not_locked(gcp_plan: PlanResult) -> None:
    """Locking a Cloud Logging bucket cannot be undone: its retention could never be lowered nor the bucket deleted,
    so a stack could no longer change the spec's flow log retention or be destroyed."""
    for region in ("us-central1", "europe-west4"):
        assert by_name(gcp_plan, f"prod-{region}-flow-logs")["locked"] is False, region


# --- azure/gpu_pool --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def azure_plan() -> PlanResult:
    return plan_azure_platform(azure_platform(PROD_AZURE, environment="prod"), stack="prod")


def test_the_settings_aks_fixes_at_creation_replace_the_pool(azure_plan: PlanResult) -> None:
    """AKS refuses to change these on an existing agent pool and azure-native does not replace on them itself: a
    pool whose GPU driver, zones, disks, spot settings, reservation group or subnet change must be replaced, or `up`
    fails."""
    fixed = {"availabilityZones", "capacityReservationGroupID", "enableEncryptionAtHost", "enableNodePublicIP",
             "gpuProfile", "osDiskSizeGB", "osDiskType", "scaleSetEvictionPolicy", "scaleSetPriority", "spotMaxPrice",
             "vnetSubnetID"}
    pools = azure_plan.of_type(AGENT_POOL)
    assert pools
    for record in pools:
        assert fixed <= set(record.replaceOnChanges), record.name


class _RecordingGroupMocks(ReservationGroupMocks):
    """ReservationGroupMocks that also record the type of every resource registered."""

    def __init__(self, location: str, reservations: list[tuple[str, list[str]]]) -> None:
        super().__init__(location, reservations)
        self.registered: list[str] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        self.registered.append(args.typ)
        return super().new_resource(args)


def _plan_reserved(mocks: _RecordingGroupMocks) -> PlanResult:
    spec = load_platform(azure_platform({"regions": {"eastus2": {
        "network": {"cidr": "10.40.0.0/16", "transit_encryption": "monitor"}, "cluster": {},
        "gpu_pools": {"batch": BATCH}}}}))
    return run_program(lambda: build_platform(spec), project="ai-infra", stack="test", mocks_=mocks)


def test_a_reserved_pool_is_not_created_when_its_group_lacks_the_reservation() -> None:
    """The check of the capacity reservation group must come before the pool: an `up` that registers the pool anyway
    creates an AKS pool whose scale-ups fail for want of reserved capacity, and only then stops."""
    mocks = _RecordingGroupMocks("eastus2", [("Standard_ND96isr_H100_v5", ["1", "2"])])
    with pytest.raises(pulumi.RunError):
        _plan_reserved(mocks)
    assert AGENT_POOL not in mocks.registered


def test_a_reserved_pool_is_created_once_its_group_holds_the_reservation() -> None:
    """The counterpart: with the reservation in both zones the pool is registered, in the group."""
    mocks = _RecordingGroupMocks("eastus2", [(H200, ["1", "2"])])
    [pool] = _plan_reserved(mocks).of_type(AGENT_POOL)
    assert AGENT_POOL in mocks.registered
    assert pool.inputs["capacityReservationGroupID"].endswith("/capacityReservationGroups/crg-h200")


# --- azure/flow_logs -------------------------------------------------------------------------------------------------


def test_network_watcher_reaches_the_flow_log_account_as_a_trusted_service(azure_plan: PlanResult) -> None:
    """The account denies every network; Network Watcher writes flow logs as a trusted Microsoft service, so without
    the AzureServices bypass every write is refused and the VNet's flows are lost."""
    accounts = [r for r in azure_plan.of_type("azure-native:storage:StorageAccount")
                if r.name.endswith("-flowlogs-account")]
    assert accounts
    for account in accounts:
        assert account.inputs["networkRuleSet"] == {"defaultAction": "Deny", "bypass": "AzureServices"}, account.name

