"""Behaviour of the state bootstrap (bootstrap/state_aws.py, state_gcp.py, state_azure.py) that a hand mutation review
found no test pinning, as each cloud would receive it: the S3 bucket keeps old state versions a year, encrypts with
the state key and refuses plain HTTP on the bucket and its objects; the GCS bucket's key rotates, only the storage
agent may use it (and the bucket waits for that grant), objects have no ACLs and old versions go after a year; the
Azure vault uses RBAC and keeps deleted keys 90 days, the storage account is zone-redundant, HTTPS only, not public,
doubly encrypted with the state key through its identity, and its resource names stay what existing bootstraps have;
the exported secrets-provider URLs; and which malformed settings and key URIs are refused."""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pytest
from helpers import script_module

import delivery.test_bootstrap as base
from delivery.test_bootstrap import ADMIN_A, BOOTSTRAP, NS, bootstrap  # noqa: F401  (fixture)

KMS_KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/state-key"
VAULT_URI = "https://kvacmemlstate.vault.azure.net/"


class StateAnswers(base.CloudAnswers):
    """Besides the key's versioned URI: what AWS and Azure return for the bucket's and the key's ARNs, the vault's URI
    and the key's name, so the documents that name them are known in the plan."""

    def answer(self, type_: str, name: str, outputs: dict[str, Any]) -> tuple[str, dict]:
        if type_ == "aws:s3/bucket:Bucket":
            outputs = {**outputs, "arn": f"arn:aws:s3:::{outputs['bucket']}"}
        elif type_ == "aws:kms/key:Key":
            outputs = {**outputs, "arn": KMS_KEY_ARN}
        elif type_ == "azure-native:keyvault:Vault":
            outputs = {**outputs, "properties": {**outputs["properties"], "vaultUri": VAULT_URI}}
        elif type_ == "azure-native:keyvault:Key":
            outputs = {**outputs, "name": outputs["keyName"]}
        return super().answer(type_, name, outputs)


@pytest.fixture
def state(bootstrap, monkeypatch: pytest.MonkeyPatch):  # noqa: F811
    """`bootstrap`, answered by StateAnswers."""
    monkeypatch.setattr(base, "CloudAnswers", StateAnswers)
    return bootstrap


def module(name: str) -> Any:
    return script_module(BOOTSTRAP / f"{name}.py", f"bootstrap_{name}")


# --- AWS ------------------------------------------------------------------------------------------------------------


