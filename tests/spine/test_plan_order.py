"""The order a plan lists its resources in (aiinfra/plan/order.py): dependency order, the same whatever order the
registrations reached the monitor in."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from aiinfra.plan.order import dependency_order


@st.composite
def graphs(draw: st.DrawFn) -> tuple[list[str], dict[str, list[str]]]:
    """Distinct URNs and, for each, some URNs it comes after: earlier ones (a DAG), plus names of resources the plan
    does not hold (a looked-up resource, the empty parent of a root)."""
    urns = draw(st.lists(st.text("abc:", min_size=1, max_size=6), unique=True, max_size=25))
    after = {urn: draw(st.lists(st.sampled_from(urns[:i]), max_size=4)) if i else [] for i, urn in enumerate(urns)}
    for urn in urns:
        after[urn] += draw(st.lists(st.sampled_from(["", "elsewhere"]), max_size=1))
    return urns, after


@given(st.data())
def test_each_resource_follows_what_it_depends_on_and_the_order_ignores_arrival(data: st.DataObject) -> None:
    urns, after = data.draw(graphs())
    arrived = data.draw(st.permutations(urns))
    ordered = dependency_order(arrived, str, after.__getitem__)
    assert sorted(ordered) == sorted(urns)
    position = {urn: i for i, urn in enumerate(ordered)}
    assert all(position[before] < position[urn] for urn in urns for before in after[urn] if before in position)
    assert ordered == dependency_order(urns, str, after.__getitem__)


def test_ready_resources_go_by_urn_and_a_cycle_is_kept_not_dropped() -> None:
    after = {"stack": [], "b": ["stack"], "a": ["stack"], "c": ["a"], "x": ["y"], "y": ["x"]}
    assert dependency_order(["c", "y", "a", "x", "b", "stack"], str, after.__getitem__) == [
        "stack", "a", "b", "c", "x", "y"]
