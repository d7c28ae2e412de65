"""The Azure Lustre CSI driver (kubernetes-sigs/azurelustre-csi-driver) on an AKS cluster of a region with an Azure
Managed Lustre file system: what mounts the teams' Lustre volumes (components.k8s.storage, driver
`azurelustre.csi.azure.com`).

Written as typed objects from the driver's manifests at tag v0.4.0 (commit 9011a5fc83654e814d014b029598082ed0165dc2):
deploy/csi-azurelustre-driver.yaml, deploy/rbac-csi-azurelustre-node.yaml and deploy/csi-azurelustre-node-{jammy,noble}
.yaml. The driver has no Helm chart (charts/README.md: unsupported) and no AKS add-on. Only the node plugin is
installed: volumes are statically provisioned (the file systems belong to the cloud layer), so the controller, which
creates and deletes AMLFS clusters for dynamic provisioning, is left out with its RBAC.

Both of upstream's node DaemonSets, each on its Ubuntu release only (`kubernetes.azure.com/os-sku-effective`): AKS's
`Ubuntu` OS SKU (the GPU pools') is Ubuntu 22.04 up to Kubernetes 1.34 and 24.04 from 1.35, so a minor upgrade moves
nodes from one to the other, and each image installs the Lustre client built for its release on the host.

The node plugin is privileged on the host network: it loads the Lustre kernel modules, installs the client and
mounts on the host with bidirectional propagation into kubelet's directory. The policy pack's `k8s-no-privileged-pods`
names exactly these DaemonSets as exempt (`privilegedWorkloads`, policies/aiinfra_policy/gen_config.py).

Deliberate differences from upstream, each narrower:
- RBAC: `nodes` get/patch only (the plugin removes its `azurelustre.csi.azure.com/agent-not-ready` taint at start,
  pkg/azurelustre/azurelustre.go removeNotReadyTaint); upstream's `secrets` get/list is not granted: no code of the
  driver reads Secrets from the API (kubelet passes any mount secret in the CSI call itself).
- CSIDriver `fsGroupPolicy: None` (upstream `File`): one file system is shared by every team; with `File`, a pod that
  sets `fsGroup` would make kubelet chown the whole file system recursively on mount, for every other team too.
- The host's /etc/kubernetes (the plugin reads azure.json at start) and /etc/os-release are mounted read-only.
- Node selection by OS SKU only (upstream's virtual-kubelet exclusion is moot: virtual nodes carry no OS SKU label;
  Ubuntu 20.04, which upstream admits for confidential VMs, is no GPU pool OS here).
- Images keep the default pull policy (IfNotPresent for a tag) rather than `Always`.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from .lustre import AZURE_DRIVER
from .objects import MANAGED_BY, child_opts

VERSION = "v0.4.0"
SOURCE = ("kubernetes-sigs/azurelustre-csi-driver tag v0.4.0 (9011a5fc83654e814d014b029598082ed0165dc2): "
          "deploy/csi-azurelustre-driver.yaml, rbac-csi-azurelustre-node.yaml, csi-azurelustre-node-{jammy,noble}.yaml")
NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "csi-azurelustre-node-sa"
ROLE = "csi-azurelustre-node-role"
LIVENESS_IMAGE = "mcr.microsoft.com/oss/kubernetes-csi/livenessprobe:v2.15.0"
REGISTRAR_IMAGE = "mcr.microsoft.com/oss/kubernetes-csi/csi-node-driver-registrar:v2.13.0"
OS_SKU_LABEL = "kubernetes.azure.com/os-sku-effective"
HEALTH_PORT = 29763  # on the host network: the plugin's /healthz, served by the liveness-probe sidecar


@dataclass(frozen=True)
class Flavor:
    """One of upstream's node DaemonSets: an Ubuntu release, its image and the Lustre client it installs."""

    name: str
    os_sku: str
    """`kubernetes.azure.com/os-sku-effective` of the nodes it runs on."""
    lustre_version: str
    client_sha_suffix: str

    @property
    def daemonset(self) -> str:
        return f"csi-azurelustre-node-{self.name}"

    @property
    def image(self) -> str:
        return f"mcr.microsoft.com/oss/v2/kubernetes-csi/azurelustre-csi:{VERSION}-{self.name}"


