"""GPU and accelerator node pools: AMI types, capacity types, spot diversification, taints and labels, EFA and
placement choices, launch template hardening, scale-to-zero and the autoscaler's ownership of the desired size."""

from __future__ import annotations

from aiinfra.plan.runtime import PlanResult

EAST = "prod-us-east-1"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
PLACEMENT = "aws:ec2/placementGroup:PlacementGroup"
CAPACITY_BLOCK = "cr-0a1b2c3d4e5f60718"


def group(plan: PlanResult, pool: str, region: str = EAST) -> dict:
    return plan.one(NODE_GROUP, f"{region}-{pool}-nodegroup").inputs


def template(plan: PlanResult, pool: str, region: str = EAST) -> dict:
    return plan.one(TEMPLATE, f"{region}-{pool}-lt").inputs


def test_ami_type_by_accelerator_vendor(prod_plan: PlanResult, plan_aws) -> None:  # noqa: ANN001
    assert group(prod_plan, "h100-train")["amiType"] == "AL2023_x86_64_NVIDIA"
    assert group(prod_plan, "l4-spot")["amiType"] == "AL2023_x86_64_NVIDIA"
    assert group(prod_plan, "trn2-train")["amiType"] == "AL2023_x86_64_NEURON"
    plan = plan_aws({"regions": {"us-east-1": {"network": {"cidr": "10.9.0.0/16"}, "cluster": {},
                                               "gpu_pools": {"op": {"accelerator": "a10g", "driver": "operator"},
                                                             "inf": {"accelerator": "inferentia2"}}}}})
    assert group(plan, "op", "test-us-east-1")["amiType"] == "AL2023_x86_64_STANDARD"  # the GPU Operator brings the driver
    assert group(plan, "inf", "test-us-east-1")["amiType"] == "AL2023_x86_64_NEURON"


def test_instance_type_resolved_from_the_catalog_or_given(prod_plan: PlanResult) -> None:
    assert group(prod_plan, "h100-train")["instanceTypes"] == ["p5.48xlarge"]
    assert group(prod_plan, "trn2-train")["instanceTypes"] == ["trn2.48xlarge"]
    assert group(prod_plan, "serve", "prod-eu-west-1")["instanceTypes"] == ["g6e.xlarge"]


def test_spot_pools_draw_only_on_types_of_the_same_gpu_and_host_size(prod_plan: PlanResult) -> None:
    spot = group(prod_plan, "l4-spot")
    assert spot["capacityType"] == "SPOT"
    # g6.2xlarge .. g6.8xlarge carry the same L4 on bigger hosts: the Cluster Autoscaler sizes a group by one type, so
    # they stay out (the AWS provider README: same vCPUs and memory across a group's types).
    assert spot["instanceTypes"] == ["g6.xlarge"]


def test_capacity_block_targets_the_reservation_and_never_gets_a_placement_group(prod_plan: PlanResult) -> None:
    block = group(prod_plan, "h100-train")
    assert block["capacityType"] == "CAPACITY_BLOCK"
    lt = template(prod_plan, "h100-train")
    assert lt["instanceMarketOptions"] == {"marketType": "capacity-block"}
    assert lt["capacityReservationSpecification"] == {"capacityReservationTarget": {"capacityReservationId": CAPACITY_BLOCK}}
    # placement: compact was asked for, but EC2 places reserved capacity itself
    assert "placement" not in lt and not [p for p in prod_plan.of_type(PLACEMENT) if "h100" in p.name]
    # the subnet of the block's zone only: launches in another zone fail
    assert block["subnetIds"] == [f"{EAST}-private-0-id"]


def test_reserved_capacity_is_on_demand_targeted_without_placement(plan_aws) -> None:  # noqa: ANN001
    plan = plan_aws({"regions": {"us-east-1": {"network": {"cidr": "10.9.0.0/16"}, "cluster": {}, "gpu_pools": {
        "odcr": {"instance_type": "p4d.24xlarge", "capacity": "reserved", "reservation": "cr-0123456789abcdef0",
                 "placement": "compact", "zones": ["us-east-1b"]}}}}})
    odcr = group(plan, "odcr", "test-us-east-1")
    assert odcr["capacityType"] == "ON_DEMAND"
    assert odcr["subnetIds"] == ["test-us-east-1-private-1-id"]
    lt = template(plan, "odcr", "test-us-east-1")
    assert lt["capacityReservationSpecification"]["capacityReservationTarget"]["capacityReservationId"] == "cr-0123456789abcdef0"
    assert "instanceMarketOptions" not in lt and "placement" not in lt and not plan.of_type(PLACEMENT)


