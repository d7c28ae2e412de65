"""GKE master versions asked during preview (getServerConfig): a cluster whose kubernetes_version GKE does not offer
in the region stops the run with its config path, before the cluster is created."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest
from gcp.support import PROJECT, by_name, gcp_platform

from aiinfra.plan.runtime import PlanMocks, PlanResult, RecordingMonitor, run_program
from components.compose import build_platform
from components.spec import load_platform

VERSIONS = "gcp:container/getEngineVersions:getEngineVersions"
PATH = "platform.clouds.gcp.regions.us-central1.cluster.kubernetes_version"


class _Versions(PlanMocks):
    """GKE lists the given master versions; records what was asked."""

    def __init__(self, valid: list[str], latest: dict[str, str] | None = None) -> None:
        self.valid, self.latest, self.asked = valid, latest or {}, []

    def call(self, args):  # noqa: ANN001, ANN201 (the SDK's mock interface)
        if args.token != VERSIONS:
            return super().call(args)
        self.asked.append(dict(args.args))
        return {**super().call(args), "validMasterVersions": self.valid, "releaseChannelLatestVersion": self.latest}


def _plan(cluster: dict[str, Any], mocks: PlanMocks) -> PlanResult:
    spec = load_platform(gcp_platform({"project": PROJECT, "regions": {"us-central1": {
        "network": {"cidr": "10.20.0.0/16"}, "cluster": cluster}}}))
    return run_program(lambda: build_platform(spec), project="ai-infra", stack="test", mocks_=mocks)


OFFERED = ["1.34.1-gke.1829001", "1.33.5-gke.1080000", "1.33.4-gke.1350000", "1.32.9-gke.1108000"]


def test_an_offered_minor_is_the_clusters_minimum_master_version() -> None:
    mocks = _Versions(OFFERED)
    plan = _plan({"kubernetes_version": "1.33"}, mocks)
    assert mocks.asked == [{"project": PROJECT, "location": "us-central1"}]
    assert by_name(plan, "test-us-central1-gke")["minMasterVersion"] == "1.33"


def test_a_minor_gke_does_not_offer_stops_the_run() -> None:
    with pytest.raises(pulumi.RunError) as caught:
        _plan({"kubernetes_version": "1.99"}, _Versions(OFFERED))
    assert str(caught.value) == (f"{PATH}: GKE does not offer Kubernetes 1.99 in us-central1; it offers 1.32, 1.33, 1.34: "
                                 "set kubernetes_version to one of them")


LATEST = {"RAPID": "1.34.1-gke.1829001", "REGULAR": "1.33.5-gke.1080000", "STABLE": "1.32.9-gke.1108000",
          "EXTENDED": "1.33.5-gke.1080000"}


def test_a_minor_newer_than_the_release_channels_latest_stops_the_run() -> None:
    # GKE: "Master version must be one of "STABLE" channel supported versions [...]" (a minor the channel lacks).
    with pytest.raises(pulumi.RunError) as caught:
        _plan({"kubernetes_version": "1.33", "upgrade_channel": "stable"}, _Versions(OFFERED, LATEST))
    assert str(caught.value) == (
        f"{PATH}: GKE's stable release channel in us-central1 goes up to Kubernetes 1.32 (1.32.9-gke.1108000), so it "
        "creates no cluster at 1.33: set kubernetes_version to 1.32 or older, or set upgrade_channel to rapid or regular")


@pytest.mark.parametrize(("version", "channel"), [("1.33", "regular"), ("1.32", "regular"), ("1.34", "rapid")])
def test_a_minor_within_the_release_channel_is_kept(version: str, channel: str) -> None:
    plan = _plan({"kubernetes_version": version, "upgrade_channel": channel}, _Versions(OFFERED, LATEST))
    cluster = by_name(plan, "test-us-central1-gke")
    assert (cluster["minMasterVersion"], cluster["releaseChannel"]) == (version, {"channel": channel.upper()})


def test_without_a_version_the_release_channel_decides_and_nothing_is_asked() -> None:
    mocks = _Versions(OFFERED)
    plan = _plan({}, mocks)
    assert mocks.asked == [] and "minMasterVersion" not in by_name(plan, "test-us-central1-gke")


def test_while_the_apis_are_being_enabled_the_version_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    # The first preview of a new project: the lookup waits for the container API, so the engine answers it unknown.
    from pulumi.runtime.proto import resource_pb2

    answer = RecordingMonitor.Invoke
    monkeypatch.setattr(RecordingMonitor, "Invoke", lambda self, request: resource_pb2.ResourceInvokeResponse(unknown=True)
                        if request.tok == VERSIONS else answer(self, request))
    plan = _plan({"kubernetes_version": "1.99"}, _Versions(OFFERED))
    assert by_name(plan, "test-us-central1-gke")["minMasterVersion"] == "1.99"