FLAVORS = (Flavor("jammy", "Ubuntu2204", "2.15.7", "33-g79ddf99"), Flavor("noble", "Ubuntu2404", "2.16.1", "14-gbc76088"))
NODE_DAEMONSETS = tuple(f"{NAMESPACE}/DaemonSet/{f.daemonset}" for f in FLAVORS)
"""The privileged workloads this installs, as `k8s-no-privileged-pods` names them (`privilegedWorkloads`)."""
LABELS = {**MANAGED_BY, "app.kubernetes.io/name": "azurelustre-csi-driver", "app.kubernetes.io/version": VERSION}
NODE_RULES = [("", ["nodes"], ["get", "patch"])]


def _resources(cpu_limit: str, memory_limit: str) -> k8s.core.v1.ResourceRequirementsArgs:
    return k8s.core.v1.ResourceRequirementsArgs(requests={"cpu": "10m", "memory": "20Mi"},
                                                limits={"cpu": cpu_limit, "memory": memory_limit})


def _host_path(name: str, path: str, type_: str) -> k8s.core.v1.VolumeArgs:
    return k8s.core.v1.VolumeArgs(name=name, host_path=k8s.core.v1.HostPathVolumeSourceArgs(path=path, type=type_))


def _mount(name: str, path: str, read_only: bool | None = None, propagation: str | None = None) -> k8s.core.v1.VolumeMountArgs:
    return k8s.core.v1.VolumeMountArgs(name=name, mount_path=path, read_only=read_only, mount_propagation=propagation)


