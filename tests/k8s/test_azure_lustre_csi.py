"""The Azure Lustre CSI driver behind the real compositions: installed only on AKS clusters of regions with an Azure
Managed Lustre file system, registered under the driver name the teams' volumes use, pinned, privileged exactly where
the node plugin needs it, valid against the Kubernetes OpenAPI schema, and exempt from `k8s-no-privileged-pods` in
staging and prod by name only."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import script_module
from k8s.layer import LUSTRE_CLOUDS, plan_clouds
from k8s.validation import validate
from policy_helpers import run_resource

from aiinfra.plan.runtime import PlanResult, ResourceRecord
from components.k8s import azure_lustre, lustre

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
COMPONENT = "ai-infra:kubernetes:AzureLustreCsi"
DAEMONSET, CSI_DRIVER = "kubernetes:apps/v1:DaemonSet", "kubernetes:storage.k8s.io/v1:CSIDriver"
PV = "kubernetes:core/v1:PersistentVolume"
GPU = {"a100": {"accelerator": "a100-80gb", "accelerators_per_node": 1, "max_nodes": 2, "capacity": "spot"}}
CLOUDS: dict[str, Any] = copy.deepcopy(LUSTRE_CLOUDS)
CLOUDS["azure"]["regions"]["eastus2"]["gpu_pools"] = GPU
# An AKS cluster in a region without AMLFS: no driver.
CLOUDS["azure"]["regions"]["westus3"] = {"network": {"cidr": "10.31.0.0/16", "transit_encryption": "monitor"}, "cluster": {}}
CLUSTER = "test-eastus2"
NAME = f"{CLUSTER}-azure-lustre-csi"


def plan_csi(clouds: dict[str, Any]) -> PlanResult:
    return plan_clouds(clouds, {"research": {"gpu_quota": 0}})


@pytest.fixture(scope="module")
def plan() -> PlanResult:
    return plan_csi(CLOUDS)


def children(plan: PlanResult) -> list[ResourceRecord]:
    return [r for r in plan.resources if f"{COMPONENT}$" in r.urn]


def node(plan: PlanResult, flavor: str) -> dict[str, Any]:
    return plan.one(DAEMONSET, f"{NAME}-node-{flavor}").inputs


def pod(plan: PlanResult, flavor: str) -> dict[str, Any]:
    return node(plan, flavor)["spec"]["template"]["spec"]


def containers(plan: PlanResult, flavor: str) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in pod(plan, flavor)["containers"]}


def test_installed_only_on_aks_clusters_of_regions_with_amlfs(plan):
    assert [r.name for r in plan.of_type(COMPONENT)] == [NAME]
    assert [r.name for r in plan.of_type(CSI_DRIVER)] == [f"{NAME}-driver"]  # none on EKS or GKE
    assert {r.name for r in plan.of_type(DAEMONSET) if "lustre" in r.name} == {f"{NAME}-node-jammy", f"{NAME}-node-noble"}
    assert all(f"::{CLUSTER}-k8s::" in r.provider for r in children(plan))
    out = plan.outputs["kubernetes"]
    assert out[CLUSTER]["lustre_csi"]["node_daemonsets"] == ["csi-azurelustre-node-jammy", "csi-azurelustre-node-noble"]
    assert [c for c, v in out.items() if "lustre_csi" in v] == [CLUSTER]
    assert "test-westus3" in out and "lustre_claims" not in out["test-westus3"]


def test_nothing_without_lustre():
    clouds = {"azure": {"regions": {"eastus2": {**CLOUDS["azure"]["regions"]["eastus2"]}}}}
    del clouds["azure"]["regions"]["eastus2"]["lustre"]
    bare = plan_csi(clouds)
    assert not bare.of_type(COMPONENT) and not bare.of_type(CSI_DRIVER) and not bare.of_type(DAEMONSET)


def test_the_csi_driver_object_names_the_driver_the_volumes_use(plan):
    driver = plan.one(CSI_DRIVER).inputs
    pv = plan.one(PV, f"{CLUSTER}-lustre-shared-research-pv").inputs
    assert driver["metadata"]["name"] == pv["spec"]["csi"]["driver"] == lustre.AZURE_DRIVER == "azurelustre.csi.azure.com"
    # No attach step (no controller); kubelet never chowns a file system every team shares.
    assert driver["spec"] == {"attachRequired": False, "podInfoOnMount": True, "fsGroupPolicy": "None"}
    # The volumes wait for the driver (a dependency on the component is one on each of its objects).
    assert {r.urn for r in children(plan)} <= set(plan.one(PV, f"{CLUSTER}-lustre-shared-research-pv").dependencies)


def test_images_are_pinned_to_the_v0_4_0_manifests(plan):
    for flavor in ("jammy", "noble"):
        images = {name: c["image"] for name, c in containers(plan, flavor).items()}
        assert images == {
            "liveness-probe": "mcr.microsoft.com/oss/kubernetes-csi/livenessprobe:v2.15.0",
            "node-driver-registrar": "mcr.microsoft.com/oss/kubernetes-csi/csi-node-driver-registrar:v2.13.0",
            "azurelustre": f"mcr.microsoft.com/oss/v2/kubernetes-csi/azurelustre-csi:v0.4.0-{flavor}",
        }
        assert all("imagePullPolicy" not in c for c in containers(plan, flavor).values())
    env = {f: {e["name"]: e.get("value") for e in containers(plan, f)["azurelustre"]["env"]} for f in ("jammy", "noble")}
    assert (env["jammy"]["LUSTRE_VERSION"], env["noble"]["LUSTRE_VERSION"]) == ("2.15.7", "2.16.1")


def test_only_the_plugin_is_privileged_on_the_host_network_and_mounts_propagate_only_into_kubelet(plan):
    for flavor in ("jammy", "noble"):
        spec, by_name = pod(plan, flavor), containers(plan, flavor)
        assert spec["hostNetwork"] is True and "hostPID" not in spec and "hostIPC" not in spec
        assert spec["priorityClassName"] == "system-node-critical"
        assert node(plan, flavor)["metadata"]["namespace"] == "kube-system"
        assert by_name["azurelustre"]["securityContext"] == {"privileged": True}
        assert "securityContext" not in by_name["liveness-probe"] and "securityContext" not in by_name["node-driver-registrar"]
        assert not spec.get("initContainers")
        mounts = {m["mountPath"]: m for m in by_name["azurelustre"]["volumeMounts"]}
        assert [p for p, m in mounts.items() if "mountPropagation" in m] == ["/var/lib/kubelet/"]
        assert mounts["/var/lib/kubelet/"]["mountPropagation"] == "Bidirectional"
        assert mounts["/etc/kubernetes/"]["readOnly"] is True and mounts["/etc/host-os-release"]["readOnly"] is True
        host_paths = {v["name"]: v["hostPath"]["path"] for v in spec["volumes"]}
        assert host_paths == {
            "socket-dir": "/var/lib/kubelet/plugins/azurelustre.csi.azure.com", "registration-dir": "/var/lib/kubelet/plugins_registry/",
            "mountpoint-dir": "/var/lib/kubelet/", "azure-cred": "/etc/kubernetes/", "host-dev": "/dev",
            "host-os-release": "/etc/os-release"}
        registrar_env = {e["name"]: e["value"] for e in by_name["node-driver-registrar"]["env"]}
        # kubelet finds the plugin's socket under the driver's name.
        assert registrar_env["DRIVER_REG_SOCK_PATH"] == f"/var/lib/kubelet/plugins/{lustre.AZURE_DRIVER}/csi.sock"


def test_it_runs_on_the_ubuntu_gpu_pools_and_not_on_the_azure_linux_system_pool(plan):
    selectors = {f: pod(plan, f)["nodeSelector"] for f in ("jammy", "noble")}
    assert selectors == {"jammy": {"kubernetes.io/os": "linux", "kubernetes.azure.com/os-sku-effective": "Ubuntu2204"},
                         "noble": {"kubernetes.io/os": "linux", "kubernetes.azure.com/os-sku-effective": "Ubuntu2404"}}
    # AKS's `Ubuntu` SKU is 22.04 or 24.04 by Kubernetes minor: one of the two DaemonSets matches every GPU node.
    gpu_pool = plan.one("azure-native:containerservice:AgentPool", f"{CLUSTER}-a100-agentpool").inputs
    assert gpu_pool["osSKU"] == "Ubuntu"
    assert gpu_pool["nodeTaints"] == ["nvidia.com/gpu=true:NoSchedule", "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"]
    assert all(pod(plan, f)["tolerations"] == [{"operator": "Exists"}] for f in selectors)  # tolerates every taint
    system = plan.one("azure-native:containerservice:ManagedCluster", f"{CLUSTER}-aks").inputs["agentPoolProfiles"]
    assert [p["osSKU"] for p in system] == ["AzureLinux"]


def test_the_node_plugin_may_read_and_patch_nodes_only(plan):
    role = plan.one("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", f"{NAME}-node-role").inputs
    assert role["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}]
    binding = plan.one("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", f"{NAME}-node-binding").inputs
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "csi-azurelustre-node-sa", "namespace": "kube-system"}]
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert all(pod(plan, f)["serviceAccountName"] == "csi-azurelustre-node-sa" for f in ("jammy", "noble"))
    # The account's token reaches only pods that ask for it (the plugin's): it may patch every node of the cluster.
    account = plan.one("kubernetes:core/v1:ServiceAccount", f"{NAME}-service-account").inputs
    assert account["automountServiceAccountToken"] is False


def test_every_object_is_valid_against_the_kubernetes_schema(plan):
    objects = [r for r in children(plan) if r.custom]
    assert len(objects) == 6
    for record in objects:
        validate(record.inputs)


def _gen_config() -> Any:
    return script_module(ROOT / "policies" / "aiinfra_policy" / "gen_config.py")


def test_the_policy_configs_exempt_exactly_these_daemonsets():
    assert _gen_config().AZURE_LUSTRE_CSI_NODE == list(azure_lustre.NODE_DAEMONSETS)
    for env in ("staging", "prod"):
        rule = json.loads((ROOT / "policies" / "config" / f"{env}.json").read_text())["k8s-no-privileged-pods"]
        assert rule == {"enforcementLevel": "mandatory", "privilegedWorkloads": list(azure_lustre.NODE_DAEMONSETS)}
    assert json.loads((ROOT / "policies" / "config" / "dev.json").read_text())["k8s-no-privileged-pods"] == "advisory"


@pytest.mark.parametrize("flavor", ["jammy", "noble"])
def test_the_planned_daemonsets_pass_the_rule_only_through_the_exemption(plan, flavor):
    props = node(plan, flavor)
    prod = json.loads((ROOT / "policies" / "config" / "prod.json").read_text())["k8s-no-privileged-pods"]
    assert run_resource("k8s-no-privileged-pods", DAEMONSET, props, prod) == []
    assert run_resource("k8s-no-privileged-pods", DAEMONSET, props) == ["hostNetwork is on", "container azurelustre is privileged"]
