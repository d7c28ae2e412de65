"""Azure composition: per region network, key, flow logs, buckets, Lustre, etcd key, AKS and GPU pools (and, with
`addons.monitoring: managed`, Azure Monitor managed Prometheus); one Front Door.

Providers: none is created here. Every Azure resource sets its own `location`, so the default azure-native
provider (configured by `azure-native:*` stack config, `ARM_*` variables or `az login`) serves all regions
of the subscription. Pass `opts=ResourceOptions(providers=...)` to the components to target another one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pulumi
import pulumi_azure_native as azure_native

from components.azure.cluster import Cluster, ClusterArgs
from components.azure.context import AzureContext
from components.azure.etcd_key import EtcdKey, EtcdKeyArgs
from components.azure.flow_logs import FlowLogs, FlowLogsArgs
from components.azure.front_door import FrontDoor, FrontDoorArgs, FrontDoorOrigin
from components.azure.gpu_pool import GpuPool, GpuPoolArgs
from components.azure.keyvault import KeyVault, KeyVaultArgs
from components.azure.lustre import BlobLink, Lustre, LustreArgs
from components.azure.network import APISERVER_SUBNET, Network, NetworkArgs
from components.azure.prometheus import ManagedPrometheus, ManagedPrometheusArgs
from components.azure.storage import BlobStorage, BlobStorageArgs
from components.k8s.block_storage import azure_disk_storage_class
from components.k8s.lustre import amlfs_mount
from components.spec import (
    AzureCloudSpec,
    AzureFrontDoorTier,
    Cloud,
    MonitoringMode,
    Platform,
    RegionSpec,
    endpoint_logs_region,
    resolve_gpu_pool,
    resolve_lustre,
)
from components.spec.azure import DeployerAccess, apiserver_vnet_integration
from components.spec.maintenance import ClusterMaintenance, cluster_maintenance, clusters_of, default_window
from components.spec.storage import bucket_folder, linked_buckets

from .types import CloudResult, ClusterHandle, InferenceBackend, region_name

_LB_SUBNET = "lb"
AZURE_PROBE_SOURCE = "168.63.129.16/32"


def build(platform: Platform, cloud_spec: AzureCloudSpec) -> CloudResult:
    client = azure_native.authorization.get_client_config_output()
    endpoint = cloud_spec.global_endpoint
    public_origins = endpoint is not None and endpoint.azure_tier is AzureFrontDoorTier.STANDARD
    outputs: dict[str, Any] = {}
    clusters: list[ClusterHandle] = []
    origins: list[tuple[str, FrontDoorOrigin]] = []  # (cluster name, origin)
    workspaces: list[pulumi.Output[str]] = []
    managed_prometheus = platform.addons.monitoring is MonitoringMode.MANAGED
    # Staggered across the regions: behind Front Door at most one region upgrades at a time.
    maintenance = cluster_maintenance(Cloud.AZURE, clusters_of(cloud_spec.regions))
    for region, spec in cloud_spec.regions.items():
        name = region_name(platform, region)
        context = AzureContext(
            environment=platform.environment, region=region, labels=platform.tags(),
            subscription_id=client.subscription_id, tenant_id=client.tenant_id,
            protected=platform.protected, resource_group_name=spec.resource_group,
        )
        serving = spec.inference is not None and endpoint is not None
        # customer_key: the cluster's API server in the VNet, which Azure doesn't support with VNet encryption on.
        vnet_integrated = apiserver_vnet_integration(cloud_spec, spec)
        network = Network(name, NetworkArgs(
            context, spec.network, lustre=list(spec.lustre),
            public_inference_port=spec.inference.port if serving and public_origins and spec.inference else None,
            # With either etcd_encryption, so switching it changes no subnet.
            apiserver_subnet=spec.cluster is not None,
            vnet_encryption=not vnet_integrated))
        ctx = network.context
        workspaces.append(network.workspace.id)
        # Azure Managed Lustre reaches its key over the vault's public endpoint (firewalled to trusted services); a
        # region without Lustre keeps the vault private-endpoint only.
        vault = KeyVault(name, KeyVaultArgs(ctx, network.subnet_ids["endpoints"], network.dns_zone_ids["vault"], network.workspace.id,
                                            public_endpoint=bool(spec.lustre)))
        FlowLogs(name, FlowLogsArgs(ctx, network.vnet.id, network.workspace.id, spec.network.flow_log_retention_days,
                                    vault.customer_key, watcher=cloud_spec.network_watcher))
        region_out: dict[str, Any] = {"resource_group": network.resource_group_name, "vnet_id": network.vnet.id,
                                      "key_vault_id": vault.vault.id}
        buckets = _buckets(name, ctx, spec, cloud_spec, network, vault)
        region_out["buckets"] = {b: storage.account.name for b, storage in buckets.items()}
        region_maintenance = maintenance.get(region, ClusterMaintenance(default_window(Cloud.AZURE)))
        lustre = _lustre(name, ctx, spec, network, vault, buckets, region_maintenance)
        region_out["lustre"] = {fs_name: fs.filesystem.id for fs_name, fs in lustre.items()}
        if spec.cluster is not None:
            etcd_key = None
            if vnet_integrated:
                etcd = EtcdKey(name, EtcdKeyArgs(ctx, network.subnet_ids["endpoints"], network.dns_zone_ids["vault"],
                                                 network.workspace.id))
                etcd_key = etcd.for_cluster(network.subnet_ids[APISERVER_SUBNET])
                region_out["etcd_key_vault_id"] = etcd.vault.id
            cluster = Cluster(name, ClusterArgs(
                ctx, spec.cluster, network.subnet_ids["nodes"],
                pod_cidr=spec.network.effective_pod_cidr, service_cidr=spec.network.service_range(Cloud.AZURE),
                zones=spec.network.zones, disk_encryption_set_id=vault.disk_encryption_set.id,
                workspace_id=network.workspace.id,
                admin_group_object_ids=list(dict.fromkeys([*cloud_spec.admin_group_object_ids, *spec.cluster.admins])),
                network_policy=cloud_spec.network_policy, managed_prometheus=managed_prometheus,
                deployer=_deployer(cloud_spec, client.object_id), maintenance=region_maintenance,
                etcd_key=etcd_key, previewers=cloud_spec.previewers))
            pools = [
                GpuPool(f"{name}-{pool_name}", GpuPoolArgs(
                    ctx, pool_name, pool, resolve_gpu_pool(Cloud.AZURE, pool), cluster.cluster_name, cluster.principal_id,
                    network.subnet_ids["nodes"], spec.network.zones, cluster.upgrade_channel,
                    spec.cluster.kubernetes_version))
                for pool_name, pool in spec.gpu_pools.items()
            ]
            mounts = tuple(amlfs_mount(fs_name, spec.lustre[fs_name].size_gib, name, fs.mgs_address, fs)
                           for fs_name, fs in lustre.items())
            inference = None
            if spec.inference is not None:
                pls_name = f"pls-{name}-inference"
                public = public_origins and serving
                annotations = inference_service_annotations(network, pls_name, public=public)
                # Applied by the Kubernetes layer; exported for a Service of your own when addons are off.
                region_out["inference"] = {"service_annotations": annotations}
                inference = InferenceBackend(spec.inference, _sources(spec, public), annotations, load_balancer=True)
                if serving:
                    origins.append((name, _origin(region, spec, network, cluster, pls_name, public_origins, context)))
            # Data disks through the node disks' encryption set (the region's key), which the cluster identity reads.
            clusters.append(ClusterHandle(cloud=Cloud.AZURE, region=region, spec=spec, name=name,
                                          kubeconfig=cluster.kubeconfig, resource=cluster, node_pools=pools, lustre=mounts,
                                          inference=inference,
                                          storage_class=azure_disk_storage_class(vault.disk_encryption_set.id)))
            region_out["cluster"] = {"name": cluster.cluster_name, "id": cluster.cluster.id,
                                     "node_resource_group": cluster.node_resource_group}
            if managed_prometheus:
                region_out["monitoring"] = ManagedPrometheus(name, ManagedPrometheusArgs(
                    ctx, cluster.cluster.id, cluster.cluster_name, platform.addons.alerts.action_group_id)).outputs
        outputs[region] = region_out
    if endpoint is None or not origins:
        return CloudResult(outputs=outputs, clusters=clusters)

    def front_door(services: Mapping[str, pulumi.Resource]) -> dict[str, Any]:
        """Front Door, once the Kubernetes layer has registered the inference Services: each origin waits for its
        region's Service, whose load balancer address AKS publishes after it has made the Private Link service."""
        if not platform.addons.enabled and not public_origins:
            pulumi.log.warn("clouds.azure.global_endpoint: addons.enabled is false, so no inference Service is created and "
                            "Front Door's origins find no Private Link service until you deploy one with the exported "
                            "inference.service_annotations; run `pulumi up` again after it has an address")
        first = next(r for r, s in cloud_spec.regions.items() if s.inference is not None)
        door = FrontDoor(f"{platform.environment}-frontdoor", FrontDoorArgs(
            AzureContext(environment=platform.environment, region=first, labels=platform.tags(),
                         subscription_id=client.subscription_id, tenant_id=client.tenant_id, protected=platform.protected),
            endpoint, [replace(origin, depends_on=services.get(cluster_name)) for cluster_name, origin in origins],
            health_check_path=next(s.inference.health_check_path for s in cloud_spec.regions.values() if s.inference),
            # Front Door's logs go to the workspace of the endpoint's logs_data_zone, else of the first serving region.
            workspace_id=workspaces[list(cloud_spec.regions).index(endpoint_logs_region(platform, Cloud.AZURE, cloud_spec) or first)]))
        # front_door_id: the X-Azure-FDID header value an origin checks to accept its own Front Door only.
        exported: dict[str, Any] = {"host_name": door.host_name, "domain": endpoint.domain, "front_door_id": door.front_door_id}
        if endpoint.domain:
            # The TXT record the domain's DNS owner creates before Front Door serves the domain: `_dnsauth.<subdomain>`
            # in the domain's zone (learn.microsoft.com/azure/frontdoor/domain, "TXT record validation"), exported as
            # the full name, which also covers an apex domain (`_dnsauth.<zone>`).
            exported["domain_validation"] = {"txt_name": f"_dnsauth.{endpoint.domain}",
                                             "txt_value": door.domain_validation_token}
        return {"front_door": exported}

    return CloudResult(outputs=outputs, clusters=clusters, after_kubernetes=front_door)


