"""AWS stack rules: properties that span a bucket and its side resources, a VPC and its flow logs, a listener and
its rules, or EBS volumes and the account's default encryption."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from .aws import ENC, EXPOSURE, KMS_ALGORITHMS, LOGGING, S3_BUCKETS, S3_SSE, plain_http_actions, policy_statements, sse_defaults
from .aws_ec2 import (
    DEFAULT_KMS_KEY,
    EBS_DEFAULT_ENCRYPTION,
    EBS_VOLUME,
    ENCRYPTION_BY_DEFAULT,
    INSTANCES,
    LAUNCH_TEMPLATE,
    account_default,
    aws_managed_key,
    default_key,
    ebs_default_mode,
    ebs_volumes,
    known_output,
    maps_root,
    names_no_key,
    region_of,
)
from .pools import outside_template
from .props import Unknown, Unknowns, as_json, get, is_unknown, items, log_named, need, of_type, owner_of, plain, refs, urns
from .registry import Context, rule

# CIS IDs below: CIS AWS Foundations Benchmark v3.0.0.
DIRECTORY_BUCKET = "aws:s3/directoryBucket:DirectoryBucket"
"""S3 Express One Zone: SSE-S3 by default, SSE-KMS through the same encryption configuration resources; public access
always blocked, HTTPS only, no versioning (S3 user guide, directory buckets), so only the encryption rule applies."""
ACCOUNT_PAB = "aws:s3/accountPublicAccessBlock:AccountPublicAccessBlock"
PAB_SETTINGS = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
LISTENERS = ("aws:lb/listener:Listener", "aws:alb/listener:Listener")
LISTENER_RULES = ("aws:lb/listenerRule:ListenerRule", "aws:alb/listenerRule:ListenerRule")

INLINE_VERSIONING = {"aws:s3/bucket:Bucket": "versioning.enabled", "aws:s3/bucketV2:BucketV2": "versionings.0.enabled"}
"""The (deprecated) inline versioning setting that stands in for a side resource, per bucket type: Bucket takes one
object, BucketV2 a list of them."""


# Stack rules read each bucket's outputs, where the inline settings are computed: unknown in preview, and after
# `pulumi up` whatever S3 reports, which for encryption is its SSE-S3 (AES256) default on every bucket. So an inline
# setting stands in for the side resource only when its known value is itself compliant.

def _inline_sse(bucket: Any) -> list[Any]:
    """The bucket's inline default-encryption settings; none when they are unknown (counted as not set)."""
    if bucket.resource_type == DIRECTORY_BUCKET:
        return []  # no inline setting: a directory bucket's default encryption is a configuration resource
    try:
        return list(sse_defaults(bucket.resource_type, bucket.props))
    except Unknown:
        return []


def _inline_kms(defaults: list[Any]) -> bool:
    """Whether inline settings are SSE-KMS with a named key in every rule. A known KMS algorithm whose key is unknown
    (the ARN of a key made in the same update) raises Unknown: that bucket is neither compliant nor SSE-S3 until then."""
    if not defaults or any(get(d, "sseAlgorithm") not in KMS_ALGORITHMS for d in defaults):
        return False
    return all((key := need(d, "kmsMasterKeyId")) and not aws_managed_key(key) for d in defaults)


def _sse_s3(defaults: list[Any]) -> bool:
    """Whether inline settings leave the bucket SSE-S3: AES256, or no known algorithm (S3's default then)."""
    return all(get(d, "sseAlgorithm") in (None, "AES256") or is_unknown(get(d, "sseAlgorithm")) for d in defaults)


