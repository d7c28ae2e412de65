"""The stack's tags as the CLI derives them for a preview or update, which the policy pack gets in ConfigureStack.

pkg/backend/stack.go, GetEnvironmentTagsForCurrentStack: `pulumi:project`, `pulumi:runtime` and `pulumi:description`
from the project file, then the entries of the `pulumi:tags` config value (the stack file's, else the project file's
`config: pulumi:tags: value:`), which must be an object of strings. That is what the Pulumi Cloud backend sends
(pkg/backend/httpstate); a self-managed backend (file, S3, GCS, Azure Blob) sends only the tags set with
`pulumi stack tag set` (pkg/backend/diy). The CLI also adds git metadata (`vcs:*`); offline the plan leaves those out,
as it has no backend that keeps earlier tags either.
"""

from __future__ import annotations

from .project import Project, ProjectError, _read_mapping, stack_values

TAGS_KEY = "pulumi:tags"


def stack_tags(project: Project, stack: str) -> dict[str, str]:
    """The tags of `stack` (its `pulumi:tags` read as written: a string holding JSON is no object)."""
    data = _read_mapping(project.file)
    tags = {"pulumi:project": project.name, "pulumi:runtime": "python"}
    if isinstance(data.get("description"), str):
        tags["pulumi:description"] = data["description"]
    stack_file, given = stack_values(project, stack)
    if TAGS_KEY in given:
        value, where = given[TAGS_KEY], stack_file
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
