"""Pure builders of the Kubernetes layer: GPU sharing, Helm values per cloud, Kueue quotas and flavors."""

from __future__ import annotations

import yaml
from k8s.layer import make_spec
from hypothesis import given
from hypothesis import strategies as st

from components import catalog
from components.k8s.cluster import AKS_SPOT_TAINT, cluster_view
from components.k8s.gpu_values import GKE_DRIVER_DIR, gpu_operator_values, neuron_values, standalone_dcgm_values
from components.k8s.queues import DEFAULT_FLAVOR, cluster_queue, flavors, split_quota, team_shares
from components.k8s.sharing import (
    DEVICE_PLUGIN_CONFIG_LABEL,
    MIG_CONFIG_LABEL,
    device_plugin_configs,
    mig_instances_per_gpu,
    mig_parted_config,
    sharing_node_labels,
)
from components.spec import AddonsSpec, Cloud, GpuSharing, MigStrategy, TeamSpec


def view_of(cloud: str, pools: dict | None = None, **top):
    spec = make_spec((cloud,), pools={cloud: {"gpu_pools": pools}} if pools is not None else None, **top)
    cloud_spec = dict(spec.clouds.items())[Cloud(cloud)]
    return cluster_view(Cloud(cloud), next(iter(cloud_spec.regions.values())))


# --- MIG and sharing -------------------------------------------------------------------------------------------

def test_mig_instances_match_nvidia_tables():
    h100 = ("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb")
    assert [mig_instances_per_gpu(p, h100) for p in h100] == [7, 4, 3, 2, 1, 1]
    a100_40 = ("1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb")
    assert [mig_instances_per_gpu(p, a100_40) for p in a100_40] == [7, 4, 3, 2, 1, 1]


@given(st.sampled_from([(r.accelerator, p) for r in catalog.instance_types() for p in r.mig_profiles]))
def test_mig_layout_fits_the_gpu(row):
    """Every catalog MIG profile yields a layout within the GPU's 7 compute and 8 memory slices."""
    accelerator, profile = row
    offered = next(r.mig_profiles for r in catalog.instance_types() if r.accelerator == accelerator)
    count = mig_instances_per_gpu(profile, offered)
    compute = int(profile.split("g.")[0])
    assert count >= 1 and count * compute <= 7


def test_mig_parted_config_has_default_and_per_accelerator_layouts():
    view = view_of("aws")
    config = yaml.safe_load(mig_parted_config(view.nvidia_pools))
    assert config["version"] == "v1"
    assert config["mig-configs"]["all-disabled"] == [{"devices": "all", "mig-enabled": False}]
    assert config["mig-configs"]["a100-80gb-3g.40gb"] == [
        {"devices": "all", "mig-enabled": True, "mig-devices": {"3g.40gb": 2}}]
    assert set(config["mig-configs"]) == {"all-disabled", "a100-80gb-3g.40gb"}


def test_device_plugin_configs_time_slicing_and_default():
    configs = {k: yaml.safe_load(v) for k, v in device_plugin_configs(view_of("aws").nvidia_pools, MigStrategy.MIXED).items()}
    assert configs["default"] == {"version": "v1", "flags": {"migStrategy": "mixed"}}
    assert configs["time-slicing-4"]["sharing"] == {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}}


def test_sharing_node_labels_per_cloud():
    mig = GpuSharing(mode="mig", mig_profile="3g.40gb")
    ts = GpuSharing(mode="time_slicing", replicas_per_gpu=4)
    assert sharing_node_labels(Cloud.AWS, "a100-80gb", mig, False) == {MIG_CONFIG_LABEL: "a100-80gb-3g.40gb"}
    assert sharing_node_labels(Cloud.AZURE, "a100-80gb", mig, False) == {}  # AKS partitions itself
    assert sharing_node_labels(Cloud.AZURE, "l4", ts, False) == {DEVICE_PLUGIN_CONFIG_LABEL: "time-slicing-4"}
    assert sharing_node_labels(Cloud.GCP, "l4", ts, False) == {}  # GKE time-sharing
    assert sharing_node_labels(Cloud.GCP, "l4", ts, True) == {DEVICE_PLUGIN_CONFIG_LABEL: "time-slicing-4"}
    assert sharing_node_labels(Cloud.AWS, "l4", GpuSharing(), False) == {}


# --- Helm values per cloud ---------------------------------------------------------------------------------------

def test_eks_operator_uses_the_ami_driver_and_toolkit():
    values = gpu_operator_values(view_of("aws"), AddonsSpec(mig_strategy="mixed"), service_monitor=True)
    assert values["driver"] == {"enabled": False} and values["toolkit"] == {"enabled": False}
    assert values["mig"] == {"strategy": "mixed"}
    assert values["migManager"]["enabled"] is True
    assert values["migManager"]["config"] == {"create": False, "name": "ai-infra-mig-parted-config", "default": "all-disabled"}
    assert values["devicePlugin"]["config"] == {"create": False, "name": "ai-infra-device-plugin-config", "default": "default"}
    assert values["dcgmExporter"]["serviceMonitor"]["enabled"] is True
    assert values["dcgmExporter"]["serviceMonitor"]["honorLabels"] is True
    assert "hostPaths" not in values


