"""Zone offerings, the pure rules (components/spec/offerings.py): which zones lack a type, the error a pool gets, and
which spot alternatives stay; plus the offline plan's placeholder answers to the offering lookups."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from aiinfra.plan.invokes import placeholder_result
from components import catalog
from components.aws.node_group import NODE_LAUNCH_TERMS, odcr_capacity
from components.spec.offerings import (
    channel_version_problem,
    kubernetes_version_problem,
    launch_terms_problem,
    missing_zones,
    reservation_group_problem,
    reservation_problem,
    types_offered_everywhere,
    zonal_reservation_problem,
    zone_offering_problem,
)

ZONES = [f"us-east-1{z}" for z in "abcdef"]
zone_lists = st.lists(st.sampled_from(ZONES), unique=True, max_size=6)
PATH = "platform.clouds.aws.regions.us-east-1.gpu_pools.train"
FIX = "set gpu_pools.train.zones to zones that offer it"


@given(zones=zone_lists, offered=zone_lists, choices=zone_lists)
def test_a_problem_exactly_when_a_zone_lacks_the_type(zones: list[str], offered: list[str], choices: list[str]) -> None:
    problem = zone_offering_problem(PATH, "p5.48xlarge", zones, offered, choices or ZONES, FIX)
    assert (problem is None) == set(zones).issubset(offered)
    if problem is not None:
        assert problem.startswith(f"{PATH}: p5.48xlarge ")
        usable = [z for z in choices or ZONES if z in offered]
        # Either the missing zones and the usable ones are named with the fix, or there is nothing to fix with zones.
        assert all(z in problem for z in (missing_zones(zones, offered) + usable if usable else choices or ZONES))
        assert problem.endswith(FIX) == bool(usable)


def test_the_error_names_missing_zones_and_the_ones_that_offer_the_type() -> None:
    assert zone_offering_problem(PATH, "p5.48xlarge", ZONES[:3], {"us-east-1b", "us-east-1c", "us-east-1f"}, ZONES[:3], FIX) == (
        f"{PATH}: p5.48xlarge is not offered in us-east-1a; us-east-1b, us-east-1c offer it: {FIX}")
    assert zone_offering_problem(PATH, "p5.48xlarge", ZONES[:2], {"us-east-1b"}, ZONES[:3], FIX) == (
        f"{PATH}: p5.48xlarge is not offered in us-east-1a; us-east-1b offers it: {FIX}")
    assert zone_offering_problem(PATH, "p5.48xlarge", ZONES[:2], {"us-east-1f"}, ZONES[:3], FIX) == (
        f"{PATH}: p5.48xlarge is offered in none of us-east-1a, us-east-1b, us-east-1c (only in us-east-1f); "
        "choose another type or region")
    assert zone_offering_problem(PATH, "p5.48xlarge", ZONES[:1], set(), ZONES[:3], FIX).endswith(
        "offered in none of us-east-1a, us-east-1b, us-east-1c; choose another type or region")


@given(types=st.lists(st.sampled_from(["g6.xlarge", "g6.2xlarge", "g6.4xlarge", "g6.8xlarge"]), unique=True, min_size=1),
       zones=zone_lists, offers=st.dictionaries(st.sampled_from(["g6.xlarge", "g6.2xlarge", "g6.4xlarge"]), zone_lists))
def test_alternatives_kept_only_where_every_zone_offers_them(types: list[str], zones: list[str], offers: dict) -> None:
    kept = types_offered_everywhere(types, zones, offers)
    assert kept == [t for t in types if set(zones) <= set(offers.get(t, ()))]  # order kept, nothing else


def test_offline_lookups_offer_every_asked_type_in_every_zone() -> None:
    ec2 = placeholder_result("aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings", {
        "filters": [{"name": "instance-type", "values": ["p5.48xlarge", "p5e.48xlarge"]}], "locationType": "availability-zone",
        "region": "us-east-2"})
    pairs = set(zip(ec2["instanceTypes"], ec2["locations"]))
    assert pairs == {(t, f"us-east-2{z}") for t in ("p5.48xlarge", "p5e.48xlarge") for z in "abc"}  # us-east-2 has three zones
    gce = placeholder_result("gcp:compute/getMachineTypes:getMachineTypes", {
        "project": "p", "zone": "europe-west4-b", "filter": '(name = "ct5lp-hightpu-4t") OR (name = "a3-highgpu-8g")'})
    assert [m["name"] for m in gce["machineTypes"]] == ["ct5lp-hightpu-4t", "a3-highgpu-8g"] and gce["zone"] == "europe-west4-b"
    assert placeholder_result("gcp:compute/getMachineTypes:getMachineTypes", {"filter": "guestCpus = 8"})["machineTypes"] == []
    # DescribeInstanceTypes: every named type passes the other filters (encryption in transit, say); none named, one type.
    types = placeholder_result("aws:ec2/getInstanceTypes:getInstanceTypes", {"filters": [
        {"name": "instance-type", "values": ["m5.xlarge", "p5.48xlarge"]},
        {"name": "network-info.encryption-in-transit-supported", "values": ["true"]}], "region": "us-east-2"})
    assert types["instanceTypes"] == ["m5.xlarge", "p5.48xlarge"]
    assert placeholder_result("aws:ec2/getInstanceTypes:getInstanceTypes", {})["instanceTypes"] == ["m6i.large"]
    tpu = placeholder_result("gcp:tpu/getV2AcceleratorTypes:getV2AcceleratorTypes", {"zone": "us-central1-b"})["types"]
    assert catalog.resolve_tpu_slice("tpu-v5e", "2x4").tpu_vm_accelerator_type in tpu
    assert catalog.resolve_tpu_slice("tpu-v5p", "2x4x4").tpu_vm_accelerator_type in tpu


_names = st.sampled_from(["", "us-east-1a", "us-east-1b", "p5.48xlarge", "p5e.48xlarge"])


@given(_names, _names, _names, _names)
def test_a_reservation_problem_exactly_when_a_reported_value_differs(zone: str, machine: str, reported_zone: str,
                                                                     reported_type: str) -> None:
    problem = reservation_problem("p", "Capacity Block", "cr-1", zone, machine, reported_zone, reported_type)
    zone_differs = bool(reported_zone) and reported_zone != zone
    type_differs = bool(reported_type) and reported_type != machine
    assert (problem is None) == (not zone_differs and not type_differs)
    if zone_differs:  # the zone is named first: the type check is moot in the wrong zone
        assert problem == f"p.zones: [{zone}], but Capacity Block cr-1 is in {reported_zone}: set zones: [{reported_zone}]"
    elif type_differs:
        assert problem == f"p: Capacity Block cr-1 reserves {reported_type}, but the pool resolves to {machine}: set instance_type: {reported_type}"


def test_offline_a_capacity_block_reports_no_zone_or_type() -> None:
    """The plan cannot read the account: the lookup keeps the result's shape, with nothing to compare."""
    block = placeholder_result("aws:ec2/getCapacityBlockReservation:getCapacityBlockReservation",
                               {"id": "cr-0a1b2c3d4e5f60718", "region": "us-east-1"})
    assert (block["availabilityZone"], block["instanceType"]) == ("", "")
    assert block["id"] == "cr-0a1b2c3d4e5f60718" and "endDate" in block


