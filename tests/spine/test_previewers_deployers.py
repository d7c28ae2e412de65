"""A pull-request preview runs the program as the preview identity (`clouds.<cloud>.previewers`): nothing the plan grants
may follow the running identity, or the preview would show cluster-admin moving to the previewer (and a `pulumi up` of
that plan would grant it). The spec requires explicit deployers with previewers; the plan run "as" the previewer (the
planner's caller-identity placeholders answered with the preview identity) grants it its previewer access only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import stack_platform

from aiinfra.plan import runtime
from aiinfra.plan.program import plan_stack
from aiinfra.plan.project import load_project
from aiinfra.plan.runtime import PlanResult
from components.spec import SpecError, load_platform

ROOT = Path(__file__).resolve().parents[2]
ACCOUNT = "123456789012"
AWS_PREVIEWER = f"arn:aws:iam::{ACCOUNT}:role/ai-infra-ci-preview"
AWS_DEPLOYER = f"arn:aws:iam::{ACCOUNT}:role/ai-infra-deploy-prod"
AZURE_PREVIEWER = "7d1f0c2e-5b3a-4e8f-9a6d-2c4b8e0f1a37"
AZURE_DEPLOYER = "3b9e6a1d-8c2f-4d7a-b5e0-9f1c2a4d6e83"
GCP_PREVIEWER = "serviceAccount:ci-preview@acme-ml-prod.iam.gserviceaccount.com"
ENTRY = "aws:eks/accessEntry:AccessEntry"
ASSOCIATION = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
AKS_CLUSTER_USER = "/roleDefinitions/4abbcc35-e782-43d8-92c5-2d3f1bd2253f"


def _issues(config: dict[str, Any]) -> dict[str, str]:
    try:
        load_platform(config)
    except SpecError as err:
        return dict(err.issues)
    return {}


def test_prod_names_its_deployers() -> None:
    clouds = stack_platform("prod")["clouds"]
    assert clouds["aws"]["deployers"] == [AWS_DEPLOYER] and clouds["aws"]["previewers"] == [AWS_PREVIEWER]
    assert clouds["azure"]["deployer_object_id"] == AZURE_DEPLOYER and clouds["azure"]["previewers"] == [AZURE_PREVIEWER]
    assert _issues(stack_platform("prod")) == {}


def test_aws_previewers_need_explicit_deployers() -> None:
    config = stack_platform("prod")
    del config["clouds"]["aws"]["deployers"]
    assert _issues(config) == {"platform.clouds.aws.deployers": (
        f"not set, while previewers lists {AWS_PREVIEWER}: the preview runs the program as a previewer; without "
        "deployers the running role would be granted cluster-admin (the preview would move the deployer's EKS access "
        "entry to the previewer); allowed: the IAM role ARNs that run `pulumi up` (for example "
        "[arn:aws:iam::<account>:role/<deploy role>]), or [] to leave cluster-admin to each cluster's admins")}
    config["clouds"]["aws"]["deployers"] = []  # explicit: each cluster's admins only (eu-west-1 has none: refused there)
    assert list(_issues(config)) == ["platform.clouds.aws.deployers"]
    assert "deployers is empty" in _issues(config)["platform.clouds.aws.deployers"]
    del config["clouds"]["aws"]["deployers"], config["clouds"]["aws"]["previewers"]
    assert _issues(config) == {}  # without previewers the running role stays the default


def test_azure_previewers_need_a_deployer_that_is_not_the_running_identity() -> None:
    config = stack_platform("prod")
    del config["clouds"]["azure"]["deployer_object_id"]
    assert _issues(config) == {"platform.clouds.azure.deployer_object_id": (
        f"not set, while previewers lists {AZURE_PREVIEWER} and deployer is 'service_principal': the preview runs the "
        "program as a previewer; without deployer_object_id the running principal would be granted cluster-admin (the "
        "preview would re-point each cluster's deployer role assignment to the previewer); allowed: the object ID of "
        "the principal that runs `pulumi up` (`az ad sp show --id <AZURE_CLIENT_ID> --query id -o tsv`), or deployer "
        "'admin_group'")}
    config["clouds"]["azure"]["deployer"] = "user"
    assert "and deployer is 'user'" in _issues(config)["platform.clouds.azure.deployer_object_id"]
    group = "0f0e0d0c-0b0a-4908-8706-050403020100"
    config["clouds"]["azure"].update(deployer="admin_group", admin_group_object_ids=[group])
    assert _issues(config) == {}  # no role assignment at all: nothing can follow the running identity


def test_azure_deployer_object_id_needs_a_role_assignment_and_is_no_previewer() -> None:
    config = stack_platform("prod")
    config["clouds"]["azure"].update(deployer="admin_group", admin_group_object_ids=["0f0e0d0c-0b0a-4908-8706-050403020100"])
    assert _issues(config) == {"platform.clouds.azure.deployer_object_id": (
        f"'{AZURE_DEPLOYER}' is given, but deployer 'admin_group' makes no role assignment (the deployer reaches the "
        "clusters through an admin group); allowed: remove deployer_object_id, or deployer service_principal or user")}
    config = stack_platform("prod")
    config["clouds"]["azure"]["previewers"] = [AZURE_DEPLOYER]
    assert _issues(config) == {"platform.clouds.azure.previewers[0]": (
        f"'{AZURE_DEPLOYER}' is also deployer_object_id; a previewer reads, the deployer gets cluster-admin: give the "
        "preview its own service principal")}


def _plan_as(aws_session: str | None, azure_object_id: str | None) -> PlanResult:
    """The prod plan with the caller-identity lookups answering as the given identities (None: the planner's own)."""
    answer = runtime.PlanMocks.call

    def as_caller(self, args):  # type: ignore[no-untyped-def]
        result = answer(self, args)
        if aws_session and args.token == "aws:index/getCallerIdentity:getCallerIdentity":
            result = {**result, "arn": aws_session}
        if azure_object_id and args.token == "azure-native:authorization:getClientConfig":
            result = {**result, "objectId": azure_object_id}
        return result

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runtime.PlanMocks, "call", as_caller)
        return plan_stack(load_project(ROOT), "prod")


