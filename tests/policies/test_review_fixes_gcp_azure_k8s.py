"""Review findings on the GCP, Azure and Kubernetes rules: each case plans the typed SDK classes on the mock runtime
(so the rule reads the wire shape the engine sends) and asserts the violation message, or its absence."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pulumi_azure_native as azure
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s
import pytest
from policy_helpers import RULES, UNKNOWN, run_resource, unknown_reported

from aiinfra.plan.runtime import run_program
from aiinfra_policy.registry import type_matches

SA = "nodes@p.iam.gserviceaccount.com"
DEFAULT_SA = "default node pool: nodes use the default compute service account (project Editor)"


def check(rule: str, build: Callable[[], None], name: str) -> list[str]:
    """The violations `rule` reports on resource `name` as `build` registers it through the SDK classes."""
    [(type_, inputs)] = [(r.type, r.inputs) for r in run_program(build, project="p", stack="s").resources if r.name == name]
    return run_resource(rule, type_, inputs, resource_name=name)


def each(rule: str, name: str, builds: dict[object, Callable[[], None]]) -> dict[object, list[str]]:
    """case -> the violations of `rule` on `name` as that case's build registers it."""
    return {case: check(rule, build, name) for case, build in builds.items()}


# 1. AKS networkPolicy "none" is the enum value for no enforcement.
def test_aks_network_policy_none_is_no_policy() -> None:
    def build(engine: str) -> Callable[[], None]:
        return lambda: azure.containerservice.ManagedCluster(
            "aks", resource_group_name="rg", dns_prefix="aks",
            network_profile=azure.containerservice.ContainerServiceNetworkProfileArgs(network_policy=engine))
    engines = ("none", "cilium", "calico", "azure")
    assert each("azure-aks-network-policy", "aks", {e: build(e) for e in engines}) == {
        "none": ["networkProfile.networkPolicy is none: NetworkPolicies are not enforced"], "cilium": [], "calico": [], "azure": []}


# 2. Autopilot: GKE provisions the nodes, so there is no default pool; the nodes' account is the auto-provisioning one.
def autopilot(account: str | None) -> Callable[[], None]:
    def build() -> None:
        gcp.container.Cluster("gke", location="europe-west4", enable_autopilot=True, cluster_autoscaling=(
            gcp.container.ClusterClusterAutoscalingArgs(auto_provisioning_defaults=gcp.container.ClusterClusterAutoscalingAutoProvisioningDefaultsArgs(
                service_account=account)) if account else None))
    return build


def test_autopilot_has_no_default_pool_and_workload_identity_is_always_on() -> None:
    assert check("gcp-gke-node-service-account", autopilot(SA), "gke") == []
    assert check("gcp-gke-shielded-nodes", autopilot(SA), "gke") == []
    assert check("gcp-gke-workload-identity", autopilot(SA), "gke") == []
    assert check("gcp-gke-node-service-account", autopilot(None), "gke") == [
        "Autopilot nodes (clusterAutoscaling.autoProvisioningDefaults): nodes use the default compute service account (project Editor)"]
    # A Standard cluster keeping its default pool is still checked.
    standard = lambda: gcp.container.Cluster("gke", location="europe-west4", initial_node_count=1)  # noqa: E731
    assert check("gcp-gke-node-service-account", standard, "gke") == [DEFAULT_SA]


# 3. A public endpoint open to every Google Cloud public IP.
def test_gke_public_endpoint_open_to_google_cloud_ips() -> None:
    def build(gcp_access: bool) -> Callable[[], None]:
        return lambda: gcp.container.Cluster(
            "gke", location="europe-west4", initial_node_count=1, remove_default_node_pool=True,
            private_cluster_config=gcp.container.ClusterPrivateClusterConfigArgs(enable_private_nodes=True),
            master_authorized_networks_config=gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
                cidr_blocks=[gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(cidr_block="203.0.113.0/24")],
                gcp_public_cidrs_access_enabled=gcp_access))
    assert each("gcp-gke-private-cluster", "gke", {False: build(False), True: build(True)}) == {False: [], True: [
        "the public control plane endpoint admits every Google Cloud public IP (masterAuthorizedNetworksConfig.gcpPublicCidrsAccessEnabled is true)"]}


