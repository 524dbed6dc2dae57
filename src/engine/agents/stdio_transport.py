"""The MCP server's stdio transport: lines judged on the way in, answers out, and every
request answered before the server ends.

The SDK's own transport hands the SDK any line it can parse and drops the rest silently, and
at the end of the input the SDK cancels the requests still running: a remember that had
already written its file then went unanswered, and a client retrying it wrote the memory
twice. Here each line is first judged
(:func:`engine.agents.jsonrpc_lines.judge`: a line that is no request the SDK can serve gets its
JSON-RPC error answer), and the end of the input reaches the SDK only once every request
passed on has been answered, or after :data:`DRAIN_SECONDS`, when the SDK cancels what still
runs (the tools log what a cancelled call had done; see ``engine.agents.mcp_server``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.jsonrpc_dispatcher import cancelled_request_id_from_params
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from engine.agents.jsonrpc_lines import INVALID_REQUEST, error_line, judge, leading_id
from engine.agents.stdio_pipes import LineReader, LineWriter, OverlongLine

DRAIN_SECONDS = 60.0
"""How long requests still running at the end of the input are waited for, then cancelled."""

Log = Callable[[str], None]


class InFlight:
    """The ids of requests handed to the SDK and not answered yet (counted: a client may
    reuse an id while its first request still runs)."""

    def __init__(self) -> None:
        self._ids: Counter[object] = Counter()
        self._changed = anyio.Event()

    def add(self, request_id: types.RequestId) -> None:
        self._ids[coerce_request_id(request_id)] += 1

    def settle(self, request_id: types.RequestId) -> None:
        """The request was answered, or cancelled by the client (then it gets no answer)."""
        key = coerce_request_id(request_id)
        if self._ids[key] > 1:
            self._ids[key] -= 1
        else:
            self._ids.pop(key, None)
        self._changed.set()
        self._changed = anyio.Event()

    def ids(self) -> list[object]:
        return sorted(self._ids, key=str)

    async def drained(self, seconds: float) -> bool:
        """Wait until none is left, at most ``seconds``; whether none is left."""
        with anyio.move_on_after(seconds):
            while self._ids:
                await self._changed.wait()
        return not self._ids


@asynccontextmanager
async def stdio_streams(
    reader: LineReader, writer: LineWriter, log: Log, *, drain_seconds: float = DRAIN_SECONDS
) -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[Any]]
]:
    """The (read, write) streams the SDK's server runs on, over ``reader`` and ``writer``."""
    read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_receive = anyio.create_memory_object_stream[SessionMessage](0)
    in_flight = InFlight()
    dropped: list[object] = []
    reading = anyio.CancelScope()  # cancelled should the server stop before the input ends

    async def take_lines() -> None:
        with reading:
            async with read_send:
                await pass_lines()

    async def pass_lines() -> None:
        async for line in reader:
            message = await admitted(line, writer, log)
            if message is None:
                continue
            if isinstance(message, types.JSONRPCRequest):
                in_flight.add(message.id)
            elif isinstance(message, types.JSONRPCNotification) and (
                message.method == "notifications/cancelled"
            ):
                cancelled = cancelled_request_id_from_params(message.params)
                if cancelled is not None:
                    in_flight.settle(cancelled)
            await read_send.send(SessionMessage(message))
        if not await in_flight.drained(drain_seconds):
            log(
                f"end of input, but requests {', '.join(map(repr, in_flight.ids()))} were "
                f"still running after {drain_seconds:g} s: cancelling them"
            )

    async def give_answers() -> None:
        async with write_receive:
            async for session_message in write_receive:
                message = session_message.message
                text = message.model_dump_json(by_alias=True, exclude_unset=True)
                await writer.write(text + "\n")
                answered = getattr(message, "id", None)
                is_answer = isinstance(message, (types.JSONRPCResponse, types.JSONRPCError))
                if is_answer and answered is not None:
                    if writer.gone:
                        dropped.append(answered)
                    in_flight.settle(answered)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(take_lines)
        tasks.start_soon(give_answers)
        yield read_receive, write_send
        reading.cancel()
        write_send.close()  # the SDK closes it too; this ends the answers should it not
    read_receive.close()  # likewise
    if dropped:
        log(
            f"the client closed its end of the connection: the answers to requests "
            f"{', '.join(map(repr, dropped))} were not delivered"
        )


async def admitted(
    line: str | OverlongLine, writer: LineWriter, log: Log
) -> types.JSONRPCMessage | None:
    """The message on ``line`` for the SDK, or None once the line has had its error answer
    (or, where none may be sent, a line in the log)."""
    if isinstance(line, OverlongLine):
        await writer.write(
            error_line(
                leading_id(line.head),
                INVALID_REQUEST,
                f"Invalid Request: the line is longer than {line.limit} bytes, the most the "
                "server reads; it was dropped",
            )
        )
        return None
    if not line.strip():
        return None
    verdict = judge(line)
    if verdict.answer is not None:
        await writer.write(verdict.answer)
        return None
    if verdict.note is not None:
        log(verdict.note)
        return None
    try:
        return types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        problem = sdk_problem(exc)
        if verdict.request_id is None:
            log(f"dropped a message the MCP SDK cannot read: {problem}")
        else:
            await writer.write(
                error_line(verdict.request_id, INVALID_REQUEST, f"Invalid Request: {problem}")
            )
        return None


def sdk_problem(error: ValidationError) -> str:
    """The SDK validator's first complaint in one line, without the rejected input."""
    problems = error.errors(include_url=False, include_input=False)
    if not problems:
        return "the MCP SDK cannot read this message"
    first = problems[0]
    where = ".".join(str(part) for part in first["loc"] if not isinstance(part, float))
    text = f"{where}: {first['msg']}" if where else str(first["msg"])
    return f"the MCP SDK cannot read this message ({text[:200]})"
