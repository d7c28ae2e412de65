"""Tests from a hand mutation review of the cloud compositions (components/compose): what each composition hands the
Kubernetes layer, checked in the objects the layer then creates."""

from __future__ import annotations

from k8s.layer import LUSTRE_CLOUDS, plan_clouds

PV = "kubernetes:core/v1:PersistentVolume"
CLUSTER = {"aws": "test-us-east-1", "gcp": "test-us-central1", "azure": "test-eastus2"}


def test_each_lustre_volume_has_the_capacity_of_its_file_system() -> None:
    """Every cloud's composition passes the file system's size to its volumes: a team's claim requests what the
    volume offers, so a smaller capacity caps what schedulers and quotas see, and a larger one promises space the
    file system lacks."""
    plan = plan_clouds(LUSTRE_CLOUDS, {"research": {"gpu_quota": 0}})
    for cloud, spec in LUSTRE_CLOUDS.items():
        [(fs_name, fs)] = next(iter(spec["regions"].values()))["lustre"].items()
        pv = plan.one(PV, f"{CLUSTER[cloud]}-lustre-{fs_name}-research-pv")
        assert pv.inputs["spec"]["capacity"] == {"storage": f"{fs['size_gib']}Gi"}, cloud