@pytest.fixture(scope="module")
def as_previewer() -> PlanResult:
    return _plan_as(f"arn:aws:sts::{ACCOUNT}:assumed-role/ai-infra-ci-preview/GitHubActions", AZURE_PREVIEWER)


@pytest.fixture(scope="module")
def as_deployer() -> PlanResult:
    return _plan_as(f"arn:aws:sts::{ACCOUNT}:assumed-role/ai-infra-deploy-prod/GitHubActions", AZURE_DEPLOYER)


def test_the_eks_previewer_gets_its_group_entry_only(as_previewer: PlanResult) -> None:
    entries = [r for r in as_previewer.of_type(ENTRY) if r.inputs["principalArn"] == AWS_PREVIEWER]
    assert sorted(r.name for r in entries) and all("-previewer-" in r.name for r in entries) and len(entries) == 3
    assert all(r.inputs["kubernetesGroups"] == ["ai-infra-previewers"] for r in entries)
    associations = as_previewer.of_type(ASSOCIATION)
    assert {r.inputs["principalArn"] for r in associations} == {AWS_DEPLOYER, f"arn:aws:iam::{ACCOUNT}:role/platform-admins"}
    admins = {r.inputs["principalArn"] for r in as_previewer.of_type(ENTRY) if "-admin-" in r.name}
    assert AWS_PREVIEWER not in admins and AWS_DEPLOYER in admins


def test_the_aks_previewer_gets_the_cluster_user_role_only(as_previewer: PlanResult) -> None:
    grants = [r for r in as_previewer.of_type(ROLE_ASSIGNMENT) if r.inputs["principalId"] == AZURE_PREVIEWER]
    assert sorted(r.name.split("-aks-previewer-")[0] for r in grants) == ["prod-eastus2", "prod-westeurope"]
    assert all(r.inputs["roleDefinitionId"].endswith(AKS_CLUSTER_USER) for r in grants)
    deployer = [r for r in as_previewer.of_type(ROLE_ASSIGNMENT) if r.name.endswith("-aks-deployer-admin")]
    assert len(deployer) == 2 and all(r.inputs["principalId"] == AZURE_DEPLOYER for r in deployer)


def test_the_gcp_previewer_gets_the_cluster_viewer_role_only(as_previewer: PlanResult) -> None:
    """GKE grants the deployer nothing: it creates the clusters with its own project role, so nothing follows the caller."""
    grants = [r for r in as_previewer.resources if r.inputs.get("member") == GCP_PREVIEWER]
    assert [(r.type, r.inputs["role"]) for r in grants] == [("gcp:projects/iAMMember:IAMMember", "roles/container.clusterViewer")]


def _inputs(plan: PlanResult) -> dict[str, str]:
    return {r.urn: json.dumps(r.inputs, sort_keys=True, default=str) for r in plan.resources}


def test_the_plan_is_the_same_whoever_runs_it(as_previewer: PlanResult, as_deployer: PlanResult) -> None:
    """The preview of an unchanged program shows no change: no URN and no input depends on the running identity."""
    previewed, deployed = _inputs(as_previewer), _inputs(as_deployer)
    assert set(previewed) == set(deployed)
    assert [urn for urn in previewed if previewed[urn] != deployed[urn]] == []