_terms = st.fixed_dictionaries({"platform": st.sampled_from(["", "Linux/UNIX", "Windows", "Red Hat Enterprise Linux"]),
                                 "tenancy": st.sampled_from(["", "default", "dedicated"])})


@given(_terms)
def test_a_launch_terms_problem_exactly_when_a_reported_term_differs_from_the_nodes(reserved: dict[str, str]) -> None:
    problem = launch_terms_problem("p", "On-Demand Capacity Reservation", "cr-1", reserved, NODE_LAUNCH_TERMS)
    differs = [k for k, v in NODE_LAUNCH_TERMS.items() if reserved[k] and reserved[k] != v]
    assert (problem is None) == (not differs)
    if differs:  # the first differing term, in the order the nodes' terms are listed
        term = differs[0]
        assert problem == (f"p.reservation: On-Demand Capacity Reservation cr-1 reserves capacity for {term} {reserved[term]}, "
                           f"but the pool's nodes launch with {term} {NODE_LAUNCH_TERMS[term]}: name a reservation for "
                           f"{NODE_LAUNCH_TERMS[term]}")


def test_an_odcr_is_read_from_its_cloud_control_model_and_offline_reports_nothing() -> None:
    model = ('{"Id": "cr-0a1b2c3d4e5f60718", "AvailabilityZone": "us-east-1b", "InstanceType": "p4d.24xlarge", '
             '"InstancePlatform": "Linux/UNIX", "Tenancy": "default", "InstanceCount": 4, "InstanceMatchCriteria": "targeted"}')
    found = odcr_capacity(model)
    assert (found.zone, found.instance_type, dict(found.terms)) == (
        "us-east-1b", "p4d.24xlarge", {"platform": "Linux/UNIX", "tenancy": "default"})
    offline = placeholder_result("aws:cloudcontrol/getResource:getResource",
                                 {"typeName": "AWS::EC2::CapacityReservation", "identifier": "cr-1", "region": "us-east-1"})
    empty = odcr_capacity(offline["properties"])
    assert (empty.zone, empty.instance_type, set(empty.terms.values())) == ("", "", {""})
    assert offline["identifier"] == "cr-1"