def test_operator_installs_driver_and_toolkit_for_operator_pools():
    pools = {"h100": {"accelerator": "h100-80gb", "accelerators_per_node": 8, "driver": "operator"},
             "l4": {"accelerator": "l4", "accelerators_per_node": 1}}
    values = gpu_operator_values(view_of("aws", pools), AddonsSpec(), service_monitor=False)
    assert values["driver"] == {"enabled": True} and values["toolkit"] == {"enabled": True}
    assert values["dcgmExporter"]["serviceMonitor"]["enabled"] is False


def test_aks_operator_leaves_mig_to_aks_and_tolerates_spot():
    values = gpu_operator_values(view_of("azure"), AddonsSpec(), service_monitor=True)
    assert values["driver"] == {"enabled": False} and values["toolkit"] == {"enabled": False}
    assert values["migManager"] == {"enabled": False}
    spot = {"key": AKS_SPOT_TAINT.key, "operator": "Exists", "effect": "NoSchedule"}
    assert spot in values["daemonsets"]["tolerations"]
    assert spot in values["node-feature-discovery"]["worker"]["tolerations"]


def test_gke_operator_uses_gke_driver_paths():
    values = gpu_operator_values(view_of("gcp"), AddonsSpec(gpu_operator_on_gke=True), service_monitor=True)
    assert values["driver"] == {"enabled": False}
    assert values["toolkit"] == {"enabled": True, "installDir": GKE_DRIVER_DIR}
    assert values["hostPaths"] == {"driverInstallDir": GKE_DRIVER_DIR}
    assert values["migManager"]["env"] == [{"name": "WITH_REBOOT", "value": "true"}]


def test_standalone_dcgm_on_gke_reads_the_gke_driver():
    values = standalone_dcgm_values(view_of("gcp"), service_monitor=False)
    assert {"name": "nvidia-install-dir-host", "hostPath": GKE_DRIVER_DIR} in values["extraHostVolumes"]
    assert {"name": "LD_LIBRARY_PATH", "value": "/usr/local/nvidia/lib64"} in values["extraEnv"]
    assert values["securityContext"] == {"privileged": True, "allowPrivilegeEscalation": True}
    term = values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
    assert term == {"matchExpressions": [{"key": "cloud.google.com/gke-accelerator", "operator": "Exists"}]}
    assert values["serviceMonitor"]["enabled"] is False


def test_neuron_values_disable_problem_detector_and_tolerate_extra_taints():
    assert neuron_values(view_of("aws")) == {"npd": {"enabled": False}}
    pools = {"trn": {"accelerator": "trainium2", "taints": [{"key": "team", "value": "research"}]}}
    tolerations = neuron_values(view_of("aws", pools))["devicePlugin"]["tolerations"]
    assert {"key": "team", "operator": "Exists", "effect": "NoSchedule"} in tolerations
    assert {"key": "aws.amazon.com/neuron", "operator": "Exists", "effect": "NoSchedule"} in tolerations


# --- Kueue flavors and quotas ------------------------------------------------------------------------------------

@given(st.integers(0, 10_000), st.lists(st.integers(0, 1_000), max_size=12))
def test_split_quota_adds_up_and_is_proportional(total, weights):
    parts = split_quota(total, weights)
    assert len(parts) == len(weights) and all(p >= 0 for p in parts)
    if sum(weights) == 0:
        assert parts == [0] * len(weights)
        return
    assert sum(parts) == total
    for part, weight in zip(parts, weights):
        assert abs(part - total * weight / sum(weights)) < 1


def test_flavors_per_accelerator_and_capacity():
    by_name = {f.name: f for f in flavors(view_of("aws"), MigStrategy.SINGLE)}
    assert set(by_name) == {"h100-80gb-on-demand", "h100-80gb-spot", "a100-80gb-on-demand", "l4-on-demand",
                            "trainium2-on-demand"}
    spot = by_name["h100-80gb-spot"]
    assert spot.node_labels == {"ai-infra/accelerator": "h100-80gb", "ai-infra/capacity": "spot"}
    assert spot.tolerations == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert (spot.resource, spot.devices) == ("nvidia.com/gpu", 16)
    assert by_name["a100-80gb-on-demand"].units_per_device == 2  # 3g.40gb x2 per GPU
    assert by_name["l4-on-demand"].units_per_device == 4  # time-slicing replicas
    neuron = by_name["trainium2-on-demand"]
    # Quota in NeuronCores: four logical cores per Trainium2 device under the default LNC=2.
    assert (neuron.group, neuron.resource, neuron.units_per_device) == ("neuron", "aws.amazon.com/neuroncore", 4)


