"""Tests from a mutation review of the `aiinfra` CLI (aiinfra/cli.py), the stack-file YAML reader (aiinfra/plan/goyaml.py)
and the Pulumi.yaml config declarations check (aiinfra/plan/declarations.py): behaviour a changed line left every other
test passing on. The summary's and the diagnostics' share is in test_cli_mutation_review_summary.py.

A stack value reaches the program as the Pulumi CLI hands it over (Go's yaml.v3 reads the file, Go prints the value),
so these pin the text of numbers at the edges of Go's int64/uint64 and float formats, of timestamps Go parses or leaves
as strings, and of nested values; the config declarations Pulumi.yaml may hold and the ones it refuses; and what the CLI
tells its user: exit codes, one-line errors, the policy report and the `--json` document's fields.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import write_program

from aiinfra.cli import main
from aiinfra.plan.goyaml import manifest_documents
from aiinfra.plan.project import ProjectError, load_project, load_stack_config


def _stack_config(root: Path, stack_file: str, project_config: str = "") -> dict[str, str]:
    """The config map the program of project `x`, stack `dev`, receives from `stack_file` (and Pulumi.yaml's `config:`
    block, `project_config`, when given)."""
    write_program(root, "", stack_file)
    if project_config:
        (root / "Pulumi.yaml").write_text(f"name: x\nruntime: python\nconfig:\n{project_config}")
    return load_stack_config(load_project(root), "dev")[0]


# --- stack values as the Pulumi CLI reads and prints them (goyaml.py) -------------------------------------------------

NUMBERS = """config:
  x:tiny: 0.000001
  x:tinier: 0.0000009
  x:e20: 1e20
  x:e21: 1e21
  x:zero: 0.0
  x:negative: -5
  x:negativeHex: -0x10
  x:binary: 0b101
  x:upperHex: 0X1F
  x:uint: 9223372036854775808
  x:plusUint: +9223372036854775808
  x:minInt: -9223372036854775808
  x:overflow: 1e999
  x:upperTrue: TRUE
  x:upperFalse: FALSE
"""


def test_numbers_at_the_edges_of_gos_formats_reach_the_program_as_the_cli_prints_them(tmp_path: Path) -> None:
    """Go's encoding/json prints a float in plain digits from 1e-6 up to (not including) 1e21 and in exponent form
    outside; yaml.v3 takes a sign, `0b` and `0X`, an int64 down to its minimum and an unsigned value up to 2^64 - 1
    without a `+` (else it is a float); a float out of range stays text; TRUE and FALSE are booleans too."""
    config = _stack_config(tmp_path, NUMBERS)
    assert {key.removeprefix("x:"): value for key, value in config.items()} == {
        "tiny": "0.000001", "tinier": "9e-7", "e20": "100000000000000000000", "e21": "1e+21", "zero": "0",
        "negative": "-5", "negativeHex": "-16", "binary": "5", "upperHex": "31",
        "uint": "9223372036854775808",  # ParseUint: exact
        "plusUint": "9223372036854776000",  # a `+` fails ParseUint: a float64, printed as one
        "minInt": "-9223372036854775808",
        "overflow": "1e999",  # ParseFloat fails out of range: the text stays a string
        "upperTrue": "true", "upperFalse": "false",
    }


TIMESTAMPS = """config:
  x:tNoZone: 2020-01-01T00:00:00
  x:spaceWithZone: 2020-01-01 10:00:00Z
  x:noSuchDay: 2025-02-30
  x:nanos: 2020-01-01 10:00:00.1234567891
  x:half: 2020-01-01 10:00:00.500
  x:minusZero: 2020-01-01T00:00:00-00:00
  x:plusZero: 2020-01-01T00:00:00+00:00
  x:india: 2020-01-01T10:00:00+05:30
  x:tagged: !!timestamp 2020-01-01
