"""Bring a team store's index (in PostgreSQL) in step with its files.

The run is the one indexing loop (:func:`engine.indexing.index_run.full_run`) through
:class:`PgIndexWriter`, so a store indexes to the same rows on either backend. What is
PostgreSQL's own: where rows go, a session advisory lock held for the whole run (two machines
indexing one store take turns), a transaction advisory lock around each batch of rows written
(:func:`engine.pg.indexdb.lock_rows`: the batch's files are checked against what was parsed
under it, as on SQLite), the refusal of a schema that holds another store's files, and
the HNSW index (re)built at the end when one is configured, and the full-text arm's champion
lists (:mod:`engine.pg.champions`) made anew at the end when the store outgrew them.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence

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
    still_gone,
    write_current,
)
from engine.pg import indexdb
from engine.pg.champions import refresh_champions
from engine.pg.driver import PgConnection, connect, guarded, run_lock
from engine.pg.floor import PgFloorPlace
from engine.pg.ownership import refuse_foreign, shares_content
from engine.pg.schema import apply_vector_index, ensure_schema, release_vector_width, vector_width
from engine.pg.state import follow_content
from engine.pg.target import DatabaseTarget
from engine.state_rules import within


def index_to_database(
    store: Store,
    target: DatabaseTarget,
    max_file_bytes: int,
    embedder: Embedder | None,
    progress: Progress | None,
    report: IndexReport,
) -> IndexReport:
    """Index ``store`` into ``target`` (making its schema on the first run)."""
    conn = connect(target, vectors=False)
    try:
        with guarded(target), run_lock(conn):
            ensure_schema(conn, progress)
            writer = PgIndexWriter(conn, store, max_file_bytes, progress)
            full_run(writer, store, max_file_bytes, embedder, progress, report)
    finally:
        conn.close()
    return report


class PgIndexWriter:
    """:class:`engine.indexing.index_run.IndexWriter` on one connection to a team schema, inside the
    run's advisory lock."""

    def __init__(
        self,
        conn: PgConnection,
        store: Store,
        max_file_bytes: int,
        progress: Progress | None = None,
    ) -> None:
        self.conn = conn
        self.progress = progress  # a full run's: the champion lists' passes are reported
        self.store = store
        self.max_file_bytes = max_file_bytes
        self.budget = store.config().embed_chunks_per_file

    def begin(self) -> bool:
        with self.conn:  # inside the run's advisory lock: no other run writes "complete"
            finished = indexdb.read_meta(self.conn, "complete") != "0"
            indexdb.write_meta(self.conn, "complete", 0)
        return finished

    def known_files(self, keys: list[str] | None = None) -> dict[str, KnownFile]:
        return indexdb.known_files(self.conn, keys)

    def refuse_foreign(self, candidates: Sequence[Candidate], known: dict[str, KnownFile]) -> None:
        """A schema holds one store: a run from a folder whose files are not the index's is
        refused before it writes (:mod:`engine.pg.ownership`)."""
        keys = {c.key for c in candidates}
        refuse_foreign(
            self.conn.target,
            self.store.root,
            known.keys(),
            keys.__contains__,
            lambda: shares_content(
                (c.path for c in candidates if not c.skip),
                {file.content_hash for file in known.values()},
                self.max_file_bytes,
            ),
            "this index run",
        )

    def write_files(self, batch: list[Parsed]) -> list[Parsed]:
        rows = [(item, item.row) for item in batch]  # chunked before the lock: it takes a while
        with self.conn:
            indexdb.lock_rows(self.conn)
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
        with self.conn:
            indexdb.lock_rows(self.conn)
            removed = still_gone(self.store.root, gone, vanished)
            indexdb.delete_files(self.conn, removed)
        return removed

    def follow_content(
        self, keys: set[str], gone: dict[str, str], written: dict[str, str]
    ) -> list[tuple[str, str]]:
        conn = self.conn
        with conn:
            present = keys | indexdb.indexed_paths(conn)
            unique = indexdb.unique_content_paths(conn)
            return follow_content(conn, self.store.root, within(present), unique, gone, written)

    def prepare_vectors(self, embedder: Embedder) -> None:
        with self.conn:
            indexdb.drop_other_vectors(self.conn, embedder.name, embedder.dim)
            if vector_width(self.conn) not in (None, embedder.dim):  # another model's HNSW
                release_vector_width(self.conn)
            indexdb.write_meta(self.conn, "model", embedder.name)
            indexdb.write_meta(self.conn, "dim", embedder.dim)
            # Before the first vector, as on SQLite (engine.sqlite.indexer.prepare_vectors).
            indexdb.drop_uncovered_vectors(self.conn, self.budget)
            indexdb.write_meta(self.conn, BUDGET_KEY, self.budget)
            indexdb.write_meta(self.conn, RULE_KEY, RULE)

    def chunks_without_vectors(self) -> list[Pending]:
        return indexdb.chunks_without_vectors(self.conn, self.budget)

    def coverage(self, embedder: Embedder) -> tuple[int, int]:
        return indexdb.vector_coverage(self.conn, embedder.name, self.budget)

    def add_vectors(self, embedder: Embedder, rows: list[tuple[str, bytes]]) -> None:
        with self.conn:
            indexdb.add_vectors(self.conn, embedder.name, embedder.dim, rows)

    def floor_place(self) -> PgFloorPlace:
        return PgFloorPlace(self.conn)

    def finish(self, embedder: Embedder | None, skipped: dict[str, list[int]]) -> None:
        conn = self.conn
        with conn:
            if embedder is None:  # else prepare_vectors did, as on SQLite
                indexdb.drop_uncovered_vectors(conn, self.budget)
            dim = embedder.dim if embedder else indexdb.read_meta(conn, "dim")
            apply_vector_index(conn, conn.target.vector_index, int(dim) if dim else None)
        with conn:
            indexdb.record_coverage(
                conn,
                embedder.name if embedder else indexdb.read_meta(conn, "model"),
                embedder.dim if embedder else None,
                self.budget,
            )
            indexdb.write_meta(
                conn, "indexed_at", dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
            )
            indexdb.write_meta(conn, "skipped", json.dumps(skipped))
            indexdb.write_meta(conn, "complete", 1)
        # after the run's rows: the lists are made from them
        refresh_champions(conn, progress=self.progress)


class ModelChanged(Exception):
    """The index's vectors became another model's; a full run switches models cleanly."""


def store_vectors(
    conn: PgConnection,
    embedder: Embedder,
    batch: list[tuple[str, str, str]],
    *,
    claim: bool = False,
) -> int:
    """Embed (hash, title, text) chunks as the SQLite indexer does (title and text together,
    :func:`engine.indexing.pipeline.embed_text`) and store them in one transaction; return how many.

    ``claim``: a writer outside the run lock first checks, in that transaction, that the index
    is still of ``embedder``'s model (:func:`engine.pg.indexdb.claim_model`), and raises
    :class:`ModelChanged` (storing nothing) when it is not."""
    rows = vector_rows(embedder, batch)
    with conn:
        if claim and not indexdb.claim_model(conn, embedder.name, embedder.dim):
            raise ModelChanged(embedder.name)
        indexdb.add_vectors(conn, embedder.name, embedder.dim, rows)
    return len(batch)
