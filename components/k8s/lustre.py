"""How each cloud's Lustre CSI driver mounts an existing file system (static provisioning): the driver name, the
volume handle and the volume attributes a PersistentVolume must carry. Imports no Kubernetes SDK: the cloud
compositions build these facts from their file systems' outputs and hand them over in the `ClusterHandle`.

Attribute names, as each driver documents them for a pre-provisioned PersistentVolume:
- FSx for Lustre (`fsx.csi.aws.com`): `volumeHandle` the file system ID, `volumeAttributes` `dnsname` and `mountname`,
  mount option `flock` (kubernetes-sigs/aws-fsx-csi-driver examples/kubernetes/static_provisioning/specs/pv.yaml).
- GKE Managed Lustre (`lustre.csi.storage.gke.io`): `volumeHandle` `<project>/<zone>/<instance id>`, `volumeAttributes`
  `ip` and `filesystem` (Managed Lustre "CSI driver reference", PersistentVolume; GoogleCloudPlatform/lustre-csi-driver
  examples/pre-prov/preprov-pvc-pv.yaml, keys `ip`/`filesystem` in pkg/csi_driver/controller.go).
- Azure Managed Lustre (`azurelustre.csi.azure.com`): `volumeAttributes` `mgs-ip-address`, `volumeHandle` any ID
  unique in the cluster, mount options `noatime`, `flock` (kubernetes-sigs/azurelustre-csi-driver v0.4.0
  docs/examples/pv.yaml). Driver v0.4.0 no longer reads `fs-name`: it always mounts `lustrefs`, the one file system
  name of every AMLFS (pkg/azurelustre newLustreVolume, DefaultLustreFsName), so the attribute is not written.

One handle per file system, shared by every team's PersistentVolume of it: kubelet names a CSI volume
`<driver>^<volumeHandle>`, so pods of several teams on one node share one staged mount, and GKE's driver refuses a
second mount of the same Lustre file system name on a node.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi

FSX_DRIVER = "fsx.csi.aws.com"
GKE_DRIVER = "lustre.csi.storage.gke.io"
AZURE_DRIVER = "azurelustre.csi.azure.com"


@dataclass(frozen=True)
class LustreMount:
    """A Lustre file system of the cluster's region, as its CSI driver mounts it."""

    name: str
    """The file system's name in the spec (`lustre.<name>`): every team's claim is called this."""
    driver: str
    volume_handle: pulumi.Input[str]
    attributes: dict[str, pulumi.Input[str]]
    """The PersistentVolume's `csi.volumeAttributes`."""
    capacity_gib: int
    """The file system's size: the PersistentVolume's capacity (informational for Lustre; binding matches it)."""
    mount_options: tuple[str, ...] = ()
    """The PersistentVolume's `mountOptions`. Default none."""
    filesystem: pulumi.Resource | None = field(default=None, compare=False)
    """The file system component; the volumes wait for it. Default none."""


def fsx_mount(name: str, size_gib: int, filesystem_id: pulumi.Input[str], dns_name: pulumi.Input[str],
              mount_name: pulumi.Input[str], filesystem: pulumi.Resource | None = None) -> LustreMount:
    # flock: the driver's example mounts with it; without it, POSIX locks (checkpoint writers, SQLite) fail.
    return LustreMount(name, FSX_DRIVER, filesystem_id, {"dnsname": dns_name, "mountname": mount_name}, size_gib,
                       ("flock",), filesystem)


def gke_mount(name: str, size_gib: int, project: str, zone: pulumi.Input[str], instance_id: pulumi.Input[str],
              mount_point: pulumi.Input[str], filesystem_name: pulumi.Input[str], filesystem: pulumi.Resource | None = None) -> LustreMount:
    """`mount_point` is the instance's `IP@tcp:/<filesystem>` (Managed Lustre API, `mountPoint`)."""
    ip = pulumi.Output.from_input(mount_point).apply(lambda m: m.split("@", 1)[0])
    handle = pulumi.Output.concat(project, "/", zone, "/", instance_id)
    return LustreMount(name, GKE_DRIVER, handle, {"ip": ip, "filesystem": filesystem_name}, size_gib, (), filesystem)


def amlfs_mount(name: str, size_gib: int, cluster_name: str, mgs_address: pulumi.Input[str],
                filesystem: pulumi.Resource | None = None) -> LustreMount:
    """`mgs_address` is the file system's `clientInfo.mgsAddress`."""
    return LustreMount(name, AZURE_DRIVER, f"{cluster_name}-{name}", {"mgs-ip-address": mgs_address}, size_gib,
                       ("noatime", "flock"), filesystem)
