"""Regenerate docs derived from the code: the config reference and the JSON Schemas of the stack files.

Run `.venv/bin/python scripts/gen_docs.py`; tests/spine/test_docs.py fails when the committed files are stale.
"""

from __future__ import annotations

import enum
import inspect
import json
import re
import sys
import types
import typing
from pathlib import Path

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from components.spec import Platform, json_schema  # noqa: E402
from components.spec.common import PATTERN_RULES  # noqa: E402
from components.spec.loader import constraint_in  # noqa: E402

DOCS = ROOT / "docs"


def stack_schema() -> dict:
    """Schema of a whole `Pulumi.<env>.yaml`, with the platform schema under config.ai-infra:platform."""
    platform = json_schema()
    defs = platform.pop("$defs", {})
    platform.pop("$schema", None)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "ai-infra stack settings file (Pulumi.<env>.yaml)",
        "type": "object",
        "properties": {
            "secretsprovider": {"type": "string"},
            "encryptedkey": {"type": "string"},
            "encryptionsalt": {"type": "string"},
            "environment": {"type": "array", "items": {"type": "string"}},
            "config": {
                "type": "object",
                "properties": {"ai-infra:platform": platform},
                "required": ["ai-infra:platform"],
                "additionalProperties": True,
            },
        },
        "required": ["config"],
        "$defs": defs,
    }


def _type_name(annotation: typing.Any, metadata: typing.Sequence[typing.Any] = ()) -> str:
    """The type of a field in words; a constrained string carries its rule (`metadata` is the field's own pydantic
    metadata, or an Annotated type's, which applies to the type it wraps)."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_name(args[0], (*metadata, *args[1:]))
    if origin in (typing.Union, types.UnionType):
        names = [_type_name(a, metadata) for a in args if a is not type(None)]
        return " or ".join(names) + (" or null" if type(None) in args else "")
    if origin is list:
        return f"list[{_type_name(args[0])}]"
    if origin is dict:
        return f"map[{_type_name(args[0])}, {_type_name(args[1])}]"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return " \\| ".join(f"`{m.value}`" for m in annotation)
    if annotation is str:
        return _string_type(metadata)
    return getattr(annotation, "__name__", str(annotation))


def _string_type(metadata: typing.Sequence[typing.Any]) -> str:
    """`str`, with its rule in words when a pattern constrains it: the spec's named rules (common.PATTERN_RULES, the
    words its error messages use), the values of a pattern that only lists them, or else the pattern itself."""
    pattern = constraint_in(metadata, "pattern")
    min_length, max_length = constraint_in(metadata, "min_length"), constraint_in(metadata, "max_length")
    listed = re.fullmatch(r"\^\(([\w-]+(?:\|[\w-]+)+)\)\$", pattern) if isinstance(pattern, str) else None
    if listed:
        return " \\| ".join(f"`{value}`" for value in listed.group(1).split("|"))
    rules = []
    if pattern in PATTERN_RULES:
        what, rule = PATTERN_RULES[pattern]
        rules.append(f"{what}: {rule}")
    elif pattern is not None:
        rules.append("matching `" + str(pattern).replace("|", "\\|") + "`")
    if min_length is not None and max_length is not None:
        rules.append(f"{min_length} to {max_length} characters")
    elif max_length is not None:
        rules.append(f"at most {max_length} characters")
    elif min_length is not None:
        rules.append(f"at least {min_length} characters")
    return f"`str` ({', '.join(rules)})" if rules else "str"


def _summary(model: type[BaseModel]) -> str:
    """The first paragraph of a class docstring, on one line (the whole sentence, not its first line)."""
    paragraph = inspect.cleandoc(model.__doc__ or "").split("\n\n", 1)[0]
    return " ".join(paragraph.split())


def _models(model: type[BaseModel], seen: dict[str, type[BaseModel]]) -> None:
    if model.__name__ in seen:
        return
    seen[model.__name__] = model
    for field in model.model_fields.values():
        stack = [field.annotation]
        while stack:
            ann = stack.pop()
            if isinstance(ann, type) and issubclass(ann, BaseModel):
                _models(ann, seen)
            stack.extend(typing.get_args(ann))


def config_reference() -> str:
    seen: dict[str, type[BaseModel]] = {}
    _models(Platform, seen)
    lines = ["# Config reference: `ai-infra:platform`", "",
             "Generated from the pydantic models in `components/spec` by `scripts/gen_docs.py`; do not edit by hand.",
             "Editors validate stack files with `docs/stack.schema.json` (see the README).", ""]
    for name, model in seen.items():
        summary = _summary(model)
        lines += [f"## {name}", "", *([summary, ""] if summary else []),
                  "| field | type | default | meaning |", "| --- | --- | --- | --- |"]
        for field_name, field in model.model_fields.items():
            default = "required" if field.is_required() else f"`{json.dumps(_plain(field.get_default(call_default_factory=True)))}`"
            description = " ".join((field.description or "").split()).replace("|", "\\|")
            type_name = _type_name(field.annotation, field.metadata)
            lines.append(f"| `{field_name}` | {type_name} | {default} | {description} |")
        lines.append("")
    return "\n".join(lines)


def _plain(value: typing.Any) -> typing.Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def accelerator_table() -> str:
    """The policy pack's own copy of the catalog (the pack must run without this project installed)."""
    from components import catalog

    table = {row["cloud"] + ":" + row["instance_type"]: [row["accelerator"], row["accelerator_count"]]
             for row in catalog.catalog_rows()}
    return json.dumps(dict(sorted(table.items())), indent=0) + "\n"


