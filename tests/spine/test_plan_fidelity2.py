"""`aiinfra plan` as the Pulumi CLI and engine behave (pulumi/pulumi at the SDK version in uv.lock): default providers
that config disables, remote components' providers, the language host's settings, stack files the CLI accepts and
placeholder values shaped like the cloud's."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pulumi
import pulumi_aws as aws
import pytest
from helpers import write_program

from aiinfra.cli import main
from aiinfra.plan.default_providers import default_provider_name
from aiinfra.plan.program import plan_stack
from aiinfra.plan.project import ProjectError, load_project, load_stack_config
from aiinfra.plan.runtime import UNKNOWN, run_program

AWS_VERSION = aws._utilities.get_version()


def _plan_err(program: Path, capsys: pytest.CaptureFixture[str], stack: str = "dev", code: int = 1) -> str:
    assert main(["plan", "--program", str(program), "--stack", stack, "--no-policy", "-q"]) == code
    return capsys.readouterr().err


# 2. pulumi:disable-default-providers ------------------------------------------------------------------------------

DISABLED = "config:\n  aws:region: us-east-1\n  pulumi:disable-default-providers: {value}\n"


@pytest.mark.parametrize("value", ['["*"]', '["aws"]', '[" aws "]'])
def test_a_disabled_default_provider_fails_a_resource_that_names_no_provider(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str) -> None:
    """default_providers.go shouldDenyRequest ("*" or the package, trimmed), then step_generator.go with
    diag.GetDefaultProviderDenied: the resource's URN. A resource with an explicit provider plans."""
    write_program(tmp_path, "import pulumi, pulumi_aws as aws\np = aws.Provider('p', region='us-east-1')\n"
                  "aws.s3.Bucket('ok', opts=pulumi.ResourceOptions(provider=p))\naws.s3.Bucket('forgot')\n",
                  DISABLED.format(value=value))
    assert _plan_err(tmp_path, capsys) == ("error: Default provider for 'aws' disabled. "
                                           "'urn:pulumi:dev::x::aws:s3/bucket:Bucket::forgot' must use an explicit provider.\n")


def test_a_disabled_default_provider_fails_invokes_reads_and_remote_components(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """source_eval.go: an invoke names its token, a remote component its type, a read its type (twice, as the engine
    formats it); the `pulumi` package (StackReference) is never refused, nor another package."""
    for source, what in [
        ("aws.get_availability_zones()", "'aws' disabled. 'aws:index/getAvailabilityZones:getAvailabilityZones'"),
        ("pulumi.ComponentResource('aws:index:Thing', 't', {}, None, remote=True)", "'aws' disabled. 'aws:index:Thing'"),
        ("aws.ec2.Vpc.get('v', 'vpc-1')", "'aws:ec2/vpc:Vpc' disabled. 'aws:ec2/vpc:Vpc'"),
    ]:
        write_program(tmp_path, f"import pulumi, pulumi_aws as aws\n{source}\n", DISABLED.format(value='["aws"]'))
        assert _plan_err(tmp_path, capsys) == f"error: Default provider for {what} must use an explicit provider.\n"
    write_program(tmp_path, "import pulumi, pulumi_aws as aws\npulumi.StackReference('acme/net/prod')\n"
                  "aws.s3.Bucket('b')\n", DISABLED.format(value='["gcp", "*kubernetes"]'))
    assert len(plan_stack(load_project(tmp_path), "dev").of_type("aws:s3/bucket:Bucket")) == 1


@pytest.mark.parametrize(("value", "message"), [
    ("[1]", "pulumi:disable-default-providers[0] must be a string, got 1"),
    ("not-json", "Failed to parse not-json: "),
])
def test_a_malformed_disable_default_providers_value_is_the_engines_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, message: str) -> None:
    write_program(tmp_path, "import pulumi_aws as aws\naws.s3.Bucket('b')\n", DISABLED.format(value=value))
    err = _plan_err(tmp_path, capsys)
    assert err.startswith(f"error: {message}") and err.count("\n") == 1


