"""Placeholder results for data-source invokes during an offline plan.

Real programs call data sources (availability zones, AMIs, caller identity, client config) and then
index or iterate the results. A mock that returns {} breaks them. Here every invoke gets a value shaped
like the function's declared result type, read from the provider SDK's generated `Get...Result` class,
with realistic values for the common lookups.
"""

from __future__ import annotations

import functools
import json
import re
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from pulumi._types import _py_properties, is_output_type

from . import invoke_values as values
from .goyaml import manifest_documents
from .invoke_values import ACCOUNT_ID, AMI_ID, PROJECT_NUMBER
from .sdk import sdk_class

_DEFAULT_REGION = {"aws": "us-east-1", "gcp": "us-central1", "azure-native": "eastus2"}
_REGION_INPUT = {"aws": "region", "gcp": "region", "azure-native": "location"}
_LIST_LENGTH = 3  # enough for "first three AZs" style programs
_MAX_DEPTH = 5


def placeholder_result(token: str, args: dict[str, Any], provider: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A wire-form (camelCase) result for the invoke `token`. `provider`: the inputs of the explicit provider the
    invoke names (its region answers region-dependent lookups, as the provider's own would); default: the stack's
    default provider, configured from stack config."""
    package = token.split(":", 1)[0]
    provider = provider or {}
    region = str(args.get("region") or provider.get(_REGION_INPUT.get(package, "region"))
                 or _configured_region(package) or _DEFAULT_REGION.get(package, "region-1"))

    def setting(key: str) -> Any:
        """A provider setting as the provider reads it: the explicit provider's input, else `<package>:<key>` config."""
        return provider.get(key) or _configured(f"{package}:{key}")

    result = _typed_placeholder(token, args, region)
    special = _SPECIAL.get(token)
    if special is not None:
        # Over the typed placeholder, so the fields the special values leave out keep their declared shape.
        result = {**result, **special(args, region, setting)}
    if package == "gcp" and "project" in result and not args.get("project"):
        result["project"] = values.gcp_project(setting)  # the provider's default project answers
    return {**result, **_UNREAD.get(token, {})}


def _typed_placeholder(token: str, args: dict[str, Any], region: str) -> dict[str, Any]:
    """A result shaped like the declared result type of `token`, echoing the arguments it repeats."""
    result_type = _result_type(token)
    if result_type is None:
        return {}
    value = _placeholder(result_type, "", region, 0, "", token)
    # Echo the arguments the caller passed: results usually repeat them (name, filters, region).
    return {**value, **{k: v for k, v in args.items() if k in value and v is not None}}


def _configured_region(package: str) -> str | None:
    """The provider's region from stack config (aws:region, gcp:region, azure-native:location), as the provider would use."""
    key = {"aws": "aws:region", "gcp": "gcp:region", "azure-native": "azure-native:location"}.get(package)
    return _configured(key) if key else None


def _configured(key: str) -> str | None:
    from pulumi.runtime.config import get_config

    return get_config(key)


def _filter_values(args: dict[str, Any], name: str) -> list[Any]:
    """The values of an EC2 data source's filters named `name`, in order."""
    return [v for f in args.get("filters") or [] if f.get("name") == name for v in f.get("values") or []]


def _instance_type_offerings(args: dict[str, Any], region: str, setting: values.Setting) -> dict[str, Any]:
    """Offline, every asked type is offered in every zone `aws_zones` gives (what EC2 offers is known only on deploy)."""
    types = _filter_values(args, "instance-type")
    pairs = [(t, zone) for t in types for zone in values.aws_zones(args, region, setting)["names"]]
    return {"instanceTypes": [t for t, _ in pairs], "locations": [zone for _, zone in pairs],
            "locationTypes": ["availability-zone"] * len(pairs), "locationType": "availability-zone",
            "filters": args.get("filters") or [], "id": region, "region": region}


def _instance_types(args: dict[str, Any], region: str, setting: values.Setting) -> dict[str, Any]:
    """Offline, every type an `instance-type` filter names matches the other filters (which EC2 types encrypt in
    transit, say, is known only on deploy); without one, a single current type."""
    types = _filter_values(args, "instance-type")
    return {"instanceTypes": types or ["m6i.large"], "filters": args.get("filters") or [], "id": region, "region": region}


def _machine_types(args: dict[str, Any], region: str, setting: values.Setting) -> dict[str, Any]:
    """Offline, each machine type a filter names (`name = "..."`, OR-ed) is offered in every zone (what a zone offers
    is known only on deploy); a filter on anything else finds none."""
    names = re.findall(r'\bname\s*=\s*"([a-z0-9-]+)"', str(args.get("filter") or ""))
    machines = [{"name": name, "description": name, "guestCpus": 1, "memoryMb": 1, "isSharedCpus": False, "accelerators": [],
                 "bundledLocalSsds": [], "deprecateds": [], "maximumPersistentDisks": 1, "maximumPersistentDisksSizeGb": 1,
                 "architecture": "X86_64", "selfLink": f"placeholder-machine-type/{name}"} for name in names]
    return {"machineTypes": machines, "filter": str(args.get("filter") or ""), "id": "machine-types",
            "project": args.get("project") or values.gcp_project(setting), "zone": args.get("zone") or f"{region}-a"}


def _tpu_accelerator_types(args: dict[str, Any], region: str, setting: values.Setting) -> dict[str, Any]:
    """Offline, every Cloud TPU accelerator type the catalog knows is offered in every zone."""
    return {"types": list(_catalog_tpu_types()), "zone": args.get("zone") or f"{region}-a",
            "project": args.get("project") or values.gcp_project(setting), "id": "tpu-accelerator-types"}


@functools.cache
def _catalog_tpu_types() -> tuple[str, ...]:
    """The Cloud TPU accelerator types of every generation and topology in the catalog (the same for every lookup)."""
    from components import catalog

    return tuple(sorted({catalog.resolve_tpu_slice(g.name, t).tpu_vm_accelerator_type
                         for g in catalog.tpu_generations() for t in g.topologies}))


def _gcp_zones(args: dict[str, Any], region: str, setting: values.Setting) -> dict[str, Any]:
    """Offline, every zone letter GCP regions use (us-central1: a, b, c, f; us-east1 and europe-west1: b, c, d) and an AI
    zone for each (us-central1-ai1a), so the zones a config lists pass the preview's zone check; the default zones,
    the first general-purpose ones by name, stay a, b, c."""
    return {"names": [f"{region}-{kind}{letter}" for kind in ("", "ai1") for letter in "abcdf"], "id": region, "region": region,
            "project": values.gcp_project(setting)}


def _policy_document(args: dict[str, Any], region: str, setting: values.Setting) -> dict[str, Any]:
    statements = []
    for st in args.get("statements") or []:
        statement: dict[str, Any] = {"Effect": st.get("effect", "Allow")}
        for key, wire in (("actions", "Action"), ("resources", "Resource"), ("notActions", "NotAction")):
            if st.get(key):
                statement[wire] = st[key]
        for principal in st.get("principals") or []:
            statement.setdefault("Principal", {})[principal.get("type", "AWS")] = principal.get("identifiers", [])
        statements.append(statement)
    doc = json.dumps({"Version": "2012-10-17", "Statement": statements})
    return {"json": doc, "minifiedJson": doc, "id": "policy-document"}


def _session_context(args: dict[str, Any], region: str, setting: values.Setting) -> dict[str, Any]:
    """An assumed-role session resolves to its role; any other ARN (a user, a role) is its own issuer."""
    arn = str(args.get("arn") or "")
    match = re.fullmatch(r"arn:([\w-]+):sts::(\d{12}):assumed-role/([^/]+)/(.+)", arn)
    if match is None:
        return {"arn": arn, "issuerArn": arn, "issuerId": "AIDAPLACEHOLDER", "issuerName": arn.rsplit("/", 1)[-1],
                "sessionName": "", "id": arn}
    partition, account, role, session = match.groups()
    return {"arn": arn, "issuerArn": f"arn:{partition}:iam::{account}:role/{role}", "issuerId": "AROAPLACEHOLDER",
            "issuerName": role, "sessionName": session, "id": arn}


def _yaml_decode(args: dict[str, Any], region: str, setting: values.Setting) -> dict[str, Any]:
    """k8s.yaml.ConfigFile/ConfigGroup: the provider parses the manifest text into its objects (empty documents
    dropped), from which the SDK registers one child per object; parsed here the same way."""
    return {"result": manifest_documents(str(args.get("text") or ""))}


def _helm_template(args: dict[str, Any], region: str, setting: values.Setting) -> dict[str, Any]:
    """k8s.helm.v3.Chart renders the chart with the provider's helm engine, which an offline plan cannot do (the chart
    must be fetched): the plan says so instead of silently showing a chart without objects."""
    import pulumi

    chart = json.loads(str(args.get("jsonOpts") or "{}")).get("chart", "?")
    pulumi.log.warn(f"helm.v3.Chart '{chart}': an offline plan cannot render charts, so its objects are missing from this "
                    "plan and from the policy checks; helm.v3.Release (one resource, the chart's values as inputs) plans fully")
    return {"result": []}


def _kustomize_directory(args: dict[str, Any], region: str, setting: values.Setting) -> dict[str, Any]:
    """k8s.kustomize.Directory runs kustomize in the provider plugin, which an offline plan cannot do (a kustomization
    may fetch remote bases): the plan says so instead of silently showing a directory without objects."""
    import pulumi

    pulumi.log.warn(f"kustomize.Directory '{args.get('directory', '?')}': an offline plan cannot run kustomize, so its "
                    "objects are missing from this plan and from the policy checks")
    return {"result": []}


def _ami(args: dict[str, Any], region: str, setting: values.Setting) -> dict[str, Any]:
    """An EBS-backed x86_64 image with one root volume; its `ebs` map has the keys the provider documents (programs
    read `ebs["snapshot_id"]`, `ebs["volume_size"]`)."""
    snapshot = "snap-0123456789abcdef0"
    ebs = {"delete_on_termination": "true", "encrypted": "false", "iops": "3000", "snapshot_id": snapshot,
           "throughput": "125", "volume_size": "8", "volume_type": "gp3"}
    return {"id": AMI_ID, "imageId": AMI_ID, "architecture": "x86_64", "name": "placeholder-ami",
            "arn": f"arn:aws:ec2:{region}::image/{AMI_ID}", "rootDeviceName": "/dev/xvda", "rootDeviceType": "ebs",
            "rootSnapshotId": snapshot, "virtualizationType": "hvm", "state": "available",
            "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": ebs, "noDevice": "", "virtualName": ""}]}