def _sse_finding(defaults: list[Any]) -> str:
    """What is wrong with a bucket whose (known) inline encryption, if any, is not SSE-KMS with a named key."""
    algorithms = sorted({a for d in defaults if isinstance(a := get(d, "sseAlgorithm"), str) and not is_unknown(a)})
    if not algorithms:
        return ("bucket has no default encryption configuration: S3 encrypts its objects with "
                "S3-managed keys (SSE-S3), not a customer-managed KMS key")
    if set(algorithms) <= set(KMS_ALGORITHMS):
        if aws_managed := sorted({k for d in defaults if aws_managed_key(k := get(d, "kmsMasterKeyId"))}):
            return (f"bucket's default encryption names kmsMasterKeyId {', '.join(aws_managed)}, the AWS-managed key; "
                    "name a customer-managed key")
        return "bucket's default encryption names no kmsMasterKeyId, so it uses the AWS-managed key; name a customer-managed key"
    return (f"bucket's default encryption is {', '.join(algorithms)} and no encryption configuration sets it to "
            f"{' or '.join(KMS_ALGORITHMS)} with a customer-managed kmsMasterKeyId")


def _inline_versioned(bucket: Any) -> bool:
    """Whether the bucket's inline versioning is known to be enabled (an unknown value is a truthy sentinel)."""
    return get(bucket.props, INLINE_VERSIONING[bucket.resource_type]) is True


def _owners(resources: list[Any], types: tuple[str, ...], owner_types: tuple[str, ...] = S3_BUCKETS, key: str = "bucket",
            refs: Callable[[Any], set[str]] | None = None) -> Iterator[tuple[Any, Any]]:
    """(side, the resource it configures) for each side resource of `types`, in URN order: the owner it names in `key`
    (a bucket's id or name, a listener's ARN; props.owner_of). None for an owner outside the stack."""
    owners = of_type(resources, *owner_types)
    for side in sorted(of_type(resources, *types), key=lambda r: r.urn):
        if (owner := owner_of(side, key, get(side.props, key), owners, refs or _bucket_refs)) is not None:
            yield side, owner


def _targets(resources: list[Any], types: tuple[str, ...], buckets: tuple[str, ...] = S3_BUCKETS) -> dict[str, Any]:
    """Side resources of `types` keyed by the URN of the bucket they configure. Two sides of one bucket: the first by
    URN, in any order."""
    found: dict[str, Any] = {}
    for side, bucket in _owners(resources, types, buckets):
        found.setdefault(bucket.urn, side)
    return found


def _bucket_refs(bucket: Any) -> set[str]:
    return refs(bucket, "bucket", "id")


def _missing_side(resources: list[Any], types: tuple[str, ...], buckets: tuple[str, ...] = S3_BUCKETS) -> Iterator[Any]:
    """(bucket, its side resource of `types` or None) for each bucket of the `buckets` types."""
    side = _targets(resources, types, buckets)
    for bucket in of_type(resources, *buckets):
        yield bucket, side.get(bucket.urn)


def _account_blocked(accounts: list[Any]) -> bool:
    """Whether an account-level public access block in the stack turns on all four settings (CIS AWS 2.1.4 accepts
    the account's settings or the bucket's). An unknown setting raises Unknown."""
    return any(all(need(a.props, k) is True for k in PAB_SETTINGS) for a in accounts)


@rule("aws-s3-bucket-public-access-blocked", "Checks whether every S3 bucket has a public access block.",
      severity="critical", remediation="Add an aws.s3.BucketPublicAccessBlock with all four settings true for each bucket, "
                                       "or an aws.s3.AccountPublicAccessBlock with all four true for the account.",
      frameworks={**EXPOSURE, "GDPR": ("Art.32",), "CIS": ("AWS 2.1.4",)})
def buckets_blocked(resources: list[Any], ctx: Context) -> Iterator[tuple[str, str]]:
    accounts = of_type(resources, ACCOUNT_PAB)
    unknowns = Unknowns()
    for bucket, side in _missing_side(resources, ("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",)):
        with unknowns.skip():
            if side is None and not _account_blocked(accounts):
                partial = " (the account's public access block leaves a setting off)" if accounts else ""
                yield bucket.urn, f"bucket has no public access block{partial}"
    unknowns.raise_first()


