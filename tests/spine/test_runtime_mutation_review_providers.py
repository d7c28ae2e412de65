"""Default providers and resource options as the engine makes and keeps them (pkg/resource/deploy/default_providers.go,
source_eval.go), for what a mutation review found untested: which config configures a package's default provider,
which `pulumi:disable-default-providers` values the engine accepts, refuses or ignores, one default provider per
download URL, an explicit provider's version, and the options a plan records (Go durations at their limits)."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws
import pytest

from aiinfra.plan.default_providers import default_provider_name
from aiinfra.plan.engine_options import go_duration_seconds
from aiinfra.plan.runtime import UNKNOWN, run_program

AWS_VERSION = aws._utilities.get_version()


def test_a_default_provider_takes_only_its_own_packages_config() -> None:
    """GetPackageConfig keys by the whole namespace: `aws-native:region` configures aws-native, never aws, whose
    region a residency policy reads from the default provider."""
    config = {"aws:region": "us-east-2", "aws-native:region": "eu-west-1", "awsx:skip": "true"}
    result = run_program(lambda: aws.s3.Bucket("data"), project="demo", stack="dev", config=config)
    assert result.one("pulumi:providers:aws").inputs == {"version": AWS_VERSION, "region": "us-east-2"}


def test_resources_whose_download_urls_differ_by_a_trailing_slash_share_one_default_provider() -> None:
    """The engine trims one trailing "/" from a plugin download URL before it keys its default providers
    (providers.NewProviderRequest), so both buckets get one provider; two would be two registrations of one URN."""
    def program() -> None:
        aws.s3.Bucket("a", opts=pulumi.ResourceOptions(plugin_download_url="https://get.example.com/p/"))
        aws.s3.Bucket("b", opts=pulumi.ResourceOptions(plugin_download_url="https://get.example.com/p"))

    result = run_program(program, project="demo", stack="dev", config={"aws:region": "us-east-2"})
    provider = result.one("pulumi:providers:aws")
    assert provider.name == f"default_{AWS_VERSION.replace('.', '_')}_https_/get.example.com/p"
    assert {r.provider for r in result.of_type("aws:s3/bucket:Bucket")} == {f"{provider.urn}::{UNKNOWN}"}


def test_a_url_with_nothing_but_slashes_names_its_provider_as_tokens_into_qname_does() -> None:
    """tokens.IntoQName gives "_" for a text with no name in it, so the name keeps its URL part."""
    assert default_provider_name("aws", "", "//") == "default__"


def test_an_explicit_provider_with_a_version_that_is_not_semantic_fails_as_in_the_engine() -> None:
    """providers.SetProviderVersion refuses a version blang/semver cannot parse; the plan must not record it."""
    def program() -> None:
        aws.Provider("east", region="us-east-1", opts=pulumi.ResourceOptions(version="v7"))

    with pytest.raises(pulumi.RunError, match=r"pulumi:providers:aws 'east': passed invalid version 'v7'"):
        run_program(program, project="demo", stack="dev")


def _disabled(value: str) -> dict[str, str]:
    return {"aws:region": "us-east-1", "pulumi:disable-default-providers": value}


def test_disabling_every_default_provider_still_lets_a_stack_reference_read() -> None:
    """shouldDenyRequest never refuses the `pulumi` package: a StackReference reads through the built-in provider."""
    def program() -> None:
        pulumi.StackReference("acme/net/prod")
        aws.s3.Bucket("b", opts=pulumi.ResourceOptions(provider=aws.Provider("p", region="us-east-1")))

    result = run_program(program, project="demo", stack="dev", config=_disabled('["*"]'))
    assert len(result.of_type("aws:s3/bucket:Bucket")) == 1


def test_an_empty_disable_default_providers_value_disables_nothing() -> None:
    """`pulumi config set pulumi:disable-default-providers ""` leaves the engine's list empty, not unparsable."""
    result = run_program(lambda: aws.s3.Bucket("b"), project="demo", stack="dev", config=_disabled(""))
    assert len(result.of_type("pulumi:providers:aws")) == 1


@pytest.mark.parametrize("value", ['{"aws": true}', '"*"'])
def test_a_disable_default_providers_value_that_is_not_a_list_is_refused(value: str) -> None:
    """The engine unmarshals the value into a list of strings: an object or a string is the parse error, not a list
    whose items are the object's keys or the string's characters."""
    with pytest.raises(pulumi.RunError, match=r"^Failed to parse .*: not a list \(config pulumi:disable-default"):
        run_program(lambda: aws.s3.Bucket("b"), project="demo", stack="dev", config=_disabled(value))


# Resource options --------------------------------------------------------------------------------------------------

def test_the_plan_records_deleted_with_read_timeouts_and_only_properties_that_have_dependencies() -> None:
    """What the engine keeps of a registration: the URN whose deletion deletes this one (so `pulumi destroy` does not
    delete it itself), the read timeout with the others, and dependencies only for the properties that have any."""
    def program() -> None:
        key = aws.kms.Key("key")
        aws.s3.Bucket("data", bucket="data-bucket", tags={"key": key.arn}, opts=pulumi.ResourceOptions(
            deleted_with=key, custom_timeouts=pulumi.CustomTimeouts(read="2m", create="5m")))

    result = run_program(program, project="demo", stack="dev", config={"aws:region": "us-east-2"})
    bucket, key = result.one("aws:s3/bucket:Bucket"), result.one("aws:kms/key:Key")
    assert bucket.deletedWith == key.urn
    assert bucket.customTimeouts == {"create": 300.0, "read": 120.0}
    assert bucket.propertyDependencies == {"tags": [key.urn]}


def test_replace_with_is_recorded_in_urn_order_whatever_the_programs_order() -> None:
    """The plan document is compared between runs (`plan --diff`): the program's list order is not a change."""
    def program() -> None:
        first, second = aws.kms.Key("a-key"), aws.kms.Key("b-key")
        aws.s3.Bucket("data", opts=pulumi.ResourceOptions(replace_with=[second, first]))

    result = run_program(program, project="demo", stack="dev", config={"aws:region": "us-east-2"})
    assert result.one("aws:s3/bucket:Bucket").replaceWith == [
        result.one("aws:kms/key:Key", "a-key").urn, result.one("aws:kms/key:Key", "b-key").urn]


@pytest.mark.parametrize(("text", "seconds"), [
    ("9223372036854775807ns", 9223372036.854775807),  # Go's maximum Duration is accepted
    ("-9223372036854775808ns", -9223372036.854775808),  # and its minimum
    ("1.9999999999s", 1.999999999),  # a fraction past nanoseconds is truncated, not rounded
    ("1.000095866s", 1.0 + 95866 / 1e9),  # Duration.Seconds(): whole seconds plus nanoseconds, not one division
])
def test_go_durations_at_their_limits_read_as_time_parse_duration_reads_them(text: str, seconds: float) -> None:
    assert go_duration_seconds(text) == seconds


def test_a_duration_one_past_gos_maximum_is_refused() -> None:
    with pytest.raises(ValueError, match="longer than Go's maximum duration"):
        go_duration_seconds("9223372036854775808ns")