@given(zones=st.lists(st.sampled_from(ZONES), unique=True, min_size=1, max_size=4),
       found=st.dictionaries(st.sampled_from(ZONES), st.sampled_from(["", "a3-highgpu-8g", "a3-megagpu-8g"]), max_size=6))
def test_a_zonal_reservation_problem_exactly_when_a_zone_lacks_it_or_it_holds_another_type(
        zones: list[str], found: dict[str, str]) -> None:
    problem = zonal_reservation_problem(PATH, "res", zones, found, "a3-highgpu-8g", "set zones")
    missing = [z for z in zones if z not in found]
    other = {found[z] for z in zones if z in found and found[z] not in ("", "a3-highgpu-8g")}
    assert (problem is None) == (not missing and not other)
    if missing:  # a missing zone is named first, with the pool's zones that have it
        assert problem is not None and problem.startswith(f"{PATH}: reservation res is not in {', '.join(missing)}")
        assert problem.endswith(": set zones")
    elif other:
        assert problem == f"{PATH}: reservation res holds {', '.join(sorted(other))}, but the pool needs a3-highgpu-8g: " \
                          "name a reservation of a3-highgpu-8g"


_AZ = st.lists(st.sampled_from(["1", "2", "3"]), unique=True, max_size=3)


@given(location=st.sampled_from(["", "eastus2", "East US 2", "westeurope"]), zones=_AZ,
       reservations=st.lists(st.tuples(st.sampled_from(["Standard_ND96isr_H200_v5", "Standard_NC24ads_A100_v4"]), _AZ),
                             max_size=3))
def test_a_reservation_group_problem_exactly_when_azure_reports_a_mismatch(location: str, zones: list[str],
                                                                          reservations: list[tuple[str, list[str]]]) -> None:
    size = "Standard_ND96isr_H200_v5"
    problem = reservation_group_problem(PATH, "crg", "eastus2", size, zones, location, reservations, FIX)
    sized = [z for s, z in reservations if s == size]
    covered = {zone for z in sized for zone in z}
    fits = not location or (location in ("eastus2", "East US 2") and bool(sized) and (
        all(zone in covered for zone in zones) if zones else any(not z for z in sized)))
    assert (problem is None) == fits
    if problem is not None and location == "westeurope":
        assert problem == f"{PATH}.reservation: crg is in westeurope, but the pool is in eastus2: name a group in eastus2"


minors = st.builds(lambda m: f"1.{m}", st.integers(min_value=20, max_value=40))


@given(version=minors, offered=st.lists(minors, unique=True, max_size=6), default=st.booleans())
def test_a_kubernetes_version_fails_only_when_the_cloud_lists_others(version: str, offered: list[str], default: bool) -> None:
    problem = kubernetes_version_problem("p", "EKS", "us-east-1", version, offered, default=default)
    assert (problem is None) == (not offered or version in offered)  # nothing listed (offline): nothing compared
    if problem is not None:
        listed = problem.split("it offers ")[1].split(":")[0].split(", ")
        assert listed == sorted(offered, key=lambda v: int(v.split(".")[1]))  # as numbers: 1.9 before 1.10
        assert ("the default Kubernetes" in problem) == default


channels = st.dictionaries(st.sampled_from(["RAPID", "REGULAR", "STABLE", "EXTENDED"]),
                           minors.map(lambda v: f"{v}.{3}-gke.100"), max_size=4)


@given(version=minors, channel=st.sampled_from(["RAPID", "REGULAR", "STABLE"]), latest=channels)
def test_a_gke_minor_fails_only_when_newer_than_its_channels_latest(version: str, channel: str, latest: dict[str, str]) -> None:
    problem = channel_version_problem("p", "us-central1", version, channel, latest)
    minor_of = lambda v: int(v.split(".")[1])  # noqa: E731
    assert (problem is None) == (channel not in latest or minor_of(version) <= minor_of(latest[channel]))
    if problem is not None:
        reaching = [c.lower() for c in ("RAPID", "REGULAR", "STABLE") if c in latest and minor_of(latest[c]) >= minor_of(version)]
        assert problem.endswith(f", or set upgrade_channel to {' or '.join(reaching)}" if reaching else " or older")