_SPECIAL: dict[str, Any] = {
    "aws:index/getAvailabilityZones:getAvailabilityZones": values.aws_zones,
    "aws:index/getCallerIdentity:getCallerIdentity": lambda a, r, s: {
        "accountId": ACCOUNT_ID, "userId": "AROAPLACEHOLDER:aiinfra-plan", "id": ACCOUNT_ID,
        "arn": f"arn:{values.aws_partition(r)['partition']}:sts::{ACCOUNT_ID}:assumed-role/deployer/aiinfra-plan"},
    "aws:iam/getSessionContext:getSessionContext": _session_context,
    "aws:index/getRegion:getRegion": lambda a, r, s: {
        "name": r, "region": r, "id": r, "description": r,
        "endpoint": f"ec2.{r}.{values.aws_partition(r)['dnsSuffix']}"},
    "aws:index/getPartition:getPartition": lambda a, r, s: values.aws_partition(r),
    "aws:ec2/getAmi:getAmi": _ami,
    "aws:ssm/getParameter:getParameter": values.ssm_parameter,
    "aws:ecr/getAuthorizationToken:getAuthorizationToken": values.ecr_authorization_token,
    "aws:iam/getPolicyDocument:getPolicyDocument": _policy_document,
    "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings": _instance_type_offerings,
    "aws:ec2/getInstanceTypes:getInstanceTypes": _instance_types,
    "gcp:compute/getZones:getZones": _gcp_zones,
    "gcp:compute/getMachineTypes:getMachineTypes": _machine_types,
    "gcp:tpu/getV2AcceleratorTypes:getV2AcceleratorTypes": _tpu_accelerator_types,
    "gcp:organizations/getClientConfig:getClientConfig": values.gcp_client_config,
    "gcp:organizations/getProject:getProject": values.gcp_project_lookup,
    "gcp:container/getEngineVersions:getEngineVersions": values.gke_engine_versions,
    "azure-native:authorization:getClientConfig": values.azure_client_config,
    "azure-native:containerservice:listManagedClusterUserCredentials": values.aks_credentials("clusterUser"),
    "azure-native:containerservice:listManagedClusterAdminCredentials": values.aks_credentials("clusterAdmin"),
    "azure-native:containerservice:listManagedClusterMonitoringUserCredentials": values.aks_credentials("clusterMonitoringUser"),
    "azure-native:containerservice:listFleetCredentials": values.aks_credentials("fleet"),
    "azure-native:containerservice:listManagedNamespaceCredential": values.aks_credentials("clusterUser"),
    "azure-native:containerservice:listNamespaceCredential": values.aks_credentials("clusterUser"),
    "kubernetes:yaml:decode": _yaml_decode,
    "kubernetes:helm:template": _helm_template,
    "kubernetes:kustomize:directory": _kustomize_directory,
}


