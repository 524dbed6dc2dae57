"""Drive a real ``memsift serve`` subprocess with the MCP SDK's own client, from plain
(synchronous) tests: the client lives in an event loop on its own thread, and each call is a
coroutine submitted to it."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import CallToolResult

SRC = Path(__file__).resolve().parents[2] / "src"
CALL_TIMEOUT_S = 120
#: How long a test waits for something the server does in the background (catch-up, a file
#: written behind its back): generous, since a check that holds ends the wait at once.
WAIT_S = 120


def server_parameters(
    store: Path, *extra: str, env: dict[str, str] | None = None
) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-c", "from engine.cli import main; main()", "--store", str(store), "serve", *extra],
        env={"PYTHONPATH": str(SRC), "PATH": os.environ.get("PATH", ""), **(env or {})},
    )


class ServerSession:
    """One server process and one connected client; ``close()`` ends both. ``env`` adds
    variables to the server's (small) environment, e.g. a team store's database URL."""

    def __init__(self, store: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        self._params = server_parameters(store, *extra, env=env)
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        if not self._ready.wait(CALL_TIMEOUT_S):
            raise TimeoutError("the server did not finish the MCP handshake")
        if self._failure is not None:
            raise self._failure

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._main())
        self._loop.close()

    async def _main(self) -> None:
        self._closing = asyncio.Event()
        try:
            async with Client(self._params, cache=None) as client:
                self.client = client
                self._ready.set()
                await self._closing.wait()
        except BaseException as exc:  # surfaced to the constructor
            self._failure = exc
            self._ready.set()

    def run(self, coroutine_factory: Callable[[Client], Any]) -> Any:
        future = asyncio.run_coroutine_threadsafe(coroutine_factory(self.client), self._loop)
        return future.result(CALL_TIMEOUT_S)

    def call(self, tool: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
        return self.run(lambda client: client.call_tool(tool, arguments or {}))

    def ok(self, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """Call a tool that must succeed; return its structured content (checked against the
        text content, which must carry the same JSON)."""
        result = self.call(tool, arguments)
        assert not result.is_error, result.content[0].text  # type: ignore[union-attr]
        data = result.structured_content
        assert data is not None
        assert json.loads(result.content[0].text) == data  # type: ignore[union-attr]
        return data

    def error(self, tool: str, arguments: dict[str, Any]) -> str:
        """Call a tool that must fail as a tool error; return the message."""
        result = self.call(tool, arguments)
        assert result.is_error
        return result.content[0].text  # type: ignore[union-attr]

    def wait_for(self, check: Callable[[], bool], timeout: float = WAIT_S) -> bool:
        """Poll ``check`` until it holds or the deadline passes (never a timed assertion); the
        deadline is generous because a loaded machine is slow, and a check that holds returns
        at once."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if check():
                return True
            time.sleep(0.1)
        return False

    def wait_until_fresh(self, timeout: float = WAIT_S) -> dict[str, Any]:
        """Wait for the server's catch-up, full vector coverage and an idle vector filler;
        return the status.

        ``vector_coverage`` is counted live, but a search trusts the vector arm by the
        coverage the filler records (every couple of seconds, and once more when it is done):
        right after its last vectors are stored, status says 1.0 while a search still says
        ``degraded``. The filler is seen to be done (``filling_vectors`` false) only after
        that last record, so a search after this wait runs every arm."""
        status: dict[str, Any] = {}

        def fresh() -> bool:
            nonlocal status
            status = self.ok("memory_status")
            freshness = status.get("freshness") or {}
            return (
                bool(freshness.get("caught_up"))
                and status.get("vector_coverage") == 1.0
                and freshness.get("filling_vectors") is False
                and freshness.get("pending_files") == 0
            )

        assert self.wait_for(fresh, timeout), status
        return status

    def wait_until_caught_up(self, timeout: float = WAIT_S) -> dict[str, Any]:
        """Wait for the server's catch-up with the files only (a store without an embedder
        never reaches vector coverage); return the status."""
        status: dict[str, Any] = {}

        def caught_up() -> bool:
            nonlocal status
            status = self.ok("memory_status")
            return bool((status.get("freshness") or {}).get("caught_up"))

        assert self.wait_for(caught_up, timeout), status
        return status

    def close(self) -> None:
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._closing.set)
        self._thread.join(30)
