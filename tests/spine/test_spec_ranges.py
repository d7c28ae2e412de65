"""Pod and service ranges: private, within what each cloud's Kubernetes service takes, and (GKE, AKS) large enough for
a node block per node the region can reach. Every message names the path, the value given and what is allowed."""

from __future__ import annotations

from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import platform_dict
from hypothesis import given, settings
from hypothesis import strategies as st

from components.spec import Cloud, Platform, SpecError, load_platform

ROOT = Path(__file__).resolve().parents[2]
GCP = "platform.clouds.gcp.regions.us-central1.network"
AWS = "platform.clouds.aws.regions.us-east-1.network"
AZURE = "platform.clouds.azure.regions.eastus2.network"
PRIVATE = "allowed: a range inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16 (RFC 1918) or 100.64.0.0/10 (RFC 6598)"
AKS_RESERVED = ("which AKS reserves; AKS refuses network, pod and service ranges that overlap 169.254.0.0/16, 172.30.0.0/16, "
                "172.31.0.0/16 or 192.0.2.0/24")
EKS_ALLOWED = "/12 to /24 inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16"
AKS_SERVICE = ("allowed on Azure: /13 to /28 (AKS takes service ranges smaller than /12, and the cluster DNS service gets the "
               "11th address)")


def gcp(region: dict[str, Any]) -> dict[str, Any]:
    return {"gcp": {"project": "acme-ml-test", "regions": {"us-central1": region}}}


def aws(region: dict[str, Any]) -> dict[str, Any]:
    return {"aws": {"regions": {"us-east-1": region}}}


def azure(region: dict[str, Any]) -> dict[str, Any]:
    region["network"].setdefault("transit_encryption", "monitor")
    return {"azure": {"regions": {"eastus2": region}}}


