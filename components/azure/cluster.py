"""An AKS cluster: private API server, Entra ID with Azure RBAC and no local accounts, workload identity, Azure CNI
overlay with Cilium (or Calico), the Azure Policy add-on, CMK node disks with encryption at host, Container Insights
and control-plane audit logs in the region's workspace, and an auto-upgrade channel whose upgrades (and node image
upgrades) wait for a weekly planned-maintenance window and skip the spec's excluded dates. Given an etcd key
(`ClusterArgs.etcd_key`), Kubernetes Secrets are encrypted in etcd with that customer-managed key by the Key Vault KMS
plugin, and the API server runs with API Server VNet Integration."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from ipaddress import IPv4Network

import pulumi
import pulumi_azure_native as azure_native
import yaml

from components.k8s.cluster import ACCELERATOR_LABEL, CAPACITY_LABEL, POOL_LABEL
from components.spec import ApiAccess, ClusterSpec, Cloud, UpgradeChannel
from components.spec.azure import AKS_SYSTEM_POOL, AZURE_ZONES, AksNetworkPolicy
from components.spec.maintenance import ClusterMaintenance, default_window

from .base import AzureComponent
from .context import AzureContext, grant, send_logs
from .etcd_key import EtcdKeyRef

# On the VNet encryption hardware list (Ddsv5). A v5 size is also why API Server VNet Integration (with an etcd key)
# needs the VNet's encryption off: Azure blocks it for v4-or-later sizes in an encrypted VNet.
DEFAULT_SYSTEM_VM_SIZE = "Standard_D4ds_v5"
# AKS has no "regular" channel: rapid -> rapid, regular -> stable (latest patch of minor N-1),
# stable -> patch (patches only; minor upgrades stay a deliberate `kubernetes_version` change).
UPGRADE_CHANNELS = {UpgradeChannel.RAPID: "rapid", UpgradeChannel.REGULAR: "stable", UpgradeChannel.STABLE: "patch"}
# Application ID of "Azure Kubernetes Service AAD Server", the audience of every AKS Entra ID token.
AKS_AAD_SERVER_ID = "6dae42f8-4368-4678-94ff-3960e28e3630"
_AUDIT_LOG_CATEGORIES = ("kube-audit-admin", "guard", "cluster-autoscaler")
_DNS_SERVICE_IP_OFFSET = 10
_INSIGHTS_STREAM = "Microsoft-ContainerInsights-Group-Default"
_MINOR_VERSION_CHANNELS = ("rapid", "stable")
MAINTENANCE_CONFIGS = {"upgrade": "aksManagedAutoUpgradeSchedule", "nodeos": "aksManagedNodeOSUpgradeSchedule"}
"""Child-name suffix -> AKS planned-maintenance configuration. AKS knows these two names only: the first schedules the
auto-upgrade channel's Kubernetes upgrades, the second the node OS channel's node image upgrades
(learn.microsoft.com/azure/aks/planned-maintenance)."""


@dataclass(frozen=True)
class ClusterArgs:
    context: AzureContext
    cluster: ClusterSpec
    """API access, version, upgrade channel, system pool and admins."""
    node_subnet_id: pulumi.Input[str]
    """Subnet of every node pool (pods use the overlay `pod_cidr`, not the subnet)."""
    pod_cidr: IPv4Network
    service_cidr: IPv4Network
    zones: int
    """Availability zones of the system pool (1..zones)."""
    disk_encryption_set_id: pulumi.Input[str]
    """CMK disk encryption set for node OS disks."""
    workspace_id: pulumi.Input[str]
    """Log Analytics workspace for Container Insights and the control-plane audit logs."""
    admin_group_object_ids: Sequence[str] = ()
    """Entra ID groups bound to cluster-admin. Default none (grant access with Azure RBAC role assignments)."""
    network_policy: AksNetworkPolicy = AksNetworkPolicy.CILIUM
    """Default Cilium on Azure CNI overlay."""
    deployer: tuple[pulumi.Input[str], str] | None = None
    """(Entra object ID, principal type `User` or `ServicePrincipal`) of the deployer: `clouds.azure.deployer_object_id`,
    else whoever runs the deployment (required with previewers, whose preview would re-point it). It gets the Azure
    Kubernetes Service RBAC Cluster Admin role on the cluster, so the Kubernetes layer can install into it: with Azure
    RBAC for Kubernetes no subscription role (Owner included) reaches the Kubernetes API. Default none (the deployer
    is in an admin group)."""
    managed_prometheus: bool = False
    """Turn on the Azure Monitor metrics add-on (managed Prometheus; its workspace and data collection rule are the
    `ManagedPrometheus` component's). Default off: the self-managed stack scrapes instead."""
    maintenance: ClusterMaintenance = ClusterMaintenance(default_window(Cloud.AZURE))
    """The weekly window (4 to 24 hours, AKS MaintenanceWindow.durationHours) and the excluded dates, all scope
    `no_upgrades` (the spec checks refuse others on Azure). `components.spec.maintenance.cluster_maintenance` staggers
    the default windows across regions; Azure Managed Lustre's window opens with the region's. Default: Sunday 03:00
    UTC for 8 hours, no exclusions."""
    previewers: Sequence[str] = ()
    """Entra object IDs of the preview service principals (`clouds.azure.previewers`): the Azure Kubernetes Service
    Cluster User role on the cluster, so a preview can read the kubeconfig; what they read inside is the Kubernetes
    layer's RBAC. Default none."""
    etcd_key: EtcdKeyRef | None = None
    """Encrypt Kubernetes Secrets in etcd with this key (the Key Vault KMS plugin, private vault) and put the API server
    in its `apiserver_subnet_id` (API Server VNet Integration, which KMS with a private vault requires; the node subnet's
    VNet must then have VNet encryption off: `NetworkArgs.vnet_encryption`). Default None: AKS's platform-managed keys
    only."""


class Cluster(AzureComponent):
    """`ai-infra:azure:Cluster`. Children: `<name>-aks-identity`, `-aks-network`, `-aks-des-reader`, `-aks`, `-aks-audit`,
    `-aks-maintenance-upgrade`, `-aks-maintenance-nodeos`, `-aks-insights`, `-aks-insights-link`, with `etcd_key`
    `-aks-etcd-crypto` and `-aks-etcd-kv-contributor`, with `deployer` `-aks-deployer-admin`, and per previewer
    `-aks-previewer-<hash of the object ID>`."""

    def __init__(self, name: str, args: ClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:azure:Cluster", name, opts)
        ctx, spec = args.context, args.cluster
        child = pulumi.ResourceOptions(parent=self)
        # A user-assigned control-plane identity can be granted its roles before the cluster exists.
        self.identity = azure_native.managedidentity.UserAssignedIdentity(
            f"{name}-aks-identity",
            azure_native.managedidentity.UserAssignedIdentityArgs(resource_group_name=ctx.group, location=ctx.region, tags=ctx.tags()),
            opts=child,
        )
        group_id = pulumi.Output.concat("/subscriptions/", ctx.subscription_id, "/resourceGroups/", ctx.group)
        grants = [
            # Subnets, the NAT gateway and internal load balancers / Private Link services of the region.
            grant(f"{name}-aks-network", self, ctx, "network_contributor", group_id, self.identity.principal_id),
            # AKS reads the disk encryption set when it creates node disks.
            grant(f"{name}-aks-des-reader", self, ctx, "reader", args.disk_encryption_set_id, self.identity.principal_id),
        ]
        etcd = args.etcd_key
        waits_for: list[pulumi.Resource] = list(grants)
        if etcd is not None:
            # Both before the cluster: AKS can't check permissions on a private vault, and the plugin needs them from
            # its first start (learn.microsoft.com/azure/aks/use-kms-etcd-encryption, private key vault). Crypto User:
            # encrypt and decrypt; Key Vault Contributor: the private link AKS creates to the vault. The apiserver
            # subnet needs Network Contributor, which `-aks-network` gives on the whole resource group.
            waits_for += [
                grant(f"{name}-aks-etcd-crypto", self, ctx, "key_vault_crypto_user", etcd.vault_id, self.identity.principal_id),
                grant(f"{name}-aks-etcd-kv-contributor", self, ctx, "key_vault_contributor", etcd.vault_id,
                      self.identity.principal_id),
                etcd.ready,
            ]
        system = spec.system_pool
        auto_upgrade = UPGRADE_CHANNELS[spec.upgrade_channel]
        private = spec.api_access is ApiAccess.PRIVATE
        # A public DNS record of the private address, only for networks outside the VNet (authorized_cidrs), which
        # cannot resolve the cluster's private DNS zone; the kubeconfig then names the API server by it.
        public_fqdn = private and bool(spec.authorized_cidrs)
        self.node_resource_group = f"rg-{name}-nodes"
        self.cluster = azure_native.containerservice.ManagedCluster(
            f"{name}-aks",
            azure_native.containerservice.ManagedClusterArgs(
                resource_group_name=ctx.group,
                location=ctx.region,
                dns_prefix=name,
                node_resource_group=self.node_resource_group,
                kubernetes_version=spec.kubernetes_version,
                sku=azure_native.containerservice.ManagedClusterSKUArgs(
                    name="Base", tier="Free" if ctx.environment == "dev" else "Standard"),  # Standard: uptime SLA
                identity=azure_native.containerservice.ManagedClusterIdentityArgs(
                    type="UserAssigned", user_assigned_identities=[self.identity.id]),
                aad_profile=azure_native.containerservice.ManagedClusterAADProfileArgs(
                    managed=True, enable_azure_rbac=True, tenant_id=ctx.tenant_id,
                    admin_group_object_ids=list(args.admin_group_object_ids)),
                disable_local_accounts=True,
                enable_rbac=True,
                api_server_access_profile=azure_native.containerservice.ManagedClusterAPIServerAccessProfileArgs(
                    enable_private_cluster=private,
                    private_dns_zone="system" if private else None,
                    enable_private_cluster_public_fqdn=public_fqdn if private else None,
                    authorized_ip_ranges=None if private else [str(c) for c in spec.authorized_cidrs],
                    # KMS with a private vault works over API Server VNet Integration only, not Konnectivity
                    # (learn.microsoft.com/azure/aks/use-kms-etcd-encryption, Limitations). One-way once on.
                    enable_vnet_integration=True if etcd else None,
                    subnet_id=etcd.apiserver_subnet_id if etcd else None,
                ),
                oidc_issuer_profile=azure_native.containerservice.ManagedClusterOIDCIssuerProfileArgs(enabled=True),
                security_profile=azure_native.containerservice.ManagedClusterSecurityProfileArgs(
                    workload_identity=azure_native.containerservice.ManagedClusterSecurityProfileWorkloadIdentityArgs(enabled=True),
                    azure_key_vault_kms=_kms(etcd)),
                network_profile=_network_profile(args),
                addon_profiles={
                    "azurepolicy": azure_native.containerservice.ManagedClusterAddonProfileArgs(enabled=True),
                    "omsagent": azure_native.containerservice.ManagedClusterAddonProfileArgs(
                        enabled=True,
                        config={"logAnalyticsWorkspaceResourceID": args.workspace_id, "useAADAuth": "true"}),
                },
                auto_upgrade_profile=azure_native.containerservice.ManagedClusterAutoUpgradeProfileArgs(
                    upgrade_channel=auto_upgrade, node_os_upgrade_channel="NodeImage"),
                disk_encryption_set_id=args.disk_encryption_set_id,
                azure_monitor_profile=_monitor_profile() if args.managed_prometheus else None,
                agent_pool_profiles=[azure_native.containerservice.ManagedClusterAgentPoolProfileArgs(
                    name=AKS_SYSTEM_POOL,
                    mode="System",
                    vm_size=system.instance_type or DEFAULT_SYSTEM_VM_SIZE,
                    os_type="Linux",
                    os_sku="AzureLinux",
                    enable_auto_scaling=True,
                    min_count=system.min_nodes,
                    max_count=system.max_nodes,
                    count=system.min_nodes,
                    availability_zones=list(AZURE_ZONES[: args.zones]),
                    vnet_subnet_id=args.node_subnet_id,
                    enable_encryption_at_host=True,
                    enable_node_public_ip=False,
                    # Not tainted CriticalAddonsOnly: every other pool is a tainted GPU pool, so the platform's
                    # add-ons (Kueue, the Prometheus stack, the GPU Operator's controllers) run here, as on the
                    # EKS and GKE system pools; their charts tolerate no such taint.
                    tags=ctx.tags(),
                )],
                tags=ctx.tags(),
            ),
            # Protected outside dev: AKS has no deletion guard, and a rename or a replace-only change (dnsPrefix,
            # nodeResourceGroup, diskEncryptionSetID, network plugin and ranges: pulumi-azure-native
            # provider/pkg/gen/replacement.go) would delete the cluster and its node resource group. No
            # retain_on_delete: a destroy should fail, not orphan a running cluster. The GPU AgentPools stay
            # unprotected: a new VM size or MIG profile replaces them, routinely.
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=waits_for,
                ignore_changes=_ignored_changes(auto_upgrade),
                protect=ctx.protected,
            ),
        )
        send_logs(f"{name}-aks-audit", self, self.cluster.id, args.workspace_id, categories=_AUDIT_LOG_CATEGORIES)
        self._maintenance_windows(name, ctx, args.maintenance)
        if args.deployer is not None:
            # Reaches the API server's authorization within five minutes (learn.microsoft.com/azure/aks/manage-azure-rbac):
            # the README says to rerun a first `pulumi up` that the Kubernetes layer finds Forbidden.
            object_id, principal_type = args.deployer
            grant(f"{name}-aks-deployer-admin", self, ctx, "aks_rbac_cluster_admin", self.cluster.id, object_id,
                  principal_type=principal_type)
        for object_id in dict.fromkeys(args.previewers):
            grant(f"{name}-aks-previewer-{hashlib.sha256(object_id.encode()).hexdigest()[:8]}", self, ctx,
                  "aks_cluster_user", self.cluster.id, object_id)
        self._container_insights(name, ctx, args.workspace_id)
        self.cluster_name: pulumi.Output[str] = self.cluster.name
        self.resource_group_name: pulumi.Output[str] = pulumi.Output.from_input(ctx.group)
        self.principal_id: pulumi.Output[str] = self.identity.principal_id
        self.upgrade_channel = auto_upgrade
        """The AKS auto-upgrade channel (`rapid`, `stable` or `patch`); separate agent pools ignore what it owns."""
        credentials = azure_native.containerservice.list_managed_cluster_user_credentials_output(
            resource_group_name=ctx.group, resource_name=self.cluster.name, format="exec")
        server = self.cluster.fqdn if public_fqdn else None
        self.kubeconfig: pulumi.Output[str] = pulumi.Output.secret(pulumi.Output.all(credentials.kubeconfigs, server).apply(
            lambda v: exec_kubeconfig(base64.b64decode(v[0][0].value).decode(), name, v[1])))
        self.register_outputs({"cluster_id": self.cluster.id, "name": self.cluster.name, "kubeconfig": self.kubeconfig})

    def _maintenance_windows(self, name: str, ctx: AzureContext, maintenance: ClusterMaintenance) -> None:
        """Without planned maintenance AKS upgrades (and drains) nodes whenever its channels have something new, GPU
        training pools included. Both schedules get the same weekly window and excluded dates; AKS may still act
        outside it for urgent fixes, and treats the window as best effort."""
        cs = azure_native.containerservice
        window = maintenance.window
        # DateSpan start and end are whole days, both held back (notAllowedDates, in utc_offset's time).
        not_allowed = [cs.DateSpanArgs(start=e.start.isoformat(), end=e.end.isoformat()) for e in maintenance.exclusions]
        for suffix, config_name in MAINTENANCE_CONFIGS.items():
            # Keyword arguments, not MaintenanceConfigurationArgs: its cluster name (`resource_name`) clashes with the
            # Pulumi resource name, as on AgentPool (gpu_pool.py).
            cs.MaintenanceConfiguration(
                f"{name}-aks-maintenance-{suffix}",
                resource_group_name=ctx.group,
                resource_name_=self.cluster.name,
                config_name=config_name,
                maintenance_window=cs.MaintenanceWindowArgs(
                    schedule=cs.ScheduleArgs(weekly=cs.WeeklyScheduleArgs(
                        day_of_week=window.day.value.capitalize(), interval_weeks=1)),
                    duration_hours=window.hours,
                    start_time=window.start_utc,  # "HH:mm", in utc_offset's time
                    utc_offset="+00:00",
                    not_allowed_dates=not_allowed or None,
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )

    def _container_insights(self, name: str, ctx: AzureContext, workspace_id: pulumi.Input[str]) -> None:
        """With Entra ID auth (`useAADAuth`) the monitoring agent sends what a data collection rule associated
        with the cluster asks for; `az aks enable-addons` creates the pair, an ARM deployment must do it itself."""
        rule = azure_native.monitor.DataCollectionRule(
            f"{name}-aks-insights",
            azure_native.monitor.DataCollectionRuleArgs(
                resource_group_name=ctx.group,
                location=ctx.region,
                kind="Linux",
                data_sources=azure_native.monitor.DataCollectionRuleDataSourcesArgs(extensions=[
                    azure_native.monitor.ExtensionDataSourceArgs(
                        name="ContainerInsightsExtension", extension_name="ContainerInsights", streams=[_INSIGHTS_STREAM],
                        extension_settings={"dataCollectionSettings": {"interval": "1m", "namespaceFilteringMode": "Off",
                                                                       "enableContainerLogV2": True}}),
                ]),
                destinations=azure_native.monitor.DataCollectionRuleDestinationsArgs(log_analytics=[
                    azure_native.monitor.LogAnalyticsDestinationArgs(name="workspace", workspace_resource_id=workspace_id)]),
                data_flows=[azure_native.monitor.DataFlowArgs(streams=[_INSIGHTS_STREAM], destinations=["workspace"])],
                tags=ctx.tags(),
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        azure_native.monitor.DataCollectionRuleAssociation(
            f"{name}-aks-insights-link",
            azure_native.monitor.DataCollectionRuleAssociationArgs(
                resource_uri=self.cluster.id, association_name="ContainerInsightsExtension", data_collection_rule_id=rule.id),
            opts=pulumi.ResourceOptions(parent=self),
        )


def _kms(etcd: EtcdKeyRef | None) -> azure_native.containerservice.AzureKeyVaultKmsArgs | None:
    """The KMS plugin on a private vault; None (AKS's platform-managed keys only) without an etcd key."""
    if etcd is None:
        return None
    return azure_native.containerservice.AzureKeyVaultKmsArgs(
        enabled=True, key_id=etcd.key_id, key_vault_network_access="Private", key_vault_resource_id=etcd.vault_id)


def _monitor_profile() -> azure_native.containerservice.ManagedClusterAzureMonitorProfileArgs:
    """The metrics add-on, with our pool labels on kube-state-metrics' node series (as the self-managed stack has)."""
    return azure_native.containerservice.ManagedClusterAzureMonitorProfileArgs(
        metrics=azure_native.containerservice.ManagedClusterAzureMonitorProfileMetricsArgs(
            enabled=True,
            kube_state_metrics=azure_native.containerservice.ManagedClusterAzureMonitorProfileKubeStateMetricsArgs(
                metric_labels_allowlist=f"nodes=[{POOL_LABEL},{ACCELERATOR_LABEL},{CAPACITY_LABEL}]")))


def _ignored_changes(upgrade_channel: str) -> list[str]:
    """The autoscaler owns the system pool's node count; channels that move minor versions own the version."""
    ignored = ["agentPoolProfiles[0].count"]
    if upgrade_channel in _MINOR_VERSION_CHANNELS:
        ignored += ["kubernetesVersion", "agentPoolProfiles[0].orchestratorVersion"]
    return ignored


def agent_pool_version(upgrade_channel: str, kubernetes_version: str | None) -> str | None:
    """A separate AgentPool's orchestratorVersion: under a channel that keeps minors (`patch`) the cluster's
    `kubernetes_version`, so a deliberate minor upgrade reaches the pools after the control plane (AKS upgrades a
    ManagedCluster's control plane and its inline system pool only); under one that moves minors, AKS's (None)."""
    return None if upgrade_channel in _MINOR_VERSION_CHANNELS else kubernetes_version


def agent_pool_ignored_changes(upgrade_channel: str) -> list[str]:
    """What a separate AgentPool of the cluster leaves to AKS, as `_ignored_changes` does for the system pool: the
    autoscaler's node count, and under a channel that moves minor versions the pool's version. After such an upgrade a
    refresh copies the new orchestratorVersion into the pool's inputs (azure-native's Read applies what changed in
    Azure to them), and the next `up`, which sets none, would update every pool to take it out again."""
    return ["count", *(["orchestratorVersion"] if upgrade_channel in _MINOR_VERSION_CHANNELS else [])]


def _network_profile(args: ClusterArgs) -> azure_native.containerservice.ContainerServiceNetworkProfileArgs:
    cilium = args.network_policy is AksNetworkPolicy.CILIUM
    return azure_native.containerservice.ContainerServiceNetworkProfileArgs(
        network_plugin="azure",
        network_plugin_mode="overlay",
        network_dataplane="cilium" if cilium else "azure",
        network_policy="cilium" if cilium else "calico",
        pod_cidr=str(args.pod_cidr),
        service_cidr=str(args.service_cidr),
        dns_service_ip=str(args.service_cidr[_DNS_SERVICE_IP_OFFSET]),
        load_balancer_sku="standard",
        outbound_type="userAssignedNATGateway",  # egress through the network's NAT gateway only
    )


def exec_kubeconfig(user_kubeconfig: str, name: str, public_fqdn: str | None = None) -> str:
    """A kubeconfig for the cluster that signs in through `kubelogin` with the Azure CLI's credentials.

    Server and CA come from AKS's user kubeconfig (the server at `public_fqdn` instead when given: a private cluster's
    public DNS name, for clients outside its VNet); the user entry is replaced, because AKS's default exec
    entry uses interactive device-code login, which CI and Pulumi's Kubernetes provider cannot complete.
    """
    source = yaml.safe_load(user_kubeconfig)
    cluster = source["clusters"][0]["cluster"]
    server = f"https://{public_fqdn}:443" if public_fqdn else cluster["server"]
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {
            "server": server, "certificate-authority-data": cluster["certificate-authority-data"]}}],
        "users": [{"name": f"{name}-kubelogin", "user": {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "kubelogin",
            "args": ["get-token", "--login", "azurecli", "--server-id", AKS_AAD_SERVER_ID],
            "interactiveMode": "Never",
        }}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": f"{name}-kubelogin"}}],
        "current-context": name,
    }
    return yaml.safe_dump(config, sort_keys=False)
