"""A full index run on SQLite: ``index.db`` brought in step with the files of a store by the
one indexing loop (:func:`engine.indexing.index_run.full_run`) through :class:`SqliteIndexWriter`.

What is SQLite's own: the run lock (a file lock beside the index, so two runs on one machine
take turns), transactions that take the write lock before they read
(:func:`engine.sqlite.db.immediate`; a batch of files is checked against its files inside one,
so no writer's row is overwritten by a run that read the file before it changed), and the
state plane in its own file, consulted only once it exists.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import apsw

from engine.errors import Database
from engine.files.store import Candidate, Store
from engine.indexing.budget import BUDGET_KEY, RULE, RULE_KEY
from engine.indexing.embedder import Embedder
from engine.indexing.index_run import Pending, full_run, vector_rows
from engine.indexing.pipeline import (
    IndexReport,
    KnownFile,
    Parsed,
    Progress,
    Touch,
    changes_since,
    still_gone,
    write_current,
)
from engine.sqlite import indexdb
from engine.sqlite import state as state_plane
from engine.sqlite.db import (
    LOCK_NAME,
    ensure_vector_table,
    guarded,
    immediate,
    open_index,
    read_meta,
    require_writable,
    write_meta,
)
from engine.sqlite.floor import SqliteFloorPlace
from engine.sqlite.indexdb import record_coverage
from engine.state_rules import within


def prepare(store: Store) -> None:
    """Refuse a run that could not write the index before the caller loads a model for it."""
    require_writable(Database.INDEX, store.index_path)


def index_run(
    store: Store, embedder: Embedder | None, progress: Progress | None, report: IndexReport
) -> IndexReport:
    """A full run on SQLite: one at a time per store (the run lock), errors naming index.db."""
    with guarded(Database.INDEX, store.index_path):
        store.state_dir.mkdir(exist_ok=True)  # never the store folder itself
        with run_lock(store.state_dir / LOCK_NAME):
            return run_index(store, store.config().max_file_bytes, embedder, progress, report)


@contextmanager
def run_lock(path: Path) -> Iterator[None]:
    """One index run per store at a time: a second run waits for the first, then finds its work
    done, instead of embedding the same chunks twice. The OS drops the lock if a run dies."""
    with path.open("a") as handle:
        try:
            import fcntl
        except ImportError:  # no flock (Windows): runs stay correct, only not serialised
            yield
            return
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def run_index(
    store: Store,
    max_file_bytes: int,
    embedder: Embedder | None,
    progress: Progress | None,
    report: IndexReport,
) -> IndexReport:
    conn = open_index(store.index_path, create=True)
    try:
        return full_run(
            SqliteIndexWriter(conn, store), store, max_file_bytes, embedder, progress, report
        )
    finally:
        conn.close()


class SqliteIndexWriter:
    """:class:`engine.indexing.index_run.IndexWriter` on one connection to ``index.db``."""

    def __init__(self, conn: apsw.Connection, store: Store) -> None:
        self.conn = conn
        self.store = store
        config = store.config()
        self.budget = config.embed_chunks_per_file
        self.max_file_bytes = config.max_file_bytes

    def begin(self) -> bool:
        with immediate(self.conn):
            finished = read_meta(self.conn, "complete") != "0"
            write_meta(self.conn, "complete", 0)
        return finished

    def known_files(self, keys: list[str] | None = None) -> dict[str, KnownFile]:
        return indexdb.known_files(self.conn, keys)

    def refuse_foreign(self, candidates: Sequence[Candidate], known: dict[str, KnownFile]) -> None:
        """A store's own folder holds its index: no other store can have written it."""

    def write_files(self, batch: list[Parsed]) -> list[Parsed]:
        rows = [(item, item.row) for item in batch]  # chunked before the lock: it takes a while
        with immediate(self.conn):
            return write_current(
                self.store.root,
                rows,
                self.max_file_bytes,
                lambda row: indexdb.write_file(self.conn, row),
            )

    def touch_files(self, touched: list[Touch]) -> None:
        with self.conn:
            indexdb.touch_files(self.conn, touched)

    def delete_files(self, gone: list[str], vanished: set[str]) -> list[str]:
        with immediate(self.conn):
            removed = still_gone(self.store.root, gone, vanished)
            indexdb.delete_files(self.conn, removed)
        return removed

    def follow_content(
        self, keys: set[str], gone: dict[str, str], written: dict[str, str]
    ) -> list[tuple[str, str]]:
        if not self.store.state_path.exists():
            return []  # no state row to move
        present = keys | indexdb.indexed_paths(self.conn)
        unique = indexdb.unique_content_paths(self.conn)
        return state_plane.follow_content(self.store, within(present), unique, gone, written)

    def prepare_vectors(self, embedder: Embedder) -> None:
        with self.conn:
            indexdb.drop_other_vectors(self.conn, embedder.name, embedder.dim)
            # Recorded before the first vector, not at the end: after a killed run a search can
            # then tell these vectors' model and say how far embedding got.
            write_meta(self.conn, "model", embedder.name)
            write_meta(self.conn, "dim", embedder.dim)
            # The files are written: the vectors the budget no longer covers go now, not at
            # the end, so no search during the embedding, or after the run is stopped, reads
            # one; the index then holds what this budget and rule choose, and says so.
            indexdb.drop_uncovered_vectors(self.conn, self.budget)
            write_meta(self.conn, BUDGET_KEY, self.budget)
            write_meta(self.conn, RULE_KEY, RULE)
        ensure_vector_table(self.conn, embedder.dim)

    def chunks_without_vectors(self) -> list[Pending]:
        return indexdb.chunks_missing_vectors(self.conn, None, self.budget)

    def coverage(self, embedder: Embedder) -> tuple[int, int]:
        return indexdb.vector_coverage(self.conn, embedder.name, self.budget)

    def add_vectors(self, embedder: Embedder, rows: list[tuple[str, bytes]]) -> None:
        with self.conn:
            indexdb.add_vectors(self.conn, embedder.name, embedder.dim, rows)

    def floor_place(self) -> SqliteFloorPlace:
        return SqliteFloorPlace(self.conn)

    def finish(self, embedder: Embedder | None, skipped: dict[str, list[int]]) -> None:
        conn = self.conn
        # Counts the chunks (a read) before it records them: the write lock comes first.
        with immediate(conn):
            # Every vector no chunk within the budget holds: texts gone, and chunks a lowered
            # budget, another rule or a file's new length leaves out (never read by the arm).
            # With an embedder, prepare_vectors dropped them before the first vector.
            if embedder is None:
                indexdb.drop_uncovered_vectors(conn, self.budget)
            record_coverage(
                conn,
                embedder.name if embedder else read_meta(conn, "model"),
                embedder.dim if embedder else None,
                self.budget,
            )
            write_meta(conn, "indexed_at", dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))
            write_meta(conn, "skipped", json.dumps(skipped))
            write_meta(conn, "complete", 1)


def store_vectors(conn: apsw.Connection, embedder: Embedder, batch: list[Pending]) -> int:
    """Embed a batch of (hash, title, text) chunks and store the vectors in one transaction;
    return how many. Incremental runs embed through here, full runs through the writer: both
    key the text by :func:`engine.indexing.index_run.vector_rows`."""
    rows = vector_rows(embedder, batch)
    with conn:
        indexdb.add_vectors(conn, embedder.name, embedder.dim, rows)
    return len(batch)


def pending_changes(
    store: Store, conn: apsw.Connection, not_walked: list[tuple[str, str]] | None = None
) -> dict[str, int]:
    """Count files added, modified and removed since the last run, from stat() alone.

    What the walk skips without reading (a link, a pipe, a device, a bad name, a folder it does
    not enter) is no change: the next run would skip it again. Those paths go to
    ``not_walked``, with the reason, when it is given."""
    return changes_since(
        store, indexdb.file_fingerprints(conn), read_meta(conn, "skipped"), not_walked
    )
