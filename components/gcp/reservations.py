"""GCP reservations, checked during `pulumi preview`: a GKE node pool that consumes a specific reservation
(`capacity: reserved`) gets nodes only in zones where that reservation exists and holds the pool's machine type.
Reservations are zonal, and a node asking for a reservation its zone lacks is not created, so the pool would fail
at scale-up long after `pulumi up` reported success. The pool waits for the check; a mismatch stops the run with the
pool's config path (`components/spec/offerings.py`, zonal_reservation_problem)."""

from __future__ import annotations

import re
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

    def lookup(zone: str) -> pulumi.Output[tuple[str, str | None, str]]:
        found = gcp.compute.get_reservation_output(name=name, zone=zone, project=owner, opts=opts)
        # pulumi-gcp 10.2.0's data source reads the reservation, then lists its blocks, and that listing fails the
        # invoke when the reservation is missing (404) or unreadable (403 on a shared reservation's owner project):
        # "Error listing ReservationBlocks". A failed lookup is "not in this zone", so the run stops with the pool's
        # config path and fix (and the API's answer) instead of the raw provider error. `recover` also keeps the
        # failed invoke from failing the program at exit. An answer without a self link is a reservation not found.
        return found.apply(lambda r: (zone, _machine_type(r) if r.self_link else None, "")).recover(
            lambda error: (zone, None, _not_found_answer(error)))

    def answers(zone_list: Sequence[str]) -> pulumi.Output[list]:
        return pulumi.Output.all(zone_list, machine_type, *[lookup(zone) for zone in zone_list])

    def problem(values: list) -> str | None:  # noqa: ANN001
        zone_list, wanted, *held = values
        found = {zone: machine for zone, machine, _ in held if machine is not None}
        message = zonal_reservation_problem(path, reservation, zone_list, found, wanted, fix)
        failed = [f"{zone}: {answer}" for zone, _, answer in held if answer]
        return f"{message} (Compute Engine answered {'; '.join(failed)})" if message and failed else message

    # The region's zones (getZones) wait for the project's APIs too: on that first preview they are unknown as well.
    return checked_unless_unknown(machine_type, pulumi.Output.from_input(zones).apply(answers), problem)


# The wrappers around the API's answer: the SDK's and the engine's ("invoke of <token> failed:", "invocation of <token>
# returned an error:"), the bridge's ("invoking <token>:", pulumi-terraform-bridge Invoke) and go-multierror's
# ("1 error occurred:" followed by "\t* <error>" lines).
_INVOKE_PREFIX = re.compile(r"^(?:(?:invoke of|invocation of) \S+ (?:failed|returned an error):|invoking \S+:|"
                            r"\d+ errors? occurred:)\s*(?:\*\s*)?")
# A reservation the zone lacks (404, reason notFound) or the deployer cannot read (403, reason forbidden: a shared
# reservation's owner project), by googleapi's reason: at the end of the error's line, or, where the API gave errors
# whose message differs from the top one, on a "Reason: <reason>, Message: ..." line under "More details:"
# (googleapi.Error.Error). Other 403s (rateLimitExceeded, quotaExceeded, accessNotConfigured) are not about where the
# reservation is.
_NOT_FOUND = re.compile(r", (?:notFound|forbidden)\s*$|^Reason: (?:notFound|forbidden), ", re.MULTILINE)


def _api_answer(error: Exception) -> str:
    """What the API said, without the wrappers above: the first line of the first error."""
    text = str(error).strip()
    while (prefix := _INVOKE_PREFIX.match(text)) is not None:
        text = text[prefix.end():]
    return text.splitlines()[0] if text else type(error).__name__


def _not_found_answer(error: Exception) -> str:
    """The API's answer to a lookup of a reservation the zone lacks or the deployer cannot read, which the check reports
    as not in that zone; any other failure (expired credentials, quota, a 5xx) is raised as it is."""
    answer = _api_answer(error)
    if not _NOT_FOUND.search(str(error)):
        raise error
    return answer


def _machine_type(found: gcp.compute.GetReservationResult) -> str:
    """The machine type the reservation holds ('' when the answer names none, as offline)."""
    for specific in found.specific_reservations or []:
        for properties in specific.instance_properties or []:
            if properties.machine_type:
                return properties.machine_type
    return ""
