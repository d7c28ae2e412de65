"""Compute spec: the Kubernetes cluster, GPU node pools and (GCP-only) TPU slices."""

from __future__ import annotations

import enum
import re
from ipaddress import IPv4Network
from typing import Annotated

from pydantic import AfterValidator, Field, field_validator, model_validator

from components.planning.ranges import PRIVATE_RULE, is_private

from .common import KUBERNETES_VERSION_PATTERN, Cloud, FieldError, SpecModel
from .kube import label_value_problem, node_label_problem, qualified_name_problem, raising
from .maintenance import MaintenanceSpec


class ApiAccess(str, enum.Enum):
    PRIVATE = "private"
    """API server with no public address, reachable from the cluster's own network and `authorized_cidrs` (default)."""
    PUBLIC_RESTRICTED = "public_restricted"
    """Public endpoint limited to `authorized_cidrs` (explicit opt-in; the policy pack reports it)."""


class UpgradeChannel(str, enum.Enum):
    """Managed upgrade cadence: GKE release channel, AKS auto-upgrade channel; EKS has none (version pinned)."""

    RAPID = "rapid"
    REGULAR = "regular"
    STABLE = "stable"


# Machine size names per cloud, checked for shape only, so that a name copied from another cloud's config fails when
# the config loads instead of at deploy (whether a region offers the size is for the cloud to say).
# AWS: <family>.<size>, the family a letter, then letters, digits and inner hyphens with at least one digit (m6i, c7gn,
# u-6tb1, p6-b200, mac2-m2pro), the size one of EC2's (nano ... 48xlarge, 112xlarge, metal, metal-24xl).
# GCP: <series>-<type>[-<vCPUs>][-<suffix>] (e2-micro, n2-standard-8, a3-highgpu-8g, c3-standard-4-lssd,
# e2-custom-4-16384) and N1's custom-<vCPUs>-<MiB>: lower-case, hyphen-separated, no dots.
# Azure: Standard_<family><vCPUs>[-<constrained vCPUs>]<features>[_<accelerator>][_v<version>] (Standard_D4s_v5,
# Standard_E64-16ds_v5, Standard_NC24ads_A100_v4, Standard_B2s), the VM size naming convention of Azure.
INSTANCE_TYPE_SHAPES: dict[Cloud, tuple[re.Pattern[str], str, str]] = {
    Cloud.AWS: (re.compile(r"(?=[a-z-]*[0-9])[a-z](?:[a-z0-9]|-(?=[a-z0-9]))*\.(?:nano|micro|small|medium|large|[0-9]*xlarge|metal(?:-[0-9]+xl)?)"),
                "AWS instance type", "<family>.<size>, e.g. m6i.xlarge, c7gn.metal or u-6tb1.112xlarge"),
    Cloud.GCP: (re.compile(r"(?:[a-z]+[0-9][a-z0-9]*|custom)(?:-[a-z0-9]+)+"),
                "GCP machine type", "<series>-<type>-<vCPUs>, e.g. n2-standard-8 or a3-highgpu-8g (custom types: e2-custom-4-16384)"),
    Cloud.AZURE: (re.compile(r"Standard_[A-Z]+[0-9]+(?:-[0-9]+)?[a-z]*(?:_[A-Za-z0-9]+)*"),
                  "Azure VM size", "Standard_<family><vCPUs><features>[_<accelerator>]_v<version>, e.g. Standard_D4s_v5 or Standard_NC24ads_A100_v4"),
}
"""Cloud -> (pattern of its machine size names, what the cloud calls one, the shape in words with examples)."""


def instance_type_problem(cloud: Cloud, name: str) -> str | None:
    """Why `name` cannot be a machine size on `cloud` (its shape is another cloud's, or no cloud's), or None."""
    pattern, what, shape = INSTANCE_TYPE_SHAPES[cloud]
    if pattern.fullmatch(name):
        return None
    other = next((kind for c, (p, kind, _) in INSTANCE_TYPE_SHAPES.items() if c is not cloud and p.fullmatch(name)), None)
    given = f"{name!r} looks like {_article(other)}, not {_article(what)}" if other else f"{name!r} is not {_article(what)}"
    return f"{given}; {what}s are named {shape}"


