"""GCP reservations, checked during `pulumi preview`: a GKE node pool that consumes a specific reservation
(`capacity: reserved`) gets nodes only in zones where that reservation exists and holds the pool's machine type.
Reservations are zonal, and a node asking for a reservation its zone lacks is not created, so the pool would fail
at scale-up long after `pulumi up` reported success. The pool waits for the check; a mismatch stops the run with the
pool's config path (`components/spec/offerings.py`, zonal_reservation_problem)."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_gcp as gcp

from components.spec.gcp import reservation_parts
from components.spec.offerings import zonal_reservation_problem

from .offerings import checked_unless_unknown

def reserved_machine_type(project: str, reservation: str, zones: pulumi.Input[Sequence[str]],
                          machine_type: pulumi.Input[str], path: str, fix: str,
                          opts: pulumi.InvokeOutputOptions) -> pulumi.Output[str]:
    """`machine_type`, once Compute Engine finds `reservation` in every zone of `zones` holding that machine type
    (one reservations.get per zone, in the reservation's own project when it is shared). The offline plan cannot read
    the project: its answer holds no machine type, so only the zones are compared."""
    shared, name = reservation_parts(reservation)
    owner = shared or project

    def lookup(zone: str) -> pulumi.Output[tuple[str, str | None]]:
        found = gcp.compute.get_reservation_output(name=name, zone=zone, project=owner, opts=opts)
        # A reservation the API does not find comes back without a self link (the data source clears it on a 404).
        return found.apply(lambda r: (zone, _machine_type(r) if r.self_link else None))

    def answers(zone_list: Sequence[str]) -> pulumi.Output[list]:
        return pulumi.Output.all(zone_list, machine_type, *[lookup(zone) for zone in zone_list])

    def problem(values: list) -> str | None:  # noqa: ANN001
        zone_list, wanted, *held = values
        found = {zone: machine for zone, machine in held if machine is not None}
        return zonal_reservation_problem(path, reservation, zone_list, found, wanted, fix)

    # The region's zones (getZones) wait for the project's APIs too: on that first preview they are unknown as well.
    return checked_unless_unknown(machine_type, pulumi.Output.from_input(zones).apply(answers), problem)


def _machine_type(found: gcp.compute.GetReservationResult) -> str:
    """The machine type the reservation holds ('' when the answer names none, as offline)."""
    for specific in found.specific_reservations or []:
        for properties in specific.instance_properties or []:
            if properties.machine_type:
                return properties.machine_type
    return ""
