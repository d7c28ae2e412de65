"""Azure rules: AKS, agent pools, VM network interfaces, storage accounts, Key Vault, NSGs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .aws import ENC, EXPOSURE, PRIVILEGE
from .common import ADMIN_PORTS, OPEN_CIDRS, has_ports
from .props import get, items, need
from .registry import Context, rule

AKS = ("azure-native:containerservice:ManagedCluster",)
POOLS = ("azure-native:containerservice:AgentPool",)
STORAGE = ("azure-native:storage:StorageAccount",)
NIC = "azure-native:network:NetworkInterface"
VMS = ("azure-native:compute:VirtualMachine", "azure-native:compute:VirtualMachineScaleSet")


@rule("azure-aks-private-api", "Checks whether the AKS API server is private or limited to authorized IP ranges.",
      severity="critical", types=AKS, remediation="Set apiServerAccessProfile.enablePrivateCluster true, or authorizedIPRanges without 0.0.0.0/0.",
      # CIS AKS Benchmark v1.7.0/v1.8.0: 5.4.1 "Restrict Access to the Control Plane Endpoint" (an allowlist passes);
      # 5.4.2 asks for a private endpoint with public access disabled, which this rule does not require.
      frameworks={**EXPOSURE, "CIS": ("AKS 5.4.1",)})
def aks_private(props: Any, ctx: Context) -> Iterator[str]:
    if need(props, "apiServerAccessProfile.enablePrivateCluster") is not True:
        ranges = need(props, "apiServerAccessProfile.authorizedIPRanges", []) or []
        if not ranges or set(ranges) & OPEN_CIDRS:
            yield "the API server is public without authorized IP ranges"


@rule("azure-aks-entra-rbac", "Checks whether AKS uses Entra ID with Azure RBAC and has local accounts disabled.",
      severity="high", types=AKS, remediation="Set aadProfile {managed: true, enableAzureRBAC: true} and disableLocalAccounts true.",
      # CIS AKS Benchmark v1.8.0: 5.5.1 "Manage Kubernetes RBAC users with Azure AD", 5.5.2 "Use Azure RBAC for
      # Kubernetes Authorization" (4.1.1 is "cluster-admin role only used where required", a Kubernetes RBAC review).
      frameworks={**PRIVILEGE, "CIS": ("AKS 5.5.1", "AKS 5.5.2")})
def aks_rbac(props: Any, ctx: Context) -> Iterator[str]:
    if need(props, "disableLocalAccounts") is not True:
        yield "local accounts are enabled: a static admin kubeconfig exists"
    if need(props, "aadProfile.enableAzureRBAC") is not True:
        yield "Azure RBAC for Kubernetes authorization is off"


@rule("azure-aks-network-policy", "Checks whether AKS enforces Kubernetes network policies.",
      severity="medium", types=AKS, remediation="Set networkProfile.networkPolicy to cilium, calico or azure.",
      frameworks={"SOC2": ("CC6.6",), "PCI-DSS-v4": ("1.3.1",), "NIST-800-53": ("SC-7",), "CIS": ("AKS 5.4.4",)})
def aks_network_policy(props: Any, ctx: Context) -> Iterator[str]:
    engine = need(props, "networkProfile.networkPolicy")
    if not engine:
        yield "no network policy engine: NetworkPolicies are not enforced"
    # "none" is a valid NetworkPolicy value too: "Network policies will not be enforced" (azure-native enum).
    elif str(engine).lower() not in ("azure", "calico", "cilium"):
        yield f"networkProfile.networkPolicy is {engine}: NetworkPolicies are not enforced"


@rule("azure-aks-disk-encryption", "Checks whether AKS node disks use a customer-managed disk encryption set.",
      severity="high", types=AKS, remediation="Set diskEncryptionSetID (and enable encryption at host on the pools).", frameworks=ENC)
def aks_des(props: Any, ctx: Context) -> Iterator[str]:
    if not get(props, "diskEncryptionSetID"):
        yield "node disks use platform-managed keys; set diskEncryptionSetID"


@rule("azure-aks-kms-etcd", "Checks whether AKS encrypts Kubernetes Secrets in etcd with a customer-managed Key Vault key (KMS).",
      severity="high", types=AKS,
      remediation="Set securityProfile.azureKeyVaultKms {enabled: true, keyId: <versioned key ID>, keyVaultNetworkAccess: "
                  "Private, keyVaultResourceId: <vault ID>}; a private vault needs API Server VNet Integration "
                  "(apiServerAccessProfile.enableVnetIntegration and a delegated subnetId).",
      frameworks={**ENC, "CIS": ("AKS 5.3.1",)})
def aks_kms(props: Any, ctx: Context) -> Iterator[str]:
    # The EKS and GKE rules' counterpart. AKS encrypts etcd at rest with platform-managed keys; the KMS plugin adds the
    # customer's key (learn.microsoft.com/azure/aks/use-kms-etcd-encryption). ai-infra's clusters set it only with
    # clouds.azure.etcd_encryption: customer_key, which turns the region's VNet encryption off.
    if need(props, "securityProfile.azureKeyVaultKms.enabled", False) is not True:
        yield "Kubernetes Secrets in etcd are not encrypted with a customer-managed Key Vault key (azureKeyVaultKms is off)"


@rule("azure-agentpool-no-public-ip", "Checks whether AKS node pools give nodes no public IPs.",
      severity="high", types=POOLS + AKS, remediation="Set enableNodePublicIP false.",
      # CIS AKS Benchmark v1.7.0: 5.4.3 "Ensure clusters are created with Private Nodes" (no public IPs on nodes).
      frameworks={**EXPOSURE, "CIS": ("AKS 5.4.3",)})
def pool_public_ip(props: Any, ctx: Context) -> Iterator[str]:
    pools = [raw for raw in items(props, "agentPoolProfiles")] if ctx.type in AKS else [props]
    for pool in pools:
        if get(pool, "enableNodePublicIP") is True:
            yield f"pool {get(pool, 'name', ctx.name)} gives nodes public IPs"


@rule("azure-vm-no-public-ip", "Checks whether network interfaces and VMs have no public IP address attached.",
      severity="high", types=(NIC,) + VMS,
      remediation="Remove publicIPAddress from the NIC's ipConfigurations (publicIPAddressConfiguration on a VM's or scale "
                  "set's inline NIC); reach VMs through Azure Bastion or a private network, and give them egress through a NAT gateway.",
      frameworks=EXPOSURE)
def vm_public_ip(props: Any, ctx: Context) -> Iterator[str]:
    # A PublicIPAddress resource alone exposes nothing: NAT gateways, load balancers and Bastion need one. It is the
    # attachment to a NIC's IP configuration that puts a VM on the internet, so that is what this rule checks.
    if ctx.type == NIC:
        for config in items(props, "ipConfigurations"):
            if need(config, "publicIPAddress") is not None:
                yield f"IP configuration {get(config, 'name', '?')} attaches a public IP address"
        return
    profile = "virtualMachineProfile.networkProfile" if ctx.type == VMS[1] else "networkProfile"
    for nic in items(props, f"{profile}.networkInterfaceConfigurations"):
        for config in items(nic, "ipConfigurations"):
            if need(config, "publicIPAddressConfiguration") is not None:
                yield f"NIC {get(nic, 'name', '?')} IP configuration {get(config, 'name', '?')} creates a public IP address"


@rule("azure-storage-secure-transfer", "Checks whether storage accounts require HTTPS with TLS 1.2 and block public blob access.",
      severity="high", types=STORAGE, remediation="Set enableHttpsTrafficOnly true, minimumTlsVersion TLS1_2, allowBlobPublicAccess false.",
      frameworks={"HIPAA": ("164.312(e)(1)",), "SOC2": ("CC6.7",), "PCI-DSS-v4": ("4.2.1",), "NIST-800-53": ("SC-8",), "CIS": ("Azure 3.1", "Azure 3.15")})
def storage_transport(props: Any, ctx: Context) -> Iterator[str]:
    if need(props, "enableHttpsTrafficOnly", True) is not True:
        yield "plain HTTP is allowed"
    if need(props, "minimumTlsVersion", "TLS1_0") not in ("TLS1_2", "TLS1_3"):
        yield f"minimum TLS version is {get(props, 'minimumTlsVersion', 'TLS1_0')}"
    # Unset means disallowed: "the default interpretation is false" (storage API 2023-01-01 on; azure-native 3 uses 2024-01-01).
    if need(props, "allowBlobPublicAccess", False) is True:
        yield "anonymous public blob access is allowed"


@rule("azure-storage-cmk", "Checks whether storage accounts encrypt with a customer-managed Key Vault key.",
      severity="high", types=STORAGE, remediation="Set encryption.keySource Microsoft.Keyvault with keyVaultProperties.", frameworks=ENC)
def storage_cmk(props: Any, ctx: Context) -> Iterator[str]:
    # The API reads keySource case-insensitively ("Possible values (case-insensitive)", azure-native KeySource).
    if str(need(props, "encryption.keySource", "Microsoft.Storage")).lower() != "microsoft.keyvault":
        yield "the account uses Microsoft-managed keys"


@rule("azure-storage-no-shared-key", "Checks whether storage accounts disable shared-key (account key) access.",
      severity="medium", types=STORAGE, remediation="Set allowSharedKeyAccess false and use Entra ID; Azure Managed Lustre's blob integration is a documented exception.",
      frameworks={**PRIVILEGE, "CIS": ("Azure 3.3",)})
def storage_shared_key(props: Any, ctx: Context) -> Iterator[str]:
    if need(props, "allowSharedKeyAccess", True) is not False:
        yield "shared-key access is allowed: account keys grant full access without identity"


@rule("azure-keyvault-protected", "Checks whether Key Vaults use RBAC and purge protection.",
      severity="high", types=("azure-native:keyvault:Vault",), remediation="Set properties.enableRbacAuthorization and enablePurgeProtection true.",
      frameworks={"PCI-DSS-v4": ("3.6.1",), "NIST-800-53": ("SC-12",), "SOC2": ("CC6.1",), "CIS": ("Azure 8.5",)})
def keyvault(props: Any, ctx: Context) -> Iterator[str]:
    if need(props, "properties.enablePurgeProtection") is not True:
        yield "purge protection is off: a deleted vault's keys can be destroyed for good"
    if need(props, "properties.enableRbacAuthorization") is not True:
        yield "access policies instead of Azure RBAC"


@rule("azure-nsg-no-open-admin-ingress", "Checks whether NSGs keep SSH, RDP and all ports closed to the internet.",
      severity="critical", types=("azure-native:network:NetworkSecurityGroup", "azure-native:network:SecurityRule"),
      remediation="Restrict sourceAddressPrefix; use Bastion for admin access.", frameworks={**EXPOSURE, "CIS": ("Azure 6.1", "Azure 6.2")})
def nsg(props: Any, ctx: Context) -> Iterator[str]:
    rules = list(items(props, "securityRules")) if ctx.type.endswith("NetworkSecurityGroup") else [props]
    for r in rules:
        # ICMP, ESP and AH rules open no port (their destinationPortRange is "*" all the same)
        if need(r, "direction") != "Inbound" or need(r, "access") != "Allow" or not has_ports(need(r, "protocol", "*")):
            continue
        sources = {need(r, "sourceAddressPrefix")} | set(items(r, "sourceAddressPrefixes"))
        if not sources & OPEN_CIDRS:
            continue
        ports = [need(r, "destinationPortRange")] + list(items(r, "destinationPortRanges"))
        for port in filter(None, ports):
            lo, _, hi = str(port).partition("-")
            if port == "*":
                yield f"rule {get(r, 'name', '?')} allows the internet to all ports"
            else:
                for admin in ADMIN_PORTS:
                    if int(lo) <= admin <= int(hi or lo):
                        yield f"rule {get(r, 'name', '?')} allows the internet to port {admin}"
