"""Pod and service ranges: which address blocks count as private, what each managed Kubernetes service accepts, and
how many nodes a pod range holds when the cloud gives every node a fixed block of it. Pure: no pydantic, no Pulumi.

The spec checks (components/spec/checks.py) turn these into messages; the values here are the clouds' own rules, each
with the page that states it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from ipaddress import IPv4Network

RFC1918 = (IPv4Network("10.0.0.0/8"), IPv4Network("172.16.0.0/12"), IPv4Network("192.168.0.0/16"))
RFC6598 = IPv4Network("100.64.0.0/10")
PRIVATE_BLOCKS = (*RFC1918, RFC6598)
"""Private address space: RFC 1918 and the RFC 6598 shared space. Python's `is_private` is not this: it also counts
loopback, link-local and the documentation ranges, and not 100.64.0.0/10."""
PRIVATE_RULE = "a range inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16 (RFC 1918) or 100.64.0.0/10 (RFC 6598)"

# Addresses no client on the internet has, so a public endpoint never sees them as a source; EKS refuses them in
# publicAccessCidrs ("The block cannot include reserved addresses": docs.aws.amazon.com/eks/latest/userguide/
# config-cluster-endpoint.html). The RFC 5737 documentation ranges (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24)
# are not listed: they are the examples docs and tests use for a public egress range.
NON_PUBLIC_BLOCKS: tuple[tuple[IPv4Network, str], ...] = tuple(sorted((
    *((block, "private, RFC 1918") for block in RFC1918),
    (RFC6598, "shared address space, RFC 6598"),
    (IPv4Network("0.0.0.0/8"), "'this network', RFC 1122"),
    (IPv4Network("127.0.0.0/8"), "loopback"),
    (IPv4Network("169.254.0.0/16"), "link-local"),
    (IPv4Network("192.0.0.0/24"), "IETF protocol assignments, RFC 6890"),
    (IPv4Network("198.18.0.0/15"), "benchmarking, RFC 2544"),
    (IPv4Network("224.0.0.0/4"), "multicast"),
    (IPv4Network("240.0.0.0/4"), "reserved, RFC 1112"),
), key=lambda entry: entry[0]))
"""(block, what it is), by address: messages list the blocks a range overlaps in this order."""

# EKS serviceIpv4Cidr: "Within one of the following private IP address blocks: 10.0.0.0/8, 172.16.0.0/12, or
# 192.168.0.0/16. Doesn't overlap with any CIDR block assigned to the VPC [...]. Between /24 and /12."
# https://docs.aws.amazon.com/eks/latest/APIReference/API_KubernetesNetworkConfigRequest.html
EKS_SERVICE_BLOCKS = RFC1918
EKS_SERVICE_PREFIXES = (12, 24)

# AKS reserves these for the Kubernetes service, pod and cluster virtual network address ranges of every cluster, and
# rejects ranges that overlap them ("172.16.0.0/12 isn't valid because the range includes 172.30.0.0/16"), section
# "AKS CNI networking prerequisites": https://learn.microsoft.com/en-us/azure/aks/concepts-network-cni-overview
AKS_RESERVED = (IPv4Network("169.254.0.0/16"), IPv4Network("172.30.0.0/16"), IPv4Network("172.31.0.0/16"),
                IPv4Network("192.0.2.0/24"))
# Azure CNI Overlay: "Each node is assigned a /24 address space carved out from the same CIDR [...] The /24 size [...]
# is fixed", and the service address CIDR "must be smaller than /12".
# https://learn.microsoft.com/en-us/azure/aks/concepts-network-azure-cni-overlay
AKS_OVERLAY_NODE_BLOCK = 24
AKS_SERVICE_PREFIXES = (13, 28)
"""/13: the largest service range AKS takes ("smaller than /12"). /28: the smallest that still has the 11th address,
which the toolkit's AKS cluster gives the cluster DNS service (components/azure/cluster.py, `_DNS_SERVICE_IP_OFFSET`)."""

# GKE Standard: "With the default maximum of 110 Pods per node [...] Kubernetes assigns a /24 CIDR block (256
# addresses) to each of the nodes [...] The block always contains at least twice as many addresses as the maximum
# number of Pods per node." https://cloud.google.com/kubernetes-engine/docs/how-to/flexible-pod-cidr
# The toolkit's GKE cluster and node pools (components/gcp) set no max_pods_per_node, so GKE's default applies.
GKE_DEFAULT_MAX_PODS_PER_NODE = 110
# GKE's services range is at most a /16: the API refuses larger ones ("Services CIDR range is smaller than minimum
# (14 < 16)", github.com/rancher/rancher/issues/32207), per
# https://cloud.google.com/kubernetes-engine/docs/concepts/alias-ips#cluster_sizing_secondary_range_svcs
GKE_SERVICE_LARGEST = 16


def is_private(network: IPv4Network) -> bool:
    """Whether `network` lies inside RFC 1918 or RFC 6598 space."""
    return any(network.subnet_of(block) for block in PRIVATE_BLOCKS)


def overlapping(network: IPv4Network, ranges: Sequence[IPv4Network]) -> list[IPv4Network]:
    """The entries of `ranges` that share an address with `network`, in order."""
    return [r for r in ranges if network.overlaps(r)]


def gke_node_block_prefix(max_pods_per_node: int = GKE_DEFAULT_MAX_PODS_PER_NODE) -> int:
    """Prefix of the pod block GKE gives each node: the smallest block with at least twice `max_pods_per_node`
    addresses (8 -> /28, 9-16 -> /27, 17-32 -> /26, 33-64 -> /25, 65-110 -> /24)."""
    if max_pods_per_node < 1:
        raise ValueError(f"max_pods_per_node must be at least 1; got {max_pods_per_node}")
    return 32 - math.ceil(math.log2(2 * max_pods_per_node))


def node_blocks(pod_range: IPv4Network, block_prefix: int) -> int:
    """How many node blocks of /`block_prefix` fit in `pod_range` (0 when the range is smaller than one block)."""
    return 2 ** (block_prefix - pod_range.prefixlen) if pod_range.prefixlen <= block_prefix else 0


def prefix_for_nodes(nodes: int, block_prefix: int) -> int:
    """The longest prefix (smallest range) that holds `nodes` node blocks of /`block_prefix`; 0 if even the whole
    address space cannot."""
    if nodes < 1:
        raise ValueError(f"nodes must be at least 1; got {nodes}")
    return max(0, block_prefix - math.ceil(math.log2(nodes)))


@dataclass(frozen=True)
class PodShortfall:
    """A pod range too small for the nodes its region can scale to."""

    blocks: int
    """Node blocks the range holds."""
    nodes: int
    """Nodes the region's pools scale to (the sum of their maximums)."""
    needed_prefix: int
    """The longest prefix that would hold them."""


def pod_shortfall(pod_range: IPv4Network, block_prefix: int, pools: Sequence[tuple[str, int]]) -> PodShortfall | None:
    """None when `pod_range` holds a /`block_prefix` block for every node of `pools` ((name, max nodes) pairs) at
    their maximums at once; else what it holds and what would be needed."""
    nodes = sum(count for _, count in pools)
    blocks = node_blocks(pod_range, block_prefix)
    if nodes <= blocks:
        return None
    return PodShortfall(blocks=blocks, nodes=nodes, needed_prefix=prefix_for_nodes(nodes, block_prefix))
