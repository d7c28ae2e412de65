"""Project-level config (Pulumi.yaml `config:`) applies to every stack, under the stack file's own values."""

from __future__ import annotations

from pathlib import Path

import pytest

from aiinfra.plan.program import plan_stack
from aiinfra.plan.project import ProjectError, load_project, load_stack_config
from aiinfra.plan.echo import SIG as SECRET_SIG

PROGRAM = Path(__file__).resolve().parents[1] / "data" / "programs" / "project-config"


def test_defaults_reach_the_program_and_the_stack_file_wins() -> None:
    result = plan_stack(load_project(PROGRAM), "demo")
    deployment = result.one("kubernetes:apps/v1:Deployment")
    spec = deployment.inputs["spec"]
    assert spec["replicas"] == 2  # `type: integer, default: 2`
    assert spec["selector"]["matchLabels"] == {"app": "web", "team": "web"}  # an object default
    assert spec["template"]["spec"]["containers"][0]["image"] == "nginx:1.29"  # the stack file overrides the default
    assert len(result.of_type("kubernetes:core/v1:Service")) == 1  # `type: boolean, default: true`
    assert result.outputs["namespace"] == "web"  # a namespaced key's `value`
    assert result.outputs["region"] == "eu-west-1"  # short form: a plain value
    assert result.outputs["reasoning"] == "off"  # YAML as the CLI reads it: `off` is a string, not false


def test_secret_default_stays_secret() -> None:
    result = plan_stack(load_project(PROGRAM), "demo")
    assert result.outputs["token"][SECRET_SIG]


def test_config_map_has_the_engine_form() -> None:
    config, secrets = load_stack_config(load_project(PROGRAM), "demo")
    assert config["project-config-demo:replicas"] == "2"
    assert config["project-config-demo:exposeService"] == "true"
    assert config["project-config-demo:labels"] == '{"team":"web"}'  # Go's json.Marshal: compact
    assert config["pulumi:tags"] == '{"pulumi:template":"python"}'  # merged like any namespaced value (mergeConfig)
    assert secrets == ["project-config-demo:apiToken"]


