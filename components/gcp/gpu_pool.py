"""A GKE GPU node pool: machine type and `guest_accelerator` from the catalog with GKE's driver installation,
GKE's own GPU sharing (time-sharing, MPS) or MIG partitions, spot / reservation / Dynamic Workload Scheduler
(flex-start, queued provisioning) capacity, autoscaling from a total minimum of 0 with a location policy,
compact placement when asked, the GPU taint and accelerator labels."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components import catalog
from components.k8s.sharing import sharing_node_labels
from components.spec import CapacityType, Cloud, GpuDriver, GpuPoolSpec, Placement, SharingMode, accelerator_node_labels
from components.spec.gcp import initial_nodes_per_zone

from .cluster import COS_IMAGE, IGNORE_NODE_COUNTS, NodeIdentity, node_config

# GKE puts this taint on GPU nodes itself; declaring the same key, value and effect keeps Pulumi and GKE in step.
GPU_TAINT = ("nvidia.com/gpu", "present", "NO_SCHEDULE")
TAINT_EFFECTS = {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}
SHARING_STRATEGIES = {SharingMode.TIME_SLICING: "TIME_SHARING", SharingMode.MPS: "MPS"}
# GKE's driver installer: the default driver of the node's GKE version, or none when the GPU Operator installs it.
DRIVER_VERSIONS = {GpuDriver.CLOUD: "DEFAULT", GpuDriver.OPERATOR: "INSTALLATION_DISABLED"}
IMAGE_TYPES = {GpuDriver.CLOUD: COS_IMAGE, GpuDriver.OPERATOR: "UBUNTU_CONTAINERD"}
"""Node image per driver installer: NVIDIA's GKE guide supports the GPU Operator's own driver manager on Ubuntu with
containerd only; Container-Optimized OS takes Google's driver installer (docs.nvidia.com/datacenter/cloud-native/
gpu-operator/latest/google-gke.html)."""
SECURE_BOOT = {GpuDriver.CLOUD: True, GpuDriver.OPERATOR: False}
"""Shielded VM Secure Boot per driver installer. The GPU Operator's driver container compiles the NVIDIA modules on
the node, unsigned, and a Secure Boot kernel refuses to load them ("Loading of unsigned module is rejected" on GKE's
Ubuntu image: NVIDIA/gpu-operator#1726; NVIDIA installs signed modules only through Canonical's precompiled packages,
gpu-operator docs "Installing Precompiled and Canonical Signed Drivers"). The policy pack's gcp-gke-shielded-nodes
still reports such pools."""
NO_GKE_DEVICE_PLUGIN = "gke-no-default-nvidia-gpu-device-plugin"
"""Node label that keeps GKE's device plugin off, so the GPU Operator's runs instead (NVIDIA's GKE guide)."""
RESERVATION_KEY = "compute.googleapis.com/reservation-name"
DWS = (CapacityType.FLEX_START, CapacityType.QUEUED)


def node_taints(pool: GpuPoolSpec) -> list[gcp.container.NodePoolNodeConfigTaintArgs]:
    """The GPU taint, then the pool's own taints (GKE effect names), without duplicates."""
    seen: dict[tuple[str, str], str] = {(GPU_TAINT[0], GPU_TAINT[2]): GPU_TAINT[1]}
    for taint in pool.taints:
        seen.setdefault((taint.key, TAINT_EFFECTS[taint.effect]), taint.value)
    return [gcp.container.NodePoolNodeConfigTaintArgs(key=k, value=v, effect=e) for (k, e), v in seen.items()]


def node_labels(name: str, pool: GpuPoolSpec, row: catalog.GpuInstance, gpu_operator: bool) -> dict[str, str]:
    """Accelerator labels every cloud sets (the Kubernetes layer selects on them); with the GPU Operator on GKE also
    its sharing/MIG config label and the label that turns GKE's device plugin off."""
    labels = {**accelerator_node_labels(name, pool, row), **sharing_node_labels(Cloud.GCP, row.accelerator, pool.sharing, gpu_operator)}
    if gpu_operator:
        labels[NO_GKE_DEVICE_PLUGIN] = "true"
    return labels


def guest_accelerator(pool: GpuPoolSpec, row: catalog.GpuInstance, gpu_operator: bool) -> gcp.container.NodePoolNodeConfigGuestAcceleratorArgs:
    """GPU type and count of the machine, the driver installation, and GKE-native sharing or MIG (unless the
    GPU Operator does those through node labels)."""
    sharing = pool.sharing
    native = not gpu_operator
    strategy = SHARING_STRATEGIES.get(sharing.mode) if native else None
    return gcp.container.NodePoolNodeConfigGuestAcceleratorArgs(
        type=row.gcp_accelerator_type,
        count=row.accelerator_count,
        gpu_driver_installation_config=gcp.container.NodePoolNodeConfigGuestAcceleratorGpuDriverInstallationConfigArgs(
            gpu_driver_version=DRIVER_VERSIONS[pool.driver]),
        gpu_partition_size=sharing.mig_profile if native and sharing.mode is SharingMode.MIG else None,
        gpu_sharing_config=gcp.container.NodePoolNodeConfigGuestAcceleratorGpuSharingConfigArgs(
            gpu_sharing_strategy=strategy, max_shared_clients_per_gpu=sharing.replicas_per_gpu) if strategy else None,
    )


def capacity_settings(capacity: CapacityType, reservation: str | None) -> dict[str, object]:
    """node_config fields for a GPU pool's or TPU slice's capacity: spot VMs, a specific reservation, flex-start,
    or on-demand (which takes any matching open reservation first, as GKE does by default). Spot and Dynamic
    Workload Scheduler never consume reservations (GKE requires NO_RESERVATION for DWS)."""
    if capacity is CapacityType.RESERVED:
        affinity = gcp.container.NodePoolNodeConfigReservationAffinityArgs(
            consume_reservation_type="SPECIFIC_RESERVATION", key=RESERVATION_KEY, values=[reservation])
    elif capacity is CapacityType.ON_DEMAND:
        affinity = gcp.container.NodePoolNodeConfigReservationAffinityArgs(consume_reservation_type="ANY_RESERVATION")
    else:
        affinity = gcp.container.NodePoolNodeConfigReservationAffinityArgs(consume_reservation_type="NO_RESERVATION")
    settings: dict[str, object] = {"reservation_affinity": affinity}
    if capacity is CapacityType.SPOT:
        settings["spot"] = True
    if capacity is CapacityType.FLEX_START:
        settings["flex_start"] = True
    return settings


def upgrade_settings(capacity: CapacityType) -> gcp.container.NodePoolUpgradeSettingsArgs | None:
    """Surge upgrades without a surge node for reserved capacity: GKE's default surge (maxSurge 1) creates the
    upgraded node first, and for a pool with specific reservation affinity that node must come from the reservation
    too, so a fully used one stalls the upgrade (GKE "Ensure resources for node upgrades"; GKE retries until it
    fits). With maxSurge 0 and maxUnavailable 1 GKE drains and recreates one node at a time, as EKS's MINIMAL update
    strategy does for reserved node groups, and as Google's cluster-toolkit gke-node-pool module sets for every GPU and
    TPU pool. None (GKE's default) for other capacity."""
    if capacity is not CapacityType.RESERVED:
        return None
    return gcp.container.NodePoolUpgradeSettingsArgs(strategy="SURGE", max_surge=0, max_unavailable=1)


def location_policy(capacity: CapacityType) -> str:
    """ANY (the autoscaler takes capacity wherever it is: reservations, spot, DWS); BALANCED for on-demand."""
    return "BALANCED" if capacity is CapacityType.ON_DEMAND else "ANY"


@dataclass(frozen=True)
class GpuPoolArgs:
    pool_name: str
    """The spec's pool name; also the GKE node pool name (the spec checks keep names unique per cluster)."""
    pool: GpuPoolSpec
    instance: catalog.GpuInstance
    """Catalog row of the pool's machine type (resolved and validated by the spec checks)."""
    cluster_id: pulumi.Input[str]
    region: str
    project: str
    identity: NodeIdentity
    zone_count: int
    """Zones of the cluster; a pool without `zones` uses all of them."""
    gpu_operator: bool = False
    """addons.gpu_operator_on_gke: the GPU Operator shares GPUs and (driver `operator`) installs the driver. Default off."""
    checked_machine_type: pulumi.Input[str] | None = None
    """The machine type once the pool's zones are known to offer it (`ZoneOfferings.machine_type`), so the node pool
    waits for that check. Default: the catalog row's type, not looked up."""


class GpuPool(pulumi.ComponentResource):
    """`ai-infra:gcp:GpuPool`. Children: `<name>-pool` (GKE node pool)."""

    node_pool: gcp.container.NodePool

    def __init__(self, name: str, args: GpuPoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:gcp:GpuPool", name, None, opts)
        pool, row = args.pool, args.instance
        zones: Sequence[str] = pool.zones
        dws = pool.capacity in DWS
        compact = pool.placement is Placement.COMPACT and pool.capacity is not CapacityType.RESERVED
        self.node_pool = gcp.container.NodePool(f"{name}-pool", gcp.container.NodePoolArgs(
            project=args.project, cluster=args.cluster_id, location=args.region, name=args.pool_name,
            node_locations=list(zones) or None,
            initial_node_count=0 if dws else initial_nodes_per_zone(pool.min_nodes, len(zones) or args.zone_count),
            autoscaling=gcp.container.NodePoolAutoscalingArgs(
                total_min_node_count=pool.min_nodes, total_max_node_count=pool.max_nodes, location_policy=location_policy(pool.capacity)),
            # DWS nodes run to completion: GKE requires auto-repair off for flex-start, and repairs would
            # restart queued-provisioning nodes mid-job.
            management=gcp.container.NodePoolManagementArgs(auto_repair=not dws, auto_upgrade=True),
            upgrade_settings=upgrade_settings(pool.capacity),
            queued_provisioning=gcp.container.NodePoolQueuedProvisioningArgs(enabled=True) if pool.capacity is CapacityType.QUEUED else None,
            placement_policy=gcp.container.NodePoolPlacementPolicyArgs(type="COMPACT") if compact else None,
            node_config=node_config(
                args.identity, row.instance_type, checked_machine_type=args.checked_machine_type,
                image_type=IMAGE_TYPES[pool.driver], secure_boot=SECURE_BOOT[pool.driver], disk_size_gb=pool.disk_size_gib,
                guest_accelerators=[guest_accelerator(pool, row, args.gpu_operator)],
                labels=node_labels(args.pool_name, pool, row, args.gpu_operator),
                taints=node_taints(pool), **capacity_settings(pool.capacity, pool.reservation)),
        ), opts=pulumi.ResourceOptions(parent=self, ignore_changes=IGNORE_NODE_COUNTS))
        self.register_outputs({"node_pool_id": self.node_pool.id, "machine_type": row.instance_type})