# 4. Multi-NIC TPU VMs: every networkConfigs entry counts.
def test_tpu_vm_network_configs_are_each_checked() -> None:
    def build(*externals: bool) -> Callable[[], None]:
        return lambda: gcp.tpu.V2Vm(
            "tpu", zone="europe-west4-a", runtime_version="v2-alpha-tpuv6e", accelerator_type="v6e-8",
            service_account=gcp.tpu.V2VmServiceAccountArgs(email=SA),
            network_configs=[gcp.tpu.V2VmNetworkConfigArgs(network=f"n{i}", subnetwork=f"s{i}", enable_external_ips=external)
                             for i, external in enumerate(externals)])
    assert each("gcp-tpu-vm-no-external-ip", "tpu", {"private": build(False, False), "second NIC public": build(False, True)}) == {
        "private": [], "second NIC public": ["the TPU VM has networkConfigs.1.enableExternalIps True; its workers may get external IPs"]}


# 5. Only symmetric encryption keys rotate automatically.
def test_kms_rotation_applies_to_symmetric_keys_only() -> None:
    def build(purpose: str | None) -> Callable[[], None]:
        return lambda: gcp.kms.CryptoKey("key", key_ring="ring", purpose=purpose)
    unrotated = ["rotation period is unset; rotate at least every 90 days (7776000s)"]
    purposes = ("ASYMMETRIC_SIGN", "MAC", None, "ENCRYPT_DECRYPT")
    assert each("gcp-kms-key-rotation", "key", {p: build(p) for p in purposes}) == {
        "ASYMMETRIC_SIGN": [], "MAC": [], None: unrotated, "ENCRYPT_DECRYPT": unrotated}


# 6. AWS Load Balancer Controller Services are internal unless annotated internet-facing.
PUBLIC = "a LoadBalancer Service without an internal annotation gets a public address"
FACING = "service.beta.kubernetes.io/aws-load-balancer-scheme is internet-facing: the load balancer gets a public address"
AWS = "service.beta.kubernetes.io/aws-load-balancer-"
LBC = "service.k8s.aws/nlb"


def service(annotations: dict, lb_class: str | None = None) -> Callable[[], None]:
    return lambda: k8s.core.v1.Service("svc", metadata=k8s.meta.v1.ObjectMetaArgs(annotations=annotations or None),
                                       spec=k8s.core.v1.ServiceSpecArgs(type="LoadBalancer", load_balancer_class=lb_class,
                                                                        ports=[k8s.core.v1.ServicePortArgs(port=443)]))


def test_aws_load_balancer_controller_services_default_to_internal() -> None:
    assert each("k8s-internal-load-balancer", "svc", {
        "class": service({}, LBC), "type external": service({f"{AWS}type": "external"}), "type nlb-ip": service({f"{AWS}type": "nlb-ip"}),
    }) == {"class": [], "type external": [], "type nlb-ip": []}


def test_aws_load_balancer_controller_services_annotated_public_are_reported() -> None:
    assert each("k8s-internal-load-balancer", "svc", {
        "internet-facing": service({f"{AWS}type": "external", f"{AWS}scheme": "internet-facing"}),
        # The scheme annotation wins over the deprecated internal one.
        "scheme wins": service({f"{AWS}internal": "true", f"{AWS}scheme": "internet-facing"}, LBC),
        "internal false": service({f"{AWS}internal": "false"}, LBC),
        "legacy provider nlb": service({f"{AWS}type": "nlb"}),  # the in-tree cloud provider's NLB, public by default
        "plain": service({}),
    }) == {"internet-facing": [FACING], "scheme wins": [FACING], "internal false": [PUBLIC], "legacy provider nlb": [PUBLIC], "plain": [PUBLIC]}


def test_an_unknown_controller_annotation_is_reported_as_unknown() -> None:
    for given in ({f"{AWS}type": UNKNOWN}, {f"{AWS}type": "external", f"{AWS}internal": UNKNOWN}):
        props = {"spec": {"type": "LoadBalancer"}, "metadata": {"annotations": given}}
        assert "aws-load-balancer-" in unknown_reported("k8s-internal-load-balancer", "kubernetes:core/v1:Service", props)


