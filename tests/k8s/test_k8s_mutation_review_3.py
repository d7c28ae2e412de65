"""Behaviour of the Kubernetes layer that a third hand mutation review (of autoneg, azure_lustre, block_storage,
charts and netpol) found no test pinning, as the Kubernetes API would receive it: the autoneg controller's RBAC
(upstream's rules, and bindings that name roles that exist), its two replicas (spread over nodes, one drainable at a
time, the pods' token, user and probes); the Azure Lustre node plugin's wiring (every container sees the CSI socket
at the address the others dial, kubelet's registration and device directories are mounted, the node ID is the node's
name, the Lustre client is installed and has ten minutes to do so, the two DaemonSets select their own pods only and
wait for the CSIDriver and their RBAC); the Helm releases' bounded history and Kueue's namespace; and that with
Calico on a private AKS cluster the API server stays reachable through the `kubernetes` Service's ClusterIP."""

from __future__ import annotations

from typing import Any

import pytest
from k8s.test_autoneg import GCP, SERVING, children as autoneg_children, obj, plan_gcp
from k8s.test_azure_lustre_csi import CLOUDS, NAME as LUSTRE, containers, node, plan_csi, pod
from k8s.test_team_egress import allowed, calico_plan, egress

from aiinfra.plan.runtime import PlanResult
from components.k8s.charts import CLUSTER_AUTOSCALER
from components.spec import Cloud

RBAC = "kubernetes:rbac.authorization.k8s.io/v1"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
RELEASE = "kubernetes:helm.sh/v3:Release"
FLAVORS = ("jammy", "noble")


@pytest.fixture(scope="module")
def autoneg_plan() -> PlanResult:
    """test_autoneg's plan: the GCP composition with the global endpoint served from one of two regions."""
    return plan_gcp(GCP)


@pytest.fixture(scope="module")
def lustre_plan() -> PlanResult:
    """test_azure_lustre_csi's plan: an AKS cluster of a region with AMLFS, beside EKS and GKE."""
    return plan_csi(CLOUDS)


def rule(group: str, resources: list[str], verbs: list[str]) -> dict[str, Any]:
    return {"apiGroups": [group], "resources": resources, "verbs": verbs}


# --- autoneg --------------------------------------------------------------------------------------------------------


def test_autoneg_roles_grant_exactly_what_the_controller_calls(autoneg_plan):
    """deploy/autoneg.yaml's ClusterRole (a missing verb is a controller stuck on a forbidden call: the Service
    finalizer it removes on deletion, the status it patches), the metrics endpoint's token and access reviews, and
    the leader-election Lease it renews (update) and releases."""
    manager = obj(autoneg_plan, f"{RBAC}:ClusterRole", "manager-role").inputs["rules"]
    assert manager == [
        rule("", ["events"], ["create", "patch"]),
        rule("", ["services"], ["get", "list", "patch", "update", "watch"]),
        rule("", ["services/finalizers"], ["update"]),
        rule("", ["services/status"], ["get", "patch", "update"]),
        rule("networking.gke.io", ["servicenetworkendpointgroups"], ["get", "list", "watch"]),
    ]
    metrics = obj(autoneg_plan, f"{RBAC}:ClusterRole", "metrics-auth-role").inputs["rules"]
    assert metrics == [rule("authentication.k8s.io", ["tokenreviews"], ["create"]),
                       rule("authorization.k8s.io", ["subjectaccessreviews"], ["create"])]
    leader = obj(autoneg_plan, f"{RBAC}:Role", "leader-role").inputs
    assert leader["rules"] == [
        rule("coordination.k8s.io", ["leases"], ["get", "list", "watch", "create", "update", "patch", "delete"]),
        rule("", ["events"], ["create", "patch"]),
    ]


def test_autoneg_bindings_name_the_roles_they_grant(autoneg_plan):
    """A roleRef naming no role binds nothing (the API server accepts it): each binding names its own role, by kind."""
    roles = {(r.inputs["kind"], r.inputs["metadata"]["name"]): r.name
             for r in autoneg_children(autoneg_plan) if r.inputs.get("kind") in ("ClusterRole", "Role")}
    for kind, suffix, role in (("ClusterRoleBinding", "manager-binding", "manager-role"),
                               ("ClusterRoleBinding", "metrics-auth-binding", "metrics-auth-role"),
                               ("RoleBinding", "leader-binding", "leader-role")):
        ref = obj(autoneg_plan, f"{RBAC}:{kind}", suffix).inputs["roleRef"]
        assert ref["apiGroup"] == "rbac.authorization.k8s.io"
        assert roles[(ref["kind"], ref["name"])] == f"{SERVING}-autoneg-{role}", suffix


