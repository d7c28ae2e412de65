"""TPU slices (GCP only): GKE TPU node pools, or TPU VMs for teams that don't use GKE.

GKE: a slice is one node pool of the generation's machine type; a multi-host slice has chips / chips-per-VM
nodes and `placement_policy.tpu_topology`, and GKE creates, repairs and scales it atomically. Multislice is N
identical node pools. The autoscaler scales a slice between 0 and its node count (reserved slices start full).

`mode: tpu_vm`: one Cloud TPU VM resource (`tpu.V2Vm`) per slice, with no external IPs, an explicit service
account, and spot or reserved scheduling. Cloud TPU consumes the project's TPU reservation in the zone for reserved
VMs (the API takes no reservation name).

`mode: queued_resource`: one Cloud TPU queued resource (`tpu.V2QueuedResource`) per slice, whose single node spec
asks for the slice's accelerator type and runtime on the region's subnetwork without external IPs. pulumi-gcp
10.2.0's node spec has only runtime version, accelerator type, description and network config: no service
account, spot, reservation or labels. Its TPU VMs therefore run as the project's Compute Engine default service
account, which is why this mode is an explicit opt-in (the spec refuses spot/reserved capacity and
`service_account` with it, and the policy pack reports every queued resource). Multislice is N queued resources,
each requested and granted on its own (the API's `multisliceParams`, which asks for N slices at once, is not in the
provider either).
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components import catalog
from components.spec import CapacityType, NODE_LABEL_PREFIX, TpuSliceSpec
from components.spec.gcp import TPU_VM_RUNTIMES, reservation_parts, tpu_node_pool_names

from .cluster import IGNORE_NODE_COUNTS, NodeIdentity, node_config
from .context import CLOUD_PLATFORM_SCOPE, GcpContext, account_email
from .gpu_pool import capacity_settings, upgrade_settings
from .naming import service_account_id

TPU_VM_ROLES = {"logs": "roles/logging.logWriter", "metrics": "roles/monitoring.metricWriter"}


def tpu_node_pool_settings(slice_: TpuSliceSpec, plan: catalog.TpuSlicePlan) -> dict[str, object]:
    """NodePool fields of one slice: size, autoscaling between 0 and the slice, the topology placement of a
    multi-host slice, Dynamic Workload Scheduler queueing, and for reserved slices upgrades that take no surge node
    from the reservation (`upgrade_settings`)."""
    reserved = slice_.capacity is CapacityType.RESERVED
    settings: dict[str, object] = {
        # Per-zone limits: a slice lives in one zone, and GKE rejects total-only limits on TPU slices
        # ("Maximum node count 0 is not a valid size of TPU pod slice").
        "autoscaling": gcp.container.NodePoolAutoscalingArgs(min_node_count=0, max_node_count=plan.node_count),
        "initial_node_count": plan.node_count if reserved else 0,
        "management": gcp.container.NodePoolManagementArgs(
            auto_repair=slice_.capacity not in (CapacityType.FLEX_START, CapacityType.QUEUED), auto_upgrade=True),
    }
    if plan.multi_host:
        settings["placement_policy"] = gcp.container.NodePoolPlacementPolicyArgs(type="COMPACT", tpu_topology=plan.topology)
    if reserved:
        settings["upgrade_settings"] = upgrade_settings(slice_.capacity)
    if slice_.capacity is CapacityType.QUEUED:
        settings["queued_provisioning"] = gcp.container.NodePoolQueuedProvisioningArgs(enabled=True)
    return settings


@dataclass(frozen=True)
class TpuSliceArgs:
    slice_name: str
    spec: TpuSliceSpec
    plan: catalog.TpuSlicePlan
    """The catalog's resolution of generation and topology (machine type, node count)."""
    cluster_id: pulumi.Input[str]
    region: str
    zone: pulumi.Input[str]
    """The one zone the slices run in (TPU generations and reservations exist only in some zones)."""
    project: str
    identity: NodeIdentity
    checked_machine_type: pulumi.Input[str] | None = None
    """The machine type once the zone is known to offer it (`ZoneOfferings.machine_type`). Default: the plan's, not
    looked up."""


