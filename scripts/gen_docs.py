"""Regenerate docs derived from the code: the config reference and the JSON Schemas of the stack files.

Run `uv run python scripts/gen_docs.py`; tests/spine/test_docs.py fails when the committed files are stale.
"""

from __future__ import annotations

import enum
import json
import sys
import types
import typing
from pathlib import Path

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from components.spec import Platform, json_schema  # noqa: E402

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


def _type_name(annotation: typing.Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin in (typing.Union, types.UnionType):
        names = [_type_name(a) for a in args if a is not type(None)]
        return " or ".join(names) + (" or null" if type(None) in args else "")
    if origin is list:
        return f"list[{_type_name(args[0])}]"
    if origin is dict:
        return f"map[{_type_name(args[0])}, {_type_name(args[1])}]"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return " \\| ".join(f"`{m.value}`" for m in annotation)
    return getattr(annotation, "__name__", str(annotation))


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
        lines += [f"## {name}", "", (model.__doc__ or "").strip().splitlines()[0] if model.__doc__ else "", "",
                  "| field | type | default | meaning |", "| --- | --- | --- | --- |"]
        for field_name, field in model.model_fields.items():
            default = "required" if field.is_required() else f"`{json.dumps(_plain(field.get_default(call_default_factory=True)))}`"
            description = " ".join((field.description or "").split()).replace("|", "\\|")
            lines.append(f"| `{field_name}` | {_type_name(field.annotation)} | {default} | {description} |")
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


def outputs() -> dict[Path, str]:
    return {
        ROOT / "policies" / "aiinfra_policy" / "accelerators.json": accelerator_table(),
        DOCS / "platform.schema.json": json.dumps(json_schema(), indent=2) + "\n",
        DOCS / "stack.schema.json": json.dumps(stack_schema(), indent=2) + "\n",
        DOCS / "config-reference.md": config_reference(),
    }


if __name__ == "__main__":
    for path, text in outputs().items():
        path.write_text(text)
        print(f"wrote {path.relative_to(ROOT)}")
