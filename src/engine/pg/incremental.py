"""Index a few named files of a team store now, and fill its missing vectors behind.

The PostgreSQL side of :mod:`engine.indexing.incremental`, which decides which keys to look at and
hands them here: the same scan, the same rows and the same vectors as a full run
(:mod:`engine.pg.indexer`), for exactly the files a watcher saw change or an agent just wrote.
Like the SQLite path it takes no run lock (a full run may hold the advisory lock for minutes,
and a remember must not wait for it): each write is one short transaction, and a full run
going on elsewhere upserts the same rows to the same values. It leaves the index's "complete"
mark alone, since it has not looked at the rest of the store.

Every write here ends by asking whether the full-text arm's champion lists are due by the rule a
full run applies (:func:`engine.pg.champions.refresh_behind`): when they are, they are made on a
thread of their own, so the write returns without waiting for them.

Vectors are added only while the index is of the same model (:func:`engine.pg.indexdb.
claim_model`, checked in the transaction that adds them); otherwise the caller leaves the
switch to a full run.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from functools import partial

from engine.files.store import Store
from engine.floor import refresh as refresh_floor
from engine.indexing.embedder import Embedder
from engine.indexing.index_run import scan_keys
from engine.indexing.pipeline import (
    COVERAGE_EVERY_S,
    FILL_BATCH,
    IndexReport,
    Preparsed,
    skipped_fingerprint,
    still_gone,
)
from engine.pg import indexdb
from engine.pg.champions import refresh_behind
from engine.pg.driver import PgConnection, PgError, connect, guarded, register_vectors
from engine.pg.floor import PgFloorPlace
from engine.pg.indexer import ModelChanged, PgIndexWriter, index_to_database, store_vectors
from engine.pg.ownership import refuse_other_store
from engine.pg.schema import SCHEMA_VERSION, has_index, layout
from engine.pg.state import follow_content
from engine.pg.target import DatabaseTarget


def index_keys(
    store: Store,
    target: DatabaseTarget,
    wanted: list[str],
    embedder: Embedder | None,
    report: IndexReport,
    preparsed: Preparsed | None = None,
) -> IndexReport:
    """Bring the rows of ``wanted`` in step with their files (see
    :func:`engine.indexing.incremental.index_paths`); a store with no index yet gets a full first
    run, which makes its schema, and so does one of an older layout, which that run upgrades."""
    conn = connect(target, vectors=False)
    try:
        with guarded(target):
            if not has_index(conn) or layout(conn) != int(SCHEMA_VERSION):
                conn.close()  # a first run makes the schema; a full run upgrades an old one
                return index_to_database(
                    store, target, store.config().max_file_bytes, embedder, None, report
                )
            refuse_other_store(conn, target, store, f"indexing {wanted[0]}", wanted[0])
            register_vectors(conn.raw, target)
            replaced = indexdb.chunk_hashes_of(conn, wanted)  # what the rows held before
            write_keys(conn, store, wanted, report, preparsed)
            budget = store.config().embed_chunks_per_file
            if report.indexed or report.removed:  # before embedding, as on SQLite
                with conn:
                    drop = report.left_out(budget)
                    indexdb.drop_left_out_vectors(conn, budget, drop, replaced)
            if embedder is not None and report.indexed:
                embedded = embed_keys(conn, embedder, report.indexed, budget)
                report.embedded = len(embedded)
                report.count_reuse(embedded, budget)
            if report.indexed or report.removed or report.embedded:
                with conn:  # of the index's model: a claim refused leaves it as it was
                    model = indexdb.read_meta(conn, "model")
                    indexdb.record_coverage(conn, model, None, budget)
                refresh_floor(PgFloorPlace(conn), embedder, report.embedded)
            if report.indexed or report.removed:  # the full-text arm's lists, when due, behind
                refresh_behind(conn)
    finally:
        conn.close()
    return report


def write_keys(
    conn: PgConnection,
    store: Store,
    wanted: list[str],
    report: IndexReport,
    preparsed: Preparsed | None = None,
) -> None:
    writer = PgIndexWriter(conn, store, store.config().max_file_bytes)
    known, touched, gone, vanished = scan_keys(writer, store, wanted, report, preparsed)
    if not (report.indexed or touched or gone or report.skipped):
        return  # nothing changed: nothing written
    with conn:
        indexdb.lock_rows(conn)
        if touched:
            indexdb.touch_files(conn, touched)
        gone = still_gone(store.root, gone, vanished)
        if gone:
            indexdb.delete_files(conn, gone)
        marks = json.loads(indexdb.read_meta(conn, "skipped") or "{}")
        for key in wanted:
            marks.pop(key, None)
        marks.update(skipped_fingerprint(store, report.skipped))
        indexdb.write_meta(conn, "skipped", json.dumps(marks))
        report.removed = gone
        gone_hashes = {path: known[path].content_hash for path in gone}
        report.renamed = follow_content(
            conn,
            store.root,
            partial(indexdb.indexed_among, conn),
            indexdb.unique_content_paths_among(
                conn, sorted(set(gone_hashes.values()) | set(report.written.values()))
            ),
            gone_hashes,
            report.written,
        )


def embed_keys(conn: PgConnection, embedder: Embedder, keys: list[str], budget: int) -> set[str]:
    """Embed the chunks of ``keys`` that lack a vector (within each file's embedding
    ``budget``); return the hashes of the texts embedded (none past a model switch)."""
    missing = indexdb.chunks_without_vectors(conn, budget, keys)
    done: set[str] = set()
    try:
        for start in range(0, len(missing), FILL_BATCH):
            batch = missing[start : start + FILL_BATCH]
            store_vectors(conn, embedder, batch, claim=True)
            done.update(digest for digest, _, _ in batch)
    except ModelChanged:
        pass
    return done


def fill_missing(
    target: DatabaseTarget,
    embedder: Embedder,
    budget: int,
    *,
    stop: threading.Event | None = None,
    progress: Callable[[int], None] | None = None,
) -> int | None:
    """Embed every chunk without a vector (within each file's embedding ``budget``), a small
    batch per transaction, recording coverage as it rises; None when the index holds another
    model's vectors (see :func:`engine.indexing.incremental.fill_missing`)."""
    conn = connect(target, vectors=False)
    done = 0
    try:
        with guarded(target):
            if not has_index(conn):
                return 0
            register_vectors(conn.raw, target)
            with conn:
                if not indexdb.claim_model(conn, embedder.name, embedder.dim):
                    return None
            last = time.monotonic()
            while missing := indexdb.chunks_without_vectors(conn, budget):
                for start in range(0, len(missing), FILL_BATCH):
                    if stop is not None and stop.is_set():
                        break
                    batch = missing[start : start + FILL_BATCH]
                    done += store_vectors(conn, embedder, batch, claim=True)
                    if progress:
                        progress(done)
                    if time.monotonic() - last >= COVERAGE_EVERY_S:
                        with conn:
                            indexdb.record_coverage(conn, embedder.name, embedder.dim, budget)
                        last = time.monotonic()
                if stop is not None and stop.is_set():
                    break
            with conn:
                indexdb.drop_left_out_vectors(conn, budget, [])  # all if the budget changed
                indexdb.record_coverage(conn, embedder.name, embedder.dim, budget)
            refresh_floor(PgFloorPlace(conn), embedder, done)
    except ModelChanged:
        return None
    finally:
        conn.close()
    return done


def paths_under(target: DatabaseTarget, prefixes: list[str]) -> set[str]:
    """Indexed keys under any of ``prefixes``; empty before the first run."""
    conn = connect(target, readonly=True, vectors=False)
    try:
        with guarded(target):
            return indexdb.paths_under(conn, prefixes) if has_index(conn) else set()
    finally:
        conn.close()


def indexed_content_hash(target: DatabaseTarget, path: str) -> str | None:
    """The indexed content hash of ``path``, or None; best effort, as on SQLite
    (:func:`engine.sqlite.indexdb.indexed_content_hash`): it only lets a state row follow a later
    rename, and must never stop a memory being read or reinforced."""
    try:
        conn = connect(target, readonly=True, vectors=False)
    except PgError:
        return None
    try:
        with guarded(target):
            return indexdb.content_hash_of(conn, path) if has_index(conn) else None
    except PgError:
        return None
    finally:
        conn.close()
