"""A GKE Standard cluster: private nodes and (by default) a private endpoint, Workload Identity, secrets
encrypted with the region's KMS key, Shielded Nodes, a release channel whose upgrades wait for a weekly maintenance
window (and the spec's exclusions), Dataplane V2 (eBPF network policy), the storage CSI drivers the region needs, and a
dedicated least-privilege node service account."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from ipaddress import IPv4Network

import pulumi
import pulumi_gcp as gcp
import yaml

from components.spec import ApiAccess, ClusterSpec, Cloud, SystemPoolSpec
from components.spec.gcp import SYSTEM_POOL, initial_nodes_per_zone
from components.spec.maintenance import ClusterMaintenance, default_window

from .context import CLOUD_PLATFORM_SCOPE, GcpContext, account_email
from .naming import service_account_id
from .network import POD_RANGE, SERVICE_RANGE

SYSTEM_MACHINE_TYPE = "e2-standard-4"
# GKE's role for node service accounts (logs, metrics, metadata); image pulls need Artifact Registry read.
NODE_ROLES = {"node": "roles/container.defaultNodeServiceAccount", "registry": "roles/artifactregistry.reader"}
LOG_COMPONENTS = ["SYSTEM_COMPONENTS", "WORKLOADS", "APISERVER", "CONTROLLER_MANAGER", "SCHEDULER"]
METRIC_COMPONENTS = ["SYSTEM_COMPONENTS", "APISERVER", "SCHEDULER", "CONTROLLER_MANAGER"]
"""System and control-plane metrics: they need system metrics only (GKE docs, "Collect and view control plane metrics")."""
KUBE_STATE_METRIC_COMPONENTS = ["STORAGE", "POD", "DEPLOYMENT"]
"""GKE's kube state metrics packages need Managed Service for Prometheus managed collection (GKE docs, "Collect and
view kube state metrics", Requirements): sent only with it. In `self_managed` monitoring, kube-prometheus-stack's own
kube-state-metrics covers them."""
AUTH_PLUGIN = "gke-gcloud-auth-plugin"
COS_IMAGE = "COS_CONTAINERD"
"""GKE's default node image, Container-Optimized OS with containerd."""
IGNORE_NODE_COUNTS = ["initialNodeCount", "nodeCount"]
"""The cluster autoscaler owns a pool's size after creation."""
HYPERDISK_ONLY = ("a3-ultragpu-", "a4-", "a4x-", "ct6e-", "c4-", "c4a-", "c4d-", "n4-", "n4a-", "n4d-")
"""Machine series whose boot disk must be Hyperdisk Balanced (no Persistent Disk support), e.g. A3 Ultra, A4,
TPU v6e (cluster-toolkit's v6e blueprint sets hyperdisk-balanced), and the C4 and N4 families with their AMD and Arm
variants (C4A, C4D, N4A, N4D: nextflow-io/nextflow#6841, "do not support pd-balanced disks")."""


def system_machine_type(pool: SystemPoolSpec) -> str:
    """The system pool's machine type: the spec's, else `SYSTEM_MACHINE_TYPE`."""
    return pool.instance_type or SYSTEM_MACHINE_TYPE


def boot_disk_type(machine_type: str) -> str:
    return "hyperdisk-balanced" if machine_type.startswith(HYPERDISK_ONLY) else "pd-balanced"


@dataclass(frozen=True)
class NodeIdentity:
    """What every node pool of a cluster shares: the node service account, the boot disk key, VM labels and whether
    nodes load signed kernel modules."""

    service_account: pulumi.Input[str]
    kms_key_id: pulumi.Input[str]
    labels: Mapping[str, str]
    signed_kernel_modules: bool = False
    """Clusters with the Managed Lustre CSI driver: CPU and TPU nodes run the Container-Optimized OS image that loads
    Google-signed out-of-tree modules (the Lustre client) with Secure Boot on; the default image's LoadPin refuses
    them. GPU nodes' image loads modules already. Default off."""


