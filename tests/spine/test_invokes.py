"""Invokes during an offline plan return values shaped like the SDK's declared result type."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aiinfra.plan.invokes import _result_properties, _result_type, placeholder_result

TOKENS = [
    "aws:ec2/getVpc:getVpc",
    "aws:ec2/getSubnets:getSubnets",
    "aws:eks/getCluster:getCluster",
    "aws:iam/getRole:getRole",
    "gcp:container/getEngineVersions:getEngineVersions",
    "gcp:compute/getNetwork:getNetwork",
    "azure-native:network:getVirtualNetwork",
    "azure-native:resources:getResourceGroup",
    "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings",
    "gcp:compute/getMachineTypes:getMachineTypes",
    "gcp:tpu/getV2AcceleratorTypes:getV2AcceleratorTypes",
    "kubernetes:yaml/v2:ConfigGroup",  # not an invoke: no result type, empty result
]


@pytest.mark.parametrize("token", TOKENS[:-1])
def test_result_has_every_declared_property_in_wire_form(token: str) -> None:
    declared = _result_properties(_result_type(token))
    result = placeholder_result(token, {})
    assert set(result) == set(declared)
    for key, value in result.items():
        assert value is not None, f"{token}.{key} is None; programs index such values"


def test_lists_are_non_empty_so_programs_can_index_them() -> None:
    result = placeholder_result("aws:ec2/getSubnets:getSubnets", {})
    assert len(result["ids"]) == 3 and all(isinstance(i, str) for i in result["ids"])


def test_arguments_are_echoed_into_the_result() -> None:
    result = placeholder_result("aws:ec2/getVpc:getVpc", {"cidrBlock": "10.9.0.0/16", "region": "eu-west-1"})
    assert result["cidrBlock"] == "10.9.0.0/16"
    assert result["region"] == "eu-west-1"


def test_unknown_token_gives_an_empty_result() -> None:
    assert placeholder_result("nosuch:mod/getThing:getThing", {}) == {}


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["us-east-1", "eu-west-1", "ap-southeast-2", "us-gov-west-1"]))
def test_availability_zones_follow_the_requested_region(region: str) -> None:
    names = placeholder_result("aws:index/getAvailabilityZones:getAvailabilityZones", {"region": region})["names"]
    assert all(n.startswith(region) for n in names)
    assert len(set(names)) == len(names) == (6 if region == "us-east-1" else 3)  # as many as the region has


def test_a_placeholder_leaves_the_provider_sdk_whole() -> None:
    """Looking up a result type before the program touched its SDK module must not break that module: the provider
    SDKs load modules lazily, and a submodule imported first left pulumi_aws.ec2 without its `_output` functions.
    A fresh interpreter, so no earlier test has loaded the module already."""
    code = (
        "from aiinfra.plan.invokes import placeholder_result\n"
        "placeholder_result('aws:ec2/getCapacityBlockReservation:getCapacityBlockReservation', {'id': 'cr-1'})\n"
        "import pulumi_aws as aws\n"
        "print(callable(aws.ec2.get_capacity_block_reservation_output), callable(aws.ec2.get_capacity_block_reservation))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True"]

