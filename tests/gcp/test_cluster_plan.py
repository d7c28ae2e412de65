"""GKE: private nodes and endpoint (authorized networks as the opt-in), Workload Identity, secrets CMEK, Shielded
Nodes, release channel, Dataplane V2, CSI drivers per storage, a dedicated node service account, kubeconfig."""

from __future__ import annotations

import pulumi
import yaml
from gcp.support import COMPLIANCE, PROD_GCP, PROJECT, by_name, gcp_platform, plan_platform

from aiinfra.plan.echo import SECRET as SECRET_VALUE
from aiinfra.plan.echo import SIG as SECRET_SIG
from aiinfra.plan.runtime import UNKNOWN, PlanResult, run_program
from components.gcp.cluster import kubeconfig
from components.spec import load_platform


def test_private_nodes_and_private_endpoint_by_default(prod_plan: PlanResult) -> None:
    gke = by_name(prod_plan, "prod-us-central1-gke")
    assert gke["privateClusterConfig"] == {"enablePrivateNodes": True, "enablePrivateEndpoint": True}
    assert gke["masterAuthorizedNetworksConfig"] == {
        "cidrBlocks": [{"cidrBlock": "10.20.0.0/16", "displayName": "vpc"}], "gcpPublicCidrsAccessEnabled": False}


def test_private_endpoint_authorizes_listed_private_networks_from_any_region() -> None:
    plan = plan_platform(gcp_platform({"project": PROJECT, "regions": {"us-central1": {
        "network": {"cidr": "10.20.0.0/16"}, "cluster": {"authorized_cidrs": ["10.250.0.0/24"]}}}}))
    gke = by_name(plan, "test-us-central1-gke")
    assert gke["privateClusterConfig"] == {"enablePrivateNodes": True, "enablePrivateEndpoint": True,
                                           "masterGlobalAccessConfig": {"enabled": True}}
    assert gke["masterAuthorizedNetworksConfig"]["cidrBlocks"] == [
        {"cidrBlock": "10.20.0.0/16", "displayName": "vpc"}, {"cidrBlock": "10.250.0.0/24", "displayName": "authorized-0"}]


def test_public_endpoint_is_an_opt_in_limited_to_authorized_cidrs(prod_plan: PlanResult) -> None:
    gke = by_name(prod_plan, "prod-europe-west4-gke")
    assert gke["privateClusterConfig"] == {"enablePrivateNodes": True, "enablePrivateEndpoint": False}
    assert gke["masterAuthorizedNetworksConfig"]["cidrBlocks"] == [{"cidrBlock": "203.0.113.0/24", "displayName": "authorized-0"}]


def test_secrets_are_encrypted_with_the_region_key_and_identity_is_workload_identity(prod_plan: PlanResult) -> None:
    gke = by_name(prod_plan, "prod-us-central1-gke")
    assert gke["databaseEncryption"] == {"state": "ENCRYPTED", "keyName": "prod-us-central1-key-id"}
    assert gke["workloadIdentityConfig"] == {"workloadPool": f"{PROJECT}.svc.id.goog"}
    # GKE's service agent holds the key before the cluster asks GKE to use it
    cluster = prod_plan.one("gcp:container/cluster:Cluster", "prod-us-central1-gke")
    grant = prod_plan.one("gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember", "prod-us-central1-key-gke")
    assert grant.urn in cluster.dependencies


def test_cluster_hardening(prod_plan: PlanResult) -> None:
    gke = by_name(prod_plan, "prod-us-central1-gke")
    assert gke["enableShieldedNodes"] is True
    assert gke["releaseChannel"] == {"channel": "REGULAR"}
    assert gke["minMasterVersion"] == "1.34"
    assert gke["datapathProvider"] == "ADVANCED_DATAPATH"
    assert "networkPolicy" not in gke  # Dataplane V2 enforces NetworkPolicy; the Calico addon must stay off
    assert (gke["networkingMode"], gke["ipAllocationPolicy"]) == (
        "VPC_NATIVE", {"clusterSecondaryRangeName": "pods", "servicesSecondaryRangeName": "services"})
    assert "APISERVER" in gke["loggingConfig"]["enableComponents"]
    assert gke["securityPostureConfig"] == {"mode": "BASIC", "vulnerabilityMode": "VULNERABILITY_DISABLED"}
    assert gke["removeDefaultNodePool"] is True
    assert gke["deletionProtection"] is True
    assert gke["nodeLocations"] == ["us-central1-a", "us-central1-b", "us-central1-c"]


