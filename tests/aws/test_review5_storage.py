"""FSx for Lustre's S3 link and the lifecycle of a bucket it links (review 5, storage)."""

from __future__ import annotations

import pytest

from aiinfra.plan.runtime import PlanResult, run_program
from components.aws.context import AwsContext
from components.aws.storage import Bucket, BucketArgs, LogBucket, LogBucketArgs
from components.spec import BucketSpec

EAST = "prod-us-east-1"
LINK = "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation"
LIFECYCLE = "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration"


def test_the_s3_link_is_deleted_before_its_replacement_is_created(prod_plan: PlanResult) -> None:
    # FSx takes one association at "/", and a new bucket or prefix replaces it (data_repository_path is ForceNew):
    # created first, the new association would be refused while the old one holds "/".
    link = prod_plan.one(LINK, f"{EAST}-train-s3-link")
    assert link.deleteBeforeReplace is True
    assert link.inputs["fileSystemPath"] == "/"
    # Deleting the old association keeps the files on the file system.
    assert link.inputs["deleteDataInFilesystem"] is False


def bucket_plan(spec: BucketSpec, *, lustre_link: bool) -> PlanResult:
    def program() -> None:
        ctx = AwsContext(environment="prod", region="us-east-1", labels={}, account_id="123456789012", partition="aws",
                         dns_suffix="amazonaws.com", dns_prefix="com.amazonaws", protected=True)
        logs = LogBucket("prod-us-east-1-log-archive", LogBucketArgs(ctx, 365))
        Bucket("prod-us-east-1-datasets", BucketArgs(ctx, "datasets", spec, "arn:aws:kms:us-east-1:123456789012:key/k",
                                                     logs.target, lustre_link=lustre_link))
    return run_program(program, project="ai-infra", stack="prod")


def transitions(plan: PlanResult) -> list[tuple[int, str]]:
    [rule] = plan.one(LIFECYCLE, "prod-us-east-1-datasets-lifecycle").inputs["rules"]
    return [(t["days"], t["storageClass"]) for t in rule.get("transitions", [])]


def test_a_bucket_linked_to_lustre_gets_no_deep_archive_step_by_default() -> None:
    # FSx for Lustre cannot read DEEP_ARCHIVE objects; GLACIER_IR is instant retrieval and stays.
    assert transitions(bucket_plan(BucketSpec(), lustre_link=True)) == [(30, "STANDARD_IA"), (90, "GLACIER_IR")]
    warm_only = BucketSpec.model_validate({"tiering": {"warm_after_days": 60, "cold_after_days": None}})
    assert transitions(bucket_plan(warm_only, lustre_link=True)) == [(60, "STANDARD_IA")]


def test_an_unlinked_bucket_keeps_the_default_archive_step() -> None:
    assert transitions(bucket_plan(BucketSpec(), lustre_link=False)) == [
        (30, "STANDARD_IA"), (90, "GLACIER_IR"), (365, "DEEP_ARCHIVE")]


@pytest.mark.parametrize("archive", [None, 400])
def test_an_archive_step_written_in_the_spec_is_kept_as_written(archive: int | None) -> None:
    # 400 is refused by the spec checks for a linked bucket (tests/spine/test_spec_linked_buckets.py); the component
    # never second-guesses what the spec says.
    spec = BucketSpec.model_validate({"tiering": {"archive_after_days": archive}})
    expected = [(30, "STANDARD_IA"), (90, "GLACIER_IR")] + ([(archive, "DEEP_ARCHIVE")] if archive else [])
    assert transitions(bucket_plan(spec, lustre_link=True)) == expected