def test_autoneg_runs_two_replicas_on_two_nodes_and_a_drain_takes_one(autoneg_plan):
    deployment = obj(autoneg_plan, DEPLOYMENT, "controller").inputs["spec"]
    assert deployment["replicas"] == 2
    assert deployment["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}
    labels = deployment["template"]["metadata"]["labels"]
    selector = deployment["selector"]["matchLabels"]
    assert selector.items() <= labels.items()
    [term] = deployment["template"]["spec"]["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert term["podAffinityTerm"] == {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": selector}}
    # One of the two may be evicted at a time: minAvailable 2 of 2 would block every node drain.
    pdb = obj(autoneg_plan, "kubernetes:policy/v1:PodDisruptionBudget", "pdb").inputs["spec"]
    assert pdb == {"minAvailable": 1, "selector": {"matchLabels": selector}}


def test_autoneg_pod_has_its_token_its_user_and_probes_on_the_health_port(autoneg_plan):
    spec = obj(autoneg_plan, DEPLOYMENT, "controller").inputs["spec"]["template"]["spec"]
    # The service account mounts no token by default: the controller's pod asks for one (it calls the API server).
    assert spec["automountServiceAccountToken"] is True
    # The image's user (distroless nonroot); UID 0 with runAsNonRoot would be refused by kubelet.
    [container] = spec["containers"]
    for context in (spec["securityContext"], container["securityContext"]):
        assert (context["runAsUser"], context["runAsGroup"], context["runAsNonRoot"]) == (65532, 65532, True)
        assert context["seccompProfile"] == {"type": "RuntimeDefault"}
    # The image is built for amd64 only.
    assert spec["nodeSelector"] == {"iam.gke.io/gke-metadata-server-enabled": "true", "kubernetes.io/arch": "amd64",
                                    "kubernetes.io/os": "linux"}
    # controller-runtime serves /healthz and /readyz on --health-probe-bind-address.
    [health] = [a for a in container["args"] if a.startswith("--health-probe-bind-address=")]
    port = int(health.rsplit(":", 1)[1])
    assert {"name": "health", "containerPort": port} in container["ports"]
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": port}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": port}


def test_autoneg_objects_wait_for_their_namespace_and_the_controller_for_all_its_rbac(autoneg_plan):
    namespace = obj(autoneg_plan, "kubernetes:core/v1:Namespace", "namespace").urn
    for kind, suffix in (("kubernetes:core/v1:ServiceAccount", "service-account"), (f"{RBAC}:Role", "leader-role"),
                         (DEPLOYMENT, "controller"), ("kubernetes:policy/v1:PodDisruptionBudget", "pdb")):
        assert namespace in obj(autoneg_plan, kind, suffix).dependencies, suffix
    # A controller started before its bindings exist fails its first calls (and its metrics endpoint refuses scrapes).
    deployment = set(obj(autoneg_plan, DEPLOYMENT, "controller").dependencies)
    bindings = {obj(autoneg_plan, f"{RBAC}:{kind}", suffix).urn for kind, suffix in (
        ("ClusterRoleBinding", "manager-binding"), ("ClusterRoleBinding", "metrics-auth-binding"),
        ("RoleBinding", "leader-binding"))}
    assert bindings <= deployment


def test_every_autoneg_object_goes_with_its_cluster(autoneg_plan):
    """Destroying the cluster deletes its objects; the engine must not delete them one by one through an API server
    that is going away (the namespace included: its deletion would wait on every object in it)."""
    objects = [r for r in autoneg_children(autoneg_plan) if r.custom]
    assert len(objects) == 10
    [cluster] = {r.deletedWith for r in objects}
    assert cluster == autoneg_plan.one("ai-infra:gcp:Cluster", SERVING).urn


# --- the Azure Lustre CSI node plugin -------------------------------------------------------------------------------

SOCKET = "/csi/csi.sock"


def mounts(container: dict[str, Any]) -> dict[str, str]:
    return {m["mountPath"]: m["name"] for m in container["volumeMounts"]}


