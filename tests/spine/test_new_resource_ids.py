"""What a plan answers for a new resource's ID: `<name>-id` as if the resource existed (a preview of a deployed stack,
the default), or unknown, as the engine answers a create in the first preview of a new stack."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pulumi
import pulumi_aws as aws
from helpers import write_program
from pulumi.runtime import rpc

from aiinfra.cli import main
from aiinfra.plan.runtime import PlanMocks, run_program


def _program() -> None:
    vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16")
    aws.ec2.Subnet("subnet", vpc_id=vpc.id, cidr_block="10.0.1.0/24")
    # A lookup that waits for the VPC, and resources made in an apply on its ID.
    zones = aws.get_availability_zones_output(opts=pulumi.InvokeOutputOptions(depends_on=[vpc]))
    pulumi.export("zones", zones.names)
    vpc.id.apply(lambda id_: [aws.ec2.Eip(f"eip-{i}", domain="vpc", tags={"vpc": id_}) for i in range(2)])


def test_by_default_a_new_resource_is_named_by_its_placeholder_id_and_what_waits_for_it_runs() -> None:
    plan = run_program(_program, project="p", stack="s")
    assert plan.one("aws:ec2/subnet:Subnet").inputs["vpcId"] == "vpc-id"
    assert [r.name for r in plan.of_type("aws:ec2/eip:Eip")] == ["eip-0", "eip-1"]
    assert isinstance(plan.outputs["zones"], list) and plan.outputs["zones"]


def test_as_a_first_preview_a_new_resources_id_and_what_waits_for_it_are_unknown() -> None:
    for plan in (run_program(_program, project="p", stack="s", named_ids=False),
                 run_program(_program, project="p", stack="s", mocks_=PlanMocks(named_ids=False))):
        subnet = plan.one("aws:ec2/subnet:Subnet")
        assert subnet.inputs["vpcId"] == rpc.UNKNOWN
        assert subnet.propertyDependencies["vpcId"] == [plan.one("aws:ec2/vpc:Vpc").urn]  # what still names the VPC
        assert plan.of_type("aws:ec2/eip:Eip") == []  # an apply on an unknown ID does not run in a preview
        assert plan.outputs["zones"] == rpc.UNKNOWN  # the SDK gives an invoke that waits for a new resource no answer


def test_the_cli_plans_a_new_stack_on_request(tmp_path: Path) -> None:
    program = write_program(tmp_path, textwrap.dedent("""
        import pulumi, pulumi_aws as aws
        vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16")
        aws.ec2.Subnet("subnet", vpc_id=vpc.id, cidr_block="10.0.1.0/24")
    """), "config:\n  aws:region: us-east-1\n")
    for flags, vpc_id in (([], "vpc-id"), (["--new-stack"], rpc.UNKNOWN)):
        out = tmp_path / "plan.json"
        assert main(["plan", "--program", str(program), "--stack", "dev", "--no-policy", "-q", "--json", str(out), *flags]) == 0
        [subnet] = [r for r in json.loads(out.read_text())["resources"] if r["type"] == "aws:ec2/subnet:Subnet"]
        assert subnet["inputs"]["vpcId"] == vpc_id
