"""Zone offerings: whether a pool's machine type exists in the zones the pool runs in.

Only the cloud knows, and only at deploy time: EC2's DescribeInstanceTypeOfferings, Compute Engine's
machineTypes.list and Cloud TPU's acceleratorTypes.list. The components ask during `pulumi preview` and apply these
rules to the answers, so a pool in a zone that lacks its type fails there with the pool's config path, instead of at
the cloud's API halfway through `pulumi up` (EKS answers CreateNodegroup with "Your requested instance type ... is
not supported in your requested Availability Zone"; GKE refuses the node pool). The same holds for reserved capacity:
whether the reservation a pool names is in the pool's zones and holds its machine type (an AWS Capacity Block, a GCP
reservation, an Azure capacity reservation group). Pure: no Pulumi, no cloud SDK.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence


def missing_zones(zones: Sequence[str], offered: Collection[str]) -> list[str]:
    """The zones of `zones` that don't offer the type, in the given order."""
    return [zone for zone in zones if zone not in offered]


def zone_offering_problem(path: str, machine_type: str, zones: Sequence[str], offered: Collection[str],
                          choices: Sequence[str], fix: str) -> str | None:
    """None when every zone of `zones` offers `machine_type`; else the error for the pool at config path `path`.

    `offered`: every zone the cloud lists the type in. `choices`: the zones the pool could use instead (the network's
    or the region's), named in the error with those that offer it. `fix`: what to change, for example "set
    gpu_pools.train.zones to zones that offer it".
    """
    missing = missing_zones(zones, offered)
    if not missing:
        return None
    usable = [zone for zone in choices if zone in offered]
    if usable:
        return (f"{path}: {machine_type} is not offered in {', '.join(missing)}; "
                f"{', '.join(usable)} {'offers' if len(usable) == 1 else 'offer'} it: {fix}")
    elsewhere = sorted(set(offered) - set(choices))
    only = f" (only in {', '.join(elsewhere)})" if elsewhere else ""
    return f"{path}: {machine_type} is offered in none of {', '.join(choices)}{only}; choose another type or region"


def transit_encryption_problem(path: str, instance_type: str, encrypting: Collection[str], network_path: str) -> str | None:
    """None when `instance_type` is among `encrypting` (the asked types EC2 lists as encrypting in transit); else the
    error for the pool at config path `path` in a VPC whose `transit_encryption` (at `network_path`) is enforce."""
    if instance_type in encrypting:
        return None
    return (f"{path}: {instance_type} does not encrypt traffic in transit, and {network_path}.transit_encryption is "
            f"enforce, so the VPC admits only instance types that do (EC2 DescribeInstanceTypes, "
            f"network-info.encryption-in-transit-supported): choose such a type (m6i, m7i, c6i, r6i; every accelerator "
            f"family in the catalog) or set {network_path}.transit_encryption to monitor")


def types_offered_everywhere(types: Sequence[str], zones: Sequence[str], offers: Mapping[str, Collection[str]]) -> list[str]:
    """The types of `types` (in order) offered in every zone of `zones`; `offers` maps a type to the zones offering it."""
    return [t for t in types if not missing_zones(zones, offers.get(t, ()))]


def reservation_problem(path: str, kind: str, reservation: str, zone: str, machine_type: str,
                        reserved_zone: str, reserved_type: str) -> str | None:
    """None when the reservation the cloud reports matches the pool; else the error for the pool at config path `path`.

    `kind`: what the cloud calls it ("Capacity Block"). `zone`, `machine_type`: the pool's one zone and resolved type.
    `reserved_zone`, `reserved_type`: what the cloud reports for `reservation`; an empty value (the offline plan cannot
    read the account) has nothing to compare. A pool outside the reservation's zone launches nowhere it can use the
    reservation, and one of another type cannot use it at all.
    """
    if reserved_zone and reserved_zone != zone:
        return (f"{path}.zones: [{zone}], but {kind} {reservation} is in {reserved_zone}: "
                f"set zones: [{reserved_zone}]")
    if reserved_type and reserved_type != machine_type:
        return (f"{path}: {kind} {reservation} reserves {reserved_type}, but the pool resolves to {machine_type}: "
                f"set instance_type: {reserved_type}")
    return None


def launch_terms_problem(path: str, kind: str, reservation: str, reserved: Mapping[str, str],
                         launched: Mapping[str, str]) -> str | None:
    """None when the instance attributes a reservation was made for match those the pool's nodes launch with; else the
    error for the pool at config path `path`. EC2 launches an instance into a Capacity Reservation only when its
    instance type, platform, zone and tenancy match (AWS EC2 User Guide, "Launch instances into an existing Capacity
    Reservation"); `reservation_problem` compares zone and type, this the rest.

    `reserved`, `launched`: attribute name ("platform", "tenancy") -> value, as the cloud reports it for the
    reservation and as the pool's nodes launch. An empty reserved value (the offline plan) has nothing to compare.
    """
    for attribute, value in launched.items():
        found = reserved.get(attribute, "")
        if found and found != value:
            return (f"{path}.reservation: {kind} {reservation} reserves capacity for {attribute} {found}, but the pool's "
                    f"nodes launch with {attribute} {value}: name a reservation for {value}")
    return None