def env(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


@pytest.mark.parametrize("flavor", FLAVORS)
def test_lustre_containers_share_the_csi_socket_and_see_what_kubelet_and_the_modules_need(lustre_plan, flavor):
    by_name = containers(lustre_plan, flavor)
    liveness, registrar, plugin = by_name["liveness-probe"], by_name["node-driver-registrar"], by_name["azurelustre"]
    # The plugin listens where the sidecars dial, in the socket-dir volume each of them mounts at /csi.
    assert env(plugin)["CSI_ENDPOINT"] == f"unix://{SOCKET}"
    assert f"--csi-address={SOCKET}" in liveness["args"]
    assert env(registrar)["ADDRESS"] == SOCKET and "--csi-address=$(ADDRESS)" in registrar["args"]
    for container in (liveness, registrar, plugin):
        assert mounts(container)["/csi"] == "socket-dir", container["name"]
    # kubelet's plugin registration directory (the registrar's socket) and the host's devices (the Lustre modules').
    assert mounts(registrar)["/registration"] == "registration-dir"
    assert mounts(plugin)["/dev"] == "host-dev"
    # The liveness sidecar serves /healthz on the port the plugin's probe names.
    [port] = plugin["ports"]
    assert (port["name"], plugin["livenessProbe"]["httpGet"]) == ("healthz", {"path": "/healthz", "port": "healthz"})
    assert f"--health-port={port['containerPort']}" in liveness["args"]


@pytest.mark.parametrize(("flavor", "suffix"), [("jammy", "33-g79ddf99"), ("noble", "14-gbc76088")])
def test_lustre_plugin_installs_the_client_of_its_release_and_identifies_its_node(lustre_plan, flavor, suffix):
    plugin = containers(lustre_plan, flavor)["azurelustre"]
    variables = env(plugin)
    assert variables["AZURELUSTRE_CSI_INSTALL_LUSTRE_CLIENT"] == "yes"
    assert variables["CLIENT_SHA_SUFFIX"] == suffix  # the upstream manifest's, with its LUSTRE_VERSION
    # The CSI node ID is the Kubernetes node's name, from the variable the pod sets.
    assert variables["KUBE_NODE_NAME"] == {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}
    assert "--nodeid=$(KUBE_NODE_NAME)" in plugin["args"]
    # Installing the client takes minutes: the startup probe allows ten before liveness applies.
    startup = plugin["startupProbe"]
    assert startup["failureThreshold"] * startup["periodSeconds"] == 600
    # The Lustre modules are unloaded when the plugin stops.
    assert plugin["lifecycle"]["preStop"] == {"exec": {"command": ["/bin/sh", "-c", "lustre_rmmod"]}}


@pytest.mark.parametrize("flavor", FLAVORS)
def test_lustre_pod_mounts_its_token_and_host_paths_of_the_right_type(lustre_plan, flavor):
    spec = pod(lustre_plan, flavor)
    # The account mounts no token by default; the plugin removes its node's not-ready taint through the API.
    assert spec["automountServiceAccountToken"] is True
    types = {v["name"]: v["hostPath"]["type"] for v in spec["volumes"]}
    # The driver's socket directory does not exist on a new node: created, not required.
    assert types == {"socket-dir": "DirectoryOrCreate", "registration-dir": "Directory", "mountpoint-dir": "Directory",
                     "azure-cred": "DirectoryOrCreate", "host-dev": "Directory", "host-os-release": "File"}


def test_lustre_daemonsets_select_their_own_pods_and_wait_for_the_driver_and_their_rbac(lustre_plan):
    driver = lustre_plan.one("kubernetes:storage.k8s.io/v1:CSIDriver", f"{LUSTRE}-driver").urn
    binding = lustre_plan.one(f"{RBAC}:ClusterRoleBinding", f"{LUSTRE}-node-binding").urn
    templates = {}
    for flavor in FLAVORS:
        daemonset = lustre_plan.one(DAEMONSET, f"{LUSTRE}-node-{flavor}")
        spec = node(lustre_plan, flavor)["spec"]
        selector = spec["selector"]["matchLabels"]
        # The API server refuses a template whose labels the selector doesn't match.
        assert selector.items() <= spec["template"]["metadata"]["labels"].items()
        assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}
        assert {driver, binding} <= set(daemonset.dependencies)
        templates[flavor] = (selector, spec["template"]["metadata"]["labels"])
    # Neither selects the other's pods: two DaemonSets selecting the same pods would each count them as their own.
    (jammy, jammy_labels), (noble, noble_labels) = templates["jammy"], templates["noble"]
    assert not jammy.items() <= noble_labels.items() and not noble.items() <= jammy_labels.items()


# --- Helm releases --------------------------------------------------------------------------------------------------


def test_every_release_keeps_ten_revisions_and_kueue_creates_its_namespace(three_cloud_plan: PlanResult) -> None:
    """Helm keeps a Secret per revision: unbounded, every upgrade adds one to the release's namespace forever."""
    releases = three_cloud_plan.of_type(RELEASE)
    assert releases and {r.name: r.inputs["maxHistory"] for r in releases} == {r.name: 10 for r in releases}
    for release in releases:
        # Kueue's namespace is the chart's to create; the other releases go to namespaces the layer creates.
        assert release.inputs.get("createNamespace", False) is release.name.endswith("-kueue"), release.name


def test_each_eks_minor_gets_its_own_autoscaler_release() -> None:
    """The autoscaler's minor must match the cluster's (its README): a newer cluster minor never gets an older or the
    same chart release as the minor before it."""
    versions = [tuple(int(n) for n in chart.version.split("."))
                for _, chart in sorted(CLUSTER_AUTOSCALER.items(), key=lambda item: tuple(map(int, item[0].split("."))))]
    assert versions == sorted(set(versions))


# --- team egress with Calico ------------------------------------------------------------------------------------------


def test_calico_private_cluster_still_reaches_the_api_server_through_its_cluster_ip() -> None:
    """Opening the node subnet on 443 (a private API endpoint there) adds to the `kubernetes` Service's ClusterIP;
    engines that match before the Service is translated see that address only."""
    plan, net = calico_plan()
    rules = egress(plan, "azure")
    service = net.service_range(Cloud.AZURE)
    assert allowed(rules, str(service[1]), 443)
    assert not allowed(rules, str(service[2]), 443)
