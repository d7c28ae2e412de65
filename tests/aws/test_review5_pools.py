"""Spot node groups list only instance types of the resolved type's size: the Cluster Autoscaler sizes a group by one
type ("the instance types should have the same amount of RAM and number of CPU cores": kubernetes/autoscaler
cluster-autoscaler/cloudprovider/aws/README.md), so a bigger alternative would sit half used and a smaller one would
not fit the pods it was started for."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from components import catalog
from components.aws.node_group import instance_types
from components.spec import CapacityType, GpuPoolSpec

ROWS = catalog.instance_types()
AWS_ROWS = catalog.instance_types("aws")


def _size(row: catalog.GpuInstance) -> tuple[str, str, int, int, int]:
    return (row.cloud, row.accelerator, row.accelerator_count, row.vcpus, row.memory_gib)


@given(st.sampled_from(ROWS))
def test_spot_alternatives_are_the_other_types_of_the_same_accelerators_and_host_size(row: catalog.GpuInstance) -> None:
    alternatives = catalog.spot_alternatives(row)
    assert row not in alternatives
    assert all(_size(alt) == _size(row) for alt in alternatives)
    # Every other row of that size is one, in the resolver's order (fewest vCPUs, least memory, then name).
    same = [r for r in catalog.instance_types(row.cloud) if _size(r) == _size(row) and r != row]
    assert alternatives == sorted(same, key=lambda r: r.instance_type)
    for alt in alternatives:  # the relation is symmetric: each is the other's alternative
        assert row in catalog.spot_alternatives(alt)


@given(st.sampled_from(AWS_ROWS))
def test_a_spot_node_group_lists_only_types_the_autoscaler_can_size_as_one(row: catalog.GpuInstance) -> None:
    types = instance_types(row, GpuPoolSpec(instance_type=row.instance_type, capacity=CapacityType.SPOT))
    assert types[0] == row.instance_type
    assert {_size(catalog.find_instance("aws", name)) for name in types} == {_size(row)}


def test_the_smallest_l4_host_has_no_alternative_and_the_h200_hosts_are_each_others() -> None:
    # g6.2xlarge .. g6.8xlarge carry the same single L4 on 2 to 8 times the host: none joins a g6.xlarge group.
    l4 = catalog.find_instance("aws", "g6.xlarge")
    assert instance_types(l4, GpuPoolSpec(instance_type="g6.xlarge", capacity=CapacityType.SPOT)) == ["g6.xlarge"]
    p5e = catalog.find_instance("aws", "p5e.48xlarge")
    assert instance_types(p5e, GpuPoolSpec(instance_type="p5e.48xlarge", capacity=CapacityType.SPOT)) == [
        "p5e.48xlarge", "p5en.48xlarge"]
    # With EFA the launch template's interfaces must fit every type: p5en has 16 EFA cards, p5e 32.
    assert instance_types(p5e, GpuPoolSpec(instance_type="p5e.48xlarge", capacity=CapacityType.SPOT, efa=True)) == [
        "p5e.48xlarge"]
