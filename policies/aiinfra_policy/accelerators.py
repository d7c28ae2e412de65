"""Accelerator rules: GPU/TPU pool hygiene and cost guards over node pools, Cloud TPU slices, VMs, scale sets and
autoscaling groups (what each can run: pools.py).

A resource that takes its instance type from a launch template (an EKS node group, EC2 instance, spot request or
autoscaling group naming none itself) can't be judged from its own props: the resource rules leave it to their stack
part (`stack_check` on the check, which server.TypedAnalyzer runs in AnalyzeStack under the rule's name and level),
which finds the template in the stack and judges the resource with the template's instance type. A template outside
the stack is a violation of each rule that needs the instance type: no run of the pack could ever see it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from .common import ENVIRONMENT
from .pools import (
    ACCELERATOR_HOLDERS,
    ASG,
    EKS_POOL,
    GKE_CLUSTER,
    GKE_POOL,
    AKS_POOL,
    LAUNCH_CONFIGURATION,
    LAUNCH_TEMPLATE,
    POOL_HOLDERS,
    TEMPLATES,
    InTemplate,
    Pool,
    accelerators_in,
    auto_provisioning,
    find_template,
    pools_in,
    template_kind,
    template_ref,
)
from .props import Unknown, Unknowns, get, is_unknown, of_type, plain, urns
from .registry import Context, rule
from .tagging import environment_of

ACCEL_TAINTS = ("nvidia.com/gpu", "aws.amazon.com/neuron", "google.com/tpu")
COST = {"SOC2": ("CC9.1",), "NIST-800-53": ("SA-9",)}


@dataclass
class _Probe(Context):
    """The context of a check run on a resource whose launch template is outside the stack, to learn whether the check
    needs the template's instance type: with it `_judged` lets InTemplate through."""


def _judged(pools: Iterable[tuple[str, Pool]], ctx: Context) -> Iterator[tuple[str, Pool]]:
    """The pools a resource rule judges: none of a resource sized by a launch template (its stack part judges it)."""
    try:
        yield from pools
    except InTemplate:
        if isinstance(ctx, _Probe):
            raise


# --- the stack part: resources sized by a launch template ---

class OutsideStack(Exception):
    """The launch template (or configuration) a resource takes its instance type from is not in the stack: the
    message says what to do."""


NAMES_ITS_TYPE = {EKS_POOL: "name instanceTypes on the node group", ASG: "name the instance types in "
                  "mixedInstancesPolicy.launchTemplate.overrides"}
"""How a resource names its instance type itself (an instance or spot request: instanceType)."""


def _names_its_type(type_: str, props: Any) -> bool:
    """Whether a templated resource also names its instance type, known (then that one counts: resource rules judge it)."""
    value = get(props, "instanceTypes" if type_ == EKS_POOL else "instanceType")
    return bool(value) and not is_unknown(value)


def with_template(holder: Any, templates: list[Any]) -> tuple[Any, Any] | None:
    """(props with the instance type of the template `holder` takes it from, put where the holder would name it; the
    template) for a resource the resource rules leave to the stack; None for any other. A preview's outputs carry an
    instance type the program did not set as unknown: a templated resource's unknown type is the template's then.
    Raises OutsideStack when the template is not in the stack, Unknown when its reference (an output of the same
    update that matches no template of the stack) or its instance type is unknown."""
    type_, props = holder.resource_type, holder.props
    ref = template_ref(type_, props)
    if ref is None or (type_ != ASG and _names_its_type(type_, props)):
        return None
    template = find_template(holder, *ref, templates)
    if template is None:
        if is_unknown(ref[1]):
            raise Unknown(f"{ref[0]} (the {template_kind(ref[0])} it names), so its instance type")
        kind = template_kind(ref[0])
        raise OutsideStack(f"instance type is in {kind} {ref[1] or '(no id or name)'} outside this stack; "
                           f"{NAMES_ITS_TYPE.get(type_, 'name instanceType on the resource')} or manage the {kind} in "
                           "this stack")
    kind = get(template.props, "instanceType")
    if is_unknown(kind):
        raise Unknown(f"instanceType of launch template {template.name}")
    if kind is None and get(template.props, "instanceRequirements") is not None:
        # Attribute-based selection (an autoscaling group's mixed instances): any type that matches may be launched.
        raise Unknown(f"instanceRequirements of launch template {template.name}: which instance types it selects")
    # EKS computes capacityType when the program sets none: unknown in a preview's outputs, it is EKS's ON_DEMAND.
    resolved = {k: v for k, v in plain(props).items()
                if k not in ("launchTemplate", "launchConfiguration", "mixedInstancesPolicy", "instanceType", "instanceTypes")
                and not (k == "capacityType" and is_unknown(v))}
    if type_ == EKS_POOL:
        resolved["instanceTypes"] = [kind] if kind else []  # none there either: EKS's default t3.medium
    elif type_ == ASG and kind:
        resolved["mixedInstancesPolicy"] = {"launchTemplate": {"overrides": [{"instanceType": kind}]}}
    elif kind:  # none there either: EC2's default type (m1.small), no accelerators
        resolved["instanceType"] = kind
    return resolved, template


