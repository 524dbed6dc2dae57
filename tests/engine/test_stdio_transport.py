"""The transport between the wire and the SDK's server, run in process over real pipes with a
stand-in server: what happens at the end of the input to requests still unanswered.
tests/engine/test_server.py checks the same with the real server."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from engine.agents.stdio_pipes import MAX_LINE_BYTES, LineReader, LineWriter
from engine.agents.stdio_transport import DRAIN_SECONDS, stdio_streams


def run_transport(lines: list[str], server, drain_seconds: float) -> tuple[str, list[str]]:  # type: ignore[no-untyped-def]
    """Feed ``lines`` then the end of input through the transport to ``server(read, write)``;
    return what was written back and what was logged."""
    read_end, line_in = os.pipe()
    answers_out, write_end = os.pipe()
    for fd in (read_end, write_end):
        os.set_blocking(fd, False)
    os.write(line_in, "".join(line + "\n" for line in lines).encode())
    os.close(line_in)
    logged: list[str] = []

    async def main() -> None:
        reader, writer = LineReader(read_end), LineWriter(write_end)
        async with stdio_streams(reader, writer, logged.append, drain_seconds=drain_seconds) as (
            read,
            write,
        ):
            await server(read, write)

    try:
        anyio.run(main)
        os.close(write_end)
        written = b""
        while chunk := os.read(answers_out, 65536):
            written += chunk
    finally:
        os.close(read_end)
        os.close(answers_out)
    return written.decode(), logged


PING = '{"jsonrpc": "2.0", "id": 1, "method": "ping"}'


def test_a_request_answered_after_the_end_of_input_is_delivered():
    async def server(read, write) -> None:  # type: ignore[no-untyped-def]
        request = await read.receive()
        # The input has ended by now or soon: the read stream must stay open until answered.
        await write.send(
            SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=request.message.id, result={}))
        )
        async for _ in read:  # ends once the transport lets the end of input through
            pass
        await write.aclose()

    written, logged = run_transport([PING], server, drain_seconds=120)
    assert json.loads(written) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert logged == []


def test_a_request_still_running_at_the_drain_deadline_is_logged_then_let_go():
    async def server(read, write) -> None:  # type: ignore[no-untyped-def]
        async for _ in read:  # never answers; the stream ends at the deadline
            pass
        await write.aclose()

    written, logged = run_transport([PING], server, drain_seconds=0.2)
    assert written == ""
    assert logged == [
        "end of input, but requests 1 were still running after 0.2 s: cancelling them"
    ]


def test_a_request_the_client_cancelled_is_not_waited_for():
    cancel = json.dumps(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    )

    async def server(read, write) -> None:  # type: ignore[no-untyped-def]
        async for _ in read:
            pass
        await write.aclose()

    written, logged = run_transport([PING, cancel], server, drain_seconds=120)
    assert (written, logged) == ("", [])


def test_the_docs_state_the_line_limit_and_the_drain_deadline():
    page = (Path(__file__).resolve().parents[2] / "docs" / "agents.md").read_text()
    assert f"{MAX_LINE_BYTES:,} bytes" in page
    assert f"up to {DRAIN_SECONDS:g} seconds" in page
