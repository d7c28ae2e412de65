"""Cloud TPU slices as the TPU API names them: the model and chip count of an accelerator type or config, and the
nodes of a TPU VM or queued resource.

Pure: the accelerator cost rules (accelerators.py, pools.py) and the TPU rules (gcp.py) read TPU VMs and queued resources with it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from .props import get, items, need

TPU_VM, TPU_QUEUED = "gcp:tpu/v2Vm:V2Vm", "gcp:tpu/v2QueuedResource:V2QueuedResource"

TPU_TYPES = {"v2": ("tpu-v2", 2), "v3": ("tpu-v3", 2), "v4": ("tpu-v4", 2), "v5litepod": ("tpu-v5e", 1),
             "v5p": ("tpu-v5p", 2), "v6e": ("tpu-v6e", 1)}
"""Cloud TPU type prefix -> (model, TensorCores per chip): `<prefix>-<N>` counts TensorCores. As in the catalog's
tpus.json (sources there; the pack's venv can't read it, a test keeps the two equal), plus v2 and v3 (2 per chip): v2-8
is what a TPU VM naming no type gets."""
TPU_CONFIG_TYPES = {"V2": "v2", "V3": "v3", "V4": "v4", "V5LITE_POD": "v5litepod", "V5P": "v5p", "V6E": "v6e"}
"""AcceleratorConfig.type (cloud.google.com/tpu/docs/reference/rest/v2/AcceleratorConfig#Type) -> type prefix."""


def tpu_slice(accelerator_type: Any, config: Any) -> tuple[str, int]:
    """(model, chips) of a Cloud TPU slice from its acceleratorType (`v5litepod-8`, `v5p-8`) or acceleratorConfig
    ({type: V5P, topology: 2x2x1}, chips in the topology); neither set is the API's default, v2-8."""
    if config:
        prefix = TPU_CONFIG_TYPES.get(str(need(config, "type")), str(need(config, "type")).lower())
        chips = math.prod(int(d) for d in str(need(config, "topology")).lower().split("x") if d.isdigit())
        return TPU_TYPES.get(prefix, (f"tpu ({prefix})", 1))[0], chips
    prefix, _, number = str(accelerator_type or "v2-8").rpartition("-")
    if prefix in TPU_TYPES and number.isdigit():
        model, cores = TPU_TYPES[prefix]
        return model, max(int(number) // cores, 1)
    # A generation not listed: its number is counted as chips (at most twice too many, never too few).
    return f"tpu ({accelerator_type})", int(number) if number.isdigit() else 1


def tpu_nodes(type_: str, props: Any) -> Iterator[tuple[Any, Any]]:
    """(node ID, node) of a TPU VM (None, the VM itself) or of each node spec of a queued resource (wire form
    `tpu.nodeSpecs[].node`; its nodeId, else its index)."""
    if type_ == TPU_VM:
        yield None, props
        return
    for index, spec in enumerate(items(props, "tpu.nodeSpecs")):
        yield get(spec, "nodeId") or index, get(spec, "node") or {}
