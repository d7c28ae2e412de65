"""The bootstrap program plans offline: encrypted, versioned, private state storage and the login URLs."""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml
from helpers import script_module

from aiinfra.cli import main
from aiinfra.plan import program
from aiinfra.plan.invoke_values import PLACEHOLDER_UUID
from aiinfra.plan.project import load_project
from aiinfra.plan.runtime import PlanMocks, PlanResult, ResourceRecord, run_program

BOOTSTRAP = Path(__file__).resolve().parents[2] / "bootstrap"
NS = "ai-infra-bootstrap"
EXAMPLE = yaml.safe_load((BOOTSTRAP / "Pulumi.example.yaml").read_text())["config"]
KEY_VERSION = "0a1b2c3d4e5f60718293a4b5c6d7e8f9"
KEY_VAULT_CRYPTO_USER = "12338af0-0e69-4776-bea7-57ae8d297424"
STORAGE_BLOB_DATA_CONTRIBUTOR = "ba92f5b4-2d11-453d-a403-e96b0029c9fe"
STORAGE_BLOB_DATA_READER = "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1"
KEY_VAULT_CRYPTO_SERVICE_ENCRYPTION_USER = "e147488a-f6f5-4113-8e2d-b22465e65bf6"
ADMIN_A, ADMIN_B = "3f2504e0-4f89-41d3-9a0c-0305e82c3301", "7c9e6679-7425-40de-944b-e07fc1f90ae7"
READER = "9b2e8d4c-1f3a-4c5e-8a7b-6d0e2f4a1c3b"


class CloudAnswers(PlanMocks):
    """Besides the echoed inputs, what Azure returns for a new Key Vault key (its versioned URI, which only the
    service knows); records every resource the program registered."""

    def __init__(self) -> None:
        super().__init__()
        self.registered: list[tuple[str, str]] = []

    def answer(self, type_: str, name: str, outputs: dict[str, Any]) -> tuple[str, dict]:
        self.registered.append((type_, name))
        if type_ == "azure-native:keyvault:Key":
            uri = f"https://kvacmemlstate.vault.azure.net/keys/{outputs['keyName']}"
            outputs = {**outputs, "keyUri": uri, "keyUriWithVersion": f"{uri}/{KEY_VERSION}"}
        return super().answer(type_, name, outputs)


@pytest.fixture
def bootstrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """bootstrap(**config) -> (PlanResult, CloudAnswers): the example stack with `config` overriding its
    ai-infra-bootstrap:* keys (None removes one), planned as `aiinfra plan` plans it. `bootstrap.answers` keeps the
    last plan's CloudAnswers, also when the program failed."""

    def run(**overrides: Any) -> tuple[PlanResult, CloudAnswers]:
        config = {**EXAMPLE, **{f"{NS}:{k}": v for k, v in overrides.items()}}
        (tmp_path / "Pulumi.test.yaml").write_text(yaml.safe_dump({"config": {k: v for k, v in config.items() if v is not None}}))
        answers = run.answers = CloudAnswers()
        monkeypatch.setattr(program, "run_program", functools.partial(run_program, mocks_=answers))
        project = dataclasses.replace(load_project(BOOTSTRAP), stack_config_dir=tmp_path)
        return program.plan_stack(project, "test"), answers

    return run


def custom(result: PlanResult) -> list[ResourceRecord]:
    """The cloud resources (custom, not the default providers the engine adds)."""
    return [r for r in result.resources if r.custom and not r.type.startswith("pulumi:providers:")]


def urn(result: PlanResult, name: str) -> str:
    [record] = [r for r in result.resources if r.name == name]
    return record.urn


