"""AWS stack rules: properties that span a bucket and its side resources, or a VPC and its flow logs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .aws import ENC, EXPOSURE, KMS_ALGORITHMS, LOGGING, S3_BUCKETS, S3_SSE, policy_statements, sse_defaults
from .props import Unknown, Unknowns, as_json, get, is_unknown, need, plain
from .registry import Context, rule

INLINE_VERSIONING = {"aws:s3/bucket:Bucket": "versioning.enabled", "aws:s3/bucketV2:BucketV2": "versionings.0.enabled"}
"""The (deprecated) inline versioning setting that stands in for a side resource, per bucket type: Bucket takes one
object, BucketV2 a list of them."""


# Stack rules read each bucket's outputs, where the inline settings are computed: unknown in preview, and after
# `pulumi up` whatever S3 reports, which for encryption is its SSE-S3 (AES256) default on every bucket. So an inline
# setting stands in for the side resource only when its known value is itself compliant.

def _inline_sse(bucket: Any) -> list[Any]:
    """The bucket's inline default-encryption settings; none when they are unknown (counted as not set)."""
    try:
        return list(sse_defaults(bucket.resource_type, bucket.props))
    except Unknown:
        return []


def _inline_kms(defaults: list[Any]) -> bool:
    """Whether inline settings are SSE-KMS with a named key in every rule. A known KMS algorithm whose key is unknown
    (the ARN of a key made in the same update) raises Unknown: that bucket is neither compliant nor SSE-S3 until then."""
    if not defaults or any(get(d, "sseAlgorithm") not in KMS_ALGORITHMS for d in defaults):
        return False
    return all(need(d, "kmsMasterKeyId") for d in defaults)


def _sse_finding(defaults: list[Any]) -> str:
    """What is wrong with a bucket whose (known) inline encryption, if any, is not SSE-KMS with a named key."""
    algorithms = sorted({a for d in defaults if isinstance(a := get(d, "sseAlgorithm"), str) and not is_unknown(a)})
    if not algorithms:
        return ("bucket has no default encryption configuration: S3 encrypts its objects with "
                "S3-managed keys (SSE-S3), not a customer-managed KMS key")
    if set(algorithms) <= set(KMS_ALGORITHMS):
        return "bucket's default encryption names no kmsMasterKeyId, so it uses the AWS-managed key; name a customer-managed key"
    return (f"bucket's default encryption is {', '.join(algorithms)} and no encryption configuration sets it to "
            f"{' or '.join(KMS_ALGORITHMS)} with a customer-managed kmsMasterKeyId")


def _inline_versioned(bucket: Any) -> bool:
    """Whether the bucket's inline versioning is known to be enabled (an unknown value is a truthy sentinel)."""
    return get(bucket.props, INLINE_VERSIONING[bucket.resource_type]) is True


def _by_type(resources: list[Any], *types: str) -> list[Any]:
    return [r for r in resources if r.resource_type in types]


def _urns(resources: Any) -> set[str]:
    return {getattr(r, "urn", str(r)) for r in resources or []}


def _targets(resources: list[Any], types: tuple[str, ...]) -> dict[str, Any]:
    """Side resources of `types` keyed by the URN of the bucket they configure. A side names its bucket in `bucket`
    (its id or name). Only when that is unknown (the id of a bucket made in the same update) is it the one bucket its
    `bucket` property depends on, else the one bucket among all its dependencies: a log bucket's policy also depends
    on the buckets whose ARNs it names, and is not theirs. Two sides of one bucket: the first by URN, in any order."""
    buckets = _by_type(resources, *S3_BUCKETS)
    owners: dict[str, set[str]] = {}
    for bucket in buckets:
        for ref in _bucket_refs(bucket):
            owners.setdefault(ref, set()).add(bucket.urn)
    found: dict[str, Any] = {}
    for side in sorted(_by_type(resources, *types), key=lambda r: r.urn):
        ref = get(side.props, "bucket")
        if isinstance(ref, str) and not is_unknown(ref):
            targets = owners.get(ref, set())  # none: a bucket outside the stack
        else:
            by_property = _urns((getattr(side, "property_dependencies", None) or {}).get("bucket"))
            targets = (by_property or _urns(getattr(side, "dependencies", None))) & {b.urn for b in buckets}
        if len(targets) == 1:
            found.setdefault(targets.pop(), side)
    return found


def _bucket_refs(bucket: Any) -> set[str]:
    refs = {bucket.urn, f"{bucket.name}-id"}
    for key in ("bucket", "id"):
        value = get(bucket.props, key)
        if isinstance(value, str):
            refs.add(value)
    return refs


def _missing_side(resources: list[Any], types: tuple[str, ...]) -> Iterator[Any]:
    """(bucket, its side resource of `types` or None) for each bucket."""
    side = _targets(resources, types)
    for bucket in _by_type(resources, *S3_BUCKETS):
        yield bucket, side.get(bucket.urn)


@rule("aws-s3-bucket-public-access-blocked", "Checks whether every S3 bucket has a public access block.",
      severity="critical", remediation="Add an aws.s3.BucketPublicAccessBlock with all four settings true for each bucket.",
      frameworks={**EXPOSURE, "GDPR": ("Art.32",), "CIS": ("AWS 2.1.4",)})
