"""The plan runs a program's resource transforms as the engine does: the resource's own, then its ancestors'
(nearest first), then the stack's, and records what they return (props and options)."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from aiinfra.plan.runtime import run_program

CONFIG = {"aws:region": "us-east-1"}


def tagger(label: str, calls: list[str]):  # noqa: ANN201
    def transform(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
        calls.append(f"{label}:{args.name}")
        if args.type_ != "aws:s3/bucket:Bucket":
            return None
        tags = {**(args.props.get("tags") or {}), label: "yes"}
        return pulumi.ResourceTransformResult(props={**args.props, "tags": tags}, opts=args.opts)
    return transform


class Store(pulumi.ComponentResource):
    """A component whose bucket sits one level down, with a transform of its own."""

    def __init__(self, name: str, calls: list[str], opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("demo:index:Store", name, None, opts)
        inner = pulumi.ComponentResource("demo:index:Inner", f"{name}-inner", None, pulumi.ResourceOptions(parent=self))
        aws.s3.Bucket(f"{name}-bucket", opts=pulumi.ResourceOptions(parent=inner, transforms=[tagger("own", calls)]))
        self.register_outputs({})


def test_own_then_ancestors_then_stack_transforms_shape_what_is_recorded() -> None:
    calls: list[str] = []

    def program() -> None:
        pulumi.runtime.register_resource_transform(tagger("stack", calls))
        Store("data", calls, pulumi.ResourceOptions(transforms=[tagger("component", calls)]))
        aws.s3.Bucket("outside")

    result = run_program(program, project="demo", stack="dev", config=CONFIG)
    buckets = {r.name: r.inputs.get("tags") for r in result.of_type("aws:s3/bucket:Bucket")}
    assert buckets == {"data-bucket": {"own": "yes", "component": "yes", "stack": "yes"}, "outside": {"stack": "yes"}}
    # the engine's order for the bucket inside the component: its own transform, its ancestors' (the component's
    # transform reaches its grandchild), then the stack's
    assert [c for c in calls if c.endswith(":data-bucket")] == ["own:data-bucket", "component:data-bucket", "stack:data-bucket"]
    assert "component:outside" not in calls  # a component's transforms reach only its own descendants


def test_a_transform_can_set_options_that_the_plan_records() -> None:
    def protect_buckets(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
        if args.type_ != "aws:s3/bucket:Bucket":
            return None
        opts = pulumi.ResourceOptions.merge(args.opts, pulumi.ResourceOptions(
            protect=True, retain_on_delete=True, ignore_changes=["tags"]))
        return pulumi.ResourceTransformResult(props=args.props, opts=opts)

    def program() -> None:
        pulumi.runtime.register_resource_transform(protect_buckets)
        aws.s3.Bucket("kept")
        aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16")

    result = run_program(program, project="demo", stack="dev", config=CONFIG)
    bucket = result.one("aws:s3/bucket:Bucket")
    assert (bucket.protect, bucket.retainOnDelete, bucket.ignoreChanges) == (True, True, ["tags"])
    vpc = result.one("aws:ec2/vpc:Vpc")
    assert (vpc.protect, vpc.retainOnDelete, vpc.inputs["cidrBlock"]) == (False, False, "10.0.0.0/16")


def test_options_survive_the_round_trip_through_a_transform_unchanged() -> None:
    """What the engine hands a transform and takes back: a transform returning the options as they came leaves every
    option of the registration as it was, set or unset."""
    from pulumi.runtime.proto import resource_pb2

    from aiinfra.plan.transforms import _apply_options, transform_options

    request = resource_pb2.RegisterResourceRequest(
        type="aws:s3/bucket:Bucket", name="b", custom=True, dependencies=["urn:a"], ignoreChanges=["tags"],
        replaceOnChanges=["name"], version="7.0.0", provider="urn:p::id", providers={"aws": "urn:p::id"},
        pluginDownloadURL="https://example.com", deletedWith="urn:d", additionalSecretOutputs=["x"],
        deleteBeforeReplace=True, deleteBeforeReplaceDefined=True, retainOnDelete=False,
        customTimeouts=resource_pb2.RegisterResourceRequest.CustomTimeouts(create="5m"))
    request.protect = False  # set to false, which differs from unset
    round_trip = resource_pb2.RegisterResourceRequest()
    round_trip.CopyFrom(request)
    _apply_options(round_trip, transform_options(request))
    assert round_trip == request
    assert round_trip.HasField("protect") and round_trip.HasField("retainOnDelete")
    unset = resource_pb2.RegisterResourceRequest(type="t", name="n")
    again = resource_pb2.RegisterResourceRequest()
    again.CopyFrom(unset)
    _apply_options(again, transform_options(unset))
    assert again == unset and not again.HasField("protect") and not again.HasField("customTimeouts")
