"""The stack's tags as the CLI derives them for a preview or update, which the policy pack gets in ConfigureStack.

pkg/backend/stack.go, GetEnvironmentTagsForCurrentStack: `pulumi:project`, `pulumi:runtime` and `pulumi:description`
from the project file, then the entries of the `pulumi:tags` config value (the stack file's, else the project file's
`config: pulumi:tags: value:`), which must be an object of strings. The CLI also adds git metadata (`vcs:*`); offline
the plan leaves those out, as it has no backend that keeps earlier tags either.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .project import Project, ProjectError, _read_mapping

TAGS_KEY = "pulumi:tags"


def stack_tags(project: Project, config: Mapping[str, str], stack_file: str) -> dict[str, str]:
    """The tags of a stack whose flat config map (`load_stack_config`) is `config`, read from `stack_file`."""
    data = _read_mapping(project.file)
    tags = {"pulumi:project": project.name, "pulumi:runtime": "python"}
    if isinstance(data.get("description"), str):
        tags["pulumi:description"] = data["description"]
    if TAGS_KEY in config:
        value, where = _object(config[TAGS_KEY]), stack_file
    else:
        declared = (data.get("config") or {}).get(TAGS_KEY) if isinstance(data.get("config"), dict) else None
        if declared is None:
            return tags
        value, where = (declared.get("value") if isinstance(declared, dict) and "value" in declared else declared), project.file
    if not isinstance(value, dict):
        raise ProjectError(f"{where}: {TAGS_KEY} must be an object of strings, got {value!r}")
    for name, text in value.items():
        if not isinstance(text, str):
            raise ProjectError(f"{where}: {TAGS_KEY}[{name}] must be a string, got {text!r}")
        tags[str(name)] = text
    return tags


def _object(text: str) -> Any:
    """A config value's object, as Go's Value.ToObject reads it: JSON when it parses, else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text