def _buckets(name: str, ctx: AzureContext, spec: RegionSpec, cloud_spec: AzureCloudSpec, network: Network,
             vault: KeyVault) -> dict[str, BlobStorage]:
    linked = linked_buckets(spec.lustre)
    return {
        bucket_name: BlobStorage(f"{name}-{bucket_name}", BlobStorageArgs(
            ctx, bucket_name, bucket, network.subnet_ids["endpoints"], network.dns_zone_ids["blob"], vault.customer_key,
            lustre_principal_id=cloud_spec.hpc_cache_principal_id if bucket_name in linked else None))
        for bucket_name, bucket in spec.buckets.items()
    }


def _lustre(name: str, ctx: AzureContext, spec: RegionSpec, network: Network, vault: KeyVault,
            buckets: dict[str, BlobStorage], maintenance: ClusterMaintenance) -> dict[str, Lustre]:
    file_systems = {}
    for fs_name, fs in spec.lustre.items():
        blob = None
        if fs.bucket is not None:
            storage = buckets[fs.bucket]
            assert storage.logging_container is not None  # created for every linked bucket
            blob = BlobLink(storage.container.id, storage.logging_container.id,
                            import_prefix="/" + bucket_folder(fs.bucket_prefix), access=storage.lustre_access)
        lustre = Lustre(f"{name}-{fs_name}", LustreArgs(
            ctx, fs, resolve_lustre(Cloud.AZURE, fs), network.subnet_ids[f"lustre-{fs_name}"], vault.customer_key, blob=blob,
            # Opens with the region's AKS window: training meets one maintenance window a week there, not two.
            maintenance_window=maintenance.window))
        file_systems[fs_name] = lustre
    return file_systems