# 7. Public grants through ACLs, IAM policies, KMS keys and Cloud Run jobs.
POLICY = json.dumps({"bindings": [{"role": "roles/viewer", "members": ["user:a@example.com", "allUsers"]}]})


def test_public_grants_of_every_iam_and_acl_shape() -> None:
    assert each("gcp-no-public-iam-members", "r", {
        "entity": lambda: gcp.storage.BucketAccessControl("r", bucket="b", entity="allUsers", role="READER"),
        "named entity": lambda: gcp.storage.BucketAccessControl("r", bucket="b", entity="user-a@example.com", role="READER"),
        "default object": lambda: gcp.storage.DefaultObjectAccessControl("r", bucket="b", entity="allAuthenticatedUsers", role="READER"),
        "role entities": lambda: gcp.storage.BucketACL("r", bucket="b", role_entities=["OWNER:project-owners-1", "READER:allUsers"]),
        "canned": lambda: gcp.storage.BucketACL("r", bucket="b", predefined_acl="publicRead"),
        "private canned": lambda: gcp.storage.BucketACL("r", bucket="b", predefined_acl="private"),
        "project policy": lambda: gcp.projects.IAMPolicy("r", project="p", policy_data=POLICY),
        "bucket policy": lambda: gcp.storage.BucketIAMPolicy("r", bucket="b", policy_data=POLICY),
        "kms key": lambda: gcp.kms.CryptoKeyIAMMember("r", crypto_key_id="k", role="roles/cloudkms.cryptoKeyDecrypter", member="allUsers"),
        "run job": lambda: gcp.cloudrunv2.JobIamMember("r", name="job", location="europe-west4", role="roles/run.invoker", member="allUsers"),
    }) == {
        "entity": ["grants READER to allUsers"], "named entity": [],
        "default object": ["grants READER to allAuthenticatedUsers"], "role entities": ["grants READER to allUsers"],
        "canned": ["grants READER (predefinedAcl publicRead) to allUsers"], "private canned": [],
        "project policy": ["grants roles/viewer to allUsers"], "bucket policy": ["grants roles/viewer to allUsers"],
        "kms key": ["grants roles/cloudkms.cryptoKeyDecrypter to allUsers"], "run job": ["grants roles/run.invoker to allUsers"]}


def test_every_type_the_public_grant_rule_reads_is_a_pulumi_gcp_resource() -> None:
    root = Path(gcp.__file__).parent
    tokens = {m for f in root.rglob("*.py") for m in re.findall(r'@pulumi\.type_token\("([^"]+)"\)', f.read_text())}
    types = RULES["gcp-no-public-iam-members"].types
    assert {t for t in types if "*" not in t} - tokens == set()  # the rest are patterns (gcp:*IamMember, ...)
    assert all(type_matches(types, t) for t in (
        "gcp:storage/bucketAccessControl:BucketAccessControl", "gcp:storage/defaultObjectAccessControl:DefaultObjectAccessControl",
        "gcp:storage/bucketACL:BucketACL", "gcp:projects/iAMPolicy:IAMPolicy", "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember",
        "gcp:cloudrunv2/jobIamMember:JobIamMember"))


# 8. A pool that sets no workload metadata mode gets GKE_METADATA in a Workload Identity cluster.
def test_node_pools_inherit_workload_identity() -> None:
    def build(mode: str | None) -> Callable[[], None]:
        return lambda: gcp.container.NodePool("pool", cluster="c", node_config=gcp.container.NodePoolNodeConfigArgs(
            service_account=SA, workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(mode=mode) if mode else None))
    modes = (None, "GKE_METADATA", "GCE_METADATA")
    assert each("gcp-gke-workload-identity", "pool", {m: build(m) for m in modes}) == {
        None: [], "GKE_METADATA": [], "GCE_METADATA": ["nodes expose the GCE metadata server to pods (workloadMetadataConfig.mode GCE_METADATA)"]}