def node_config(identity: NodeIdentity, machine_type: str, *, checked_machine_type: pulumi.Input[str] | None = None,
                image_type: str = COS_IMAGE, secure_boot: bool = True, **settings: object) -> gcp.container.NodePoolNodeConfigArgs:
    """Hardened node settings: dedicated service account, CMEK boot disk, Shielded VM with secure boot, the GKE
    metadata server (Workload Identity), gVNIC, and the platform labels on the VMs (provider default labels
    do not reach node VMs). `checked_machine_type`: `machine_type` once its zones are known to offer it (see
    `offerings.py`); default: `machine_type` as it is. `image_type`: default Container-Optimized OS.
    `secure_boot`: default on; integrity monitoring stays on regardless. `settings` adds pool-specific fields."""
    modules = identity.signed_kernel_modules and not settings.get("guest_accelerators")
    return gcp.container.NodePoolNodeConfigArgs(
        linux_node_config=gcp.container.NodePoolNodeConfigLinuxNodeConfigArgs(
            node_kernel_module_loading=gcp.container.NodePoolNodeConfigLinuxNodeConfigNodeKernelModuleLoadingArgs(
                policy="ENFORCE_SIGNED_MODULES")) if modules else None,
        machine_type=checked_machine_type if checked_machine_type is not None else machine_type,
        disk_type=boot_disk_type(machine_type),
        service_account=identity.service_account,
        oauth_scopes=[CLOUD_PLATFORM_SCOPE],
        boot_disk_kms_key=identity.kms_key_id,
        image_type=image_type,
        shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
            enable_secure_boot=secure_boot, enable_integrity_monitoring=True),
        workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(mode="GKE_METADATA"),
        gvnic=gcp.container.NodePoolNodeConfigGvnicArgs(enabled=True),
        metadata={"disable-legacy-endpoints": "true"},
        resource_labels=dict(identity.labels),
        **settings,
    )


def kubeconfig(cluster_name: str, endpoint: str, ca_certificate: str) -> str:
    """A kubeconfig that authenticates through `gke-gcloud-auth-plugin` (the gcloud user's or workload's
    credentials); it holds no token or key."""
    return yaml.safe_dump({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster_name, "cluster": {"server": f"https://{endpoint}", "certificate-authority-data": ca_certificate}}],
        "contexts": [{"name": cluster_name, "context": {"cluster": cluster_name, "user": cluster_name}}],
        "current-context": cluster_name,
        "users": [{"name": cluster_name, "user": {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": AUTH_PLUGIN,
            "provideClusterInfo": True,
            "installHint": "Install gke-gcloud-auth-plugin: gcloud components install gke-gcloud-auth-plugin",
        }}}],
    }, sort_keys=False)


def authorized_networks(spec: ClusterSpec, vpc_cidr: IPv4Network) -> list[gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs]:
    """Who may reach the API server: the VPC and the listed private networks (private endpoint), or the listed CIDRs
    (public_restricted opt-in)."""
    listed = [gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(cidr_block=str(c), display_name=f"authorized-{i}")
              for i, c in enumerate(spec.authorized_cidrs)]
    if spec.api_access is ApiAccess.PUBLIC_RESTRICTED:
        return listed
    return [gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(cidr_block=str(vpc_cidr), display_name="vpc"), *listed]


RECURRENCE_ANCHOR = datetime.date(2024, 1, 1)
"""A Monday: the recurring window starts on its week's day. A fixed date, never "now", so every `up` sends the same
start_time; a start in the past is only where the recurrence begins (the provider's own examples start in 2019)."""
_RFC3339 = "%Y-%m-%dT%H:%M:%SZ"


