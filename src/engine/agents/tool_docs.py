"""The MCP tools as a Markdown reference, made from the server's own tool definitions.

The docs build asks the server for its tool list (:func:`engine.agents.mcp_server.tool_definitions`,
the same data an MCP client receives) and renders it here, the way the command line reference
is rendered from click: a parameter, a limit or a description changed in the code changes the
page, and nothing written by hand can disagree with it. Pure: definitions in, Markdown out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

Schema = Mapping[str, object]


def schema_type(schema: Schema) -> str:
    """A short type name for a JSON Schema: ``integer``, ``string or null``, ``list of string``."""
    if "anyOf" in schema:
        return " or ".join(schema_type(part) for part in schema["anyOf"])  # type: ignore[union-attr]
    if "enum" in schema:
        return " or ".join(json.dumps(v) for v in schema["enum"])  # type: ignore[union-attr]
    if "const" in schema:
        return json.dumps(schema["const"])
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    kind = schema.get("type", "any")
    if kind == "array":
        items = schema.get("items")
        return f"list of {schema_type(items)}" if isinstance(items, Mapping) else "list"
    return str(kind)


def limits(schema: Schema) -> str:
    """The constraints a client can check before calling: ranges, lengths, patterns."""
    parts = []
    for part in [schema, *(schema.get("anyOf") or [])]:  # type: ignore[list-item]
        if not isinstance(part, Mapping):
            continue
        if "minimum" in part and "maximum" in part:
            parts.append(f"{part['minimum']}–{part['maximum']}")
        elif "minimum" in part:
            parts.append(f"≥ {part['minimum']}")
        elif "maximum" in part:
            parts.append(f"≤ {part['maximum']}")
        if "minLength" in part or "maxLength" in part:
            parts.append(f"{part.get('minLength', 0)}–{part.get('maxLength', '∞')} chars")
        if "maxItems" in part:
            parts.append(f"≤ {part['maxItems']} items")
        items = part.get("items")
        if isinstance(items, Mapping) and "maxLength" in items:
            parts.append(f"each ≤ {items['maxLength']} chars")
        if "pattern" in part:
            parts.append(f"matches `{part['pattern']}`")
    return ", ".join(parts)


def cell(text: object) -> str:
    """Text safe inside a Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def parameter_table(schema: Schema) -> list[str]:
    properties = schema.get("properties") or {}
    if not properties:
        return ["No parameters."]
    required = set(schema.get("required") or [])  # type: ignore[arg-type]
    lines = [
        "| parameter | type | default | limits | description |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, spec in properties.items():  # type: ignore[union-attr]
        default = "required" if name in required else f"`{json.dumps(spec.get('default'))}`"
        lines.append(
            f"| `{name}` | {cell(schema_type(spec))} | {default} | {cell(limits(spec))} | "
            f"{cell(spec.get('description', ''))} |"
        )
    return lines


def output_fields(schema: Schema | None) -> list[str]:
    if not schema:
        return []
    properties = schema.get("properties") or {}
    lines = ["", "Returns (structured content, and the same JSON as text):", ""]
    for name, spec in properties.items():  # type: ignore[union-attr]
        described = f": {cell(spec['description'])}" if spec.get("description") else ""
        lines.append(f"- `{name}` ({cell(schema_type(spec))}){described}")
    if schema.get("additionalProperties", True) is not False and not properties:
        lines.append("- an object")
    return lines


def hints(annotations: Mapping[str, object] | None) -> str:
    if not annotations:
        return ""
    names = {
        "readOnlyHint": "read-only",
        "destructiveHint": "destructive",
        "idempotentHint": "idempotent",
    }
    said = [
        label if annotations[key] else f"not {label}"
        for key, label in names.items()
        if annotations.get(key) is not None
    ]
    return f"*Hints to clients: {', '.join(said)}.*" if said else ""


def render_tools(tools: Sequence[Mapping[str, object]]) -> str:
    """Markdown for every tool: a heading, its description, its parameters with their limits,
    and the fields it returns."""
    out: list[str] = []
    for tool in tools:  # in the server's order: search first
        out += [f"### `{tool['name']}`", ""]
        if tool.get("title"):
            out += [f"**{tool['title']}.** " + " ".join(str(tool["description"]).split()), ""]
        else:
            out += [" ".join(str(tool["description"]).split()), ""]
        note = hints(tool.get("annotations"))  # type: ignore[arg-type]
        if note:
            out += [note, ""]
        out += parameter_table(tool["inputSchema"])  # type: ignore[arg-type]
        out += output_fields(tool.get("outputSchema"))  # type: ignore[arg-type]
        out.append("")
    return "\n".join(out)
