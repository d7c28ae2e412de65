"""Compare two plan documents (from `aiinfra plan --json`): resources added, changed and removed, by component."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

SECRET_SIG = "4dabf18193072939515e22adb298388d"
# Options a diff reports, with the value a record without the field means (a base planned before the field existed).
_OPTIONS = {"protect": False, "retainOnDelete": False, "ignoreChanges": [], "provider": "", "parent": "",
            "deleteBeforeReplace": None, "replaceOnChanges": [], "additionalSecretOutputs": [], "customTimeouts": {}}


def _component_of(urn: str, by_urn: dict[str, dict[str, Any]]) -> str:
    """The top-level component (direct child of the stack) a resource belongs to, as `Type name`."""
    record = by_urn.get(urn)
    top = record
    while record is not None and record.get("parent") in by_urn and by_urn[record["parent"]]["type"] != "pulumi:pulumi:Stack":
        record = by_urn[record["parent"]]
        top = record
    if top is None or top is by_urn.get(urn) and top.get("custom"):
        return "(outside components)"
    return f"{top['type'].split(':')[-1]} {top['name']}"


def _changed_paths(before: Any, after: Any, path: str = "") -> list[str]:
    if isinstance(before, dict) and isinstance(after, dict):
        if SECRET_SIG in before or SECRET_SIG in after:
            return [path or "(value)"] if before != after else []
        paths: list[str] = []
        for key in sorted(set(before) | set(after)):
            paths += _changed_paths(before.get(key), after.get(key), f"{path}.{key}" if path else key)
        return paths
    return [] if before == after else [path or "(value)"]


def _inputs(record: dict[str, Any]) -> dict[str, Any]:
    """A record's inputs to compare. A provider's settings are compared by value: the plan records an object setting as
    its JSON text, as the engine sends it (earlier plans held the parsed object), and the JSON's spacing is no change."""
    inputs = record.get("inputs", {})
    if not str(record.get("type", "")).startswith("pulumi:providers:"):
        return inputs
    parsed = {}
    for key, value in inputs.items():
        if isinstance(value, str) and value[:1] in ("{", "["):
            try:
                value = json.loads(value)
            except ValueError:
                pass
        parsed[key] = value
    return parsed


def diff_plans(base: dict[str, Any], head: dict[str, Any]) -> dict[str, Any]:
    """JSON-serialisable diff: per component, the URNs added/removed and changed inputs/options."""
    old = {r["urn"]: r for r in base.get("resources", [])}
    new = {r["urn"]: r for r in head.get("resources", [])}
    # A new URN whose aliases name a URN of the base is that resource, moved (renamed or re-parented): the engine
    # updates it in place, so it is no removal and addition.
    moved = {alias: urn for urn in sorted(set(new) - set(old)) for alias in new[urn].get("aliases", [])
             if alias in old and alias not in new}
    groups: dict[str, dict[str, list]] = defaultdict(lambda: {"added": [], "removed": [], "changed": []})
    for urn in sorted(set(new) - set(old) - set(moved.values())):
        groups[_component_of(urn, new)]["added"].append({"urn": urn, "type": new[urn]["type"]})
    for urn in sorted(set(old) - set(new) - set(moved)):
        groups[_component_of(urn, old)]["removed"].append({"urn": urn, "type": old[urn]["type"]})
    pairs = [(urn, urn) for urn in sorted(set(old) & set(new))] + sorted(moved.items())
    for before, urn in pairs:
        inputs = _changed_paths(_inputs(old[before]), _inputs(new[urn]))
        options = [o for o, unset in _OPTIONS.items() if old[before].get(o, unset) != new[urn].get(o, unset)
                   and (o != "parent" or before == urn)]
        if before != urn:
            options.append(f"moved from {before.split('::', 2)[-1]} (aliased)")
        if inputs or options:
            groups[_component_of(urn, new)]["changed"].append({"urn": urn, "type": new[urn]["type"], "inputs": inputs, "options": options})
    counts = {kind: sum(len(g[kind]) for g in groups.values()) for kind in ("added", "changed", "removed")}
    return {"stack": head.get("stack"), "base_stack": base.get("stack"), "counts": counts,
            "components": {name: groups[name] for name in sorted(groups)}}


def render_diff_text(diff: dict[str, Any]) -> str:
    c = diff["counts"]
    lines = [f"\nDiff against base: +{c['added']} added, ~{c['changed']} changed, -{c['removed']} removed"]
    for component, group in diff["components"].items():
        lines.append(f"  {component}")
        lines += [f"    + {e['urn'].split('::')[-1]} ({e['type']})" for e in group["added"]]
        lines += [f"    ~ {e['urn'].split('::')[-1]}: {', '.join(e['inputs'] + e['options'])}" for e in group["changed"]]
        lines += [f"    - {e['urn'].split('::')[-1]} ({e['type']})" for e in group["removed"]]
    return "\n".join(lines)