def zonal_reservation_problem(path: str, reservation: str, zones: Sequence[str], found: Mapping[str, str],
                              machine_type: str, fix: str) -> str | None:
    """None when a zonal reservation (GCP) exists in every zone of the pool and holds its machine type; else the error
    for the pool at config path `path`, which suggests `fix` for a missing zone.

    `found`: zone -> the machine type the reservation holds there ('' when the answer names none: the offline plan),
    for the zones where the cloud found it. A node that asks for a specific reservation in a zone without it is not
    created, and a reservation of another machine type cannot serve the pool at all.
    """
    missing = missing_zones(zones, found)
    if missing:
        present = [zone for zone in zones if zone in found]
        where = f" (it is in {', '.join(present)})" if present else ""
        return f"{path}: reservation {reservation} is not in {', '.join(missing)}{where}: {fix}"
    held = sorted({found[zone] for zone in zones if found[zone] and found[zone] != machine_type})
    if held:
        return (f"{path}: reservation {reservation} holds {', '.join(held)}, but the pool needs {machine_type}: "
                f"name a reservation of {machine_type}")
    return None


def reservation_group_problem(path: str, group: str, region: str, vm_size: str, zones: Sequence[str],
                              group_location: str, reservations: Sequence[tuple[str, Sequence[str]]], fix: str) -> str | None:
    """None when an Azure capacity reservation group can serve the pool; else the error for the pool at config path
    `path`, which suggests `fix` for zones the group does not cover.

    `group_location` and `reservations` ((VM size, zones) of each reservation in the group) are what Azure reports;
    an empty location (the offline plan cannot read the subscription) has nothing to compare. The group must be in the
    pool's region and hold a reservation of the pool's VM size in each of its zones (a zonal VM consumes a reservation
    of its own zone only; a pool without zones needs a regional one).
    """
    if not group_location:
        return None
    if group_location.replace(" ", "").lower() != region.lower():
        return f"{path}.reservation: {group} is in {group_location}, but the pool is in {region}: name a group in {region}"
    sized = [tuple(z) for size, z in reservations if size.lower() == vm_size.lower()]
    if not sized:
        held = sorted({size for size, _ in reservations})
        holds = f"it holds {', '.join(held)}" if held else "it holds no reservations"
        return f"{path}.reservation: {group} holds no {vm_size} reservation ({holds}): add one, or name a group that has it"
    covered = {zone for z in sized for zone in z}
    if not zones:
        return None if any(not z for z in sized) else (
            f"{path}.reservation: {group} holds {vm_size} in zones {', '.join(sorted(covered))} only, and the pool is "
            f"regional: {fix}")
    missing = missing_zones(zones, covered)
    if missing:
        have = f" (it has zones {', '.join(sorted(covered))})" if covered else " (its reservations are regional)"
        return f"{path}.zones: {group} holds no {vm_size} reservation in zone {', '.join(missing)}{have}: {fix}"
    return None


def kubernetes_version_problem(path: str, service: str, region: str, version: str, offered: Collection[str],
                               default: bool = False) -> str | None:
    """None when `offered` (the Kubernetes minor versions `service` lists in `region`) has `version`, or is empty
    (nothing reported: the offline plan reads no account); else the error for the cluster at config path `path`.
    `default`: the version is the toolkit's default, not one the config set."""
    if not offered or version in offered:
        return None
    listed = ", ".join(sorted(set(offered), key=gke_version_key))
    given = f"the default Kubernetes {version}" if default else f"Kubernetes {version}"
    return f"{path}: {service} does not offer {given} in {region}; it offers {listed}: set kubernetes_version to one of them"


def channel_version_problem(path: str, region: str, version: str, channel: str, latest: Mapping[str, str]) -> str | None:
    """None when GKE's release channel `channel` (RAPID, REGULAR, STABLE) reaches Kubernetes minor `version` in
    `region`, or when `latest` (each channel's newest version there, such as {"REGULAR": "1.33.5-gke.1080000"}) does not
    name it (nothing reported: the offline plan reads no project); else the error for the cluster at config path `path`.
    A channel creates clusters only at versions it offers ("Master version must be one of "STABLE" channel supported
    versions [...]"), and a minor newer than its latest is in none of them; what a channel offers below its latest is
    not reported, so older minors are left to the version check."""
    newest = latest.get(channel)
    if not newest or gke_version_key(version) <= gke_version_key(minor(newest)):
        return None
    reaching = sorted(c.lower() for c, v in latest.items() if c in GKE_CHANNELS and gke_version_key(version) <= gke_version_key(minor(v)))
    instead = f", or set upgrade_channel to {' or '.join(reaching)}" if reaching else ""
    return (f"{path}: GKE's {channel.lower()} release channel in {region} goes up to Kubernetes {minor(newest)} "
            f"({newest}), so it creates no cluster at {version}: set kubernetes_version to {minor(newest)} or "
            f"older{instead}")


GKE_CHANNELS = ("RAPID", "REGULAR", "STABLE")
"""The release channels `upgrade_channel` chooses from, as GKE names them."""


def minor(version: str) -> str:
    """1.33.5-gke.1080000 -> 1.33"""
    return ".".join(version.split(".")[:2])


def gke_version_key(version: str) -> tuple[int, ...]:
    """Orders GKE versions: 1.34.1-gke.2364000 -> (1, 34, 1, 2364000); a minor, 1.34 -> (1, 34)."""
    return tuple(int(number) for number in re.findall(r"\d+", version))
