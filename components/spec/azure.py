"""Azure-specific platform settings, the Azure-only semantic checks, and the pure Azure rules they share
with the Azure components (AKS pool names, MIG profiles, Lustre subnets). No cloud SDK imports here."""

from __future__ import annotations

import difflib
import enum
import re
import unicodedata
from collections.abc import Iterator
from ipaddress import IPv4Network
from typing import Annotated

from pydantic import Field

from components import catalog

from .cloud import CloudSpec, RegionSpec
from .common import GUID_PATTERN, Cloud
from .compute import Placement, SharingMode
from .endpoint import AzureFrontDoorTier
from .network import NatMode, TransitEncryption
from .resolve import resolve_gpu_pool, resolve_lustre

Path = tuple[str | int, ...]
Issue = tuple[Path, str]

_GUID = re.compile(GUID_PATTERN)
Guid = Annotated[str, Field(pattern=_GUID.pattern)]


class AksNetworkPolicy(str, enum.Enum):
    """Network policy engine of AKS. Both run on Azure CNI overlay (pods get addresses from `pod_cidr`)."""

    CILIUM = "cilium"
    """Azure CNI powered by Cilium: eBPF dataplane and network policy. Default."""
    CALICO = "calico"
    """Calico network policy on the Azure dataplane (for teams with existing Calico policies)."""


class NetworkWatcherMode(str, enum.Enum):
    """Where VNet flow logs are attached. Azure allows one Network Watcher per subscription and region."""

    AZURE_DEFAULT = "azure_default"
    """Use the watcher Azure creates with the first VNet of a region: `NetworkWatcher_<region>` in
    resource group `NetworkWatcherRG`. Default."""
    CREATE = "create"
    """Create the watcher in the region's resource group (for subscriptions that opted out of
    automatic Network Watcher enablement)."""


class EtcdEncryption(str, enum.Enum):
    """What encrypts Kubernetes Secrets in each AKS cluster's etcd (besides the platform-managed encryption at rest AKS
    always applies). A customer key needs a private vault, a private vault needs API Server VNet Integration, and that
    doesn't work in an encrypted VNet ("API Server VNet Integration doesn't support Virtual Network Encryption. [...]
    Clusters deployed on v4 or later AKS node SKUs (which support VNet Encryption) are blocked":
    learn.microsoft.com/azure/aks/api-server-vnet-integration#limitations). So a region with a cluster gets one of the
    two: Secrets under the customer's key, or VNet encryption."""

    PLATFORM_KEY = "platform_key"
    """AKS's platform-managed keys only: no etcd vault or key, no API Server VNet Integration, and every VNet keeps VNet
    encryption on. Default, because the customer key would cost the cluster's VNet its encryption (see the enum). A
    region with a cluster still gets its `apiserver` subnet, unused, so switching to `customer_key` changes no subnet.
    The policy pack reports every such cluster (`azure-aks-kms-etcd`)."""
    CUSTOMER_KEY = "customer_key"
    """The Key Vault KMS plugin (KMS v2) with a customer-managed RSA key in a dedicated private vault per region (public
    network access off, reached through private endpoints), as EKS and GKE encrypt Secrets with the region's CMK. The
    cluster gets API Server VNet Integration (the API server in the region's delegated `apiserver` subnet), which KMS
    with a private vault requires.

    The trade: the VNet of every region with a cluster gets VNet encryption turned off (Azure blocks API Server VNet
    Integration in an encrypted VNet with the v4-or-later sizes the nodes use), so traffic between its VMs is no longer
    encrypted by the network; `network.transit_encryption` is moot there (`monitor` accepted, `enforce` a config error)
    and the policy pack reports those VNets (`azure-vnet-transit-encryption-enforced`). Regions without a cluster keep
    VNet encryption. Not available with a cluster in qatarcentral, where Azure offers no API Server VNet Integration.

    Turned on for an existing cluster, it converts that cluster to API Server VNet Integration, which is one-way and needs
    a restart of the cluster (`az aks stop`, `az aks start`) right after, while the capacity AKS checked (but didn't
    reserve) is there; the README (Known limits) gives the steps. Because that is one-way, a cluster that ran
    `customer_key` can't go back to `platform_key` by config: it would turn VNet encryption on again under a
    VNet-integrated cluster."""


