"""The plan shows what the engine would: default providers for resources that name none, and remote
components (built by a provider plugin) with unknown outputs instead of a crash."""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws
from spine.probe_pack import probe_pack

from aiinfra.plan.echo import SECRET as SECRET_VALUE
from aiinfra.plan.echo import SIG as SECRET_SIG
from aiinfra.plan.runtime import UNKNOWN, run_program

CONFIG = {"aws:region": "us-east-2", "aws:defaultTags": '{"tags": {"team": "ml"}}', "aws:secretKey": "s3cr3t", "demo:x": "1"}


def test_a_resource_without_provider_gets_the_engines_default_provider_configured_from_the_stack() -> None:
    def program() -> None:
        aws.s3.Bucket("data")
        aws.s3.Bucket("logs")

    result = run_program(program, project="demo", stack="dev", config=CONFIG, secret_keys=["aws:secretKey"])
    providers = result.of_type("pulumi:providers:aws")
    assert len(providers) == 1, "one default provider per package and version, as the engine makes"
    provider = providers[0]
    assert provider.name.startswith("default_") and provider.name == "default_" + aws._utilities.get_version().replace(".", "_")
    assert provider.inputs["region"] == "us-east-2"
    # As the engine passes config (target.go GetPackageConfig): the config text (an object as its JSON), and a secure
    # value as a secret, here its placeholder: the plan never records a secret's text.
    assert provider.inputs["defaultTags"] == '{"tags": {"team": "ml"}}'
    assert provider.inputs["secretKey"] == {SECRET_SIG: SECRET_VALUE, "value": "[secret]"}  # never its text
    for bucket in result.of_type("aws:s3/bucket:Bucket"):
        assert bucket.provider == f"{provider.urn}::{UNKNOWN}"


def test_a_provider_setting_holding_a_secure_value_keeps_its_other_parts(tmp_path) -> None:  # noqa: ANN001
    """An object with a secure value inside is the object's JSON marked secret (config/object.go Secure()), so a
    policy still reads the role ARN; offline the secure part is the placeholder."""
    from aiinfra.plan.program import plan_stack
    from aiinfra.plan.project import load_project

    (tmp_path / "Pulumi.yaml").write_text("name: demo\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text(
        "config:\n  aws:region: us-east-2\n  aws:assumeRoles:\n    - roleArn: arn:aws:iam::123456789012:role/deploy\n"
        "      externalId:\n        secure: v1:abc\n")
    (tmp_path / "__main__.py").write_text("import pulumi_aws as aws\naws.s3.Bucket('data')\n")
    provider = plan_stack(load_project(tmp_path), "dev").one("pulumi:providers:aws")
    assert provider.inputs["assumeRoles"] == {
        SECRET_SIG: SECRET_VALUE, "value": '[{"externalId":"[secret]","roleArn":"arn:aws:iam::123456789012:role/deploy"}]'}


def test_an_explicit_provider_is_kept_and_no_default_provider_is_made() -> None:
    def program() -> None:
        east = aws.Provider("east", region="us-east-1")
        aws.s3.Bucket("data", opts=pulumi.ResourceOptions(provider=east))

    result = run_program(program, project="demo", stack="dev", config=CONFIG)
    assert [p.name for p in result.of_type("pulumi:providers:aws")] == ["east"]
    assert result.one("aws:s3/bucket:Bucket").provider.startswith(result.one("pulumi:providers:aws").urn + "::")


class Remote(pulumi.ComponentResource):
    vpc_id: pulumi.Output[str]

    def __init__(self, name: str) -> None:
        super().__init__("awsx:ec2:Vpc", name, {"vpc_id": None, "cidr_block": "10.0.0.0/16"}, remote=True)


def test_a_remote_component_has_unknown_outputs_and_the_program_goes_on() -> None:
    seen: list[str] = []

    def program() -> None:
        vpc = Remote("net")
        vpc.vpc_id.apply(lambda v: seen.append(v))  # never runs: unknown in preview, as in `pulumi preview`
        aws.ec2.SecurityGroup("sg", vpc_id=vpc.vpc_id)

    result = run_program(program, project="demo", stack="dev", config=CONFIG)
    component = result.one("awsx:ec2:Vpc")
    assert not component.custom and component.inputs["cidr_block"] == "10.0.0.0/16"
    assert seen == []
    assert result.one("aws:ec2/securityGroup:SecurityGroup").inputs["vpcId"] == UNKNOWN


def test_data_residency_sees_the_default_providers_region() -> None:
    from pathlib import Path

    from aiinfra.policy_eval import evaluate_pack

    result = run_program(lambda: aws.s3.Bucket("data"), project="demo", stack="dev", config=CONFIG)
    report = evaluate_pack(Path(__file__).resolve().parents[2] / "policies", [r.to_json() for r in result.resources],
                           config={"data-residency": {"enforcementLevel": "mandatory", "allowedRegions": ["eu-west-1"]}},
                           project="demo", stack="dev")
    found = [(v.policy, v.urn.rsplit("::", 1)[-1], v.enforcementLevel) for v in report.violations if v.policy == "data-residency"]
    assert found == [("data-residency", "data", "mandatory")]