_UNREAD: dict[str, dict[str, Any]] = {
    # Lookups of what only the account can say: offline they keep the result's shape, with the fields a reserved-capacity
    # check compares left empty, so it has nothing to compare (components/spec/offerings.py).
    # A Capacity Block's zone and instance type (reservation_problem).
    "aws:ec2/getCapacityBlockReservation:getCapacityBlockReservation": {
        "availabilityZone": "", "availabilityZoneId": "", "instanceType": ""},
    # A Cloud Control resource's model: an empty JSON object, which programs can parse (an ODCR: components/aws/node_group.py).
    "aws:cloudcontrol/getResource:getResource": {"properties": "{}"},
    # A Compute Engine reservation exists but names no machine type: only the pool's zones are compared
    # (components/gcp/reservations.py).
    "gcp:compute/getReservation:getReservation": {"specificReservations": []},
    # Kubernetes versions the cloud offers in a region: none reported, so the cluster's version is not compared
    # (components/aws/cluster.py, components/gcp/offerings.py offered_master_version). Any version listed here would
    # make that check refuse the others offline, so these stay empty even though a program indexing
    # valid_master_versions[0] then fails; GKE's other version fields are filled (invoke_values.gke_engine_versions).
    "aws:eks/getClusterVersions:getClusterVersions": {"clusterVersions": []},
    "gcp:container/getEngineVersions:getEngineVersions": {"validMasterVersions": [], "releaseChannelLatestVersion": {}},
    # An Azure capacity reservation group reports no location or reservations (components/azure/reservations.py).
    "azure-native:compute:getCapacityReservationGroup": {"location": "", "capacityReservations": []},
}


