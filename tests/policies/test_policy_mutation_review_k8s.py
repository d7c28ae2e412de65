"""Pins behaviour of the Kubernetes workload rules, the web application firewall stack rule and the accelerator pool
reading (kubernetes.py, endpoints_waf.py, pools.py) that the other policy tests left free to change. Each case came
from a mutation review: a small edit to the rule (a pod-spec path, an allowed value, a default) that no test caught.
Props are in the wire form the engine sends (camelCase, as the provider SDKs name them)."""

from __future__ import annotations

import pytest
from policy_helpers import resource, run_resource, run_stack

PRIVILEGED = "k8s-no-privileged-pods"


def pod(**container: object) -> dict:
    return {"containers": [{"name": "app", "image": "app:1", **container}]}


# --- kubernetes.py ---

def test_a_cronjobs_pod_template_is_checked() -> None:
    props = {"metadata": {"name": "nightly"}, "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": {
        "spec": pod(securityContext={"privileged": True})}}}}}
    assert run_resource(PRIVILEGED, "kubernetes:batch/v1:CronJob", props) == ["container app is privileged"]
    assert run_resource(PRIVILEGED, "kubernetes:batch/v1:CronJobPatch", props) == ["container app is privileged"]


def test_a_rayjobs_submitter_pod_template_is_checked() -> None:
    """KubeRay runs `ray job submit` in a pod of spec.submitterPodTemplate: a privileged submitter is a privileged pod."""
    head = {"template": {"spec": pod()}}
    props = {"metadata": {"name": "train"}, "spec": {"entrypoint": "python train.py", "rayClusterSpec": {"headGroupSpec": head},
                                                     "submitterPodTemplate": {"spec": pod(securityContext={"privileged": True})}}}
    assert run_resource(PRIVILEGED, "kubernetes:ray.io/v1:RayJob", props) == ["container app is privileged"]


def test_cloud_tpu_chips_are_accelerators_that_need_limits() -> None:
    requests_only = {"spec": {"template": {"spec": pod(resources={"requests": {"google.com/tpu": "4"}})}}}
    assert run_resource("k8s-gpu-limits", "kubernetes:batch/v1:Job", requests_only) == [
        "container app requests google.com/tpu without a limit"]
    tolerates = {"spec": {"template": {"spec": {**pod(), "tolerations": [{"key": "google.com/tpu", "operator": "Exists"}]}}}}
    assert run_resource("k8s-gpu-limits", "kubernetes:batch/v1:Job", tolerates) == [
        "tolerates the accelerator taint but requests no accelerator: it would squat on GPU nodes"]
    limited = {"spec": {"template": {"spec": {**pod(resources={"limits": {"google.com/tpu": "4"}}),
                                              "tolerations": [{"key": "google.com/tpu", "operator": "Exists"}]}}}}
    assert run_resource("k8s-gpu-limits", "kubernetes:batch/v1:Job", limited) == []


@pytest.mark.parametrize("annotation", ["networking.gke.io/load-balancer-type", "cloud.google.com/load-balancer-type"])
def test_gke_internal_load_balancer_annotations_old_and_new(annotation: str) -> None:
    service = {"metadata": {"name": "api", "annotations": {annotation: "Internal"}}, "spec": {"type": "LoadBalancer"}}
    assert run_resource("k8s-internal-load-balancer", "kubernetes:core/v1:Service", service) == []


def test_init_containers_are_checked_like_containers() -> None:
    spec = {**pod(), "initContainers": [{"name": "setup", "image": "setup:1", "securityContext": {"privileged": True},
                                         "resources": {"requests": {"nvidia.com/gpu": "1"}}}]}
    deployment = {"metadata": {"name": "api"}, "spec": {"template": {"spec": spec}}}
    assert run_resource(PRIVILEGED, "kubernetes:apps/v1:Deployment", deployment) == ["container setup is privileged"]
    assert run_resource("k8s-gpu-limits", "kubernetes:apps/v1:Deployment", deployment) == [
        "container setup requests nvidia.com/gpu without a limit"]


@pytest.mark.parametrize(("legacy", "expected"), [
    ("false", ["a LoadBalancer Service without an internal annotation gets a public address"]),
    ("0", ["a LoadBalancer Service without an internal annotation gets a public address"]),
    ("F", ["a LoadBalancer Service without an internal annotation gets a public address"]),
    (None, []),  # the AWS Load Balancer Controller's default scheme: internal
    ("true", []),
])
def test_aws_load_balancer_controller_reads_the_legacy_internal_annotation_as_a_bool(legacy: str | None, expected: list[str]) -> None:
    """The controller parses service.beta.kubernetes.io/aws-load-balancer-internal with Go's strconv.ParseBool: 0, f and
    F are false (internet-facing) as much as false is."""
    annotations = {"service.beta.kubernetes.io/aws-load-balancer-type": "external"}
    if legacy is not None:
        annotations["service.beta.kubernetes.io/aws-load-balancer-internal"] = legacy
    service = {"metadata": {"name": "api", "annotations": annotations}, "spec": {"type": "LoadBalancer"}}
    assert run_resource("k8s-internal-load-balancer", "kubernetes:core/v1:Service", service) == expected


# --- endpoints_waf.py ---

def test_a_backend_services_default_scheme_is_external_when_global_and_internal_when_regional() -> None:
    """pulumi-gcp: loadBalancingScheme defaults to EXTERNAL_MANAGED on a BackendService, INTERNAL on a RegionBackendService."""
    global_ = resource("gcp:compute/backendService:BackendService", {"protocol": "HTTP"}, "global")
    regional = resource("gcp:compute/regionBackendService:RegionBackendService", {"protocol": "HTTP", "region": "europe-west4"}, "regional")
    assert run_stack("global-endpoint-waf", [global_, regional]) == [(global_.urn, (
        "backend service of an external load balancer (loadBalancingScheme EXTERNAL_MANAGED, protocol HTTP) has no Cloud "
        "Armor security policy (securityPolicy unset); global_endpoint.waf: false creates none; set securityPolicy to a "
        "CLOUD_ARMOR policy with preconfigured WAF rules"))]


