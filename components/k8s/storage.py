"""Storage objects of the layer: the block StorageClass a cloud composition hands over (`block_storage`), and
ready-to-mount Lustre volumes.

The block StorageClass (`BlockStorageClass`): on EKS the cluster's default (annotated default), on GKE and AKS a
class beside the platform's default, which claims name (`StorageClassSpec.default`). `WaitForFirstConsumer`, so a
volume is created in the zone of the node its first pod is scheduled to (EBS volumes, zonal persistent disks and LRS
managed disks live in one zone); expandable (claims grow in place); reclaim `Retain` in a protected environment, so
deleting a claim (or a team's namespace) never deletes the data: the released volume stays, in the cloud and as a
PersistentVolume, until someone deletes it; `Delete` in dev. A StorageClass's parameters, provisioner and reclaim
policy cannot change: pulumi-kubernetes replaces it (its name being fixed, deleting it first), which touches no
existing volume. A cluster created before EKS 1.30 still has EKS's `gp2` marked default too: Kubernetes then gives
claims the most recently created default class, this one.

Lustre volumes, for every team: per file system of the cluster's region and per team, a statically
provisioned PersistentVolume and a PersistentVolumeClaim bound to it in the team's namespace, named after the file
system (`lustre.<name>` in the spec), so a pod mounts `persistentVolumeClaim.claimName: <name>`.

- `ReadWriteMany`: Lustre is a shared POSIX file system.
- `persistentVolumeReclaimPolicy: Retain`: deleting a claim (or a team) never asks the driver to delete anything; the
  file system belongs to the cloud layer.
- Empty `storageClassName` and `volumeName` on the claim, `claimRef` on the volume: each binds only to the other,
  never to a dynamically provisioned volume or another team's claim.
- `retain`: in a protected environment (where team namespaces are retained) volumes and claims are only forgotten
  when a team or file system leaves the config: the retained workloads keep mounting them, and the `pvc-protection` /
  `pv-protection` finalizers would hold a deletion until the provider's timeout on every `pulumi up`.
- A volume's source (`spec.csi`: driver, handle, attributes) cannot change in place, so pulumi-kubernetes replaces
  the volume, and, its name being fixed, deletes it first. The claim bound to it would keep it Terminating
  (`pv-protection`) and keep pointing at the old binding: the claim is replaced with its volume (`replace_with`),
  and Pulumi deletes the dependent claim before the volume.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from .block_storage import DEFAULT_CLASS_ANNOTATION, StorageClassSpec
from .lustre import LustreMount
from .objects import MANAGED_BY, child_opts

ACCESS_MODES = ["ReadWriteMany"]
RECLAIM_POLICY = "Retain"


@dataclass(frozen=True)
class BlockStorageClassArgs:
    spec: StorageClassSpec
    cluster: pulumi.Resource
    """The cluster component: the class is `deleted_with` it."""
    retain_volumes: bool = False
    """Reclaim policy `Retain` (volumes outlive their claims) instead of `Delete`. Default off."""


class BlockStorageClass(pulumi.ComponentResource):
    """`ai-infra:kubernetes:BlockStorageClass`. Children: `<name>-class` (the StorageClass; annotated as the cluster's
    default where its spec is default, on EKS)."""

    TYPE = "ai-infra:kubernetes:BlockStorageClass"

    def __init__(self, name: str, args: BlockStorageClassArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(self.TYPE, name, None, opts)
        spec = args.spec
        reclaim_policy = "Retain" if args.retain_volumes else "Delete"
        self.storage_class = k8s.storage.v1.StorageClass(
            f"{name}-class",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=spec.name, labels=dict(MANAGED_BY),
                annotations={DEFAULT_CLASS_ANNOTATION: "true"} if spec.default else None),
            provisioner=spec.provisioner, parameters=dict(spec.parameters), reclaim_policy=reclaim_policy,
            volume_binding_mode="WaitForFirstConsumer", allow_volume_expansion=True,
            opts=child_opts(self, args.cluster, [spec.driver] if spec.driver is not None else []))
        self.outputs = {"name": spec.name, "default": spec.default, "reclaim_policy": reclaim_policy}
        self.register_outputs(self.outputs)


def volume_name(environment: str, team: str, fs_name: str) -> str:
    """Cluster-scoped PersistentVolume name, one per team and file system."""
    return f"lustre-{environment}-{fs_name}-{team}"


@dataclass(frozen=True)
class LustreVolumesArgs:
    environment: str
    mounts: Sequence[LustreMount]
    """The Lustre file systems of the cluster's region (`ClusterHandle.lustre`)."""
    teams: Sequence[str]
    """Team names, which are their namespaces."""
    namespaces: dict[str, pulumi.Resource]
    """Each team's namespace object; its claims wait for it."""
    cluster: pulumi.Resource
    """The cluster component: every object is `deleted_with` it."""
    driver: Sequence[pulumi.Resource] = ()
    """What installs the CSI driver where the layer does; the volumes wait for it. Default none (a managed driver)."""
    retain: bool = False
    """`retain_on_delete` on every volume and claim: Pulumi forgets them instead of deleting them when a team or a file
    system leaves the config or the stack is destroyed. Set where team namespaces are retained: their
    pods keep mounting the claims, whose protection finalizers would block a deletion. Default off."""