def test_efa_and_compact_placement_on_request(prod_plan: PlanResult) -> None:
    placement = prod_plan.one(PLACEMENT)
    assert placement.name == f"{EAST}-trn2-train-placement" and placement.inputs["strategy"] == "cluster"
    lt_record = prod_plan.one(TEMPLATE, f"{EAST}-trn2-train-lt")
    lt = lt_record.inputs
    assert set(lt["placement"]) == {"groupName"} and placement.urn in lt_record.dependencies
    interfaces = lt["networkInterfaces"]
    assert len(interfaces) == 16  # trn2.48xlarge: 16 EFA devices
    assert [(i["networkCardIndex"], i["deviceIndex"]) for i in interfaces[:3]] == [(0, 0), (1, 1), (2, 1)]
    assert {i["interfaceType"] for i in interfaces} == {"efa"}
    assert len(template(prod_plan, "h100-train")["networkInterfaces"]) == 32  # p5.48xlarge
    # EFA traffic is not routed between subnets: one subnet (the first zone's) for the pool
    assert group(prod_plan, "trn2-train")["subnetIds"] == [f"{EAST}-private-0-id"]
    # no EFA, no interfaces: the node group's defaults (and the cluster security group) apply
    assert "networkInterfaces" not in template(prod_plan, "l4-spot")
    assert group(prod_plan, "l4-spot")["subnetIds"] == [f"{EAST}-private-{i}-id" for i in range(3)]


def test_accelerator_taints_and_labels(prod_plan: PlanResult) -> None:
    assert group(prod_plan, "h100-train")["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]
    assert group(prod_plan, "trn2-train")["taints"] == [{"key": "aws.amazon.com/neuron", "value": "true", "effect": "NO_SCHEDULE"}]
    spot = group(prod_plan, "l4-spot")
    assert spot["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"},
                              {"key": "team", "value": "research", "effect": "NO_SCHEDULE"}]
    assert spot["labels"] == {"tier": "batch", "ai-infra/pool": "l4-spot", "ai-infra/accelerator": "l4",
                              "ai-infra/accelerator-count": "1", "ai-infra/capacity": "spot",
                              "k8s.amazonaws.com/accelerator": "nvidia-l4"}
    assert spot["tags"] == {"k8s.io/cluster-autoscaler/enabled": "true", f"k8s.io/cluster-autoscaler/{EAST}": "owned"}


def test_scale_to_zero_with_the_autoscaler_owning_the_desired_size(prod_plan: PlanResult) -> None:
    records = [r for r in prod_plan.of_type(NODE_GROUP)]
    assert len(records) == 6  # 2 system + 4 accelerator pools
    for record in records:
        assert record.ignoreChanges == ["scalingConfig.desiredSize"], record.name
    assert group(prod_plan, "l4-spot")["scalingConfig"] == {"minSize": 0, "maxSize": 8, "desiredSize": 0}
    assert group(prod_plan, "serve", "prod-eu-west-1")["scalingConfig"] == {"minSize": 1, "maxSize": 4, "desiredSize": 1}
    hints = {r.inputs["tag"]["key"]: r.inputs["tag"]["value"] for r in prod_plan.of_type("aws:autoscaling/tag:Tag")
             if r.name.startswith(f"{EAST}-trn2")}
    prefix = "k8s.io/cluster-autoscaler/node-template/resources/"
    assert hints == {f"{prefix}aws.amazon.com/neuron": "16", f"{prefix}vpc.amazonaws.com/efa": "16"}


def test_every_launch_template_encrypts_volumes_and_hardens_imds(prod_plan: PlanResult) -> None:
    templates = prod_plan.of_type(TEMPLATE)
    assert len(templates) == 6
    for record in templates:
        lt = record.inputs
        ebs = lt["blockDeviceMappings"][0]["ebs"]
        assert lt["blockDeviceMappings"][0]["deviceName"] == "/dev/xvda"
        assert ebs["encrypted"] == "true" and ebs["volumeType"] == "gp3" and ebs["kmsKeyId"], record.name
        assert lt["metadataOptions"] == {"httpEndpoint": "enabled", "httpTokens": "required",
                                         "httpPutResponseHopLimit": 1, "instanceMetadataTags": "disabled"}, record.name
        kinds = {spec["resourceType"]: spec["tags"] for spec in lt["tagSpecifications"]}
        assert set(kinds) == {"instance", "volume", "network-interface"}
        assert kinds["instance"]["cost-center"] == "cc-1234" and kinds["instance"]["environment"] == "prod"
    assert template(prod_plan, "h100-train")["blockDeviceMappings"][0]["ebs"]["volumeSize"] == 200
