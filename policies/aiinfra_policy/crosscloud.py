"""Rules across clouds: data residency (by region and by data-zone tag) and encryption in transit. The accelerator
rules are in accelerators.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .common import ALLOWED_REGIONS
from .props import Unknowns, get, items, need, provider_props
from .registry import Context, rule
from .tagging import provider_tags

GLOBAL_SERVICES = ("aws:iam/", "aws:route53/", "aws:cloudfront/", "aws:globalaccelerator/", "aws:organizations/",
                   "aws:shield/", "gcp:serviceaccount/", "gcp:projects/", "gcp:organizations/", "gcp:folder/")
"""Types of global services: they have no region, so the provider's region says nothing about where they live."""


def _region(props: Any, provider: Any, type_: str = "") -> str | None:
    """The resource's region, zone or location, else its provider's (`region` for aws and gcp, `location` for
    azure-native); an unknown one raises Unknown."""
    for key in ("region", "location", "zone"):
        value = need(props, key)
        if isinstance(value, str):
            return region_name(value)
    if type_.startswith(GLOBAL_SERVICES) or provider is None:
        return None
    value = need(provider, "region") or need(provider, "location")
    return region_name(value) if isinstance(value, str) else None


def region_name(value: str) -> str:
    """A region as the rules compare it: lower case, and without spaces, since Azure takes a location's display name
    too ("West Europe" is westeurope); AWS and GCP names have no spaces."""
    return value.lower().replace(" ", "")


def _within(region: str, allowed: list[str]) -> bool:
    """Whether a region, or a zone of it (europe-west4-b, us-east-1a), is one of `allowed`."""
    return any(region == a or region.startswith(a + "-") or (region[:-1] == a and region[-1:].isalpha()) for a in allowed)


GCS_MULTI_REGIONS = ("us", "eu", "asia")
"""Cloud Storage multi-regions: data may be stored in any region of the continent, so no list of regions covers one."""
GCS_DUAL_REGIONS = {
    "asia1": ("asia-northeast1", "asia-northeast2"), "eur4": ("europe-north1", "europe-west4"),
    "eur5": ("europe-west1", "europe-west2"), "eur7": ("europe-west2", "europe-west3"),
    "eur8": ("europe-west3", "europe-west6"), "nam4": ("us-central1", "us-east1"),
}
"""Cloud Storage predefined dual-regions and the two regions that hold their data
(https://cloud.google.com/storage/docs/locations#predefined; ASIA1 is Tokyo and Osaka)."""


def _location_allowed(region: str, allowed: list[str]) -> bool:
    """Whether data in `region` stays in `allowed` (lower case): a multi-region only when allowed by its own name, a
    predefined dual-region when allowed by name or when both its regions are."""
    if region in allowed:
        return True
    if region in GCS_MULTI_REGIONS:
        return False  # its data may sit in any region of the continent, not only the allowed ones
    if region in GCS_DUAL_REGIONS:
        return all(_within(member, allowed) for member in GCS_DUAL_REGIONS[region])
    return _within(region, allowed)


def _placement(region: str) -> str:
    """How a location is named in messages: a dual-region with its regions, a multi-region as such."""
    if region in GCS_DUAL_REGIONS:
        return f"dual-region {region} ({' and '.join(GCS_DUAL_REGIONS[region])})"
    return f"multi-region {region} (any region of the continent)" if region in GCS_MULTI_REGIONS else f"region {region}"


INHERITED_LOCATION = frozenset({"azure-native:keyvault:Key", "azure-native:keyvault:Secret"})
"""Azure resources placed with their parent (a key or secret lives in its vault, whose location the rule checks): they
take no location, and report it only after creation, so in a preview it is unknown."""
NESTED_REGIONS = {
    "aws:dynamodb/table:Table": "replicas[].regionName",
    "aws:dynamodb/globalTable:GlobalTable": "replicas[].regionName",
    "aws:secretsmanager/secret:Secret": "replicas[].region",
    "aws:ecr/replicationConfiguration:ReplicationConfiguration": "replicationConfiguration.rules[].destinations[].region",
    "gcp:secretmanager/secret:Secret": "replication.userManaged.replicas[].location",
}
"""Regions a resource keeps copies of its data in besides its own: a DynamoDB global table's replicas, Secrets Manager
replicas, ECR replication destinations, Secret Manager user-managed replicas (`[]`: each element of a list)."""
GCS_BUCKET = "gcp:storage/bucket:Bucket"


def _nested(props: Any, path: str) -> list[str]:
    """The strings at `path` (see NESTED_REGIONS); an unknown list or value raises Unknown."""
    *lists, last = path.split("[].")
    nodes = [props]
    for part in lists:
        nodes = [element for node in nodes for element in items(node, part)]
    return [value for node in nodes if isinstance(value := need(node, last), str)]


def _placements(r: Any) -> list[tuple[str, str | None]]:
    """(region, what it is for messages: None for the resource's own) of every place a resource keeps data: its own
    region, zone or location (else its provider's), and the regions of its replicas. A Cloud Storage custom
    dual-region (a multi-region location with customPlacementConfig.dataLocations) keeps data in those two only."""
    found: list[tuple[str, str | None]] = []
    region = _region(r.props, provider_props(r), r.resource_type)
    custom = list(items(r.props, "customPlacementConfig.dataLocations")) if r.resource_type == GCS_BUCKET else []
    if custom and region in GCS_MULTI_REGIONS:
        found += [(place, f"custom dual-region {region}: region {place}") for place in map(region_name, map(str, custom))]
    elif region is not None and region != "global":
        found.append((region, None))
    if (path := NESTED_REGIONS.get(r.resource_type)) is not None:
        found += [(place, f"replica region {place} ({path})") for place in map(region_name, _nested(r.props, path))]
    return found