class LustreVolumes(pulumi.ComponentResource):
    """`ai-infra:kubernetes:LustreVolumes`. Children per file system and team: `<name>-<fs>-<team>-pv`,
    `<name>-<fs>-<team>-pvc`."""

    def __init__(self, name: str, args: LustreVolumesArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:kubernetes:LustreVolumes", name, None, opts)
        claims: dict[str, list[str]] = {}
        retain = pulumi.ResourceOptions(retain_on_delete=args.retain)
        for mount in args.mounts:
            labels = {**MANAGED_BY, "ai-infra/lustre": mount.name}
            waits = [*args.driver, *([mount.filesystem] if mount.filesystem is not None else [])]
            for team in args.teams:
                pv_name = volume_name(args.environment, team, mount.name)
                storage = {"storage": f"{mount.capacity_gib}Gi"}
                pv = k8s.core.v1.PersistentVolume(
                    f"{name}-{mount.name}-{team}-pv",
                    metadata=k8s.meta.v1.ObjectMetaArgs(name=pv_name, labels={**labels, "ai-infra/team": team}),
                    spec=k8s.core.v1.PersistentVolumeSpecArgs(
                        capacity=storage, access_modes=ACCESS_MODES, persistent_volume_reclaim_policy=RECLAIM_POLICY,
                        storage_class_name="", volume_mode="Filesystem", mount_options=list(mount.mount_options) or None,
                        # Reserved for this team's claim: no other claim can bind it first.
                        claim_ref=k8s.core.v1.ObjectReferenceArgs(namespace=team, name=mount.name),
                        csi=k8s.core.v1.CSIPersistentVolumeSourceArgs(
                            driver=mount.driver, volume_handle=mount.volume_handle, volume_attributes=mount.attributes)),
                    opts=child_opts(self, args.cluster, waits).merge(retain))
                k8s.core.v1.PersistentVolumeClaim(
                    f"{name}-{mount.name}-{team}-pvc",
                    metadata=k8s.meta.v1.ObjectMetaArgs(name=mount.name, namespace=team, labels=labels),
                    spec=k8s.core.v1.PersistentVolumeClaimSpecArgs(
                        access_modes=ACCESS_MODES, storage_class_name="", volume_name=pv_name, volume_mode="Filesystem",
                        resources=k8s.core.v1.VolumeResourceRequirementsArgs(requests=storage)),
                    # Kubernetes resizes only dynamically provisioned claims ("only dynamically provisioned pvc can be
                    # resized"): after the file system grows, the volume's capacity follows (a volume's capacity may
                    # change) and the bound claim keeps the size it was created with.
                    opts=pulumi.ResourceOptions.merge(child_opts(self, args.cluster, [args.namespaces[team], pv]),
                                                      pulumi.ResourceOptions(ignore_changes=["spec.resources"],
                                                                             retain_on_delete=args.retain,
                                                                             replace_with=[pv])))
                claims.setdefault(team, []).append(mount.name)
        self.claims = claims
        """Per team, the claims it can mount (file system names)."""
        self.register_outputs({"claims": claims})