# 3, 4. What the Python language host gives the program ------------------------------------------------------------

@pytest.mark.parametrize(("main_setting", "entry", "argv"), [("src/", "src/__main__.py", ["."]),
                                                              ("src/app.py", "src/app.py", ["app.py"])])
def test_the_program_sees_the_root_directory_and_argv_the_language_host_gives(
        tmp_path: Path, main_setting: str, entry: str, argv: list[str]) -> None:
    """pulumi-language-python-exec: --root_directory (the project root) for get_root_directory(), and
    `sys.argv = [PROGRAM] + ARGS` with the entry point getPwdMain gives ("." or the file's name); aiinfra's own argv
    is back afterwards."""
    (tmp_path / "Pulumi.yaml").write_text(f"name: x\nruntime: python\nmain: {main_setting}\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "src").mkdir()
    (tmp_path / entry).write_text("import sys, pulumi\npulumi.export('root', pulumi.get_root_directory())\n"
                                  "pulumi.export('argv', sys.argv)\n")
    before = list(sys.argv)
    assert plan_stack(load_project(tmp_path), "dev").outputs == {"root": str(tmp_path), "argv": argv}
    assert sys.argv == before


# 5. A stack without a stack file ----------------------------------------------------------------------------------

def test_a_stack_without_a_stack_file_plans_with_empty_config_and_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """workspace/loaders.go LoadProjectStack: a missing file is empty config. The warning names the stacks that have
    a file, so a mistyped name shows."""
    write_program(tmp_path, "import pulumi\npulumi.export('x', pulumi.Config().get('x', 'unset'))\n")
    out = tmp_path / "plan.json"
    assert main(["plan", "--program", str(tmp_path), "--stack", "prod", "--no-policy", "-q", "--json", str(out)]) == 0
    assert capsys.readouterr().err == (f"warning: stack 'prod' has no config file {tmp_path / 'Pulumi.prod.yaml'}: "
                                       "planning it with empty config, as `pulumi preview` does (stacks with a file "
                                       "there: dev)\n")
    assert json.loads(out.read_text())["outputs"] == {"x": "unset"}


@pytest.mark.parametrize(("config", "warning"), [
    ("  n:\n", 'key "n" in Pulumi.dev.yaml; the CLI treats it as an empty string "" (a future Pulumi will read null): '
                'set it to "" to avoid this warning'),
    ("  n: null\n  p:m: ~\n  q:\n", 'keys "n", "p:m" and "q" in Pulumi.dev.yaml; the CLI treats each as an empty '
                                       'string "" (a future Pulumi will read null): set them to "" to avoid this warning'),
])
def test_a_key_with_no_value_is_the_empty_string_and_the_plan_warns_as_the_cli_does(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], config: str, warning: str) -> None:
    """yaml.v3 leaves the CLI's config.Value unset for a null node: the program reads "" (not "null", what a null
    inside an object stays), and workspace/loaders.go checkForEmptyConfig warns."""
    write_program(tmp_path, "import pulumi\nc = pulumi.Config()\npulumi.export('n', c.get('n'))\n"
                            "pulumi.export('o', c.get('o'))\n", stack_file=f"config:\n{config}  o: {{a: null}}\n")
    out = tmp_path / "plan.json"
    assert main(["plan", "--program", str(tmp_path), "--stack", "dev", "--no-policy", "-q", "--json", str(out)]) == 0
    assert capsys.readouterr().err == f"warning: stack 'dev': no value for configuration {warning}\n"
    assert json.loads(out.read_text())["outputs"] == {"n": "", "o": '{"a":null}'}


