"""A transaction that reads and then writes takes the write lock before it reads.

SQLite cannot turn a read snapshot into a write once another connection has committed after
the snapshot was taken: the write fails at once with "database is locked" (SQLITE_BUSY_SNAPSHOT)
and the busy timeout does not help. Each test below lets another connection commit exactly
between a transaction's read and its write. A transaction begun deferred fails there; one
begun IMMEDIATE holds the write lock already, so the other writer has to wait its turn (here it
is refused at once and retried afterwards, as the busy timeout would), and nothing is lost.

The last three tests pin races between connections found by the contract suite's concurrency
tests (tests/engine/contract/): a -wal file deleted while a writer checks it, a state.db
created but not yet given its table while a search attaches it, and a new state.db switched to
write-ahead logging by several connections at once.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import apsw

import engine.sqlite.db
import engine.sqlite.indexdb
from engine import state as state_plane
from engine.files.store import Store
from engine.indexing.indexer import index_store
from engine.sqlite import state as sqlite_state
from engine.sqlite.db import connect, open_index, read_meta, write_meta


class OtherWriter:
    """Another process's connection that commits one write the moment it is asked to, or, when
    the database's write lock is held, is refused and writes later (as it would after waiting)."""

    def __init__(self, path: Path, write: Callable[[apsw.Connection], None]) -> None:
        self.path = path
        self.write = write
        self.refused = 0
        self.committed = 0

    def _commit(self, timeout_ms: int) -> bool:
        conn = connect(self.path)
        conn.setbusytimeout(timeout_ms)
        try:
            with conn:
                self.write(conn)
        except apsw.BusyError:
            return False
        finally:
            conn.close()
        self.committed += 1
        return True

    def now(self) -> None:
        if not self.committed and not self.refused and not self._commit(0):
            self.refused += 1

    def after(self) -> None:
        """The write a refused writer makes once the lock is free."""
        if self.refused and not self.committed:
            assert self._commit(1000)


def between(monkeypatch, module, name: str, writer: OtherWriter, *, before: bool) -> None:  # type: ignore[no-untyped-def]
    """Make ``writer`` commit just before (or after) each call of ``module.name``."""
    original = getattr(module, name)

    def wrapped(*args, **kwargs):  # type: ignore[no-untyped-def]
        if before:
            writer.now()
        result = original(*args, **kwargs)
        if not before:
            writer.now()
        return result

    monkeypatch.setattr(module, name, wrapped)


def test_reopening_an_index_to_write_it_survives_a_commit_between_its_read_and_write(
    make_store, monkeypatch
):
    store: Store = make_store({"a.md": "# Alpha\n\nalpha text"})
    index_store(store, embed=False)
    writer = OtherWriter(store.index_path, lambda c: write_meta(c, "other", "1"))
    between(monkeypatch, engine.sqlite.db, "write_meta", writer, before=True)

    open_index(store.index_path, create=True).close()
    writer.after()

    assert writer.refused == 1  # the lock was taken before the read: the other writer waited
    conn = connect(store.index_path)
    assert read_meta(conn, "other") == "1"
    assert read_meta(conn, "schema_version") == engine.sqlite.db.INDEX_SCHEMA_VERSION
    conn.close()


def test_an_index_run_ends_beside_another_writer_without_a_locked_error(
    make_store, monkeypatch
):
    store: Store = make_store({"a.md": "# Alpha\n\nalpha text"})
    index_store(store, embed=False)
    (store.root / "b.md").write_text("# Beta\n\nbeta text", encoding="utf-8")
    writer = OtherWriter(store.index_path, lambda c: write_meta(c, "other", "1"))
    # The run's last transaction counts the chunks (a read), then records the counts.
    between(monkeypatch, engine.sqlite.indexdb, "vector_coverage", writer, before=False)

    report = index_store(store, embed=False)
    writer.after()

    assert writer.refused == 1
    assert report.indexed == ["b.md"]
    conn = connect(store.index_path)
    assert (read_meta(conn, "complete"), read_meta(conn, "other")) == ("1", "1")
    conn.close()