@rule("aws-s3-bucket-default-encryption", "Checks whether every S3 bucket's default encryption uses SSE-KMS with a "
      "customer-managed key.",
      severity="high", remediation="Add an aws.s3.BucketServerSideEncryptionConfiguration with sseAlgorithm aws:kms and "
                                   "kmsMasterKeyId of your KMS key for each bucket (server access log buckets, named with "
                                   "a log or logs segment, may keep SSE-S3: S3 log delivery supports only that).",
      frameworks=ENC)  # CIS AWS v3.0.0 has no S3 encryption control (2.1.1 is the TLS-only policy)
def buckets_encrypted(resources: list[Any], ctx: Context) -> Iterator[tuple[str, str]]:
    # `aws-s3-kms-encryption` checks the configuration resources; this judges each bucket that has none on its inline
    # setting, as the outputs show it (after `pulumi up` S3's SSE-S3 default on a bucket the program set none on).
    unknowns = Unknowns()
    for bucket, side in _missing_side(resources, S3_SSE, (*S3_BUCKETS, DIRECTORY_BUCKET)):
        with unknowns.skip():
            if side is None and not _inline_kms(inline := _inline_sse(bucket)):
                if bucket.resource_type in S3_BUCKETS and log_named(bucket.name) and _sse_s3(inline):
                    continue  # as in aws-s3-kms-encryption: S3 server access logs go only to SSE-S3 buckets
                yield bucket.urn, _sse_finding(inline)
    unknowns.raise_first()


@rule("aws-s3-bucket-versioning", "Checks whether every S3 bucket keeps object versions.",
      severity="medium", remediation="Add aws.s3.BucketVersioning with status Enabled.",
      frameworks={"HIPAA": ("164.312(c)(1)",), "SOC2": ("A1.2",), "NIST-800-53": ("CP-9",), "GDPR": ("Art.32",)})
# No CIS ID: CIS AWS v3.0.0 has no versioning control (2.1.2 is MFA Delete, 2.1.3 Macie; v1.4 2.1.3 was MFA Delete).
def buckets_versioned(resources: list[Any], ctx: Context) -> Iterator[tuple[str, str]]:
    types = ("aws:s3/bucketVersioning:BucketVersioning", "aws:s3/bucketVersioningV2:BucketVersioningV2")
    for bucket, side in _missing_side(resources, types):
        if _inline_versioned(bucket):
            continue
        status = get(side.props, "versioningConfiguration.status") if side is not None else None
        if status != "Enabled":
            yield bucket.urn, f"versioning is {status or 'not configured'}; enable it so deletes and overwrites can be undone"


_S3_ARN = re.compile(r"^arn:[^:]*:s3:::(.*)$")


def _glob(pattern: str) -> re.Pattern[str]:
    """An IAM resource pattern (`*` any run of characters, `?` one) as a regex."""
    return re.compile("^" + re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".") + "$")


def _bucket_name(bucket: Any) -> str | None:
    for value in (get(bucket.props, "bucket"), get(bucket.props, "arn")):
        if isinstance(value, str) and not is_unknown(value):
            arn = _S3_ARN.match(value)
            return arn.group(1) if arn else value
    return None


def _coverage(resources: list[str], name: str | None) -> tuple[bool, bool]:
    """Whether the Resource patterns cover the bucket itself and all its objects. A bucket whose name is not known
    yet is taken to be the one the patterns name (the statement's policy was matched to this bucket)."""
    if "*" in resources:
        return True, True
    paths = [m.group(1) for r in resources if (m := _S3_ARN.match(r))]
    named = {p.removesuffix("/*") for p in paths}  # the buckets the patterns name, objects and all
    names = [name] if name else sorted(n for n in named if "/" not in n and not set(n) & {"*", "?"})
    best = (False, False)
    for candidate in names:
        # A literal "*" key stands for every object: only a pattern whose key part is a bare wildcard matches it.
        covered = tuple(any(_glob(p).match(target) for p in paths) for target in (candidate, f"{candidate}/*"))
        best = max(best, covered, key=sum)
    return best


