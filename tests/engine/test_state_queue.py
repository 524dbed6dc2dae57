"""State writes wait out a busy state.db instead of failing (engine.sqlite.state_queue).

Another connection holds state.db's write lock here, as another process's long transaction
would, for longer than the busy timeout (shortened to 0.1 s, so the tests take moments): a
read or an outcome counted meanwhile waits and lands once the lock is free; only a lock held
past the whole deadline fails the write, naming state.db as locked. The lock is released on
an event (the write has been refused once and is about to try again), never after a sleep.

The soak of two servers and a CLI on one store is ``benchmarks/soak.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import apsw
import pytest

import engine.sqlite.db
from engine import state
from engine.errors import DatabaseError, Problem
from engine.files.store import Store
from engine.sqlite import state_queue

MEMORY = "---\ntitle: Staging database\n---\nThe staging database listens on port 5433.\n"
#: How long a test waits for a thread or an event before it fails (generous: a busy machine).
PATIENCE_S = 60


@pytest.fixture
def store(make_store, monkeypatch) -> Store:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(engine.sqlite.db, "BUSY_TIMEOUT_MS", 100)
    made = make_store({"db.md": MEMORY})
    state.record_access(made, "db.md")  # state.db and its table exist before the lock is taken
    return made


@pytest.fixture
def refused(monkeypatch) -> threading.Event:  # type: ignore[no-untyped-def]
    """Set when a state write has waited out the busy timeout and is about to try again."""
    event = threading.Event()
    pause = state_queue.wait_to_retry

    def noted() -> None:
        event.set()
        pause()

    monkeypatch.setattr(state_queue, "wait_to_retry", noted)
    return event


@pytest.fixture
def lock(store: Store) -> Iterator[apsw.Connection]:
    """A connection holding state.db's write lock (as another process's long transaction)
    until the test rolls it back."""
    conn = apsw.Connection(str(store.state_path))
    conn.execute("BEGIN IMMEDIATE")
    yield conn
    if conn.in_transaction:
        conn.execute("ROLLBACK")
    conn.close()


class Worker(threading.Thread):
    """Runs ``work`` once, keeping what it returned or raised for the test to check."""

    def __init__(self, work: Callable[[], object]) -> None:
        super().__init__(daemon=True)
        self.work = work
        self.result: object = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.work()
        except BaseException as exc:
            self.error = exc


def wait_for(check: Callable[[], bool], timeout: float = PATIENCE_S) -> bool:
    """Whether ``check`` came true before the deadline (polled on an event, not a sleep)."""
    pause = threading.Event()
    for _ in range(int(timeout / 0.01)):
        if check():
            return True
        pause.wait(0.01)
    return check()


def release_once_refused(lock: apsw.Connection, refused: threading.Event, *workers: Worker):
    """Roll back the lock once a write was refused after the busy timeout, or once every
    worker has ended (a write that failed instead of waiting: the test then sees its error)."""
    assert wait_for(lambda: refused.is_set() or not any(w.is_alive() for w in workers))
    lock.execute("ROLLBACK")
    for worker in workers:
        worker.join(PATIENCE_S)
        assert not worker.is_alive()


def test_a_read_waits_out_a_write_lock_held_longer_than_the_busy_timeout(store, lock, refused):
    reader = Worker(lambda: state.record_access(store, "db.md"))
    reader.start()
    release_once_refused(lock, refused, reader)

    assert reader.error is None, reader.error
    assert reader.result.access_count == 2
    assert state.lookup(store, "db.md").access_count == 2


def test_an_outcome_waits_out_a_write_lock_held_longer_than_the_busy_timeout(
    store, lock, refused
):
    outcome = Worker(lambda: state.reinforce(store, "db.md", 1))
    outcome.start()
    release_once_refused(lock, refused, outcome)

    assert outcome.error is None, outcome.error
    assert state.lookup(store, "db.md").outcome_score == pytest.approx(0.3)


def test_thirty_threads_writing_while_another_process_holds_the_lock_all_land(
    store, lock, refused
):
    reads = [Worker(lambda: state.record_access(store, "db.md")) for _ in range(15)]
    outcomes = [Worker(lambda: state.reinforce(store, "db.md", 1)) for _ in range(15)]
    for worker in reads + outcomes:
        worker.start()
    release_once_refused(lock, refused, *reads, *outcomes)

    assert [w.error for w in reads + outcomes if w.error is not None] == []
    assert sorted(w.result.access_count for w in reads) == list(range(2, 17))
    access = state.lookup(store, "db.md")
    assert access.access_count == 16
    assert access.outcome_score == pytest.approx(1 - 0.7**15)


def test_a_lock_held_past_the_deadline_fails_the_write_naming_state_db_as_locked(
    store, lock, monkeypatch
):
    monkeypatch.setattr(state_queue, "WRITE_DEADLINE_S", 0.3)

    with pytest.raises(DatabaseError) as failed:
        state.record_access(store, "db.md")

    assert failed.value.problem is Problem.BUSY
    message = str(failed.value)
    assert "state.db" in message and "locked" in message and "\n" not in message
    lock.execute("ROLLBACK")
    assert state.record_access(store, "db.md").access_count == 2


def test_a_write_that_fails_in_a_group_fails_alone(store, lock, refused):
    queue = state_queue.queue_for(store.state_path)

    def count(conn: apsw.Connection) -> int:
        conn.execute("UPDATE access SET access_count = access_count + 1")
        return 1

    def broken(conn: apsw.Connection) -> int:
        conn.execute("UPDATE access SET access_count = access_count + 1")
        raise ValueError("this write fails")

    first = Worker(lambda: queue.submit(count))
    first.start()  # leads a group of its own, which waits for the lock
    assert wait_for(refused.is_set)
    group = [Worker(lambda: queue.submit(broken)), Worker(lambda: queue.submit(count))]
    for worker in group:
        worker.start()
    assert wait_for(lambda: queue.waiting() == 2)
    release_once_refused(lock, refused, first, *group)

    assert isinstance(group[0].error, ValueError)
    assert (first.error, group[1].error) == (None, None)
    assert state.lookup(store, "db.md").access_count == 1 + 2