def maintenance_policy(maintenance: ClusterMaintenance) -> gcp.container.ClusterMaintenancePolicyArgs:
    """GKE's maintenance policy: `recurring_window` (GKE API MaintenanceWindow.recurringWindow, GA; the newer
    recurringMaintenanceWindow only renames its fields), one weekly RRULE window, and the exclusions. Times are UTC
    "Zulu" with seconds, the form GKE returns them in: an offset like +02:00 shows a diff on every run
    (hashicorp/terraform-provider-google#8226, #7406). Each exclusion names its scope, `NO_UPGRADES` too: GKE returns
    an empty options object for that scope, which the provider reads back as NO_UPGRADES (flattenMaintenancePolicy),
    so options left out would differ from what it reads."""
    window = maintenance.window
    start = datetime.datetime.combine(RECURRENCE_ANCHOR, datetime.time()) + datetime.timedelta(minutes=window.week_minute)
    end = start + datetime.timedelta(hours=window.hours)
    return gcp.container.ClusterMaintenancePolicyArgs(
        recurring_window=gcp.container.ClusterMaintenancePolicyRecurringWindowArgs(
            start_time=start.strftime(_RFC3339), end_time=end.strftime(_RFC3339),
            recurrence=f"FREQ=WEEKLY;BYDAY={window.day.value[:2].upper()}"),
        maintenance_exclusions=[gcp.container.ClusterMaintenancePolicyMaintenanceExclusionArgs(
            exclusion_name=exclusion.name,
            start_time=f"{exclusion.start.isoformat()}T00:00:00Z",
            # `end` is the last day held back: the exclusion ends as the next day begins.
            end_time=f"{(exclusion.end + datetime.timedelta(days=1)).isoformat()}T00:00:00Z",
            exclusion_options=gcp.container.ClusterMaintenancePolicyMaintenanceExclusionExclusionOptionsArgs(
                scope=exclusion.scope.value.upper()),
        ) for exclusion in maintenance.exclusions] or None,
    )


@dataclass(frozen=True)
class ClusterArgs:
    context: GcpContext
    spec: ClusterSpec
    cluster_name: str
    """GKE cluster name (at most 40 characters; `<environment>-<region>` always fits)."""
    network_id: pulumi.Input[str]
    subnet_id: pulumi.Input[str]
    vpc_cidr: IPv4Network
    node_locations: pulumi.Input[Sequence[str]]
    zone_count: int
    kms_key_id: pulumi.Input[str]
    """Encrypts Kubernetes secrets (application-layer) and node boot disks; the GKE and Compute Engine
    service agents must hold Encrypter/Decrypter on it (`Kms.key_id` resolves once they do)."""
    lustre_csi: bool = False
    """Enable the Managed Lustre CSI driver (on port 6988, matching instances made with GKE support). Default off."""
    gcs_fuse_csi: bool = False
    """Enable the Cloud Storage FUSE CSI driver. Default off."""
    gateway_api: bool = False
    """Enable the Gateway API (standard channel), e.g. for inference Gateways. Default off."""
    managed_prometheus: bool = False
    """Google Managed Service for Prometheus collection. Default off (the self-managed stack scrapes instead)."""
    master_version: pulumi.Input[str] | None = None
    """`spec.kubernetes_version` once GKE is known to offer it in the region and release channel
    (gcp/offerings.py offered_master_version).
    Default: `spec.kubernetes_version` as given (unset: the release channel's default)."""
    release_channel: pulumi.Input[str] | None = None
    """`spec.upgrade_channel` as GKE names it (REGULAR), once the channel's default version is known to be high enough
    (gcp/offerings.py signed_modules_channel, for a cluster without kubernetes_version in a Lustre region).
    Default: `spec.upgrade_channel` as given."""
    maintenance: ClusterMaintenance = ClusterMaintenance(default_window(Cloud.GCP))
    """The weekly window and exclusions (`components.spec.maintenance.cluster_maintenance`, which staggers the default
    windows across regions). Default: the first default window (Sunday 03:00 UTC, 12 hours) and no exclusions."""