def test_a_key_with_no_value_in_a_json_stack_file_is_null(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """encoding/json calls config.Value's UnmarshalJSON for a null too (yaml.v3 does not), which makes it "null"; the
    CLI still warns."""
    write_program(tmp_path, "import pulumi\npulumi.export('n', pulumi.Config().get('n'))\n")
    for name in ("Pulumi.yaml", "Pulumi.dev.yaml"):
        (tmp_path / name).unlink()
    (tmp_path / "Pulumi.json").write_text('{"name": "x", "runtime": "python"}')
    (tmp_path / "Pulumi.dev.json").write_text('{"config": {"x:n": null}}')
    out = tmp_path / "plan.json"
    assert main(["plan", "--program", str(tmp_path), "--stack", "dev", "--no-policy", "-q", "--json", str(out)]) == 0
    assert capsys.readouterr().err == ("warning: stack 'dev': no value for configuration key \"x:n\" in Pulumi.dev.json; "
                                       'the CLI treats it as "null" (from a JSON stack file) (a future Pulumi will read '
                                       'null): set it to "" to avoid this warning\n')
    assert json.loads(out.read_text())["outputs"] == {"n": "null"}


@pytest.mark.parametrize(("stack", "message"), [
    ("dev prod", "a stack name may only contain alphanumeric, hyphens, underscores, or periods: invalid character ' ' "
                 "at position 3"),
    ("x" * 101, "a stack name cannot exceed 100 characters"),
])
def test_an_invalid_stack_name_is_still_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], stack: str,
                                                message: str) -> None:
    """tokens.ParseStackName, which the CLI applies before it looks for the stack."""
    write_program(tmp_path, "raise SystemExit('the program ran')\n")
    assert _plan_err(tmp_path, capsys, stack=stack) == f"error: --stack: stack {stack!r}: {message}\n"
    with pytest.raises(ProjectError, match="a stack name"):
        load_stack_config(load_project(tmp_path), stack)


# 6. An inline ESC environment -------------------------------------------------------------------------------------

INLINE = """environment:
  imports:
    - team/shared
    - team/db: {merge: false}
  values:
    environmentVariables: {TOKEN: x}
    pulumiConfig:
      aws:region: us-west-2
      size: large
      tags: {team: env, tier: gold}
      url: https://${db.host}/x
      password: {fn::secret: abc}
config:
  x:size: small
  x:tags: {team: stack}
"""


def test_an_inline_environment_merges_its_plain_config_under_the_stack_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """config.go mergeConfig: the environment's pulumiConfig under the stack file's values (objects key by key,
    config.Value.Merge). What ESC must evaluate, what it imports and its environment variables are reported."""
    write_program(tmp_path, "import pulumi\n", INLINE)
    config, _ = load_stack_config(load_project(tmp_path), "dev")
    assert config == {"x:size": "small", "x:tags": '{"team":"stack","tier":"gold"}', "aws:region": "us-west-2"}
    assert _plan_err(tmp_path, capsys, code=0).splitlines() == [
        "warning: stack 'dev' imports Pulumi ESC environments (team/shared, team/db); an offline plan cannot open "
        "them, so the config they provide is missing",
        "warning: stack 'dev': its inline environment's pulumiConfig url, password need Pulumi ESC to evaluate "
        "(${...} interpolation, fn:: functions), which an offline plan cannot do, so they are missing; its plain "
        "values are applied",
        "warning: stack 'dev': its inline environment's environmentVariables (set in the program's environment by "
        "the CLI) are not applied offline"]


# 7. Remote components ---------------------------------------------------------------------------------------------

