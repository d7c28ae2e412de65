"""A GPU node pool (AKS AgentPool): VM size from the catalog, the AKS GPU driver setting, MIG through
`gpuInstanceProfile`, spot / regular / capacity-reservation capacity, autoscaling from zero, the accelerator
taint and labels, no node public IPs, CMK disks with encryption at host."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_azure_native as azure_native

from components import catalog
from components.k8s.sharing import sharing_node_labels
from components.spec import (
    CapacityType,
    Cloud,
    GpuDriver,
    GpuPoolSpec,
    SharingMode,
    accelerator_node_labels,
    accelerator_taint,
    region_path,
)
from components.spec.azure import AZURE_ZONES, aks_mig_profile, aks_pool_name
from components.spec.resolve import AKS_SPOT_TAINT

from .base import AzureComponent
from .cluster import agent_pool_ignored_changes, agent_pool_version
from .context import AzureContext, grant
from .reservations import checked_reservation_group

# AKS adds this taint and label to every spot pool itself, in the pool's own nodeTaints and nodeLabels. Declaring them
# keeps Pulumi from removing them: an AgentPool update is a PUT of the whole pool, and a nodeLabels edit without the
# label drops it from the nodes (Azure/AKS#3152; cluster-api-provider-azure merges it back into every update for that
# reason: mergeSystemNodeLabels, PR #2604). Set to AKS's own value, the reserved label is accepted.
SPOT_TAINT = f"{AKS_SPOT_TAINT.key}={AKS_SPOT_TAINT.value}:{AKS_SPOT_TAINT.effect}"
SPOT_LABEL = {AKS_SPOT_TAINT.key: AKS_SPOT_TAINT.value}  # the label has the taint's key and value
_DRIVER = {GpuDriver.CLOUD: "Install", GpuDriver.OPERATOR: "None"}
_SPOT_ANY_PRICE = -1  # pay up to the on-demand price; evictions happen for capacity, never for price


def node_taints(pool: GpuPoolSpec, row: catalog.GpuInstance) -> list[str]:
    """`key=value:Effect` taints: the accelerator taint first, then the pool's own, then AKS's spot taint."""
    key, value, effect = accelerator_taint(row)
    taints = [f"{key}={value}:{effect}", *(f"{t.key}={t.value}:{t.effect}" for t in pool.taints)]
    if pool.capacity is CapacityType.SPOT:
        taints.append(SPOT_TAINT)
    return list(dict.fromkeys(taints))  # AKS rejects duplicate taints


def node_labels(name: str, pool: GpuPoolSpec, row: catalog.GpuInstance) -> dict[str, str]:
    """The labels every cloud puts on accelerator pools (the Kubernetes layer selects on them), plus the
    device-plugin config label for time-slicing (AKS itself creates MIG instances, so MIG needs no label), and on spot
    pools AKS's own spot label (SPOT_LABEL)."""
    spot = SPOT_LABEL if pool.capacity is CapacityType.SPOT else {}
    return {**accelerator_node_labels(name, pool, row), **sharing_node_labels(Cloud.AZURE, row.accelerator, pool.sharing, False),
            **spot}


def capacity_settings(pool: GpuPoolSpec, reservation_group: pulumi.Input[str] | None = None) -> dict[str, object]:
    """AgentPool arguments for the capacity type: spot (priority Spot, eviction Delete, max price -1),
    a capacity reservation group (`reservation_group`, default the pool's `reservation`), or regular on-demand VMs."""
    if pool.capacity is CapacityType.SPOT:
        return {"scale_set_priority": "Spot", "scale_set_eviction_policy": "Delete", "spot_max_price": _SPOT_ANY_PRICE}
    if pool.capacity is CapacityType.RESERVED:
        return {"scale_set_priority": "Regular", "capacity_reservation_group_id": reservation_group or pool.reservation}
    return {"scale_set_priority": "Regular"}


REPLACED_ON_CHANGE = ("availabilityZones", "capacityReservationGroupID", "enableEncryptionAtHost", "enableNodePublicIP",
                      "gpuProfile", "osDiskSizeGB", "osDiskType", "scaleSetEvictionPolicy", "scaleSetPriority",
                      "spotMaxPrice", "vnetSubnetID")
"""Agent pool settings AKS fixes at creation, beyond vmSize and gpuInstanceProfile, which azure-native already replaces
on: the zones, disks, host encryption, public IPs and subnet (azurerm cycles the pool to change them: its
kubernetes_cluster_node_pool docs, temporary_name_for_rotation), spot priority and eviction ("Spot pools cannot change
ScaleSetPriority after creation"), and the reservation group and GPU driver (ForceNew in azurerm's schema). The engine
replaces on these itself, create-first unless told otherwise: hence `delete_before_replace` on the pool."""