class TpuSlice(pulumi.ComponentResource):
    """`ai-infra:gcp:TpuSlice`. Children: `<name>-<index>`, one GKE node pool per slice (`slices` of them)."""

    node_pools: list[gcp.container.NodePool]

    def __init__(self, name: str, args: TpuSliceArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:gcp:TpuSlice", name, None, opts)
        spec, plan = args.spec, args.plan
        settings = tpu_node_pool_settings(spec, plan)
        self.node_pools = []
        for index, pool_name in enumerate(tpu_node_pool_names(args.slice_name, spec.slices)):
            # GKE labels TPU nodes itself (gke-tpu-accelerator, gke-tpu-topology) and taints them google.com/tpu.
            labels = {f"{NODE_LABEL_PREFIX}/pool": args.slice_name, f"{NODE_LABEL_PREFIX}/slice": str(index)}
            self.node_pools.append(gcp.container.NodePool(f"{name}-{index}", gcp.container.NodePoolArgs(
                project=args.project, cluster=args.cluster_id, location=args.region, name=pool_name,
                node_locations=[args.zone],
                node_config=node_config(args.identity, plan.machine_type, checked_machine_type=args.checked_machine_type,
                                        labels=labels, **capacity_settings(spec.capacity, spec.reservation)),
                **settings,  # type: ignore[arg-type]
            ), opts=pulumi.ResourceOptions(parent=self, ignore_changes=IGNORE_NODE_COUNTS)))
        self.register_outputs({"node_pools": [p.name for p in self.node_pools], "machine_type": plan.machine_type,
                               "nodes_per_slice": plan.node_count})


@dataclass(frozen=True)
class TpuVmArgs:
    context: GcpContext
    slice_name: str
    spec: TpuSliceSpec
    plan: catalog.TpuSlicePlan
    zone: pulumi.Input[str]
    network_id: pulumi.Input[str]
    subnet_id: pulumi.Input[str]
    checked_accelerator_type: pulumi.Input[str] | None = None
    """The Cloud TPU accelerator type once the zone is known to offer it (`ZoneOfferings.tpu_type`). Default: the
    plan's, not looked up."""

    @property
    def accelerator_type(self) -> pulumi.Input[str]:
        return self.checked_accelerator_type if self.checked_accelerator_type is not None else self.plan.tpu_vm_accelerator_type


class TpuVm(pulumi.ComponentResource):
    """`ai-infra:gcp:TpuVm` (mode `tpu_vm`). Children: `<name>-sa` with `<name>-sa-logs`, `<name>-sa-metrics` (unless the spec names
    a service account), and `<name>-<index>`, one Cloud TPU VM per slice."""

    vms: list[gcp.tpu.V2Vm]

    def __init__(self, name: str, args: TpuVmArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:gcp:TpuVm", name, None, opts)
        ctx, spec, plan = args.context, args.spec, args.plan
        child = pulumi.ResourceOptions(parent=self)
        email: pulumi.Input[str]
        depends: list[pulumi.Resource] = []
        if spec.service_account:
            email = spec.service_account
        else:
            account = gcp.serviceaccount.Account(f"{name}-sa", gcp.serviceaccount.AccountArgs(
                project=ctx.project, account_id=service_account_id(ctx.environment, ctx.region, f"tpu-{args.slice_name}"),
                display_name=f"TPU VMs {args.slice_name} ({ctx.environment}, {ctx.region})"), opts=child)
            email = account_email(account)
            depends = [gcp.projects.IAMMember(f"{name}-sa-{short}", gcp.projects.IAMMemberArgs(
                project=ctx.project, role=role, member=pulumi.Output.concat("serviceAccount:", email)), opts=child)
                for short, role in TPU_VM_ROLES.items()]
        self.vms = [gcp.tpu.V2Vm(f"{name}-{index}", gcp.tpu.V2VmArgs(
            project=ctx.project, zone=args.zone, accelerator_type=args.accelerator_type,
            runtime_version=TPU_VM_RUNTIMES[plan.generation],
            network_config=gcp.tpu.V2VmNetworkConfigArgs(
                network=args.network_id, subnetwork=args.subnet_id, enable_external_ips=False, can_ip_forward=False),
            service_account=gcp.tpu.V2VmServiceAccountArgs(email=email, scopes=[CLOUD_PLATFORM_SCOPE]),
            scheduling_config=gcp.tpu.V2VmSchedulingConfigArgs(
                spot=spec.capacity is CapacityType.SPOT, reserved=spec.capacity is CapacityType.RESERVED),
            shielded_instance_config=gcp.tpu.V2VmShieldedInstanceConfigArgs(enable_secure_boot=True),
            # The TPU API takes no reservation name (reserved VMs use the zone's TPU reservation); the label records it
            # (its name: a label value takes no '/').
            labels={"slice": args.slice_name, "slice-index": str(index),
                    **({"reservation": reservation_parts(spec.reservation)[1]} if spec.reservation else {})},
            description=f"{plan.topology} {plan.generation} slice {index} of {args.slice_name}"),
            opts=pulumi.ResourceOptions(parent=self, depends_on=depends)) for index in range(spec.slices)]
        self.register_outputs({"tpu_vms": [vm.name for vm in self.vms], "accelerator_type": plan.tpu_vm_accelerator_type})


@dataclass(frozen=True)
class TpuQueuedResourceArgs(TpuVmArgs):
    """The same inputs as a TPU VM's: the slice, where it goes and the network its nodes join."""


class TpuQueuedResource(pulumi.ComponentResource):
    """`ai-infra:gcp:TpuQueuedResource` (mode `queued_resource`). Children: `<name>-<index>`, one Cloud TPU queued
    resource per slice, each asking for one node."""

    queued_resources: list[gcp.tpu.V2QueuedResource]

    def __init__(self, name: str, args: TpuQueuedResourceArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:gcp:TpuQueuedResource", name, None, opts)
        ctx, spec, plan = args.context, args.spec, args.plan
        parent = pulumi.Output.concat("projects/", ctx.project, "/locations/", args.zone)
        self.queued_resources = []
        for index in range(spec.slices):
            # The API needs a node ID for a single-node request and the provider does not generate one, so the queued
            # resource and its node take the child's fixed name; a replacement must delete the old one first.
            node_id = f"{name}-{index}"
            self.queued_resources.append(gcp.tpu.V2QueuedResource(node_id, gcp.tpu.V2QueuedResourceArgs(
                project=ctx.project, zone=args.zone, name=node_id,
                tpu=gcp.tpu.V2QueuedResourceTpuArgs(node_specs=[gcp.tpu.V2QueuedResourceTpuNodeSpecArgs(
                    parent=parent, node_id=node_id,
                    node=gcp.tpu.V2QueuedResourceTpuNodeSpecNodeArgs(
                        accelerator_type=args.accelerator_type, runtime_version=TPU_VM_RUNTIMES[plan.generation],
                        network_config=gcp.tpu.V2QueuedResourceTpuNodeSpecNodeNetworkConfigArgs(
                            network=args.network_id, subnetwork=args.subnet_id, enable_external_ips=False,
                            can_ip_forward=False),
                        description=f"{plan.topology} {plan.generation} slice {index} of {args.slice_name}"))])),
                opts=pulumi.ResourceOptions(parent=self, delete_before_replace=True)))
        self.register_outputs({"queued_resources": [q.name for q in self.queued_resources],
                               "accelerator_type": plan.tpu_vm_accelerator_type})
