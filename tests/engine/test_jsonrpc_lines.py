"""The judge of each line off the MCP wire (pure): which lines pass on to the SDK, which get
which JSON-RPC error answer, and which are only logged. The rules are listed for clients in
docs/agents.md; tests/engine/test_server.py sends the same lines to a real server."""

from __future__ import annotations

import json

import pytest

from engine.agents.jsonrpc_lines import judge, leading_id
from engine.agents.stdio_pipes import MAX_LINE_BYTES


def answer(line: str) -> dict[str, object]:
    verdict = judge(line)
    assert verdict.answer is not None, verdict
    assert verdict.answer.endswith("\n") and verdict.answer.count("\n") == 1
    return json.loads(verdict.answer)


def id_and_code(line: str) -> tuple[object, object]:
    error = answer(line)
    return error["id"], error["error"]["code"]  # type: ignore[index]


@pytest.mark.parametrize(
    "line",
    [
        '{"jsonrpc": "2.0", "id": 1, "method": "ping"}',
        '{"jsonrpc": "2.0", "id": "x-1", "method": "ping", "params": {}}',
        '{"jsonrpc": "2.0", "id": -7, "method": "ping", "params": null}',
        '{"jsonrpc": "2.0", "id": 123456789012345678901234567890, "method": "ping"}',
        '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        '{"jsonrpc": "2.0", "id": 4, "result": {}}',
        '{"jsonrpc": "2.0", "id": null, "error": {"code": -1, "message": "no"}}',
        '{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"q": "\\ud83d\\ude00"}}',
    ],
)
def test_a_message_the_sdk_can_serve_passes_on(line):
    assert (judge(line).answer, judge(line).note) == (None, None)


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("hello", -32700),
        ('{"jsonrpc": "2.0", "id": 1, "method": "ping"', -32700),
        ('{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"n": NaN}}', -32700),
        ("[" * 100_000, -32700),
        ("[1, 2]", -32600),
        ("[]", -32600),
        ("5", -32600),
        ('{"jsonrpc": "2.0", "method": 1, "params": "bar"}', -32600),
    ],
)
def test_a_line_that_is_no_message_is_answered_with_a_null_id(line, code):
    assert id_and_code(line) == (None, code)


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ('{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": "x"}', -32600),
        ('{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": 5}', -32600),
        ('{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": true}', -32600),
        ('{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": []}', -32602),
        ('{"jsonrpc": "1.0", "id": 1, "method": "ping"}', -32600),
        ('{"id": 1, "method": "ping"}', -32600),
        ('{"jsonrpc": "2.0", "id": 1, "method": ["ping"]}', -32600),
        ('{"jsonrpc": "2.0", "id": 1}', -32600),
        ('{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"q": "a\\ud800"}}', -32602),
        ('{"jsonrpc": "2.0", "id": 1, "method": "ping\\udfff"}', -32600),
    ],
)
def test_a_request_with_a_valid_id_is_answered_with_its_id(line, code):
    assert id_and_code(line) == (1, code)


@pytest.mark.parametrize("raw_id", ["true", "false", "null", "1.5", "1.0", "1e2", "{}", "[1]"])
def test_an_id_mcp_does_not_allow_is_invalid_with_a_null_id(raw_id):
    """The SDK would read such a request as a notification and never answer it."""
    line = f'{{"jsonrpc": "2.0", "id": {raw_id}, "method": "ping"}}'
    assert id_and_code(line) == (None, -32600)
    assert "the id must be a string or an integer" in answer(line)["error"]["message"]  # type: ignore[index]


def test_a_string_id_holding_a_lone_surrogate_is_invalid_with_a_null_id():
    assert id_and_code('{"jsonrpc": "2.0", "id": "a\\ud800", "method": "ping"}') == (None, -32600)


def test_a_lone_surrogate_is_named_by_where_it_is_never_by_value():
    line = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "memory_remember", "arguments": {"title": "T", "body": "x\udc00"}},
        }
    )
    message = answer(line)["error"]["message"]  # type: ignore[index]
    assert message.startswith("Invalid params: params.arguments.body holds a lone surrogate")


def test_bytes_that_are_not_utf8_are_named_as_such():
    """The reader decodes with surrogateescape: a byte 0xff arrives as U+DCFF."""
    line = '{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"q": "\udcff"}}'
    error = answer(line)
    assert error["id"] == 3
    assert "params.q holds bytes that are not UTF-8" in error["error"]["message"]  # type: ignore[index]


def test_a_notification_is_never_answered_its_unreadable_params_are_logged():
    verdict = judge('{"jsonrpc": "2.0", "method": "notifications/x", "params": {"a": "\\ud800"}}')
    assert verdict.answer is None
    assert verdict.note is not None and "params.a" in verdict.note


@pytest.mark.parametrize(
    "line",
    [
        '{"jsonrpc": "2.0", "id": true, "result": {}}',
        '{"jsonrpc": "2.0", "id": 4, "result": 5}',
        '{"id": 4, "result": {}}',
        '{"jsonrpc": "2.0", "id": 4, "result": {"a": "\\ud800"}}',
    ],
)
def test_a_clients_unreadable_answer_is_logged_not_answered(line):
    """An error sent back with its id could pass for the answer to the client's own request
    of that id."""
    verdict = judge(line)
    assert verdict.answer is None and verdict.note is not None


def test_a_key_named_in_an_error_is_ascii_and_short():
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"k" * 500: "\ud800"}})
    message = answer(line)["error"]["message"]  # type: ignore[index]
    assert len(message) < 200 and message.isascii()


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"x', 7),
        (b'{"id":"long-1","jsonrpc":"2.0","params":{"x', "long-1"),
        (b'  {"jsonrpc":"2.0","method":"ping","id":-3,"params":{"x', -3),
        (b'{"jsonrpc": "2.0", "method": "tools/call", "params": {"x": 1}, "id": 7', None),
        (b'{"jsonrpc": "2.0", "id": true, "method": "ping", "params": {"x', None),
        (b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping", "params": {"x', None),
        (b'{"jsonrpc": "2.0", "id": "a\\ud800", "method": "ping", "params": {"x', None),
        (b'{"jsonrpc": "2.0", "id": 12', None),
        (b'["x', None),
    ],
)
def test_an_overlong_lines_id_is_read_from_its_head_when_it_comes_first(head, expected):
    assert leading_id(head) == expected


def test_the_largest_call_a_tool_takes_fits_under_the_line_limit():
    """A remember at every limit its schema sets, each character an astral one written as a
    \\u surrogate pair (12 bytes), as an ASCII-only encoder writes it."""
    emoji = "\U0001f600"
    arguments = {
        "title": emoji * 300,
        "body": emoji * 200_000,
        "kind": "k" * 40,
        "tags": [emoji * 50] * 20,
        "event_at": "2026-01-01T00:00:00+00:00",
    }
    line = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 2**63,
            "method": "tools/call",
            "params": {"name": "memory_remember", "arguments": arguments},
        }
    )
    assert len(line.encode()) < MAX_LINE_BYTES
