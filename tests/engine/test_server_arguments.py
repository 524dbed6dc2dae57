"""Malformed tool arguments, as an agent sends them, answered in one line.

The server's tools run in process here (no stdio, no model): what matters is the message the
agent reads back, which must say in one line which argument to change, like every other error
memsift gives, not a validator's multi-line report with a link to its documentation.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import apsw
import pytest
from mcp.server.mcpserver.exceptions import ToolError

from engine.agents.mcp_server import build_server
from engine.agents.service import MemoryService
from engine.indexing.indexer import index_store


@pytest.fixture
def server(make_store):  # type: ignore[no-untyped-def]
    store = make_store(
        {
            ".memsift/config.toml": '[embedder]\nmodel = "none"\n',
            "facts/port.md": "---\ntitle: Port\n---\nStaging listens on 6432.\n",
        }
    )
    index_store(store)
    return build_server(MemoryService(store))


def refusal(server, tool: str, arguments: dict[str, object]) -> str:  # type: ignore[no-untyped-def]
    async def call() -> None:
        await server.call_tool(tool, arguments)

    with pytest.raises(ToolError) as refused:
        anyio.run(call)
    return str(refused.value)


@pytest.mark.parametrize(
    ("tool", "arguments", "names"),
    [
        ("memory_search", {"query": "x", "limit": 0}, "limit"),
        ("memory_search", {"query": "x", "limit": "many"}, "limit"),
        ("memory_search", {"query": ["a", "b"]}, "query"),
        ("memory_search", {"query": "x", "kinds": "episodic"}, "kinds"),
        ("memory_search", {"query": "x", "tags": ["t"] * 10_000}, "tags"),
        ("memory_search", {"query": "x" * 2001}, "query"),
        ("memory_read", {"path": 42}, "path"),
        ("memory_read", {"path": "facts/port.md", "offset": -1}, "offset"),
        ("memory_remember", {"title": "T"}, "body"),
        ("memory_remember", {"title": "T", "body": "B", "tags": [""]}, "tags.0"),
        ("memory_remember", {"title": "T", "body": "B", "kind": "Bad Kind!"}, "kind"),
        ("memory_reinforce", {"path": "facts/port.md", "outcome": 0}, "outcome"),
    ],
)
def test_a_malformed_argument_is_one_line_naming_it(server, tool, arguments, names):
    message = refusal(server, tool, arguments)
    assert "\n" not in message, message
    assert f"{names}:" in message
    assert "https://" not in message and "Arguments" not in message


def test_a_malformed_argument_is_not_echoed_back_whole(server):
    message = refusal(server, "memory_search", {"query": "secret " * 1000})
    assert "secret secret" not in message
    assert len(message) < 300


@pytest.mark.parametrize(
    ("tool", "arguments", "names"),
    [
        ("memory_search", {"query": "x", "limit": True}, "limit"),
        ("memory_search", {"query": "x", "limit": "3"}, "limit"),
        ("memory_search", {"query": "x", "include_archived": "yes"}, "include_archived"),
        ("memory_search", {"query": "x", "include_archived": 1}, "include_archived"),
        ("memory_read", {"path": "facts/port.md", "offset": "5"}, "offset"),
        ("memory_reinforce", {"path": "facts/port.md", "outcome": True}, "outcome"),
    ],
)
def test_a_value_of_another_json_type_is_refused_not_coerced(server, tool, arguments, names):
    """true is not the number 1 and "yes" is not true: coercing them would reinforce a memory
    or widen a search on a value the agent did not mean."""
    message = refusal(server, tool, arguments)
    assert "\n" not in message, message
    assert f"{names}:" in message


@pytest.mark.parametrize(
    ("tool", "arguments", "unknown"),
    [
        ("memory_search", {"query": "x", "pathPrefix": "facts/"}, "pathPrefix"),
        ("memory_search", {"query": "x", "include_archive": True}, "include_archive"),
        ("memory_forget", {"path": "facts/port.md", "undo": True}, "undo"),
    ],
)
def test_an_argument_the_tool_does_not_take_is_refused_naming_it(server, tool, arguments, unknown):
    """A misspelt scope argument silently ignored would answer a different question."""
    message = refusal(server, tool, arguments)
    assert "\n" not in message, message
    assert repr(unknown) in message


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"since": "last week"}, "since 'last week' is not an ISO 8601 date"),
        ({"until": "soon"}, "until 'soon' is not an ISO 8601 date"),
        ({"since": "9999-12-31T23:00:00-05:00"}, "since '9999-12-31T23:00:00-05:00' is out of"),
    ],
)
def test_a_bad_date_is_named_as_the_tools_argument_not_as_a_command_line_option(
    server, arguments, said
):
    """The agent can change ``since``; it has no ``--since`` to change."""
    message = refusal(server, "memory_search", {"query": "staging", **arguments})
    assert said in message
    assert "--" not in message


def test_since_after_until_is_a_tool_error_naming_both_values(server):
    arguments = {"query": "staging", "since": "2026-05-01", "until": "2026-04-01"}
    message = refusal(server, "memory_search", arguments)
    assert "since 2026-05-01 is after until 2026-04-01" in message


def test_a_whole_number_written_as_a_float_is_still_a_number(server):
    async def call() -> object:
        return await server.call_tool("memory_search", {"query": "staging", "limit": 2.0})

    assert anyio.run(call) is not None


def test_every_tools_schema_says_it_takes_no_other_arguments():
    from engine.agents.mcp_server import tool_definitions

    for tool in tool_definitions():
        assert tool["inputSchema"]["additionalProperties"] is False, tool["name"]


def test_a_damaged_state_database_is_a_tool_error_naming_it(server):  # type: ignore[no-untyped-def]
    async def store_root():  # type: ignore[no-untyped-def]
        status = await server.call_tool("memory_status", {})
        return status.structured_content["store"]

    root = anyio.run(store_root)
    (Path(root) / ".memsift" / "state.db").write_bytes(b"not a database, only garbage" * 200)
    message = refusal(server, "memory_read", {"path": "facts/port.md"})
    assert "\n" not in message
    assert "state.db" in message and "damaged" in message


def test_an_argument_to_a_tool_that_takes_none_is_refused_saying_so(server):
    message = refusal(server, "memory_status", {"verbose": True})
    assert message == "memory_status: bad arguments: unknown argument 'verbose'; it takes none"


def test_a_sqlite_error_no_boundary_named_is_one_line_saying_what_to_do(make_store, monkeypatch):
    """The server's last net: a SQLite error the engine let through unnamed is still a tool
    error of one line, not a traceback the agent cannot act on."""
    store = make_store({".memsift/config.toml": '[embedder]\nmodel = "none"\n'})
    index_store(store)
    service = MemoryService(store)

    def unnamed(*_args: object) -> None:
        raise apsw.SQLError("statement aborts at 3: unexpected")

    monkeypatch.setattr(service, "status", unnamed)
    assert refusal(build_server(service), "memory_status", {}) == (
        "Error executing tool memory_status: SQLite: statement aborts at 3: unexpected; retry, "
        "or run `memsift status` on the store"
    )