def test_mixed_strategy_requests_mig_resources_except_on_gke():
    aws = {f.name: f for f in flavors(view_of("aws"), MigStrategy.MIXED)}
    assert aws["a100-80gb-on-demand"].resource == "nvidia.com/mig-3g.40gb"
    pools = {"mig": {"accelerator": "a100-80gb", "accelerators_per_node": 1, "sharing": {"mode": "mig", "mig_profile": "3g.40gb"}}}
    assert flavors(view_of("gcp", pools), MigStrategy.MIXED)[0].resource == "nvidia.com/gpu"


def test_pools_sharing_differently_get_a_flavor_each():
    pools = {"whole": {"accelerator": "a100-80gb", "accelerators_per_node": 8},
             "sliced": {"accelerator": "a100-80gb", "accelerators_per_node": 8, "sharing": {"mode": "mig", "mig_profile": "1g.10gb"}}}
    result = flavors(view_of("aws", pools), MigStrategy.SINGLE)
    assert [(f.name, f.node_labels["ai-infra/pool"]) for f in result] == [
        ("a100-80gb-on-demand-whole", "whole"), ("a100-80gb-on-demand-sliced", "sliced")]


def test_tpu_flavors_select_gke_tpu_labels():
    result = {f.name: f for f in flavors(view_of("gcp"), MigStrategy.SINGLE)}
    v5p = result["tpu-v5p-slice-2x2x2-on-demand"]
    assert v5p.node_labels == {"cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice", "cloud.google.com/gke-tpu-topology": "2x2x2"}
    assert (v5p.resource, v5p.devices) == ("google.com/tpu", 16)  # 8 chips x 2 slices
    assert result["tpu-v6e-slice-2x4-spot"].node_labels["cloud.google.com/gke-spot"] == "true"
    assert v5p.tolerations == [{"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"}]


def test_team_quota_split_across_flavors():
    flavor_list = flavors(view_of("aws"), MigStrategy.SINGLE)
    shares = team_shares(TeamSpec(gpu_quota=16), flavor_list)
    # GPUs at max size: a100 8, h100 on-demand 32, h100 spot 16, l4 4 -> 2, 9, 4, 1 GPUs (largest remainder)
    assert shares == {"a100-80gb-on-demand": 4, "h100-80gb-on-demand": 9, "h100-80gb-spot": 4, "l4-on-demand": 4,
                      "trainium2-on-demand": 64}  # 16 Trainium2 devices as NeuronCores


def test_cluster_queue_lists_every_covered_resource_and_borrowing():
    flavor_list = flavors(view_of("aws"), MigStrategy.MIXED)
    queue = cluster_queue("serving", TeamSpec(gpu_quota=4, can_borrow=False), flavor_list, "prod")
    spec = queue["spec"]
    assert spec["cohortName"] == "prod"
    assert spec["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "serving"}}
    groups = spec["resourceGroups"]
    assert groups[0]["flavors"][0]["name"] == DEFAULT_FLAVOR
    seen = set()
    for group in groups:
        for flavor in group["flavors"]:
            # Kueue's CEL rule: each flavor lists the group's resources, in order.
            assert [r["name"] for r in flavor["resources"]] == group["coveredResources"]
            assert all(r["borrowingLimit"] == "0" for r in flavor["resources"])
            assert flavor["name"] not in seen  # a flavor belongs to one group only
            seen.add(flavor["name"])
    gpu_group = groups[1]
    assert gpu_group["coveredResources"] == ["nvidia.com/gpu", "nvidia.com/mig-3g.40gb"]
    borrowing = cluster_queue("research", TeamSpec(gpu_quota=4), flavor_list, "prod")
    assert not any("borrowingLimit" in r for g in borrowing["spec"]["resourceGroups"] for f in g["flavors"] for r in f["resources"])


VIEWS = {"aws": view_of("aws"), "gcp": view_of("gcp")}


@given(st.integers(0, 500), st.integers(0, 64), st.booleans())
def test_team_shares_give_the_whole_quota_in_devices(gpu_quota, tpu_quota, can_borrow):
    team = TeamSpec(gpu_quota=gpu_quota, tpu_quota=tpu_quota, can_borrow=can_borrow)
    for cloud, groups in (("aws", ("nvidia", "neuron")), ("gcp", ("nvidia", "tpu"))):
        flavor_list = flavors(VIEWS[cloud], MigStrategy.SINGLE)
        shares = team_shares(team, flavor_list)
        for group in groups:
            members = [f for f in flavor_list if f.group == group]
            quota = tpu_quota if group == "tpu" else gpu_quota
            assert sum(shares[f.name] // f.units_per_device for f in members) == quota
            assert all(shares[f.name] % f.units_per_device == 0 for f in members)