def _article(what: str) -> str:
    return f"{'an' if what[0] in 'AEIOU' else 'a'} {what}"


class SystemPoolSpec(SpecModel):
    """The CPU pool that runs cluster add-ons (DNS, operators, Kueue)."""

    instance_type: str | None = None
    """Machine type in the cloud's own naming: `<family>.<size>` (AWS), `<series>-<type>-<vCPUs>` (GCP),
    `Standard_<size>` (Azure); another cloud's name is refused. Default per cloud: m6i.xlarge (AWS), e2-standard-4 (GCP),
    Standard_D4ds_v5 (Azure)."""
    min_nodes: Annotated[int, Field(ge=1, le=100)] = 2
    """Default 2, so add-ons survive a node loss."""
    max_nodes: Annotated[int, Field(ge=1, le=100)] = 5
    """Default 5."""

    @model_validator(mode="after")
    def _bounds(self) -> SystemPoolSpec:
        if self.min_nodes > self.max_nodes:
            raise FieldError("max_nodes", f"max_nodes ({self.max_nodes}) must be >= min_nodes ({self.min_nodes})")
        return self


class ClusterSpec(SpecModel):
    """A managed Kubernetes cluster (EKS, GKE Standard, AKS) with private nodes and encrypted secrets."""

    kubernetes_version: Annotated[str, Field(pattern=KUBERNETES_VERSION_PATTERN)] | None = None
    """Minor version such as "1.33". Default: EKS runs 1.35 (the newest minor with a pinned Cluster Autoscaler; with
    the Kubernetes layer on, EKS takes 1.32 to 1.35 only); GKE and AKS follow `upgrade_channel`. GKE in a region with
    Managed Lustre takes 1.34 or later (signed kernel modules on Secure Boot nodes), and `pulumi preview` checks that
    the version the cluster gets (the minor's newest patch in the channel, or the channel's default when unset) is
    1.34.1-gke.2364000 or later."""
    api_access: ApiAccess = ApiAccess.PRIVATE
    """Default `private`: the API endpoint has no public address."""
    authorized_cidrs: list[IPv4Network] = []
    """Networks allowed to reach the API server besides the cluster's own network. With `public_restricted`: your public
    egress ranges (required). With `private`: private ranges the deployer and operators reach the private endpoint from
    through peering or a VPN, such as a self-hosted CI runner's network (the Kubernetes layer installs through the API
    server as the deployer, so `pulumi up` must run in the cluster's network or in one of these). EKS admits them, like
    the VPC, to the cluster security group on 443; GKE adds them to the control plane's authorized networks and turns
    on global access (clients in other regions); AKS takes no allowlist on a private API server, so there they are
    reached by routing alone, and its public FQDN (a public DNS record of the private address) goes in the kubeconfig,
    so hosts outside the cluster's VNet resolve it. Each network once, and none inside the region's own network
    (admitted already); with `public_restricted` public ranges only (no RFC 1918, RFC 6598, loopback, link-local,
    multicast or reserved addresses). At most 40 on EKS with `public_restricted`, 50 (`public_restricted`) or 99
    (`private`, the network's own entry makes 100) on GKE, 200 on AKS with `public_restricted`. Default: none."""
    upgrade_channel: UpgradeChannel = UpgradeChannel.REGULAR
    """GKE release channel, AKS auto-upgrade channel; refused on AWS (EKS has none: set `kubernetes_version`). Default
    `regular`."""
    system_pool: SystemPoolSpec = SystemPoolSpec()
    """CPU pool for add-ons. Default: 2 to 5 general-purpose nodes."""
    admins: list[str] = []
    """Principals given cluster-admin: IAM role ARNs (AWS), `group:`/`user:` members (GCP), Entra group object IDs (Azure).
    Default: none besides the deployer, who always gets it (the Kubernetes layer installs as the deployer): an EKS
    access entry for its IAM role, an AKS role assignment (see `clouds.azure.deployer`), its own project IAM on GKE."""
    maintenance: MaintenanceSpec | None = None
    """When GKE and AKS may upgrade the cluster and drain its nodes: a weekly window and dated exclusions. Refused on
    AWS (EKS has no maintenance windows and never upgrades on its own). Default: a weekly window staggered across the
    cloud's regions, the first opening Sunday 03:00 UTC (8 hours on Azure, 12 on GCP; see `window`), no exclusions."""

    @model_validator(mode="after")
    def _access(self) -> ClusterSpec:
        if self.api_access is ApiAccess.PUBLIC_RESTRICTED and not self.authorized_cidrs:
            raise FieldError("authorized_cidrs", "api_access 'public_restricted' needs at least one entry in authorized_cidrs")
        for cidr in self.authorized_cidrs:
            if self.api_access is ApiAccess.PRIVATE and not is_private(cidr):
                raise FieldError("authorized_cidrs", f"authorized_cidrs entry {cidr} is not a private range, and a private API "
                                 f"server has no public address: list the private networks that reach it ({PRIVATE_RULE}), "
                                 "or set api_access 'public_restricted' for public egress ranges")
            if cidr.prefixlen == 0:
                raise FieldError("authorized_cidrs", f"authorized_cidrs entry {cidr} opens the API server to the whole internet; list your egress ranges")
        return self


