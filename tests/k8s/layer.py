"""Kubernetes-layer test support: clusters handed over as a cloud composition would (a stand-in cluster component
and an exec-auth kubeconfig), so these tests don't depend on the cloud components."""

from __future__ import annotations

import copy
from typing import Any

import pulumi
from helpers import platform_dict, run_platform

from aiinfra.plan.runtime import PlanResult, run_program
from components.compose.kubernetes import build
from components.compose.types import ClusterHandle, region_name
from components.k8s.block_storage import azure_disk_storage_class, ebs_storage_class, pd_storage_class
from components.spec import Cloud, Platform, load_platform

KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://10.0.0.1", certificate-authority-data: "LS0t"}
users:
- name: u
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: aws, args: [eks, get-token, --cluster-name, c]}
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
"""

KMS_KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
"""The region's key the stand-in EKS cluster's default StorageClass encrypts with."""
GCP_KMS_KEY = "projects/acme-ml-test/locations/us-central1/keyRings/test-us-central1-keyring/cryptoKeys/test-us-central1-key"
"""The region's key the stand-in GKE cluster's StorageClass encrypts with (a Cloud KMS key's resource name)."""
DISK_ENCRYPTION_SET = ("/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-test-eastus2/providers/"
                       "Microsoft.Compute/diskEncryptionSets/des-test-eastus2")
"""The region's disk encryption set the stand-in AKS cluster's StorageClass encrypts through."""

NETWORK = {"aws": "10.10.0.0/16", "gcp": "10.20.0.0/16", "azure": "10.30.0.0/16"}

# One region per cloud with one Lustre file system (FSx, Managed Lustre, AMLFS), for plans through the real compositions.
LUSTRE_CLOUDS: dict[str, Any] = {
    "aws": {"regions": {"us-east-1": {"network": {"cidr": "10.60.0.0/16"}, "cluster": {},
                                      "lustre": {"train": {"size_gib": 1200}}}}},
    "gcp": {"project": "acme-ml-test",
            "regions": {"us-central1": {"network": {"cidr": "10.20.0.0/16"}, "cluster": {},
                                        "lustre": {"scratch": {"size_gib": 18000}}}}},
    "azure": {"regions": {"eastus2": {"network": {"cidr": "10.30.0.0/16", "transit_encryption": "monitor"}, "cluster": {},
                                      "lustre": {"shared": {"size_gib": 16384}}}}},
}


def plan_clouds(clouds: dict[str, Any], teams: dict[str, Any]) -> PlanResult:
    """Plan a platform of `clouds` and `teams` through every cloud composition and the Kubernetes layer."""
    return run_platform(load_platform(platform_dict(clouds, teams=teams)))
REGION = {"aws": "us-east-1", "gcp": "us-central1", "azure": "eastus2"}

# One region per cloud with the accelerators each cloud offers: MIG, time-slicing, spot, Neuron, TPU.
POOLS: dict[str, dict[str, Any]] = {
    "aws": {
        "gpu_pools": {
            "h100-train": {"accelerator": "h100-80gb", "accelerators_per_node": 8, "max_nodes": 4},
            "h100-spot": {"accelerator": "h100-80gb", "accelerators_per_node": 8, "max_nodes": 2, "capacity": "spot"},
            "a100-mig": {"accelerator": "a100-80gb", "accelerators_per_node": 8, "max_nodes": 1,
                         "sharing": {"mode": "mig", "mig_profile": "3g.40gb"}},
            "l4-serve": {"accelerator": "l4", "accelerators_per_node": 1, "max_nodes": 4,
                         "sharing": {"mode": "time_slicing", "replicas_per_gpu": 4}},
            "trn2": {"accelerator": "trainium2", "max_nodes": 2},
        },
    },
    "gcp": {
        "gpu_pools": {"h100-train": {"accelerator": "h100-80gb", "accelerators_per_node": 8, "max_nodes": 2}},
        "tpu_slices": {"v5p": {"generation": "v5p", "topology": "2x2x2", "slices": 2},
                       "v6e-spot": {"generation": "v6e", "topology": "2x4", "capacity": "spot"}},
    },
    "azure": {
        "gpu_pools": {
            "h100-train": {"accelerator": "h100-80gb", "accelerators_per_node": 8, "max_nodes": 2, "capacity": "spot"},
            "a100-mig": {"accelerator": "a100-80gb", "accelerators_per_node": 1, "max_nodes": 4,
                         "sharing": {"mode": "mig", "mig_profile": "3g.40gb"}},
        },
    },
}

TEAMS = {"research": {"gpu_quota": 16, "tpu_quota": 8}, "serving": {"gpu_quota": 4, "can_borrow": False}}


def cloud_config(cloud: str, pools: dict[str, Any] | None = None) -> dict[str, Any]:
    network = {"cidr": NETWORK[cloud], **({"transit_encryption": "monitor"} if cloud == "azure" else {})}
    region = {"network": network, "cluster": {}, **copy.deepcopy(POOLS[cloud] if pools is None else pools)}
    config: dict[str, Any] = {"regions": {REGION[cloud]: region}}
    if cloud == "gcp":
        config["project"] = "acme-ml-test"
    return config


def make_spec(clouds: tuple[str, ...] = ("aws", "gcp", "azure"), teams: dict[str, Any] | None = None,
              pools: dict[str, dict[str, Any]] | None = None, **top: Any) -> Platform:
    data = platform_dict({c: cloud_config(c, (pools or {}).get(c)) for c in clouds},
                         teams=TEAMS if teams is None else teams, **top)
    return load_platform(data)


class StandInCluster(pulumi.ComponentResource):
    """A cluster component with one child, as the clouds' are (depends_on a component means on its children)."""

    def __init__(self, name: str) -> None:
        super().__init__("test:index:Cluster", name, None, None)
        self.control_plane = pulumi.CustomResource("test:index:ControlPlane", f"{name}-control-plane", {},
                                                   pulumi.ResourceOptions(parent=self))
        self.register_outputs({})


def handles(spec: Platform) -> list[ClusterHandle]:
    result = []
    for cloud, cloud_spec in spec.clouds.items():
        for region, region_spec in cloud_spec.regions.items():
            name = region_name(spec, region)
            pools = [pulumi.CustomResource("test:index:NodePool", f"{name}-{pool}", {}) for pool in region_spec.gpu_pools]
            cluster = StandInCluster(name)
            # As each composition hands it over: the region's key (AWS with the cluster's EBS CSI add-on).
            if cloud is Cloud.AWS:
                addon = pulumi.CustomResource("test:index:Addon", f"{name}-ebs-csi", {}, pulumi.ResourceOptions(parent=cluster))
                storage = ebs_storage_class(KMS_KEY_ARN, addon)
            elif cloud is Cloud.GCP:
                storage = pd_storage_class(GCP_KMS_KEY)
            else:
                storage = azure_disk_storage_class(DISK_ENCRYPTION_SET)
            result.append(ClusterHandle(cloud=cloud, region=region, spec=region_spec, name=name,
                                        kubeconfig=pulumi.Output.secret(KUBECONFIG), resource=cluster,
                                        node_pools=pools, storage_class=storage))
    return result


def plan_layer(spec: Platform) -> PlanResult:
    """Plan the Kubernetes layer alone on stand-in clusters; its return value is exported as `kubernetes`."""
    def program() -> None:
        pulumi.export("kubernetes", build(spec, handles(spec)).outputs)
    return run_program(program, project="ai-infra", stack="test")