"""


def test_timestamps_reach_the_program_as_gos_time_string_or_stay_text(tmp_path: Path) -> None:
    """yaml.v3's time.Parse refuses a `T` form without a zone, a space form with one and a day that does not exist: they
    stay text. A parsed time is Go's String(): nanoseconds at most, trailing zeros dropped, a zero offset as UTC,
    another offset with no zone name (shown as the offset twice); `!!timestamp` is a time too."""
    config = _stack_config(tmp_path, TIMESTAMPS)
    assert {key.removeprefix("x:"): value for key, value in config.items()} == {
        "tNoZone": "2020-01-01T00:00:00", "spaceWithZone": "2020-01-01 10:00:00Z", "noSuchDay": "2025-02-30",
        "nanos": "2020-01-01 10:00:00.123456789 +0000 UTC", "half": "2020-01-01 10:00:00.5 +0000 UTC",
        "minusZero": "2020-01-01 00:00:00 +0000 UTC", "plusZero": "2020-01-01 00:00:00 +0000 UTC",
        "india": "2020-01-01 10:00:00 +0530 +0530", "tagged": "2020-01-01 00:00:00 +0000 UTC",
    }


def test_a_nested_value_is_compact_json_with_text_as_written(tmp_path: Path) -> None:
    """An object's text is Go's json.Marshal: non-ASCII text stays as written (not \\u-escaped), numbers as Go prints
    them."""
    config = _stack_config(tmp_path, "config:\n  x:team: {name: Zoë, ratio: [0.000001, 1e21]}\n")
    assert config == {"x:team": '{"name":"Zoë","ratio":[0.000001,1e+21]}'}


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan"])
def test_an_infinite_or_nan_stack_value_is_a_one_line_error(tmp_path: Path, value: str) -> None:
    """`.inf`, `-.inf` and `.nan` are floats to yaml.v3, which JSON cannot hold: the CLI fails, and so does the plan,
    naming the file and the key."""
    with pytest.raises(ProjectError) as caught:
        _stack_config(tmp_path, f"config:\n  x:big: {value}\n")
    assert str(caught.value).startswith(f"{tmp_path / 'Pulumi.dev.yaml'}: config key 'x:big': ")
    assert str(caught.value).endswith(" is not a number JSON can hold (the Pulumi CLI fails on it: json: unsupported value)")


def test_manifest_binary_ints_and_leading_dot_floats_are_numbers() -> None:
    """Kubernetes manifests are read as yaml.v2 reads them: `0b11` is 3 and `.5` is 0.5."""
    assert manifest_documents("a: 0b11\nb: .5\nc: -0b10\n") == [{"a": 3, "b": 0.5, "c": -2}]


# --- Pulumi.yaml's config declarations (declarations.py) ---------------------------------------------------------------

def test_short_form_integers_and_booleans_are_a_project_keys_default(tmp_path: Path) -> None:
    """The short form takes a string, an integer, a boolean or a list (the project schema's forms)."""
    config = _stack_config(tmp_path, "config: {}\n", "  replicas: 2\n  debug: true\n  zones: [a, b]\n")
    assert config == {"x:replicas": "2", "x:debug": "true", "x:zones": '["a","b"]'}


@pytest.mark.parametrize(("declaration", "message"), [
    ("  ratio: 1.5\n", "config key 'ratio': 1.5 is not a string, integer, boolean, list or a declaration (default, "
                       "description, items, secret, type, value)"),
    ("  ratio:\n", "config key 'ratio': null is not a string, integer, boolean, list or a declaration (default, "
                   "description, items, secret, type, value)"),
    ("  token:\n    type: string\n    secret: yes\n", "config key 'token': 'secret' must be true or false, got 'yes'"),
    # Two attributes Pulumi.yaml does not know: the message names the first in alphabetical order, whatever the file's.
    ("  size:\n    zeta: 1\n    alpha: 2\n", "config key 'size': attribute 'alpha' is not allowed; the allowed "
                                             "attributes are 'default', 'description', 'items', 'secret', 'type', "
                                             "'value' (a value that is a mapping goes under 'value' or 'default')"),
    ("  zones:\n    type: array\n    items:\n      type: array\n      items:\n        type: string\n    default: [[1]]\n",
     "The default value specified for configuration key 'zones' is not of the expected type 'array<array<string>>' "
     "(it is [[1]])"),
    # yaml.v3 reads an unquoted date as a time.Time, which is no string to Go's check.
    ("  cutoff:\n    type: string\n    default: 2025-12-31\n",
     "The default value specified for configuration key 'cutoff' is not of the expected type 'string' "
     "(it is '2025-12-31')"),
    ("  size:\n    type: integer\n    default: true\n",  # a boolean is no integer to Go, though it is to Python
     "The default value specified for configuration key 'size' is not of the expected type 'integer' (it is True)"),
])
def test_declarations_the_project_schema_refuses_are_one_line_errors(tmp_path: Path, declaration: str,
                                                                     message: str) -> None:
    """A float or null short form, a `secret` that is not a boolean (`yes` is a string to yaml.v3), an unknown
    attribute and a default of the wrong type (named with its full array type; a date is no string) are refused when
    the project loads, naming the file and the key."""
    with pytest.raises(ProjectError) as caught:
        _stack_config(tmp_path, "config: {}\n", declaration)
    assert str(caught.value) == f"{tmp_path / 'Pulumi.yaml'}: {message}"


@pytest.mark.parametrize(("declaration", "stack_value", "taken"), [
    ("integer", '"+3"', True),  # strconv.Atoi takes a sign
    ("integer", '""', False),
    ("boolean", '"True"', False),  # only the texts true and false
    ("array\n    items:\n      type: boolean", "[true, false]", True),  # an object's booleans stay booleans
])
def test_a_typed_keys_stack_text_is_checked_as_the_cli_checks_it(tmp_path: Path, declaration: str, stack_value: str,
                                                                  taken: bool) -> None:
    """A stack value of a typed key is checked on its text: an integer as strconv.Atoi reads it, a boolean as exactly
    `true` or `false`; a list is checked on its JSON, where a boolean is a boolean."""
    project = f"  size:\n    type: {declaration}\n"
    if taken:
        config = _stack_config(tmp_path, f"config:\n  x:size: {stack_value}\n", project)
        assert config == {"x:size": {'"+3"': "+3", "[true, false]": "[true,false]"}[stack_value]}
        return
    with pytest.raises(ProjectError) as caught:
        _stack_config(tmp_path, f"config:\n  x:size: {stack_value}\n", project)
    assert str(caught.value) == (f"Stack 'dev' with configuration key 'size' must be of type '{declaration}' "
                                 f"({tmp_path / 'Pulumi.dev.yaml'} sets it to {stack_value[1:-1]!r})")


# --- the CLI (cli.py) ---------------------------------------------------------------------------------------------------

BUCKET_PROGRAM = "import pulumi\npulumi.CustomResource('aws:s3/bucket:Bucket', 'logs', {'bucket': 'logs'})\n"


@pytest.mark.parametrize("argv", [["plan", "--stack", "dev", "--no-policy", "-q", "--json", "/dev/full"],
                                  ["plan", "--stack", "dev", "--no-policy", "-q", "--markdown", "/dev/full"],
                                  ["schema", "--output", "/dev/full"]])
def test_an_output_file_that_cannot_be_written_is_a_one_line_error(
        tmp_path: Path, argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A path that passes the up-front checks but fails when written (a full disk: /dev/full) is exit 1 with the
    option, the path and the system's reason, not a traceback."""
    monkeypatch.chdir(write_program(tmp_path, BUCKET_PROGRAM))
    assert main(argv) == 1
    option = argv[-2]
    assert capsys.readouterr().err == f"error: {option} /dev/full: cannot write it (No space left on device)\n"


@pytest.mark.parametrize("record", [{"urn": "urn:pulumi:dev::x::aws:s3/bucket:Bucket::logs"},
                                    {"type": "aws:s3/bucket:Bucket"}, "urn:pulumi:dev::x::aws:s3/bucket:Bucket::logs",
                                    ["urn", "type"], "a urn and a type"])
def test_a_diff_base_whose_records_lack_a_urn_or_type_is_refused_before_planning(
        tmp_path: Path, record: object, capsys: pytest.CaptureFixture[str]) -> None:
    """Each record of a `--diff` base is an object with its `urn` and its `type` (the diff compares by both): a base
    missing either, or with a record that is not an object even if it holds the words `urn` and `type` (a list, a
    text), is a one-line error, before the program runs, not a traceback."""
    (tmp_path / "p").mkdir()
    program = write_program(tmp_path / "p", "raise SystemExit('the program ran')\n")
    base = tmp_path / "base.json"
    base.write_text(json.dumps({"project": "x", "stack": "dev", "resources": [record]}))
    assert main(["plan", "--program", str(program), "--stack", "dev", "--no-policy", "-q", "--diff", str(base)]) == 1
    assert capsys.readouterr().err == (f"error: --diff {base}: not a plan from `aiinfra plan --json` (expected a "
                                       "'resources' list of records with 'urn' and 'type')\n")


OPEN_SSH = ("import pulumi, pulumi_aws as aws\n"
            "aws.ec2.SecurityGroup('sg', vpc_id='vpc-1', description='x', ingress=[aws.ec2.SecurityGroupIngressArgs(\n"
            "    protocol='tcp', from_port=22, to_port=22, cidr_blocks=['0.0.0.0/0'])])\n")


@pytest.mark.parametrize(("levels", "code", "report"), [
    ({"all": "advisory"}, 0, ["2 violation(s), 0 mandatory",
                              "  [advisory] aws-security-group-no-open-admin-ingress: sg",
                              "      ingress from 0.0.0.0/0 to port 22",
                              "  [advisory] required-tags: sg", "      missing tags: environment, team, cost-center"]),
    ({"all": "advisory", "required-tags": "mandatory"}, 2, [
        "2 violation(s), 1 mandatory",
        "  [mandatory] required-tags: sg", "      missing tags: environment, team, cost-center",  # mandatory first
        "  [advisory] aws-security-group-no-open-admin-ingress: sg", "      ingress from 0.0.0.0/0 to port 22"]),
])
def test_only_mandatory_violations_exit_2_and_they_are_listed_first(
        tmp_path: Path, levels: dict, code: int, report: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Advisory violations are reported and the plan still exits 0; a mandatory one exits 2 and heads the list,
    before the advisory ones whatever their policy names."""
    (tmp_path / "p").mkdir()
    program = write_program(tmp_path / "p", OPEN_SSH, "config:\n  aws:region: us-east-1\n")
    config = tmp_path / "levels.json"
    config.write_text(json.dumps(levels))
    assert main(["plan", "--program", str(program), "--stack", "dev", "-q", "--policy-config", str(config)]) == code
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Policy pack ai-infra-compliance@") and out[0].endswith(f": {report[0]}")
    assert out[1:] == report[1:]
