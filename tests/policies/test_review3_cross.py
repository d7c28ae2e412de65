"""Third review, cross-cloud area: accelerators sized by launch templates or outside node pools, privileged pods in
patches and ML operators' pod templates, Ingresses, residency through provider default tags and replicas, and the
CIS AKS / HIPAA IDs the rules cite. Cases plan the typed SDK classes on the mock runtime where the wire shape matters,
and stack rules read what a preview reports as outputs (aiinfra.plan.outputs)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pulumi_aws as aws
import pulumi_azure_native as azure
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s
import pytest
from policy_helpers import RULES, UNKNOWN, defaults, preview_stack, resource, run_resource, run_stack, unknown_reported
from pulumi_policy import PolicyResource, StackValidationArgs
from pulumi_policy.proxy import UnknownValueError

from aiinfra.plan.runtime import run_program
from aiinfra_policy.pack import stack_validator

ROOT = Path(__file__).resolve().parents[2]
EKS, LT, ASG = "aws:eks/nodeGroup:NodeGroup", "aws:ec2/launchTemplate:LaunchTemplate", "aws:autoscaling/group:Group"
EC2, GKE = "aws:ec2/instance:Instance", "gcp:container/cluster:Cluster"
ONLY_L4 = {"allowedAccelerators": ["l4"]}
TAGS = {"environment": "dev", "team": "t", "cost-center": "c"}


def stack_part(name: str, resources: list[PolicyResource], config: dict | None = None,
               found: list | None = None) -> list[tuple[str | None, str]]:
    """What resource rule `name` reports through its stack part (`check.stack_check`, run in AnalyzeStack)."""
    rule = RULES[name]
    part = dataclasses.replace(rule, check=rule.check.stack_check, types=())
    found = [] if found is None else found
    stack_validator(part)(StackValidationArgs(resources, {**defaults(rule), **(config or {})}),
                          lambda message, urn=None: found.append((urn, message)))
    return found


def outputs(build: Callable[[], None]) -> dict[str, PolicyResource]:
    """name -> the resource as AnalyzeStack gets it in a preview (policy_helpers.preview_stack)."""
    return {r.name: r for r in preview_stack(build)}


def inputs(build: Callable[[], None]) -> dict[str, tuple[str, dict]]:
    return {r.name: (r.type, r.inputs) for r in run_program(build, project="p", stack="s").resources}


def gpu_template(name: str = "gpu-lt") -> aws.ec2.LaunchTemplate:
    return aws.ec2.LaunchTemplate(name, instance_type="p5.48xlarge", metadata_options={"http_tokens": "required"}, tags=TAGS)


def templated_group() -> None:
    lt = gpu_template()
    aws.eks.NodeGroup("gpu-ng", cluster_name="c", node_role_arn="arn:aws:iam::123456789012:role/n", subnet_ids=["subnet-1"],
                      launch_template={"id": lt.id, "version": lt.latest_version.apply(str)},
                      scaling_config={"desired_size": 100, "max_size": 100, "min_size": 100}, tags=TAGS)


# --- 1. node groups sized by a launch template ---

def test_a_node_group_sized_by_a_template_in_the_stack_is_judged_with_its_instance_type() -> None:
    planned = outputs(templated_group)
    stack, group = list(planned.values()), planned["gpu-ng"].urn
    assert stack_part("gpu-cap-per-pool", stack) == [
        (group, "launch template gpu-lt: pool can scale to 800 accelerators (100 x 8); the cap is 64")]
    assert stack_part("allowed-accelerators", stack, ONLY_L4) == [
        (group, "launch template gpu-lt: accelerator h100-80gb is not allowed here; allowed: l4")]
    assert stack_part("accelerator-pool-tainted", stack) == [
        (group, "launch template gpu-lt: h100-80gb pool has no accelerator taint: CPU pods can land on its nodes")]
    # EKS's capacityType, computed and so unknown in a preview's outputs, is its ON_DEMAND default.
    assert stack_part("dev-pools-spot-or-scale-to-zero", stack, {"environment": "dev"}) == [
        (group, "launch template gpu-lt: dev h100-80gb pool keeps 100 on-demand nodes running; use spot or min 0")]
    assert run_stack("gpu-cap-per-environment", stack) == [
        (None, "accelerator pools can scale to 800 accelerators in total; the environment cap is 512")]


def test_the_resource_rules_leave_a_templated_group_to_the_stack_part() -> None:
    type_, props = inputs(templated_group)["gpu-ng"]
    for name in ("gpu-cap-per-pool", "allowed-accelerators", "accelerator-pool-tainted", "dev-pools-spot-or-scale-to-zero"):
        assert run_resource(name, type_, props, ONLY_L4 | {"environment": "dev"}) == []  # not "can't run" on every preview
    # The template itself names a model allowed-accelerators refuses.
    assert run_resource("allowed-accelerators", LT, inputs(templated_group)["gpu-lt"][1], ONLY_L4) == [
        "accelerator h100-80gb is not allowed here; allowed: l4"]
    assert run_resource("allowed-accelerators", LT, {"imageId": "ami-1"}, ONLY_L4) == []


def test_a_template_named_by_name_is_found_and_one_outside_the_stack_is_reported() -> None:
    lt = resource(LT, {"name": "gpu-lt-1234", "instanceType": "g6.xlarge"}, "gpu-lt")
    group = {"launchTemplate": {"name": "gpu-lt-1234", "version": "1"}, "scalingConfig": {"minSize": 0, "maxSize": 100},
             "taints": [{"key": "nvidia.com/gpu", "effect": "NO_SCHEDULE"}], "instanceTypes": UNKNOWN}
    named = resource(EKS, group, "by-name")
    assert stack_part("gpu-cap-per-pool", [lt, named]) == [
        (named.urn, "launch template gpu-lt: pool can scale to 100 accelerators (100 x 1); the cap is 64")]
    elsewhere = resource(EKS, {**group, "launchTemplate": {"name": "shared-lt", "version": "1"}}, "elsewhere")
    # Not "can't run during preview" on every run: no run of the pack ever sees that template (test_final_review_fixes).
    assert stack_part("gpu-cap-per-pool", [lt, elsewhere, named]) == [
        (elsewhere.urn, "instance type is in launch template shared-lt outside this stack; name instanceTypes on the "
                        "node group or manage the launch template in this stack"),
        (named.urn, "launch template gpu-lt: pool can scale to 100 accelerators (100 x 1); the cap is 64")]


def test_a_group_that_lists_its_types_is_judged_by_the_resource_rule_only() -> None:
    group = {"instanceTypes": ["p5.48xlarge"], "launchTemplate": {"id": UNKNOWN, "version": UNKNOWN},
             "scalingConfig": {"minSize": 0, "maxSize": 10}, "capacityType": "SPOT"}
    assert run_resource("gpu-cap-per-pool", EKS, group) == ["pool can scale to 80 accelerators (10 x 8); the cap is 64"]
    assert stack_part("gpu-cap-per-pool", [resource(EKS, group, "listed")]) == []  # no template needed, none reported twice


# --- 2. accelerators outside node pools ---

def machines() -> None:
    lt = gpu_template("asg-lt")
    aws.ec2.Instance("vm", ami="ami-1", instance_type="p5.48xlarge", subnet_id="subnet-1", tags=TAGS)
    aws.ec2.SpotInstanceRequest("spot", ami="ami-1", instance_type="p4d.24xlarge", tags=TAGS)
    aws.autoscaling.Group("asg", max_size=20, min_size=0, launch_template={"id": lt.id, "version": "$Latest"})
    aws.autoscaling.Group("mixed", max_size=10, min_size=0, mixed_instances_policy={"launch_template": {
        "launch_template_specification": {"launch_template_name": "x"},
        "overrides": [{"instance_type": "g6.xlarge"}, {"instance_type": "g6.48xlarge"}]}})
    gcp.compute.Instance("a3", machine_type="a3-highgpu-8g", zone="us-central1-a", boot_disk={"initialize_params": {"image": "i"}},
                         network_interfaces=[{"network": "default"}])
    gcp.compute.Instance("n1", machine_type="n1-standard-8", zone="us-central1-a", boot_disk={"initialize_params": {"image": "i"}},
                         network_interfaces=[{"network": "default"}], guest_accelerators=[{"type": "nvidia-tesla-a100", "count": 2}],
                         scheduling={"on_host_maintenance": "TERMINATE"})
    gcp.compute.InstanceTemplate("tpl", machine_type="g2-standard-48", disks=[{"source_image": "i"}],
                                 network_interfaces=[{"network": "default"}])
    gcp.workbench.Instance("nb", location="us-central1-a", gce_setup={"machine_type": "a3-highgpu-8g",
                           "accelerator_configs": [{"type": "NVIDIA_H100_80GB", "core_count": "8"}]})
    azure.compute.VirtualMachine("azvm", resource_group_name="rg", hardware_profile={"vm_size": "Standard_ND96isr_H100_v5"})
    azure.compute.VirtualMachineScaleSet("vmss", resource_group_name="rg", sku={"name": "Standard_NC24ads_A100_v4", "capacity": 16})


def test_vms_groups_and_templates_name_their_accelerators() -> None:
    planned = inputs(machines)
    names = ("vm", "spot", "mixed", "a3", "n1", "tpl", "nb", "azvm", "vmss")
    assert {n: run_resource("allowed-accelerators", *planned[n], ONLY_L4) for n in names} == {
        "vm": ["accelerator h100-80gb is not allowed here; allowed: l4"],
        "spot": ["accelerator a100-40gb is not allowed here; allowed: l4"],
        "mixed": [],  # g6: l4
        "a3": ["accelerator h100-80gb is not allowed here; allowed: l4"],
        "n1": ["accelerator a100-40gb is not allowed here; allowed: l4"],  # nvidia-tesla-a100 is the catalog's a100-40gb
        "tpl": [],  # g2: l4
        "nb": ["accelerator h100-80gb is not allowed here; allowed: l4"],
        "azvm": ["accelerator h100-80gb is not allowed here; allowed: l4"],
        "vmss": ["accelerator a100-80gb is not allowed here; allowed: l4"]}
    cap = {"maxGpusPerPool": 16}
    assert {n: run_resource("gpu-cap-per-pool", *planned[n], cap) for n in names if run_resource("gpu-cap-per-pool", *planned[n], cap)} == {
        "mixed": ["pool can scale to 80 accelerators (10 x 8); the cap is 16"]}
    assert run_resource("gpu-cap-per-pool", *planned["vmss"], {"maxGpusPerPool": 8}) == [
        "pool can scale to 16 accelerators (16 x 1); the cap is 8"]


def test_vms_and_groups_count_against_the_environment_cap() -> None:
    stack = list(outputs(machines).values())
    # vm 8 + spot 8 + asg (its template's p5) 20 x 8 + mixed 10 x 8 + a3 8 + n1 2 + nb 8 + azvm 8 + vmss 16; the template 0
    assert run_stack("gpu-cap-per-environment", stack, {"maxGpusPerEnvironment": 64}) == [
        (None, "accelerator pools can scale to 298 accelerators in total; the environment cap is 64")]
    asg = next(r for r in stack if r.name == "asg")
    assert stack_part("gpu-cap-per-pool", stack) == [
        (asg.urn, "launch template asg-lt: pool can scale to 160 accelerators (20 x 8); the cap is 64")]


def test_gke_node_auto_provisioning_limits_count() -> None:
    def build() -> None:
        gcp.container.Cluster("gke", location="us-central1", initial_node_count=1, remove_default_node_pool=True,
                              cluster_autoscaling={"enabled": True, "resource_limits": [
                                  {"resource_type": "cpu", "maximum": 100000},
                                  {"resource_type": "nvidia-h100-80gb", "maximum": 4096}]})
    type_, props = inputs(build)["gke"]
    assert run_resource("allowed-accelerators", type_, props, ONLY_L4) == [
        "node auto-provisioning nvidia-h100-80gb: accelerator h100-80gb is not allowed here; allowed: l4"]
    assert run_resource("gpu-cap-per-pool", type_, props) == [
        "node auto-provisioning nvidia-h100-80gb: pool can scale to 4096 accelerators (4096 x 1); the cap is 64"]
    assert run_stack("gpu-cap-per-environment", list(outputs(build).values())) == [
        (None, "accelerator pools can scale to 4096 accelerators in total; the environment cap is 512")]
    off = {**props, "clusterAutoscaling": {**props["clusterAutoscaling"], "enabled": False}}
    assert run_resource("gpu-cap-per-pool", type_, off) == []
    # A preview's outputs carry clusterAutoscaling unknown when the program set none: no limits then.
    assert run_stack("gpu-cap-per-environment", [resource(GKE, {"clusterAutoscaling": UNKNOWN, "removeDefaultNodePool": True,
                                                                "nodePools": UNKNOWN}, "plain")]) == []


def test_auto_provisioning_adds_what_the_clusters_own_pools_leave_of_its_limit() -> None:
    # The limit is the cluster's total of the model ("Maximum amount of the resource in the cluster").
    cluster = resource(GKE, {"location": "us-central1-a", "removeDefaultNodePool": True, "nodePools": UNKNOWN,
                             "clusterAutoscaling": {"enabled": True, "resourceLimits": [{"resourceType": "nvidia-h100-80gb", "maximum": 64}]}}, "gke")
    pool = resource("gcp:container/nodePool:NodePool", {"name": "h100", "cluster": "gke", "location": "us-central1-a",
                                                         "nodeCount": 6, "nodeConfig": {"machineType": "a3-highgpu-8g"}}, "h100", deps=[cluster])
    found = run_stack("gpu-cap-per-environment", [cluster, pool], {"maxGpusPerEnvironment": 60})
    assert found == [(None, "accelerator pools can scale to 64 accelerators in total; the environment cap is 60")]
    assert run_stack("gpu-cap-per-environment", [cluster, pool], {"maxGpusPerEnvironment": 64}) == []


def test_the_gcp_gpu_names_mirror_the_catalog() -> None:
    from aiinfra_policy.pools import GCP_GPU_MODELS  # noqa: PLC0415

    catalog = json.loads((ROOT / "components/catalog/data/accelerators.json").read_text())
    assert GCP_GPU_MODELS == {v["gcp_accelerator_type"]: k for k, v in catalog.items()
                              if isinstance(v, dict) and v.get("gcp_accelerator_type")}


# --- 8. privileged pods in patches, operators' pod templates, and other forms ---

def k8s_case(name: str, build: Callable[[], None], config: dict | None = None) -> list[str]:
    return run_resource("k8s-no-privileged-pods", *inputs(build)[name], config)


def test_patches_and_operator_pod_templates_are_checked() -> None:
    privileged = {"name": "c", "image": "i", "securityContext": {"privileged": True}}

    def build() -> None:
        k8s.apps.v1.DeploymentPatch("patch", metadata={"namespace": "t", "name": "d"},
                                    spec={"template": {"spec": {"host_pid": True, "containers": [privileged]}}})
        k8s.apiextensions.CustomResource("jobset", api_version="jobset.x-k8s.io/v1alpha2", kind="JobSet",
                                         metadata={"namespace": "t", "name": "train"}, spec={"replicatedJobs": [
                                             {"name": "w", "template": {"spec": {"template": {"spec": {"hostNetwork": True, "containers": [privileged]}}}}}]})
        k8s.apiextensions.CustomResource("pytorch", api_version="kubeflow.org/v1", kind="PyTorchJob", metadata={"namespace": "t"},
                                         spec={"pytorchReplicaSpecs": {"Master": {"template": {"spec": {"containers": [{"name": "m"}]}}},
                                                                       "Worker": {"template": {"spec": {"containers": [privileged]}}}}})
        k8s.apiextensions.CustomResource("ray", api_version="ray.io/v1", kind="RayCluster", metadata={"namespace": "t"},
                                         spec={"headGroupSpec": {"template": {"spec": {"containers": [privileged]}}},
                                               "workerGroupSpecs": [{"groupName": "gpu", "template": {"spec": {"hostIPC": True, "containers": [{"name": "w"}]}}}]})

    assert {n: k8s_case(n, build) for n in ("patch", "jobset", "pytorch", "ray")} == {
        "patch": ["hostPID is on", "container c is privileged"],
        "jobset": ["replicatedJobs w: hostNetwork is on", "replicatedJobs w: container c is privileged"],
        "pytorch": ["Worker: container c is privileged"],
        "ray": ["container c is privileged", "workerGroupSpecs gpu: hostIPC is on"]}


def test_sys_admin_privilege_escalation_and_the_hosts_root_are_privileged() -> None:
    def deployment(security: dict, volumes: list | None = None) -> Callable[[], None]:
        return lambda: k8s.apps.v1.Deployment("d", metadata={"namespace": "t", "name": "d"}, spec={
            "selector": {"match_labels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {
                "volumes": volumes or [], "containers": [{"name": "c", "image": "i", "security_context": security}]}}})
    root = [{"name": "root", "host_path": {"path": "/"}}]
    assert k8s_case("d", deployment({"capabilities": {"add": ["SYS_ADMIN"]}, "allow_privilege_escalation": True}, root)) == [
        "container c adds capability SYS_ADMIN, as good as privileged",
        "container c sets allowPrivilegeEscalation true: its processes can gain more privileges than it started with",
        "volume root mounts the host's root filesystem (hostPath /)"]
    assert k8s_case("d", deployment({"capabilities": {"add": ["all", "CAP_SYS_ADMIN"]}})) == [
        "container c adds capability ALL, as good as privileged", "container c adds capability SYS_ADMIN, as good as privileged"]
    # Narrow capabilities, no escalation, a hostPath below / and the defaults pass.
    assert k8s_case("d", deployment({"capabilities": {"add": ["NET_BIND_SERVICE"]}, "allow_privilege_escalation": False},
                                    [{"name": "dev", "host_path": {"path": "/dev"}}])) == []


def test_named_privileged_workloads_stay_exempt_in_every_form() -> None:
    spec = {"hostNetwork": True, "volumes": [{"name": "root", "hostPath": {"path": "/"}}],
            "containers": [{"name": "node", "securityContext": {"privileged": True, "capabilities": {"add": ["SYS_ADMIN"]}}}]}
    props = {"metadata": {"namespace": "kube-system", "name": "csi-node"}, "spec": {"template": {"spec": spec}}}
    config = {"privilegedWorkloads": ["kube-system/DaemonSet/csi-node"]}
    for type_ in ("kubernetes:apps/v1:DaemonSet", "kubernetes:apps/v1:DaemonSetPatch"):
        assert run_resource("k8s-no-privileged-pods", type_, props, config) == []
    assert len(run_resource("k8s-no-privileged-pods", "kubernetes:apps/v1:Deployment", props, config)) == 4
    with_pid = {**props, "spec": {"template": {"spec": {**spec, "hostPID": True}}}}
    assert run_resource("k8s-no-privileged-pods", "kubernetes:apps/v1:DaemonSet", with_pid, config) == ["hostPID is on"]


def test_gpu_limits_read_operator_pod_templates_but_not_patches() -> None:
    request = {"spec": {"replicatedJobs": [{"name": "w", "template": {"spec": {"template": {"spec": {"containers": [
        {"name": "c", "resources": {"requests": {"nvidia.com/gpu": 8}}}]}}}}}]}}
    assert run_resource("k8s-gpu-limits", "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet", request) == [
        "replicatedJobs w: container c requests nvidia.com/gpu without a limit"]
    assert "kubernetes:apps/v1:DeploymentPatch" not in RULES["k8s-gpu-limits"].types  # a patch leaves the rest as it is


def test_an_unknown_replica_map_is_reported_not_passed() -> None:
    assert "pytorchReplicaSpecs" in unknown_reported("k8s-no-privileged-pods", "kubernetes:kubeflow.org/v1:PyTorchJob",
                                               {"spec": {"pytorchReplicaSpecs": UNKNOWN}})


# --- 7. Ingresses ---

def ingress(annotations: dict | None = None, class_name: str | None = None) -> Callable[[], None]:
    return lambda: k8s.networking.v1.Ingress("ing", metadata={"namespace": "t", "annotations": annotations}, spec={
        "ingress_class_name": class_name, "default_backend": {"service": {"name": "s", "port": {"number": 80}}}})


@pytest.mark.parametrize(("annotations", "class_name", "found"), [
    (None, None, None),  # the cluster's default IngressClass, which the pack can't see (test_review4_fixes)
    ({"kubernetes.io/ingress.class": "gce"}, None, "GKE gives the Ingress an external Application Load Balancer"),
    ({"kubernetes.io/ingress.class": "gce-internal"}, None, None),
    (None, "alb", None),  # the AWS Load Balancer Controller's default scheme is internal
    ({"alb.ingress.kubernetes.io/scheme": "internet-facing"}, "alb", "internet-facing: the AWS Load Balancer Controller"),
    ({"alb.ingress.kubernetes.io/scheme": "internal"}, None, None),  # a class-less one for the ALB controller, internal
    (None, "nginx", None),  # published through the controller's own Service, checked as a Service
    (None, "webapprouting.kubernetes.azure.com", None),
])
def test_ingresses_are_flagged_only_when_their_class_makes_them_public(annotations, class_name, found) -> None:
    messages = run_resource("k8s-internal-load-balancer", *inputs(ingress(annotations, class_name))["ing"])
    assert (messages == []) if found is None else (len(messages) == 1 and found in messages[0]), messages


def test_an_unknown_ingress_class_is_reported_not_passed() -> None:
    props = {"metadata": {"annotations": {"kubernetes.io/ingress.class": UNKNOWN}}, "spec": {}}
    assert "ingress.class" in unknown_reported("k8s-internal-load-balancer", "kubernetes:networking.k8s.io/v1:Ingress", props)


# --- 10. residency: provider default tags, replicas ---

def test_a_data_zone_set_through_provider_defaults_is_checked() -> None:
    zones = {"dataZones": {"eu": ["eu-west-1"]}}
    aws_provider = {"region": "us-east-1", "defaultTags": json.dumps({"tags": {"data-zone": "eu"}})}
    bucket = resource("aws:s3/bucket:Bucket", {"tags": TAGS}, "data", provider=aws_provider)
    labelled = resource("gcp:storage/bucket:Bucket", {"location": "US-CENTRAL1"}, "gcs",
                        provider={"region": "us-central1", "defaultLabels": json.dumps({"data-zone": "eu"})})
    merged = resource("aws:s3/bucket:Bucket", {"tagsAll": {"data-zone": "eu"}}, "merged", provider={"region": "us-east-1"})
    own = resource("aws:s3/bucket:Bucket", {"tags": {"data-zone": "us"}}, "own", provider=aws_provider)  # its own tag wins
    assert run_stack("data-zone-residency", [bucket, labelled, merged, own], zones) == [
        (bucket.urn, "data-zone eu data is in us-east-1; allowed: eu-west-1"),
        (labelled.urn, "data-zone eu data is in us-central1; allowed: eu-west-1"),
        (merged.urn, "data-zone eu data is in us-east-1; allowed: eu-west-1")]


def test_replica_regions_are_checked() -> None:
    def build() -> None:
        aws.dynamodb.Table("t", hash_key="id", attributes=[{"name": "id", "type": "S"}], billing_mode="PAY_PER_REQUEST",
                           stream_enabled=True, stream_view_type="NEW_AND_OLD_IMAGES", replicas=[{"region_name": "ap-southeast-1"}])
        aws.ecr.ReplicationConfiguration("ecr", replication_configuration={"rules": [{"destinations": [
            {"region": "ap-southeast-1", "registry_id": "123456789012"}, {"region": "us-east-1", "registry_id": "123456789012"}]}]})
        aws.secretsmanager.Secret("s", replicas=[{"region": "eu-central-1"}])
        gcp.storage.Bucket("dual", location="US", custom_placement_config={"data_locations": ["US-EAST1", "US-CENTRAL1"]})
        gcp.storage.Bucket("far", location="US", custom_placement_config={"data_locations": ["US-EAST1", "US-WEST1"]})

    # No provider here: the resources' own regions are not in their outputs, their replicas' are.
    found = run_stack("data-residency", list(outputs(build).values()), {"allowedRegions": ["us-east-1", "us-east1", "us-central1"]})
    assert [(urn.split("::")[-1], message) for urn, message in found] == [
        ("t", "replica region ap-southeast-1 (replicas[].regionName) is outside the allowed regions us-east-1, us-east1, us-central1"),
        ("ecr", "replica region ap-southeast-1 (replicationConfiguration.rules[].destinations[].region) is outside the "
                "allowed regions us-east-1, us-east1, us-central1"),
        ("s", "replica region eu-central-1 (replicas[].region) is outside the allowed regions us-east-1, us-east1, us-central1"),
        ("far", "custom dual-region us: region us-west1 is outside the allowed regions us-east-1, us-east1, us-central1")]


# --- 14. compliance IDs ---

def test_cited_controls_match_what_the_rules_check() -> None:
    # CIS AKS Benchmark v1.7.0/v1.8.0: 5.4.1 control plane endpoint access, 5.4.3 private nodes, 5.5.1/5.5.2 Entra ID
    # and Azure RBAC; 4.1.1 (cluster-admin use) and 5.4.2 (private endpoint, public access disabled) are not checked.
    assert RULES["azure-aks-private-api"].frameworks["CIS"] == ("AKS 5.4.1",)
    assert RULES["azure-agentpool-no-public-ip"].frameworks["CIS"] == ("AKS 5.4.3",)
    assert RULES["azure-aks-entra-rbac"].frameworks["CIS"] == ("AKS 5.5.1", "AKS 5.5.2")
    # HIPAA 164.308(b) is business associate contracts, not where data is kept.
    assert "HIPAA" not in RULES["data-residency"].frameworks
    assert RULES["data-residency"].in_profiles == ("baseline", "soc2", "gdpr")


def test_a_template_without_an_instance_type_launches_the_default_or_selects_by_attributes() -> None:
    group = resource(ASG, {"launchTemplate": {"id": "lt-1"}, "minSize": 0, "maxSize": 10, "mixedInstancesPolicy": UNKNOWN}, "asg")
    plain_template = resource(LT, {"id": "lt-1", "imageId": "ami-1"}, "lt")
    assert run_stack("gpu-cap-per-environment", [plain_template, group], {"maxGpusPerEnvironment": 0}) == []
    by_attributes = resource(LT, {"id": "lt-1", "instanceRequirements": {"acceleratorCount": {"min": 1}}}, "lt")
    with pytest.raises(UnknownValueError) as caught:
        run_stack("gpu-cap-per-environment", [by_attributes, group])
    assert "instanceRequirements of launch template lt" in caught.value.message


def test_an_autoscaling_group_of_a_launch_configuration_is_judged_with_its_instance_type() -> None:
    def build() -> None:
        lc = aws.ec2.LaunchConfiguration("lc", image_id="ami-1", instance_type="p4d.24xlarge")
        aws.autoscaling.Group("legacy", max_size=12, min_size=0, launch_configuration=lc.name, vpc_zone_identifiers=["subnet-1"])

    planned = outputs(build)
    assert stack_part("gpu-cap-per-pool", list(planned.values())) == [
        (planned["legacy"].urn, "launch configuration lc: pool can scale to 96 accelerators (12 x 8); the cap is 64")]
    assert run_resource("allowed-accelerators", *inputs(build)["lc"], ONLY_L4) == [
        "accelerator a100-40gb is not allowed here; allowed: l4"]


def test_the_pack_runs_the_stack_parts_in_analyze_stack() -> None:
    from aiinfra.policy_eval import evaluate_pack  # noqa: PLC0415
    from aiinfra_policy.pack import to_policy  # noqa: PLC0415

    assert all(to_policy(RULES[name]).stack_validate is not None for name in
               ("allowed-accelerators", "gpu-cap-per-pool", "accelerator-pool-tainted", "dev-pools-spot-or-scale-to-zero"))
    records = [r.to_json() for r in run_program(templated_group, project="p", stack="s").resources]
    config = {"all": "mandatory", "allowed-accelerators": {"enforcementLevel": "mandatory", "allowedAccelerators": ["l4"]}}
    report = evaluate_pack(ROOT / "policies", records, config=config, project="p", stack="s")
    found = {(v.policy, v.urn.split("::")[-1], v.enforcementLevel) for v in report.violations if v.urn.endswith("::gpu-ng")}
    assert {("gpu-cap-per-pool", "gpu-ng", "mandatory"), ("allowed-accelerators", "gpu-ng", "mandatory"),
            ("accelerator-pool-tainted", "gpu-ng", "mandatory")} <= found
    assert not any("can't run" in v.message for v in report.violations if v.policy == "gpu-cap-per-pool")


@pytest.mark.parametrize(("location", "allowed", "outside"), [
    ("eastus2", ["eastus"], True),  # a different Azure region, not a zone of eastus
    ("westus3", ["westus"], True),
    ("europe-west10", ["europe-west1"], True),  # Berlin, not Belgium
    ("europe-west12", ["europe-west1"], True),
    ("europe-west1-b", ["europe-west1"], False),  # a zone of an allowed region
    ("us-east-1a", ["us-east-1"], False),  # an AWS zone: a letter, no dash
    ("us-east-12", ["us-east-1"], True),  # a digit is another region, not a zone
    ("eastus", ["eastus"], False),
])
def test_a_region_whose_name_extends_an_allowed_one_is_outside(location: str, allowed: list, outside: bool) -> None:
    bucket = resource("gcp:storage/bucket:Bucket", {"location": location}, "data")
    expected = [(bucket.urn, f"region {location} is outside the allowed regions {', '.join(allowed)}")] if outside else []
    assert run_stack("data-residency", [bucket], {"allowedRegions": allowed}) == expected
    tagged = resource("gcp:storage/bucket:Bucket", {"location": location, "labels": {"data-zone": "z"}}, "zoned")
    found = run_stack("data-zone-residency", [tagged], {"dataZones": {"z": allowed}})
    assert found == ([(tagged.urn, f"data-zone z data is in {location}; allowed: {', '.join(allowed)}")] if outside else [])