def test_a_read_keeps_the_id_it_was_asked_for_and_its_state_stays_unknown() -> None:
    """The engine answers a read with the ID the provider read; what the resource holds is unknown offline."""
    def program() -> None:
        vpc = aws.ec2.Vpc.get("shared", "vpc-0123")
        aws.ec2.SecurityGroup("sg", vpc_id=vpc.id, description=vpc.cidr_block.apply(lambda cidr: f"in {cidr}"))

    result = run_program(program, project="demo", stack="dev", config=CONFIG)
    group = result.one("aws:ec2/securityGroup:SecurityGroup")
    assert group.inputs["vpcId"] == "vpc-0123"
    assert group.inputs["description"] == UNKNOWN  # the apply does not run on the unknown CIDR
    assert not result.of_type("aws:ec2/vpc:Vpc"), "a read creates nothing"


def test_urns_follow_the_engines_rule_for_nesting_and_agree_with_create_urn() -> None:
    """The engine (sdk/go/common/resource/urn.go, NewURN) prefixes a resource's type with its parent's whole
    qualified type and gives children of the root stack no prefix; aliases and `pulumi.create_urn` assume the same.
    The SDK's own MockMonitor would give `pulumi:pulumi:Stack$outer:index:Outer` and `inner:index:Inner$...`."""
    def program() -> None:
        outer = pulumi.ComponentResource("outer:index:Outer", "outer")
        inner = pulumi.ComponentResource("inner:index:Inner", "inner", opts=pulumi.ResourceOptions(parent=outer))
        aws.s3.Bucket("data", opts=pulumi.ResourceOptions(parent=inner))
        pulumi.export("data", pulumi.create_urn("data", "aws:s3/bucket:Bucket", parent=inner))
        pulumi.export("outer", pulumi.create_urn("outer", "outer:index:Outer"))

    result = run_program(program, project="demo", stack="dev", config=CONFIG)
    outer = result.one("outer:index:Outer", "outer")
    assert outer.urn == "urn:pulumi:dev::demo::outer:index:Outer::outer"
    assert result.one("inner:index:Inner", "inner").urn == "urn:pulumi:dev::demo::outer:index:Outer$inner:index:Inner::inner"
    bucket = result.one("aws:s3/bucket:Bucket", "data")
    assert bucket.urn == "urn:pulumi:dev::demo::outer:index:Outer$inner:index:Inner$aws:s3/bucket:Bucket::data"
    assert result.one("pulumi:pulumi:Stack").urn == "urn:pulumi:dev::demo::pulumi:pulumi:Stack::demo-dev"
    assert outer.parent == result.one("pulumi:pulumi:Stack").urn
    assert result.outputs == {"data": bucket.urn, "outer": outer.urn}


def test_stack_policies_see_a_previews_outputs_and_every_resource(tmp_path) -> None:  # noqa: ANN001
    """AnalyzeStack gets outputs (pulumi/pulumi step_generator.go, AnalyzeResources): a bucket's encryption, which S3
    computes when the program sets none, is unknown in a preview, so only a separate encryption configuration counts.
    Components are sent too, with their children pointing at them."""
    from pathlib import Path

    from aiinfra.plan.outputs import preview_outputs
    from aiinfra.policy_eval import evaluate_pack

    def program() -> None:
        group = pulumi.ComponentResource("acme:index:Data", "data")
        aws.s3.Bucket("plain", opts=pulumi.ResourceOptions(parent=group, aliases=[pulumi.Alias(name="old-plain")]))

    result = run_program(program, project="demo", stack="dev", config=CONFIG)
    bucket = result.one("aws:s3/bucket:Bucket")
    outputs = preview_outputs(bucket.type, bucket.inputs)
    assert outputs["serverSideEncryptionConfiguration"] == UNKNOWN and outputs["versioning"] == UNKNOWN
    assert "tags" not in outputs  # an Optional output the program did not set stays absent
    # A manifest of the pack reporting what AnalyzeStack received.
    pack = probe_pack(tmp_path,
        "def check(args, report):\n"
        "    for r in args.resources:\n"
        "        parent = r.parent.urn.rsplit('::', 1)[-1] if r.parent else '-'\n"
        "        try:\n"
        "            sse = repr(r.props.get('serverSideEncryptionConfiguration', 'absent'))\n"
        "        except Exception:  # the SDK raises on reading a value unknown in a preview\n"
        "            sse = 'unknown'\n"
        "        renamed = any(a.endswith('::old-plain') for a in r.opts.aliases)\n"
        "        report(f'{r.resource_type} parent={parent} sse={sse} renamed={renamed}', r.urn)\n")
    report = evaluate_pack(pack, [r.to_json() for r in result.resources], project="demo", stack="dev")
    messages = [v.message.splitlines()[-1].strip() for v in report.violations]
    assert "acme:index:Data parent=demo-dev sse='absent' renamed=False" in messages, messages
    assert "aws:s3/bucket:Bucket parent=data sse=unknown renamed=True" in messages, messages
    found = [v.policy for v in evaluate_pack(Path(__file__).resolve().parents[2] / "policies",
                                             [r.to_json() for r in result.resources], project="demo", stack="dev",
                                             config={"aws-s3-bucket-default-encryption": "mandatory"}).violations]
    assert "aws-s3-bucket-default-encryption" in found