class DeployerAccess(str, enum.Enum):
    """How the identity running `pulumi up` reaches each AKS cluster's Kubernetes API, where the Kubernetes layer
    installs. Clusters use Azure RBAC for Kubernetes with local accounts off, so no subscription role, Owner included,
    reaches that API. Azure refuses a role assignment whose principal type is not the principal's, so say which."""

    SERVICE_PRINCIPAL = "service_principal"
    """The deployer is a service principal or managed identity (CI, `azure/login`, OIDC): it gets the Azure Kubernetes
    Service RBAC Cluster Admin role on each cluster. Default."""
    USER = "user"
    """The deployer is a signed-in user (`az login` on a workstation): the same role assignment, to the user."""
    ADMIN_GROUP = "admin_group"
    """No role assignment: the deployer is a member of one of the Entra groups in `admin_group_object_ids` (or in a
    cluster's `admins`)."""


class AzureCloudSpec(CloudSpec):
    """Azure regions of the platform; subscription and credentials come from `azure-native:` stack config or `az login`.

    Every resource sets its own `location`, so one (default) provider serves all regions."""

    admin_group_object_ids: list[Guid] = []
    """Entra ID groups bound to cluster-admin on every AKS cluster (AKS admin groups), besides each cluster's `admins`. Default none."""
    deployer: DeployerAccess = DeployerAccess.SERVICE_PRINCIPAL
    """How whoever runs `pulumi up` gets cluster-admin on the AKS clusters. Default `service_principal`: a role assignment
    to the deploying service principal. Set `user` to deploy from a workstation as yourself."""
    deployer_object_id: Guid | None = None
    """Entra object ID of the principal that gets the cluster-admin role assignment (`deployer` `service_principal` or
    `user`; `az ad sp show --id <client id> --query id -o tsv`). Default: the identity running the program, read on
    every run, so a run as another principal re-points the assignment to it. Required with `previewers`: a preview runs
    the program as the previewer, which would otherwise be the one granted cluster-admin."""
    network_policy: AksNetworkPolicy = AksNetworkPolicy.CILIUM
    """AKS network policy engine. Default `cilium` (Azure CNI overlay powered by Cilium)."""
    etcd_encryption: EtcdEncryption = EtcdEncryption.PLATFORM_KEY
    """How AKS encrypts Kubernetes Secrets in etcd. Default `platform_key`: AKS's platform-managed keys only, which the
    policy pack reports (`azure-aks-kms-etcd`), and VNet encryption stays on. Not `customer_key` by default, because the
    private etcd vault it builds needs API Server VNet Integration, which Azure doesn't support in an encrypted VNet
    ("API Server VNet Integration doesn't support Virtual Network Encryption":
    learn.microsoft.com/azure/aks/api-server-vnet-integration#limitations). `customer_key`: the Key Vault KMS plugin with
    a customer-managed key in a dedicated private vault per region, the API server in the region's `apiserver` subnet,
    and VNet encryption off in each region with a cluster (one-way for an existing cluster, with a manual restart: see
    the README)."""
    network_watcher: NetworkWatcherMode = NetworkWatcherMode.AZURE_DEFAULT
    """Which Network Watcher carries the VNet flow logs. Default: the one Azure creates per region."""
    hpc_cache_principal_id: Guid | None = None
    """Object ID of the "HPC Cache Resource Provider" service principal in your tenant
    (`az ad sp show --id 4392ab71-2ce2-4b0d-8770-b352745c73f5 --query id -o tsv`). Azure Managed Lustre reads
    and writes linked buckets as that principal. Required when a Lustre file system sets `bucket`; default none."""
    allow_shared_key_for_lustre: bool = False
    """Let the storage account of a bucket linked to a Lustre file system keep shared-key (account key) access on, which
    Azure Managed Lustre's blob integration requires. Every other account has it off. Default false: a Lustre `bucket`
    link on Azure is a config error naming this field. An explicit opt-in; the policy pack reports those accounts."""
    previewers: list[Guid] = []
    """Entra object IDs of the pull-request preview service principals or managed identities
    (`az ad sp show --id <client id> --query id`). Each gets the Azure Kubernetes Service Cluster User Role on every AKS
    cluster (the program lists the cluster's user kubeconfig on every preview), and with the Kubernetes layer on every
    cluster lets it read the stack's kinds and the Secrets of the Helm release namespaces (Kubernetes RBAC, which AKS
    evaluates next to Azure RBAC; in `monitoring` that includes `addons.alerts.alertmanager_secret`, the receivers'
    credentials). Needs `deployer_object_id`, or `deployer` `admin_group`. Default none: nothing is created."""


