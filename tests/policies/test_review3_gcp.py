"""GCP rules after the third review: public grants on every IAM resource type (by suffix) and on BigQuery dataset
access, firewall policy rules, TLS proxies without an SSL policy and regional SSL policies, Workbench and machine-image
VMs with external IPs, node auto-provisioning defaults, and the CIS GKE IDs. Each case plans the typed SDK classes on
the mock runtime (the wire shape the engine sends) or hands the rule wire-form props, and asserts the violations."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pulumi_gcp as gcp
import pytest
from policy_helpers import RULES, UNKNOWN, run_resource, unknown_reported

from aiinfra.plan.runtime import run_program

SA = "nodes@p.iam.gserviceaccount.com"
PUBLIC_IAM = "gcp-no-public-iam-members"
FIREWALL = "gcp-firewall-no-open-admin-ingress"
TLS = "gcp-ssl-policy-tls12"
PUBLIC_IP = "gcp-compute-no-public-ip"


def check(rule: str, build: Callable[[], None], name: str) -> list[str]:
    """The violations `rule` reports on resource `name` as `build` registers it through the SDK classes."""
    [(type_, inputs)] = [(r.type, r.inputs) for r in run_program(build, project="p", stack="s").resources if r.name == name]
    return run_resource(rule, type_, inputs, resource_name=name)


def each(rule: str, name: str, builds: dict[object, Callable[[], None]]) -> dict[object, list[str]]:
    return {case: check(rule, build, name) for case, build in builds.items()}


# --- (3) public grants: every IAM member, binding and policy type, decided by the type token's suffix ---

def test_public_grants_on_iam_types_the_pack_did_not_list() -> None:
    policy = json.dumps({"bindings": [{"role": "roles/aiplatform.user", "members": ["allAuthenticatedUsers"]}]})
    assert each(PUBLIC_IAM, "r", {
        "artifact registry": lambda: gcp.artifactregistry.RepositoryIamMember(
            "r", repository="models", location="us-central1", role="roles/artifactregistry.reader", member="allUsers"),
        "secret": lambda: gcp.secretmanager.SecretIamMember(
            "r", secret_id="hf-token", role="roles/secretmanager.secretAccessor", member="allUsers"),
        "service account": lambda: gcp.serviceaccount.IAMMember(
            "r", service_account_id="projects/p/serviceAccounts/a@p.iam.gserviceaccount.com",
            role="roles/iam.serviceAccountTokenCreator", member="allAuthenticatedUsers"),
        "vertex endpoint": lambda: gcp.vertex.AiEndpointIamMember(
            "r", endpoint="e", location="us-central1", role="roles/aiplatform.user", member="allUsers"),
        "bigquery dataset binding": lambda: gcp.bigquery.DatasetIamBinding(
            "r", dataset_id="d", role="roles/bigquery.dataViewer", members=["user:a@example.com", "allUsers"]),
        "pubsub topic": lambda: gcp.pubsub.TopicIAMMember("r", topic="t", role="roles/pubsub.publisher", member="allUsers"),
        "workbench policy": lambda: gcp.workbench.InstanceIamPolicy("r", name="nb", location="us-central1-a", policy_data=policy),
        "named member": lambda: gcp.secretmanager.SecretIamMember(
            "r", secret_id="hf-token", role="roles/secretmanager.secretAccessor", member="serviceAccount:" + SA),
    }) == {
        "artifact registry": ["grants roles/artifactregistry.reader to allUsers"],
        "secret": ["grants roles/secretmanager.secretAccessor to allUsers"],
        "service account": ["grants roles/iam.serviceAccountTokenCreator to allAuthenticatedUsers"],
        "vertex endpoint": ["grants roles/aiplatform.user to allUsers"],
        "bigquery dataset binding": ["grants roles/bigquery.dataViewer to allUsers"],
        "pubsub topic": ["grants roles/pubsub.publisher to allUsers"],
        "workbench policy": ["grants roles/aiplatform.user to allAuthenticatedUsers"],
        "named member": []}


def _iam_tokens() -> set[str]:
    root = Path(gcp.__file__).parent
    tokens = {m for f in root.rglob("*.py") for m in re.findall(r'@pulumi\.type_token\("([^"]+)"\)', f.read_text())}
    return {t for t in tokens if re.search(r":\w*(Iam|IAM)(Member|Binding|Policy)$", t)}


def test_every_iam_type_of_the_sdk_is_checked() -> None:
    tokens = _iam_tokens()
    assert len(tokens) > 450  # 474 in pulumi-gcp 10.2.0
    missed = []
    for token in sorted(tokens):
        kind = token.rsplit(":", 1)[1]
        props = ({"policyData": json.dumps({"bindings": [{"role": "roles/viewer", "members": ["allUsers"]}]})}
                 if kind.endswith("Policy") else
                 {"role": "roles/viewer", **({"member": "allUsers"} if kind.endswith("Member") else {"members": ["allUsers"]})})
        if run_resource(PUBLIC_IAM, token, props) != ["grants roles/viewer to allUsers"]:
            missed.append(token)
    assert missed == []


def test_iam_lookalikes_are_not_grants() -> None:
    # Removing a member is not granting it; an audit config grants nothing.
    assert run_resource(PUBLIC_IAM, "gcp:projects/iAMMemberRemove:IAMMemberRemove",
                        {"member": "allUsers", "role": "roles/viewer", "project": "p"}) == []
    assert run_resource(PUBLIC_IAM, "gcp:projects/iAMAuditConfig:IAMAuditConfig", {"service": "allServices"}) == []


def test_bigquery_dataset_access_to_everyone() -> None:
    assert each(PUBLIC_IAM, "r", {
        "special group": lambda: gcp.bigquery.DatasetAccess("r", dataset_id="d", role="READER", special_group="allAuthenticatedUsers"),
        "iam member": lambda: gcp.bigquery.DatasetAccess("r", dataset_id="d", role="roles/bigquery.dataViewer", iam_member="allUsers"),
        "project readers": lambda: gcp.bigquery.DatasetAccess("r", dataset_id="d", role="READER", special_group="projectReaders"),
        "inline": lambda: gcp.bigquery.Dataset("r", dataset_id="d", accesses=[
            gcp.bigquery.DatasetAccessArgs(role="OWNER", user_by_email=SA),
            gcp.bigquery.DatasetAccessArgs(role="READER", special_group="allAuthenticatedUsers")]),
        "inline private": lambda: gcp.bigquery.Dataset("r", dataset_id="d", accesses=[
            gcp.bigquery.DatasetAccessArgs(role="OWNER", user_by_email=SA)]),
    }) == {"special group": ["grants READER to allAuthenticatedUsers"], "iam member": ["grants roles/bigquery.dataViewer to allUsers"],
           "project readers": [], "inline": ["grants READER to allAuthenticatedUsers"], "inline private": []}


def test_an_unknown_member_is_not_passed() -> None:
    assert "member" in unknown_reported(PUBLIC_IAM, "gcp:secretmanager/secretIamMember:SecretIamMember",
                                        {"member": UNKNOWN, "role": "roles/secretmanager.secretAccessor"})


# --- (4) firewall policy rules: the same admin-port logic as VPC firewall rules ---

def ssh(**match: object) -> dict:
    return {"src_ip_ranges": ["0.0.0.0/0"], "layer4_configs": [{"ip_protocol": "tcp", "ports": ["22"]}], **match}


def network_rule(action: str = "allow", direction: str = "INGRESS", disabled: bool | None = None, **match: object) -> Callable[[], None]:
    return lambda: gcp.compute.NetworkFirewallPolicyRule("fw", firewall_policy="pol", priority=1000, action=action,
                                                         direction=direction, disabled=disabled, match=ssh(**match))


def test_network_firewall_policy_rules_open_to_the_internet() -> None:
    assert each(FIREWALL, "fw", {
        "ssh": network_rule(),
        "deny": network_rule("deny"),
        "goto_next": network_rule("goto_next"),
        "egress": network_rule(direction="EGRESS", dest_ip_ranges=["0.0.0.0/0"]),
        "disabled": network_rule(disabled=True),
        "internal": network_rule(src_ip_ranges=["10.0.0.0/8"]),
        "intra-vpc": network_rule(src_network_context="INTRA_VPC"),
        "v6": network_rule(src_ip_ranges=["::/0", "10.0.0.0/8"]),
        "all udp": network_rule(layer4_configs=[{"ip_protocol": "icmp"}, {"ip_protocol": "udp"}]),
        "all protocols": network_rule(layer4_configs=[{"ip_protocol": "all"}]),
        "rdp range": network_rule(layer4_configs=[{"ip_protocol": "tcp", "ports": ["443", "3000-4000"]}]),
        "inspected": network_rule("apply_security_profile_group", security_profile_group="//networksecurity.googleapis.com/x"),
    }) == {
        "ssh": ["ingress from 0.0.0.0/0 to port 22"], "deny": [], "goto_next": [], "egress": [], "disabled": [],
        "internal": [], "intra-vpc": [], "v6": ["ingress from ::/0 to port 22"],
        "all udp": ["ingress from 0.0.0.0/0 to all ports"], "all protocols": ["ingress from 0.0.0.0/0 to all ports"],
        "rdp range": ["ingress from 0.0.0.0/0 to port 3389"],
        "inspected": ["ingress from 0.0.0.0/0 to port 22 (inspected by a security profile group, but allowed)"]}


def test_regional_and_hierarchical_firewall_policy_rules() -> None:
    assert each(FIREWALL, "fw", {
        "regional": lambda: gcp.compute.RegionNetworkFirewallPolicyRule(
            "fw", firewall_policy="pol", region="us-central1", priority=1000, action="allow", direction="INGRESS", match=ssh()),
        "hierarchical": lambda: gcp.compute.FirewallPolicyRule(
            "fw", firewall_policy="locations/global/firewallPolicies/1", priority=1000, action="allow", direction="INGRESS",
            match=ssh(layer4_configs=[{"ip_protocol": "tcp", "ports": ["3389"]}])),
    }) == {"regional": ["ingress from 0.0.0.0/0 to port 22"], "hierarchical": ["ingress from 0.0.0.0/0 to port 3389"]}


def test_firewall_policies_with_rules_check_each_rule() -> None:
    rules = [{"priority": 100, "action": "deny", "match": ssh()},
             {"priority": 200, "action": "allow", "rule_name": "ssh-anywhere", "match": ssh()},  # direction unset: INGRESS
             {"priority": 300, "action": "allow", "match": ssh(src_ip_ranges=["35.235.240.0/20"])},  # IAP TCP forwarding
             {"priority": 400, "action": "allow", "match": ssh(layer4_configs=[{"ip_protocol": "all"}])}]
    assert each(FIREWALL, "fw", {
        "network": lambda: gcp.compute.NetworkFirewallPolicyWithRules("fw", rules=rules),
        "regional": lambda: gcp.compute.RegionNetworkFirewallPolicyWithRules("fw", region="us-central1", rules=rules),
        "hierarchical": lambda: gcp.compute.FirewallPolicyWithRules("fw", parent="organizations/1", short_name="fw", rules=rules),
    }) == dict.fromkeys(("network", "regional", "hierarchical"), [
        "rule ssh-anywhere: ingress from 0.0.0.0/0 to port 22", "rule 400: ingress from 0.0.0.0/0 to all ports"])


def test_an_unknown_source_range_of_a_policy_rule_is_not_passed() -> None:
    props = {"action": "allow", "direction": "INGRESS", "match": {"srcIpRanges": UNKNOWN, "layer4Configs": [{"ipProtocol": "tcp"}]}}
    assert "srcIpRanges" in unknown_reported(FIREWALL, "gcp:compute/networkFirewallPolicyRule:NetworkFirewallPolicyRule", props)


# --- (5) TLS: proxies without an SSL policy get Google's default (TLS 1.0, COMPATIBLE); regional SSL policies ---

NO_POLICY = "no sslPolicy: the proxy uses Google Cloud's default SSL policy (minimum TLS 1.0, profile COMPATIBLE)"


def test_tls_proxies_need_an_ssl_policy() -> None:
    assert each(TLS, "proxy", {
        "https": lambda: gcp.compute.TargetHttpsProxy("proxy", url_map="um", ssl_certificates=["cert"]),
        "https with policy": lambda: gcp.compute.TargetHttpsProxy("proxy", url_map="um", ssl_certificates=["cert"], ssl_policy="p"),
        "https with a new policy": lambda: gcp.compute.TargetHttpsProxy(
            "proxy", url_map="um", ssl_certificates=["cert"],
            ssl_policy=gcp.compute.SSLPolicy("pol", min_tls_version="TLS_1_2", profile="MODERN").id),
        "regional": lambda: gcp.compute.RegionTargetHttpsProxy("proxy", region="us-central1", url_map="um", ssl_certificates=["c"]),
        "ssl": lambda: gcp.compute.TargetSSLProxy("proxy", backend_service="bs", ssl_certificates=["cert"]),
        "ssl with policy": lambda: gcp.compute.TargetSSLProxy("proxy", backend_service="bs", ssl_certificates=["cert"], ssl_policy="p"),
    }) == {"https": [NO_POLICY], "https with policy": [], "https with a new policy": [], "regional": [NO_POLICY],
           "ssl": [NO_POLICY], "ssl with policy": []}
    # During preview a policy made in the same program has an unknown id: it is set, so the proxy passes.
    assert run_resource(TLS, "gcp:compute/targetHttpsProxy:TargetHttpsProxy", {"urlMap": "um", "sslPolicy": UNKNOWN}) == []


def test_regional_and_custom_ssl_policies() -> None:
    assert each(TLS, "pol", {
        "regional weak": lambda: gcp.compute.RegionSslPolicy("pol", region="us-central1", min_tls_version="TLS_1_0", profile="COMPATIBLE"),
        "regional default": lambda: gcp.compute.RegionSslPolicy("pol", region="us-central1"),
        "regional modern": lambda: gcp.compute.RegionSslPolicy("pol", region="us-central1", min_tls_version="TLS_1_2", profile="MODERN"),
        "custom rsa": lambda: gcp.compute.SSLPolicy("pol", min_tls_version="TLS_1_2", profile="CUSTOM", custom_features=[
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_RSA_WITH_AES_128_GCM_SHA256"]),
        "custom ecdhe": lambda: gcp.compute.SSLPolicy("pol", min_tls_version="TLS_1_2", profile="CUSTOM", custom_features=[
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"]),
    }) == {
        "regional weak": ["minimum TLS version is TLS_1_0; allowed: TLS_1_2, TLS_1_3", "profile COMPATIBLE allows weak ciphers"],
        "regional default": ["minimum TLS version is TLS_1_0; allowed: TLS_1_2, TLS_1_3", "profile COMPATIBLE allows weak ciphers"],
        "regional modern": [],
        "custom rsa": ["profile CUSTOM enables weak cipher suites TLS_RSA_WITH_AES_128_GCM_SHA256; use ECDHE suites only"],
        "custom ecdhe": []}


# --- (7) Workbench instances and VMs from machine images ---

def test_workbench_instances_get_a_public_ip_unless_disabled() -> None:
    def build(disable: bool | None) -> Callable[[], None]:
        return lambda: gcp.workbench.Instance("nb", location="us-central1-a", gce_setup=gcp.workbench.InstanceGceSetupArgs(
            machine_type="a3-highgpu-8g", disable_public_ip=disable))
    assert each(PUBLIC_IP, "nb", {
        None: build(None), False: build(False), True: build(True),
        "no gce setup": lambda: gcp.workbench.Instance("nb", location="us-central1-a"),
    }) == {None: ["gceSetup.disablePublicIp is unset, so the Workbench instance gets an external IP address; set it true"],
           False: ["gceSetup.disablePublicIp is False, so the Workbench instance gets an external IP address; set it true"],
           True: [],
           "no gce setup": ["gceSetup.disablePublicIp is unset, so the Workbench instance gets an external IP address; set it true"]}


def test_vms_from_machine_images_with_access_configs() -> None:
    def build(access: bool) -> Callable[[], None]:
        return lambda: gcp.compute.InstanceFromMachineImage("vm", zone="us-central1-a", source_machine_image="img", network_interfaces=[
            gcp.compute.InstanceFromMachineImageNetworkInterfaceArgs(network="n", access_configs=[{}] if access else None)])
    assert each(PUBLIC_IP, "vm", {True: build(True), False: build(False)}) == {
        True: ["network interface 0 has accessConfigs, so the VM gets an external IPv4 address"], False: []}


# --- (2) node auto-provisioning: GKE-created pools take autoProvisioningDefaults ---

def nap(account: str | None = None, secure_boot: bool | None = None, enabled: bool = True) -> Callable[[], None]:
    def build() -> None:
        defaults = gcp.container.ClusterClusterAutoscalingAutoProvisioningDefaultsArgs(
            service_account=account, shielded_instance_config=(
                gcp.container.ClusterClusterAutoscalingAutoProvisioningDefaultsShieldedInstanceConfigArgs(enable_secure_boot=secure_boot)
                if secure_boot is not None else None))
        gcp.container.Cluster("gke", location="us-central1", initial_node_count=1, remove_default_node_pool=True,
                              cluster_autoscaling=gcp.container.ClusterClusterAutoscalingArgs(
                                  enabled=enabled, auto_provisioning_defaults=defaults, resource_limits=[
                                      {"resource_type": "cpu", "maximum": 100}, {"resource_type": "memory", "maximum": 1000}]))
    return build


NAP = "auto-provisioned node pools (clusterAutoscaling.autoProvisioningDefaults): "


def test_auto_provisioned_pools_use_the_defaults_service_account() -> None:
    assert each("gcp-gke-node-service-account", "gke", {
        "unset": nap(), "default": nap("default"), "dedicated": nap(SA), "nap off": nap(enabled=False),
    }) == {"unset": [NAP + "nodes use the default compute service account (project Editor)"],
           "default": [NAP + "nodes use the default compute service account (project Editor)"],
           "dedicated": [], "nap off": []}


def test_auto_provisioned_pools_need_secure_boot() -> None:
    assert each("gcp-gke-shielded-nodes", "gke", {"unset": nap(SA), "on": nap(SA, True), "nap off": nap(SA, enabled=False)}) == {
        "unset": [NAP + "secure boot is off"], "on": [], "nap off": []}


# --- (14) CIS GKE Benchmark v1.7.0 IDs ---

@pytest.mark.parametrize(("name", "ids"), [
    ("gcp-gke-workload-identity", ("GKE 5.2.2", "GKE 5.4.1")),  # Workload Identity; GKE Metadata Server
    ("gcp-gke-node-service-account", ("GKE 5.2.1",)),  # not the Compute Engine default service account
    ("gcp-gke-private-cluster", ("GKE 5.6.5", "GKE 5.6.3")),  # private nodes; authorized networks (not 5.6.4)
])
def test_cis_gke_ids(name: str, ids: tuple[str, ...]) -> None:
    assert RULES[name].frameworks["CIS"] == ids
