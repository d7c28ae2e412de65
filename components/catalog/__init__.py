"""Accelerator catalog: GPU/Neuron instance types, TPU generations and Lustre tiers per cloud, and each cloud's regions.

Pure data and logic (no Pulumi). Data lives in `data/*.json`, every row citing its source; it is
parsed on first use, so importing this package is cheap.
"""

from .errors import CatalogError
from .gpus import (
    GpuInstance,
    accelerator_names,
    accelerators_on,
    clouds_offering,
    find_instance,
    instance_types,
    resolve_instance,
    spot_alternatives,
)
from .lustre import LustreTier, is_valid_lustre_size, lustre_tiers, resolve_lustre
from .regions import (
    REGIONS_FILE,
    Region,
    find_region,
    region_clouds,
    region_doc,
    region_example,
    region_names,
    regions,
    suggest_regions,
)
from .rows import catalog_rows
from .tpus import TpuGeneration, TpuSlicePlan, resolve_tpu_slice, tpu_generation, tpu_generations

__all__ = [
    "CatalogError",
    "GpuInstance",
    "LustreTier",
    "REGIONS_FILE",
    "Region",
    "TpuGeneration",
    "TpuSlicePlan",
    "accelerator_names",
    "accelerators_on",
    "catalog_rows",
    "clouds_offering",
    "find_instance",
    "find_region",
    "instance_types",
    "is_valid_lustre_size",
    "lustre_tiers",
    "region_clouds",
    "region_doc",
    "region_example",
    "region_names",
    "regions",
    "resolve_instance",
    "resolve_lustre",
    "resolve_tpu_slice",
    "spot_alternatives",
    "suggest_regions",
    "tpu_generation",
    "tpu_generations",
]
