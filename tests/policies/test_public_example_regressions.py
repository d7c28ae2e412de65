"""Rule behaviour found by planning public example programs (docs/public-examples.md); props written here, not copied."""

from __future__ import annotations

import pytest
from policy_helpers import run_resource

FIREWALL = "gcp:compute/firewall:Firewall"
STORAGE = "azure-native:storage:StorageAccount"
SSH = [{"protocol": "tcp", "ports": ["22", "80"]}]


def test_firewall_without_any_source_is_open_to_the_internet() -> None:
    # An ingress rule with no sourceRanges, sourceTags or sourceServiceAccounts applies to every source address.
    found = run_resource("gcp-firewall-no-open-admin-ingress", FIREWALL, {"network": "net", "allows": SSH})
    assert found == ["ingress from 0.0.0.0/0 to port 22"]


@pytest.mark.parametrize("source", [{"sourceTags": ["bastion"]}, {"sourceServiceAccounts": ["jump@p.iam.gserviceaccount.com"]},
                                    {"sourceRanges": ["35.235.240.0/20"]}])
def test_firewall_with_a_named_source_passes(source: dict) -> None:
    assert run_resource("gcp-firewall-no-open-admin-ingress", FIREWALL, {"network": "net", "allows": SSH, **source}) == []


def test_egress_firewall_without_source_is_not_ingress() -> None:
    assert run_resource("gcp-firewall-no-open-admin-ingress", FIREWALL, {"direction": "EGRESS", "allows": SSH}) == []


@pytest.mark.parametrize("type_", ["gcp:cloudfunctions/functionIamMember:FunctionIamMember",
                                   "gcp:cloudfunctionsv2/functionIamMember:FunctionIamMember",
                                   "gcp:cloudrun/iamMember:IamMember", "gcp:cloudrunv2/serviceIamMember:ServiceIamMember"])
def test_public_invoker_on_functions_and_cloud_run_is_reported(type_: str) -> None:
    found = run_resource("gcp-no-public-iam-members", type_, {"member": "allUsers", "role": "roles/run.invoker"})
    assert found == ["grants roles/run.invoker to allUsers"]
    assert run_resource("gcp-no-public-iam-members", type_, {"member": "serviceAccount:ci@p.iam.gserviceaccount.com",
                                                             "role": "roles/run.invoker"}) == []


def test_public_invoker_binding_is_reported() -> None:
    found = run_resource("gcp-no-public-iam-members", "gcp:cloudrunv2/serviceIamBinding:ServiceIamBinding",
                         {"members": ["user:a@b.c", "allAuthenticatedUsers"], "role": "roles/run.invoker"})
    assert found == ["grants roles/run.invoker to allAuthenticatedUsers"]


def test_storage_account_without_allow_blob_public_access_is_not_public() -> None:
    # Unset allowBlobPublicAccess is interpreted as false by the storage API the SDK uses: no anonymous-access finding.
    props = {"enableHttpsTrafficOnly": True, "minimumTlsVersion": "TLS1_2"}
    assert run_resource("azure-storage-secure-transfer", STORAGE, props) == []
    assert run_resource("azure-storage-secure-transfer", STORAGE, {**props, "allowBlobPublicAccess": True}) == [
        "anonymous public blob access is allowed"]


def test_storage_account_tls_default_is_still_reported() -> None:
    # minimumTlsVersion's documented default is TLS 1.0, so leaving it unset stays a finding.
    assert run_resource("azure-storage-secure-transfer", STORAGE, {}) == ["minimum TLS version is TLS1_0"]
