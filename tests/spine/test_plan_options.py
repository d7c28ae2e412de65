"""Resource options as the engine keeps them: custom timeouts parsed as Go durations (a string Go refuses fails the
registration, as in the engine), deleteBeforeReplace only when set, additional secret outputs and each property's
dependencies; the policy pack gets them as the engine sends them."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws
import pytest
from hypothesis import given
from hypothesis import strategies as st
from spine.probe_pack import probe_pack

from aiinfra.plan.engine_options import go_duration_seconds
from aiinfra.plan.runtime import run_program
from aiinfra.policy_eval import evaluate_pack

CONFIG = {"aws:region": "us-east-2"}


@pytest.mark.parametrize(("text", "seconds"), [
    ("10m", 600.0), ("1h30m", 5400.0), ("1.5h", 5400.0), ("90s", 90.0), ("300ms", 0.3), ("2h45m30.5s", 9930.5),
    ("0", 0.0), ("-1m", -60.0), ("+5s", 5.0), (".5m", 30.0), ("1.m", 60.0), ("1us", 1e-6), ("1\u00b5s", 1e-6),
    ("1\u03bcs", 1e-6), ("7ns", 7e-9), ("9ms", 0.009), ("1001ms", 1.001), ("0.1s0.2s", 0.3)])
def test_go_durations_read_as_time_parse_duration_reads_them(text: str, seconds: float) -> None:
    # Exactly the engine's float: Go adds whole nanoseconds, then Duration.Seconds() (a float sum gives 0.009000000000000001)
    assert go_duration_seconds(text) == seconds


@pytest.mark.parametrize("text", ["", "10", "5 m", "1d", "5mm", "m", ".", "-", "1h 30m", "10M", "1e3s", "3000000h",
                                  "\u0661s", "\uff11h"])  # Go reads ASCII digits only
def test_what_time_parse_duration_refuses_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="invalid duration"):
        go_duration_seconds(text)


@given(st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from(["h", "m", "s", "ms"])), min_size=1, max_size=4))
def test_a_duration_is_the_sum_of_its_elements(elements: list[tuple[int, str]]) -> None:
    scale = {"h": 3600 * 10**9, "m": 60 * 10**9, "s": 10**9, "ms": 10**6}
    text = "".join(f"{value}{unit}" for value, unit in elements)
    nanoseconds = sum(value * scale[unit] for value, unit in elements)
    assert go_duration_seconds(text) == nanoseconds // 10**9 + (nanoseconds % 10**9) / 1e9


def _program() -> None:
    key = aws.kms.Key("key")
    aws.s3.Bucket("data", tags={"key": key.arn}, opts=pulumi.ResourceOptions(
        delete_before_replace=False, additional_secret_outputs=["arn"],
        custom_timeouts=pulumi.CustomTimeouts(create="1h30m", delete="90s")))


def test_the_plan_records_the_options_the_engine_keeps() -> None:
    result = run_program(_program, project="demo", stack="dev", config=CONFIG)
    bucket, key = result.one("aws:s3/bucket:Bucket"), result.one("aws:kms/key:Key")
    assert bucket.deleteBeforeReplace is False and key.deleteBeforeReplace is None  # set to False is not unset
    assert bucket.additionalSecretOutputs == ["arn"]
    assert bucket.customTimeouts == {"create": 5400.0, "delete": 90.0} and key.customTimeouts == {}
    assert bucket.propertyDependencies == {"tags": [key.urn]}
    assert bucket.to_json()["customTimeouts"] == {"create": 5400.0, "delete": 90.0}


def test_a_timeout_go_cannot_parse_fails_the_registration_as_in_the_engine() -> None:
    def program() -> None:
        aws.s3.Bucket("data", opts=pulumi.ResourceOptions(custom_timeouts=pulumi.CustomTimeouts(update="1 day")))

    with pytest.raises(pulumi.RunError, match=r"aws:s3/bucket:Bucket data: unable to parse customTimeout Value 1 day "
                                              r"\(custom_timeouts.update; Go durations such as 10m or 1h30m\)"):
        run_program(program, project="demo", stack="dev", config=CONFIG)


def test_a_remote_components_timeouts_are_its_providers_to_read() -> None:
    """The engine parses timeouts only for what it registers itself (source_eval.go, the non-remote branch)."""
    def program() -> None:
        pulumi.ComponentResource("awsx:ec2:Vpc", "net", {}, opts=pulumi.ResourceOptions(
            custom_timeouts=pulumi.CustomTimeouts(create="1 day")), remote=True)

    result = run_program(program, project="demo", stack="dev", config=CONFIG)
    assert result.one("awsx:ec2:Vpc").customTimeouts == {}


def test_the_pack_gets_the_options_and_property_dependencies(tmp_path) -> None:  # noqa: ANN001
    pack = probe_pack(tmp_path,
        "def options(args, report):\n"
        "    o = args.opts\n"
        "    t = o.custom_timeouts\n"
        "    report(f'{args.resource_type} dbr={o.delete_before_replace} secret={o.additional_secret_outputs} '\n"
        "           f'timeouts={t.create_seconds},{t.update_seconds},{t.delete_seconds}')\n"
        "def deps(args, report):\n"
        "    for r in args.resources:\n"
        "        for prop, on in r.property_dependencies.items():\n"
        "            report(f'{r.resource_type} {prop} <- {[d.resource_type for d in on]}', r.urn)\n",
        "ResourceValidationPolicy(name='opts', description='d', validate=options), "
        "StackValidationPolicy(name='deps', description='d', validate=deps)")
    result = run_program(_program, project="demo", stack="dev", config=CONFIG)
    report = evaluate_pack(pack, [r.to_json() for r in result.resources], project="demo", stack="dev")
    messages = {v.message.splitlines()[-1].strip() for v in report.violations}
    assert "aws:s3/bucket:Bucket dbr=False secret=['arn'] timeouts=5400.0,0.0,90.0" in messages, messages
    assert "aws:kms/key:Key dbr=None secret=[] timeouts=0.0,0.0,0.0" in messages, messages
    assert "aws:s3/bucket:Bucket tags <- ['aws:kms/key:Key']" in messages, messages
