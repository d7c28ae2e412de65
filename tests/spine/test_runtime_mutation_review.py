"""What the plan's recording monitor keeps of a registration, as the engine keeps it (pkg/resource/deploy/source_eval.go,
RegisterResource), for what a mutation review found untested: the options a program's transforms return (they replace
the request's), the providers the engine resolves and refuses, dependencies and aliases as URNs, and the outputs the
mock engine echoes where a provider changes their shape."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from aiinfra.plan.runtime import run_program

CONFIG = {"aws:region": "us-east-2"}


def test_a_transform_can_move_a_resource_to_another_provider_and_add_dependencies_and_secret_outputs() -> None:
    """A stack transform that pins buckets to an explicit provider, orders them after a key and hides their ARN: the
    engine registers the bucket with that provider (no default provider for it), after the key, with `arn` secret."""
    def program() -> None:
        east = aws.Provider("east", region="us-east-1")
        key = aws.kms.Key("key")

        def pin(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
            if args.type_ != "aws:s3/bucket:Bucket":
                return None
            opts = pulumi.ResourceOptions.merge(args.opts, pulumi.ResourceOptions(
                provider=east, depends_on=[key], additional_secret_outputs=["arn"]))
            return pulumi.ResourceTransformResult(props=args.props, opts=opts)

        pulumi.runtime.register_resource_transform(pin)
        aws.s3.Bucket("data")

    result = run_program(program, project="demo", stack="dev", config=CONFIG)
    bucket, east = result.one("aws:s3/bucket:Bucket"), result.one("pulumi:providers:aws", "east")
    assert bucket.provider.rsplit("::", 1)[0] == east.urn
    assert bucket.dependencies == [result.one("aws:kms/key:Key").urn]
    assert bucket.additionalSecretOutputs == ["arn"]


def test_a_transform_can_give_a_remote_component_its_packages_provider() -> None:
    """`providers` is a component's map of package -> provider; a remote component's own package's entry is the
    provider the engine constructs it with, so one a transform adds replaces the default provider."""
    def program() -> None:
        east = aws.Provider("east", region="us-east-1")

        def providers(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
            if args.type_ != "aws:index:Thing":
                return None
            opts = pulumi.ResourceOptions.merge(args.opts, pulumi.ResourceOptions(providers=[east]))
            return pulumi.ResourceTransformResult(props=args.props, opts=opts)

        pulumi.runtime.register_resource_transform(providers)
        pulumi.ComponentResource("aws:index:Thing", "thing", {}, None, remote=True)

    result = run_program(program, project="demo", stack="dev", config=CONFIG)
    assert result.one("aws:index:Thing").provider.rsplit("::", 1)[0] == result.one("pulumi:providers:aws", "east").urn
    assert [p.name for p in result.of_type("pulumi:providers:aws")] == ["east"]


def test_a_transform_that_turns_retain_on_delete_off_is_obeyed() -> None:
    """The SDK sends retain_on_delete=False as an unset field; the engine then keeps the resource's option unset, so
    `pulumi destroy` deletes the bucket. A plan that kept the program's True would tell a policy it is retained."""
    def program() -> None:
        def release(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
            opts = pulumi.ResourceOptions.merge(args.opts, pulumi.ResourceOptions(retain_on_delete=False))
            return pulumi.ResourceTransformResult(props=args.props, opts=opts)

        aws.s3.Bucket("data", opts=pulumi.ResourceOptions(retain_on_delete=True, transforms=[release]))
        aws.s3.Bucket("kept", opts=pulumi.ResourceOptions(retain_on_delete=True))

    result = run_program(program, project="demo", stack="dev", config=CONFIG)
    assert {r.name: r.retainOnDelete for r in result.of_type("aws:s3/bucket:Bucket")} == {"data": False, "kept": True}


def test_a_transform_is_told_whether_the_resource_is_custom() -> None:
    """ResourceTransformArgs.custom: transforms commonly tag only custom resources (components take no tags)."""
    seen: dict[str, bool] = {}

    def program() -> None:
        def record(args: pulumi.ResourceTransformArgs) -> None:
            seen[args.name] = args.custom

        pulumi.runtime.register_resource_transform(record)
        pulumi.ComponentResource("demo:index:Box", "box")
        aws.s3.Bucket("data")

    run_program(program, project="demo", stack="dev", config=CONFIG)
    assert seen == {"box": False, "data": True}


# Providers the engine resolves -------------------------------------------------------------------------------------

def test_an_invoke_through_an_explicit_provider_is_not_refused_when_default_providers_are_disabled() -> None:
    """getProviderFromSource refuses only a default provider: a program that disables them passes its own."""
    def program() -> None:
        east = aws.Provider("east", region="us-east-1")
        zones = aws.get_availability_zones(opts=pulumi.InvokeOptions(provider=east))
        aws.s3.Bucket("data", bucket=zones.names[0], opts=pulumi.ResourceOptions(provider=east))

    config = {"aws:region": "us-east-2", "pulumi:disable-default-providers": '["aws"]'}
    result = run_program(program, project="demo", stack="dev", config=config)
    assert result.one("aws:s3/bucket:Bucket").inputs["bucket"] == "us-east-1a"


def test_providers_are_custom_resources_that_have_no_provider_of_their_own() -> None:
    """The engine's default provider is a custom resource like an explicit one (a policy that looks at custom
    resources sees both), and no provider resource gets a provider: `pulumi:` types are the engine's own."""
    def program() -> None:
        aws.Provider("east", region="us-east-1")
        aws.s3.Bucket("data")

    result = run_program(program, project="demo", stack="dev", config=CONFIG)
    providers = {r.name: (r.custom, r.provider) for r in result.resources if r.type.startswith("pulumi:providers:")}
    assert providers == {"east": (True, ""), f"default_{aws._utilities.get_version().replace('.', '_')}": (True, "")}


def test_dependencies_are_recorded_in_urn_order() -> None:
    """The SDK sends a resource's dependencies in set order, which changes from run to run; the plan sorts them so
    two plans of one program are equal."""
    def program() -> None:
        keys = [aws.kms.Key(f"key-{i}") for i in range(8)]
        aws.s3.Bucket("data", opts=pulumi.ResourceOptions(depends_on=keys))

    result = run_program(program, project="demo", stack="dev", config=CONFIG)
    dependencies = result.one("aws:s3/bucket:Bucket").dependencies
    assert dependencies == sorted(r.urn for r in result.of_type("aws:kms/key:Key"))


# Aliases -----------------------------------------------------------------------------------------------------------

def test_alias_specs_resolve_to_the_urns_the_engine_computes() -> None:
    """A resource moved into a component, out of another component, or from another stack or project keeps its
    state only if the alias names the URN it had; one that resolves to the resource's own URN is no alias."""
    def program() -> None:
        old = pulumi.ComponentResource("demo:index:Old", "old")
        new = pulumi.ComponentResource("demo:index:New", "new")
        aws.kms.Key("a", opts=pulumi.ResourceOptions(parent=new, aliases=[pulumi.Alias(parent=None)]))
        aws.kms.Key("b", opts=pulumi.ResourceOptions(parent=new, aliases=[pulumi.Alias(parent=old)]))
        aws.kms.Key("c", opts=pulumi.ResourceOptions(aliases=[pulumi.Alias(stack="prod", project="legacy")]))
        aws.kms.Key("d", opts=pulumi.ResourceOptions(aliases=[pulumi.Alias(name="d")]))

    result = run_program(program, project="demo", stack="dev", config=CONFIG)
    aliases = {r.name: r.aliases for r in result.of_type("aws:kms/key:Key")}
    assert aliases == {"a": ["urn:pulumi:dev::demo::aws:kms/key:Key::a"],
                       "b": ["urn:pulumi:dev::demo::demo:index:Old$aws:kms/key:Key::b"],
                       "c": ["urn:pulumi:prod::legacy::aws:kms/key:Key::c"],
                       "d": []}


# What the mock engine answers ---------------------------------------------------------------------------------------

def test_an_object_named_policy_that_is_no_policy_document_is_echoed_as_an_object() -> None:
    """Only a PolicyDocument (it has `Statement`) becomes JSON text in the output; a resilience policy's `policy` is an
    object in the provider's state, which the program reads field by field."""
    def program() -> None:
        targets = {"rpo": "1h", "rto": "4h"}
        policy = aws.resiliencehub.ResiliencyPolicy("tier", name="tier", tier="Critical", policy={
            "az": targets, "hardware": targets, "software": targets})
        pulumi.export("rto", policy.policy.apply(lambda p: p.az.rto))

    assert run_program(program, project="demo", stack="dev", config=CONFIG).outputs == {"rto": "4h"}


def test_azure_user_assigned_identities_come_back_as_the_arm_map() -> None:
    """azure-native takes a list of identity IDs and returns ARM's map {id: {...}}; a program reads the map's keys."""
    from pulumi_azure_native import containerservice

    identity = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/aks"

    def program() -> None:
        cluster = containerservice.ManagedCluster("aks", resource_group_name="rg", dns_prefix="aks", identity={
            "type": "UserAssigned", "user_assigned_identities": [identity]})
        pulumi.export("ids", cluster.identity.apply(lambda i: list(i.user_assigned_identities)))

    assert run_program(program, project="demo", stack="dev", config={"azure-native:location": "eastus"}).outputs == {
        "ids": [identity]}