def test_aws_bucket_keeps_old_state_a_year_and_encrypts_with_the_state_key(state) -> None:
    result, _ = state(clouds=["aws"])
    assert result.one("aws:s3/bucketVersioning:BucketVersioning").inputs["versioningConfiguration"] == {"status": "Enabled"}
    [rule] = result.one("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration").inputs["rules"]
    # Without the key's ARN S3 would encrypt with the account's aws/s3 key.
    assert rule["applyServerSideEncryptionByDefault"] == {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": KMS_KEY_ARN}
    lifecycle = result.one("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration").inputs["rules"]
    assert lifecycle == [{"id": "old-state-versions", "status": "Enabled", "filter": {"prefix": ""},
                          "noncurrentVersionExpiration": {"noncurrentDays": 365}}]
    # A scheduled deletion of the key that decrypts every stack's secrets can be cancelled for the longest AWS allows.
    assert result.one("aws:kms/key:Key").inputs["deletionWindowInDays"] == 30


def test_aws_bucket_refuses_plain_http_to_the_bucket_and_its_objects(state) -> None:
    result, _ = state(clouds=["aws"])
    policy = json.loads(result.one("aws:s3/bucketPolicy:BucketPolicy").inputs["policy"])
    arn = "arn:aws:s3:::acme-ml-pulumi-state"
    assert policy["Statement"] == [{
        "Sid": "DenyInsecureTransport", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
        "Resource": [arn, f"{arn}/*"], "Condition": {"Bool": {"aws:SecureTransport": "false"}}}]


# --- GCP ------------------------------------------------------------------------------------------------------------


def test_gcp_key_rotates_and_only_the_storage_agent_uses_it_before_the_bucket_exists(state) -> None:
    result, _ = state(clouds=["gcp"])
    key = result.one("gcp:kms/cryptoKey:CryptoKey")
    assert key.inputs["rotationPeriod"] == "7776000s"  # 90 days
    # CMEK lives in the bucket's region.
    assert result.one("gcp:kms/keyRing:KeyRing").inputs["location"] == "us-central1"
    grant = result.one("gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember")
    assert grant.inputs["role"] == "roles/cloudkms.cryptoKeyEncrypterDecrypter"
    assert grant.inputs["member"].startswith("serviceAccount:") and grant.inputs["cryptoKeyId"] == "state-key-id"
    bucket = result.one("gcp:storage/bucket:Bucket")
    assert grant.urn in bucket.dependencies  # GCS can neither write nor read the state before the grant
    assert bucket.inputs["uniformBucketLevelAccess"] is True  # IAM only, no object ACLs
    assert bucket.inputs["lifecycleRules"] == [
        {"action": {"type": "Delete"}, "condition": {"daysSinceNoncurrentTime": 365, "withState": "ARCHIVED"}}]
    assert result.outputs["gcp_secrets_provider"] == "gcpkms://state-key-id"


def test_gcp_accepts_underscores_in_the_prefix(state) -> None:
    """GCS bucket names may contain underscores (Cloud Storage, "Bucket naming guidelines")."""
    result, _ = state(clouds=["gcp"], prefix="acme_ml")
    assert result.one("gcp:storage/bucket:Bucket").inputs["name"].startswith("acme_ml-pulumi-state-")


# --- Azure ----------------------------------------------------------------------------------------------------------


def test_azure_vault_and_account_settings(state) -> None:
    result, _ = state(clouds=["azure"])
    vault = result.one("azure-native:keyvault:Vault").inputs["properties"]
    # Data-plane access through the role assignments only; a deleted key can be recovered for 90 days.
    assert vault["enableRbacAuthorization"] is True and vault["softDeleteRetentionInDays"] == 90
    assert result.one("azure-native:keyvault:Key").inputs["properties"]["keySize"] == 2048
    account = result.one("azure-native:storage:StorageAccount").inputs
    assert account["sku"] == {"name": "Standard_ZRS"}  # the state survives a zone outage
    assert account["enableHttpsTrafficOnly"] is True and account["allowBlobPublicAccess"] is False
    assert account["encryption"] == {
        "keySource": "Microsoft.Keyvault", "requireInfrastructureEncryption": True,
        "encryptionIdentity": {"encryptionUserAssignedIdentity": "state-identity-id"},
        "keyVaultProperties": {"keyVaultUri": VAULT_URI, "keyName": "pulumi-state"}}
    assert result.one("azure-native:storage:BlobContainer").inputs["publicAccess"] == "None"


def test_azure_names_of_a_long_prefix_stay_what_existing_bootstraps_have(state) -> None:
    """Vault and account names are global and their change replaces protected resources: the prefix's first 16
    letters and digits."""
    result, _ = state(clouds=["azure"], prefix="acme-machine-learning-platform")
    assert result.one("azure-native:keyvault:Vault").inputs["vaultName"] == "kvacmemachinelearnstate"
    assert result.one("azure-native:storage:StorageAccount").inputs["accountName"] == "acmemachinelearnstate"
    assert result.outputs["azure_login"] == "azblob://pulumi-state?storage_account=acmemachinelearnstate"


@pytest.mark.parametrize(("value", "where", "allowed"), [
    ([{"principalId": ADMIN_A, "principalType": "User", "role": "Owner"}], "[0]",
     "an object with exactly principalId and principalType"),
    ([{"principalId": ADMIN_A + "-0000", "principalType": "User"}], "[0].principalId", "the object ID (a GUID)"),
])
def test_azure_refuses_extra_keys_and_ids_that_only_start_with_a_guid(bootstrap, value: Any, where: str,  # noqa: F811
                                                                   allowed: str) -> None:
    with pytest.raises(pulumi.RunError) as err:
        bootstrap(azureStateAdmins=value)
    assert str(err.value).startswith(f"{NS}:azureStateAdmins{where}: got ")
    assert f"allowed: {allowed}" in str(err.value)
    assert bootstrap.answers.registered == []


@pytest.mark.parametrize("uri", [
    "http://kv.vault.azure.net/keys/pulumi-state/abc123",  # not https
    "https://kv.vault.azure.net/keys/pulumi-state/abc123/extra",
    "https://kv.vault.azure.net/keys//abc123",  # no key name
    "https://kv.vault.azure.net/secrets/pulumi-state/abc123",  # a secret, not a key
])
def test_azure_secrets_provider_url_refuses_what_is_not_a_versioned_key_uri(uri: str) -> None:
    with pytest.raises(ValueError, match="expected https://<vault host>/keys/<name>/<version>"):
        module("state_azure").secrets_provider_url(uri)