# 9. Integrity monitoring, promised by the shielded-nodes rule, is checked (unset is on).
def test_shielded_nodes_check_integrity_monitoring() -> None:
    def build(integrity: bool | None) -> Callable[[], None]:
        return lambda: gcp.container.NodePool("pool", cluster="c", node_config=gcp.container.NodePoolNodeConfigArgs(
            service_account=SA, shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
                enable_secure_boot=True, enable_integrity_monitoring=integrity)))
    assert each("gcp-gke-shielded-nodes", "pool", {i: build(i) for i in (None, True, False)}) == {
        None: [], True: [], False: ["integrity monitoring is off"]}


# 10. Disabled firewall rules admit nothing; the message names the open range.
SSH = [gcp.compute.FirewallAllowArgs(protocol="tcp", ports=["22"])]


def firewall(ranges: list[str], disabled: bool | None = None) -> Callable[[], None]:
    return lambda: gcp.compute.Firewall("fw", network="n", allows=SSH, source_ranges=ranges, disabled=disabled)


def test_a_disabled_firewall_rule_admits_nothing() -> None:
    assert each("gcp-firewall-no-open-admin-ingress", "fw", {True: firewall(["0.0.0.0/0"], True), False: firewall(["0.0.0.0/0"], False)}) == {
        True: [], False: ["ingress from 0.0.0.0/0 to port 22"]}


def test_firewall_messages_name_the_open_range() -> None:
    assert each("gcp-firewall-no-open-admin-ingress", "fw", {"v6": firewall(["::/0"]), "both": firewall(["::/0", "0.0.0.0/0"])}) == {
        "v6": ["ingress from ::/0 to port 22"], "both": ["ingress from 0.0.0.0/0 and ::/0 to port 22"]}


# 11. keySource is case-insensitive.
def test_storage_cmk_key_source_is_case_insensitive() -> None:
    def build(source: str) -> Callable[[], None]:
        return lambda: azure.storage.StorageAccount("sa", resource_group_name="rg", kind="StorageV2", sku=azure.storage.SkuArgs(name="Standard_LRS"),
                                                    encryption=azure.storage.EncryptionArgs(key_source=source))
    sources = ("Microsoft.KeyVault", "microsoft.keyvault", "Microsoft.Keyvault", "Microsoft.Storage")
    assert each("azure-storage-cmk", "sa", {s: build(s) for s in sources}) == {
        "Microsoft.KeyVault": [], "microsoft.keyvault": [], "Microsoft.Keyvault": [], "Microsoft.Storage": ["the account uses Microsoft-managed keys"]}


AKS_CLUSTER = "azure-native:containerservice:ManagedCluster"
AKS_PUBLIC = "the API server is public without authorized IP ranges"


@pytest.mark.parametrize(("ranges", "expected"), [
    (["0.0.0.0/0"], [AKS_PUBLIC]),  # an "allowlist" of the whole internet is none
    (["10.0.0.0/8", "0.0.0.0/0"], [AKS_PUBLIC]),
    ([], [AKS_PUBLIC]),
    (["10.0.0.0/8"], []),
])
def test_aks_authorized_ip_ranges_must_not_include_the_internet(ranges: list, expected: list) -> None:
    props = {"apiServerAccessProfile": {"enablePrivateCluster": False, "authorizedIPRanges": ranges}}
    assert run_resource("azure-aks-private-api", AKS_CLUSTER, props) == expected


def test_aks_inline_agent_pool_profiles_with_public_ips_are_reported() -> None:
    # The system pool is always declared inline on the ManagedCluster, never as an AgentPool resource.
    pools = [{"name": "system", "enableNodePublicIP": True}, {"name": "gpu", "enableNodePublicIP": False}]
    assert run_resource("azure-agentpool-no-public-ip", AKS_CLUSTER, {"agentPoolProfiles": pools}) == [
        "pool system gives nodes public IPs"]
    assert run_resource("azure-agentpool-no-public-ip", AKS_CLUSTER, {"agentPoolProfiles": [{"name": "system"}]}) == []