def test_the_pack_gets_the_stack_config_and_organization_as_from_the_engine(tmp_path, capsys) -> None:  # noqa: ANN001
    """constructEnv (analyzer_plugin.go) gives the pack PULUMI_CONFIG, so `pulumi.Config()` works in a policy, and
    ConfigureStack the config's secret keys and the organization; a secure value stays a placeholder offline."""
    from aiinfra.cli import main

    program = tmp_path / "prog"
    program.mkdir()
    (program / "Pulumi.yaml").write_text("name: demo\nruntime: python\n")
    (program / "Pulumi.dev.yaml").write_text("config:\n  demo:tier: gold\n  demo:token:\n    secure: AAABAxyz\n")
    (program / "__main__.py").write_text("import pulumi\npulumi.ComponentResource('demo:index:Thing', 'thing')\n")
    pack = probe_pack(tmp_path,
        "def check(args, report):\n"
        "    tier = pulumi.Config('demo').get('tier')\n"
        "    report(f\"tier={tier} org={os.environ['PULUMI_ORGANIZATION']} token={pulumi.Config('demo').get('token')}\")\n")
    out = tmp_path / "plan.json"
    assert main(["plan", "--program", str(program), "--stack", "acme/dev", "--policy-pack", str(pack), "--json", str(out), "-q"]) == 0
    [violation] = json.loads(out.read_text())["policy"]["violations"]
    assert violation["message"].splitlines()[-1].strip() == "tier=gold org=acme token=[secret]"


def test_the_pack_gets_the_stack_tags_the_cli_derives(tmp_path, capsys) -> None:  # noqa: ANN001
    """GetEnvironmentTagsForCurrentStack (pkg/backend/stack.go): project name, runtime and description, then the
    `pulumi:tags` config object, the stack file's over the project file's; a tag that is not a string is refused."""
    from aiinfra.cli import main

    program = tmp_path / "prog"
    program.mkdir()
    (program / "Pulumi.yaml").write_text("name: demo\nruntime: python\ndescription: GPU jobs\n"
                                         "config:\n  pulumi:tags:\n    value: {team: ml}\n")
    (program / "Pulumi.dev.yaml").write_text("config: {}\n")
    (program / "Pulumi.prod.yaml").write_text("config:\n  pulumi:tags: {team: platform, tier: gold}\n")
    (program / "Pulumi.bad.yaml").write_text("config:\n  pulumi:tags: {replicas: 3}\n")
    (program / "__main__.py").write_text("import pulumi\npulumi.ComponentResource('demo:index:Thing', 'thing')\n")
    pack = probe_pack(tmp_path,
        "def check(args, report):\n"
        "    report(' '.join(f'{k}={v}' for k, v in sorted(args.stack_tags.items())))\n")
    seen = {}
    for stack in ("dev", "prod"):
        out = tmp_path / f"{stack}.json"
        assert main(["plan", "--program", str(program), "--stack", stack, "--policy-pack", str(pack), "--json", str(out), "-q"]) == 0
        [violation] = json.loads(out.read_text())["policy"]["violations"]
        seen[stack] = violation["message"].splitlines()[-1].strip()
    common = "pulumi:description=GPU jobs pulumi:project=demo pulumi:runtime=python"
    assert seen == {"dev": f"{common} team=ml", "prod": f"{common} team=platform tier=gold"}
    capsys.readouterr()
    assert main(["plan", "--program", str(program), "--stack", "bad", "--no-policy", "-q"]) == 1
    assert capsys.readouterr().err == f"error: {program / 'Pulumi.bad.yaml'}: pulumi:tags[replicas] must be a string, got 3\n"
    # A string that holds JSON is no object, for the CLI either (Value.ToObject of a string is the string).
    (program / "Pulumi.bad.yaml").write_text('config:\n  pulumi:tags: \'{"team": "ml"}\'\n')
    assert main(["plan", "--program", str(program), "--stack", "bad", "--no-policy", "-q"]) == 1
    assert capsys.readouterr().err == (f"error: {program / 'Pulumi.bad.yaml'}: pulumi:tags must be an object of strings, "
                                       "got '{\"team\": \"ml\"}'\n")