def _tls_gaps(statement: dict) -> tuple[list[str], list[str]] | None:
    """None for a statement that has nothing to do with aws:SecureTransport=false; else (what besides its Resource keeps
    this Deny from covering every request without TLS, its Resource patterns). Context key names are not case-sensitive
    (IAM user guide, Condition element: aws:SourceIP is aws:sourceip); the doc makes no such exception for condition
    operators, which match as AWS spells them (Bool, BoolIfExists)."""
    if statement.get("Effect") != "Deny" or not isinstance(statement.get("Condition"), dict):
        return None
    tests = [(op, key, value) for op, test in statement["Condition"].items() if isinstance(test, dict) for key, value in test.items()]
    plain_http = [(op, v) for op, key, v in tests if str(key).lower() == "aws:securetransport"
                  and any(str(x).lower() == "false" for x in (v if isinstance(v, list) else [v]))]
    if not plain_http:
        return None
    gaps = [f"with {k}" for k in ("NotPrincipal", "NotAction", "NotResource") if k in statement]
    principal = statement.get("Principal")
    if principal != "*" and not (isinstance(principal, dict) and set(principal) == {"AWS"} and principal["AWS"] in ("*", ["*"])):
        gaps.append(f"only for Principal {principal}")
    actions = statement.get("Action", [])
    actions = [actions] if isinstance(actions, str) else list(actions)
    if not set(actions) & {"*", "s3:*"}:
        gaps.append(f"only for Action {', '.join(map(str, actions)) or '(none)'}")
    if len(tests) > 1 or plain_http[0][0] not in ("Bool", "BoolIfExists"):
        gaps.append(f"only when its Condition {statement['Condition']} holds")
    resources = statement.get("Resource", [])
    return gaps, [resources] if isinstance(resources, str) else [str(r) for r in resources]


def _resource_gap(resources: list[str], name: str | None) -> str | None:
    """What part of the bucket the Resource patterns leave out, if any."""
    bucket_level, objects = _coverage(resources, name)
    if bucket_level and objects:
        return None
    missing = " or ".join(w for w, ok in (("the bucket itself", bucket_level), ("all its objects", objects)) if not ok)
    return f"not on {missing} (Resource {', '.join(resources) or '(none)'})"


def _tls_verdict(policies: list[Any], name: str | None) -> str | None:
    """None when the policy documents deny every request without TLS; else what is wrong. Statements complete but for
    their Resource (Principal *, s3:* or *, only aws:SecureTransport false) add up: one on the bucket's ARN and one on
    BUCKET/* together cover the bucket and its objects."""
    complete: list[str] = []
    narrow = None
    for policy in policies:
        for statement in policy_statements(plain(policy)):
            if (found := _tls_gaps(statement)) is None:
                continue
            gaps, resources = found
            if not gaps:
                complete += resources
            elif narrow is None:
                narrow = [*gaps, *filter(None, [_resource_gap(resources, name)])]
    if complete and (gap := _resource_gap(complete, name)) is None:
        return None
    narrow = [gap] if complete else narrow
    if narrow:
        return (f"the bucket policy denies non-TLS (aws:SecureTransport=false) requests {', '.join(narrow)}; deny s3:* "
                "(or *) to Principal * on the bucket and its objects (arn:...:s3:::BUCKET and arn:...:s3:::BUCKET/*)")
    return "no bucket policy denies non-TLS (aws:SecureTransport=false) requests"


@rule("aws-s3-bucket-tls-only", "Checks whether every S3 bucket policy denies requests without TLS.",
      severity="high", remediation="Add a bucket policy statement denying s3:* to Principal * on the bucket and its objects "
                                   "when aws:SecureTransport is false.",
      frameworks={"HIPAA": ("164.312(e)(1)",), "SOC2": ("CC6.7",), "PCI-DSS-v4": ("4.2.1",), "NIST-800-53": ("SC-8",), "CIS": ("AWS 2.1.1",)})