def test_a_remote_component_gets_its_packages_default_provider(tmp_path: Path) -> None:
    """source_eval.go resolves a provider for `custom || remote`: the eks component's default provider is recorded,
    configured from the stack's eks:* config, with the version the SDK sent."""
    write_program(tmp_path, "import pulumi\nclass Cluster(pulumi.ComponentResource):\n"
                  "    def __init__(self, name, opts=None):\n"
                  "        super().__init__('eks:index:Cluster', name, {'vpcId': 'v'}, opts, remote=True)\n"
                  "Cluster('c', pulumi.ResourceOptions(version='3.0.1'))\n", "config:\n  eks:foo: bar\n")
    result = plan_stack(load_project(tmp_path), "dev")
    provider = result.one("pulumi:providers:eks")
    assert (provider.name, provider.inputs) == ("default_3_0_1", {"version": "3.0.1", "foo": "bar"})
    assert result.one("eks:index:Cluster").provider == f"{provider.urn}::{UNKNOWN}"


def test_kubernetes_remote_components_and_kustomize_say_their_objects_are_missing(tmp_path: Path) -> None:
    write_program(tmp_path, "import pulumi_kubernetes as k8s\nk8s.helm.v4.Chart('web', chart='oci://example/web')\n"
                  "k8s.kustomize.v2.Directory('kv2', directory='k')\nk8s.kustomize.Directory('kv1', directory='k')\n")
    result = plan_stack(load_project(tmp_path), "dev")
    provider = result.one("pulumi:providers:kubernetes")
    assert {r.name: r.provider for r in result.resources if r.type.startswith("kubernetes:") and r.name != "kv1"} == {
        "web": f"{provider.urn}::{UNKNOWN}", "kv2": f"{provider.urn}::{UNKNOWN}"}
    warnings = {d.urn.rpartition("::")[2] or "stack": d.message for d in result.diagnostics if d.severity == "warning"}
    assert warnings == {
        "web": "kubernetes:helm.sh/v4:Chart 'web': the Kubernetes provider plugin builds its objects, which an offline "
               "plan cannot run, so they are missing from this plan and from the policy checks; helm.v3.Release (one "
               "resource, the chart's values as inputs) plans fully",
        "kv2": "kubernetes:kustomize/v2:Directory 'kv2': the Kubernetes provider plugin builds its objects, which an "
               "offline plan cannot run, so they are missing from this plan and from the policy checks",
        "stack": "kustomize.Directory 'k': an offline plan cannot run kustomize, so its objects are missing from this "
                 "plan and from the policy checks"}


# 8. Parsing getters on a secure value -----------------------------------------------------------------------------

@pytest.mark.parametrize(("getter", "instead"), [("require_object", "require_secret_object"),
                                                 ("get_object", "get_secret_object")])
def test_reading_a_secure_value_as_an_object_names_the_secret_getter(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], getter: str, instead: str) -> None:
    write_program(tmp_path, f"import pulumi\npulumi.Config().{getter}('creds')\n",
                  "config:\n  x:creds:\n    secure: v1:abc\n")
    assert _plan_err(tmp_path, capsys) == (
        f"error: configuration 'x:creds' is a secure value, which an offline plan does not decrypt, so {getter}() has "
        f"nothing to parse; read it with {instead}('creds'), which keeps it secret (and unknown in the plan)\n")


# 9. Project file forms the CLI accepts ----------------------------------------------------------------------------

def test_config_as_a_directory_is_the_older_spelling_of_stack_config_dir(tmp_path: Path) -> None:
    """project.go RewriteConfigPathIntoStackConfigDir; with both set the CLI refuses the project."""
    (tmp_path / "Pulumi.yaml").write_text("name: x\nruntime: python\nconfig: cfg\n")
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "Pulumi.dev.yaml").write_text("config:\n  x:size: '1'\n")
    (tmp_path / "__main__.py").write_text("import pulumi\npulumi.export('size', pulumi.Config().get('size'))\n")
    assert plan_stack(load_project(tmp_path), "dev").outputs == {"size": "1"}
    (tmp_path / "Pulumi.yaml").write_text("name: x\nruntime: python\nconfig: cfg\nstackConfigDir: cfg\n")
    with pytest.raises(ProjectError) as caught:
        load_project(tmp_path)
    assert str(caught.value) == (f"{tmp_path / 'Pulumi.yaml'}: Should not use both config and stackConfigDir to "
                                 "define the stack directory. Use only stackConfigDir instead.")


