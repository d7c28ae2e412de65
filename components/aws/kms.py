"""The environment's KMS key in one region: rotated yearly, used by everything stored in that region."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from .context import AwsContext, render
from .policies import key_policy

DELETION_WINDOW_DAYS = 30  # the maximum: a mistaken deletion can be cancelled for a month


@dataclass(frozen=True)
class KmsKeyArgs:
    context: AwsContext
    prometheus: bool = False
    """Let Amazon Managed Prometheus workspaces of the account use the key (`addons.monitoring: managed`). Default off."""


class KmsKey(pulumi.ComponentResource):
    """`ai-infra:aws:KmsKey`. Children: `<name>-key` (symmetric, rotation on, protected outside dev) and
    `<name>-alias` (`alias/ai-infra/<name>`)."""

    key: aws.kms.Key
    arn: pulumi.Output[str]

    def __init__(self, name: str, args: KmsKeyArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:aws:KmsKey", name, None, opts)
        ctx = args.context
        self.key = aws.kms.Key(
            f"{name}-key",
            aws.kms.KeyArgs(
                description=f"ai-infra {name}: EKS secrets, EBS, FSx, S3 and CloudWatch Logs",
                enable_key_rotation=True,
                deletion_window_in_days=DELETION_WINDOW_DAYS,
                policy=render(lambda *v: key_policy(*v, prometheus=args.prometheus), ctx.account_id, ctx.partition, ctx.region,
                              ctx.dns_suffix),
                region=ctx.region,
            ),
            opts=ctx.stateful(self),
        )
        aws.kms.Alias(
            f"{name}-alias",
            aws.kms.AliasArgs(name=f"alias/ai-infra/{name}", target_key_id=self.key.key_id, region=ctx.region),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.arn = self.key.arn
        self.register_outputs({"arn": self.arn})
