"""Speak raw JSON-RPC lines to a real ``memsift serve`` subprocess: what a client library
hides (ids of any type, malformed lines, lines of megabytes, the end of the input) is what
these tests send. Every wait is on a condition (an answer, a log line, the process's end)
with a generous deadline; nothing sleeps."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

from mcp_harness import SRC

CLI = [sys.executable, "-c", "from engine.cli import main; main()"]
DEADLINE_S = 120
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


def lexical_store(root: Path) -> Path:
    """A one-memory store (``a.md``) without an embedder, so a server on it starts at once."""
    (root / ".memsift").mkdir(parents=True)
    (root / ".memsift" / "config.toml").write_text('[embedder]\nmodel = "none"\n')
    (root / "a.md").write_text("Alpha.\n")
    return root


def request(request_id: object, method: str, params: object = None) -> str:
    """One request line; ``params`` of any JSON type (None leaves them out)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message)


def tool_call(request_id: object, tool: str, arguments: dict[str, Any]) -> str:
    return request(request_id, "tools/call", {"name": tool, "arguments": arguments})


def wait_until(check: Callable[[], bool], timeout: float = DEADLINE_S) -> bool:
    """Poll ``check`` until it holds or the deadline passes (for what only polling sees, such
    as a file appearing); whether it held."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


class RawWire:
    """One ``memsift serve --no-watch`` on ``root``, its answers and log lines collected by
    threads as they come."""

    def __init__(self, root: Path) -> None:
        self.child = subprocess.Popen(
            [*CLI, "--store", str(root), "serve", "--no-watch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(SRC)},
        )
        self._answers: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._log: list[str] = []
        self._log_changed = threading.Condition()
        self._threads = [
            threading.Thread(target=self._read_answers, daemon=True),
            threading.Thread(target=self._read_log, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _read_answers(self) -> None:
        assert self.child.stdout is not None
        for line in self.child.stdout:
            self._answers.put(json.loads(line))
        self._answers.put(None)  # the end of the output

    def _read_log(self) -> None:
        assert self.child.stderr is not None
        for line in self.child.stderr:
            with self._log_changed:
                self._log.append(line.decode("utf-8", "replace"))
                self._log_changed.notify_all()

    def send(self, line: str | bytes) -> None:
        assert self.child.stdin is not None
        data = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
        self.child.stdin.write(data + b"\n")
        self.child.stdin.flush()

    def answer(self, timeout: float = DEADLINE_S) -> dict[str, Any]:
        """The next answer; fails when none comes before the deadline or the output ends."""
        try:
            answer = self._answers.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no answer within {timeout} s; log: {self.log()}") from None
        assert answer is not None, f"the server ended its output; log: {self.log()}"
        return answer

    def answer_to(self, request_id: object) -> dict[str, Any]:
        """The answer carrying ``request_id``; failing on any other answer on the way."""
        answer = self.answer()
        assert answer.get("id") == request_id, answer
        return answer

    def initialize(self) -> dict[str, Any]:
        self.send(json.dumps(INITIALIZE))
        answer = self.answer_to(0)
        self.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        return answer

    def end_input(self) -> list[dict[str, Any]]:
        """Close the server's input; the answers it gives before its output ends, after
        checking that it then exits with code 0."""
        assert self.child.stdin is not None
        self.child.stdin.close()
        rest = []
        deadline = time.monotonic() + DEADLINE_S
        while (left := deadline - time.monotonic()) > 0:
            try:
                answer = self._answers.get(timeout=left)
            except queue.Empty:
                break
            if answer is None:
                break
            rest.append(answer)
        assert self.child.wait(DEADLINE_S) == 0, self.log()
        return rest

    def log(self) -> str:
        with self._log_changed:
            return "".join(self._log)

    def wait_for_log(self, text: str, timeout: float = DEADLINE_S) -> str:
        """The server's log once it holds ``text``; fails at the deadline."""
        with self._log_changed:
            found = self._log_changed.wait_for(lambda: text in "".join(self._log), timeout)
        assert found, f"{text!r} not logged within {timeout} s; log: {self.log()}"
        return self.log()

    def close(self) -> None:
        if self.child.poll() is None:
            self.child.kill()
        self.child.wait(DEADLINE_S)
        for thread in self._threads:  # both end with the process's output
            thread.join(DEADLINE_S)
        for stream in (self.child.stdin, self.child.stdout, self.child.stderr):
            if stream is not None and not stream.closed:
                with suppress(BrokenPipeError):
                    stream.close()
