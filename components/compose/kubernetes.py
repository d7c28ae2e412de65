"""The Kubernetes layer on every cluster of the platform: one Kubernetes provider per cluster, then monitoring,
accelerator enablement and team tenancy (components.k8s).

Provider settings, per cluster:
- `kubeconfig`: the cluster composition's secret kubeconfig, which authenticates through the cloud CLI's exec
  plugin (aws eks get-token, gke-gcloud-auth-plugin, kubelogin); no static credential is stored.
- `cluster_identifier`: the cluster's logical name. Without it Pulumi replaces the provider, and with it every
  object in the cluster, whenever the kubeconfig text changes (a rotated CA, a new endpoint).
- `enable_server_side_apply`: on (the v4 default, stated): field ownership is tracked by the API server, so
  objects other controllers also write (Kueue, the operators) are patched, not overwritten.
- `delete_unreachable`: off. A private API server is unreachable from a laptop off the VPN; dropping its objects
  from state would orphan them. Objects are `deleted_with` their cluster, so destroying a cluster needs no access.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.k8s.accelerators import Accelerators, AcceleratorsArgs
from components.k8s.autoneg import Autoneg, AutonegArgs
from components.k8s.azure_lustre import AzureLustreCsi, AzureLustreCsiArgs
from components.k8s.cluster import cluster_view
from components.k8s.eks import ClusterAutoscaler, EksControllersArgs, LoadBalancerController
from components.k8s.gpu_values import uses_standalone_dcgm
from components.k8s.inference import InferenceService, InferenceServiceArgs, PreviousParent
from components.k8s.monitoring import Monitoring, MonitoringArgs
from components.k8s.netpol import ClusterNetwork, cluster_network
from components.k8s.previewers import EKS_GROUP, LayerRecord, Previewers, PreviewersArgs, subjects
from components.k8s.queues import flavors
from components.k8s.storage import BlockStorageClass, BlockStorageClassArgs, LustreVolumes, LustreVolumesArgs
from components.k8s.tenancy import Team, Tenancy, TenancyArgs, check_team_names
from components.spec import ApiAccess, Cloud, MonitoringMode, Platform
from components.spec.azure import AksNetworkPolicy, apiserver_vnet_integration

from .types import ClusterHandle


def provider(handle: ClusterHandle) -> k8s.Provider:
    return k8s.Provider(
        f"{handle.name}-k8s",
        k8s.ProviderArgs(
            kubeconfig=handle.kubeconfig,
            cluster_identifier=f"{handle.cloud.value}/{handle.name}",
            enable_server_side_apply=True,
            delete_unreachable=False,
        ),
        opts=pulumi.ResourceOptions(depends_on=[handle.resource]),
    )


def inference_previous_parent(handle: ClusterHandle) -> PreviousParent | None:
    """EKS's Load Balancer Controller component, which held the inference namespace, NetworkPolicy and binding before
    the InferenceService did (their aliases); None elsewhere."""
    if handle.eks is None:
        return None
    return PreviousParent(f"{handle.name}-lb-controller", LoadBalancerController.TYPE)


def namespace_moves(handle: ClusterHandle, teams: list[str]) -> tuple[dict[str, list[pulumi.Alias]], tuple[pulumi.Alias, ...]]:
    """Aliases for the inference namespace changing hands: a team named like `inference.service_namespace` owns the
    namespace (the Service uses it); without such a team the InferenceService creates it. When a team of that name
    joins or leaves the config, the existing namespace object moves to its new owner instead of being created again
    beside it (pulumi-kubernetes refuses to create an object that exists: "already exists"). Returns the team's
    aliases (by team) and the InferenceService namespace's."""
    if handle.inference is None:
        return {}, ()
    namespace_name = handle.inference.spec.service_namespace
    if namespace_name in teams:
        owners = [PreviousParent(f"{handle.name}-inference", InferenceService.TYPE), inference_previous_parent(handle)]
        return {namespace_name: [owner.alias("namespace") for owner in owners if owner is not None]}, ()
    team = f"{handle.name}-{namespace_name}"
    team_urn = pulumi.create_urn(team, Team.TYPE, parent=pulumi.create_urn(handle.name, Tenancy.TYPE))
    return {}, (pulumi.Alias(name=f"{team}-namespace", parent=team_urn),)