def test_csi_drivers_follow_the_region_storage(prod_plan: PlanResult, dev_plan: PlanResult) -> None:
    with_lustre = by_name(prod_plan, "prod-us-central1-gke")["addonsConfig"]
    assert with_lustre["lustreCsiDriverConfig"] == {"enabled": True, "enableLegacyLustrePort": True}
    assert with_lustre["gcsFuseCsiDriverConfig"] == {"enabled": True}
    without = by_name(prod_plan, "prod-europe-west4-gke")["addonsConfig"]
    assert without["lustreCsiDriverConfig"] == {"enabled": False}
    dev = by_name(dev_plan, "dev-us-central1-gke")
    assert "gatewayApiConfig" not in dev and by_name(prod_plan, "prod-us-central1-gke")["gatewayApiConfig"] == {"channel": "CHANNEL_STANDARD"}


def test_lustre_clusters_load_signed_kernel_modules_on_cpu_and_tpu_nodes_with_secure_boot(prod_plan: PlanResult) -> None:
    # Secure kernel module loading lets the Lustre client module load on Secure Boot CPU and TPU nodes; GPU nodes'
    # image loads modules already, and regions without Lustre keep GKE's default image.
    signed = {"nodeKernelModuleLoading": {"policy": "ENFORCE_SIGNED_MODULES"}}
    pools = {r.name: r.inputs["nodeConfig"] for r in prod_plan.of_type("gcp:container/nodePool:NodePool")}
    for name in ("prod-us-central1-system", "prod-us-central1-pretrain-0", "prod-us-central1-serve-0"):
        assert pools[name].get("linuxNodeConfig") == signed, name
        assert pools[name]["shieldedInstanceConfig"]["enableSecureBoot"] is True
    for name in ("prod-us-central1-train-pool", "prod-europe-west4-system", "prod-europe-west4-serve-pool"):
        assert "linuxNodeConfig" not in pools[name], name
        assert pools[name]["shieldedInstanceConfig"]["enableSecureBoot"] is True


