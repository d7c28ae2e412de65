"""A Cloud KMS key ring and key per environment and region, rotated every 90 days, that encrypts everything
in the region: GKE secrets, node boot disks, buckets, Managed Lustre and the flow log bucket."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from .context import GcpContext

ROTATION_DAYS = 90
ENCRYPTER_DECRYPTER = "roles/cloudkms.cryptoKeyEncrypterDecrypter"


def rotation_period(days: int) -> str:
    """KMS rotation period in the API's duration format (seconds, suffix 's')."""
    return f"{days * 86400}s"


@dataclass(frozen=True)
class KmsArgs:
    context: GcpContext
    users: Mapping[str, pulumi.Input[str]] = field(default_factory=dict)
    """IAM members given Encrypter/Decrypter on the key, by a fixed short name that becomes the child name
    (`gke`, `compute`, `storage`, `logging`, `lustre`). Default none."""


class Kms(pulumi.ComponentResource):
    """`ai-infra:gcp:Kms`. Children: `<name>-keyring`, `<name>-key`, `<name>-key-<user>` per key user (protected,
    with the key ring and key, outside dev).

    Key rings and keys cannot be deleted in GCP: destroying the stack only removes them from the state
    (their versions are scheduled for destruction). Both keep Pulumi's auto-names, so a re-created dev stack
    never collides with a key ring left behind.
    """

    key_ring: gcp.kms.KeyRing
    key: gcp.kms.CryptoKey
    key_id: pulumi.Output[str]
    """The key's ID, resolved once every key user holds its grant: resources that encrypt with the key take
    this (not `key.id`), so they are created after the grants and record them as dependencies."""

    def __init__(self, name: str, args: KmsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:gcp:Kms", name, None, opts)
        ctx = args.context
        self.key_ring = gcp.kms.KeyRing(
            f"{name}-keyring", gcp.kms.KeyRingArgs(location=ctx.region, project=ctx.project), opts=ctx.stateful(self))
        self.key = gcp.kms.CryptoKey(
            f"{name}-key",
            gcp.kms.CryptoKeyArgs(
                key_ring=self.key_ring.id,
                purpose="ENCRYPT_DECRYPT",
                rotation_period=rotation_period(ROTATION_DAYS),
                version_template=gcp.kms.CryptoKeyVersionTemplateArgs(
                    algorithm="GOOGLE_SYMMETRIC_ENCRYPTION", protection_level="SOFTWARE"),
            ),
            opts=ctx.stateful(self),
        )
        # The grants unlock the encrypted data as much as the key does (a removed grant cuts a cluster, disk, bucket
        # or file system off its data): protected like the key outside dev.
        self.grants = [
            gcp.kms.CryptoKeyIAMMember(
                f"{name}-key-{user}",
                gcp.kms.CryptoKeyIAMMemberArgs(crypto_key_id=self.key.id, role=ENCRYPTER_DECRYPTER, member=member),
                opts=ctx.stateful(self))
            for user, member in args.users.items()
        ]
        self.key_id = pulumi.Output.all(self.key.id, *(grant.id for grant in self.grants)).apply(lambda ids: ids[0])
        self.register_outputs({"key_ring_id": self.key_ring.id, "key_id": self.key.id})
