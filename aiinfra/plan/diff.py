"""Compare two plan documents (from `aiinfra plan --json`): resources added, updated, replaced and removed, by
component, with the old and new value of each changed input.

What the engine would do with a changed resource is worked out as it does, from what the plan records: the program's
`ignoreChanges` paths are reset to the base's values before comparing (pkg/resource/deploy/step_generator.go,
processIgnoreChanges); a change at or under one of the resource's `replaceOnChanges` paths replaces it (the program's
own resource options, e.g. an AgentPool's osDiskSizeGB, set by components/azure/gpu_pool.py; the azure-native classes
set none); and so does a change to a property the provider itself cannot update in place (force_new.py and
force_new_azure.py, a table of the types that hold data or take long to create: the bridged providers' ForceNew
fields, and what the azure-native provider replaces on at Diff time, e.g. an AgentPool's vmSize or
gpuInstanceProfile, an AmlFilesystem's storageCapacityTiB). Any other change is an update. Secret values are compared
and shown masked, so a base planned before the plan masked them (plaintext) and a head that does (`[secret]`) agree.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from .force_new import SHRINK_REPLACES, force_new_paths
from .masking import SECRET_SHOWN, is_secret, mask_secrets
from .property_paths import MISSING, covers, format_path, get_at, parse_path, reset

_UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # pulumi.runtime.rpc.UNKNOWN
_VALUE_WIDTH = 60
"""The most characters of an old or new value shown; longer ones end in `…`."""

# Options a diff reports, with the value a record without the field means (a base planned before the field existed).
_OPTIONS = {"protect": False, "retainOnDelete": False, "ignoreChanges": [], "provider": "", "parent": "",
            "deleteBeforeReplace": None, "replaceOnChanges": [], "replaceWith": [], "deletedWith": "",
            "additionalSecretOutputs": [], "customTimeouts": {}}

CLUSTER_TYPES = frozenset({"aws:eks/cluster:Cluster", "gcp:container/cluster:Cluster",
                           "azure-native:containerservice:ManagedCluster"})
K8S_PROVIDER = "pulumi:providers:kubernetes"
_STRANDED = ("cluster {cluster} is replaced, but the {objects} Kubernetes object(s) on it are not re-created there: the "
             "Kubernetes provider names the cluster by a fixed clusterIdentifier, so the engine keeps them in state; after "
             "this `pulumi up`, run `pulumi up --refresh` (the refresh drops them from state, the up creates them)")
"""pulumi-kubernetes DiffConfig clears every replacement while the clusterIdentifier is unchanged
(provider/pkg/provider/provider.go), and the components keep it fixed so that no routine cluster update replaces the
in-cluster objects."""

PROTECTED_NOTE = "protected: `pulumi up` will fail"
RETAINED_NOTE = "retained in the cloud, only dropped from state"


def _changes(before: Any, after: Any, path: list[str | int]) -> list[tuple[list[str | int], Any, Any]]:
    """(path, old, new) of each changed leaf; an object or list present on one side only is one change."""
    if isinstance(before, dict) and isinstance(after, dict) and not is_secret(before) and not is_secret(after):
        found = []
        for key in sorted(set(before) | set(after)):  # a null input is an unset one
            a, b = before.get(key), after.get(key)
            found += _changes(MISSING if a is None else a, MISSING if b is None else b, [*path, key])
        return found
    if isinstance(before, list) and isinstance(after, list):
        found = []
        for i in range(max(len(before), len(after))):
            found += _changes(before[i] if i < len(before) else MISSING, after[i] if i < len(after) else MISSING,
                              [*path, i])
        return found
    return [] if before == after else [(path, before, after)]


def shown(value: Any) -> str:
    """A value for the reader: secrets masked, unknowns named, long text cut."""
    if value is MISSING:
        return "(unset)"
    if is_secret(value):
        return SECRET_SHOWN
    if value == _UNKNOWN:
        return "[unknown]"
    text = json.dumps(mask_secrets(value), separators=(",", ":"), ensure_ascii=False).replace(f'"{_UNKNOWN}"', "[unknown]")
    return text if len(text) <= _VALUE_WIDTH else text[: _VALUE_WIDTH - 1] + "…"


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


def _inputs(record: dict[str, Any]) -> dict[str, Any]:
    """A record's inputs to compare, secrets masked. A provider's settings are compared by value: the plan records an
    object setting as its JSON text, as the engine sends it (earlier plans held the parsed object), and the JSON's
    spacing is no change."""
    inputs = mask_secrets(record.get("inputs", {}))
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


def _changed_entry(old: dict[str, Any], new: dict[str, Any], before: str, urn: str,
                   users: int) -> dict[str, Any] | None:
    old_inputs, new_inputs = _inputs(old), _inputs(new)
    if new["type"].startswith("pulumi:providers:") and "version" not in old_inputs:
        new_inputs.pop("version", None)  # a base planned before explicit providers recorded the engine's version
    unfound = []
    for path in new.get("ignoreChanges") or []:  # the engine keeps the base's value there
        segments = parse_path(path)
        if segments is not None:  # the engine skips a path it cannot parse
            new_inputs, found = reset(old_inputs, new_inputs, segments)
            unfound += [] if found else [path]
    changes = _changes(old_inputs, new_inputs, [])
    options = [o for o, unset in _OPTIONS.items() if old.get(o, unset) != new.get(o, unset)
               and (o != "parent" or before == urn)]
    if before != urn:
        options.append(f"moved from {before.split('::', 2)[-1]} (aliased)")
    if not changes and not options:
        return None
    own = [(path, parse_path(path)) for path in new.get("replaceOnChanges") or []]
    replace_on = [p for p in [*(s for _, s in own), *map(parse_path, force_new_paths(new["type"]))] if p is not None]
    replacing = []
    shrink = SHRINK_REPLACES.get(new["type"], ())
    for path, before_value, after_value in changes:
        # At or under a replace path; or a whole object changed that holds one whose value differs; or a size made smaller.
        if any(covers(p, path) or (covers(path, p) and get_at(old_inputs, p) != get_at(new_inputs, p)) for p in replace_on) \
                or (shrink and format_path(path) in shrink and _smaller(after_value, before_value)):
            replacing.append(format_path(path))
    entry: dict[str, Any] = {
        "urn": urn, "type": new["type"], "action": "replace" if replacing else "update",
        "inputs": [format_path(path) for path, _, _ in changes],
        "changes": [{"path": format_path(path), "old": shown(a), "new": shown(b)} for path, a, b in changes],
        "replaceBecause": replacing, "options": options, "notes": []}
    if replacing:
        _replacement_notes(entry, old, new)
    if unfound:  # processIgnoreChanges logs this and goes on with what it reset
        entry["notes"].append("cannot ignore changes in added or removed elements of the path: "
                              + json.dumps(", ".join(unfound)))
    for path, segments in own:  # applyReplaceOnChanges fails on one for a resource that changes
        if changes and segments is None:
            entry["notes"].append(f"replaceOnChanges path {json.dumps(path)} does not parse: `pulumi up` will fail")
    if changes and new["type"].startswith("pulumi:providers:"):
        entry["notes"].append(f"provider settings changed: the {users} resource{'s' if users != 1 else ''} using this "
                              "provider may update, or be replaced where they cannot take the change in place")
    return entry


def _smaller(new: Any, old: Any) -> bool:
    numbers = (int, float)
    return all(isinstance(v, numbers) and not isinstance(v, bool) for v in (new, old)) and new < old


def diff_plans(base: dict[str, Any], head: dict[str, Any]) -> dict[str, Any]:
    """JSON-serialisable diff: per component, the resources added, changed in place, replaced and removed."""
    old = {r["urn"]: r for r in base.get("resources", [])}
    new = {r["urn"]: r for r in head.get("resources", [])}
    # A new URN whose aliases name a URN of the base is that resource, moved (renamed or re-parented): the engine
    # updates it in place, so it is no removal and addition.
    moved = {alias: urn for urn in sorted(set(new) - set(old)) for alias in new[urn].get("aliases", [])
             if alias in old and alias not in new}
    users: dict[str, int] = defaultdict(int)  # resources per provider URN (a reference is `<urn>::<id>`)
    for record in new.values():
        if record.get("provider"):
            users[record["provider"].rsplit("::", 1)[0]] += 1
    groups: dict[str, dict[str, list]] = defaultdict(lambda: {"added": [], "changed": [], "replaced": [], "removed": []})
    for urn in sorted(set(new) - set(old) - set(moved.values())):
        groups[_component_of(urn, new)]["added"].append({"urn": urn, "type": new[urn]["type"]})
    for urn in sorted(set(old) - set(new) - set(moved)):
        entry: dict[str, Any] = {"urn": urn, "type": old[urn]["type"], "notes": []}
        if old[urn].get("protect"):
            entry["protected"] = True
            entry["notes"].append(PROTECTED_NOTE)
        if old[urn].get("retainOnDelete"):
            entry["retained"] = True
            entry["notes"].append(RETAINED_NOTE)
        groups[_component_of(urn, old)]["removed"].append(entry)
    pairs = [(urn, urn) for urn in sorted(set(old) & set(new))] + sorted(moved.items())
    for before, urn in pairs:
        entry = _changed_entry(old[before], new[urn], before, urn, users[urn])
        if entry is not None:
            groups[_component_of(urn, new)]["replaced" if entry["action"] == "replace" else "changed"].append(entry)
    _replace_with(groups, old, new, dict(pairs))
    counts = {kind: sum(len(g[kind]) for g in groups.values()) for kind in ("added", "changed", "replaced", "removed")}
    protected = [e["urn"] for g in groups.values() for e in g["removed"] + g["replaced"] if e.get("protected")]
    replaced_clusters = {e["urn"] for g in groups.values() for e in g["replaced"] if e["type"] in CLUSTER_TYPES}
    # The objects on a replaced cluster: those of each Kubernetes provider that depends on it.
    stranded = [{"cluster": cluster, "provider": p["urn"], "objects": users[p["urn"]]}
                for p in new.values() if p["type"] == K8S_PROVIDER and users[p["urn"]]
                for cluster in sorted(replaced_clusters & set(p.get("dependencies", [])))]
    return {"stack": head.get("stack"), "base_stack": base.get("stack"), "counts": counts, "protected": protected,
            "stranded": stranded, "components": {name: groups[name] for name in sorted(groups)}}


def _replacement_notes(entry: dict[str, Any], old: dict[str, Any], new: dict[str, Any]) -> None:
    """What replacing a resource means beyond the diff: the engine allows unprotecting and replacing in one update and
    refuses only when both records are protected (pkg/resource/deploy/step_generator.go); a retained one stays."""
    if old.get("protect") and new.get("protect"):
        entry["protected"] = True
        entry["notes"].append(PROTECTED_NOTE)
    if old.get("retainOnDelete"):
        entry["notes"].append("the replaced one is retained in the cloud, only dropped from state")


def _replace_with(groups: dict[str, dict[str, list]], old: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]],
                  kept: dict[str, str]) -> None:
    """Replace, as the engine does, each kept resource whose `replaceWith` names a replaced one (repeatedly, so a
    chain follows): an update becomes a replacement, and an unchanged resource gets a replacement entry."""
    entries = {e["urn"]: (name, kind, e) for name, g in groups.items() for kind in ("changed", "replaced") for e in g[kind]}
    replaced = {urn for urn, (_, kind, _) in entries.items() if kind == "replaced"}
    moved_to = {urn: before for before, urn in kept.items()}
    grew = True
    while grew:
        grew = False
        for urn in moved_to:
            because = sorted(set(new[urn].get("replaceWith") or []) & replaced)
            if urn in replaced or not because:
                continue
            name, kind, entry = entries.get(urn) or (_component_of(urn, new), "", None)
            if entry is None:
                entry = {"urn": urn, "type": new[urn]["type"], "action": "replace", "inputs": [], "changes": [],
                         "replaceBecause": [], "options": [], "notes": []}
            else:
                groups[name][kind].remove(entry)
                entry["action"] = "replace"
            entry["notes"].append(f"replaced with {', '.join(_name(u) for u in because)} (replaceWith)")
            _replacement_notes(entry, old[moved_to[urn]], new[urn])
            groups[name]["replaced"].append(entry)
            entries[urn] = (name, "replaced", entry)
            replaced.add(urn)
            grew = True


def stranded_lines(diff: dict[str, Any], code: Callable[[str], str] = str) -> list[str]:
    """One warning per replaced cluster whose Kubernetes objects the engine keeps (_STRANDED)."""
    return [_STRANDED.format(cluster=code(_name(s["cluster"])), objects=s["objects"]) for s in diff.get("stranded", [])]


def counts_line(counts: dict[str, int]) -> str:
    return (f"+{counts['added']} added, ~{counts['changed']} changed, ±{counts.get('replaced', 0)} replaced, "
            f"-{counts['removed']} removed")


def describe_changes(entry: dict[str, Any], limit: int | None = None, code: Callable[[str], str] = str) -> list[str]:
    """`path old → new` for each changed input (`(replaces)` on those that force the replacement), then the options;
    `code` formats each path, value and option (markdown's code spans)."""
    replacing = set(entry.get("replaceBecause", []))
    parts = [f"{code(c['path'])} {code(c['old'])} → {code(c['new'])}" + (" (replaces)" if c["path"] in replacing else "")
             for c in entry.get("changes", [])] or [code(p) for p in entry.get("inputs", [])]
    if limit is not None and len(parts) > limit:
        parts = [*parts[:limit], f"… {len(parts) - limit} more"]
    return parts + [code(o) for o in entry.get("options", [])]


def _name(urn: str) -> str:
    return urn.split("::")[-1]


_TEXT_CHANGES_PER_RESOURCE = 12


def render_diff_text(diff: dict[str, Any]) -> str:
    lines = [f"\nDiff against base: {counts_line(diff['counts'])}"]
    for component, group in diff["components"].items():
        lines.append(f"  {component}")
        lines += [f"    + {_name(e['urn'])} ({e['type']})" for e in group["added"]]
        for mark, kind in (("~", "changed"), ("±", "replaced")):
            for e in group.get(kind, []):
                parts = describe_changes(e, _TEXT_CHANGES_PER_RESOURCE)
                text = f"    {mark} {_name(e['urn'])}{' replace' if kind == 'replaced' else ''}"
                text += f": {', '.join(parts)}" if parts else ""
                lines.append(text + "".join(f" [{note}]" for note in e.get("notes", [])))
        lines += [f"    - {_name(e['urn'])} ({e['type']})" + "".join(f" [{note}]" for note in e.get("notes", []))
                  for e in group["removed"]]
    lines += [f"  warning: {line}" for line in stranded_lines(diff)]
    if diff.get("protected"):
        lines.append(f"  warning: {len(diff['protected'])} protected resource(s) would be deleted or replaced; "
                     "`pulumi up` will fail until they are unprotected")
    return "\n".join(lines)
