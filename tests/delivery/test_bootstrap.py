"""The bootstrap program plans offline: encrypted, versioned, private state storage and the login URLs."""

from __future__ import annotations

import json
from pathlib import Path

from aiinfra.cli import main

BOOTSTRAP = Path(__file__).resolve().parents[2] / "bootstrap"


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
    assert outputs["azure_secrets_provider"] == "azurekeyvault://kvacmemlstate.vault.azure.net/keys/pulumi-state"
    assert outputs["gcp_login"].startswith("gs://acme-ml-pulumi-state-")
    assert not [v for v in document["policy"]["violations"] if v["enforcementLevel"] == "mandatory"]
