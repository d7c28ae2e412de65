"""The order a plan lists its resources in: the same on every run.

The SDK sends registrations from a thread pool, so the order they reach the monitor differs from run to run, and a
plan document (`aiinfra plan --json`) listed in that order would differ between two plans of the same config. A plan
lists them instead in dependency order, as the engine steps through them: each resource after its parent, its
provider and every resource it depends on; among the resources ready at the same point, by URN. Pure logic: no
Pulumi import.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")


def dependency_order(items: Sequence[T], urn: Callable[[T], str], after: Callable[[T], Iterable[str]]) -> list[T]:
    """`items` with each one after the items whose URNs `after` names, ties broken by URN. A URN not among the items
    (a resource read or looked up, a provider reference of another stack) orders nothing. Should the items hold a
    cycle, which the engine rejects, its members follow the rest in URN order rather than being dropped."""
    keys = [urn(item) for item in items]
    index_of: dict[str, list[int]] = {}
    for index, key in enumerate(keys):
        index_of.setdefault(key, []).append(index)
    waiting = [0] * len(items)  # how many items each one still waits for
    dependents: list[list[int]] = [[] for _ in items]
    for index, item in enumerate(items):
        for other in {u for u in after(item) if u != keys[index]}:
            for before in index_of.get(other, ()):
                waiting[index] += 1
                dependents[before].append(index)
    ready = [(keys[index], index) for index in range(len(items)) if not waiting[index]]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        _, index = heapq.heappop(ready)
        order.append(index)
        for dependent in dependents[index]:
            waiting[dependent] -= 1
            if not waiting[dependent]:
                heapq.heappush(ready, (keys[dependent], dependent))
    placed = set(order)
    order += sorted((index for index in range(len(items)) if index not in placed), key=lambda i: (keys[i], i))
    return [items[index] for index in order]
