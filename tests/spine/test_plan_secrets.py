"""Secure config values are secret unknowns to the program's secret getters: never decrypted, never made up."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from aiinfra.plan.project import SECRET_PLACEHOLDER
from aiinfra.plan.echo import SECRET as SECRET_VALUE
from aiinfra.plan.echo import SIG as SECRET_SIG
from aiinfra.plan.runtime import UNKNOWN, run_program

CONFIG = {"demo:token": SECRET_PLACEHOLDER, "demo:port": SECRET_PLACEHOLDER, "demo:settings": SECRET_PLACEHOLDER,
          "demo:plain": "visible", "aws:region": "us-east-1"}
SECURE = ["demo:token", "demo:port", "demo:settings"]
SECRET_UNKNOWN = {SECRET_SIG: SECRET_VALUE, "value": UNKNOWN}


def test_secret_getters_give_secret_unknowns_for_secure_values_only() -> None:
    ran: list[str] = []

    def program() -> None:
        config = pulumi.Config("demo")
        aws.ec2.SecurityGroup("sg", description=config.require_secret("token"))
        # typed secret getters would have to parse the placeholder; an unknown has nothing to parse
        config.require_secret_int("port").apply(lambda port: ran.append(f"port {port}"))
        config.get_secret_object("settings").apply(lambda settings: ran.append(f"settings {settings}"))
        aws.s3.Bucket("b", bucket=config.get_secret("plain"), tags={"default": config.get_secret("absent", "fallback")})
        pulumi.export("plain", config.require("plain"))
        pulumi.export("token_as_str", config.require("token"))

    result = run_program(program, project="demo", stack="dev", config=CONFIG, secret_keys=SECURE)
    assert result.one("aws:ec2/securityGroup:SecurityGroup").inputs["description"] == SECRET_UNKNOWN
    assert ran == [], "apply callbacks do not run on unknown values"
    bucket = result.one("aws:s3/bucket:Bucket").inputs
    assert bucket["bucket"] == {SECRET_SIG: SECRET_VALUE, "value": "visible"}  # not secure: its known value, kept secret
    assert bucket["tags"]["default"] == {SECRET_SIG: SECRET_VALUE, "value": "fallback"}  # unset: the default
    assert result.outputs == {"plain": "visible", "token_as_str": SECRET_PLACEHOLDER}  # a str cannot be unknown


def test_the_getters_are_the_sdks_own_outside_a_plan() -> None:
    before = {name: getattr(pulumi.Config, name) for name in ("require_secret", "get_secret_int", "get_secret_object")}
    run_program(lambda: pulumi.Config("demo").require_secret("token"), project="demo", stack="dev", config=CONFIG,
                secret_keys=SECURE)
    assert {name: getattr(pulumi.Config, name) for name in before} == before


def test_a_parsing_plain_getter_on_a_secure_value_names_the_secret_getter_to_use() -> None:
    import pytest

    def program() -> None:
        pulumi.Config("demo").require_int("port")

    with pytest.raises(pulumi.RunError) as caught:
        run_program(program, project="demo", stack="dev", config=CONFIG, secret_keys=SECURE)
    assert str(caught.value) == ("configuration 'demo:port' is a secure value, which an offline plan does not decrypt, so "
                                 "require_int() has nothing to parse; read it with require_secret_int('port'), which keeps "
                                 "it secret (and unknown in the plan)")


def test_an_object_with_secure_leaves_still_parses_with_the_plain_getter() -> None:
    config = {**CONFIG, "demo:db": '{"host": "db.internal", "password": "[secret]"}'}

    def program() -> None:
        pulumi.export("host", pulumi.Config("demo").require_object("db")["host"])

    result = run_program(program, project="demo", stack="dev", config=config, secret_keys=[*SECURE, "demo:db"])
    assert result.outputs == {"host": "db.internal"}
