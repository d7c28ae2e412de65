"""Stack-file config keys as the CLI reads them (sdk/go/common/resource/config/key.go, ParseKey)."""

from __future__ import annotations


def config_key(key: str, project: str) -> str:
    """A stack file's config key as the CLI reads it: a bare key is the project's (stackConfigNamespacedWithProject),
    and the older `<namespace>:config:<name>` form is `<namespace>:<name>`; ValueError for any other key with more than
    one colon, which the CLI refuses."""
    if ":" not in key:
        return f"{project}:{key}"
    parts = key.split(":")
    if len(parts) == 2:
        return key
    if len(parts) == 3 and parts[1] == "config":
        return f"{parts[0]}:{parts[2]}"
    raise ValueError(f"config key {key!r} is not a configuration key: keys are <namespace>:<name> "
                     "(or the older <namespace>:config:<name>)")