def test_nodes_run_as_a_dedicated_least_privilege_service_account(prod_plan: PlanResult) -> None:
    account = by_name(prod_plan, "prod-us-central1-nodes-sa")
    email = f"{account['accountId']}@{PROJECT}.iam.gserviceaccount.com"
    assert account["accountId"] == "prod-us-central1-gke-nodes"
    roles = {r.inputs["role"] for r in prod_plan.of_type("gcp:projects/iAMMember:IAMMember") if r.name.startswith("prod-us-central1-nodes-sa-")}
    assert roles == {"roles/container.defaultNodeServiceAccount", "roles/artifactregistry.reader"}
    pools = [r for r in prod_plan.of_type("gcp:container/nodePool:NodePool") if r.name.startswith("prod-us-central1-")]
    assert len(pools) == 10  # system, 6 GPU pools, 2 + 1 TPU slices
    for config in [by_name(prod_plan, "prod-us-central1-gke")["nodeConfig"], *(p.inputs["nodeConfig"] for p in pools)]:
        assert config["serviceAccount"] == email
        assert not config["serviceAccount"].endswith("-compute@developer.gserviceaccount.com")
        assert config["oauthScopes"] == ["https://www.googleapis.com/auth/cloud-platform"]
        assert config["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
        assert config["shieldedInstanceConfig"] == {"enableSecureBoot": True, "enableIntegrityMonitoring": True}
        assert config["bootDiskKmsKey"] == "prod-us-central1-key-id"


def test_cluster_admins_get_container_admin_once_per_project(prod_plan: PlanResult) -> None:
    grants = [r.inputs for r in prod_plan.of_type("gcp:projects/iAMMember:IAMMember") if r.name.startswith("prod-gcp-project-admin-")]
    # sorted: the monitor records registrations as its worker threads finish them, not in construction order
    assert sorted((g["role"], g["member"]) for g in grants) == [
        ("roles/container.admin", "group:ml-platform@example.com"), ("roles/container.admin", "user:oncall@example.com")]


def test_system_pool_autoscales_between_the_spec_bounds(prod_plan: PlanResult, dev_plan: PlanResult) -> None:
    system = prod_plan.one("gcp:container/nodePool:NodePool", "prod-us-central1-system")
    assert system.inputs["name"] == "system"
    assert system.inputs["autoscaling"] == {"totalMinNodeCount": 2, "totalMaxNodeCount": 5, "locationPolicy": "BALANCED"}
    assert system.inputs["initialNodeCount"] == 1  # per zone: 3 zones cover the minimum of 2
    assert system.inputs["nodeConfig"]["machineType"] == "e2-standard-4"
    assert set(system.ignoreChanges) == {"initialNodeCount", "nodeCount"}
    dev = dev_plan.one("gcp:container/nodePool:NodePool", "dev-us-central1-system").inputs
    assert dev["autoscaling"]["totalMaxNodeCount"] == 2
    assert by_name(dev_plan, "dev-us-central1-gke")["deletionProtection"] is False


def test_clusters_are_pulumi_protected_outside_dev_but_not_retained(prod_plan: PlanResult, dev_plan: PlanResult) -> None:
    prod = prod_plan.of_type("gcp:container/cluster:Cluster")
    assert {r.name for r in prod} == {"prod-us-central1-gke", "prod-europe-west4-gke"}
    for cluster in prod:
        assert (cluster.protect, cluster.retainOnDelete, cluster.inputs["deletionProtection"]) == (True, False, True)
        assert set(cluster.ignoreChanges) == {"nodeConfig", "initialNodeCount"}
    dev = dev_plan.one("gcp:container/cluster:Cluster", "dev-us-central1-gke")
    assert (dev.protect, dev.retainOnDelete) == (False, False)


def test_kubeconfig_uses_the_gke_auth_plugin_and_is_a_secret() -> None:
    spec = load_platform(gcp_platform(PROD_GCP, environment="prod", compliance=COMPLIANCE))
    seen: dict[str, object] = {}

    def program() -> None:
        from components.compose import gcp as compose_gcp

        result = compose_gcp.build(spec, spec.clouds.gcp)
        handle = result.clusters[0]
        seen["handle"] = handle
        pulumi.export("kubeconfig", handle.kubeconfig)
        pulumi.export("outputs", result.outputs)

    plan = run_program(program, project="ai-infra", stack="prod")
    # endpoint and CA are known only after the cluster exists: the preview shows an unknown secret
    assert plan.outputs["kubeconfig"] == {SECRET_SIG: SECRET_VALUE, "value": UNKNOWN}
    handle = seen["handle"]
    assert [type(p).__name__ for p in handle.node_pools] == ["GpuPool"] * 6 + ["TpuSlice"] * 2
    inference = plan.outputs["outputs"]["us-central1"]["inference"]
    assert inference["neg"] == "prod-us-central1-inference"


def test_kubeconfig_authenticates_through_the_exec_plugin_only() -> None:
    config = yaml.safe_load(kubeconfig("prod-us-central1", "10.20.0.2", "Q0E="))
    assert config["clusters"][0]["cluster"] == {"server": "https://10.20.0.2", "certificate-authority-data": "Q0E="}
    assert config["current-context"] == "prod-us-central1"
    user = config["users"][0]["user"]
    assert list(user) == ["exec"]  # no token, no client certificate
    assert (user["exec"]["command"], user["exec"]["apiVersion"]) == ("gke-gcloud-auth-plugin", "client.authentication.k8s.io/v1beta1")
    assert user["exec"]["provideClusterInfo"] is True