def team_network(platform: Platform, handle: ClusterHandle) -> ClusterNetwork:
    """The ranges a team's NetworkPolicy names on the cluster (`netpol`). On AKS with Calico the node subnet is excepted
    too, and opened on 443 where the API server's private endpoint is in it: a private cluster without API Server VNet
    Integration (`etcd_encryption: customer_key` puts the API server in the `apiserver` subnet)."""
    network = handle.spec.network
    azure = platform.clouds.azure if handle.cloud is Cloud.AZURE else None
    if azure is None or azure.network_policy is not AksNetworkPolicy.CALICO:
        return cluster_network(handle.cloud, network)
    cluster = handle.spec.cluster
    private = cluster is not None and cluster.api_access is ApiAccess.PRIVATE
    return cluster_network(handle.cloud, network, calico=True,
                           api_server_in_nodes=private and not apiserver_vnet_integration(azure, handle.spec))


def previewer_subjects(platform: Platform, cloud: Cloud) -> list[k8s.rbac.v1.SubjectArgs]:
    """The cloud's preview identities (`clouds.<cloud>.previewers`) as its clusters' authenticator names them: on EKS
    the group of their access entries; on GKE the email of the account (`user:` or `serviceAccount:`); on AKS the
    service principal's object ID (azure.github.io/kubelogin/topics/sp.html). None: no previewers."""
    cloud_spec = getattr(platform.clouds, cloud.value)
    previewers = list(dict.fromkeys(cloud_spec.previewers)) if cloud_spec is not None else []
    if not previewers:
        return []
    if cloud is Cloud.AWS:
        return subjects("Group", [EKS_GROUP])
    if cloud is Cloud.GCP:
        return subjects("User", [member.split(":", 1)[1] for member in previewers])
    return subjects("User", previewers)


@dataclass
class Layer:
    outputs: dict[str, Any] = field(default_factory=dict)
    """Per cluster, what the layer installed (exported as `kubernetes`)."""
    inference_services: dict[str, pulumi.Resource] = field(default_factory=dict)
    """Each serving cluster's inference Service, by cluster name (what Azure Front Door's origins wait for)."""