def issues(clouds: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(SpecError) as caught:
        load_platform(platform_dict(clouds))
    return caught.value.issues


def loads(clouds: dict[str, Any]) -> Platform:
    return load_platform(platform_dict(clouds))


# --- 1. private ranges ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("field", ["pod_cidr", "service_cidr"])
@pytest.mark.parametrize("value", ["8.8.0.0/16", "127.0.0.0/16", "169.254.0.0/16", "192.0.2.0/24", "172.0.0.0/11"])
def test_pod_and_service_ranges_must_be_private(field: str, value: str) -> None:
    assert issues(gcp({"network": {"cidr": "10.20.0.0/16", field: value}, "cluster": {}})) == [
        (f"{GCP}.{field}", f"{field} {value} is not a private range; {PRIVATE}")]


@pytest.mark.parametrize("value", ["127.0.0.0/16", "169.254.0.0/16", "198.18.0.0/16", "240.0.0.0/16"])
def test_network_cidr_is_private_by_rfc_1918_and_6598_not_by_pythons_list(value: str) -> None:
    # ipaddress' is_private counts loopback, link-local, benchmarking and reserved space as private: the spec does not.
    assert issues(gcp({"network": {"cidr": value}})) == [(f"{GCP}.cidr", f"network cidr {value} is not a private range; {PRIVATE}")]


def test_network_cidr_may_be_rfc_6598_shared_space() -> None:
    # On AWS the derived pod range (100.64.0.0/14 here) is not used, so it cannot collide with the network.
    [(_, cloud)] = list(loads(aws({"network": {"cidr": "100.64.0.0/16"}, "cluster": {}})).clouds.items())
    assert str(cloud.regions["us-east-1"].network.cidr) == "100.64.0.0/16"


# --- 2. per-cloud rules ----------------------------------------------------------------------------------------------

def test_pod_cidr_on_aws_has_no_effect() -> None:
    assert issues(aws({"network": {"cidr": "10.10.0.0/16", "pod_cidr": "100.64.0.0/16"}})) == [
        (f"{AWS}.pod_cidr", "pod_cidr 100.64.0.0/16 has no effect on AWS: EKS's VPC CNI gives pods addresses from the node "
                            "subnets of network cidr 10.10.0.0/16; remove pod_cidr")]


def test_aws_pod_cidr_is_reported_once_even_when_it_overlaps() -> None:
    [(path, message)] = issues(aws({"network": {"cidr": "10.10.0.0/16", "pod_cidr": "10.10.0.0/16"}, "cluster": {}}))
    assert path == f"{AWS}.pod_cidr" and message.startswith("pod_cidr 10.10.0.0/16 has no effect on AWS")


@pytest.mark.parametrize(("value", "message"), [
    ("100.65.0.0/16", f"service_cidr 100.65.0.0/16 is outside the blocks EKS takes service ranges from; allowed: {EKS_ALLOWED}"),
    ("192.168.0.0/25", f"service_cidr 192.168.0.0/25 has prefix /25; EKS allows {EKS_ALLOWED}"),
    ("10.128.0.0/9", f"service_cidr 10.128.0.0/9 has prefix /9; EKS allows {EKS_ALLOWED}"),
])
def test_eks_service_range(value: str, message: str) -> None:
    assert issues(aws({"network": {"cidr": "10.10.0.0/16", "service_cidr": value}, "cluster": {}})) == [(f"{AWS}.service_cidr", message)]


@pytest.mark.parametrize("value", ["10.0.0.0/12", "172.20.0.0/16", "192.168.10.0/24"])
def test_eks_takes_slash_12_to_slash_24_in_rfc_1918(value: str) -> None:
    loads(aws({"network": {"cidr": "10.64.0.0/16", "service_cidr": value}, "cluster": {}}))


def test_eks_service_range_must_not_overlap_the_vpc() -> None:
    assert issues(aws({"network": {"cidr": "10.10.0.0/16", "service_cidr": "10.10.0.0/20"}, "cluster": {}})) == [
        (f"{AWS}.service_cidr", "10.10.0.0/20 overlaps cidr 10.10.0.0/16 in the same region")]


def test_aks_refuses_a_reserved_service_range() -> None:
    assert issues(azure({"network": {"cidr": "10.40.0.0/16", "service_cidr": "172.31.0.0/16"}, "cluster": {}})) == [
        (f"{AZURE}.service_cidr", f"service_cidr 172.31.0.0/16 lies in 172.31.0.0/16, {AKS_RESERVED}")]


def test_aks_refuses_a_pod_range_overlapping_reserved_ones() -> None:
    # Microsoft's own example: 172.16.0.0/12 includes 172.30.0.0/16 and 172.31.0.0/16.
    assert issues(azure({"network": {"cidr": "10.40.0.0/16", "pod_cidr": "172.16.0.0/12", "service_cidr": "10.0.0.0/16"},
                         "cluster": {}})) == [
        (f"{AZURE}.pod_cidr", f"pod_cidr 172.16.0.0/12 overlaps 172.30.0.0/16 and 172.31.0.0/16, {AKS_RESERVED}")]


def test_aks_refuses_a_reserved_network() -> None:
    found = issues(azure({"network": {"cidr": "172.31.0.0/16", "service_cidr": "10.0.0.0/16"}, "cluster": {}}))
    assert found == [(f"{AZURE}.cidr", f"network cidr 172.31.0.0/16 lies in 172.31.0.0/16, {AKS_RESERVED}")]


def test_the_derived_aks_service_range_skips_what_aks_reserves() -> None:
    # 10.30.0.0/16 derives 172.30.0.0/16 (second octet 30 = 14 mod 16) elsewhere; AKS refuses it, so Azure takes 172.16.
    spec = loads(azure({"network": {"cidr": "10.30.0.0/16"}, "cluster": {}}))
    network = spec.clouds.azure.regions["eastus2"].network
    assert network.service_range(Cloud.AZURE) == IPv4Network("172.16.0.0/16")
    assert network.service_range(Cloud.AWS) == network.service_range(Cloud.GCP) == IPv4Network("172.30.0.0/16")


def test_an_explicit_service_range_that_aks_reserves_is_refused() -> None:
    assert issues(azure({"network": {"cidr": "10.40.0.0/16", "service_cidr": "172.30.0.0/16"}, "cluster": {}})) == [
        (f"{AZURE}.service_cidr", f"service_cidr 172.30.0.0/16 lies in 172.30.0.0/16, {AKS_RESERVED}")]


def test_setting_service_cidr_fixes_the_derived_aks_range() -> None:
    loads(azure({"network": {"cidr": "10.30.0.0/16", "service_cidr": "172.20.0.0/16"}, "cluster": {}}))


@pytest.mark.parametrize("value", ["10.0.0.0/12", "10.0.0.0/29"])
def test_aks_service_range_size(value: str) -> None:
    prefix = value.split("/")[1]
    assert issues(azure({"network": {"cidr": "10.40.0.0/16", "service_cidr": value}, "cluster": {}})) == [
        (f"{AZURE}.service_cidr", f"service_cidr {value} has prefix /{prefix}; {AKS_SERVICE}")]


@pytest.mark.parametrize("value", ["10.0.0.0/13", "10.0.0.0/28"])
def test_aks_service_range_bounds_are_allowed(value: str) -> None:
    loads(azure({"network": {"cidr": "10.40.0.0/16", "service_cidr": value}, "cluster": {}}))


def test_gke_services_range_is_at_most_a_slash_16() -> None:
    assert issues(gcp({"network": {"cidr": "10.20.0.0/16", "service_cidr": "10.128.0.0/14"}, "cluster": {}})) == [
        (f"{GCP}.service_cidr", "service_cidr 10.128.0.0/14 has prefix /14; GKE takes a services range of /16 or smaller "
                                "(a longer prefix)")]


@pytest.mark.parametrize("clouds", [
    azure({"network": {"cidr": "10.30.0.0/16", "service_cidr": "10.0.0.0/12", "pod_cidr": "100.64.0.0/30"}}),
    gcp({"network": {"cidr": "10.20.0.0/16", "service_cidr": "10.128.0.0/14", "pod_cidr": "100.64.0.0/30"}}),
    aws({"network": {"cidr": "10.10.0.0/16", "service_cidr": "192.168.0.0/28"}}),
], ids=["azure", "gcp", "aws"])
def test_cluster_rules_wait_for_a_cluster(clouds: dict[str, Any]) -> None:
    # Without a cluster nothing uses the ranges on the cloud's Kubernetes service.
    loads(clouds)


# --- 3. pod capacity -------------------------------------------------------------------------------------------------

POOLS = {"train": {"accelerator": "h100-80gb", "accelerators_per_node": 8, "max_nodes": 32},
         "serve": {"accelerator": "l4", "max_nodes": 5}}


def test_gke_pod_range_must_hold_a_slash_24_per_node() -> None:
    assert issues(gcp({"network": {"cidr": "10.20.0.0/16", "pod_cidr": "100.64.0.0/20"},
                       "cluster": {"system_pool": {"min_nodes": 1, "max_nodes": 3}}, "gpu_pools": POOLS})) == [
        (f"{GCP}.pod_cidr", "pod_cidr 100.64.0.0/20 holds 16 node blocks of /24, but the pools of this region scale to 40 nodes "
                            "(system 3 + train 32 + serve 5); use a /18 or larger")]


def test_the_suggested_size_is_enough() -> None:
    loads(gcp({"network": {"cidr": "10.20.0.0/16", "pod_cidr": "100.64.0.0/18"},
               "cluster": {"system_pool": {"min_nodes": 1, "max_nodes": 3}}, "gpu_pools": POOLS}))


def test_gke_counts_the_hosts_of_gke_tpu_slices_only() -> None:
    # v5e 2x4 is 2 hosts; 2 slices are 4 nodes. A tpu_vm slice takes node-subnet addresses, no pod block.
    slices = {"pretrain": {"generation": "v5e", "topology": "2x4", "slices": 2},
              "adhoc": {"generation": "v5e", "topology": "2x4", "mode": "tpu_vm"}}
    assert issues(gcp({"network": {"cidr": "10.20.0.0/16", "pod_cidr": "100.64.0.0/22"}, "cluster": {}, "tpu_slices": slices})) == [
        (f"{GCP}.pod_cidr", "pod_cidr 100.64.0.0/22 holds 4 node blocks of /24, but the pools of this region scale to 9 nodes "
                            "(system 5 + pretrain 4); use a /20 or larger")]


def test_aks_overlay_pod_range_must_hold_a_slash_24_per_node() -> None:
    assert issues(azure({"network": {"cidr": "10.40.0.0/16", "pod_cidr": "100.64.0.0/24"}, "cluster": {},
                         "gpu_pools": {"a100": {"accelerator": "a100-80gb", "accelerators_per_node": 1, "max_nodes": 4}}})) == [
        (f"{AZURE}.pod_cidr", "pod_cidr 100.64.0.0/24 holds 1 node blocks of /24, but the pools of this region scale to 9 nodes "
                              "(system 5 + a100 4); use a /20 or larger")]


def test_a_derived_pod_range_too_small_says_to_set_it() -> None:
    # The derived /14 holds 1024 node blocks; 1100 nodes need a /13.
    assert issues(azure({"network": {"cidr": "10.40.0.0/16"}, "cluster": {"system_pool": {"max_nodes": 100}},
                         "gpu_pools": {"big": {"accelerator": "a100-80gb", "accelerators_per_node": 1, "max_nodes": 1000}}})) == [
        (f"{AZURE}.pod_cidr", "pod_cidr 100.96.0.0/14 holds 1024 node blocks of /24, but the pools of this region scale to "
                              "1100 nodes (system 100 + big 1000); use a /13 or larger (derived default; set pod_cidr explicitly)")]


def test_eks_has_no_pod_range_to_fill() -> None:
    loads(aws({"network": {"cidr": "10.10.0.0/16"}, "cluster": {"system_pool": {"max_nodes": 100}},
               "gpu_pools": {"big": {"accelerator": "l4", "accelerators_per_node": 1, "max_nodes": 1000}}}))


# --- 4. routed ranges across networks -----------------------------------------------------------------------------

PEERED = ("networks and the GKE pod and services ranges in them (secondary ranges of a GCP subnet) must not overlap (they "
          "may be peered)")


def two(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    return {**first, **second}


def test_an_aws_vpc_inside_gkes_derived_pod_range_is_refused_at_the_derived_range() -> None:
    # 10.20.0.0/16 derives the pod range 100.80.0.0/14 (second octet 20 = 4 mod 16), which holds the AWS VPC.
    assert issues(two(aws({"network": {"cidr": "100.80.0.0/16"}}), gcp({"network": {"cidr": "10.20.0.0/16"}}))) == [
        (f"{GCP}.pod_cidr", f"100.80.0.0/14 overlaps 100.80.0.0/16 at {AWS}.cidr; {PEERED} (derived default; set pod_cidr explicitly)")]


def test_an_explicit_gke_pod_range_equal_to_an_aws_vpc_is_refused() -> None:
    assert issues(two(aws({"network": {"cidr": "10.10.0.0/16"}}),
                      gcp({"network": {"cidr": "10.20.0.0/16", "pod_cidr": "10.10.0.0/16"}}))) == [
        (f"{GCP}.pod_cidr", f"10.10.0.0/16 overlaps 10.10.0.0/16 at {AWS}.cidr; {PEERED}")]


def test_a_gke_services_range_in_another_network_is_refused() -> None:
    # GCP refuses a services secondary range that overlaps a peered network, as it does a pod range.
    assert issues(two(aws({"network": {"cidr": "10.10.0.0/16"}}),
                      gcp({"network": {"cidr": "10.20.0.0/16", "service_cidr": "10.10.64.0/20"}}))) == [
        (f"{GCP}.service_cidr", f"10.10.64.0/20 overlaps 10.10.0.0/16 at {AWS}.cidr; {PEERED}")]


def test_a_later_network_in_a_derived_gke_range_is_reported_at_the_derived_range() -> None:
    # The Azure VNet is written, the GKE pod range derived: setting pod_cidr is the fix, so that is where it is named.
    found = issues(two(gcp({"network": {"cidr": "10.20.0.0/16"}}), azure({"network": {"cidr": "100.80.0.0/16"}})))
    assert found == [(f"{GCP}.pod_cidr", f"100.80.0.0/14 overlaps 100.80.0.0/16 at {AZURE}.cidr; {PEERED} (derived default; "
                                         "set pod_cidr explicitly)")]


def test_two_gcp_networks_deriving_the_same_ranges_are_told_to_set_both() -> None:
    # 10.20 and 10.36 agree modulo 16: the same derived pod and services ranges.
    clouds = {"gcp": {"project": "acme-ml-test", "regions": {"us-central1": {"network": {"cidr": "10.20.0.0/16"}},
                                                             "europe-west4": {"network": {"cidr": "10.36.0.0/16"}}}}}
    west = "platform.clouds.gcp.regions.europe-west4.network"
    assert issues(clouds) == [
        (f"{west}.pod_cidr", f"100.80.0.0/14 overlaps 100.80.0.0/14 at {GCP}.pod_cidr; {PEERED} (derived default; set pod_cidr explicitly)"),
        (f"{west}.service_cidr", f"172.20.0.0/16 overlaps 172.20.0.0/16 at {GCP}.service_cidr; {PEERED} (derived default; set "
                                 "service_cidr explicitly)")]


def test_cluster_internal_ranges_of_eks_and_aks_may_repeat_elsewhere() -> None:
    # EKS and AKS service ranges and AKS overlay pod ranges never leave their cluster (AKS NATs pods to the node address).
    loads(two(aws({"network": {"cidr": "10.10.0.0/16", "service_cidr": "172.20.0.0/16"}, "cluster": {}}),
              two(gcp({"network": {"cidr": "10.20.0.0/16", "service_cidr": "172.21.0.0/16"}, "cluster": {}}),
                  azure({"network": {"cidr": "10.40.0.0/16", "pod_cidr": "100.80.0.0/14", "service_cidr": "172.20.0.0/16"},
                         "cluster": {}}))))


PRIVATE_16S = st.one_of(st.builds(lambda o: f"10.{o}.0.0/16", st.integers(0, 255)),
                        st.builds(lambda o: f"100.{o}.0.0/16", st.integers(64, 127)),
                        st.builds(lambda o: f"172.{o}.0.0/16", st.integers(16, 31)))


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 255), st.data())
def test_an_aws_vpc_is_refused_exactly_when_it_overlaps_a_range_of_the_gcp_network(octet: int, data: st.DataObject) -> None:
    spec = gcp({"network": {"cidr": f"10.{octet}.0.0/16"}})
    net = loads(spec).clouds.gcp.regions["us-central1"].network
    routed = {"cidr": net.cidr, "pod_cidr": net.effective_pod_cidr, "service_cidr": net.service_range(Cloud.GCP)}
    # Any private /16, or one inside a range of the GCP network (so that overlaps are drawn often).
    inside = st.sampled_from(list(routed.values())).flatmap(
        lambda rng: st.sampled_from([str(s) for s in rng.subnets(new_prefix=16)] if rng.prefixlen <= 16 else [str(rng.supernet(new_prefix=16))]))
    vpc = data.draw(st.one_of(PRIVATE_16S, inside))
    # A fixed EKS service range: only the cross-network rule is under test.
    clouds = two(aws({"network": {"cidr": vpc, "service_cidr": "192.168.0.0/16"}}), spec)
    hits = [(name, rng) for name, rng in routed.items() if rng.overlaps(IPv4Network(vpc))]
    if not hits:
        loads(clouds)
        return
    assert [(path, message.split("; ")[0]) for path, message in issues(clouds)] == [
        (f"{GCP}.{name}", f"{rng} overlaps {vpc} at {AWS}.cidr") for name, rng in hits]


# --- derived defaults ------------------------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.integers(0, 255), st.sampled_from([16, 20, 22]))
def test_derived_ranges_pass_on_aws_and_gcp(octet: int, prefix: int) -> None:
    cidr = f"10.{octet}.0.0/{prefix}"
    loads(aws({"network": {"cidr": cidr}, "cluster": {}}))
    loads(gcp({"network": {"cidr": cidr}, "cluster": {}}))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 255))
def test_derived_ranges_pass_on_azure(octet: int) -> None:
    loads(azure({"network": {"cidr": f"10.{octet}.0.0/16"}, "cluster": {}}))


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_reference_stacks_pass_the_range_checks(stack: str) -> None:
    config = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]
    [key] = [k for k in config if k.endswith(":platform")]
    assert isinstance(load_platform(config[key]), Platform)