def node_pod_spec(flavor: Flavor) -> k8s.core.v1.PodSpecArgs:
    """The node plugin's pod: upstream's settings, less what static provisioning does not use (see the module)."""
    socket = _mount("socket-dir", "/csi")
    liveness = k8s.core.v1.ContainerArgs(
        name="liveness-probe", image=LIVENESS_IMAGE, volume_mounts=[socket],
        args=["--csi-address=/csi/csi.sock", "--probe-timeout=120s", f"--health-port={HEALTH_PORT}", "--v=2"],
        resources=_resources("100m", "100Mi"))
    registration = f"/var/lib/kubelet/plugins/{AZURE_DRIVER}/csi.sock"
    registrar = k8s.core.v1.ContainerArgs(
        name="node-driver-registrar", image=REGISTRAR_IMAGE,
        args=["--csi-address=$(ADDRESS)", "--kubelet-registration-path=$(DRIVER_REG_SOCK_PATH)", "--v=2"],
        # kubelet expands $(VAR) from the container's env in exec probe commands too.
        liveness_probe=k8s.core.v1.ProbeArgs(
            exec_=k8s.core.v1.ExecActionArgs(command=[
                "/csi-node-driver-registrar", "--kubelet-registration-path=$(DRIVER_REG_SOCK_PATH)",
                "--mode=kubelet-registration-probe"]),
            initial_delay_seconds=30, timeout_seconds=15),
        env=[k8s.core.v1.EnvVarArgs(name="ADDRESS", value="/csi/csi.sock"),
             k8s.core.v1.EnvVarArgs(name="DRIVER_REG_SOCK_PATH", value=registration)],
        volume_mounts=[socket, _mount("registration-dir", "/registration")],
        resources=_resources("100m", "100Mi"))
    readiness = k8s.core.v1.ExecActionArgs(command=["/app/readinessProbe.sh"])
    plugin = k8s.core.v1.ContainerArgs(
        name="azurelustre", image=flavor.image,
        # Unloads the Lustre modules when the plugin stops (fails harmlessly while a mount is in use).
        lifecycle=k8s.core.v1.LifecycleArgs(pre_stop=k8s.core.v1.LifecycleHandlerArgs(
            exec_=k8s.core.v1.ExecActionArgs(command=["/bin/sh", "-c", "lustre_rmmod"]))),
        args=["-v=5", "--endpoint=$(CSI_ENDPOINT)", "--nodeid=$(KUBE_NODE_NAME)"],
        ports=[k8s.core.v1.ContainerPortArgs(name="healthz", container_port=HEALTH_PORT, protocol="TCP")],
        liveness_probe=k8s.core.v1.ProbeArgs(
            http_get=k8s.core.v1.HTTPGetActionArgs(path="/healthz", port="healthz"),
            failure_threshold=5, initial_delay_seconds=60, timeout_seconds=10, period_seconds=30),
        readiness_probe=k8s.core.v1.ProbeArgs(exec_=readiness, failure_threshold=5, initial_delay_seconds=10,
                                              timeout_seconds=10, period_seconds=30),
        # Installing the Lustre client on a new node takes minutes: up to 10 before liveness applies.
        startup_probe=k8s.core.v1.ProbeArgs(exec_=readiness, failure_threshold=120, initial_delay_seconds=10,
                                            timeout_seconds=5, period_seconds=5),
        env=[
            k8s.core.v1.EnvVarArgs(name="CSI_ENDPOINT", value="unix:///csi/csi.sock"),
            # The plugin installs the Lustre client packages of this version on the host at start.
            k8s.core.v1.EnvVarArgs(name="AZURELUSTRE_CSI_INSTALL_LUSTRE_CLIENT", value="yes"),
            k8s.core.v1.EnvVarArgs(name="LUSTRE_VERSION", value=flavor.lustre_version),
            k8s.core.v1.EnvVarArgs(name="CLIENT_SHA_SUFFIX", value=flavor.client_sha_suffix),
            k8s.core.v1.EnvVarArgs(name="KUBE_NODE_NAME", value_from=k8s.core.v1.EnvVarSourceArgs(
                field_ref=k8s.core.v1.ObjectFieldSelectorArgs(api_version="v1", field_path="spec.nodeName"))),
        ],
        # Kernel modules, the client install and host mounts.
        security_context=k8s.core.v1.SecurityContextArgs(privileged=True),
        volume_mounts=[
            socket,
            # Mounts made here must reach kubelet and the pods on the host.
            _mount("mountpoint-dir", "/var/lib/kubelet/", propagation="Bidirectional"),
            _mount("azure-cred", "/etc/kubernetes/", read_only=True),
            # Device nodes the Lustre modules create after the container started.
            _mount("host-dev", "/dev"),
            # Which Ubuntu release the client is installed for.
            _mount("host-os-release", "/etc/host-os-release", read_only=True),
        ],
        resources=_resources("1", "200Mi"))
    return k8s.core.v1.PodSpecArgs(
        host_network=True,
        dns_policy="Default",  # the node's resolvers, as on the host network
        service_account_name=SERVICE_ACCOUNT,
        automount_service_account_token=True,  # node get/patch for its not-ready taint
        node_selector={"kubernetes.io/os": "linux", OS_SKU_LABEL: flavor.os_sku},
        priority_class_name="system-node-critical",
        # Every taint: the GPU pools' accelerator and spot taints and any pool taint, and never evicted by a
        # NoExecute taint while its mounts are in use. The OS SKU selector keeps it off the Azure Linux system pool.
        tolerations=[k8s.core.v1.TolerationArgs(operator="Exists")],
        containers=[liveness, registrar, plugin],
        volumes=[
            _host_path("socket-dir", f"/var/lib/kubelet/plugins/{AZURE_DRIVER}", "DirectoryOrCreate"),
            _host_path("registration-dir", "/var/lib/kubelet/plugins_registry/", "Directory"),
            _host_path("mountpoint-dir", "/var/lib/kubelet/", "Directory"),
            _host_path("azure-cred", "/etc/kubernetes/", "DirectoryOrCreate"),
            _host_path("host-dev", "/dev", "Directory"),
            _host_path("host-os-release", "/etc/os-release", "File"),
        ])