def test_bootstrap_creates_protected_encrypted_state_and_prints_logins(tmp_path: Path) -> None:
    out = tmp_path / "boot.json"
    assert main(["plan", "--program", str(BOOTSTRAP), "--stack", "example", "--json", str(out), "-q"]) == 0
    document = json.loads(out.read_text())
    by_type: dict[str, list[dict]] = {}
    for r in document["resources"]:
        by_type.setdefault(r["type"], []).append(r)
    pab = by_type["aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"][0]["inputs"]
    assert all(pab[k] is True for k in ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"))
    sse = by_type["aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"][0]["inputs"]["rules"][0]
    assert sse["applyServerSideEncryptionByDefault"]["sseAlgorithm"] == "aws:kms" and sse["bucketKeyEnabled"] is True
    assert by_type["aws:kms/key:Key"][0]["inputs"]["enableKeyRotation"] is True
    gcs = by_type["gcp:storage/bucket:Bucket"][0]["inputs"]
    assert gcs["publicAccessPrevention"] == "enforced" and gcs["versioning"]["enabled"] is True and gcs["encryption"]["defaultKmsKeyName"]
    account = by_type["azure-native:storage:StorageAccount"][0]["inputs"]
    assert account["allowSharedKeyAccess"] is False and account["minimumTlsVersion"] == "TLS1_2"
    assert account["encryption"]["keySource"] == "Microsoft.Keyvault"
    assert by_type["azure-native:keyvault:Vault"][0]["inputs"]["properties"]["enablePurgeProtection"] is True
    for kind in ("aws:s3/bucket:Bucket", "aws:kms/key:Key", "gcp:storage/bucket:Bucket", "azure-native:storage:StorageAccount"):
        assert all(r["protect"] and r["retainOnDelete"] for r in by_type[kind]), kind
    outputs = document["outputs"]
    assert outputs["aws_login"] == "s3://acme-ml-pulumi-state?region=us-east-1&awssdk=v2"
    assert outputs["aws_secrets_provider"] == "awskms://alias/acme-ml-pulumi?region=us-east-1"
    assert outputs["azure_login"] == "azblob://pulumi-state?storage_account=acmemlstate"
    assert outputs["gcp_login"].startswith("gs://acme-ml-pulumi-state-")
    assert not [v for v in document["policy"]["violations"] if v["enforcementLevel"] == "mandatory"]


EXPECTED_TYPES = {
    "aws": {"aws:kms/key:Key", "aws:kms/alias:Alias", "aws:s3/bucket:Bucket",
            "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", "aws:s3/bucketVersioning:BucketVersioning",
            "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
            "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration", "aws:s3/bucketPolicy:BucketPolicy"},
    "gcp": {"gcp:projects/service:Service", "gcp:kms/keyRing:KeyRing", "gcp:kms/cryptoKey:CryptoKey",
            "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember", "gcp:storage/bucket:Bucket"},
    "azure": {"azure-native:resources:ResourceGroup", "azure-native:keyvault:Vault", "azure-native:keyvault:Key",
              "azure-native:managedidentity:UserAssignedIdentity", "azure-native:authorization:RoleAssignment",
              "azure-native:storage:StorageAccount", "azure-native:storage:BlobServiceProperties",
              "azure-native:storage:BlobContainer", "azure-native:authorization:ManagementLockByScope"},
}


@pytest.mark.parametrize("cloud", sorted(EXPECTED_TYPES))
def test_every_resource_of_each_cloud_is_protected(bootstrap, cloud: str) -> None:
    result, _ = bootstrap(clouds=[cloud])
    resources = custom(result)
    assert {r.type for r in resources} == EXPECTED_TYPES[cloud]
    assert [r.name for r in resources if not r.protect] == []
    # Retained too, except the admins' and readers' grants: once unprotected, removing a principal must revoke its access.
    grants = [r.name for r in resources if r.name.startswith(("state-admin-", "state-reader-"))]
    assert [r.name for r in resources if not r.retainOnDelete] == grants
    assert len(grants) == (6 if cloud == "azure" else 0)


def test_aws_bucket_name_is_kept_and_fits_s3(bootstrap) -> None:
    """The name bootstraps already have (a new one would replace their protected bucket), at most 63 characters."""
    result, _ = bootstrap(clouds=["aws"])
    assert result.one("aws:s3/bucket:Bucket").inputs["bucket"] == "acme-ml-pulumi-state"
    longest, _ = bootstrap(clouds=["aws"], prefix="p" * 50)
    name = longest.one("aws:s3/bucket:Bucket").inputs["bucket"]
    assert name == "p" * 50 + "-pulumi-state" and len(name) == 63


@pytest.mark.parametrize("prefix", ["p" * 51, "Acme-ML", "-acme"])
def test_aws_refuses_a_prefix_s3_cannot_name_a_bucket_with(bootstrap, prefix: str) -> None:
    with pytest.raises(pulumi.RunError) as err:
        bootstrap(clouds=["gcp", "aws"], prefix=prefix)
    assert f"{NS}:prefix: got {prefix!r}" in str(err.value) and "at most 50 characters" in str(err.value)


def test_gcp_enables_cloud_kms_before_the_key_ring(bootstrap) -> None:
    result, _ = bootstrap(clouds=["gcp"])
    api = result.one("gcp:projects/service:Service")
    assert api.inputs == {"service": "cloudkms.googleapis.com", "disableOnDestroy": False}
    assert api.urn in result.one("gcp:kms/keyRing:KeyRing").dependencies


@pytest.mark.parametrize(("prefix", "why"), [
    ("p" * 38, "at most 37 characters"),  # 38 + len("-pulumi-state-") + 12 digits = 64
    ("Acme-ML", "lowercase letters"), ("-acme", "starting with a letter or digit"), ("acme.ml", "lowercase letters"),
    ("goog-ml", 'not starting with "goog"'), ("acme-google", 'containing "google"'), ("acme-g00gle", "g00gle"),
])
def test_gcp_refuses_a_prefix_gcs_cannot_name_a_bucket_with_before_registering_anything(bootstrap, prefix: str,
                                                                                       why: str) -> None:
    with pytest.raises(pulumi.RunError) as err:
        bootstrap(clouds=["azure", "gcp"], prefix=prefix)  # aws checks the prefix first, by S3's rules
    message = str(err.value)
    assert message.startswith(f"{NS}:prefix: got {prefix!r} ({len(prefix)} characters); with gcp in clouds")
    assert "<prefix>-pulumi-state-<project number>" in message and why in message
    assert bootstrap.answers.registered == []


def test_gcp_bucket_name_is_kept_and_its_length_counts_the_real_project_number(bootstrap, monkeypatch) -> None:
    result, _ = bootstrap(clouds=["gcp"], prefix="p" * 37)
    assert result.one("gcp:storage/bucket:Bucket").inputs["name"].startswith("p" * 37 + "-pulumi-state-")
    module = script_module(BOOTSTRAP / "state_gcp.py", "bootstrap_state_gcp")
    monkeypatch.setattr(module.gcp.organizations, "get_project", lambda: type("Project", (), {"number": "1234567890"})())
    assert module.check("ns:prefix", "p" * 39) == "1234567890"
    assert len(module.bucket_name("p" * 39, "1234567890")) == 63
    with pytest.raises(pulumi.RunError, match="at most 39 characters"):
        module.check("ns:prefix", "p" * 40)


def test_azure_exports_the_versioned_key_url_and_keeps_rotating(bootstrap) -> None:
    result, _ = bootstrap(clouds=["azure"])
    assert result.outputs["azure_secrets_provider"] == f"azurekeyvault://kvacmemlstate.vault.azure.net/keys/pulumi-state/{KEY_VERSION}"
    policy = result.one("azure-native:keyvault:Key").inputs["properties"]["rotationPolicy"]
    assert policy["lifetimeActions"] == [{"action": {"type": "rotate"}, "trigger": {"timeAfterCreate": "P90D"}}]
    assert "expiryTime" not in policy.get("attributes", {})  # old versions stay usable


def test_azure_secrets_provider_url_refuses_a_versionless_key_uri() -> None:
    module = script_module(BOOTSTRAP / "state_azure.py", "bootstrap_state_azure")
    assert (module.secrets_provider_url("https://kv.vault.azure.cn/keys/pulumi-state/abc123")
            == "azurekeyvault://kv.vault.azure.cn/keys/pulumi-state/abc123")
    with pytest.raises(ValueError, match="expected https://<vault host>/keys/<name>/<version>"):
        module.secrets_provider_url("https://kv.vault.azure.net/keys/pulumi-state")


def role(definition: str) -> str:
    return f"/subscriptions/{PLACEHOLDER_UUID}/providers/Microsoft.Authorization/roleDefinitions/{definition}"


def test_azure_grants_each_admin_crypto_user_on_the_vault_and_blob_contributor_on_the_container(bootstrap) -> None:
    result, _ = bootstrap(clouds=["azure"])
    grants = {(r.inputs["principalId"], r.inputs["principalType"], r.inputs["roleDefinitionId"], r.inputs["scope"])
              for r in result.of_type("azure-native:authorization:RoleAssignment") if r.name.startswith("state-admin-")}
    vault, container = "state-vault-id", "state-container-id"  # the mock engine's IDs: f"{name}-id"
    assert grants == {
        (ADMIN_A, "Group", role(KEY_VAULT_CRYPTO_USER), vault), (ADMIN_A, "Group", role(STORAGE_BLOB_DATA_CONTRIBUTOR), container),
        (ADMIN_B, "ServicePrincipal", role(KEY_VAULT_CRYPTO_USER), vault),
        (ADMIN_B, "ServicePrincipal", role(STORAGE_BLOB_DATA_CONTRIBUTOR), container),
    }
    assert not [d for d in result.diagnostics if "azureStateAdmins" in d.message]


def test_azure_grants_each_reader_blob_reader_on_the_container_and_crypto_user_on_the_key_alone(bootstrap) -> None:
    """The preview identity reads the checkpoint and decrypts secrets; it must not be able to write the state."""
    result, _ = bootstrap(clouds=["azure"])
    grants = {(r.inputs["principalId"], r.inputs["principalType"], r.inputs["roleDefinitionId"], r.inputs["scope"])
              for r in result.of_type("azure-native:authorization:RoleAssignment") if r.name.startswith("state-reader-")}
    assert grants == {(READER, "ServicePrincipal", role(STORAGE_BLOB_DATA_READER), "state-container-id"),
                      (READER, "ServicePrincipal", role(KEY_VAULT_CRYPTO_USER), "state-key-id")}
    everyone = [r.inputs for r in result.of_type("azure-native:authorization:RoleAssignment")]
    assert not [g for g in everyone if g["principalId"] == READER and g["roleDefinitionId"] == role(STORAGE_BLOB_DATA_CONTRIBUTOR)]
    none, _ = bootstrap(clouds=["azure"], azureStateReaders=None)
    assert not [r for r in none.resources if r.name.startswith("state-reader-")]


def test_azure_refuses_a_reader_that_is_an_admin_or_malformed_before_registering_anything(bootstrap) -> None:
    with pytest.raises(pulumi.RunError) as err:
        bootstrap(azureStateReaders=[{"principalId": ADMIN_B.upper(), "principalType": "ServicePrincipal"}])
    assert str(err.value).startswith(f"{NS}:azureStateReaders[0].principalId: got {ADMIN_B!r}, which {NS}:azureStateAdmins")
    assert bootstrap.answers.registered == []
    with pytest.raises(pulumi.RunError) as err:
        bootstrap(azureStateReaders=[{"principalId": "preview-app", "principalType": "ServicePrincipal"}])
    assert str(err.value).startswith(f"{NS}:azureStateReaders[0].principalId: got 'preview-app'; allowed: the object ID")
    assert bootstrap.answers.registered == []


def test_azure_state_account_cannot_be_deleted_and_containers_are_soft_deleted(bootstrap) -> None:
    result, _ = bootstrap(clouds=["azure"])
    lock = result.one("azure-native:authorization:ManagementLockByScope")
    assert lock.inputs["level"] == "CanNotDelete" and lock.inputs["scope"] == "state-account-id"
    assert lock.protect and lock.retainOnDelete
    service = result.one("azure-native:storage:BlobServiceProperties").inputs
    assert service["deleteRetentionPolicy"] == {"enabled": True, "days": 30}
    assert service["containerDeleteRetentionPolicy"] == {"enabled": True, "days": 30}
    assert service["isVersioningEnabled"] is True


def test_azure_without_admins_deploys_and_warns_that_nobody_can_use_it(bootstrap) -> None:
    result, _ = bootstrap(clouds=["azure"], azureStateAdmins=None, azureStateReaders=None)
    assert [r.name for r in result.of_type("azure-native:authorization:RoleAssignment")] == ["state-identity-crypto"]
    [warning] = [d.message for d in result.diagnostics if f"{NS}:azureStateAdmins is not set" in d.message and d.severity == "warning"]
    assert "nobody can use this backend" in warning and "Key Vault Crypto User" in warning


@pytest.mark.parametrize(("value", "where", "shown", "allowed"), [
    ("alice", "", "'alice'", "a list of {principalId: <Microsoft Entra object ID, a GUID>, principalType: User | Group"),
    ({"principalId": ADMIN_A, "principalType": "User"}, "", "{'principalId'", "a list of {principalId"),
    ([{"principalId": "alice@example.com", "principalType": "User"}], "[0].principalId", "'alice@example.com'",
     "the object ID (a GUID) of a user, group or service principal"),
    ([{"principalId": ADMIN_A, "principalType": "user"}], "[0].principalType", "'user'", "User, Group, ServicePrincipal"),
    ([{"principalId": ADMIN_A}], "[0]", "{'principalId'", "an object with exactly principalId and principalType"),
    ([{"principalId": ADMIN_A, "principalType": "User"}, {"principalId": ADMIN_A.upper(), "principalType": "Group"}],
     "[1].principalId", repr(ADMIN_A.upper()), "each principal once"),
])
def test_azure_refuses_malformed_admins_before_registering_anything(bootstrap, value: Any, where: str, shown: str,
                                                                    allowed: str) -> None:
    with pytest.raises(pulumi.RunError) as err:
        bootstrap(azureStateAdmins=value)  # all three clouds: aws and gcp would register theirs first
    message = str(err.value)
    assert message.startswith(f"{NS}:azureStateAdmins{where}: got {shown}")
    assert f"allowed: {allowed}" in message
    assert bootstrap.answers.registered == []


def test_azure_storage_account_waits_for_its_identity_to_hold_the_key_role(bootstrap) -> None:
    result, _ = bootstrap(clouds=["azure"])
    grant = result.one("azure-native:authorization:RoleAssignment", "state-identity-crypto")
    assert grant.inputs["roleDefinitionId"] == role(KEY_VAULT_CRYPTO_SERVICE_ENCRYPTION_USER)
    assert grant.urn in result.one("azure-native:storage:StorageAccount").dependencies


def test_bootstrap_project_pins_its_own_state_to_the_local_backend() -> None:
    """Its stack outputs are read with `cd bootstrap && pulumi stack output` after `pulumi login` to the new backend."""
    project = yaml.safe_load((BOOTSTRAP / "Pulumi.yaml").read_text())
    assert project["backend"] == {"url": "file://~"}