class Cluster(pulumi.ComponentResource):
    """`ai-infra:gcp:Cluster`. Children: `<name>-nodes-sa` and its role grants `<name>-nodes-sa-node`,
    `<name>-nodes-sa-registry`; `<name>-gke` (protected outside dev); `<name>-system` (CPU pool for add-ons)."""

    cluster: gcp.container.Cluster
    system_pool: gcp.container.NodePool
    identity: NodeIdentity
    kubeconfig: pulumi.Output[str]

    def __init__(self, name: str, args: ClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:gcp:Cluster", name, None, opts)
        ctx, spec = args.context, args.spec
        child = pulumi.ResourceOptions(parent=self)
        account = gcp.serviceaccount.Account(f"{name}-nodes-sa", gcp.serviceaccount.AccountArgs(
            project=ctx.project, account_id=service_account_id(ctx.environment, ctx.region, "gke-nodes"),
            display_name=f"GKE nodes of {args.cluster_name}"), opts=child)
        email = account_email(account)
        grants = [gcp.projects.IAMMember(f"{name}-nodes-sa-{short}", gcp.projects.IAMMemberArgs(
            project=ctx.project, role=role, member=pulumi.Output.concat("serviceAccount:", email)), opts=child)
                  for short, role in NODE_ROLES.items()]
        self.identity = NodeIdentity(service_account=email, kms_key_id=args.kms_key_id, labels=ctx.labels,
                                     signed_kernel_modules=args.lustre_csi)
        # deletion_protection fails the provider's delete only once the engine has got that far; `protect` makes the
        # engine refuse any update that would delete or replace the cluster (pulumi.com/docs/iac/concepts/options/protect).
        # No retain_on_delete: a cluster left behind would keep running (and billing) outside any stack.
        self.cluster = gcp.container.Cluster(f"{name}-gke", self._cluster_args(args, email),
                                             opts=pulumi.ResourceOptions(parent=self, depends_on=grants, protect=ctx.protected,
                                                                         # Only the removed default pool reads these.
                                                                         ignore_changes=["nodeConfig", "initialNodeCount"]))
        pool = spec.system_pool
        self.system_pool = gcp.container.NodePool(f"{name}-system", gcp.container.NodePoolArgs(
            project=ctx.project, cluster=self.cluster.id, location=ctx.region, name=SYSTEM_POOL,
            initial_node_count=initial_nodes_per_zone(pool.min_nodes, args.zone_count),
            autoscaling=gcp.container.NodePoolAutoscalingArgs(
                total_min_node_count=pool.min_nodes, total_max_node_count=pool.max_nodes, location_policy="BALANCED"),
            management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
            node_config=node_config(self.identity, system_machine_type(pool), disk_size_gb=100)),
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=IGNORE_NODE_COUNTS))
        self.kubeconfig = pulumi.Output.secret(pulumi.Output.all(
            self.cluster.name, self.cluster.endpoint, self.cluster.master_auth.cluster_ca_certificate,
        ).apply(lambda v: kubeconfig(v[0], v[1], v[2] or "")))
        self.register_outputs({"cluster_id": self.cluster.id, "name": self.cluster.name, "endpoint": self.cluster.endpoint,
                               "kubeconfig": self.kubeconfig})

    @staticmethod
    def _cluster_args(args: ClusterArgs, node_account: pulumi.Input[str]) -> gcp.container.ClusterArgs:
        ctx, spec = args.context, args.spec
        private = spec.api_access is ApiAccess.PRIVATE
        return gcp.container.ClusterArgs(
            project=ctx.project, name=args.cluster_name, location=ctx.region, node_locations=args.node_locations,
            network=args.network_id, subnetwork=args.subnet_id, networking_mode="VPC_NATIVE",
            ip_allocation_policy=gcp.container.ClusterIpAllocationPolicyArgs(
                cluster_secondary_range_name=POD_RANGE, services_secondary_range_name=SERVICE_RANGE),
            # GKE always creates a default pool; it is deleted right away, and its nodes still get the
            # dedicated service account and hardening, never the Compute Engine default account.
            remove_default_node_pool=True, initial_node_count=1,
            node_config=gcp.container.ClusterNodeConfigArgs(
                service_account=node_account, oauth_scopes=[CLOUD_PLATFORM_SCOPE], boot_disk_kms_key=args.kms_key_id,
                shielded_instance_config=gcp.container.ClusterNodeConfigShieldedInstanceConfigArgs(
                    enable_secure_boot=True, enable_integrity_monitoring=True),
                workload_metadata_config=gcp.container.ClusterNodeConfigWorkloadMetadataConfigArgs(mode="GKE_METADATA")),
            private_cluster_config=gcp.container.ClusterPrivateClusterConfigArgs(
                enable_private_nodes=True, enable_private_endpoint=private,
                # Networks listed for a private endpoint arrive through peering or a VPN, often from another region.
                master_global_access_config=gcp.container.ClusterPrivateClusterConfigMasterGlobalAccessConfigArgs(enabled=True)
                if private and spec.authorized_cidrs else None),
            master_authorized_networks_config=gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
                cidr_blocks=authorized_networks(spec, args.vpc_cidr), gcp_public_cidrs_access_enabled=False),
            workload_identity_config=gcp.container.ClusterWorkloadIdentityConfigArgs(workload_pool=f"{ctx.project}.svc.id.goog"),
            database_encryption=gcp.container.ClusterDatabaseEncryptionArgs(state="ENCRYPTED", key_name=args.kms_key_id),
            enable_shielded_nodes=True,
            # Without a policy GKE upgrades control planes and drains nodes, GPU and TPU training nodes too, at any time.
            maintenance_policy=maintenance_policy(args.maintenance),
            release_channel=gcp.container.ClusterReleaseChannelArgs(
                channel=args.release_channel if args.release_channel is not None else spec.upgrade_channel.value.upper()),
            min_master_version=args.master_version if args.master_version is not None else spec.kubernetes_version,
            # Dataplane V2 enforces NetworkPolicy itself (eBPF); the Calico network_policy addon must stay off.
            datapath_provider="ADVANCED_DATAPATH",
            addons_config=gcp.container.ClusterAddonsConfigArgs(
                http_load_balancing=gcp.container.ClusterAddonsConfigHttpLoadBalancingArgs(disabled=False),
                gce_persistent_disk_csi_driver_config=gcp.container.ClusterAddonsConfigGcePersistentDiskCsiDriverConfigArgs(enabled=True),
                gcs_fuse_csi_driver_config=gcp.container.ClusterAddonsConfigGcsFuseCsiDriverConfigArgs(enabled=args.gcs_fuse_csi),
                lustre_csi_driver_config=gcp.container.ClusterAddonsConfigLustreCsiDriverConfigArgs(
                    enabled=args.lustre_csi, enable_legacy_lustre_port=args.lustre_csi or None)),
            gateway_api_config=gcp.container.ClusterGatewayApiConfigArgs(channel="CHANNEL_STANDARD") if args.gateway_api else None,
            logging_config=gcp.container.ClusterLoggingConfigArgs(enable_components=LOG_COMPONENTS),
            monitoring_config=gcp.container.ClusterMonitoringConfigArgs(
                enable_components=METRIC_COMPONENTS + (KUBE_STATE_METRIC_COMPONENTS if args.managed_prometheus else []),
                managed_prometheus=gcp.container.ClusterMonitoringConfigManagedPrometheusArgs(enabled=args.managed_prometheus)),
            # Posture (workload configuration audit) on. GKE's image vulnerability scanning is no longer supported
            # (the GKE API's VULNERABILITY_BASIC: "Basic vulnerability scanning is no longer supported"), so it is off.
            security_posture_config=gcp.container.ClusterSecurityPostureConfigArgs(
                mode="BASIC", vulnerability_mode="VULNERABILITY_DISABLED"),
            cost_management_config=gcp.container.ClusterCostManagementConfigArgs(enabled=True),
            deletion_protection=ctx.protected,
        )
