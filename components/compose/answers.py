"""The checks of a `pulumi new` template's config answers, run before the platform is built.

A template builds the platform in code from its config keys, so a mistake is reported against the config key to
change, with the `pulumi config set` command that fixes it, never as a platform.* path the user has no file for.
Each check raises pulumi.RunError, so the CLI prints the message alone, on one line, without a traceback. What
differs between templates (the value a fix suggests, the clouds a template deploys to) is a parameter.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import NoReturn

import pulumi

from components import catalog
from components.catalog.errors import CLOUD_NAMES, CLOUDS, with_article
from components.spec.azure import DeployerAccess, no_zones_problem, zonal_regions_nearest_first
from components.spec.common import (ENVIRONMENT_PATTERN, ENVIRONMENT_RULE, GCP_PROJECT_PATTERN, GCP_PROJECT_RULE,
                                    GUID_PATTERN, GUID_RULE, NAME_PATTERN, NAME_RULE, RESERVED_NAMESPACES_RULE, Cloud,
                                    is_reserved_namespace)
from components.spec.compute import GpuPoolSpec
from components.spec.platform import TeamSpec
from components.spec.resolve import resolve_gpu_pool


DEFAULT_ACCELERATORS = {"aws": "l4", "gcp": "l4", "azure": "a100-80gb"}
"""Each cloud's accelerator when a template's `accelerator` is left empty: one GPU per node (Azure offers no L4)."""

__all__ = ["DEFAULT_ACCELERATORS", "CLOUDS", "as_name", "azure_access", "check_accelerator", "check_budget", "check_cloud", "check_gcp_project",
           "check_region", "check_stack", "check_team", "pool_quota", "stop", "team_platform"]

OLD_GCP_PROJECT_PLACEHOLDER = "my-gcp-project"
"""The `gcpProject` default of earlier templates: a valid project ID, so only a real preview (getProject) refused it;
stacks created from those templates may still carry it."""


def stop(key: str, problem: str, value: str, also: str = "") -> NoReturn:
    """Refuse config `key`: the problem, then how to fix it (`value`, and `also` another way)."""
    raise pulumi.RunError(f"config {key}: {problem}; set it with `pulumi config set {key} {value}`{also}")


def as_name(text: str, default: str, pattern: str, longest: int) -> str:
    """`text` made to fit `pattern` (lower case, '-' for anything else), or `default` when that does not fit."""
    guess = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:longest].rstrip("-")
    return guess if re.fullmatch(pattern, guess) else default


def check_stack(stack: str) -> None:
    """The stack's name is the platform's environment (it names the resources and sets their protection)."""
    if not re.fullmatch(ENVIRONMENT_PATTERN, stack):
        fix = as_name(stack, "dev", ENVIRONMENT_PATTERN, 16)
        raise pulumi.RunError(f"stack '{stack}': this template uses the stack name as the environment name, and environment "
                              f"names are {ENVIRONMENT_RULE}; rename the stack with `pulumi stack rename {fix}` (or create "
                              f"one with `pulumi stack init {fix}`)")


def check_team(team: str, default: str = "research") -> None:
    """The team becomes a Kubernetes namespace: a valid name, and not one the platform or Kubernetes uses."""
    if not re.fullmatch(NAME_PATTERN, team):
        stop("team", f"'{team}' is not a valid team name; team names are {NAME_RULE}", as_name(team, default, NAME_PATTERN, 24))
    if is_reserved_namespace(team):
        stop("team", f"'{team}' is reserved: the team becomes a Kubernetes namespace, and the platform's add-ons or "
                     f"Kubernetes itself use this one; not allowed: {RESERVED_NAMESPACES_RULE}", default)


def check_cloud(cloud: str, default: str, allowed: tuple[str, ...] = CLOUDS,
                refused: str = "is not a cloud ai-infra deploys to") -> None:
    """One of the clouds the template deploys to (`allowed`); `refused` says why another one is not."""
    if cloud not in allowed:
        stop("cloud", f"'{cloud}' {refused}; allowed: {', '.join(allowed)}", default)


def check_region(region: str, cloud: str, only: str = "", fix: Callable[[str], str] = str, switch: bool = True) -> None:
    """A region of `cloud`. `only` says why the template deploys to `cloud` alone (e.g. "TPU slices are GCP-only"): the
    fix then never suggests another cloud, and the messages name the cloud as people write it. `fix` turns the region
    a fix suggests into the value to set (a template whose `region` lists several puts it in its place in the list);
    `switch` False leaves out the other cloud a region belongs to as a fix (the other regions listed are not of it)."""
    if catalog.find_region(cloud, region) is not None:
        if cloud == "azure" and (problem := no_zones_problem(region)):
            stop("region", problem, fix(zonal_regions_nearest_first(region)[0]))
        return
    example, other = catalog.region_example(cloud), catalog.region_clouds(region)
    name = CLOUD_NAMES[cloud] if only else cloud
    if other and only:
        stop("region", f"'{region}' is a region of {other[0]}; {only}, and {name} regions are named like {example}", fix(example))
    if other:
        stop("region", f"'{region}' is a region of {other[0]}, not of {cloud} (config cloud is {cloud}); {cloud} regions "
                       f"are named like {example}", fix(example),
             f", or deploy to {other[0]}: `pulumi config set cloud {other[0]}`" if switch else "")
    close = catalog.suggest_regions(region, cloud)
    known = f"did you mean {' or '.join(close)}?" if close else f"{name} regions are named like {example}."
    where = f"{with_article(name)} region" if only else f"a region of {cloud}"
    stop("region", f"'{region}' is not {where}; {known} All {name} regions: {catalog.region_doc(cloud)}",
         fix(close[0] if close else example))


def check_accelerator(accelerator: str, cloud: str, prefer: tuple[str, ...]) -> None:
    """A GPU model `cloud` offers; the fix suggests the name in lower case when that is offered ("L4" -> l4), else the
    first of `prefer` it offers (else its first model)."""
    offered = catalog.accelerators_on(cloud)
    if accelerator in offered:
        return
    elsewhere = [c for c in catalog.clouds_offering(accelerator) if c != cloud]
    where = f" (it is offered on {', '.join(elsewhere)})" if elsewhere else " (`aiinfra catalog` lists the models)"
    fix = accelerator.lower() if accelerator.lower() in offered else next((a for a in prefer if a in offered), offered[0])
    stop("accelerator", f"'{accelerator}' is not offered on {cloud}{where}; allowed on {cloud}: {', '.join(offered)}", fix)


def check_budget(text: str) -> int:
    """`monthlyBudgetUsd`: a positive whole number of US dollars."""
    try:
        budget = int(text)
    except ValueError:
        budget = None
    if budget is None or budget <= 0:
        stop("monthlyBudgetUsd", f"must be a positive whole number of US dollars (no unit or separator); got '{text}'", "5000")
    return budget


def check_gcp_project(project: str | None) -> str:
    """`gcpProject`, which has no default (the CLI saves no empty answer, so it is unset until given): a GCP project ID."""
    where = "`gcloud projects list` lists the IDs of yours"
    if not project:
        stop("gcpProject", f"no GCP project is set; give the ID of the project to deploy to ({where})", "<your-project-id>")
    if project == OLD_GCP_PROJECT_PLACEHOLDER:
        stop("gcpProject", f"'{project}' is the template's placeholder, not a project of yours ({where})", "<your-project-id>")
    if not re.fullmatch(GCP_PROJECT_PATTERN, project):
        stop("gcpProject", f"'{project}' is not a GCP project ID; project IDs are {GCP_PROJECT_RULE}", "<your-project-id>")
    return project


def pool_quota(cloud: str, accelerator: str, nodes: int) -> dict[str, int]:
    """A team quota that lets the team use its GPU pool at full size on every cluster: `gpu_quota` = nodes x GPUs per
    node of the instance type the platform resolves for `accelerator` (Kueue admits no more than the nominal quota of a
    team that has no one to borrow from), and CPU and memory quotas large enough for the pods on those nodes (the
    instance's vCPUs and memory; never below the spec's defaults, which leave room for CPU-only pods elsewhere)."""
    row = resolve_gpu_pool(Cloud(cloud), GpuPoolSpec(accelerator=accelerator))
    defaults = TeamSpec()
    return {"gpu_quota": nodes * row.accelerator_count,
            "cpu_quota": max(defaults.cpu_quota, nodes * row.vcpus),
            "memory_gib_quota": max(defaults.memory_gib_quota, nodes * row.memory_gib)}


def azure_access(deployer: str, groups: str) -> dict:
    """platform.clouds.azure's deployer and admin_group_object_ids, from `azureDeployer` and `azureAdminGroupObjectIds`
    (comma-separated, or a JSON list)."""
    allowed = [d.value for d in DeployerAccess]
    if deployer not in allowed:
        stop("azureDeployer", f"'{deployer}' is not a deployer kind; allowed: {', '.join(allowed)}", "user")
    text = groups.strip()
    try:
        ids = json.loads(text) if text.startswith("[") else [i.strip() for i in text.split(",") if i.strip()]
    except json.JSONDecodeError:
        ids = None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        stop("azureAdminGroupObjectIds", f"'{groups}' is neither a comma-separated list nor a JSON list of Entra group "
                                         "object IDs", "<group-object-id>,<group-object-id>")
    bad = [i for i in ids if not re.fullmatch(GUID_PATTERN, i)]
    if bad:
        stop("azureAdminGroupObjectIds", f"'{bad[0]}' is not an Entra group object ID; object IDs are {GUID_RULE} "
                                         "(`az ad group show --group <name> --query id -o tsv` prints one)", "<group-object-id>")
    if deployer == DeployerAccess.ADMIN_GROUP.value and not ids:
        stop("azureAdminGroupObjectIds", "azureDeployer is admin_group (you reach the clusters as a member of an Entra "
                                         "admin group, with no role assignment), but no group is given; give the object "
                                         "ID of a group you are in (`az ad group show --group <name> --query id -o tsv`)",
             "<group-object-id>", ", or let the deployer get its own role assignment: `pulumi config set azureDeployer user`")
    return {"deployer": deployer, **({"admin_group_object_ids": list(dict.fromkeys(ids))} if ids else {})}


def team_platform(config: pulumi.Config, team: str, budget: int, clouds: dict, quota: dict) -> dict:
    """A team template's platform spec: the stack's environment, the team's labels (its monthly budget among the extra
    ones) and quota, and `clouds` with each cloud's access answers added, checked: `gcpProject` on GCP; on Azure
    `azureDeployer` and `azureAdminGroupObjectIds` (Azure refuses a role assignment whose principal type is wrong)."""
    for cloud, spec in clouds.items():
        if cloud == "gcp" and "project" not in spec:
            spec["project"] = check_gcp_project(config.get("gcpProject"))
        if cloud == "azure":
            spec.update(azure_access(config.get("azureDeployer") or "user", config.get("azureAdminGroupObjectIds") or ""))
    return {"environment": pulumi.get_stack(),
            "labels": {"owner": team, "team": team, "cost_center": team, "extra": {"monthly-budget-usd": str(budget)}},
            "clouds": clouds, "teams": {team: quota}}