def test_null_main_and_stack_config_dir_and_byte_order_marks_are_accepted(tmp_path: Path) -> None:
    """The project schema allows null for main and stackConfigDir (the project's directory then); the CLI drops a
    UTF-8 byte order mark from every project and stack file (loaders.go readFileStripUTF8BOM)."""
    write_program(tmp_path, "import pulumi\npulumi.export('size', pulumi.Config().get('size'))\n",
                  "config:\n  x:size: '2'\n")
    (tmp_path / "Pulumi.yaml").write_text("name: x\nruntime: python\nmain:\nstackConfigDir:\n")
    assert plan_stack(load_project(tmp_path), "dev").outputs == {"size": "2"}
    (tmp_path / "Pulumi.yaml").unlink()
    (tmp_path / "Pulumi.json").write_text('\ufeff{"name": "x", "runtime": "python"}', encoding="utf-8")
    (tmp_path / "Pulumi.dev.json").write_text('\ufeff{"config": {"x:size": "3"}}', encoding="utf-8")
    assert plan_stack(load_project(tmp_path), "dev").outputs == {"size": "3"}


# 10. pulumi:tags in Pulumi.yaml -----------------------------------------------------------------------------------

def test_the_projects_pulumi_tags_reach_the_program_like_any_namespaced_value(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """config.go mergeConfig merges every project key, `pulumi:tags` too; Project.Validate holds it to the rules of
    a key of another namespace."""
    write_program(tmp_path, "import pulumi\npulumi.export('tags', pulumi.Config('pulumi').get('tags'))\n")
    (tmp_path / "Pulumi.yaml").write_text("name: x\nruntime: python\nconfig:\n  pulumi:tags:\n    value: {team: ml}\n")
    assert plan_stack(load_project(tmp_path), "dev").outputs == {"tags": '{"team":"ml"}'}
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  pulumi:tags: {team: web}\n")  # the stack file's wins
    assert plan_stack(load_project(tmp_path), "dev").outputs == {"tags": '{"team":"web"}'}
    (tmp_path / "Pulumi.yaml").write_text("name: x\nruntime: python\nconfig:\n  pulumi:tags:\n    default: {team: ml}\n")
    assert "Configuration key 'pulumi:tags' is not namespaced by the project and should not define a default value" \
        in _plan_err(tmp_path, capsys)


# 11. Provider versions and default provider names -----------------------------------------------------------------

@pytest.mark.parametrize(("version", "url", "name"), [
    ("", "", "default"),
    ("7.51.1", "", "default_7_51_1"),
    ("1.0.0-alpha.1+build.5", "", "default_1_0_0_alpha_1_build_5"),
    ("1.0.0-rc-1", "", "default_1_0_0_rc-1"),
    ("2.1.0", "https://get.example.com/plugins/", "default_2_1_0_https_/get.example.com/plugins"),
])
def test_the_default_provider_name_is_the_engines(version: str, url: str, name: str) -> None:
    """ProviderRequest.DefaultName (pkg/resource/deploy/providers/provider.go): each pre-release and build identifier,
    then the download URL (one trailing "/" trimmed) as a QName (tokens.IntoQName)."""
    assert default_provider_name("aws", version, url) == name


def test_explicit_providers_record_their_version_and_a_bad_version_fails(tmp_path: Path) -> None:
    """source_eval.go sets the request's version on an explicit provider's inputs (SetProviderVersion); a version that
    is not semantic fails the registration (parseProviderRequest)."""
    def program() -> None:
        aws.Provider("east", region="us-east-1")
        aws.s3.Bucket("b", opts=pulumi.ResourceOptions(plugin_download_url="https://get.example.com/p"))

    result = run_program(program, project="x", stack="dev")
    assert result.one("pulumi:providers:aws", "east").inputs["version"] == AWS_VERSION
    assert result.one("aws:s3/bucket:Bucket").provider.startswith(
        f"urn:pulumi:dev::x::pulumi:providers:aws::default_{AWS_VERSION.replace('.', '_')}_https_/get.example.com/p::")
    with pytest.raises(pulumi.RunError, match=r"the aws version 'v7' is not a semantic version: v7 is not valid SemVer"):
        run_program(lambda: aws.s3.Bucket("b", opts=pulumi.ResourceOptions(version="v7")), project="x", stack="dev")


def test_a_diff_against_a_base_without_explicit_provider_versions_shows_no_change() -> None:
    """Bases planned before explicit providers recorded their version hold none: that is no settings change; a version
    that differs from the base's is one (the engine updates the provider)."""
    from aiinfra.plan.diff import diff_plans

    provider = {"urn": "urn:pulumi:dev::x::pulumi:providers:aws::east", "type": "pulumi:providers:aws", "name": "east",
                "parent": "", "inputs": {"region": "us-east-1"}}
    head = {"stack": "dev", "resources": [{**provider, "inputs": {"region": "us-east-1", "version": "7.51.1"}}]}
    assert diff_plans({"stack": "dev", "resources": [provider]}, head)["counts"]["changed"] == 0
    older = {**provider, "inputs": {"region": "us-east-1", "version": "7.50.0"}}
    assert diff_plans({"stack": "dev", "resources": [older]}, head)["counts"]["changed"] == 1


# 12. Errors with no frame in the program --------------------------------------------------------------------------

@pytest.mark.parametrize(("source", "error"), [
    ("import pulumi\nasync def f():\n    raise RuntimeError('async boom')\n"
     "pulumi.export('x', pulumi.Output.from_input(f()))\n", "RuntimeError: async boom"),
    ("import pulumi_aws as aws\nb = aws.s3.Bucket('b', bucket='x')\n"
     "aws.s3.Bucket('c', tags=b.bucket.apply(lambda v: {'a': object()}))\n",
     "ValueError: While processing resource: 'c', type: 'aws:s3/bucket:Bucket'"),
])
def test_an_error_with_no_frame_in_the_program_prints_no_planner_frames(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, error: str) -> None:
    write_program(tmp_path, source)
    err = _plan_err(tmp_path, capsys)
    assert err.startswith(f"error: the program of stack 'dev' failed: {error}") and "Traceback" not in err


# 13. Placeholder shapes -------------------------------------------------------------------------------------------

def test_placeholders_are_shaped_like_project_numbers_and_each_services_arns() -> None:
    """A GCP project number is digits (service agents are service-<number>@...); an ARN names the invoke's service
    and resource type, or the kind its field names (docs.aws.amazon.com/IAM/latest/UserGuide/reference-arns.html)."""
    import pulumi_gcp as gcp

    def program() -> None:
        pulumi.export("number", gcp.organizations.get_project(project_id="acme").number)
        pulumi.export("key", aws.kms.get_key(key_id="alias/data").arn)
        cluster = aws.eks.get_cluster(name="gpu")
        pulumi.export("cluster", [cluster.arn, cluster.role_arn])
        pulumi.export("bucket", aws.s3.get_bucket(bucket="logs").arn)

    outputs = run_program(program, project="x", stack="dev", config={"aws:region": "eu-west-1"}).outputs
    assert outputs["number"].isdigit()
    assert outputs["key"] == "arn:aws:kms:eu-west-1:123456789012:key/placeholder-arn"
    assert outputs["cluster"] == ["arn:aws:eks:eu-west-1:123456789012:cluster/placeholder-arn",
                                  "arn:aws:iam::123456789012:role/placeholder-roleArn"]
    assert outputs["bucket"] == "arn:aws:s3:::placeholder-arn"
