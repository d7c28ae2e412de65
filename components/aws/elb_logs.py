"""Which AWS service writes a regional load balancer's access logs into the region's log bucket (pure: no Pulumi).

Application Load Balancers: the Elastic Load Balancing user guide's bucket policy ("Step 2: Attach a policy to your
S3 bucket", https://docs.aws.amazon.com/elasticloadbalancing/latest/application/enable-access-logging.html; the same
text is on .../application/enable-connection-logging.html and .../classic/enable-access-logs.html) grants `s3:PutObject` on
`<bucket>/<prefix>/AWSLogs/<load balancer account>/*` to the service principal
`logdelivery.elasticloadbalancing.amazonaws.com`, with no condition, and adds: "Previously, for Regions available
before August 2022, we required a policy that granted permissions to an Elastic Load Balancing account that was
specific to the Region. This legacy policy is still supported, but we recommend that you replace it with the newer
policy above." Regions missing from that legacy account list (every Region opened since, such as ap-southeast-4,
il-central-1, ca-west-1, mx-central-1) never supported the account form, and `aws.elb.get_service_account` only
knows that list. So the service principal is the one rule for every Region, and nothing is looked up per Region.

Network Load Balancers ("Enable access logs for your Network Load Balancer",
https://docs.aws.amazon.com/elasticloadbalancing/latest/network/enable-access-logs.html) deliver through
`delivery.logs.amazonaws.com`: `s3:PutObject` with `s3:x-amz-acl: bucket-owner-full-control` and
`aws:SourceAccount`, plus `s3:GetBucketAcl` on the bucket. Those are the log delivery statements the log bucket
has anyway for VPC and Global Accelerator flow logs, so an NLB needs no statement of its own.
"""

from __future__ import annotations

from components.spec.aws import LoadBalancerKind

ALB_LOG_DELIVERY = "logdelivery.elasticloadbalancing.amazonaws.com"
"""Writes ALB access logs in every Region (the account form is legacy, pre-August-2022 Regions only)."""
LOG_DELIVERY = "delivery.logs.amazonaws.com"
"""AWS log delivery: NLB access logs, VPC flow logs, Global Accelerator flow logs."""


def access_log_writer(kind: LoadBalancerKind) -> str:
    """The service principal that delivers `kind`'s access logs to S3; the same in every Region."""
    return ALB_LOG_DELIVERY if kind is LoadBalancerKind.APPLICATION else LOG_DELIVERY


def needs_own_statement(kind: LoadBalancerKind) -> bool:
    """Whether the log bucket needs a statement for `kind` beyond its shared log delivery statements."""
    return access_log_writer(kind) != LOG_DELIVERY
