"""The inference Service the Kubernetes layer creates in every serving region (components.k8s.inference): what each
cloud's load balancer needs of it, the NetworkPolicy that lets the load balancer in, and, on Azure, Front Door's
origins waiting for it (AKS makes their Private Link services for it)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pulumi
import pytest
from k8s.validation import validate
from policy_helpers import run_resource

from aiinfra.plan.program import plan_stack
from aiinfra.plan.project import load_project
from aiinfra.plan.runtime import PlanResult, ResourceRecord

ROOT = Path(__file__).resolve().parents[2]
SERVICE = "kubernetes:core/v1:Service"
POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
PROD_CLUSTERS = {"prod-us-east-1": "aws", "prod-eu-west-1": "aws", "prod-us-central1": "gcp", "prod-europe-west4": "gcp",
                 "prod-eastus2": "azure", "prod-westeurope": "azure"}


@pytest.fixture(scope="module")
def prod() -> PlanResult:
    return plan_stack(load_project(ROOT), "prod")


def body(record: ResourceRecord, api_version: str, kind: str) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": record.inputs["metadata"], "spec": record.inputs["spec"]}


def test_every_serving_cluster_gets_the_service_its_load_balancer_reaches(prod: PlanResult) -> None:
    for cluster, cloud in PROD_CLUSTERS.items():
        service = prod.one(SERVICE, f"{cluster}-inference-service")
        meta, spec = service.inputs["metadata"], service.inputs["spec"]
        assert (meta["namespace"], meta["name"]) == ("inference", "inference")
        assert spec["selector"] == {"app.kubernetes.io/name": "inference"}
        assert spec["ports"] == [{"name": "http", "protocol": "TCP", "port": 8080, "targetPort": 8080}]
        annotations = meta["annotations"]
        if cloud == "azure":
            # AKS builds the internal load balancer on the fixed address and the Private Link service Front Door uses;
            # `pulumi up` waits for the address, which AKS publishes after the Private Link service exists.
            assert spec["type"] == "LoadBalancer"
            assert annotations["service.beta.kubernetes.io/azure-load-balancer-internal"] == "true"
            assert annotations["service.beta.kubernetes.io/azure-pls-name"] == f"pls-{cluster}-inference"
            assert annotations["pulumi.com/waitFor"] == "jsonpath={.status.loadBalancer.ingress[0].ip}"
            assert "pulumi.com/skipAwait" not in annotations
        else:
            # Reached at the pods' own addresses; nothing waits for endpoints, which exist once the app is deployed.
            assert spec["type"] == "ClusterIP" and annotations["pulumi.com/skipAwait"] == "true"
        if cloud == "gcp":
            assert annotations["cloud.google.com/neg"] == '{"exposed_ports": {"8080": {"name": "%s-inference"}}}' % cluster
            assert '"prod-inference"' in annotations["controller.autoneg.dev/neg"]
        validate(body(service, "v1", "Service"))
        assert service.parent.endswith(f"ai-infra:kubernetes:InferenceService::{cluster}-inference")
        # The team `inference` owns the namespace in prod: the Service waits for it, nothing creates it twice.
        assert any(d.endswith(f"kubernetes:core/v1:Namespace::{cluster}-inference-namespace") for d in service.dependencies)
        assert prod.outputs["kubernetes"][cluster]["inference"]["service"] == "inference/inference"


def test_the_load_balancer_is_admitted_to_the_selected_pods_on_the_port_only(prod: PlanResult) -> None:
    # EKS: the internal ALB's private subnets (Global Accelerator in front), not the whole VPC.
    expected = {"prod-us-east-1": ["10.60.0.0/20", "10.60.16.0/20", "10.60.32.0/20"],
                "prod-eu-west-1": ["10.61.0.0/20", "10.61.16.0/20", "10.61.32.0/20"],
                "prod-us-central1": ["35.191.0.0/16", "130.211.0.0/22"], "prod-europe-west4": ["35.191.0.0/16", "130.211.0.0/22"],
                "prod-eastus2": ["10.80.0.0/16", "168.63.129.16/32"], "prod-westeurope": ["10.81.0.0/16", "168.63.129.16/32"]}
    for cluster, cidrs in expected.items():
        policy = prod.one(POLICY, f"{cluster}-inference-from-load-balancer")
        spec = policy.inputs["spec"]
        assert spec["podSelector"] == {"matchLabels": {"app.kubernetes.io/name": "inference"}}
        assert spec["policyTypes"] == ["Ingress"]
        assert spec["ingress"] == [{"from": [{"ipBlock": {"cidr": c}} for c in cidrs], "ports": [{"protocol": "TCP", "port": 8080}]}]
        assert policy.inputs["metadata"]["namespace"] == "inference"
        validate(body(policy, "networking.k8s.io/v1", "NetworkPolicy"))


def test_front_door_origins_wait_for_the_inference_services(prod: PlanResult) -> None:
    order = [r.urn for r in prod.resources]
    for region in ("eastus2", "westeurope"):
        origin = prod.one("azure-native:cdn:AFDOrigin", f"prod-frontdoor-origin-{region}")
        service = prod.one(SERVICE, f"prod-{region}-inference-service")
        assert service.urn in origin.dependencies
        assert order.index(service.urn) < order.index(origin.urn)
        pls = origin.inputs["sharedPrivateLinkResource"]["privateLink"]["id"]
        assert pls.endswith(f"/privateLinkServices/pls-prod-{region}-inference")


def _staging_azure(monkeypatch: pytest.MonkeyPatch, tier: str, addons: bool,
                   resource_group: str | None = None) -> tuple[PlanResult, list[str]]:
    """The staging stack with its Azure global endpoint on `tier`, the Kubernetes layer on or off, and its region in
    an existing resource group if given."""
    import yaml

    project = load_project(ROOT)
    config = yaml.safe_load((ROOT / "stacks" / "Pulumi.staging.yaml").read_text())["config"]
    platform = copy.deepcopy(config["ai-infra:platform"])
    platform["clouds"]["azure"]["global_endpoint"] |= {"azure_tier": tier, "domain": "infer.example.com"}
    platform["clouds"] = {"azure": platform["clouds"]["azure"]}
    platform.setdefault("addons", {})["enabled"] = addons
    if resource_group is not None:
        platform["clouds"]["azure"]["regions"]["eastus2"]["resource_group"] = resource_group
    warnings: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *args, **kwargs: warnings.append(message))
    from aiinfra.plan.runtime import run_program
    from components.compose import deploy, validate as validate_platform

    spec = validate_platform(platform)
    return run_program(lambda: deploy(spec), project=project.name, stack="staging"), warnings


def test_front_door_standard_gets_a_public_load_balancer_that_the_pack_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    plan, _ = _staging_azure(monkeypatch, "standard", addons=True)
    [service] = plan.of_type(SERVICE)
    annotations = service.inputs["metadata"]["annotations"]
    assert service.inputs["spec"]["type"] == "LoadBalancer"
    # The pre-made public address, by the name Azure gave it (an output: the Service waits for the address).
    assert set(annotations) >= {"service.beta.kubernetes.io/azure-pip-name",
                                "service.beta.kubernetes.io/azure-load-balancer-resource-group"}
    ip = plan.one("azure-native:network:PublicIPAddress", "staging-eastus2-inference-ip")
    assert ip.urn in service.dependencies
    assert "service.beta.kubernetes.io/azure-load-balancer-internal" not in annotations
    # Front Door's backends have no fixed list: the NSG admits only AzureFrontDoor.Backend on the port.
    [policy] = [p for p in plan.of_type(POLICY) if p.name.endswith("-from-load-balancer")]
    assert policy.inputs["spec"]["ingress"][0]["from"] == [{"ipBlock": {"cidr": "0.0.0.0/0"}}]
    assert run_resource("k8s-internal-load-balancer", SERVICE, service.inputs) == [
        "a LoadBalancer Service without an internal annotation gets a public address"]
    [origin] = plan.of_type("azure-native:cdn:AFDOrigin")
    assert service.urn in origin.dependencies


def test_front_door_standard_points_aks_at_the_group_that_holds_the_public_address(monkeypatch: pytest.MonkeyPatch) -> None:
    """AKS looks for the `azure-pip-name` address in its node resource group unless told otherwise; the address lives
    in the region's group. With an existing group the name is known in a preview, so the annotation's value shows."""
    plan, _ = _staging_azure(monkeypatch, "standard", addons=True, resource_group="rg-shared-inference")
    [service] = plan.of_type(SERVICE)
    annotations = service.inputs["metadata"]["annotations"]
    assert annotations["service.beta.kubernetes.io/azure-load-balancer-resource-group"] == "rg-shared-inference"
    ip = plan.one("azure-native:network:PublicIPAddress", "staging-eastus2-inference-ip")
    assert ip.inputs["resourceGroupName"] == "rg-shared-inference"


def test_without_the_layer_front_door_is_still_built_and_the_plan_says_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    plan, warnings = _staging_azure(monkeypatch, "premium", addons=False)
    assert not plan.of_type(SERVICE)
    [origin] = plan.of_type("azure-native:cdn:AFDOrigin")
    assert not any(":kubernetes:" in d for d in origin.dependencies)
    assert any("no inference Service is created" in w and "inference.service_annotations" in w for w in warnings)
    assert plan.outputs["azure"]["front_door"]["domain"] == "infer.example.com"


def test_a_gcp_region_without_a_global_endpoint_gets_the_service_and_no_way_in(make_platform: Any) -> None:
    from helpers import full_platform_dict, run_platform

    data = full_platform_dict()
    gcp = data["clouds"]["gcp"]
    gcp.pop("global_endpoint", None)
    region = next(iter(gcp["regions"].values()))
    region["inference"] = {"port": 9000, "pod_selector": {"app": "llm"}}
    data["clouds"] = {"gcp": gcp}
    from components.spec import load_platform

    plan = run_platform(load_platform(data))
    [service] = plan.of_type(SERVICE)
    assert service.inputs["spec"]["selector"] == {"app": "llm"} and service.inputs["spec"]["ports"][0]["port"] == 9000
    assert "cloud.google.com/neg" not in service.inputs["metadata"]["annotations"]
    assert not [p for p in plan.of_type(POLICY) if p.name.endswith("-from-load-balancer")]