@functools.cache
def _result_type(token: str) -> type | None:
    """The SDK's `Get...Result` class for an invoke token such as `aws:ec2/getVpc:getVpc`."""
    return sdk_class(token, "Result")


def _placeholder(tp: Any, name: str, region: str, depth: int, item: str, token: str = "") -> Any:
    """`item`: the position of the value within placeholder lists ("-0", "-1-2"), which keeps list items distinct:
    programs name resources after them (`for sid in ids: MountTarget(f"mt-{sid}")`), and equal names collide.
    `token`: the invoke's, whose service shapes its ARNs."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Union:
        non_none = [a for a in args if a is not type(None)]
        return _placeholder(non_none[0], name, region, depth, item, token) if non_none else None
    if origin in (list, Sequence, typing.Sequence) or origin is getattr(typing, "List", None):
        item_type = args[0] if args else str
        count = _LIST_LENGTH if depth < _MAX_DEPTH else 0
        if item_type in (int, float):
            return [1 + i for i in range(count)]
        return [_placeholder(item_type, name, region, depth + 1, f"{item}-{i}", token) for i in range(count)]
    if origin in (dict, Mapping, typing.Mapping):
        return {}
    if isinstance(tp, type) and is_output_type(tp):
        if depth >= _MAX_DEPTH:
            return {}
        hints = _hints(tp)
        return {wire: _placeholder(hints.get(py, str), wire, region, depth + 1, item, token)
                for py, wire, _ in _py_properties(tp)}
    if tp is bool:
        return False
    if tp in (int, float):
        return 1
    if tp is str or isinstance(tp, str):
        return _string_for(name, region, item, token)
    return None


def _string_for(name: str, region: str, item: str = "", token: str = "") -> str:
    lowered = name.lower()
    if lowered.endswith("arn"):
        if token.startswith("aws:"):
            return values.aws_arn(token, name, region, item)
        return f"arn:aws:iam::{ACCOUNT_ID}:placeholder/{name or 'value'}{item}"
    if lowered == "number" or lowered.endswith("projectnumber"):
        return PROJECT_NUMBER  # project numbers are digits (GCP's getProject().number): programs format them in
    if lowered in ("region", "location"):
        return region
    if lowered.endswith("cidrblock") or lowered.endswith("cidr"):
        return f"10.{item.rsplit('-', 1)[-1] or 0}.0.0/16"  # the list item's own /16: distinct, not overlapping
    return f"placeholder-{name or 'value'}{item}"


def _hints(cls: type) -> dict[str, Any]:
    """Return-type hints of a result class's property getters, keyed by Python name."""
    hints: dict[str, Any] = {}
    for py_name, _wire, prop in _py_properties(cls):
        try:
            hints[py_name] = typing.get_type_hints(prop.fget).get("return", str)
        except Exception:  # noqa: BLE001 unresolvable forward refs fall back to str
            hints[py_name] = str
    return hints


def _result_properties(result_type: type) -> dict[str, Any]:
    hints = _hints(result_type)
    return {wire: hints.get(py, str) for py, wire, _ in _py_properties(result_type)}