class CapacityType(str, enum.Enum):
    """How nodes are bought. Not every cloud offers every type; the spec checks say which."""

    ON_DEMAND = "on_demand"
    SPOT = "spot"
    """Preemptible capacity at a discount; pools may scale to zero when the cloud reclaims it."""
    RESERVED = "reserved"
    """A capacity reservation named in `reservation` (AWS ODCR, GCP reservation, Azure capacity reservation group)."""
    CAPACITY_BLOCK = "capacity_block"
    """AWS EC2 Capacity Blocks for ML (AWS only; needs `reservation`)."""
    FLEX_START = "flex_start"
    """GCP Dynamic Workload Scheduler flex-start (GCP only)."""
    QUEUED = "queued"
    """GCP Dynamic Workload Scheduler queued provisioning (GCP only)."""


class SharingMode(str, enum.Enum):
    NONE = "none"
    MIG = "mig"
    """Multi-Instance GPU: hardware partitions of `mig_profile` size (A100/H100/H200/B200)."""
    TIME_SLICING = "time_slicing"
    """Time-sharing with `replicas_per_gpu` pods per GPU; no memory isolation."""
    MPS = "mps"
    """NVIDIA Multi-Process Service with `replicas_per_gpu` clients (GKE only)."""


class GpuSharing(SpecModel):
    """How pods share a node's GPUs: whole GPUs, MIG partitions or time-slicing."""

    mode: SharingMode = SharingMode.NONE
    """Default `none`: one pod owns each GPU."""
    mig_profile: str | None = None
    """MIG partition such as "1g.10gb"; required with mode `mig`, must be offered by the GPU."""
    replicas_per_gpu: Annotated[int, Field(ge=2, le=48)] | None = None
    """Pods per GPU for `time_slicing` and `mps`; required with those modes."""

    @model_validator(mode="after")
    def _consistent(self) -> GpuSharing:
        if self.mode is SharingMode.MIG and not self.mig_profile:
            raise FieldError("mig_profile", "mode 'mig' needs mig_profile (for example '1g.10gb')")
        if self.mode is not SharingMode.MIG and self.mig_profile:
            raise FieldError("mig_profile", f"mig_profile is only allowed with mode 'mig', not '{self.mode.value}'")
        shared = self.mode in (SharingMode.TIME_SLICING, SharingMode.MPS)
        if shared and self.replicas_per_gpu is None:
            raise FieldError("replicas_per_gpu", f"mode '{self.mode.value}' needs replicas_per_gpu (2 to 48)")
        if not shared and self.replicas_per_gpu is not None:
            raise FieldError("replicas_per_gpu", f"replicas_per_gpu is only allowed with modes 'time_slicing' and 'mps', not '{self.mode.value}'")
        return self


class GpuDriver(str, enum.Enum):
    CLOUD = "cloud"
    """The cloud installs the driver (EKS NVIDIA AMI, GKE driver installation, AKS GPU driver). Default."""
    OPERATOR = "operator"
    """The NVIDIA GPU Operator installs the driver; the cloud's install is turned off. On GKE the pool's nodes run Ubuntu
    with Secure Boot off: the operator builds unsigned kernel modules, which Secure Boot refuses (the policy pack's
    gcp-gke-shielded-nodes reports it)."""