def stack_part(types: tuple[str, ...]) -> Callable[[Callable[..., Iterable[str]]], Callable[..., Iterable[str]]]:
    """Give a resource rule's check the part only the stack can do (registry.Rule.stack_check, which
    server.TypedAnalyzer runs in AnalyzeStack under the rule's name and level): the check run on each resource of
    `types` sized by a launch template, with that template's instance type. A template outside the stack is a
    violation when the check needs the instance type (not allowed-accelerators without a list, nor the dev-pool rule
    outside dev)."""

    def attach(check: Callable[..., Iterable[str]]) -> Callable[..., Iterable[str]]:
        def templated(resources: list[Any], ctx: Context) -> Iterator[tuple[str, str]]:
            templates, unknowns = of_type(resources, LAUNCH_TEMPLATE, LAUNCH_CONFIGURATION), Unknowns()
            for r in resources:
                if r.resource_type not in types:
                    continue
                context = Context(config=ctx.config, type=r.resource_type, name=r.name, urn=r.urn)
                with unknowns.skip():
                    try:
                        found = with_template(r, templates)
                    except OutsideStack as outside:
                        if _needs_template(check, r.props, context):
                            yield r.urn, str(outside)
                        continue
                    if found is not None:
                        props, template = found
                        kind = template_kind("launchConfiguration" if template.resource_type == LAUNCH_CONFIGURATION else "")
                        for message in check(props, context):
                            yield r.urn, f"{kind} {template.name}: {message}"
            unknowns.raise_first()

        check.stack_check = templated  # type: ignore[attr-defined]
        return check

    return attach


def _needs_template(check: Callable[..., Iterable[str]], props: Any, ctx: Context) -> bool:
    """Whether `check` reads the instance type of the resource, which its launch template holds (a preview's outputs
    carry the type the program did not set as unknown: unset, as the program left it)."""
    own = {k: v for k, v in plain(props).items() if not (k in ("instanceType", "instanceTypes") and is_unknown(v))}
    try:
        for _ in check(own, _Probe(**vars(ctx))):
            pass
    except InTemplate:
        return True
    return False


# --- the rules ---

@rule("accelerator-pool-tainted", "Checks whether GPU, Neuron and TPU node pools are tainted so other pods stay off them.",
      severity="medium", types=POOL_HOLDERS, remediation="Taint the pool nvidia.com/gpu=true:NoSchedule (aws.amazon.com/neuron for Neuron).",
      frameworks={"SOC2": ("CC9.1",), "NIST-800-53": ("SC-6",)})
@stack_part(POOL_HOLDERS)
def pool_tainted(props: Any, ctx: Context) -> Iterator[str]:
    for label, pool in _judged(pools_in(ctx.type, props), ctx):
        if pool.accelerator and not pool.accelerator.startswith("tpu") and not any(t.startswith(ACCEL_TAINTS) for t in pool.taints):
            yield f"{label}{pool.accelerator} pool has no accelerator taint: CPU pods can land on its nodes"


@rule("allowed-accelerators", "Checks whether node pools, Cloud TPU slices, VMs, scale sets and their templates use only "
      "the accelerator models allowed for the environment.",
      severity="high", types=(*ACCELERATOR_HOLDERS, *TEMPLATES),
      remediation="Use an accelerator from allowedAccelerators or extend the list in the policy config.",
      frameworks=COST, config={"allowedAccelerators": {"type": "array", "items": {"type": "string"}, "default": [],
                                                      "description": "Accelerator models allowed (catalog names); empty allows all."}})
@stack_part(ACCELERATOR_HOLDERS)
def allowed_accelerators(props: Any, ctx: Context) -> Iterator[str]:
    allowed = ctx.config.get("allowedAccelerators") or []
    for label, pool in _judged(accelerators_in(ctx.type, props), ctx) if allowed else ():
        # The exact model: tpu-v5e allows no v5p or v6e slice.
        for model in [m for m in pool.models or (pool.accelerator,) if m and m not in allowed]:
            yield f"{label}accelerator {model} is not allowed here; allowed: {', '.join(allowed)}"


@rule("gpu-cap-per-pool", "Checks whether a node pool, Cloud TPU slice, VM, scale set or autoscaling group can grow to "
      "at most maxGpusPerPool accelerators.",
      severity="high", types=ACCELERATOR_HOLDERS, remediation="Lower max nodes or raise maxGpusPerPool in the policy config.", frameworks=COST,
      config={"maxGpusPerPool": {"type": "integer", "default": 64, "description": "Most accelerators one pool may scale to."}})
@stack_part(ACCELERATOR_HOLDERS)
def gpu_cap_pool(props: Any, ctx: Context) -> Iterator[str]:
    cap = int(ctx.config.get("maxGpusPerPool", 64))
    for label, pool in _judged(accelerators_in(ctx.type, props), ctx):
        if pool.accelerator and pool.per_node * pool.max_nodes > cap:
            yield f"{label}pool can scale to {pool.per_node * pool.max_nodes} accelerators ({pool.scale()}); the cap is {cap}"