def test_a_state_row_follows_its_renamed_file_while_another_process_counts_a_read(
    make_store, monkeypatch
):
    store: Store = make_store({"old.md": "# Kept\n\nthe history to keep", "b.md": "# B\n\nb"})
    index_store(store, embed=False)
    state_plane.record_access(store, "old.md")
    (store.root / "old.md").rename(store.root / "new.md")
    writer = OtherWriter(  # `memsift read b.md` in another process
        store.state_path,
        lambda c: c.execute("INSERT INTO access(path, access_count) VALUES ('b.md', 1)"),
    )
    # follow_content looks at the rows without a lock, then takes the write lock and reads
    # them again before it moves one: the other process commits at that second read.
    looks = iter([lambda: None, writer.now])
    original = sqlite_state.rows_concerned

    def rows_concerned(*args, **kwargs):  # type: ignore[no-untyped-def]
        next(looks, lambda: None)()
        return original(*args, **kwargs)

    monkeypatch.setattr(sqlite_state, "rows_concerned", rows_concerned)

    report = index_store(store, embed=False)
    writer.after()

    assert writer.refused == 1
    assert report.renamed == [("old.md", "new.md")]
    assert state_plane.lookup(store, "new.md").access_count == 1
    assert state_plane.lookup(store, "b.md").access_count == 1


def test_a_wal_file_another_connection_deletes_while_it_is_checked_is_not_read_only(
    tmp_path, monkeypatch
):  # type: ignore[no-untyped-def]
    # The last connection to close a WAL database deletes its -wal and -shm; a writer checking
    # them at that moment found the file existing, then no access to it: "read-only".
    path = tmp_path / "state.db"
    path.write_bytes(b"")
    wal = Path(f"{path}-wal")
    wal.write_bytes(b"")
    real_access = os.access

    def closed_meanwhile(target, mode, *args, **kwargs):  # type: ignore[no-untyped-def]
        if Path(target) == wal:
            wal.unlink(missing_ok=True)
        return real_access(target, mode, *args, **kwargs)

    monkeypatch.setattr(engine.sqlite.db.os, "access", closed_meanwhile)
    assert engine.sqlite.db.read_only_part(path) is None


def test_a_state_file_another_process_has_just_created_is_no_state_plane_yet(make_store):  # type: ignore[no-untyped-def]
    # open_state creates state.db, then its table: a search in between saw a state plane
    # without the table and failed with "no such table: state.access".
    from engine.search import Searcher

    store = make_store({"a.md": "# A\n\nalpha"})
    index_store(store, embed=False)
    connect(store.state_path).close()  # the file exists, its table not yet
    with Searcher(store) as searcher:
        before = searcher.search("alpha", use_vector=False)
        state_plane.record_access(store, "a.md")
        after = searcher.search("alpha", use_vector=False)
    assert "salience" in before.arms_dropped and [h.path for h in before.hits] == ["a.md"]
    assert "salience" in after.arms_fired


def test_status_of_a_state_file_another_process_has_just_created_lists_no_rows(make_store):  # type: ignore[no-untyped-def]
    # Between the file and its table, status and lookups failed with "state.db holds no index
    # yet (no such table: access); run `memsift index`" (a server's memory_status did, while
    # another server counted the store's first read).
    from engine.status import store_status

    store = make_store({"a.md": "# A\n\nalpha"})
    index_store(store, embed=False)
    connect(store.state_path).close()  # the file exists, its table not yet

    assert state_plane.state_paths(store) == []
    assert state_plane.lookup(store, "a.md").access_count == 0
    assert store_status(store)["stale_state_rows"] == []


def open_together(path: Path, threads: int) -> list[str]:
    """Open the state database at ``path`` from ``threads`` threads released at one moment;
    what each one that failed raised."""
    start = threading.Barrier(threads)
    failures: list[str] = []

    def first_read() -> None:
        start.wait()
        try:
            engine.sqlite.db.open_state(path).close()
        except Exception as exc:  # any failure is the finding
            failures.append(str(exc))

    workers = [threading.Thread(target=first_read) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return failures


def test_threads_opening_a_new_state_database_together_all_get_it(tmp_path):  # type: ignore[no-untyped-def]
    """Switching a new file to write-ahead logging needs it to itself, and SQLite refused the
    switch at once ("database is locked") when several connections made it together: about one
    round in twenty of eight threads failed. Sixty rounds would almost surely show it again."""
    stores = [tmp_path / f"store-{number}" for number in range(60)]
    for store in stores:  # a store folder exists before its state plane does
        store.mkdir()
    failures = [
        f"round {number}: {failure}"
        for number, store in enumerate(stores)
        for failure in open_together(store / ".memsift" / "state.db", 8)
    ]
    assert failures == []