def build(platform: Platform, clusters: list[ClusterHandle]) -> Layer:
    """Register the layer on every cluster; return per cluster what it installed."""
    try:
        check_team_names(platform.teams)
    except ValueError as err:
        raise pulumi.RunError(f"platform.teams: {err}") from None
    addons = platform.addons
    layer = Layer()
    outputs = layer.outputs
    for handle in clusters:
        view = cluster_view(handle.cloud, handle.spec)
        record = LayerRecord()  # sees every object the layer registers on the cluster, for the previewers' RBAC
        cluster_provider = provider(handle)
        opts = pulumi.ResourceOptions(providers=[cluster_provider], transformations=[record])
        block = None
        claims_class = None  # the class Prometheus's claims name; None: the cluster's default
        if handle.storage_class is not None:  # the region's key: EKS's default class, GKE's and AKS's named one
            block = BlockStorageClass(f"{handle.name}-block-storage", BlockStorageClassArgs(
                handle.storage_class, handle.resource, retain_volumes=platform.protected), opts)
            if not handle.storage_class.default:
                claims_class = handle.storage_class.name
        monitoring = Monitoring(handle.name, MonitoringArgs(
            cloud=handle.cloud, mode=addons.monitoring, teams=list(platform.teams), cluster=handle.resource,
            standalone_exporter=uses_standalone_dcgm(view, addons), storage=[block] if block is not None else [],
            storage_class=claims_class, alertmanager_secret=addons.alerts.alertmanager_secret), opts)
        accelerators = Accelerators(handle.name, AcceleratorsArgs(
            view=view, addons=addons, cluster=handle.resource, node_pools=handle.node_pools,
            service_monitors=addons.monitoring is MonitoringMode.SELF_MANAGED, monitoring_ready=monitoring.ready,
            efa_pools=[n for n, p in handle.spec.gpu_pools.items() if p.efa]), opts)
        cluster_flavors = flavors(view, addons.mig_strategy, addons.gpu_operator_on_gke)
        team_moves, service_moves = namespace_moves(handle, list(platform.teams))
        tenancy = Tenancy(handle.name, TenancyArgs(
            environment=platform.environment, teams=dict(platform.teams), flavors=cluster_flavors,
            cluster=handle.resource, network=team_network(platform, handle),
            inference_namespace=handle.inference.spec.service_namespace if handle.inference is not None else None,
            namespace_aliases=team_moves, retain_namespaces=platform.protected), opts)
        outputs[handle.name] = {
            "cloud": handle.cloud.value,
            "gpu_operator": accelerators.gpu_operator is not None,
            "dcgm_exporter": accelerators.dcgm_exporter is not None,
            "neuron_device_plugin": accelerators.neuron is not None,
            "flavors": [f.name for f in cluster_flavors],
            "teams": list(tenancy.teams),
            "monitoring": monitoring.outputs,
        }
        if block is not None:
            outputs[handle.name]["storage_class"] = block.outputs
        namespaces = {t: team.namespace for t, team in tenancy.teams.items()}
        if handle.lustre:  # the region's Lustre file systems, a claim of each in every team's namespace
            driver: list[pulumi.Resource] = []
            if handle.cloud is Cloud.AZURE:  # AKS has no managed Lustre driver: the layer installs it
                csi = AzureLustreCsi(f"{handle.name}-azure-lustre-csi", AzureLustreCsiArgs(cluster=handle.resource), opts)
                outputs[handle.name]["lustre_csi"] = csi.outputs
                driver.append(csi)
            outputs[handle.name]["lustre_claims"] = LustreVolumes(f"{handle.name}-lustre", LustreVolumesArgs(
                environment=platform.environment, mounts=handle.lustre, teams=list(tenancy.teams),
                namespaces=namespaces, cluster=handle.resource,
                driver=driver, retain=platform.protected), opts).claims
        admission: tuple[pulumi.Resource, ...] = ()
        if handle.eks is not None:  # EKS: node group autoscaling, and target groups filled with pods
            eks = EksControllersArgs(handle.eks, handle.resource)
            outputs[handle.name]["cluster_autoscaler"] = ClusterAutoscaler(f"{handle.name}-cluster-autoscaler", eks, opts).outputs
            lb_controller = LoadBalancerController(f"{handle.name}-lb-controller", eks, opts)
            outputs[handle.name]["lb_controller"] = lb_controller.outputs
            admission = (lb_controller.release,)
        finalizers: tuple[pulumi.Resource, ...] = ()
        if handle.autoneg is not None:  # a GKE cluster behind the GCP global load balancer
            # Built before the inference Service, which depends on it (and on the IAM grant its backend calls need):
            # autoneg's finalizer on the Service is removed only while the controller runs, so it must outlive it.
            b = handle.autoneg
            autoneg = Autoneg(f"{handle.name}-autoneg", AutonegArgs(
                b.project, b.namespace, b.service_account, cluster=handle.resource, iam=[b.iam]), opts)
            outputs[handle.name]["autoneg"] = autoneg.outputs
            finalizers = (autoneg, b.iam)
        if handle.inference is not None:  # the Service the region's load balancer sends inference traffic to
            inference = InferenceService(f"{handle.name}-inference", InferenceServiceArgs(
                handle.inference, handle.resource, namespaces, retain_namespace=platform.protected,
                previous_parent=inference_previous_parent(handle), namespace_aliases=service_moves,
                admission=admission, finalizers=finalizers), opts)
            layer.inference_services[handle.name] = inference.service
            outputs[handle.name]["inference"] = inference.outputs
        if who := previewer_subjects(platform, handle.cloud):  # last: it grants reads of what the layer registered
            outputs[handle.name]["previewers"] = Previewers(handle.name, PreviewersArgs(who, record, handle.resource),
                                                            pulumi.ResourceOptions(providers=[cluster_provider])).outputs
    return layer