# In the baseline profile whatever its framework mapping: dev stacks run baseline (ComplianceSpec's default), and
# outside dev the rule has nothing to check.
@rule("dev-pools-spot-or-scale-to-zero", "Checks whether accelerator pools in dev use spot capacity or scale to zero.",
      severity="medium", types=POOL_HOLDERS, remediation="In dev, set min nodes 0 or use spot capacity.", frameworks=COST,
      config=ENVIRONMENT, profiles=("baseline",))
@stack_part(POOL_HOLDERS)
def dev_pools(props: Any, ctx: Context) -> Iterator[str]:
    if environment_of(props, ctx) != "dev":
        return
    for label, pool in _judged(pools_in(ctx.type, props), ctx):
        if pool.accelerator and pool.min_nodes > 0 and pool.spot is None:
            raise Unknown("capacityType (spot)")
        if pool.accelerator and pool.min_nodes > 0 and not pool.spot:
            yield f"{label}dev {pool.accelerator} pool keeps {pool.min_nodes} on-demand nodes running; use spot or min 0"


@rule("gpu-cap-per-environment", "Checks whether all accelerator pools, VMs and groups together stay under maxGpusPerEnvironment.",
      severity="high", remediation="Lower pool maxima or raise maxGpusPerEnvironment.", frameworks=COST,
      config={"maxGpusPerEnvironment": {"type": "integer", "default": 512, "description": "Most accelerators the environment may scale to."}})
def gpu_cap_env(resources: list[Any], ctx: Context) -> Iterator[tuple[str, str]]:
    cap = int(ctx.config.get("maxGpusPerEnvironment", 512))
    separate = _separate_pools(resources)
    clusters = {r.urn: r.props for r in resources if r.resource_type == GKE_CLUSTER}
    templates = of_type(resources, LAUNCH_TEMPLATE, LAUNCH_CONFIGURATION)
    # GKE node auto-provisioning limits the cluster's total of a model, its own pools included: it adds what the
    # cluster's other pools of that model leave of its limit.
    counted: dict[tuple[str, str], int] = {}
    auto: list[tuple[str, str, int]] = []
    unknowns = Unknowns()  # resources that can't be counted in preview only add to the total: the known ones may do
    for r in resources:
        if r.resource_type not in ACCELERATOR_HOLDERS:
            continue
        with unknowns.skip():
            managed = frozenset().union(*(separate.get(key, ()) for key in _cluster_keys(r)))
            # A GKE pool depends on the cluster it names: that cluster's nodeLocations are the pool's default.
            owner = next((u for u in urns(getattr(r, "dependencies", None)) if u in clusters), None)
            try:
                found = with_template(r, templates)
            except OutsideStack:
                continue  # not countable: gpu-cap-per-pool and allowed-accelerators report it
            props = found[0] if found is not None else r.props
            pools = (pools_in(r.resource_type, props, managed, clusters.get(owner)) if r.resource_type in POOL_HOLDERS
                     else accelerators_in(r.resource_type, props))
            for _, pool in pools:
                if pool.accelerator:
                    key = ((owner if r.resource_type == GKE_POOL and owner else r.urn), pool.accelerator)
                    counted[key] = counted.get(key, 0) + pool.per_node * pool.max_nodes
            if r.resource_type == GKE_CLUSTER:
                auto += [(r.urn, str(p.accelerator), p.max_nodes) for _, p in auto_provisioning(props)]
    total = sum(counted.values()) + sum(max(0, limit - counted.get((urn, model), 0)) for urn, model, limit in auto)
    if total > cap:
        yield "", f"accelerator pools can scale to {total} accelerators in total; the environment cap is {cap}"
    unknowns.raise_first()


def _known_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value and not is_unknown(value) else None


def _cluster_keys(cluster: Any) -> set[str]:
    """What a pool resource's reference to this cluster can be: its URN (a pool depends on the cluster whose name or
    id it takes), its name, or its id (GKE takes either as a node pool's `cluster`)."""
    return {cluster.urn} | {value for prop in ("name", "id") if (value := _known_str(get(cluster.props, prop)))}


def _separate_pools(resources: list[Any]) -> dict[str, set[str]]:
    """Names of the GKE NodePool and AKS AgentPool resources, keyed by each way they refer to their cluster: the
    URNs they depend on, and their `cluster` (GKE, a name or an id) or `resourceName` (AKS, the cluster's name)."""
    found: dict[str, set[str]] = {}
    for pool in resources:
        if pool.resource_type not in (GKE_POOL, AKS_POOL):
            continue
        name = _known_str(get(pool.props, "name")) or _known_str(get(pool.props, "agentPoolName"))
        refs = urns(getattr(pool, "dependencies", None))
        if ref := _known_str(get(pool.props, "cluster") or get(pool.props, "resourceName")):
            refs.add(ref)
        for ref in refs if name else ():
            found.setdefault(ref, set()).add(name)
    return found