@dataclass(frozen=True)
class GpuPoolArgs:
    context: AzureContext
    pool_name: str
    """The spec's pool name; the AKS pool name is derived from it (hyphens dropped, 12 characters)."""
    pool: GpuPoolSpec
    instance: catalog.GpuInstance
    """Catalog row of the pool's VM size (resolved and validated by the spec checks)."""
    cluster_name: pulumi.Input[str]
    cluster_principal_id: pulumi.Input[str]
    """Control-plane identity of the cluster; needs Contributor on a capacity reservation group it uses."""
    node_subnet_id: pulumi.Input[str]
    zones: int
    """Network zones; the pool uses `pool.zones` or all of them."""
    upgrade_channel: str
    """The cluster's AKS auto-upgrade channel (`Cluster.upgrade_channel`): one that moves minor versions owns the
    pool's orchestratorVersion."""
    kubernetes_version: str | None = None
    """The cluster's `kubernetes_version`, which the pool follows under the `patch` channel. Default: AKS's."""


class GpuPool(AzureComponent):
    """`ai-infra:azure:GpuPool`. Children: `<name>-agentpool`, and `<name>-reservation-access` for reserved capacity."""

    def __init__(self, name: str, args: GpuPoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:azure:GpuPool", name, opts)
        ctx, pool, row = args.context, args.pool, args.instance
        depends_on: list[pulumi.Resource] = []
        zones = list(pool.zones) or list(AZURE_ZONES[: args.zones])
        reservation_group: pulumi.Input[str] | None = None
        if pool.capacity is CapacityType.RESERVED and pool.reservation:
            # AKS places the VMs in the reservation group as the cluster identity (docs: Contributor on the group).
            depends_on.append(grant(f"{name}-reservation-access", self, ctx, "contributor", pool.reservation, args.cluster_principal_id))
            reservation_group = checked_reservation_group(
                self, ctx, pool.reservation, row.instance_type, zones, f"{region_path('azure', ctx.region)}.gpu_pools.{args.pool_name}",
                f"set gpu_pools.{args.pool_name}.zones to zones the group holds it in")
        mig = pool.sharing.mode is SharingMode.MIG and pool.sharing.mig_profile
        settings = dict(
            resource_group_name=ctx.group,
            resource_name_=args.cluster_name,
            agent_pool_name=aks_pool_name(args.pool_name),
            mode="User",
            vm_size=row.instance_type,
            orchestrator_version=agent_pool_version(args.upgrade_channel, args.kubernetes_version),
            os_type="Linux",
            os_sku="Ubuntu",  # the Azure Managed Lustre CSI driver supports Ubuntu nodes only
            enable_auto_scaling=True,
            min_count=pool.min_nodes,
            max_count=pool.max_nodes,
            count=pool.min_nodes,
            availability_zones=zones,
            vnet_subnet_id=args.node_subnet_id,
            enable_node_public_ip=False,
            enable_encryption_at_host=True,
            os_disk_type="Managed",
            os_disk_size_gb=pool.disk_size_gib,
            node_taints=node_taints(pool, row),
            node_labels=node_labels(args.pool_name, pool, row),
            gpu_profile=azure_native.containerservice.GPUProfileArgs(driver=_DRIVER[pool.driver]),
            gpu_instance_profile=aks_mig_profile(pool.sharing.mig_profile) if mig else None,
            tags=ctx.tags(),
            **capacity_settings(pool, reservation_group),
        )
        # Keyword arguments, not AgentPoolArgs: the SDK keeps the cluster name (`resource_name`) under the same
        # key as the Pulumi resource name, so AgentPool(name, AgentPoolArgs(resource_name=...)) cannot be built.
        # The keyword form (`resource_name_`) is checked just the same: an unknown keyword is a TypeError.
        self.agent_pool = azure_native.containerservice.AgentPool(
            f"{name}-agentpool",
            # The cluster autoscaler owns the node count, the upgrade channel may own the version. AKS takes the
            # settings in REPLACED_ON_CHANGE only when it creates a pool: a change replaces the pool, old pool first.
            # The name is fixed, and azure-native asks for delete-first only on its own ForceNew paths (vmSize,
            # gpuInstanceProfile: its Diff sets DeleteBeforeReplace when it reports replaces); on the others the
            # engine would create first, and azure-native's Create refuses an existing pool ("cannot create already
            # existing resource").
            opts=pulumi.ResourceOptions(parent=self, depends_on=depends_on,
                                        ignore_changes=agent_pool_ignored_changes(args.upgrade_channel),
                                        replace_on_changes=list(REPLACED_ON_CHANGE), delete_before_replace=True),
            **settings,
        )
        self.register_outputs({"agent_pool_id": self.agent_pool.id, "vm_size": row.instance_type})
