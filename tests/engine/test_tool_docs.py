"""The MCP tool reference is rendered from the server's own definitions, every tool and
parameter with its limits, and the project's docs page uses it."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.agents.mcp_server import tool_definitions
from engine.agents.tool_docs import limits, render_tools, schema_type

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def definitions():  # type: ignore[no-untyped-def]
    return tool_definitions()


@pytest.fixture(scope="module")
def page(definitions) -> str:  # type: ignore[no-untyped-def]
    return render_tools(definitions)


def test_every_tool_has_a_heading_in_the_servers_order(definitions, page):
    headings = [line for line in page.splitlines() if line.startswith("### ")]
    assert headings == [f"### `{tool['name']}`" for tool in definitions]
    assert headings[0] == "### `memory_search`"


def test_every_parameter_is_listed_with_its_description(definitions, page):
    for tool in definitions:
        section = page.split(f"### `{tool['name']}`", 1)[1].split("\n### ", 1)[0]
        for name, spec in tool["inputSchema"].get("properties", {}).items():
            row = next(line for line in section.splitlines() if line.startswith(f"| `{name}` |"))
            assert spec.get("description", "") in row


def test_limits_show_ranges_lengths_and_patterns(page):
    assert "| `limit` | integer | `10` | 1–50 |" in page
    assert "matches `^[a-z][a-z0-9_-]{0,39}$`" in page
    assert "≤ 20 items, each ≤ 50 chars" in page


def test_a_tool_without_parameters_says_so(page):
    status = page.split("### `memory_status`", 1)[1]
    assert "No parameters." in status


def test_output_fields_are_listed(page):
    assert "- `abstained` (boolean): True when no memory is a confident answer." in page


def test_schema_type_names_unions_lists_and_literals():
    assert schema_type({"anyOf": [{"type": "string"}, {"type": "null"}]}) == "string or null"
    assert schema_type({"type": "array", "items": {"type": "string"}}) == "list of string"
    assert schema_type({"enum": [1, -1]}) == "1 or -1"


def test_limits_of_an_optional_value_come_from_its_non_null_part():
    assert limits({"anyOf": [{"type": "string", "maxLength": 40}, {"type": "null"}]}) == (
        "0–40 chars"
    )


def test_the_docs_page_holds_the_marker_the_build_hook_replaces():
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location("mkdocs_hooks", REPO / "scripts" / "mkdocs_hooks.py")
    hooks = module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(hooks)  # type: ignore[union-attr]
    assert hooks.MARKER in (REPO / "docs" / "agents.md").read_text()
    assert "scripts/mkdocs_hooks.py" in (REPO / "mkdocs.yml").read_text()
