"""Invokes as the program makes them: through an explicit provider (its region, not the stack's), and the
Kubernetes SDK's manifest and chart invokes, whose results become child resources."""

from __future__ import annotations


import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from aiinfra.plan.runtime import PlanResult, run_program

MANIFEST = """
apiVersion: v1
kind: Namespace
metadata:
  name: analytics
---
# an empty document, as editors leave them
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: analytics
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx:1.27, securityContext: {privileged: true}}]
"""


def plan(program, config: dict[str, str] | None = None) -> PlanResult:  # noqa: ANN001
    return run_program(program, project="p", stack="s", config=config or {"aws:region": "us-east-1"})


def test_an_invoke_through_a_regional_provider_answers_for_that_region() -> None:
    """Multi-region programs make one provider per region: subnets must land in that region's zones."""
    def program() -> None:
        eu = aws.Provider("eu", region="eu-west-1")
        opts = pulumi.InvokeOutputOptions(provider=eu)
        pulumi.export("zones", aws.get_availability_zones_output(opts=opts).names)
        pulumi.export("region", aws.get_region_output(opts=opts).region)
        pulumi.export("default_zones", aws.get_availability_zones_output().names)

    outputs = plan(program).outputs
    assert outputs["zones"][0] == "eu-west-1a" and outputs["region"] == "eu-west-1"
    assert outputs["default_zones"][0] == "us-east-1a"  # the stack's aws:region still answers the default provider


def test_a_manifest_plans_one_child_per_object() -> None:
    """k8s.yaml.ConfigGroup parses its YAML through the provider's decode invoke; each object is a child resource
    (and so reaches the policy pack)."""
    def program() -> None:
        k8s.yaml.ConfigGroup("app", yaml=[MANIFEST])

    resources = plan(program).resources
    objects = {(r.type, r.inputs["metadata"]["name"]) for r in resources if r.type.startswith("kubernetes:") and r.custom}
    assert objects == {("kubernetes:core/v1:Namespace", "analytics"), ("kubernetes:apps/v1:Deployment", "web")}
    deployment = next(r for r in resources if r.type == "kubernetes:apps/v1:Deployment")
    assert deployment.inputs["spec"]["template"]["spec"]["containers"][0]["securityContext"] == {"privileged": True}


def test_a_helm_v3_chart_is_named_as_missing_not_silently_empty() -> None:
    def program() -> None:
        k8s.helm.v3.Chart("ingress", k8s.helm.v3.ChartOpts(chart="ingress-nginx", version="4.11.0",
                                                           fetch_opts=k8s.helm.v3.FetchOpts(repo="https://kubernetes.github.io/ingress-nginx")))

    result = plan(program)
    assert not [r for r in result.resources if r.custom and r.type.startswith("kubernetes:")]
    warnings = [d.message for d in result.diagnostics if d.severity == "warning"]
    assert any("helm.v3.Chart 'ingress-nginx'" in m and "cannot render charts" in m for m in warnings), warnings


def test_manifest_scalars_are_read_as_the_provider_reads_them() -> None:
    """sigs.k8s.io/yaml (Go's yaml.v2): a date and `12:30` stay strings (PyYAML would give a date, which crashed the
    plan, and the base-60 number 750); YAML 1.1 booleans stay booleans."""
    manifest = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  labels: {released: 2025-01-01}\n"
                "data:\n  window: 12:30\n  ratio: '0.5'\n")

    def program() -> None:
        k8s.yaml.ConfigGroup("cfg", yaml=[manifest])

    config_map = plan(program).one("kubernetes:core/v1:ConfigMap")
    assert config_map.inputs["metadata"]["labels"] == {"released": "2025-01-01"}
    assert config_map.inputs["data"]["window"] == "12:30"
    from aiinfra.plan.goyaml import manifest_documents
    assert manifest_documents("a: yes\nb: 0x1f\nc: 1_000\nd: 1.5\n---\n") == [{"a": True, "b": 31, "c": 1000, "d": 1.5}]