# --- Pure Azure rules shared with components/azure -------------------------------------------------------

AKS_SYSTEM_POOL = "system"
_AKS_POOL_MAX = 12  # Linux agent pools: lower-case letters and digits, at most 12 characters
AKS_MAX_OS_DISK_GB = 2048
"""Largest OS disk of an AKS node: agent pools' `osDiskSizeGB` is an int with minValue 0, maxValue 2048 in the
Microsoft.ContainerService API (Azure/bicep-types-az, generated/containerservice/microsoft.containerservice/2024-05-01/
types.md: ManagedClusterAgentPoolProfile and ManagedClusterAgentPoolProfileProperties), below the spec's 16384 GiB."""
MAX_RESOURCE_GROUP_NAME = 90
"""Resource group names (learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules,
Microsoft.Resources, resourcegroups): 1 to 90 characters; underscores, hyphens, periods, parentheses, and letters or
digits as defined by Char.IsLetterOrDigit (Unicode categories UppercaseLetter, LowercaseLetter, TitlecaseLetter,
ModifierLetter, OtherLetter, DecimalDigitNumber); can't end with a period."""
_RESOURCE_GROUP_PUNCTUATION = frozenset("_-.()")
_RESOURCE_GROUP_CATEGORIES = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Nd"})
RESOURCE_GROUP_RULE = (f"1 to {MAX_RESOURCE_GROUP_NAME} characters: letters, digits, '_', '-', '.', '(' and ')' "
                       "(Unicode letters and digits too), not ending in '.'")
