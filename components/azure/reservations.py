"""Azure capacity reservation groups, checked during `pulumi preview`: an AKS pool with `capacity: reserved` gets
VMs only from reservations of its VM size in its zones, in its region. AKS would create the pool, and scale-ups
would then fail, so the pool waits until Azure's answer matches; a mismatch stops the run with the pool's config
path (`components/spec/offerings.py`, reservation_group_problem)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pulumi
import pulumi_azure_native as azure_native

from components.spec.offerings import reservation_group_problem

from .context import AzureContext

_GROUP_ID = re.compile(r"^/subscriptions/(?P<subscription>[^/]+)/resourceGroups/(?P<group>[^/]+)/providers/"
                       r"Microsoft\.Compute/capacityReservationGroups/(?P<name>[^/]+)$", re.IGNORECASE)


def checked_reservation_group(parent: pulumi.Resource, ctx: AzureContext, group_id: str, vm_size: str,
                              zones: Sequence[str], path: str, fix: str) -> pulumi.Output[str]:
    """`group_id`, once Azure reports the group in the pool's region with a `vm_size` reservation in each of `zones`
    (one capacityReservationGroups.get, one capacityReservations.get per reservation in it). A group in another
    subscription (shared with this one) cannot be read through this subscription's provider and is not checked."""
    match = _GROUP_ID.match(group_id)
    if match is None:  # the spec refuses anything else; nothing to look up
        return pulumi.Output.from_input(group_id)
    opts = pulumi.InvokeOutputOptions(parent=parent)
    resource_group, name = match["group"], match["name"]

    def check(subscription: str) -> pulumi.Output[str] | str:
        if subscription.lower() != match["subscription"].lower():
            return group_id
        return azure_native.compute.get_capacity_reservation_group_output(
            capacity_reservation_group_name=name, resource_group_name=resource_group, opts=opts).apply(verdict)

    def verdict(group: azure_native.compute.GetCapacityReservationGroupResult) -> pulumi.Output[str]:
        lookups = [azure_native.compute.get_capacity_reservation_output(
            capacity_reservation_group_name=name, capacity_reservation_name=sub.id.rsplit("/", 1)[-1],
            resource_group_name=resource_group, opts=opts) for sub in group.capacity_reservations or []]

        def decide(found: list[azure_native.compute.GetCapacityReservationResult]) -> str:
            reservations = [(r.sku.name or "", list(r.zones or [])) for r in found]
            problem = reservation_group_problem(path, group_id, ctx.region, vm_size, zones, group.location,
                                                reservations, fix)
            if problem:
                raise pulumi.RunError(problem)
            return group_id

        return pulumi.Output.all(*lookups).apply(decide)

    return pulumi.Output.from_input(ctx.subscription_id).apply(check)
