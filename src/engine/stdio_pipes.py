"""The MCP server's stdin and stdout, read and written on the event loop itself.

The SDK's stdio transport reads each request line and writes (then flushes) each answer on a
worker thread: three hand-offs between threads per call. On this project's 2-core machine a
trivial tool call took 5.7 ms that way and 4.3 ms with the pipes watched by the event loop
(``anyio.wait_readable``/``wait_writable`` on non-blocking descriptors), and the server spent
a third less CPU per call. The SDK still frames, parses and dispatches every message: only the
bytes move differently.

Like the SDK's transport, it claims the process's standard streams for the wire: while it
serves, descriptor 0 reads the null device and descriptor 1 writes to stderr, so a stray
``print`` (or a child process) cannot corrupt the protocol; both are restored on exit. It is
used only when both streams are pipes or sockets: a terminal's descriptor is shared with the
shell, which a non-blocking flag left behind (a killed server) would break.

One thing is added on the way in: a line that is not a JSON-RPC message gets the error answer
JSON-RPC 2.0 prescribes (``-32700`` for text that is not JSON, ``-32600`` for JSON that is not
a request), where the SDK logs it and answers nothing, leaving the client waiting forever.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager, suppress

import anyio

READ_BYTES = 1 << 16
PARSE_ERROR, INVALID_REQUEST = -32700, -32600


def usable() -> bool:
    """Whether stdin and stdout are pipes or sockets on a POSIX system."""
    if sys.platform == "win32":
        return False
    try:
        return all(wire_kind(os.fstat(fd).st_mode) for fd in (0, 1))
    except OSError:
        return False


def wire_kind(mode: int) -> bool:
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class LineReader:
    """Lines of a non-blocking descriptor as text (UTF-8, undecodable bytes replaced), each
    with its newline; the last, unterminated line too. Lines are cut on bytes, so a character
    split across two reads is decoded whole."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = b""
        self._ended = False

    def __aiter__(self) -> AsyncIterator[str]:
        return self

    async def __anext__(self) -> str:
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line, self._buffer = self._buffer[: end + 1], self._buffer[end + 1 :]
                return line.decode("utf-8", errors="replace")
            if self._ended:
                if self._buffer:
                    line, self._buffer = self._buffer, b""
                    return line.decode("utf-8", errors="replace")
                raise StopAsyncIteration
            await anyio.wait_readable(self._fd)
            try:
                data = os.read(self._fd, READ_BYTES)
            except BlockingIOError:
                continue
            if data:
                self._buffer += data
            else:
                self._ended = True


class LineWriter:
    """Text written whole to a non-blocking descriptor, waiting while the pipe is full; two
    writers (the SDK's answers, :class:`JsonRpcLines`' error answers) never interleave.

    A client that went away (it crashed, or closed its end) leaves answers nowhere to go: they
    are dropped, and the server ends as usual when the input reaches its end, instead of
    failing with the broken pipe as if something unexpected had happened."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = anyio.Lock()
        self.gone = False

    async def write(self, text: str) -> None:
        data = memoryview(text.encode("utf-8"))
        async with self._lock:
            while data and not self.gone:
                try:
                    written = os.write(self._fd, data)
                except BlockingIOError:
                    await anyio.wait_writable(self._fd)
                    continue
                except (BrokenPipeError, ConnectionResetError):
                    self.gone = True
                    return
                data = data[written:]

    async def flush(self) -> None:
        """Nothing is buffered: every write went to the descriptor."""


def rejection(line: str) -> str | None:
    """The JSON-RPC error answer (one line) for a line that is not a JSON-RPC message, or None
    for a line to pass on to the SDK (pure). The answer carries the request's id when one can
    be read, else null, as JSON-RPC 2.0 says."""
    try:
        message = json.loads(line)
    except ValueError:
        return error_line(None, PARSE_ERROR, "Parse error: the line is not JSON")
    is_request = isinstance(message, dict) and message.get("jsonrpc") == "2.0"
    if is_request and (isinstance(message.get("method"), str) or "id" in message):
        return None  # a request, a notification, or a client's answer: the SDK's to read
    raw_id = message.get("id") if isinstance(message, dict) else None
    known = raw_id if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool) else None
    return error_line(
        known,
        INVALID_REQUEST,
        'Invalid Request: expected one JSON-RPC 2.0 object with "jsonrpc": "2.0" and a "method"',
    )


def error_line(request_id: str | int | None, code: int, message: str) -> str:
    answer = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return json.dumps(answer) + "\n"


class JsonRpcLines:
    """The lines of ``reader`` the SDK should see: blank lines are dropped, and a line that is
    not a JSON-RPC message is answered on ``writer`` (see :func:`rejection`) instead."""

    def __init__(self, reader: LineReader, writer: LineWriter) -> None:
        self._reader = reader
        self._writer = writer

    def __aiter__(self) -> AsyncIterator[str]:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._reader.__anext__()
            if not line.strip():
                continue
            answer = rejection(line)
            if answer is None:
                return line
            await self._writer.write(answer)


@contextmanager
def claimed() -> Iterator[tuple[int, int]]:
    """Private, non-blocking copies of stdin and stdout for the wire, with descriptors 0 and 1
    pointed at the null device and stderr meanwhile; everything is put back on exit."""
    wire_in = os.dup(0)
    wire_out = os.dup(1)
    saved = [os.dup(0), os.dup(1)]
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
        finally:
            os.close(null)
        os.dup2(2, 1)
        for fd in (wire_in, wire_out):
            os.set_blocking(fd, False)
        yield wire_in, wire_out
    finally:
        for fd in (wire_in, wire_out):
            with suppress(OSError):
                os.set_blocking(fd, True)
        os.dup2(saved[0], 0)
        os.dup2(saved[1], 1)
        for fd in (*saved, wire_in, wire_out):
            os.close(fd)
