"""Kubernetes versions asked during preview (EKS DescribeClusterVersions): a cluster whose version EKS does not offer in
the region stops the run with its config path, before its network, key and roles are created for nothing."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest
from helpers import platform_dict

from aiinfra.plan.runtime import PlanMocks, PlanResult, run_program
from components.compose import build_platform
from components.spec import load_platform
from components.spec.aws import EKS_KUBERNETES_VERSION
from components.spec.offerings import kubernetes_version_problem

VERSIONS = "aws:eks/getClusterVersions:getClusterVersions"
PATH = "platform.clouds.aws.regions.us-west-2.cluster.kubernetes_version"


class _Versions(PlanMocks):
    """EKS lists the given minor versions in every region; records the regions asked."""

    def __init__(self, offered: list[str]) -> None:
        self.offered, self.asked = offered, []

    def call(self, args):  # noqa: ANN001, ANN201 (the SDK's mock interface)
        if args.token != VERSIONS:
            return super().call(args)
        self.asked.append(args.args.get("region"))
        return {**super().call(args), "clusterVersions": [
            {"clusterVersion": v, "clusterType": "eks", "defaultPlatformVersion": "eks.1", "defaultVersion": False,
             "endOfExtendedSupportDate": "", "endOfStandardSupportDate": "", "kubernetesPatchVersion": f"{v}.0",
             "releaseDate": "", "versionStatus": "STANDARD_SUPPORT"} for v in self.offered]}


def _plan(cluster: dict[str, Any], mocks: PlanMocks) -> PlanResult:
    spec = load_platform(platform_dict({"aws": {"regions": {"us-west-2": {
        "network": {"cidr": "10.9.0.0/16"}, "cluster": cluster}}}}, addons={"enabled": False}))
    return run_program(lambda: build_platform(spec), project="ai-infra", stack="test", mocks_=mocks)


def test_an_offered_version_is_the_clusters() -> None:
    mocks = _Versions(["1.32", "1.33", "1.34"])
    plan = _plan({"kubernetes_version": "1.33"}, mocks)
    assert mocks.asked == ["us-west-2"]
    assert plan.one("aws:eks/cluster:Cluster").inputs["version"] == "1.33"


@pytest.mark.parametrize(("cluster", "message"), [
    ({"kubernetes_version": "1.99"},
     f"{PATH}: EKS does not offer Kubernetes 1.99 in us-west-2; it offers 1.32, 1.33: set kubernetes_version to one of them"),
    ({}, f"{PATH}: EKS does not offer the default Kubernetes {EKS_KUBERNETES_VERSION} in us-west-2; it offers 1.32, 1.33: "
         "set kubernetes_version to one of them"),
])
def test_a_version_eks_does_not_offer_stops_the_run(cluster: dict[str, Any], message: str) -> None:
    offered = ["1.33", "1.32"]
    assert EKS_KUBERNETES_VERSION not in offered  # the second case needs a default EKS does not list here
    with pytest.raises(pulumi.RunError) as caught:
        _plan(cluster, _Versions(offered))
    assert str(caught.value) == message


def test_offline_no_version_is_reported_and_none_is_compared() -> None:
    plan = _plan({"kubernetes_version": "1.34"}, PlanMocks())
    assert plan.one("aws:eks/cluster:Cluster").inputs["version"] == "1.34"


def test_versions_sort_as_numbers_and_an_empty_list_compares_nothing() -> None:
    assert kubernetes_version_problem("p", "EKS", "r", "1.9", ["1.10", "1.8"]) == (
        "p: EKS does not offer Kubernetes 1.9 in r; it offers 1.8, 1.10: set kubernetes_version to one of them")
    assert kubernetes_version_problem("p", "EKS", "r", "1.9", []) is None
