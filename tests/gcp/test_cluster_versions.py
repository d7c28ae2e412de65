"""GKE versions asked during preview (getServerConfig): a cluster's kubernetes_version is checked against what its
release channel offers in the region (a minor not yet offered stops the run, one past its end of support warns), and
in a region with Managed Lustre the version the cluster will get must reach the secure kernel module loading floor."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest
from gcp.support import PROJECT, by_name, gcp_platform

from aiinfra.plan.runtime import PlanMocks, PlanResult, RecordingMonitor, run_program
from components.compose import build_platform
from components.spec import load_platform
from components.spec.gcp import SIGNED_MODULES_VERSION, gke_version_key, pinned_minor_check

VERSIONS = "gcp:container/getEngineVersions:getEngineVersions"
PATH = "platform.clouds.gcp.regions.us-central1.cluster.kubernetes_version"

# A region's server config: each channel's default and valid versions (newest first), and the project-wide
# validMasterVersions, which lists versions of no channel (1.31 here) and not the Rapid-only 1.35.
CHANNELS = {
    "RAPID": ("1.35.0-gke.2398000", ["1.35.0-gke.2398000", "1.34.3-gke.1051000", "1.34.1-gke.3971001"]),
    "REGULAR": ("1.33.5-gke.1308000", ["1.34.1-gke.3971001", "1.34.1-gke.2037000", "1.33.5-gke.1308000", "1.32.9-gke.1548000"]),
    "STABLE": ("1.33.5-gke.1080000", ["1.33.5-gke.1308000", "1.33.5-gke.1080000", "1.32.9-gke.1548000"]),
}
VALID_MASTER = ["1.34.1-gke.3971001", "1.34.1-gke.2037000", "1.33.5-gke.1308000", "1.33.5-gke.1080000",
                "1.32.9-gke.1548000", "1.31.13-gke.1166000"]


class _ServerConfig(PlanMocks):
    """getServerConfig as pulumi-gcp 10.2.0's data source reports it: with a version prefix, validMasterVersions and
    each channel's latest version keep only versions with the prefix (a channel without one is left out); records
    what was asked."""

    def __init__(self, channels: dict[str, tuple[str, list[str]]] | None = None, targets: dict[str, str] | None = None) -> None:
        self.channels, self.asked = CHANNELS if channels is None else channels, []
        self.targets = targets  # each channel's auto-upgrade target; None: the channels' defaults

    def call(self, args):  # noqa: ANN001, ANN201 (the SDK's mock interface)
        if args.token != VERSIONS:
            return super().call(args)
        self.asked.append(dict(args.args))
        prefix = args.args.get("versionPrefix", "")
        latest = {c: next(v for v in valid if v.startswith(prefix)) for c, (_, valid) in self.channels.items()
                  if any(v.startswith(prefix) for v in valid)}
        return {**super().call(args), "validMasterVersions": [v for v in VALID_MASTER if v.startswith(prefix)],
                "releaseChannelDefaultVersion": {c: default for c, (default, _) in self.channels.items()},
                "releaseChannelUpgradeTargetVersion": self.targets if self.targets is not None else
                {c: default for c, (default, _) in self.channels.items()},
                "releaseChannelLatestVersion": latest}


def _plan(cluster: dict[str, Any], mocks: PlanMocks, lustre: bool = False) -> PlanResult:
    region: dict[str, Any] = {"network": {"cidr": "10.20.0.0/16"}, "cluster": cluster}
    if lustre:
        region["lustre"] = {"scratch": {"size_gib": 18000, "throughput_mbps_per_tib": 500}}
    spec = load_platform(gcp_platform({"project": PROJECT, "regions": {"us-central1": region}}))
    return run_program(lambda: build_platform(spec), project="ai-infra", stack="test", mocks_=mocks)


def _cluster(plan: PlanResult) -> dict[str, Any]:
    return by_name(plan, "test-us-central1-gke")


def _warnings(plan: PlanResult) -> list[str]:
    return [d.message for d in plan.diagnostics if d.severity == "warning" and "kubernetes_version" in d.message]


def test_an_offered_minor_is_the_clusters_minimum_master_version() -> None:
    mocks = _ServerConfig()
    plan = _plan({"kubernetes_version": "1.33"}, mocks)
    # The channels' newest versions, and each channel's newest of the pinned minor (the prefix keeps only its versions).
    assert sorted(mocks.asked, key=len) == [{"project": PROJECT, "location": "us-central1"},
                                            {"project": PROJECT, "location": "us-central1", "versionPrefix": "1.33."}]
    assert _cluster(plan)["minMasterVersion"] == "1.33" and not _warnings(plan)


def test_the_release_channel_is_the_list_that_counts_not_valid_master_versions() -> None:
    # 1.35 is in the Rapid channel only: validMasterVersions (versions for clusters in no channel) lacks it, and
    # every cluster here is in a channel, which creates clusters only at its own valid versions.
    plan = _plan({"kubernetes_version": "1.35", "upgrade_channel": "rapid"}, _ServerConfig())
    assert (_cluster(plan)["minMasterVersion"], _cluster(plan)["releaseChannel"]) == ("1.35", {"channel": "RAPID"})
    # 1.34 is in validMasterVersions, but not yet in Stable: GKE would refuse the cluster.
    with pytest.raises(pulumi.RunError) as caught:
        _plan({"kubernetes_version": "1.34", "upgrade_channel": "stable"}, _ServerConfig())
    assert str(caught.value) == (
        f"{PATH}: GKE's stable release channel in us-central1 goes up to Kubernetes 1.33 (1.33.5-gke.1308000), so it "
        "creates no cluster at 1.34: set kubernetes_version to 1.33 or older, or set upgrade_channel to rapid or regular")


def test_a_minor_no_channel_offers_yet_stops_the_run() -> None:
    with pytest.raises(pulumi.RunError) as caught:
        _plan({"kubernetes_version": "1.99"}, _ServerConfig())
    assert str(caught.value) == (
        f"{PATH}: GKE's regular release channel in us-central1 goes up to Kubernetes 1.34 (1.34.1-gke.3971001), so it "
        "creates no cluster at 1.99: set kubernetes_version to 1.34 or older")


@pytest.mark.parametrize("version", ["1.31", "1.28"])
def test_a_minor_past_its_end_of_support_warns_and_the_run_goes_on(version: str) -> None:
    # GKE upgraded the existing cluster past the pinned minor (min_master_version is only its minimum) and dropped the
    # minor from the channel; stopping every later `pulumi up` would help no one. A new cluster GKE refuses itself.
    plan = _plan({"kubernetes_version": version}, _ServerConfig())
    assert _cluster(plan)["minMasterVersion"] == version
    assert _warnings(plan) == [
        f"{PATH}: GKE's regular release channel in us-central1 no longer offers Kubernetes {version} (it offers up to "
        "1.34): GKE upgrades an existing cluster past it at its end of support and creates no new one at it; set "
        "kubernetes_version to the cluster's current minor (up to 1.34), or remove it to follow the channel"]


def test_without_a_version_or_lustre_the_release_channel_decides_and_nothing_is_asked() -> None:
    mocks = _ServerConfig()
    plan = _plan({}, mocks)
    assert mocks.asked == [] and "minMasterVersion" not in _cluster(plan)


def test_while_the_apis_are_being_enabled_the_version_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    # The first preview of a new project: the lookup waits for the container API, so the engine answers it unknown.
    from pulumi.runtime.proto import resource_pb2

    answer = RecordingMonitor.Invoke
    monkeypatch.setattr(RecordingMonitor, "Invoke", lambda self, request: resource_pb2.ResourceInvokeResponse(unknown=True)
                        if request.tok == VERSIONS else answer(self, request))
    plan = _plan({"kubernetes_version": "1.99"}, _ServerConfig(), lustre=True)
    assert _cluster(plan)["minMasterVersion"] == "1.99"
    plan = _plan({}, _ServerConfig(), lustre=True)
    assert _cluster(plan)["releaseChannel"] == {"channel": "REGULAR"}


# --- Managed Lustre: CPU and TPU pools load the Lustre client with ENFORCE_SIGNED_MODULES --------------------------

LUSTRE = "with Managed Lustre in the region the CPU and TPU nodes load the Lustre client under secure kernel module " \
         "loading (ENFORCE_SIGNED_MODULES), which GKE allows from 1.34.1-gke.2364000"


def test_lustre_without_a_version_stops_when_the_channel_default_is_below_the_signed_modules_floor() -> None:
    # Regular's default is 1.33: the pools' kernel module policy would be refused when GKE creates them.
    mocks = _ServerConfig()
    with pytest.raises(pulumi.RunError) as caught:
        _plan({}, mocks, lustre=True)
    assert str(caught.value) == (
        f"{PATH}: unset, so the cluster takes the default of GKE's regular release channel in us-central1, "
        f"1.33.5-gke.1308000; {LUSTRE}: set kubernetes_version to 1.34 (1.34.1-gke.3971001 in the channel) or set "
        "upgrade_channel to rapid")
    assert mocks.asked == [{"project": PROJECT, "location": "us-central1"}]


def test_lustre_without_a_version_goes_on_when_only_the_upgrade_target_lags_the_floor() -> None:
    # GKE publishes a target below the default when a new minor becomes the default first (release notes: Regular's
    # default 1.34.3-gke.1318000, target 1.33.5-gke.2392000): a new cluster starts at the default and is never taken down.
    targets = {"RAPID": "1.33.5-gke.2392000", "REGULAR": "1.33.5-gke.2392000", "STABLE": "1.32.9-gke.1000"}
    plan = _plan({"upgrade_channel": "rapid"}, _ServerConfig(targets=targets), lustre=True)
    assert _cluster(plan)["releaseChannel"] == {"channel": "RAPID"}


def test_lustre_without_a_version_goes_on_when_the_channel_default_reaches_the_floor() -> None:
    plan = _plan({"upgrade_channel": "rapid"}, _ServerConfig(), lustre=True)
    cluster = _cluster(plan)
    assert cluster["releaseChannel"] == {"channel": "RAPID"} and "minMasterVersion" not in cluster
    system = by_name(plan, "test-us-central1-system")["nodeConfig"]
    assert system["linuxNodeConfig"]["nodeKernelModuleLoading"] == {"policy": "ENFORCE_SIGNED_MODULES"}


def test_lustre_with_a_pinned_minor_checks_the_minors_newest_patch_in_the_channel() -> None:
    # Regular's newest 1.34 is 1.34.1-gke.3971001, at or above the floor.
    assert _cluster(_plan({"kubernetes_version": "1.34"}, _ServerConfig(), lustre=True))["minMasterVersion"] == "1.34"
    # A channel whose 1.34 patches are all below the floor: GKE would create the cluster at 1.34.1-gke.2037000.
    early = {**CHANNELS, "REGULAR": ("1.33.5-gke.1308000", ["1.34.1-gke.2037000", "1.33.5-gke.1308000"])}
    with pytest.raises(pulumi.RunError) as caught:
        _plan({"kubernetes_version": "1.34"}, _ServerConfig(early), lustre=True)
    assert str(caught.value) == (
        f"{PATH}: Kubernetes 1.34 is at most 1.34.1-gke.2037000 in GKE's regular release channel in us-central1; "
        f"{LUSTRE}: set upgrade_channel to rapid")


def test_offline_lustre_without_a_version_passes_on_the_placeholder_defaults() -> None:
    # The offline plan reads no project: its GKE defaults (aiinfra/plan/invoke_values.py) are at or above the floor.
    plan = _plan({}, PlanMocks(), lustre=True)
    assert _cluster(plan)["releaseChannel"] == {"channel": "REGULAR"}


def test_gke_versions_order_by_every_number() -> None:
    assert gke_version_key("1.34.1-gke.2364000") > gke_version_key("1.34.1-gke.999999")
    assert gke_version_key("1.34.1-gke.2364000") < gke_version_key("1.34.2-gke.1000")
    assert gke_version_key(SIGNED_MODULES_VERSION) > gke_version_key("1.34")


def test_nothing_reported_nothing_compared() -> None:
    assert pinned_minor_check("p", "r", "1.99", "REGULAR", {}, {}) == (None, None)