def _deployer(cloud_spec: AzureCloudSpec, running: pulumi.Output[str]) -> tuple[pulumi.Input[str], str] | None:
    """The deployer's object ID (`deployer_object_id`, else the running identity's) and principal type for its
    cluster-admin role assignment; None when a group grants it."""
    types = {DeployerAccess.SERVICE_PRINCIPAL: "ServicePrincipal", DeployerAccess.USER: "User"}
    access = cloud_spec.deployer
    return (cloud_spec.deployer_object_id or running, types[access]) if access in types else None


def _origin(region: str, spec: RegionSpec, network: Network, cluster: Cluster, pls_name: str, public: bool,
            ctx: AzureContext) -> FrontDoorOrigin:
    assert spec.inference is not None
    if public:
        assert network.inference_ip is not None
        return FrontDoorOrigin(region, network.inference_ip.ip_address, spec.inference.port, spec.inference.traffic_percent)
    pls_id = pulumi.Output.concat("/subscriptions/", ctx.subscription_id, "/resourceGroups/", cluster.node_resource_group,
                                  "/providers/Microsoft.Network/privateLinkServices/", pls_name)
    return FrontDoorOrigin(region, network.inference_private_ip, spec.inference.port, spec.inference.traffic_percent,
                           private_link_service_id=pls_id)