class Placement(str, enum.Enum):
    NONE = "none"
    COMPACT = "compact"
    """Nodes close together for low-latency collectives (AWS cluster placement group, GCP compact placement)."""


class Taint(SpecModel):
    """A Kubernetes node taint the pool's nodes carry, besides the accelerator taint the toolkit always sets."""

    key: Annotated[str, AfterValidator(raising(lambda key: qualified_name_problem(key, "taint key")))]
    """A Kubernetes qualified name, e.g. "dedicated" or "example.com/team"."""
    value: Annotated[str, AfterValidator(raising(lambda value: label_value_problem(value, "taint value")))] = ""
    """A Kubernetes label value; default empty."""
    effect: Annotated[str, Field(pattern=r"^(NoSchedule|PreferNoSchedule|NoExecute)$")] = "NoSchedule"


class GpuPoolSpec(SpecModel):
    """A node pool of accelerator machines: name the accelerator and count, or the instance type."""

    accelerator: str | None = None
    """Accelerator model from the catalog (`aiinfra catalog`), e.g. "h100-80gb", "l4", "trainium2"."""
    accelerators_per_node: Annotated[int, Field(ge=1, le=16)] | None = None
    """Accelerators per node; with `accelerator` selects the instance type. Default: the smallest type offering the model."""
    instance_type: str | None = None
    """Explicit instance/machine/VM size; must be in the catalog. Default: resolved from accelerator and count."""
    capacity: CapacityType = CapacityType.ON_DEMAND
    """Default `on_demand`."""
    reservation: str | None = None
    """Reservation for `reserved` and `capacity_block`: AWS its ID (cr-...), GCP its name (or
    projects/<owner>/reservations/<name> when shared from another project), Azure the capacity reservation group's
    resource ID. `pulumi preview` checks an AWS Capacity Block's or On-Demand Capacity Reservation's zone and type (and an
    ODCR's platform and tenancy), that a GCP reservation exists in each of the pool's zones with its machine type, and
    that an Azure group holds the VM size in the pool's region and zones.
    Default: none."""
    min_nodes: Annotated[int, Field(ge=0, le=1000)] = 0
    """Default 0: the pool scales to zero when idle."""
    max_nodes: Annotated[int, Field(ge=1, le=1000)] = 1
    """Upper bound for the autoscaler. Default 1."""
    taints: list[Taint] = []
    """Extra taints, one per key and effect. The accelerator taint (nvidia.com/gpu or aws.amazon.com/neuron,
    NoSchedule) is always added, and AKS adds kubernetes.azure.com/scalesetpriority (NoSchedule) to spot pools: a taint
    of those keys with effect NoSchedule is refused."""
    labels: dict[str, str] = {}
    """Extra Kubernetes node labels (not under `kubernetes.io`, `k8s.io` or `ai-infra/`). Accelerator, model and
    capacity-type labels are always added."""
    sharing: GpuSharing = GpuSharing()
    """GPU sharing. Default: none."""
    driver: GpuDriver = GpuDriver.CLOUD
    """Who installs the NVIDIA driver. Default: the cloud. `operator` on GKE runs the pool on Ubuntu with Secure Boot off
    (the operator's driver modules are unsigned): the policy pack's gcp-gke-shielded-nodes reports it, as a mandatory
    violation where the environment's policy config makes that rule mandatory (policies/config/prod.json does)."""
    placement: Placement = Placement.NONE
    """Default `none`. `compact` is ignored (never forced) on reservations and capacity blocks."""
    efa: bool = False
    """AWS only: attach EFA interfaces (p4d, p5, p5e, p5en, p6, trn). Default off."""
    disk_size_gib: Annotated[int, Field(ge=50, le=16384)] = 200
    """Encrypted root/OS disk per node. Default 200 GiB (container images for CUDA stacks are large)."""
    zones: list[str] = []
    """Zones to place nodes in. Default: the network's zones (AWS EFA and compact pools: its first). Each must offer
    the pool's type: `pulumi preview` asks the cloud (AWS, GCP) and stops with the zones that do. AWS `reserved` and
    `capacity_block` pools must give the reservation's one zone (checked at preview)."""

    @field_validator("labels")
    @classmethod
    def _label_syntax(cls, labels: dict[str, str]) -> dict[str, str]:
        problems = [problem for key, value in labels.items() if (problem := node_label_problem(key, value))]
        if problems:
            raise ValueError("; ".join(problems))
        return labels

    @model_validator(mode="after")
    def _shape(self) -> GpuPoolSpec:
        if self.instance_type is None and self.accelerator is None:
            raise FieldError("accelerator", "give either accelerator (with accelerators_per_node) or instance_type")
        if self.min_nodes > self.max_nodes:
            raise FieldError("max_nodes", f"max_nodes ({self.max_nodes}) must be >= min_nodes ({self.min_nodes})")
        needs_reservation = self.capacity in (CapacityType.RESERVED, CapacityType.CAPACITY_BLOCK)
        if needs_reservation and not self.reservation:
            # The pool does not know its cloud here (the cloud checks run later): say which cloud a block is bought on.
            what = ("'capacity_block' (AWS EC2 Capacity Blocks for ML, AWS only)" if self.capacity is CapacityType.CAPACITY_BLOCK
                    else f"'{self.capacity.value}'")
            raise FieldError("reservation", f"capacity {what} needs reservation (the reservation's ID or name)")
        if not needs_reservation and self.reservation:
            raise FieldError("reservation", f"reservation is only allowed with capacity 'reserved' or 'capacity_block', not '{self.capacity.value}'")
        return self