def buckets_blocked(resources: list[Any], ctx: Context) -> Iterator[tuple[str, str]]:
    for bucket, side in _missing_side(resources, ("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",)):
        if side is None:
            yield bucket.urn, "bucket has no public access block"


@rule("aws-s3-bucket-default-encryption", "Checks whether every S3 bucket has a default encryption configuration.",
      severity="high", remediation="Add an aws.s3.BucketServerSideEncryptionConfiguration with sseAlgorithm aws:kms and "
                                   "kmsMasterKeyId of your KMS key for each bucket.",
      frameworks={**ENC, "CIS": ("AWS 2.1.1",)})
def buckets_encrypted(resources: list[Any], ctx: Context) -> Iterator[tuple[str, str]]:
    # `aws-s3-kms-encryption` checks the configurations that exist; this finds the buckets that have none.
    unknowns = Unknowns()
    for bucket, side in _missing_side(resources, S3_SSE):
        with unknowns.skip():
            if side is None and not _inline_kms(inline := _inline_sse(bucket)):
                yield bucket.urn, _sse_finding(inline)
    unknowns.raise_first()


@rule("aws-s3-bucket-versioning", "Checks whether every S3 bucket keeps object versions.",
      severity="medium", remediation="Add aws.s3.BucketVersioning with status Enabled.",
      frameworks={"HIPAA": ("164.312(c)(1)",), "SOC2": ("A1.2",), "NIST-800-53": ("CP-9",), "GDPR": ("Art.32",), "CIS": ("AWS 2.1.3",)})
def buckets_versioned(resources: list[Any], ctx: Context) -> Iterator[tuple[str, str]]:
    types = ("aws:s3/bucketVersioning:BucketVersioning", "aws:s3/bucketVersioningV2:BucketVersioningV2")
    for bucket, side in _missing_side(resources, types):
        if _inline_versioned(bucket):
            continue
        status = get(side.props, "versioningConfiguration.status") if side is not None else None
        if status != "Enabled":
            yield bucket.urn, f"versioning is {status or 'not configured'}; enable it so deletes and overwrites can be undone"


def _denies_plain_http(policy: Any) -> bool:
    """Whether a policy document has a Deny statement conditioned on aws:SecureTransport being false."""
    for statement in policy_statements(plain(policy)):
        for test in (statement.get("Condition") or {}).values() if statement.get("Effect") == "Deny" else ():
            value = test.get("aws:SecureTransport") if isinstance(test, dict) else None
            if any(str(v).lower() == "false" for v in (value if isinstance(value, list) else [value])):
                return True
    return False


@rule("aws-s3-bucket-tls-only", "Checks whether every S3 bucket policy denies requests without TLS.",
      severity="high", remediation="Add a bucket policy statement denying s3:* when aws:SecureTransport is false.",
      frameworks={"HIPAA": ("164.312(e)(1)",), "SOC2": ("CC6.7",), "PCI-DSS-v4": ("4.2.1",), "NIST-800-53": ("SC-8",), "CIS": ("AWS 2.1.2",)})
def buckets_tls(resources: list[Any], ctx: Context) -> Iterator[tuple[str, str]]:
    unknowns = Unknowns()  # a policy naming ARNs not yet assigned is unknown in preview; the other buckets are checked
    for bucket, side in _missing_side(resources, ("aws:s3/bucketPolicy:BucketPolicy",)):
        with unknowns.skip():
            # Bucket and BucketV2 take an inline `policy` too; unknown (a preview's computed output) it counts as unset.
            inline = get(bucket.props, "policy")
            if inline is not None and not is_unknown(inline) and _denies_plain_http(as_json(inline, "policy")):
                continue
            # The SDK also takes the policy as an object (a PolicyDocument), which goes on the wire as one.
            policy = as_json(need(side.props, "policy"), "policy") if side is not None else None
            if not _denies_plain_http(policy):
                yield bucket.urn, "no bucket policy denies non-TLS (aws:SecureTransport=false) requests"
    unknowns.raise_first()


@rule("aws-vpc-flow-logs", "Checks whether every VPC has a flow log capturing all traffic.",
      severity="medium", remediation="Add aws.ec2.FlowLog with trafficType ALL for the VPC.",
      frameworks={**LOGGING, "CIS": ("AWS 3.9",)})
def vpc_flow_logs(resources: list[Any], ctx: Context) -> Iterator[tuple[str, str]]:
    logged: set[str] = set()
    for flow in _by_type(resources, "aws:ec2/flowLog:FlowLog"):
        if get(flow.props, "trafficType") == "ALL":
            logged.add(str(get(flow.props, "vpcId")))
            logged.update(getattr(d, "urn", str(d)) for d in getattr(flow, "dependencies", []) or [])
    for vpc in _by_type(resources, "aws:ec2/vpc:Vpc"):
        if not {vpc.urn, f"{vpc.name}-id"} & logged:
            yield vpc.urn, "VPC has no flow log of ALL traffic"