GATEWAY = "azure-native:network:ApplicationGateway"
NO_GATEWAY_WAF = ("Application Gateway with a public frontend IP (fe) has no WAF: no WAF policy (firewallPolicy) on it or on "
                  "every listener; use tier WAF_v2 with a firewallPolicy (an ApplicationGatewayWebApplicationFirewallPolicy)")


@pytest.mark.parametrize(("sku", "extra", "expected"), [
    ({"name": "WAF_Medium", "tier": "WAF"}, {"webApplicationFirewallConfiguration": {"enabled": True, "firewallMode": "Prevention",
                                                                                   "ruleSetType": "OWASP", "ruleSetVersion": "3.0"}}, []),
    ({"name": "WAF_Medium", "tier": "WAF"}, {}, [NO_GATEWAY_WAF]),
    ({"name": "WAF_v2", "tier": "WAF_v2"}, {"httpListeners": []}, [NO_GATEWAY_WAF]),  # no listener carries a policy either
    ({"name": "WAF_v2"}, {"firewallPolicy": {"id": "/p/waf"}}, []),  # tier unset: the sku name tells it
    ({"name": "Standard_v2"}, {}, ["Application Gateway with a public frontend IP (fe) has no WAF: sku tier Standard_v2; use "
                                   "tier WAF_v2 with a firewallPolicy (an ApplicationGatewayWebApplicationFirewallPolicy)"]),
])
def test_application_gateway_waf_tiers(sku: dict, extra: dict, expected: list[str]) -> None:
    gateway = resource(GATEWAY, {"sku": sku, "frontendIPConfigurations": [{"name": "fe", "publicIPAddress": {"id": "/pip"}}], **extra}, "agw")
    assert run_stack("global-endpoint-waf", [gateway]) == [(gateway.urn, m) for m in expected]


def test_a_front_door_custom_domain_left_out_of_the_waf_policy_is_reported() -> None:
    base = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Cdn/profiles/fd1"
    profile = resource("azure-native:cdn:Profile", {"name": "fd1", "sku": {"name": "Premium_AzureFrontDoor"}, "id": base}, "fd")
    endpoint = resource("azure-native:cdn:AFDEndpoint", {"profileName": "fd1", "id": base + "/afdEndpoints/ep"}, "ep")
    domain = resource("azure-native:cdn:AFDCustomDomain", {"profileName": "fd1", "hostName": "www.example.com",
                                                          "id": base + "/customDomains/www"}, "www")

    def policy(*ids: str):
        return resource("azure-native:cdn:SecurityPolicy", {"profileName": "fd1", "parameters": {
            "type": "WebApplicationFirewall", "associations": [{"domains": [{"id": i} for i in ids]}]}}, "waf-link")
    assert run_stack("global-endpoint-waf", [profile, endpoint, domain, policy(endpoint.props["id"])]) == [(profile.urn, (
        "Front Door profile (Premium_AzureFrontDoor): its WAF security policies (waf-link) leave out custom domain www, "
        "served without the WAF; add them to a WebApplicationFirewall security policy's associations"))]
    assert run_stack("global-endpoint-waf", [profile, endpoint, domain, policy(endpoint.props["id"], domain.props["id"])]) == []


# --- pools.py ---

H100_NODE = {"machineType": "a3-highgpu-8g"}


@pytest.mark.parametrize(("pool", "expected"), [
    # A zonal cluster's nodeLocations leave out its own zone, which the pool's nodes use too: 2 zones.
    ({"name": "gpu", "nodeCount": 2, "nodeConfig": H100_NODE},
     ["node pool gpu: pool can scale to 32 accelerators (2 zones x 2 x 8); the cap is 16"]),
    # nodeCount is the pool's size now; initialNodeCount only what it was created with.
    ({"name": "gpu", "nodeCount": 1, "initialNodeCount": 4, "nodeConfig": H100_NODE}, []),
])
def test_gke_inline_pool_counts_per_zone(pool: dict, expected: list[str]) -> None:
    cluster = {"location": "europe-west4-a", "nodeLocations": ["europe-west4-b"], "nodePools": [pool]}
    assert run_resource("gpu-cap-per-pool", "gcp:container/cluster:Cluster", cluster, {"maxGpusPerPool": 16}) == expected


def test_an_aks_pool_without_autoscaling_keeps_its_count_running_in_dev() -> None:
    pool = {"vmSize": "Standard_NC24ads_A100_v4", "count": 2, "nodeTaints": ["nvidia.com/gpu=true:NoSchedule"]}
    assert run_resource("dev-pools-spot-or-scale-to-zero", "azure-native:containerservice:AgentPool", pool,
                        {"environment": "dev"}) == [
        "dev a100-80gb pool keeps 2 on-demand nodes running; use spot or min 0"]


def test_node_auto_provisioning_tpu_limits_are_accelerators() -> None:
    cluster = {"location": "us-east5", "removeDefaultNodePool": True, "clusterAutoscaling": {"enabled": True, "resourceLimits": [
        {"resourceType": "cpu", "maximum": 1000}, {"resourceType": "tpu-v5p-slice", "maximum": 128}]}}
    assert run_resource("allowed-accelerators", "gcp:container/cluster:Cluster", cluster, {"allowedAccelerators": ["h100-80gb"]}) == [
        "node auto-provisioning tpu-v5p-slice: accelerator tpu-v5p is not allowed here; allowed: h100-80gb"]