@dataclass(frozen=True)
class AzureLustreCsiArgs:
    cluster: pulumi.Resource
    """The AKS cluster component: every object is `deleted_with` it."""


class AzureLustreCsi(pulumi.ComponentResource):
    """`ai-infra:kubernetes:AzureLustreCsi`. Children: `<name>-driver` (CSIDriver), `<name>-service-account`,
    `<name>-node-role`, `<name>-node-binding`, `<name>-node-jammy` and `<name>-node-noble` (DaemonSets)."""

    def __init__(self, name: str, args: AzureLustreCsiArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:kubernetes:AzureLustreCsi", name, None, opts)
        cluster = args.cluster
        driver = k8s.storage.v1.CSIDriver(
            f"{name}-driver", metadata=k8s.meta.v1.ObjectMetaArgs(name=AZURE_DRIVER, labels=LABELS),
            spec=k8s.storage.v1.CSIDriverSpecArgs(attach_required=False, pod_info_on_mount=True, fs_group_policy="None"),
            opts=child_opts(self, cluster))
        account = k8s.core.v1.ServiceAccount(
            f"{name}-service-account",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=SERVICE_ACCOUNT, namespace=NAMESPACE, labels=LABELS),
            automount_service_account_token=False,  # only the plugin's pod mounts a token (it asks for one)
            opts=child_opts(self, cluster))
        role = k8s.rbac.v1.ClusterRole(
            f"{name}-node-role", metadata=k8s.meta.v1.ObjectMetaArgs(name=ROLE, labels=LABELS),
            rules=[k8s.rbac.v1.PolicyRuleArgs(api_groups=[g], resources=r, verbs=v) for g, r, v in NODE_RULES],
            opts=child_opts(self, cluster))
        binding = k8s.rbac.v1.ClusterRoleBinding(
            f"{name}-node-binding", metadata=k8s.meta.v1.ObjectMetaArgs(name=f"{ROLE}-binding", labels=LABELS),
            role_ref=k8s.rbac.v1.RoleRefArgs(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=ROLE),
            subjects=[k8s.rbac.v1.SubjectArgs(kind="ServiceAccount", name=SERVICE_ACCOUNT, namespace=NAMESPACE)],
            opts=child_opts(self, cluster, [role, account]))
        self.daemonsets: dict[str, k8s.apps.v1.DaemonSet] = {}
        for flavor in FLAVORS:
            selector = {"app": "csi-azurelustre-node", "flavor": flavor.name}
            self.daemonsets[flavor.name] = k8s.apps.v1.DaemonSet(
                f"{name}-node-{flavor.name}",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=flavor.daemonset, namespace=NAMESPACE, labels=LABELS),
                spec=k8s.apps.v1.DaemonSetSpecArgs(
                    selector=k8s.meta.v1.LabelSelectorArgs(match_labels=selector),
                    update_strategy=k8s.apps.v1.DaemonSetUpdateStrategyArgs(
                        type="RollingUpdate", rolling_update=k8s.apps.v1.RollingUpdateDaemonSetArgs(max_unavailable=1)),
                    template=k8s.core.v1.PodTemplateSpecArgs(
                        metadata=k8s.meta.v1.ObjectMetaArgs(labels={**LABELS, **selector}),
                        spec=node_pod_spec(flavor))),
                opts=child_opts(self, cluster, [driver, binding]))
        self.outputs = {"driver": AZURE_DRIVER, "version": VERSION,
                        "node_daemonsets": [f.daemonset for f in FLAVORS],
                        "images": sorted({LIVENESS_IMAGE, REGISTRAR_IMAGE, *(f.image for f in FLAVORS)})}
        self.register_outputs(self.outputs)