def test_declared_key_without_default_is_missing_before_the_program_runs(tmp_path: Path) -> None:
    # This test used to expect an empty config map: the key was left to the program's require(). The Pulumi CLI
    # refuses the stack before the program runs (pkg/workspace/config.go mergeConfig), and so does the plan now.
    (tmp_path / "Pulumi.yaml").write_text("name: p\nruntime: python\nconfig:\n  dbPassword:\n    type: string\n"
                                          "    secret: true\n  region:\n    description: where\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text("raise SystemExit('the program ran')\n")
    with pytest.raises(ProjectError) as caught:
        plan_stack(load_project(tmp_path), "dev")
    assert str(caught.value) == (
        f"{tmp_path / 'Pulumi.dev.yaml'}: Stack 'dev' is missing configuration values 'dbPassword' and 'region' "
        f"({tmp_path / 'Pulumi.yaml'} declares them with no default: set them in the stack file, e.g. with "
        "`pulumi config set`)")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  p:region: eu-west-1\n  dbPassword:\n    secure: AAAB\n")
    assert load_stack_config(load_project(tmp_path), "dev") == (
        {"p:region": "eu-west-1", "p:dbPassword": "[secret]"}, ["p:dbPassword"])


def _project_with(tmp_path: Path, config: str, stack: str = "config: {}\n") -> Path:
    (tmp_path / "Pulumi.yaml").write_text(f"name: p\nruntime: python\nconfig:\n{config}")
    (tmp_path / "Pulumi.dev.yaml").write_text(stack)
    return tmp_path


@pytest.mark.parametrize(("config", "stack", "where"), [
    # The stack file holds a typed secret key in plain text.
    ("  token:\n    type: string\n    secret: true\n", "config:\n  p:token: hunter2\n", "{stack} has it"),
    # A default is plain text too, so a typed secret key cannot have one.
    ("  token:\n    type: string\n    secret: true\n    default: hunter2\n", "config: {}\n",
     "its default in Pulumi.yaml is"),
])
def test_a_typed_secret_key_must_be_encrypted(tmp_path: Path, config: str, stack: str, where: str) -> None:
    root = _project_with(tmp_path, config, stack)
    stack_file = root / "Pulumi.dev.yaml"
    with pytest.raises(ProjectError) as caught:
        load_stack_config(load_project(root), "dev")
    assert str(caught.value) == (
        f"Stack 'dev' with configuration key 'token' must be encrypted as it's secret "
        f"({where.format(stack=stack_file)} in plain text; allowed: a `secure:` value in {stack_file}, as "
        "`pulumi config set --secret token` writes it)")
    assert "hunter2" not in str(caught.value)


def test_an_untyped_secret_key_takes_plain_text_as_the_cli_does(tmp_path: Path) -> None:
    # config.go checks `secret: true` only for an explicitly typed key; the default is then plain, unmarked config.
    root = _project_with(tmp_path, "  token:\n    secret: true\n    default: abc\n")
    assert load_stack_config(load_project(root), "dev") == ({"p:token": "abc"}, [])


@pytest.mark.parametrize(("declaration", "stack_value", "message"), [
    ("type: integer", "three", "must be of type 'integer' ({stack} sets it to 'three')"),
    ("type: integer", "1.5", "must be of type 'integer' ({stack} sets it to 1.5)"),
    ("type: boolean", "yes", "must be of type 'boolean' ({stack} sets it to 'yes')"),
    ("type: object", "[1]", "must be of type 'object' ({stack} sets it to [1])"),
    ("type: array\n    items:\n      type: string", "[a, 2]",
     "must be of type 'array<string>' ({stack} sets it to ['a', 2])"),
    ("type: array\n    items:\n      type: integer", "{a: 1}",
     "must be of type 'array<integer>' ({stack} sets it to {'a': 1})"),
    ("type: integer", "", "must be of type 'integer' ({stack} sets it to '')"),  # no value: the empty string
])
def test_a_stack_value_of_the_wrong_type_is_refused(tmp_path: Path, declaration: str, stack_value: str,
                                                    message: str) -> None:
    root = _project_with(tmp_path, f"  size:\n    {declaration}\n", f"config:\n  p:size: {stack_value}\n")
    with pytest.raises(ProjectError) as caught:
        load_stack_config(load_project(root), "dev")
    assert str(caught.value) == "Stack 'dev' with configuration key 'size' " + \
        message.replace("{stack}", str(root / "Pulumi.dev.yaml"))


@pytest.mark.parametrize(("declaration", "stack_value", "expected"), [
    ("type: integer", "3", "3"), ("type: integer", '"3"', "3"), ("type: integer", "3.0", "3"),
    ("type: boolean", "true", "true"), ("type: boolean", '"false"', "false"),
    ("type: string", "3", "3"),  # any scalar is a string to the CLI: it checks the value's text
    ("type: array\n    items:\n      type: integer", "[1, 2.0]", "[1,2]"),
    ("type: object", "{b: 1, a: x}", '{"a":"x","b":1}'),
    ("type: integer", "\n    secure: AAAB", "[secret]"),  # cannot be decrypted offline: not checked
    ("type: string", "null", ""),  # no value: the empty string, not "null"
])
def test_a_stack_value_of_the_right_type_is_taken(tmp_path: Path, declaration: str, stack_value: str,
                                                  expected: str) -> None:
    root = _project_with(tmp_path, f"  size:\n    {declaration}\n", f"config:\n  p:size: {stack_value}\n")
    assert load_stack_config(load_project(root), "dev")[0] == {"p:size": expected}


@pytest.mark.parametrize(("config", "message"), [
    ("  aws:region:\n    type: string\n    value: us-east-1\n",
     "Configuration key 'aws:region' is not namespaced by the project and should not define a type (only a 'value' "
     "is allowed for a key of 'aws')"),
    ("  aws:region:\n    default: us-east-1\n",
     "Configuration key 'aws:region' is not namespaced by the project and should not define a default value. Did you "
     "mean to use the 'value' attribute instead of 'default'?"),
    ("  aws:region:\n    description: where\n",
     "Configuration key 'aws:region' is namespaced and must provide an attribute 'value'"),
    ("  size:\n    type: integer\n    default: big\n",
     "The default value specified for configuration key 'size' is not of the expected type 'integer' (it is 'big')"),
    ("  zones:\n    type: array\n",
     "The configuration key 'zones' declares an array but does not specify the underlying type via the 'items' "
     "attribute"),
    ("  size:\n    default: 1\n    value: 2\n", "config key 'size': project config 'size' cannot have both a "
     "'default' and 'value' attribute"),
    ("  size:\n    type: number\n", "config key 'size': type 'number' is not one of string, integer, boolean, array, "
     "object"),
    ("  labels:\n    team: web\n", "config key 'labels': attribute 'team' is not allowed; the allowed attributes are "
     "'default', 'description', 'items', 'secret', 'type', 'value' (a value that is a mapping goes under 'value' or "
     "'default')"),
])
def test_project_config_the_cli_refuses_is_refused_when_the_project_loads(tmp_path: Path, config: str,
                                                                          message: str) -> None:
    root = _project_with(tmp_path, config)
    with pytest.raises(ProjectError) as caught:
        load_project(root)
    assert str(caught.value) == f"{root / 'Pulumi.yaml'}: {message}"


def test_another_namespace_takes_a_plain_value(tmp_path: Path) -> None:
    root = _project_with(tmp_path, "  aws:region: us-west-2\n  aws:tags:\n    value: {team: ml}\n")
    assert load_stack_config(load_project(root), "dev")[0] == {"aws:region": "us-west-2", "aws:tags": '{"team":"ml"}'}


def test_a_config_error_is_one_line_with_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from aiinfra.cli import main

    root = _project_with(tmp_path, "  size:\n    type: integer\n")
    (root / "__main__.py").write_text("")
    assert main(["plan", "--program", str(root), "--stack", "dev", "--no-policy", "-q"]) == 1
    assert capsys.readouterr().err == (f"error: {root / 'Pulumi.dev.yaml'}: Stack 'dev' is missing configuration value "
                                       f"'size' ({root / 'Pulumi.yaml'} declares it with no default: set it in the "
                                       "stack file, e.g. with `pulumi config set`)\n")


STACK_VALUES = """config:
  p:time: 22:00
  p:date: 2025-12-31
  p:stamp: 2020-01-01T00:00:00Z
  p:float: 1.0
  p:ratio: 1.50
  p:tiny: 1e-7
  p:hex: 0x1F
  p:octal: 0o17
  p:oldOctal: 017
  p:big: 1_000_000
  p:switch: on
  p:answer: yes
  p:flag: True
  p:nested: {when: 2025-12-31, size: 2.0, html: <b>}
"""


def test_stack_values_read_as_the_cli_reads_them(tmp_path: Path) -> None:
    """yaml.v3 (the CLI's YAML) is YAML 1.2-like: no base-60 numbers, no date objects; numbers print as Go prints."""
    (tmp_path / "Pulumi.yaml").write_text("name: p\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text(STACK_VALUES)
    keys = ["time", "date", "stamp", "float", "ratio", "tiny", "hex", "octal", "oldOctal", "big", "switch", "answer",
            "flag", "nested"]
    (tmp_path / "__main__.py").write_text(
        f"import pulumi\nconfig = pulumi.Config()\nfor key in {keys!r}:\n    pulumi.export(key, config.get(key))\n")
    outputs = plan_stack(load_project(tmp_path), "dev").outputs
    assert outputs == {
        "time": "22:00",  # PyYAML's YAML 1.1 reads 1320
        "date": "2025-12-31 00:00:00 +0000 UTC",  # the CLI holds a Go time.Time and passes its String()
        "stamp": "2020-01-01 00:00:00 +0000 UTC",
        "float": "1", "ratio": "1.5", "tiny": "1e-7",  # float64, printed as Go's encoding/json does
        "hex": "31", "octal": "15", "oldOctal": "15", "big": "1000000",
        "switch": "on", "answer": "yes",  # only true/false are booleans
        "flag": "true",
        "nested": '{"html":"\\u003cb\\u003e","size":2,"when":"2025-12-31 00:00:00 +0000 UTC"}',
    }


def test_merge_keys_and_out_of_range_floats_read_as_the_cli_reads_them(tmp_path: Path) -> None:
    # `<<: *anchor` merges (a key given after it overrides the merged one, as in Go); `.1e999` overflows Go's
    # ParseFloat, so yaml.v3 keeps the text.
    root = _project_with(tmp_path, "  base:\n    default: x\n",
                         "shared: &shared {size: 1, zone: a}\nconfig:\n  p:pool:\n    <<: *shared\n    size: 2\n"
                         "  p:huge: .1e999\n")
    assert load_stack_config(load_project(root), "dev")[0] == {
        "p:base": "x", "p:pool": '{"size":2,"zone":"a"}', "p:huge": ".1e999"}


def test_a_date_default_in_pulumi_yaml_is_json_text(tmp_path: Path) -> None:
    # config.go createConfigValue marshals a non-primitive default (a Go time.Time) as JSON: RFC 3339 text.
    root = _project_with(tmp_path, "  cutoff:\n    default: 2025-12-31\n  ratio: [1.0, 2]\n")
    assert load_stack_config(load_project(root), "dev")[0] == {"p:cutoff": "2025-12-31T00:00:00Z", "p:ratio": "[1,2]"}


def test_malformed_config_block_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: p\nruntime: python\nconfig: [a, b]\n")
    with pytest.raises(ProjectError, match=r"Pulumi.yaml: 'config' must be a mapping of config keys, got list"):
        load_project(tmp_path)


@pytest.mark.parametrize(("text", "message"), [
    # Go's yaml.v3 (the Pulumi CLI) refuses a key given twice; PyYAML alone would keep the last value silently.
    ("config:\n  demo:replicas: 2\n  demo:replicas: 3\n", ":3:3: not valid YAML: key 'demo:replicas' is given twice in one mapping (first at line 2)"),
    # yaml.v3 compares keys by their text (decode.go `mapping`), so a quoted "1" is the key 1 given again.
    ("config:\n  demo:sizes: {1: a, \"1\": b}\n", ":2:22: not valid YAML: key '1' is given twice in one mapping (first at line 2)"),
    # The CLI takes only string keys, at any depth (workspace/project.go SimplifyMarshalledValue); so `1` and `1.0`,
    # which Go holds apart and Python cannot, never meet.
    ("config:\n  demo:sizes:\n    1: a\n    1.0: b\n", ":3:5: the Pulumi CLI refuses this file: key '1' is an integer, not a string; allowed: string keys only, at any depth (quote it: '\"1\"')"),
    ("config:\n  demo:pools: [{gpus: {true: 8}}]\n", ":2:24: the Pulumi CLI refuses this file: key 'true' is a boolean, not a string; allowed: string keys only, at any depth (quote it: '\"true\"')"),
    ("config:\n  demo:windows:\n    2025-12-24: off\n", ":3:5: the Pulumi CLI refuses this file: key '2025-12-24' is a timestamp, not a string; allowed: string keys only, at any depth (quote it: '\"2025-12-24\"')"),
    ("config:\n  demo:labels: {~: x}\n", ":2:17: the Pulumi CLI refuses this file: key '~' is null, not a string; allowed: string keys only, at any depth (quote it: '\"~\"')"),
    ("1: x\nconfig: {}\n", ":1:1: the Pulumi CLI refuses this file: key '1' is an integer, not a string; allowed: string keys only, at any depth (quote it: '\"1\"')"),
    # The CLI refuses keys once yaml.v3 has decoded the whole file: a YAML error further down is the one it reports.
    ("config:\n  demo:sizes: {1: a}\n  demo:zones: {a: 1, a: 2}\n", ":3:22: not valid YAML: key 'a' is given twice in one mapping (first at line 3)"),
    ("config:\n\tdemo:replicas: 2\n", ":2:1: not valid YAML: while scanning for the next token found character '\\t' that cannot start any token"),
])
def test_a_malformed_stack_file_is_one_line_naming_file_line_and_column(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: demo\nruntime: python\n")
    (tmp_path / "Pulumi.x.yaml").write_text(text)
    with pytest.raises(ProjectError) as caught:
        load_stack_config(load_project(tmp_path), "x")
    assert str(caught.value) == f"{tmp_path / 'Pulumi.x.yaml'}{message}"


def test_quoted_keys_are_strings_and_a_project_file_takes_only_string_keys_too(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: demo\nruntime: python\n")
    (tmp_path / "Pulumi.x.yaml").write_text('config:\n  demo:sizes: {"1": a, !!str 2: b, "2025-12-24": c, <<: {d: 4}}\n')
    assert load_stack_config(load_project(tmp_path), "x")[0] == {"demo:sizes": '{"1":"a","2":"b","2025-12-24":"c","d":4}'}
    (tmp_path / "Pulumi.yaml").write_text("name: demo\nruntime: python\nconfig:\n  sizes:\n    default: {1: a}\n")
    with pytest.raises(ProjectError) as caught:
        load_project(tmp_path)
    assert str(caught.value) == (f"{tmp_path / 'Pulumi.yaml'}:5:15: the Pulumi CLI refuses this file: key '1' is an "
                                 "integer, not a string; allowed: string keys only, at any depth (quote it: '\"1\"')")


def test_a_stack_file_is_parsed_once_per_text_and_again_when_edited(tmp_path) -> None:  # noqa: ANN001
    from aiinfra.plan import goyaml
    from aiinfra.plan.project import load_project, load_stack_config, stack_environments

    (tmp_path / "Pulumi.yaml").write_text("name: demo\nruntime: python\n")
    stack = tmp_path / "Pulumi.dev.yaml"
    stack.write_text("environment: [shared]\nconfig:\n  demo:size: 1\n")
    project = load_project(tmp_path)
    goyaml.parse.cache_clear()
    assert load_stack_config(project, "dev")[0] == {"demo:size": "1"} and stack_environments(project, "dev") == ["shared"]
    assert goyaml.parse.cache_info().misses == 1  # the plan and its environment check share one parse
    stack.write_text("environment: [shared]\nconfig:\n  demo:size: 2\n")  # same size, same coarse mtime tick
    assert load_stack_config(project, "dev")[0] == {"demo:size": "2"}


def test_the_older_namespace_config_name_keys_are_read_as_namespace_name(tmp_path: Path) -> None:
    """ParseKey (sdk/go/common/resource/config/key.go) still takes `aws:config:region` for `aws:region`; a bare key is
    the project's; another key with two colons is refused before the program runs."""
    _project_with(tmp_path, "", "config:\n  aws:config:region: eu-west-1\n  p:config:size: 3\n  tier: gold\n")
    config, _ = load_stack_config(load_project(tmp_path), "dev")
    assert config == {"aws:region": "eu-west-1", "p:size": "3", "p:tier": "gold"}
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  aws:settings:region: eu-west-1\n")
    with pytest.raises(ProjectError) as caught:
        load_stack_config(load_project(tmp_path), "dev")
    assert str(caught.value) == (f"{tmp_path / 'Pulumi.dev.yaml'}: config key 'aws:settings:region' is not a configuration "
                                 "key: keys are <namespace>:<name> (or the older <namespace>:config:<name>)")


def test_a_long_value_of_the_wrong_type_is_shown_by_its_kind_and_a_key_given_twice_is_refused(tmp_path: Path) -> None:
    platform = "{" + ", ".join(f"k{i}: v{i}" for i in range(30)) + "}"
    _project_with(tmp_path, "  p:platform:\n    type: string\n", f"config:\n  p:platform: {platform}\n")
    with pytest.raises(ProjectError) as caught:
        load_stack_config(load_project(tmp_path), "dev")
    assert str(caught.value) == (f"Stack 'dev' with configuration key 'p:platform' must be of type 'string' "
                                 f"({tmp_path / 'Pulumi.dev.yaml'} sets it to a mapping of 30 keys)")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  platform: {a: 1}\n  p:platform: {a: 2}\n")
    with pytest.raises(ProjectError) as caught:
        load_stack_config(load_project(tmp_path), "dev")
    assert str(caught.value) == (f"{tmp_path / 'Pulumi.dev.yaml'}: config keys 'platform' and 'p:platform' are the same "
                                 "key p:platform; keep one")


def test_pulumi_yaml_reads_the_older_namespace_config_name_keys_as_the_stack_file_does(tmp_path: Path) -> None:
    """mergeConfig (pkg/workspace/config.go) parses Pulumi.yaml's keys with config.ParseKey too: `aws:config:region`
    is `aws:region`, which the stack file's `aws:region` then overrides (it used to reach the program as a second key);
    another key with two colons is refused when the project loads."""
    _project_with(tmp_path, "  aws:config:region: us-east-1\n  p:config:size:\n    type: integer\n    default: 3\n",
                  "config:\n  aws:region: eu-west-1\n")
    assert load_stack_config(load_project(tmp_path), "dev")[0] == {"aws:region": "eu-west-1", "p:size": "3"}
    _project_with(tmp_path, "  aws:settings:region: us-east-1\n")
    with pytest.raises(ProjectError) as caught:
        load_project(tmp_path)
    assert str(caught.value) == (f"{tmp_path / 'Pulumi.yaml'}: config key 'aws:settings:region' is not a configuration "
                                 "key: keys are <namespace>:<name> (or the older <namespace>:config:<name>)")


@pytest.mark.parametrize(("stack_value", "taken"), [
    ("9223372036854775807", True), ("-9223372036854775808", True),  # Go's int on 64 bits
    ("9223372036854775808", False), ('"-9223372036854775809"', False), ("99999999999999999999", False),
])
def test_an_integer_key_takes_only_what_gos_atoi_reads_without_a_range_error(tmp_path: Path, stack_value: str,
                                                                              taken: bool) -> None:
    """project.go ValidateConfigValue checks a stack value's text with strconv.Atoi, which fails outside int64."""
    root = _project_with(tmp_path, "  size:\n    type: integer\n", f"config:\n  p:size: {stack_value}\n")
    if taken:
        assert load_stack_config(load_project(root), "dev")[0] == {"p:size": stack_value}
        return
    with pytest.raises(ProjectError, match="must be of type 'integer'"):
        load_stack_config(load_project(root), "dev")


def test_an_integer_default_past_int64_is_refused_when_the_project_loads(tmp_path: Path) -> None:
    """yaml.v3 decodes 2**63 and up (within uint64) as a uint64, which ValidateConfigValue does not take for an
    integer: the CLI refuses the project."""
    root = _project_with(tmp_path, "  size:\n    type: integer\n    default: 9223372036854775808\n")
    with pytest.raises(ProjectError, match="The default value specified for configuration key 'size' is not of the "
                                           "expected type 'integer'"):
        load_project(root)
    _project_with(tmp_path, "  size:\n    type: integer\n    default: 9223372036854775807\n")
    assert load_stack_config(load_project(tmp_path), "dev")[0] == {"p:size": "9223372036854775807"}