def buckets_tls(resources: list[Any], ctx: Context) -> Iterator[tuple[str, str]]:
    unknowns = Unknowns()  # a policy naming ARNs not yet assigned is unknown in preview; the other buckets are checked
    for bucket, side in _missing_side(resources, ("aws:s3/bucketPolicy:BucketPolicy",)):
        with unknowns.skip():
            # Bucket and BucketV2 take an inline `policy` too; unknown (a preview's computed output) it counts as unset.
            inline = get(bucket.props, "policy")
            policies = [as_json(inline, "policy")] if inline is not None and not is_unknown(inline) else []
            name = _bucket_name(bucket)
            if policies and _tls_verdict(policies, name) is None:
                continue
            # The SDK also takes the policy as an object (a PolicyDocument), which goes on the wire as one.
            if side is not None:
                policies.append(as_json(need(side.props, "policy"), "policy"))
            if (finding := _tls_verdict(policies, name)) is not None:
                yield bucket.urn, finding
    unknowns.raise_first()


@rule("aws-vpc-flow-logs", "Checks whether every VPC has a flow log capturing all traffic.",
      severity="medium", remediation="Add aws.ec2.FlowLog with trafficType ALL for the VPC.",
      frameworks={**LOGGING, "CIS": ("AWS 3.7",)})  # v3.0.0 3.7 (3.9 in v1.4/v1.5; v3.0.0 3.9 is S3 read events)
def vpc_flow_logs(resources: list[Any], ctx: Context) -> Iterator[tuple[str, str]]:
    logged: set[str] = set()
    for flow in of_type(resources, "aws:ec2/flowLog:FlowLog"):
        if get(flow.props, "trafficType") == "ALL":
            logged.update(urns(getattr(flow, "dependencies", None)))  # vpcId is the VPC's ID, unknown in a preview
    for vpc in of_type(resources, "aws:ec2/vpc:Vpc"):
        if vpc.urn not in logged:
            yield vpc.urn, "VPC has no flow log of ALL traffic"


@rule("aws-ebs-default-encryption", "Checks whether EBS volumes that leave encryption unset (an AMI's root volume, a "
      "mapping or volume without encrypted) or its key (encrypted without kmsKeyId) are encrypted with a "
      "customer-managed key by the account's EBS encryption by default and default EBS key.",
      severity="high", remediation="Set encrypted true with kmsKeyId on each volume (a launch template maps the root device, "
                                   "/dev/xvda or /dev/sda1, to do so), or add aws.ebs.EncryptionByDefault and "
                                   "aws.ebs.DefaultKmsKey with a customer-managed key for the region. When another stack "
                                   "or the landing zone sets them, set this rule's config ebsDefaultEncryption to what "
                                   "the account does: off (the default), aws_managed_key or customer_key.",
      frameworks={**ENC, "CIS": ("AWS 2.2.1",)}, config=EBS_DEFAULT_ENCRYPTION)  # CIS AWS Foundations v3.0.0 2.2.1
