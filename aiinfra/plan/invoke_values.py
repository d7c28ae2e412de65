"""Placeholder values for lookups whose results programs decode, split or index by region: AWS zones and zone IDs,
ECR tokens, SSM parameters, AKS kubeconfigs, GKE versions and the client identity the provider is configured with.

Each builder takes the invoke's arguments, the region it answers for and `setting`, which reads a provider setting
(`project`, `subscriptionId`) as the provider would: from the explicit provider the invoke names, else from the stack
config. `invokes.placeholder_result` lays what a builder returns over the typed placeholder of the result.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from typing import Any

ACCOUNT_ID = "123456789012"
PLACEHOLDER_UUID = "00000000-0000-4000-8000-000000000000"
AMI_ID = "ami-0123456789abcdef0"
PROJECT_NUMBER = "987654321098"
"""A GCP project's number: Google gives each project one, a string of digits, which programs put in service agent
emails (`service-<number>@gcp-sa-....iam.gserviceaccount.com`) and workload identity principals
(`principal://iam.googleapis.com/projects/<number>/...`)."""

Setting = Callable[[str], Any]


# AWS ------------------------------------------------------------------------------------------------------------------

_AZ_WORDS = {"north": "n", "south": "s", "east": "e", "west": "w", "central": "c", "gov": "g"}

# The AZ numbers of regions whose zone count is not 3. AWS documents "each Region has at least three Availability
# Zones" (docs.aws.amazon.com/global-infrastructure/latest/regions/aws-availability-zones.html); regions.json
# (components/catalog/data) has no per-region zone count, so every other region gets 3 (az1..az3). us-east-1 lists
# use1-az1..az6 and us-west-2 usw2-az1..az4 on that page; in us-west-1 accounts can use two, usw1-az1 and usw1-az3
# (EFS "Supported Availability Zones for One Zone file systems"; tests/aws/test_pure.py plans it with two). Which
# letter maps to which ID varies per account, so names are simply a, b, c, ...
_AZ_NUMBERS: dict[str, tuple[int, ...]] = {"us-east-1": (1, 2, 3, 4, 5, 6), "us-west-2": (1, 2, 3, 4), "us-west-1": (1, 3)}


def aws_zone_id_prefix(region: str) -> str:
    """The short code AWS builds AZ IDs from: us-east-1 -> use1, ap-southeast-2 -> apse2, us-gov-west-1 -> usgw1."""
    parts = region.split("-")
    if len(parts) < 3 or not parts[-1].isdigit():
        return region
    words = [w for part in parts[1:-1] for w in re.findall(r"north|south|east|west|central|gov|[a-z]+", part)]
    return parts[0] + "".join(_AZ_WORDS.get(w, w[:1]) for w in words) + parts[-1]


def aws_zones(args: dict[str, Any], region: str, setting: Setting) -> dict[str, Any]:
    numbers = _AZ_NUMBERS.get(region, (1, 2, 3))
    prefix = aws_zone_id_prefix(region)
    return {"names": [f"{region}{chr(ord('a') + i)}" for i in range(len(numbers))],
            "zoneIds": [f"{prefix}-az{n}" for n in numbers], "id": region, "region": region,
            "groupNames": [region], "state": "available"}


# ARN shapes: arn:<partition>:<service>:<region>:<account>:<resource>, where the resource is `<type>/<id>`,
# `<type>:<id>` or the bare name, and some services leave out the region or the account too
# (docs.aws.amazon.com/IAM/latest/UserGuide/reference-arns.html; each service's resource types in the Service
# Authorization Reference, docs.aws.amazon.com/service-authorization/latest/reference/).
_ARN_SERVICES = {"alb": "elasticloadbalancing", "lb": "elasticloadbalancing", "elb": "elasticloadbalancing",
                 "efs": "elasticfilesystem", "cloudwatch": "logs", "opensearch": "es", "cognito": "cognito-idp",
                 "sfn": "states", "index": "iam"}
"""pulumi-aws modules whose ARNs name another service namespace."""
_NO_REGION = {"iam", "s3", "route53", "cloudfront", "organizations"}
_NO_ACCOUNT = {"s3", "route53"}  # arn:aws:s3:::<bucket>, arn:aws:route53:::hostedzone/<id>
_NAME_ONLY = {"s3", "sns", "sqs"}  # arn:aws:sns:<region>:<account>:<topic>
_COLON_TYPES = {"lambda", "logs", "secretsmanager", "rds", "states", "elasticache", "redshift"}  # function:<name>
_RESOURCE_TYPES = {("rds", "instance"): "db", ("route53", "zone"): "hostedzone", ("states", "state-machine"): "stateMachine",
                   ("ec2", "ami"): "image", ("ec2", "nat-gateway"): "natgateway", ("eks", "node-group"): "nodegroup"}
_FIELD_ARNS = {"role": ("iam", "role"), "policy": ("iam", "policy"), "instanceprofile": ("iam", "instance-profile"),
               "user": ("iam", "user"), "kmskey": ("kms", "key"), "targetkey": ("kms", "key"),
               "certificate": ("acm", "certificate"),
               "topic": ("sns", ""), "queue": ("sqs", ""), "bucket": ("s3", ""), "loggroup": ("logs", "log-group"),
               "secret": ("secretsmanager", "secret"), "function": ("lambda", "function")}
"""ARN fields that name a resource of another service (an EKS cluster's `roleArn` is an IAM role's)."""


def aws_partition(region: str) -> dict[str, str]:
    """The AWS partition a region is in: aws.getPartition's answer for a provider in that region (pulumi-aws
    getPartition: `amazonaws.com.cn` and `cn.com.amazonaws` in AWS China; GovCloud shares the commercial names)."""
    if region.startswith("cn-"):
        return {"partition": "aws-cn", "id": "aws-cn", "dnsSuffix": "amazonaws.com.cn", "reverseDnsPrefix": "cn.com.amazonaws"}
    name = "aws-us-gov" if region.startswith("us-gov-") else "aws"
    return {"partition": name, "id": name, "dnsSuffix": "amazonaws.com", "reverseDnsPrefix": "com.amazonaws"}


def aws_arn(token: str, field: str, region: str, item: str = "") -> str:
    """A placeholder ARN for the field `field` of the result of the AWS invoke `token`, shaped like the ARNs of the
    resource it names: the field's own kind (`roleArn`: an IAM role), else the invoke's (`aws:kms/getKey` -> a KMS key,
    arn:aws:kms:<region>:<account>:key/...)."""
    module, _, function = token.partition(":")[2].partition("/")
    kind = re.sub(r"(?<!^)(?=[A-Z])", "-", function.rpartition(":")[2].removeprefix("get")).lower()
    service = _ARN_SERVICES.get(module, module)
    prefix = field[:-3].lower()
    for name, (field_service, field_kind) in _FIELD_ARNS.items():
        if prefix.endswith(name):
            service, kind = field_service, field_kind
            break
    kind = _RESOURCE_TYPES.get((service, kind), kind)
    resource = f"placeholder-{field or 'value'}{item}"
    if service not in _NAME_ONLY and kind:
        resource = f"{kind}{':' if service in _COLON_TYPES else '/'}{resource}"
    return (f"arn:{aws_partition(region)['partition']}:{service}:{'' if service in _NO_REGION else region}:"
            f"{'' if service in _NO_ACCOUNT else ACCOUNT_ID}:{resource}")


def ecr_authorization_token(args: dict[str, Any], region: str, setting: Setting) -> dict[str, Any]:
    """ECR's token is base64 of `AWS:<password>`: programs (Pulumi's ECR examples) decode and split it for a login."""
    password = "placeholder-password"
    registry = args.get("registryId") or ACCOUNT_ID
    return {"authorizationToken": base64.b64encode(f"AWS:{password}".encode()).decode(), "userName": "AWS",
            "password": password, "proxyEndpoint": f"https://{registry}.dkr.ecr.{region}.amazonaws.com"}


def _names_an_image(parameter: str) -> bool:
    # Public AMI parameters: /aws/service/ami-amazon-linux-latest/..., /aws/service/eks/optimized-ami/.../image_id.
    lowered = parameter.lower()
    return any(mark in lowered for mark in ("/ami", "image_id", "image-id"))


def ssm_parameter(args: dict[str, Any], region: str, setting: Setting) -> dict[str, Any]:
    """An AMI ID only for a parameter that names an image (programs pass it as image_id); any other a plain string."""
    name = str(args.get("name") or "")
    value = AMI_ID if _names_an_image(name) else "placeholder-value"
    return {"name": name, "id": name, "value": value, "insecureValue": value, "type": "String", "version": 1,
            "arn": f"arn:aws:ssm:{region}:{ACCOUNT_ID}:parameter/{name.lstrip('/')}"}


# Azure ----------------------------------------------------------------------------------------------------------------

def azure_client_config(args: dict[str, Any], region: str, setting: Setting) -> dict[str, Any]:
    return {"clientId": setting("clientId") or PLACEHOLDER_UUID, "objectId": PLACEHOLDER_UUID,
            "subscriptionId": setting("subscriptionId") or PLACEHOLDER_UUID,
            "tenantId": setting("tenantId") or PLACEHOLDER_UUID}


def kubeconfig_yaml(cluster: str, server: str, user: str) -> str:
    """A small valid kubeconfig: one cluster, context and user."""
    return (f"apiVersion: v1\nkind: Config\nclusters:\n- name: {cluster}\n  cluster:\n    server: {server}\n"
            f"contexts:\n- name: {cluster}\n  context:\n    cluster: {cluster}\n    user: {user}\n"
            f"current-context: {cluster}\nusers:\n- name: {user}\n  user:\n    token: placeholder-token\n")


def aks_credentials(kind: str) -> Callable[[dict[str, Any], str, Setting], dict[str, Any]]:
    """The list...Credential(s) answer: one kubeconfig, base64 encoded as AKS returns it (programs decode it for a
    kubernetes provider)."""
    def answer(args: dict[str, Any], region: str, setting: Setting) -> dict[str, Any]:
        cluster = str(args.get("resourceName") or args.get("fleetName") or args.get("managedNamespaceName")
                      or args.get("namespaceName") or "placeholder-cluster")
        group = str(args.get("resourceGroupName") or "placeholder-rg")
        server = f"https://{cluster}-placeholder.hcp.{region}.azmk8s.io:443"
        text = kubeconfig_yaml(cluster, server, f"{kind}_{group}_{cluster}")
        return {"kubeconfigs": [{"name": kind, "value": base64.b64encode(text.encode()).decode()}]}

    return answer


# GCP ------------------------------------------------------------------------------------------------------------------

def gcp_project(setting: Setting) -> str:
    return str(setting("project") or "placeholder-project")


def gcp_client_config(args: dict[str, Any], region: str, setting: Setting) -> dict[str, Any]:
    zone = str(setting("zone") or "")
    if not zone.startswith(f"{region}-"):  # a configured zone of another region (an explicit provider's region wins)
        zone = f"{region}-a"
    return {"project": gcp_project(setting), "region": region, "zone": zone, "accessToken": "placeholder-token",
            "id": "client-config"}


def gcp_project_lookup(args: dict[str, Any], region: str, setting: Setting) -> dict[str, Any]:
    project = str(args.get("projectId") or gcp_project(setting))
    return {"projectId": project, "name": project, "id": f"projects/{project}", "number": PROJECT_NUMBER}


# GKE-shaped placeholders, not a claim about what GKE offers (only the cloud knows, per region and day). Each channel's
# default is at least 1.34.1-gke.2364000: a GKE cluster without kubernetes_version in a Lustre region is checked
# against that floor (components/gcp/offerings.py signed_modules_channel), and the offline plan must pass it.
GKE_CHANNEL_VERSIONS = {"RAPID": "1.35.0-gke.2398000", "REGULAR": "1.34.1-gke.3971001",
                        "STABLE": "1.34.1-gke.2541000", "EXTENDED": "1.34.1-gke.2476000"}


def gke_engine_versions(args: dict[str, Any], region: str, setting: Setting) -> dict[str, Any]:
    """Versions and per-channel maps shaped as GKE's server config. validMasterVersions and the channels' latest
    versions are not here: invokes._UNREAD keeps them empty, which the offerings check reads as "not reported"."""
    versions = list(GKE_CHANNEL_VERSIONS.values())
    prefix = re.fullmatch(r"(\d+\.\d+)(\.\d+)?\.?", str(args.get("versionPrefix") or ""))
    if prefix:  # the provider lists only versions with the prefix
        versions = [f"{prefix.group(1)}{prefix.group(2) or '.1'}-gke.1000000"]
    return {"latestMasterVersion": versions[0], "latestNodeVersion": versions[0], "validNodeVersions": versions,
            "defaultClusterVersion": GKE_CHANNEL_VERSIONS["REGULAR"],
            "releaseChannelDefaultVersion": dict(GKE_CHANNEL_VERSIONS),
            "releaseChannelUpgradeTargetVersion": dict(GKE_CHANNEL_VERSIONS)}