# Verified: HIPAA 164.308(b) (business associate contracts) says nothing of where data lives, so it is not cited here.
@rule("data-residency", "Checks whether every regional resource, and every region it replicates data to, is an allowed region.",
      severity="critical", remediation="Move the resource (or its replicas) to an allowed region or extend allowedRegions.",
      frameworks={"GDPR": ("Art.44",), "SOC2": ("C1.1",), "NIST-800-53": ("SA-9(5)",)},
      config=ALLOWED_REGIONS)
def residency(resources: list[Any], ctx: Context) -> Iterator[tuple[str, str]]:
    allowed = [region_name(r) for r in ctx.config.get("allowedRegions") or []]
    if not allowed:
        return
    unknowns = Unknowns()  # e.g. `location=resource_group.location` of a group whose location is not yet known
    for r in resources:
        if r.resource_type.startswith(("pulumi:", "kubernetes:")) or r.resource_type in INHERITED_LOCATION:
            continue
        with unknowns.skip():
            for region, nested in _placements(r):
                if not _location_allowed(region, allowed):
                    yield r.urn, f"{nested or _placement(region)} is outside the allowed regions {', '.join(allowed)}"
    unknowns.raise_first()


LABELS = ("tags", "labels", "resourceLabels")
"""Where resources keep their own tags or labels (resourceLabels: a GKE cluster's)."""
MERGED_LABELS = ("tagsAll", "effectiveLabels")
"""The provider's merge of its default tags or labels with the resource's own, known in a preview (absent from the
offline planner's outputs: the provider's defaultTags/defaultLabels are read as well)."""


def _labels(r: Any) -> dict[str, Any]:
    """A resource's tags or labels with those its provider adds to every resource (aws defaultTags, gcp
    defaultLabels); its own win. An unknown own set raises Unknown."""
    provider = provider_props(r)
    labels = {**provider_tags(provider, "defaultTags"), **provider_tags(provider, "defaultLabels")}
    for key in MERGED_LABELS:
        merged = get(r.props, key)
        labels.update(merged if isinstance(merged, dict) else {})
    for key in LABELS:
        own = need(r.props, key)
        labels.update(own if isinstance(own, dict) else {})
    return labels


@rule("data-zone-residency", "Checks whether data labelled with a residency zone stays in that zone's regions.",
      severity="critical", remediation="Place buckets and file systems labelled data-zone=<zone> (on the resource or through "
                                       "the provider's default tags or labels) only in that zone's regions.",
      frameworks={"GDPR": ("Art.44",), "SOC2": ("C1.1",)},
      config={"dataZones": {"type": "object", "default": {}, "description": "Zone name -> allowed regions, e.g. {\"eu\": [\"eu-west-1\"]}."}})
def data_zones(resources: list[Any], ctx: Context) -> Iterator[tuple[str, str]]:
    zones = ctx.config.get("dataZones") or {}
    unknowns = Unknowns()
    for r in resources if zones else ():
        if r.resource_type.startswith(("pulumi:", "kubernetes:")):
            continue
        with unknowns.skip():
            zone = need(_labels(r), "data-zone")
            if not isinstance(zone, str) or zone not in zones:
                continue
            for region, nested in _placements(r):
                if not _location_allowed(region, [region_name(z) for z in zones[zone]]):
                    yield r.urn, f"data-zone {zone} data is in {nested or region}; allowed: {', '.join(zones[zone])}"
    unknowns.raise_first()


VPC_ENCRYPTION, VNET = "aws:ec2/vpcEncryptionControl:VpcEncryptionControl", "azure-native:network:VirtualNetwork"
TRANSIT = {"HIPAA": ("164.312(e)(2)(ii)",), "SOC2": ("CC6.7",), "NIST-800-53": ("SC-8",)}
# GCP encrypts VM-to-VM traffic itself, always: nothing to configure, so no GCP rule.


@rule("aws-vpc-transit-encryption-enforced", "Checks whether VPC encryption controls drop unencrypted traffic (enforce mode).",
      severity="medium", types=(VPC_ENCRYPTION,), remediation="Set network.transit_encryption: enforce.", frameworks=TRANSIT)
def vpc_transit_encryption(props: Any, ctx: Context) -> Iterator[str]:
    if need(props, "mode") != "enforce":
        yield f"VPC encryption control mode is {need(props, 'mode')!r}: unencrypted traffic is reported, not dropped"


@rule("azure-vnet-transit-encryption-enforced", "Checks whether VNet encryption is on and drops unencrypted flows "
      "(DropUnencrypted).", severity="medium", types=(VNET,), frameworks=TRANSIT,
      remediation="VNet encryption cannot drop unencrypted flows yet (DropUnencrypted is documented as future support): "
                  "network.transit_encryption: monitor is the named opt-in this rule keeps reporting.")
def vnet_transit_encryption(props: Any, ctx: Context) -> Iterator[str]:
    if need(props, "encryption.enabled", False) is not True:
        yield "VNet encryption is off"
    elif need(props, "encryption.enforcement") != "DropUnencrypted":
        yield "VNet encryption allows unencrypted flows (AllowUnencrypted): they are allowed, not dropped"