def _sources(spec: RegionSpec, public: bool) -> tuple[str, ...]:
    """Where the inference load balancer's traffic reaches the pods from. The Service's `externalTrafficPolicy: Local`
    (components.k8s.inference) keeps the source address and no node forwards to another's pods, so no node address
    needs admitting (Cilium would never match one). Private (Front Door Premium): the Private Link service's NAT
    addresses (the `lb` subnet, in the VNet), and 168.63.129.16, where Azure Load Balancer probes come from
    (learn.microsoft.com/azure/virtual-network/what-is-ip-address-168-63-129-16): Local's default probe goes to the
    node's health check port, outside any NetworkPolicy, but a probe set to the service port reaches the pods. Public
    (Front Door Standard): Front Door's backends, which have no fixed list; the network security group admits only the
    AzureFrontDoor.Backend service tag on the port."""
    return ("0.0.0.0/0",) if public else (str(spec.network.cidr), AZURE_PROBE_SOURCE)


def inference_service_annotations(network: Network, pls_name: str, public: bool) -> dict[str, Any]:
    """Annotations the inference Service (type LoadBalancer) needs so the AKS cloud provider builds the origin
    Front Door expects: an internal load balancer on a fixed address with a Private Link service (default),
    or the pre-made public address that only Front Door may reach (Front Door Standard)."""
    prefix = "service.beta.kubernetes.io/"
    if public:
        assert network.inference_ip is not None
        return {f"{prefix}azure-pip-name": network.inference_ip.name,
                f"{prefix}azure-load-balancer-resource-group": network.resource_group_name}
    return {
        f"{prefix}azure-load-balancer-internal": "true",
        f"{prefix}azure-load-balancer-internal-subnet": _LB_SUBNET,
        f"{prefix}azure-load-balancer-ipv4": network.inference_private_ip,
        f"{prefix}azure-pls-create": "true",
        f"{prefix}azure-pls-name": pls_name,
        f"{prefix}azure-pls-ip-configuration-subnet": _LB_SUBNET,
    }
