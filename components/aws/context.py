"""Where and how an AWS component places its resources: region, account, tags, protection.

Tags reach every taggable resource through the provider's `default_tags` (set once in compose/aws.py).
`labels` is still carried here for the places default tags do not reach: EC2 instances and volumes launched
by node groups (launch template tag specifications) and the data-zone tag of buckets and file systems.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import pulumi

from .policies import Document


@dataclass(frozen=True)
class AwsContext:
    """Shared placement of one environment's resources in one AWS region."""

    environment: str
    """Environment name; part of physical names (buckets, aliases, clusters)."""
    region: str
    """AWS region every regional resource sets as its own `region` (pulumi-aws v7 per-resource region)."""
    labels: Mapping[str, str]
    """The platform's tag set (`Platform.tags()`): environment, owner, team, cost-center, managed-by, extras."""
    account_id: pulumi.Input[str]
    """Account the resources go to (from `aws.get_caller_identity`); scopes key and bucket policies."""
    partition: pulumi.Input[str]
    """ARN partition (`aws`, `aws-cn`, `aws-us-gov`) from `aws.get_partition`."""
    dns_suffix: pulumi.Input[str]
    """DNS suffix of service principals and endpoints (`amazonaws.com`)."""
    dns_prefix: pulumi.Input[str]
    """Reverse DNS prefix of service endpoints (`com.amazonaws`), for VPC endpoint service names."""
    protected: bool
    """Protect stateful resources (`protect` + `retain_on_delete`): every environment except dev, unless overridden."""

    def stateful(self, parent: pulumi.Resource, **extra: object) -> pulumi.ResourceOptions:
        """Options for data-holding resources: protected and kept on delete outside dev."""
        return pulumi.ResourceOptions(parent=parent, protect=self.protected, retain_on_delete=self.protected, **extra)

    def arn(self, service: str, resource: str, *, region: bool = True, account: bool = True) -> pulumi.Output[str]:
        """`arn:<partition>:<service>:<region>:<account>:<resource>` with the region/account parts optional."""
        return pulumi.Output.concat("arn:", self.partition, ":", service, ":", self.region if region else "", ":",
                                    self.account_id if account else "", ":", resource)

    def service_name(self, service: str) -> pulumi.Output[str]:
        """VPC endpoint service name, e.g. `com.amazonaws.us-east-1.ecr.api`."""
        return pulumi.Output.concat(self.dns_prefix, ".", self.region, ".", service)


def render(build: Callable[..., Document], *inputs: pulumi.Input[str] | None) -> pulumi.Output[str]:
    """A policy document as JSON, once its inputs (ARNs, IDs) are known: `build(*resolved_inputs)`."""
    return pulumi.Output.all(*inputs).apply(lambda values: json.dumps(build(*values)))
