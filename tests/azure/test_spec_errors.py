"""Bad Azure input stops `load_platform` with the config path, the value given and what is allowed —
before any resource is registered."""

from __future__ import annotations

import copy
import difflib
import string
from typing import Any

import pytest
from helpers import platform_dict
from hypothesis import example, given
from hypothesis import strategies as st

from components import catalog
from components.spec import SpecError, load_platform
from components.spec.azure import zonal_regions_nearest_first

E = "platform.clouds.azure.regions.eastus2"
S = "platform.clouds.azure.regions.swedencentral"
DELETE = object()


def change(config: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """Set (or DELETE) `value` at the /-separated path; `a & b` with a tuple value changes several paths."""
    data = copy.deepcopy(config)
    for one_path, one_value in zip(path.split(" & "), value if " & " in path else (value,)):
        *parents, last = one_path.split("/")
        node = data
        for key in parents:
            node = node[key]
        if one_value is DELETE:
            del node[last]
        else:
            node[last] = one_value
    return data


R = "regions/eastus2"
# (id, path in clouds.azure, new value, expected error path, fragments the message must contain)
CASES = [
    ("lustre-capacity-not-a-multiple", f"{R}/lustre/scratch/size_gib", 20000, f"{E}.lustre.scratch.size_gib",
     ["20000", "multiple of 16384", "AMLFS-Durable-Premium-125"]),
    ("lustre-throughput-not-an-amlfs-sku", f"{R}/lustre/scratch/throughput_mbps_per_tib", 1000, f"{E}.lustre.scratch.throughput_mbps_per_tib",
     ["1000", "40, 125, 250, 500"]),
    ("gpu-azure-does-not-offer", f"{R}/gpu_pools/train", {"accelerator": "l4", "max_nodes": 1}, f"{E}.gpu_pools.train.accelerator",
     ["'l4'", "not offered on azure", "h100-80gb"]),
    ("vm-size-not-in-catalog", f"{R}/gpu_pools/train", {"instance_type": "Standard_ND40rs_v2"}, f"{E}.gpu_pools.train.instance_type",
     ["Standard_ND40rs_v2", "Standard_ND96isr_H100_v5"]),
    ("mig-on-a-vm-without-mig", f"{R}/gpu_pools/train", {"instance_type": "Standard_NC4as_T4_v3", "sharing": {"mode": "mig", "mig_profile": "1g.10gb"}},
     f"{E}.gpu_pools.train.sharing.mig_profile", ["1g.10gb", "Standard_NC4as_T4_v3", "no MIG"]),
    ("mig-profile-aks-cannot-create", f"{R}/gpu_pools/train/sharing/mig_profile", "1g.20gb", f"{E}.gpu_pools.train.sharing.mig_profile",
     ["1g.20gb", "gpuInstanceProfile", "1g.10gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb"]),
    ("transit-enforce-not-on-azure", f"{R}/network/transit_encryption", "enforce", f"{E}.network.transit_encryption",
     ["'enforce'", "DropUnencrypted", "allowed on Azure: monitor"]),
    ("more-zones-than-azure-has", f"{R}/network/zones", 4, f"{E}.network.zones", ["got 4", "2 or 3"]),
    ("flow-log-retention-too-long", f"{R}/network/flow_log_retention_days", 400, f"{E}.network.flow_log_retention_days", ["got 400", "1 to 365"]),
    ("no-egress-for-aks", f"{R}/network/nat", "none", f"{E}.network.nat", ["'none'", "single, per_zone"]),
    ("aks-pool-name-collision", f"{R}/gpu_pools/tr-ain", {"accelerator": "t4"}, f"{E}.gpu_pools.tr-ain", ["'tr-ain'", "'train'"]),
    ("pool-zone-outside-network", f"{R}/gpu_pools/train/zones", ["4"], f"{E}.gpu_pools.train.zones[0]", ["'4'", "1, 2, 3"]),
    ("reservation-not-a-crg", f"{R}/gpu_pools/batch/reservation", "crg-h200", f"{E}.gpu_pools.batch.reservation",
     ["'crg-h200'", "capacityReservationGroups"]),
    ("lustre-link-without-principal", "hpc_cache_principal_id", DELETE, f"{E}.lustre.scratch.bucket", ["hpc_cache_principal_id"]),
    ("lustre-link-without-shared-key-opt-in", "allow_shared_key_for_lustre", DELETE, f"{E}.lustre.scratch.bucket",
     ["bucket 'datasets'", "shared-key", "allow_shared_key_for_lustre: true", "remove bucket"]),
    ("lustre-too-large-for-its-subnet", f"{R}/network/cidr & {R}/lustre/scratch/size_gib", ("10.40.0.0/22", 32768),
     f"{E}.lustre.scratch.size_gib", ["32768 GiB", "/26", "/27", "10.40.0.0/22"]),
    ("admin-not-a-guid", "regions/swedencentral/cluster", {"admins": ["group:ml-admins"]}, f"{S}.cluster.admins[0]",
     ["'group:ml-admins'", "GUID"]),
    ("admin-group-not-a-guid", "admin_group_object_ids", ["ml-admins"], "platform.clouds.azure.admin_group_object_ids[0]", ["ml-admins"]),
    ("deployer-admin-group-without-a-group", "deployer & admin_group_object_ids", ("admin_group", []), f"{S}.cluster.admins",
     ["deployer 'admin_group'", "this cluster has none", "admin_group_object_ids", "service_principal or user"]),
    ("deployer-not-a-kind", "deployer", "me", "platform.clouds.azure.deployer", ["'me'", "service_principal", "user", "admin_group"]),
    ("etcd-encryption-not-a-mode", "etcd_encryption", "kms", "platform.clouds.azure.etcd_encryption",
     ["'kms'", "customer_key", "platform_key"]),
    ("inference-without-cluster", "regions/swedencentral", {"network": {"cidr": "10.41.0.0/16", "transit_encryption": "monitor"}, "inference": {}},
     f"{S}.inference", ["cluster"]),
    ("standard-front-door-without-domain", "global_endpoint", {"azure_tier": "standard"}, "platform.clouds.azure.global_endpoint.domain",
     ["standard", "domain", "premium"]),
    ("route-53-zone-on-azure", "global_endpoint/hosted_zone_id", "Z0123456789ABCDEFGHIJ",
     "platform.clouds.azure.global_endpoint.hosted_zone_id", ["hosted_zone_id is AWS-only", "on azure the endpoint creates no DNS record"]),
    ("certificate-not-a-key-vault-secret", "global_endpoint/certificate", "https://kv.vault.azure.net/secrets/tls",
     "platform.clouds.azure.global_endpoint.certificate", ["https://kv.vault.azure.net/secrets/tls", "Microsoft.KeyVault/vaults"]),
    ("health-paths-differ", "regions/swedencentral/inference/health_check_path", "/ready", "platform.clouds.azure.global_endpoint",
     ["eastus2: /healthz", "swedencentral: /ready"]),
]


@pytest.mark.parametrize(("where", "value", "path", "fragments"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_azure_config_names_path_value_and_allowed(prod_config: dict[str, Any], where: str, value: Any, path: str,
                                                       fragments: list[str]) -> None:
    data = platform_dict({"azure": change(prod_config, where, value)}, environment="prod")
    with pytest.raises(SpecError) as caught:
        load_platform(data)
    issues = dict(caught.value.issues)
    assert path in issues, f"expected an issue at {path}; got {caught.value}"
    for fragment in fragments:
        assert fragment.lower() in issues[path].lower(), f"{fragment!r} not in {issues[path]!r}"
    assert "Traceback" not in str(caught.value)


def test_the_production_config_is_valid(prod_config: dict[str, Any]) -> None:
    spec = load_platform(platform_dict({"azure": prod_config}, environment="prod"))
    assert spec.clouds.azure is not None and list(spec.clouds.azure.regions) == ["eastus2", "swedencentral"]


def _azure_issues(config: dict[str, Any]) -> dict[str, str]:
    """The issues of a production config changed by the caller ({} when it loads)."""
    try:
        load_platform(platform_dict({"azure": config}, environment="prod"))
    except SpecError as caught:
        return dict(caught.issues)
    return {}


# (id, path in clouds.azure, new value, expected error path, the exact message)
EXACT = [
    ("os-disk-above-aks-maximum", f"{R}/gpu_pools/train/disk_size_gib", 4096, f"{E}.gpu_pools.train.disk_size_gib",
     "got 4096; it sets the AKS agent pool's osDiskSizeGB, which Azure takes up to 2048; allowed on Azure: 2048 or less"),
    ("compact-placement-on-aks", f"{R}/gpu_pools/batch/placement", "compact", f"{E}.gpu_pools.batch.placement",
     "placement 'compact' is not supported on Azure: AKS pools here get no proximity placement group, so nodes would not "
     "be placed close together; allowed on Azure: none"),
    ("resource-group-bad-characters", f"{R}/resource_group", "bad/name?#", f"{E}.resource_group",
     "'bad/name?#' is not an Azure resource group name ('/', '?', '#' are not allowed); allowed: 1 to 90 characters: "
     "letters, digits, '_', '-', '.', '(' and ')' (Unicode letters and digits too), not ending in '.'"),
    ("resource-group-ends-in-period", f"{R}/resource_group", "rg-ml.", f"{E}.resource_group",
     "'rg-ml.' is not an Azure resource group name (it ends in '.'); allowed: 1 to 90 characters: letters, digits, '_', "
     "'-', '.', '(' and ')' (Unicode letters and digits too), not ending in '.'"),
    ("resource-group-too-long", f"{R}/resource_group", "r" * 91, f"{E}.resource_group",
     f"'{'r' * 91}' is not an Azure resource group name (it has 91 characters); allowed: 1 to 90 characters: letters, "
     "digits, '_', '-', '.', '(' and ')' (Unicode letters and digits too), not ending in '.'"),
    ("inference-certificate-unused", f"{R}/inference/certificate", "https://kv.vault.azure.net/secrets/infer",
     f"{E}.inference.certificate",
     "'https://kv.vault.azure.net/secrets/infer' is not used on Azure: Front Door reaches the region's AKS Service "
     "through its load balancer, so TLS ends at the global endpoint; remove it and set "
     "platform.clouds.azure.global_endpoint.certificate (a Key Vault secret ID) or global_endpoint.domain "
     "(a Front Door managed certificate)"),
    ("domain-not-a-host-name", "global_endpoint/domain", "infer.example.com:443", "platform.clouds.azure.global_endpoint.domain",
     "'infer.example.com:443' is not a host name (it has a port); domain is the global endpoint's public host name, "
     "Front Door's custom domain, for which Front Door's managed certificate is issued; allowed: a bare fully qualified "
     "host name such as infer.example.com: at least two labels of 1 to 63 letters, digits and '-' (not starting or "
     "ending with '-'), at most 253 characters, no scheme, path, port, wildcard or trailing '.'; did you mean "
     "'infer.example.com'?"),
    ("eight-lustre-file-systems", f"{R}/lustre", {"scratch": {"size_gib": 16384}, **{f"fs{i}": {"size_gib": 16384} for i in range(2, 9)}},
     f"{E}.lustre.fs8",
     "'fs8' is Lustre file system 8 of 8 in this region; Azure Managed Lustre needs a subnet per file system and network "
     "10.40.0.0/16 has 7 Lustre slots (the third quarter's eighth block holds the AKS API server subnet); allowed: at most "
     "7 file systems per region"),
    ("enforce-with-customer-key", f"etcd_encryption & {R}/network/transit_encryption", ("customer_key", "enforce"),
     f"{E}.network.transit_encryption",
     "'enforce' can't be honoured in this region: clouds.azure.etcd_encryption 'customer_key' turns its VNet encryption "
     "off, because API Server VNet Integration, which the cluster's private etcd vault needs, doesn't support VNet "
     "encryption (learn.microsoft.com/azure/aks/api-server-vnet-integration#limitations); allowed: monitor (moot while "
     "the VNet is unencrypted), or clouds.azure.etcd_encryption platform_key, which keeps VNet encryption on (with "
     "monitor: Azure accepts only enforcement AllowUnencrypted today)"),
    ("resource-group-empty", f"{R}/resource_group", "", f"{E}.resource_group",
     "'' is not an Azure resource group name (it has 0 characters); allowed: 1 to 90 characters: letters, digits, '_', "
     "'-', '.', '(' and ')' (Unicode letters and digits too), not ending in '.'"),
]


@pytest.mark.parametrize(("where", "value", "path", "message"), [c[1:] for c in EXACT], ids=[c[0] for c in EXACT])
def test_azure_only_limits_give_the_exact_message(prod_config: dict[str, Any], where: str, value: Any, path: str,
                                                  message: str) -> None:
    issues = _azure_issues(change(prod_config, where, value))
    assert issues.get(path) == message, issues


# (id, path in clouds.azure, a value Azure accepts)
ACCEPTED = [
    ("os-disk-at-aks-maximum", f"{R}/gpu_pools/train/disk_size_gib", 2048),
    ("os-disk-at-spec-minimum", f"{R}/gpu_pools/train/disk_size_gib", 50),
    ("placement-none", f"{R}/gpu_pools/batch/placement", "none"),
    ("resource-group-plain", f"{R}/resource_group", "rg-ml-eastus2"),
    ("resource-group-all-punctuation", f"{R}/resource_group", "ML_Platform.(prod)-01"),
    ("resource-group-unicode-letters", f"{R}/resource_group", "rg-ĸüche-数据"),
    ("resource-group-one-character", f"{R}/resource_group", "r"),
    ("resource-group-90-characters", f"{R}/resource_group", "r" * 90),
    ("seven-lustre-file-systems", f"{R}/lustre", {"scratch": {"size_gib": 16384}, **{f"fs{i}": {"size_gib": 16384} for i in range(2, 8)}}),
    ("etcd-platform-key", "etcd_encryption", "platform_key"),
    ("etcd-customer-key", "etcd_encryption", "customer_key"),  # with transit_encryption monitor: moot, accepted
]


@pytest.mark.parametrize(("where", "value"), [c[1:] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED])
def test_values_azure_accepts_still_load(prod_config: dict[str, Any], where: str, value: Any) -> None:
    assert _azure_issues(change(prod_config, where, value)) == {}


# --- Regions without availability zones ---------------------------------------------------------------------

ZONAL = [r.name for r in catalog.regions("azure") if r.availability_zones]
NOT_ZONAL = [r.name for r in catalog.regions("azure") if r.availability_zones is False]


def _in_region(config: dict[str, Any], region: str) -> dict[str, Any]:
    """The production config with its swedencentral region moved to `region`."""
    data = copy.deepcopy(config)
    data["regions"] = {(region if name == "swedencentral" else name): spec for name, spec in data["regions"].items()}
    return data


def test_a_region_without_availability_zones_gives_the_exact_message(prod_config: dict[str, Any]) -> None:
    assert _azure_issues(_in_region(prod_config, "westus")) == {"platform.clouds.azure.regions.westus": (
        "region 'westus' has no availability zones (Microsoft's Azure regions list: "
        "https://learn.microsoft.com/azure/reliability/regions-list); the AKS cluster, its GPU pools and the "
        "zone-redundant (ZRS) flow-log storage account are placed in availability zones, so Azure would refuse them "
        "(AvailabilityZoneNotSupported) after the resource group, VNet and Key Vault exist; allowed: an Azure region "
        "with availability zones: westus2, westus3, eastus, australiaeast, austriaeast, belgiumcentral, brazilsouth, "
        "canadacentral, centralindia, centralus, chilecentral, denmarkeast, eastasia, eastus2, francecentral, "
        "germanywestcentral, indiasouthcentral, indonesiacentral, israelcentral, italynorth, japaneast, japanwest, "
        "koreacentral, malaysiawest, mexicocentral, newzealandnorth, northeurope, norwayeast, polandcentral, "
        "qatarcentral, southafricanorth, southcentralus, southeastasia, spaincentral, swedencentral, switzerlandnorth, "
        "uaenorth, uksouth, westeurope")}


@pytest.mark.parametrize("region", NOT_ZONAL)
def test_every_region_without_zones_is_refused_before_anything_registers(prod_config: dict[str, Any], region: str) -> None:
    issues = _azure_issues(_in_region(prod_config, region))
    assert list(issues) == [f"platform.clouds.azure.regions.{region}"]
    message = issues[f"platform.clouds.azure.regions.{region}"]
    assert message.startswith(f"region '{region}' has no availability zones")
    assert message.split("allowed: an Azure region with availability zones: ")[1].split(", ") == zonal_regions_nearest_first(region)


@pytest.mark.parametrize("region", ZONAL)
def test_every_region_with_zones_loads(prod_config: dict[str, Any], region: str) -> None:
    assert _azure_issues(_in_region(prod_config, region)) == {}


def test_customer_key_with_a_cluster_in_a_region_without_api_server_vnet_integration(prod_config: dict[str, Any]) -> None:
    config = {**_in_region(prod_config, "qatarcentral"), "etcd_encryption": "customer_key"}
    assert _azure_issues(config) == {"platform.clouds.azure.etcd_encryption": (
        "'customer_key' needs API Server VNet Integration, which Azure doesn't offer in qatarcentral "
        "(learn.microsoft.com/azure/aks/api-server-vnet-integration#availability), and region qatarcentral has a "
        "cluster; allowed: platform_key, or no cluster in qatarcentral")}
    # without a cluster there, nothing to integrate
    config["regions"]["qatarcentral"] = {"network": config["regions"]["qatarcentral"]["network"]}
    assert _azure_issues(config) == {}


def test_an_unlisted_region_gets_only_the_unknown_region_message(prod_config: dict[str, Any]) -> None:
    issues = _azure_issues(_in_region(prod_config, "westus9"))
    assert list(issues) == ["platform.clouds.azure.regions.westus9"]
    assert issues["platform.clouds.azure.regions.westus9"].startswith("unknown azure region 'westus9'")


@given(st.text(alphabet=string.ascii_lowercase + string.digits, max_size=24))
@example("ess")  # a tie at the third place: catalog order decides, not difflib's (by name)
def test_the_allowed_list_is_every_zonal_region_once_closest_first(name: str) -> None:
    order = zonal_regions_nearest_first(name)
    assert sorted(order) == sorted(ZONAL)  # each zonal region once, no region without zones
    # get_close_matches' rule (ratio at least 0.6, the 3 best), with ties in catalog order where difflib breaks them by
    # name: a tie at the third place picks the region listed first.
    ratio = {r: difflib.SequenceMatcher(None, r, name).ratio() for r in ZONAL}
    close = sorted((r for r in ZONAL if ratio[r] >= 0.6), key=lambda r: (-ratio[r], ZONAL.index(r)))[:3]
    assert sorted(ratio[r] for r in close) == sorted(ratio[r] for r in difflib.get_close_matches(name, ZONAL, n=3, cutoff=0.6))
    assert order[:len(close)] == close  # the close matches lead, best first ...
    assert order[len(close):] == [r for r in ZONAL if r not in close]  # ... then catalog order
    ratios = [difflib.SequenceMatcher(None, r, name).ratio() for r in order[:len(close)]]
    assert ratios == sorted(ratios, reverse=True)
    if name in ZONAL:
        assert order[0] == name
