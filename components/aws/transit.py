"""Instance types a VPC under encryption enforcement admits.

With `network.transit_encryption: enforce` (the AWS default) the VPC's encryption control attaches network interfaces
only to instance types that encrypt traffic in transit (Nitro encryption; Transit Gateway user guide, "VPC Encryption
Controls"): EKS would launch a node group of another type and EC2 refuse its instances, halfway through `pulumi up`.
EC2 says which types do (DescribeInstanceTypes, filter `network-info.encryption-in-transit-supported`; the list:
EC2 user guide, data-protection.html#encryption-transit), so the components ask at preview and stop with the pool's
config path instead.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

from components.spec.offerings import transit_encryption_problem

from .context import AwsContext

ENCRYPTION_IN_TRANSIT_FILTER = "network-info.encryption-in-transit-supported"


def encrypting_in_transit(parent: pulumi.Resource, ctx: AwsContext, types: Sequence[str],
                          chosen: pulumi.Input[Sequence[str]], path: str, network_path: str) -> pulumi.Output[list[str]]:
    """`chosen` (a subset of `types`, in order) without the types that do not encrypt in transit. The first of `types`
    (the pool's resolved type) must, or the run stops with the error for config path `path`; spot alternatives that do
    not are left out. One lookup for all of `types`."""
    found = aws.ec2.get_instance_types_output(filters=[
        aws.ec2.GetInstanceTypesFilterArgs(name="instance-type", values=list(types)),
        aws.ec2.GetInstanceTypesFilterArgs(name=ENCRYPTION_IN_TRANSIT_FILTER, values=["true"]),
    ], region=ctx.region, opts=pulumi.InvokeOutputOptions(parent=parent))

    def check(values: list) -> list[str]:  # noqa: ANN001
        wanted, encrypting = values
        problem = transit_encryption_problem(path, types[0], encrypting, network_path)
        if problem:
            raise pulumi.RunError(problem)
        return [t for t in wanted if t in encrypting]

    return pulumi.Output.all(chosen, found.instance_types).apply(check)