AZURE_ZONES = ("1", "2", "3")
LUSTRE_SLOTS = 7
"""AMLFS subnets per region: the first 7 blocks of the third quarter (the 8th holds the AKS API server subnet)."""
AKS_APISERVER_PREFIX = 28
"""API Server VNet Integration's delegated subnet: /28 at least, used by nothing else
(learn.microsoft.com/azure/aks/api-server-vnet-integration, bring-your-own VNet)."""
NO_APISERVER_VNET_INTEGRATION = frozenset({"qatarcentral"})
"""Regions without API Server VNet Integration ("available in all GA public cloud regions except qatarcentral":
learn.microsoft.com/azure/aks/api-server-vnet-integration#availability)."""
MAX_FLOW_LOG_RETENTION_DAYS = 365  # Network Watcher flow log retention is 0-365 days
_MIG_SLICES = {"1g": "MIG1g", "2g": "MIG2g", "3g": "MIG3g", "4g": "MIG4g", "7g": "MIG7g"}
# Minimum AMLFS subnet prefix per capacity (TiB), from the AMLFS prerequisites table; the table ends at
# 400 TiB, so larger file systems are held to /22 (one doubling further).
_LUSTRE_SUBNET_PREFIX = ((16, 27), (40, 26), (92, 25), (196, 24), (400, 23))
_CAPACITY_RESERVATION_GROUP = re.compile(
    r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Compute/capacityReservationGroups/[^/]+$", re.IGNORECASE)
_KEY_VAULT_SECRET = re.compile(
    r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.KeyVault/vaults/[^/]+/secrets/[^/]+$", re.IGNORECASE)


def aks_pool_name(name: str) -> str:
    """AKS agent pool name for a spec pool name: hyphens dropped, at most 12 characters."""
    return name.replace("-", "")[:_AKS_POOL_MAX]


def resource_group_name_problem(name: str) -> str | None:
    """What makes `name` an invalid Azure resource group name (`MAX_RESOURCE_GROUP_NAME`), or None."""
    if not 1 <= len(name) <= MAX_RESOURCE_GROUP_NAME:
        return f"it has {len(name)} characters"
    bad = sorted({c for c in name if c not in _RESOURCE_GROUP_PUNCTUATION
                  and unicodedata.category(c) not in _RESOURCE_GROUP_CATEGORIES}, key=name.index)
    if bad:
        return f"{', '.join(repr(c) for c in bad)} {'is' if len(bad) == 1 else 'are'} not allowed"
    if name.endswith("."):
        return "it ends in '.'"
    return None


def aks_mig_profile(mig_profile: str) -> str:
    """AKS `gpuInstanceProfile` (MIG1g ... MIG7g) for a MIG profile such as "1g.10gb"."""
    return _MIG_SLICES[mig_profile.split(".", 1)[0]]


def aks_mig_profiles(offered: tuple[str, ...]) -> list[str]:
    """The MIG profiles AKS can create on a GPU: per compute size, the partition with the least memory
    (AKS's MIG1g on an H100 80GB is 1g.10gb, never 1g.20gb)."""
    chosen: dict[str, str] = {}
    for profile in sorted(offered, key=_mig_memory_gb):
        chosen.setdefault(profile.split(".", 1)[0], profile)
    return [p for p in offered if p in chosen.values() and p.split(".", 1)[0] in _MIG_SLICES]


def _mig_memory_gb(profile: str) -> int:
    return int(profile.split(".", 1)[1].removesuffix("gb"))


def lustre_subnet_prefix(size_gib: int) -> int:
    """Longest subnet prefix an AMLFS file system of this size fits in (/27 for 4-16 TiB ... /23 for 400 TiB)."""
    tib = size_gib / 1024
    return next((prefix for limit, prefix in _LUSTRE_SUBNET_PREFIX if tib <= limit), 22)


def _third_quarter_blocks(cidr: IPv4Network) -> list[IPv4Network]:
    """The network's third quarter cut in 8. On Azure that quarter is free: load balancers and private endpoints use
    the fourth quarter."""
    third_quarter = list(cidr.subnets(prefixlen_diff=2))[2]
    return list(third_quarter.subnets(prefixlen_diff=3))


def aks_node_subnet(cidr: IPv4Network) -> IPv4Network:
    """The AKS node subnet (`nodes`): the first half of the region's VNet."""
    return next(cidr.subnets(prefixlen_diff=1))


def lustre_subnets(cidr: IPv4Network) -> list[IPv4Network]:
    """Subnet slots for AMLFS (each file system needs its own subnet): the first 7 blocks of the third quarter."""
    return _third_quarter_blocks(cidr)[:LUSTRE_SLOTS]


def aks_apiserver_subnet(cidr: IPv4Network) -> IPv4Network:
    """The AKS API server's delegated subnet: the first /28 of the third quarter's last block (a /27 to /21 for the
    /22 to /16 networks the spec allows), so it never moves when Lustre file systems come or go."""
    return next(_third_quarter_blocks(cidr)[LUSTRE_SLOTS].subnets(new_prefix=AKS_APISERVER_PREFIX))


def zonal_regions_nearest_first(region: str) -> list[str]:
    """The Azure regions with availability zones: the (at most 3) closest to `region` first, most similar first
    (difflib's ratio, at least 0.6, as `get_close_matches`; ties in catalog order), then the rest in catalog order."""
    zonal = [r.name for r in catalog.regions(Cloud.AZURE.value) if r.availability_zones]
    ratios = {name: difflib.SequenceMatcher(None, name, region).ratio() for name in zonal}
    close = sorted((name for name in zonal if ratios[name] >= 0.6), key=lambda name: -ratios[name])[:3]
    return close + [name for name in zonal if name not in close]


def no_zones_problem(region: str) -> str | None:
    """Why `region` can't hold the platform: it is a listed Azure region without availability zones; None otherwise
    (an unlisted name is the shared region check's to report)."""
    row = catalog.find_region(Cloud.AZURE.value, region)
    if row is None or row.availability_zones:
        return None
    # AKS answers AvailabilityZoneNotSupported ("Availability zone is not supported in this region.") for an agent
    # pool with zones in such a region (github.com/rancher/rancher/issues/33019, westus).
    return (f"region {region!r} has no availability zones (Microsoft's Azure regions list: {catalog.region_doc(Cloud.AZURE.value)}); "
            "the AKS cluster, its GPU pools and the zone-redundant (ZRS) flow-log storage account are placed in availability "
            "zones, so Azure would refuse them (AvailabilityZoneNotSupported) after the resource group, "
            f"VNet and Key Vault exist; allowed: an Azure region with availability zones: {', '.join(zonal_regions_nearest_first(region))}")


def apiserver_vnet_integration(cloud_spec: AzureCloudSpec, region: RegionSpec) -> bool:
    """Whether the region's AKS cluster runs API Server VNet Integration (`customer_key`), which leaves the region's VNet
    without VNet encryption."""
    return cloud_spec.etcd_encryption is EtcdEncryption.CUSTOMER_KEY and region.cluster is not None


def transit_enforcement(mode: TransitEncryption) -> str:
    """VNet encryption `enforcement` for the spec's transit encryption mode."""
    return {TransitEncryption.ENFORCE: "DropUnencrypted", TransitEncryption.MONITOR: "AllowUnencrypted"}[mode]


# --- Checks -------------------------------------------------------------------------------------------------


def extra_checks(platform, cloud_spec: AzureCloudSpec) -> list[Issue]:  # noqa: ANN001
    """Azure-only semantic checks: (path relative to platform, message) issues."""
    base: Path = ("clouds", Cloud.AZURE.value)
    issues: list[Issue] = []
    for region, spec in cloud_spec.regions.items():
        if problem := no_zones_problem(region):
            issues.append(((*base, "regions", region), problem))
        if region in NO_APISERVER_VNET_INTEGRATION and apiserver_vnet_integration(cloud_spec, spec):
            issues.append(((*base, "etcd_encryption"),
                           f"'customer_key' needs API Server VNet Integration, which Azure doesn't offer in {region} "
                           "(learn.microsoft.com/azure/aks/api-server-vnet-integration#availability), and region "
                           f"{region} has a cluster; allowed: platform_key, or no cluster in {region}"))
        issues += list(_check_region(cloud_spec, spec, (*base, "regions", region)))
    issues += list(_check_front_door(cloud_spec, (*base, "global_endpoint")))
    issues += list(_check_deployer(cloud_spec, base))
    return issues


def _check_deployer(cloud_spec: AzureCloudSpec, base: Path) -> Iterator[Issue]:
    """With previewers the deployer's role assignment may not follow the running identity: the preview runs as a
    previewer and would show each cluster's `-aks-deployer-admin` re-pointed (replaced) to it, which a later `pulumi up`
    of that plan would grant."""
    deployer, object_id = cloud_spec.deployer, cloud_spec.deployer_object_id
    if deployer is DeployerAccess.ADMIN_GROUP and object_id is not None:
        yield ((*base, "deployer_object_id"), f"'{object_id}' is given, but deployer 'admin_group' makes no role assignment "
                                              "(the deployer reaches the clusters through an admin group); allowed: remove "
                                              "deployer_object_id, or deployer service_principal or user")
    elif cloud_spec.previewers and object_id is None and deployer is not DeployerAccess.ADMIN_GROUP:
        yield ((*base, "deployer_object_id"),
               f"not set, while previewers lists {', '.join(cloud_spec.previewers)} and deployer is '{deployer.value}': "
               "the preview runs the program as a previewer; without deployer_object_id the running principal would be "
               "granted cluster-admin (the preview would re-point each cluster's deployer role assignment to the "
               "previewer); allowed: the object ID of the principal that runs `pulumi up` (`az ad sp show --id "
               "<AZURE_CLIENT_ID> --query id -o tsv`), or deployer 'admin_group'")
    for i, previewer in enumerate(cloud_spec.previewers):
        if previewer == object_id:
            yield ((*base, "previewers", i), f"'{previewer}' is also deployer_object_id; a previewer reads, the deployer gets "
                                             "cluster-admin: give the preview its own service principal")


def _check_front_door(cloud_spec: AzureCloudSpec, path: Path) -> Iterator[Issue]:
    endpoint = cloud_spec.global_endpoint
    if endpoint is None:
        return
    if endpoint.certificate and not _KEY_VAULT_SECRET.match(endpoint.certificate):
        yield ((*path, "certificate"), f"'{endpoint.certificate}' is not a Key Vault secret resource ID; allowed: "
                                       "/subscriptions/<id>/resourceGroups/<rg>/providers/Microsoft.KeyVault/vaults/<vault>/secrets/<name>")
    if endpoint.azure_tier is AzureFrontDoorTier.STANDARD and not endpoint.domain:
        yield ((*path, "domain"), "azure_tier 'standard' has no Private Link, so Front Door reaches each region over HTTPS "
                                  "on the Internet and checks the origin certificate against `domain`; set domain, or use azure_tier 'premium'")
    paths = {r: s.inference.health_check_path for r, s in cloud_spec.regions.items() if s.inference is not None}
    if len(set(paths.values())) > 1:
        listed = ", ".join(f"{r}: {p}" for r, p in paths.items())
        yield (path, f"Front Door probes one health path for all origins; the regions' inference.health_check_path differ ({listed})")


def _check_region(cloud_spec: AzureCloudSpec, region: RegionSpec, path: Path) -> Iterator[Issue]:
    net = region.network
    npath = (*path, "network")
    if net.transit_encryption is TransitEncryption.ENFORCE and apiserver_vnet_integration(cloud_spec, region):
        yield ((*npath, "transit_encryption"),
               "'enforce' can't be honoured in this region: clouds.azure.etcd_encryption 'customer_key' turns its VNet "
               "encryption off, because API Server VNet Integration, which the cluster's private etcd vault needs, doesn't "
               "support VNet encryption (learn.microsoft.com/azure/aks/api-server-vnet-integration#limitations); allowed: "
               "monitor (moot while the VNet is unencrypted), or clouds.azure.etcd_encryption platform_key, which keeps "
               "VNet encryption on (with monitor: Azure accepts only enforcement AllowUnencrypted today)")
    elif net.transit_encryption is TransitEncryption.ENFORCE:
        yield ((*npath, "transit_encryption"),
               "'enforce' is not available on Azure: VNet encryption accepts only enforcement AllowUnencrypted today "
               "(DropUnencrypted is documented as future support), and GPU sizes (ND, NC, NV) are not on the VNet "
               "encryption hardware list; allowed on Azure: monitor (encryption on, unencrypted flows allowed)")
    if net.zones > len(AZURE_ZONES):
        yield ((*npath, "zones"), f"got {net.zones}; Azure regions have at most {len(AZURE_ZONES)} availability zones (allowed: 2 or 3)")
    if net.flow_log_retention_days > MAX_FLOW_LOG_RETENTION_DAYS:
        yield ((*npath, "flow_log_retention_days"),
               f"got {net.flow_log_retention_days}; Azure flow log retention is 1 to {MAX_FLOW_LOG_RETENTION_DAYS} days")
    if region.cluster is not None and net.nat is NatMode.NONE:
        yield ((*npath, "nat"), "nat 'none' leaves AKS without egress (node bootstrap needs it); allowed on Azure with a cluster: single, per_zone")
    if region.cluster is not None:
        admins = region.cluster.admins
        for i, admin in enumerate(admins):
            if not _GUID.match(admin):
                yield ((*path, "cluster", "admins", i), f"'{admin}' is not an Entra ID group object ID; Azure admins are GUIDs")
        if cloud_spec.deployer is DeployerAccess.ADMIN_GROUP and not admins and not cloud_spec.admin_group_object_ids:
            yield ((*path, "cluster", "admins"), "deployer 'admin_group' reaches clusters through an admin group, but this "
                   "cluster has none: add the deployer's Entra group to platform.clouds.azure.admin_group_object_ids or to this "
                   "cluster's admins, or set platform.clouds.azure.deployer to service_principal or user")
    if region.inference is not None and region.cluster is None:
        yield ((*path, "inference"), "inference on Azure is served by the region's AKS cluster; add `cluster:` to this region")
    group = region.resource_group
    if group is not None and (problem := resource_group_name_problem(group)):
        yield ((*path, "resource_group"), f"'{group}' is not an Azure resource group name ({problem}); allowed: {RESOURCE_GROUP_RULE}")
    yield from _check_pools(region, net.zones, path)
    yield from _check_lustre(cloud_spec, region, path)


def _check_pools(region: RegionSpec, zones: int, path: Path) -> Iterator[Issue]:
    seen = {AKS_SYSTEM_POOL: "the system pool"}
    allowed_zones = AZURE_ZONES[:zones]
    for name, pool in region.gpu_pools.items():
        ppath = (*path, "gpu_pools", name)
        aks_name = aks_pool_name(name)
        if aks_name in seen:
            yield (ppath, f"pool name '{name}' becomes AKS pool '{aks_name}' (hyphens dropped, 12 characters), "
                          f"which {seen[aks_name]} already uses; rename one of them")
        seen[aks_name] = f"pool '{name}'"
        for i, zone in enumerate(pool.zones):
            if zone not in allowed_zones:
                yield ((*ppath, "zones", i), f"zone '{zone}' is not one of this network's zones; allowed: {', '.join(allowed_zones)}")
        if pool.disk_size_gib > AKS_MAX_OS_DISK_GB:
            yield ((*ppath, "disk_size_gib"), f"got {pool.disk_size_gib}; it sets the AKS agent pool's osDiskSizeGB, which Azure "
                                              f"takes up to {AKS_MAX_OS_DISK_GB}; allowed on Azure: {AKS_MAX_OS_DISK_GB} or less")
        if pool.placement is Placement.COMPACT:
            yield ((*ppath, "placement"), "placement 'compact' is not supported on Azure: AKS pools here get no proximity placement "
                                          "group, so nodes would not be placed close together; allowed on Azure: none")
        if pool.reservation and not _CAPACITY_RESERVATION_GROUP.match(pool.reservation):
            yield ((*ppath, "reservation"), f"'{pool.reservation}' is not a capacity reservation group resource ID; allowed: "
                                            "/subscriptions/<id>/resourceGroups/<rg>/providers/Microsoft.Compute/capacityReservationGroups/<name>")
        if pool.sharing.mode is SharingMode.MIG and pool.sharing.mig_profile:
            try:
                row = resolve_gpu_pool(Cloud.AZURE, pool)
            except catalog.CatalogError:  # the shared checks report it
                continue
            on_aks = aks_mig_profiles(row.mig_profiles)
            if pool.sharing.mig_profile in row.mig_profiles and pool.sharing.mig_profile not in on_aks:
                yield ((*ppath, "sharing", "mig_profile"),
                       f"MIG profile '{pool.sharing.mig_profile}' cannot be created by AKS on {row.instance_type} "
                       f"(gpuInstanceProfile picks the smallest partition per size); allowed: {', '.join(on_aks)}")


def _check_lustre(cloud_spec: AzureCloudSpec, region: RegionSpec, path: Path) -> Iterator[Issue]:
    slots = lustre_subnets(region.network.cidr)
    for index, (name, fs) in enumerate(region.lustre.items()):
        fpath = (*path, "lustre", name)
        if index >= len(slots):
            yield (fpath, f"'{name}' is Lustre file system {index + 1} of {len(region.lustre)} in this region; Azure Managed "
                          f"Lustre needs a subnet per file system and network {region.network.cidr} has {len(slots)} Lustre "
                          "slots (the third quarter's eighth block holds the AKS API server subnet); allowed: at most "
                          f"{len(slots)} file systems per region")
            continue
        try:
            resolve_lustre(Cloud.AZURE, fs)
        except catalog.CatalogError:  # the shared checks report it
            continue
        need = lustre_subnet_prefix(fs.size_gib)
        if slots[index].prefixlen > need:
            yield ((*fpath, "size_gib"), f"{fs.size_gib} GiB needs a /{need} subnet or larger; this network's Lustre slots are "
                                         f"/{slots[index].prefixlen} (network {region.network.cidr}); use a larger network cidr")
        if fs.bucket is not None and cloud_spec.hpc_cache_principal_id is None:
            yield ((*fpath, "bucket"), "a bucket link needs clouds.azure.hpc_cache_principal_id (object ID of the "
                                       "'HPC Cache Resource Provider' service principal, which imports and exports the data)")
        if fs.bucket is not None and not cloud_spec.allow_shared_key_for_lustre:
            yield ((*fpath, "bucket"), f"linking bucket '{fs.bucket}' turns shared-key (account key) access on for its storage "
                                       "account, which Azure Managed Lustre's blob integration requires and every other account "
                                       "has off; set clouds.azure.allow_shared_key_for_lustre: true to accept that (the policy "
                                       "pack still reports it), or remove bucket")
