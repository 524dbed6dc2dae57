"""The MCP server's stdin and stdout as lines in and answers out, moved on the event loop.

The SDK's stdio transport reads each request line and writes (then flushes) each answer on a
worker thread: three hand-offs between threads per call. On this project's 2-core machine a
trivial tool call took 5.7 ms that way and 4.3 ms with the pipes watched by the event loop
(``anyio.wait_readable``/``wait_writable`` on non-blocking descriptors), and the server spent
a third less CPU per call. A descriptor the event loop cannot watch (a regular file, as in
``memsift serve < requests.jsonl``, or a terminal, whose descriptor is shared with the shell,
which a non-blocking flag left behind by a killed server would break) is read and written
with blocking calls on a worker thread instead: the same lines, only slower.

Like the SDK's transport, it claims the process's standard streams for the wire: while it
serves, descriptor 0 reads the null device and descriptor 1 writes to stderr, so a stray
``print`` (or a child process) cannot corrupt the protocol; both are restored on exit.

A line is at most :data:`MAX_LINE_BYTES` long. This reader once grew a long line by copying
it and searched it from its start on every read, so a 100 MB line took 73 s and held up every
other request; now a line costs time in proportion to its length, and one over the limit is
read on and dropped as it comes (only its first :data:`HEAD_BYTES` are kept, to find its id),
so it takes no more memory than the limit.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

import anyio
import anyio.to_thread

READ_BYTES = 1 << 16
MAX_LINE_BYTES = 4 * 1024 * 1024
"""The longest line (without its newline) the server reads, in bytes. The largest request a
tool takes, a remember of 200,000 characters each written as a ``\\u`` surrogate pair, is
about 2.4 MB of JSON, so any valid call fits."""
HEAD_BYTES = 4096


def usable() -> bool:
    """Whether this transport can serve here: a POSIX system (on Windows the SDK's own)."""
    return sys.platform != "win32"


def pollable(fd: int) -> bool:
    """Whether the event loop can watch ``fd``: a pipe or a socket."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@dataclass(frozen=True)
class OverlongLine:
    """A line longer than the limit, in place of its text: its first bytes (where a client
    writes the id) and the limit it broke. The rest is dropped as it arrives."""

    head: bytes
    limit: int


class LineReader:
    """Lines of a descriptor as text, each with its newline; the last, unterminated line too.
    Lines are cut on bytes, so a character split across two reads is decoded whole; bytes
    that are not UTF-8 become lone surrogates (``surrogateescape``), for the judge of the
    line to refuse rather than to pass on altered. A line longer than ``limit`` comes as an
    :class:`OverlongLine` as soon as it passes the limit; reading then resumes after its
    newline."""

    def __init__(self, fd: int, *, limit: int = MAX_LINE_BYTES) -> None:
        self._fd = fd
        self._limit = limit
        self._pollable = pollable(fd)
        self._buffer = bytearray()
        self._scanned = 0  # no newline in the buffer before this offset
        self._discarding = False  # inside an overlong line, until its newline
        self._ended = False

    def __aiter__(self) -> AsyncIterator[str | OverlongLine]:
        return self

    async def __anext__(self) -> str | OverlongLine:
        while True:
            line = self._next_line()
            if line is not None:
                return line
            if self._ended:
                raise StopAsyncIteration
            data = await self._read()
            if data:
                self._buffer += data
            else:
                self._ended = True

    def _next_line(self) -> str | OverlongLine | None:
        """The next whole line in the buffer (or the last one at the end of input), an
        overlong line's head, or None when more input is needed. Each byte is searched for a
        newline once, so a long line costs time in proportion to its length."""
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end < 0:
                break
            line = bytes(self._buffer[: end + 1])
            del self._buffer[: end + 1]  # cheap: a bytearray drops its head in place
            self._scanned = 0
            if self._discarding:
                self._discarding = False
                continue
            if end > self._limit:
                return OverlongLine(line[:HEAD_BYTES], self._limit)
            return line.decode("utf-8", "surrogateescape")
        self._scanned = len(self._buffer)
        if self._discarding:
            self._buffer.clear()
            self._scanned = 0
        elif len(self._buffer) > self._limit:
            head = bytes(self._buffer[:HEAD_BYTES])
            self._buffer.clear()
            self._scanned = 0
            self._discarding = True
            return OverlongLine(head, self._limit)
        elif self._ended and self._buffer:
            line = bytes(self._buffer)
            self._buffer.clear()
            self._scanned = 0
            return line.decode("utf-8", "surrogateescape")
        return None

    async def _read(self) -> bytes:
        if not self._pollable:  # abandoned on cancel: a terminal may never answer
            return await anyio.to_thread.run_sync(
                os.read, self._fd, READ_BYTES, abandon_on_cancel=True
            )
        while True:
            await anyio.wait_readable(self._fd)
            try:
                return os.read(self._fd, READ_BYTES)
            except BlockingIOError:
                continue


class LineWriter:
    """Text written whole to a descriptor, waiting while the pipe is full; two writers (the
    SDK's answers, the transport's own error answers) never interleave.

    A client that went away (it crashed, or closed its end) leaves answers nowhere to go: they
    are dropped, and the server ends as usual when the input reaches its end, instead of
    failing with the broken pipe as if something unexpected had happened."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._pollable = pollable(fd)
        self._lock = anyio.Lock()
        self.gone = False

    async def write(self, text: str) -> None:
        data = memoryview(text.encode("utf-8"))
        async with self._lock:
            while data and not self.gone:
                try:
                    if self._pollable:
                        written = os.write(self._fd, data)
                    else:
                        written = await anyio.to_thread.run_sync(os.write, self._fd, data)
                except BlockingIOError:
                    await anyio.wait_writable(self._fd)
                    continue
                except (BrokenPipeError, ConnectionResetError):
                    self.gone = True
                    return
                data = data[written:]

    async def flush(self) -> None:
        """Nothing is buffered: every write went to the descriptor."""


@contextmanager
def claimed() -> Iterator[tuple[int, int]]:
    """Private copies of stdin and stdout for the wire (non-blocking where the event loop
    watches them), with descriptors 0 and 1 pointed at the null device and stderr meanwhile;
    everything is put back on exit."""
    wire_in = os.dup(0)
    wire_out = os.dup(1)
    saved = [os.dup(0), os.dup(1)]
    watched = [fd for fd in (wire_in, wire_out) if pollable(fd)]
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
        finally:
            os.close(null)
        os.dup2(2, 1)
        for fd in watched:
            os.set_blocking(fd, False)
        yield wire_in, wire_out
    finally:
        for fd in watched:
            with suppress(OSError):
                os.set_blocking(fd, True)
        os.dup2(saved[0], 0)
        os.dup2(saved[1], 1)
        for fd in (*saved, wire_in, wire_out):
            os.close(fd)