def ebs_default_encryption(resources: list[Any], ctx: Context) -> Iterator[tuple[str, str]]:
    # `aws-launch-template-encrypted-volumes` checks the volumes that set encrypted false or an AWS-managed key; this
    # checks those that leave encryption to the snapshot they come from (unencrypted unless the account encrypts new
    # volumes by default), and those that leave the key to the account's default EBS key.
    mode = ebs_default_mode(ctx)
    defaults, keys = of_type(resources, ENCRYPTION_BY_DEFAULT), of_type(resources, DEFAULT_KMS_KEY)
    templates = of_type(resources, LAUNCH_TEMPLATE)
    unknowns = Unknowns()
    for r in of_type(resources, LAUNCH_TEMPLATE, *INSTANCES, EBS_VOLUME):
        with unknowns.skip():
            # Outputs: after `pulumi up` an instance's or volume's unset setting reports what EC2 made of it (false
            # unless its snapshot or the account's default encrypts it), so any value but true needs the default. A
            # template's outputs are its inputs: an explicit false there is the resource rule's to report.
            template, region = r.resource_type == LAUNCH_TEMPLATE, region_of(r)
            volumes = list(ebs_volumes(r.resource_type, r.props, outputs=True))
            if keyless := [label for label, encrypted, key in volumes if encrypted and names_no_key(r, key)]:
                customer, key_source = default_key(mode, keys, region)
                if not customer:
                    yield r.urn, (f"{'; '.join(keyless)}: encrypted without kmsKeyId, so EC2 uses the account's default "
                                  f"EBS key, the AWS-managed aws/ebs ({key_source}); set kmsKeyId to a customer-managed "
                                  "key, or make the account's default EBS key customer-managed (aws.ebs.DefaultKmsKey; "
                                  "ebsDefaultEncryption customer_key)")
            plain_volumes = [label if label.startswith("the AMI's") else f"{label} (encrypted {'unset' if encrypted is None else 'false'})"
                             for label, encrypted, _ in volumes if encrypted is None or (encrypted is False and not template)]
            if template and not maps_root(r.props):
                plain_volumes.insert(0, "the AMI's root volume (no mapping for /dev/xvda or /dev/sda1)")
            elif (r.resource_type in INSTANCES and known_output(r.props, "rootBlockDevice") is None
                  and (outside := outside_template(r, templates)) is not None):
                plain_volumes.insert(0, f"the root volume ({outside} is not in this stack: its mapping, else the AMI's)")
            if not plain_volumes:
                continue
            account, source = account_default(mode, defaults, keys, region)
            if account == "off":
                yield r.urn, (f"{'; '.join(plain_volumes)}: not encrypted unless its snapshot is, and no aws.ebs.EncryptionByDefault"
                              f"{' for ' + region if region else ''} in the stack encrypts new volumes ({source}); set "
                              "encrypted true with kmsKeyId, or enable EBS encryption by default (in another stack or "
                              "the landing zone: set ebsDefaultEncryption to what it does)")
            elif account == "aws_managed_key":
                yield r.urn, (f"{'; '.join(plain_volumes)}: encrypted by the account's EBS encryption by default with "
                              f"the AWS-managed key aws/ebs ({source}); set encrypted true with a customer-managed "
                              "kmsKeyId, or make the account's default EBS key customer-managed (aws.ebs.DefaultKmsKey; "
                              "ebsDefaultEncryption customer_key)")
    unknowns.raise_first()


def _listener_refs(listener: Any) -> set[str]:
    return refs(listener, "arn", "id")


@rule("aws-lb-listener-rules-tls", "Checks whether the rules of plain-HTTP load balancer listeners only redirect to "
      "HTTPS or answer with a fixed response.",
      severity="high", remediation="On an HTTP listener give every rule a redirect action with protocol HTTPS, or a "
                                   "fixed-response action (e.g. 403); forward and authenticate from an HTTPS listener.",
      frameworks={"HIPAA": ("164.312(e)(1)",), "SOC2": ("CC6.7",), "PCI-DSS-v4": ("4.2.1",), "NIST-800-53": ("SC-8",), "GDPR": ("Art.32",)})
def listener_rules_tls(resources: list[Any], ctx: Context) -> Iterator[tuple[str, str]]:
    # `aws-lb-listener-tls` checks a listener's default actions; a rule attached to it can still forward plain HTTP.
    unknowns = Unknowns()
    for listener_rule, listener in _owners(resources, LISTENER_RULES, LISTENERS, "listenerArn", _listener_refs):
        with unknowns.skip():
            # Unset, the listener's protocol is computed (unknown in preview): HTTP, the default for an ALB listener.
            protocol = get(listener.props, "protocol")
            plain_http = protocol in (None, "HTTP") or is_unknown(protocol)
            if plain_http and (kinds := plain_http_actions(items(listener_rule.props, "actions"))):
                yield listener_rule.urn, (f"the rule's actions ({', '.join(kinds)}) serve plain HTTP: its listener "
                                          f"{listener.name} is HTTP, where rules may only redirect to HTTPS or answer "
                                          "with a fixed response")
    unknowns.raise_first()
