"""`cluster.system_pool.instance_type` must have its cloud's shape of machine size name, so a type copied from another
cloud's config (an AWS m6i.xlarge on GCP, a GCP n2-standard-8 on Azure) stops the config at load, not the deploy."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import change as set_path
from helpers import full_platform_dict, platform_dict
from hypothesis import given
from hypothesis import strategies as st

from components import catalog
from components.spec import SpecError, load_platform
from components.spec.common import Cloud
from components.spec.compute import INSTANCE_TYPE_SHAPES, instance_type_problem

REGIONS = {
    "aws": ("us-east-1", {"network": {"cidr": "10.10.0.0/16"}}),
    "gcp": ("us-central1", {"network": {"cidr": "10.20.0.0/16"}}),
    "azure": ("eastus2", {"network": {"cidr": "10.40.0.0/16", "transit_encryption": "monitor"}}),
}
SHAPES = {
    "aws": "AWS instance types are named <family>.<size>, e.g. m6i.xlarge, c7gn.metal or u-6tb1.112xlarge",
    "gcp": "GCP machine types are named <series>-<type>-<vCPUs>, e.g. n2-standard-8 or a3-highgpu-8g (custom types: e2-custom-4-16384)",
    "azure": ("Azure VM sizes are named Standard_<family><vCPUs><features>[_<accelerator>]_v<version>, "
              "e.g. Standard_D4s_v5 or Standard_NC24ads_A100_v4"),
}
KIND = {Cloud.AWS: "an AWS instance type", Cloud.GCP: "a GCP machine type", Cloud.AZURE: "an Azure VM size"}

REAL = {
    Cloud.AWS: ["m6i.xlarge", "c7gn.metal", "u-6tb1.112xlarge", "t3.nano", "m7g.medium", "r8g.metal-24xl", "p6-b200.48xlarge",
                "mac2-m2pro.metal", "m7i-flex.large", "u7in-32tb.224xlarge", "is4gen.large", "x2iedn.32xlarge"],
    Cloud.GCP: ["n2-standard-8", "e2-custom-4-16384", "a3-highgpu-8g", "e2-standard-4", "e2-micro", "f1-micro",
                "custom-4-16384", "n2-custom-8-32768-ext", "c3-standard-4-lssd", "x4-megamem-960-metal", "ct5lp-hightpu-4t",
                "c4a-highmem-72-lssd", "a2-ultragpu-1g"],
    Cloud.AZURE: ["Standard_NC24ads_A100_v4", "Standard_D8ds_v5", "Standard_D4s_v5", "Standard_D4ds_v5", "Standard_B2s",
                  "Standard_DS2_v2", "Standard_E64-16ds_v5", "Standard_M416-208ms_v2", "Standard_HB120rs_v3",
                  "Standard_ND96isr_H100_v5", "Standard_NC4as_T4_v3"],
}


def _platform(cloud: str, system_pool: dict[str, Any]) -> dict[str, Any]:
    region, spec = REGIONS[cloud]
    clouds = {cloud: {"regions": {region: {**spec, "cluster": {"system_pool": system_pool}}}}}
    if cloud == "gcp":
        clouds["gcp"]["project"] = "acme-ml-test"
    return platform_dict(clouds)


def _path(cloud: str) -> str:
    return f"platform.clouds.{cloud}.regions.{REGIONS[cloud][0]}.cluster.system_pool.instance_type"


@pytest.mark.parametrize(("cloud", "name"), [(c, n) for c, names in REAL.items() for n in names], ids=lambda v: getattr(v, "value", v))
def test_real_machine_sizes_have_their_clouds_shape(cloud: Cloud, name: str) -> None:
    assert instance_type_problem(cloud, name) is None
    for other in Cloud:
        if other is not cloud:
            assert instance_type_problem(other, name) == (f"{name!r} looks like {KIND[cloud]}, not {KIND[other]}; "
                                                          f"{SHAPES[other.value]}")


@pytest.mark.parametrize("cloud", list(Cloud), ids=lambda c: c.value)
def test_every_catalog_instance_type_has_its_clouds_shape_only(cloud: Cloud) -> None:
    for row in catalog.instance_types(cloud.value):
        assert instance_type_problem(cloud, row.instance_type) is None, row.instance_type
        assert all(instance_type_problem(other, row.instance_type) for other in Cloud if other is not cloud)


def test_the_components_default_system_types_have_their_clouds_shape() -> None:
    from components.aws.cluster import SYSTEM_INSTANCE_TYPE
    from components.azure.cluster import DEFAULT_SYSTEM_VM_SIZE
    from components.gcp.cluster import SYSTEM_MACHINE_TYPE

    for cloud, name in [(Cloud.AWS, SYSTEM_INSTANCE_TYPE), (Cloud.GCP, SYSTEM_MACHINE_TYPE), (Cloud.AZURE, DEFAULT_SYSTEM_VM_SIZE)]:
        assert instance_type_problem(cloud, name) is None


@pytest.mark.parametrize(("cloud", "name"), [("aws", "c7gn.metal"), ("gcp", "a3-highgpu-8g"), ("azure", "Standard_D8ds_v5")])
def test_a_system_pool_of_the_clouds_shape_loads(cloud: str, name: str) -> None:
    spec = load_platform(_platform(cloud, {"instance_type": name}))
    [(_, cloud_spec)] = spec.clouds.items()
    assert next(iter(cloud_spec.regions.values())).cluster.system_pool.instance_type == name


@pytest.mark.parametrize(("cloud", "name", "message"), [
    ("gcp", "m6i.xlarge", f"'m6i.xlarge' looks like an AWS instance type, not a GCP machine type; {SHAPES['gcp']}"),
    ("azure", "n2-standard-8", f"'n2-standard-8' looks like a GCP machine type, not an Azure VM size; {SHAPES['azure']}"),
    ("aws", "Standard_D4s_v5", f"'Standard_D4s_v5' looks like an Azure VM size, not an AWS instance type; {SHAPES['aws']}"),
    ("aws", "n2-standard-8", f"'n2-standard-8' looks like a GCP machine type, not an AWS instance type; {SHAPES['aws']}"),
    ("aws", "m6i", f"'m6i' is not an AWS instance type; {SHAPES['aws']}"),
    ("gcp", "N2-Standard-8", f"'N2-Standard-8' is not a GCP machine type; {SHAPES['gcp']}"),
    ("azure", "standard_d4s_v5", f"'standard_d4s_v5' is not an Azure VM size; {SHAPES['azure']}"),
], ids=["aws-on-gcp", "gcp-on-azure", "azure-on-aws", "gcp-on-aws", "no-size", "upper-case-gcp", "lower-case-azure"])
def test_a_system_pool_type_of_another_shape_names_path_value_and_shape(cloud: str, name: str, message: str) -> None:
    with pytest.raises(SpecError) as caught:
        load_platform(_platform(cloud, {"instance_type": name}))
    assert caught.value.issues == [(_path(cloud), message)]


def test_a_gpu_pool_type_of_another_cloud_is_refused_by_the_catalog_check() -> None:
    # GPU pools already check an explicit instance_type against the cloud's catalog, stricter than a shape check.
    data = set_path(full_platform_dict(), "clouds/aws/regions/us-east-1/gpu_pools/train", {"instance_type": "a3-highgpu-8g"})
    with pytest.raises(SpecError) as caught:
        load_platform(data)
    [(path, message)] = caught.value.issues
    assert path == "platform.clouds.aws.regions.us-east-1.gpu_pools.train.instance_type"
    assert message.startswith("instance type 'a3-highgpu-8g' is not in the aws catalog; known: p5.48xlarge")


# Names generated from each cloud's naming rules.
_lower = st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=3)
_upper = st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=3)
_number = st.integers(1, 960).map(str)
_suffix = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=6)

aws_names = st.builds(
    lambda letters, generation, options, extra, size: f"{letters}{generation}{options}{extra}.{size}",
    _lower, st.integers(1, 9).map(str), st.text("abdegilnqtxz", max_size=4),
    st.one_of(st.just(""), st.builds(lambda s: f"-{s}", _suffix)),
    st.one_of(st.sampled_from(["nano", "micro", "small", "medium", "large", "xlarge", "metal"]),
              st.integers(2, 480).map(lambda n: f"{n}xlarge"), st.integers(16, 48).map(lambda n: f"metal-{n}xl")))
gcp_names = st.one_of(
    st.builds(lambda series, kind, cpus, suffix: f"{series}-{kind}{cpus}{suffix}",
              st.builds(lambda a, n, b: f"{a}{n}{b}", _lower, st.integers(1, 9).map(str), st.text("adlpx", max_size=2)),
              st.sampled_from(["standard", "highmem", "highcpu", "highgpu", "megagpu", "ultragpu", "ultramem", "hightpu", "micro"]),
              st.one_of(st.just(""), _number.map(lambda n: f"-{n}"), _number.map(lambda n: f"-{n}g")),
              st.sampled_from(["", "-lssd", "-metal", "-nolssd"])),
    st.builds(lambda series, cpus, mib, ext: f"{series}custom-{cpus}-{mib}{ext}",
              st.sampled_from(["", "e2-", "n2-", "n2d-", "n4-"]), st.integers(1, 96), st.integers(1024, 655360), st.sampled_from(["", "-ext"])))
azure_names = st.builds(
    lambda family, cpus, constrained, features, accelerator, version: f"Standard_{family}{cpus}{constrained}{features}{accelerator}{version}",
    _upper, _number, st.one_of(st.just(""), _number.map(lambda n: f"-{n}")), st.text("abdilmnprst", max_size=5),
    st.sampled_from(["", "_A100", "_H100", "_T4", "_A10", "_MI300X", "_NDR_GB200"]),
    st.one_of(st.just(""), st.integers(1, 9).map(lambda n: f"_v{n}")))
GENERATED = {Cloud.AWS: aws_names, Cloud.GCP: gcp_names, Cloud.AZURE: azure_names}


@given(st.sampled_from(list(Cloud)).flatmap(lambda cloud: st.tuples(st.just(cloud), GENERATED[cloud])))
def test_generated_names_pass_their_cloud_and_fail_the_others(case: tuple[Cloud, str]) -> None:
    cloud, name = case
    assert instance_type_problem(cloud, name) is None
    for other in Cloud:
        if other is not cloud:
            assert instance_type_problem(other, name) == f"{name!r} looks like {KIND[cloud]}, not {KIND[other]}; {SHAPES[other.value]}"


@given(st.text(max_size=30))
def test_no_name_fits_two_clouds(name: str) -> None:
    assert sum(pattern.fullmatch(name) is not None for pattern, _, _ in INSTANCE_TYPE_SHAPES.values()) <= 1