class TpuMode(str, enum.Enum):
    GKE = "gke"
    """GKE TPU node pools in the region's cluster (default)."""
    TPU_VM = "tpu_vm"
    """A Cloud TPU VM created directly per slice, for teams that don't use GKE: explicit service account, spot or
    reserved capacity, no external IPs."""
    QUEUED_RESOURCE = "queued_resource"
    """A Cloud TPU queued resource per slice, for teams that don't use GKE: no external IPs, on-demand capacity only,
    and its TPU VMs run as the project's Compute Engine default service account (pulumi-gcp 10.2.0's queued-resource
    node spec takes no service account, spot or reservation). An explicit opt-in; the policy pack reports it."""


class TpuSliceSpec(SpecModel):
    """A TPU slice (GCP only). Multislice = `slices` identical slices."""

    generation: str
    """TPU generation from the catalog: "v4", "v5e", "v5p", "v6e"."""
    topology: str
    """Chip topology such as "2x4" (v5e/v6e) or "2x2x2" (v4/v5p); must be valid for the generation."""
    slices: Annotated[int, Field(ge=1, le=64)] = 1
    """Number of identical slices (multislice). Default 1."""
    capacity: CapacityType = CapacityType.ON_DEMAND
    """`on_demand`, `spot`, `reserved`, `flex_start` or `queued`. Default `on_demand`."""
    reservation: str | None = None
    """The Compute Engine reservation for `reserved`: its name, or projects/<owner>/reservations/<name> when shared
    from another project. GKE slices consume it (and `pulumi preview` checks it is in the slice's zone); TPU VMs use
    the zone's TPU reservation and carry its name as the `reservation` label. Default: none."""
    mode: TpuMode = TpuMode.GKE
    """Default `gke`: GKE TPU node pools in the region's cluster. `tpu_vm`: Cloud TPU VMs without external IPs, with an
    explicit service account, capacity on_demand, spot or reserved. `queued_resource`: Cloud TPU queued resources without
    external IPs, capacity on_demand only, whose VMs run as the project's Compute Engine default service account (a
    pulumi-gcp 10.2.0 limitation; the policy pack reports it), so choose it explicitly."""
    service_account: str | None = None
    """Service account email the TPU VMs run as (mode `tpu_vm` only; refused elsewhere). Default: a dedicated one
    with log and metric writer roles is created."""

    @model_validator(mode="after")
    def _reservation(self) -> TpuSliceSpec:
        if self.capacity is CapacityType.RESERVED and not self.reservation:
            raise FieldError("reservation", "capacity 'reserved' needs reservation (the reservation's name)")
        if self.capacity is not CapacityType.RESERVED and self.reservation:
            raise FieldError("reservation", f"reservation is only allowed with capacity 'reserved', not '{self.capacity.value}'")
        if self.capacity is CapacityType.CAPACITY_BLOCK:
            raise FieldError("capacity", "capacity 'capacity_block' is AWS-only; TPU slices take on_demand, spot, reserved, flex_start or queued")
        return self
