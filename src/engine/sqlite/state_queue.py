"""Every write a process makes to one ``state.db`` goes through one queue, committed in groups.

A server runs its tool calls on a pool of threads, so an agent pipelining reads and
reinforcements had dozens of connections of one process, and as many of another server's,
polling SQLite for the one write lock. SQLite's busy wait is no queue: a waiter sleeps up to
100 ms between tries and a newcomer may take the lock first, so under load some calls waited
out the whole busy timeout (10 s) and failed with "state.db is locked" while the database was
never held for more than a few milliseconds at a time (a soak of two servers measured waits of
up to 6 s for a lock held 2 ms per write).

So the threads of a process queue here instead. The first to arrive leads: it opens state.db,
takes the write lock and applies every write queued by then, each in a savepoint of its own
(one failing write fails alone), in one transaction and one sync; the next waiting thread then
leads the writes that came meanwhile. Only one connection per process ever asks SQLite for the
lock, and a busy moment makes the groups larger instead of the waits longer.

A lock another process holds past the busy timeout (a long transaction, a stalled process)
does not drop the writes either: the leader tries again, up to :data:`WRITE_DEADLINE_S` in all,
and only then fails them with state.db named as locked.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

import apsw

from engine.errors import Database, DatabaseError, Problem
from engine.sqlite.db import immediate, open_state
from engine.state_rules import RETRY_PAUSE_S, WRITE_DEADLINE_S

T = TypeVar("T")


#: One write: runs inside the group's transaction, on its connection.
Write = Callable[[apsw.Connection], T]


class Pending(Generic[T]):
    """A write waiting in the queue, and then its result or its error."""

    def __init__(self, write: Write[T]) -> None:
        self.write = write
        self.wake = threading.Event()
        self.leads = False
        self.finished = False
        self.result: T | None = None
        self.error: BaseException | None = None

    def outcome(self) -> T:
        if self.error is not None:
            raise self.error
        return self.result  # type: ignore[return-value]


class WriteQueue:
    """The queue of one state.db in this process (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._queue: list[Pending[object]] = []
        self._leading = False

    def submit(self, write: Write[T]) -> T:
        """Apply ``write`` in a transaction of state.db and return what it returned; wait for
        the writes ahead of it, committed together with those queued beside it."""
        mine: Pending[T] = Pending(write)
        with self._lock:
            self._queue.append(mine)  # type: ignore[arg-type]
            lead = not self._leading
            self._leading = True
        if not lead:
            mine.wake.wait()
            if mine.finished:
                return mine.outcome()
        self._lead()
        return mine.outcome()

    def waiting(self) -> int:
        """How many writes wait for the next group (the lead's included until it starts)."""
        with self._lock:
            return len(self._queue)

    def _lead(self) -> None:
        """Apply everything queued now as one group, then hand the lead to the next waiter."""
        with self._lock:
            group, self._queue = self._queue, []
        try:
            apply_group(self.path, group)
        except BaseException as exc:  # an interrupt: nobody waits for an answer that never comes
            for pending in group:
                if not pending.finished:
                    pending.error = exc
            raise
        finally:
            for pending in group:
                pending.finished = True
                pending.wake.set()
            with self._lock:
                if self._queue:
                    following = self._queue[0]
                    following.leads = True
                    following.wake.set()
                else:
                    self._leading = False


def apply_group(path: Path, group: list[Pending[object]]) -> None:
    """Apply ``group`` in one transaction, each write in a savepoint of its own; while another
    process holds the write lock past the busy timeout, try again until the deadline. An
    error that is not a busy database is every write's answer (it could not commit)."""
    deadline = time.monotonic() + WRITE_DEADLINE_S
    while True:
        try:
            attempt(path, group)
            return
        except Exception as exc:
            if busy(exc) and time.monotonic() < deadline:
                wait_to_retry()
                continue
            failure = exc
            if busy(exc):
                failure = DatabaseError(
                    Database.STATE,
                    str(path),
                    Problem.BUSY,
                    f"its write lock was held elsewhere for over {WRITE_DEADLINE_S:.0f} s",
                )
            for pending in group:
                pending.result, pending.error = None, failure
            return


def attempt(path: Path, group: list[Pending[object]]) -> None:
    """One try at the group's transaction. A write's own error is its answer and rolls back
    its savepoint only; a busy database or an error of the transaction itself (a full disk at
    commit) is raised, and no write of the group counts."""
    conn = open_state(path)
    try:
        with immediate(conn):
            for pending in group:
                pending.result, pending.error = None, None
                try:
                    with conn:
                        pending.result = pending.write(conn)
                except apsw.BusyError:
                    raise
                except Exception as exc:
                    pending.error = exc
    finally:
        conn.close()


def busy(exc: BaseException) -> bool:
    return isinstance(exc, apsw.BusyError) or (
        isinstance(exc, DatabaseError) and exc.problem is Problem.BUSY
    )


def wait_to_retry() -> None:
    """The pause before another try at a lock the busy timeout could not get."""
    time.sleep(RETRY_PAUSE_S)


_queues: dict[str, WriteQueue] = {}
_queues_lock = threading.Lock()


def queue_for(path: Path) -> WriteQueue:
    """This process's queue for the state.db at ``path`` (one per file, however named)."""
    key = os.path.realpath(path)
    with _queues_lock:
        queue = _queues.get(key)
        if queue is None:
            queue = _queues[key] = WriteQueue(path)
        return queue


def write_state(path: Path, write: Write[T]) -> T:
    """Apply ``write`` to the state.db at ``path`` through this process's queue."""
    return queue_for(path).submit(write)