def compliance_section() -> str:
    """README 'Compliance' section: the policy pack's rules by framework, from the registry."""
    sys.path.insert(0, str(ROOT / "policies"))
    from aiinfra_policy import load_rules
    from aiinfra_policy.registry import FRAMEWORKS

    rules = sorted(load_rules(), key=lambda r: r.name)
    lines = ["<!-- BEGIN COMPLIANCE (generated by scripts/gen_docs.py) -->", "## Compliance", "",
             f"`policies/` is a Pulumi CrossGuard pack of {len(rules)} rules (`pulumi preview --policy-pack policies "
             "--policy-pack-config policies/config/<env>.json`; `aiinfra plan` runs the same pack offline over the "
             "Analyzer protocol). Profiles follow the framework mapping; `policies/config/<env>.json` selects "
             "profiles, enforcement and parameters (allowed regions and accelerators, GPU caps).", "",
             "| rule | severity | profiles | " + " | ".join(FRAMEWORKS) + " |",
             "| --- | --- | --- | " + " | ".join("---" for _ in FRAMEWORKS) + " |"]
    for r in rules:
        cells = [", ".join(r.frameworks.get(fw, ())) for fw in FRAMEWORKS]
        lines.append(f"| `{r.name}` | {r.severity} | {', '.join(r.in_profiles)} | " + " | ".join(cells) + " |")
    lines += ["", "Control IDs are indicative mappings for review by whoever owns compliance.",
              "<!-- END COMPLIANCE -->"]
    return "\n".join(lines)


def readme() -> str:
    text = (ROOT / "README.md").read_text()
    start, end = "<!-- BEGIN COMPLIANCE", "<!-- END COMPLIANCE -->"
    if start in text:
        head, rest = text.split(start, 1)
        tail = rest.split(end, 1)[1]
    else:
        head, tail = text.split("<!-- COMPLIANCE -->", 1)
    return head + compliance_section() + tail


def outputs() -> dict[Path, str]:
    return {
        ROOT / "README.md": readme(),
        ROOT / "policies" / "aiinfra_policy" / "accelerators.json": accelerator_table(),
        DOCS / "platform.schema.json": json.dumps(json_schema(), indent=2) + "\n",
        DOCS / "stack.schema.json": json.dumps(stack_schema(), indent=2) + "\n",
        DOCS / "config-reference.md": config_reference(),
    }


if __name__ == "__main__":
    for path, text in outputs().items():
        path.write_text(text)
        print(f"wrote {path.relative_to(ROOT)}")
