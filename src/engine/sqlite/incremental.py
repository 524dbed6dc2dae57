"""Index a few named files now, without walking the store: the SQLite side of
:mod:`engine.indexing.incremental`.

A full run walks every file and holds the store's run lock for as long as it takes, which can
be minutes. An agent that has just written a memory, or a watcher that has just seen three
files change, needs those files searchable at once, so this indexes exactly the keys it is
given, reusing the full run's pieces (the scan decides what changed, ``write_files`` writes it,
vectors are keyed by text hash as always). It takes no run lock: each write is one short
transaction that leaves the index consistent, and a full run going on in another process
upserts the same rows to the same values.

Vectors come in two speeds: :func:`index_keys` may embed the chunks of the files it wrote
(``remember`` does: the next search must find the memory by meaning too); :func:`fill_missing`
embeds whatever chunks still lack a vector, in small batches, for a background worker, while
the lexical index already answers. Coverage is recorded as it rises, so the vector arm rejoins
a search as soon as coverage is back above the threshold.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from functools import partial

import apsw

from engine.files.store import Store, StoreError
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
from engine.sqlite import indexdb
from engine.sqlite import state as state_plane
from engine.sqlite.db import (
    INDEX_SCHEMA_VERSION,
    ensure_vector_table,
    immediate,
    open_index,
    read_meta,
    write_meta,
)
from engine.sqlite.floor import SqliteFloorPlace
from engine.sqlite.indexdb import record_coverage
from engine.sqlite.indexer import SqliteIndexWriter, store_vectors


def index_keys(
    store: Store,
    wanted: list[str],
    embedder: Embedder | None,
    report: IndexReport,
    preparsed: Preparsed | None = None,
    *,
    create: bool = True,
) -> IndexReport:
    """:func:`engine.indexing.incremental.index_paths` on SQLite, for keys already checked."""
    conn = open_for_writing(store, create=create)
    try:
        writer = SqliteIndexWriter(conn, store)
        replaced = indexdb.chunk_hashes_of(conn, wanted)  # what the rows held before
        known, touched, gone, vanished = scan_keys(writer, store, wanted, report, preparsed)
        if not (report.indexed or touched or gone or report.skipped):
            return report  # nothing changed: no write, no lock taken
        with immediate(conn):
            if touched:
                indexdb.touch_files(conn, touched)
            gone = still_gone(store.root, gone, vanished)
            if gone:
                indexdb.delete_files(conn, gone)
            remember_skips(conn, store, wanted, report.skipped)
        report.removed = gone
        if gone or report.written:
            gone_hashes = {p: known[p].content_hash for p in gone}
            report.renamed = follow_renames(conn, store, gone_hashes, report.written)
        budget = store.config().embed_chunks_per_file
        # Before embedding, which takes a while and may be stopped: no search in between
        # reads a vector the budget no longer covers.
        with immediate(conn):
            indexdb.drop_left_out_vectors(conn, budget, report.left_out(budget), replaced)
        if embedder is not None and report.indexed:
            embedded = embed_files(conn, embedder, report.indexed, budget)
            report.embedded = len(embedded)
            report.count_reuse(embedded, budget)
        with immediate(conn):
            model = embedder.name if embedder is not None else read_meta(conn, "model")
            record_coverage(conn, model, embedder.dim if embedder is not None else None, budget)
        refresh_floor(SqliteFloorPlace(conn), embedder, report.embedded)
    finally:
        conn.close()
    return report


def indexed_under(store: Store, prefixes: list[str]) -> set[str]:
    """The indexed keys starting with one of ``prefixes``; empty before the first run."""
    if not store.index_path.exists():
        return set()
    conn = open_index(store.index_path)
    try:
        return {key for prefix in prefixes for key in indexdb.paths_under(conn, prefix)}
    finally:
        conn.close()


def open_for_writing(store: Store, *, create: bool = True) -> apsw.Connection:
    """The index, made if missing (with ``create``; else :class:`IndexMissing`). An existing
    index of the current layout is opened without re-running its schema script: that script
    reads before it writes, which fails at once with "database is locked" when another process
    commits in between (see :func:`immediate`)."""
    if not store.root.is_dir():  # making the index would make the deleted folder again
        raise StoreError(f"{store.root}: the store folder is gone")
    if store.index_path.exists() or not create:
        conn = open_index(store.index_path)  # IndexMissing if gone: nothing is made
        if read_meta(conn, "schema_version") == INDEX_SCHEMA_VERSION:
            return conn
        conn.close()
    return open_index(store.index_path, create=True)


def remember_skips(
    conn: apsw.Connection, store: Store, keys: list[str], skipped: list[tuple[str, str]]
) -> None:
    """Keep the index's record of skipped files (which ``status`` uses so as not to count a file
    it will skip again as pending) true for ``keys``."""
    marks = json.loads(read_meta(conn, "skipped") or "{}")
    for key in keys:
        marks.pop(key, None)
    marks.update(skipped_fingerprint(store, skipped))
    write_meta(conn, "skipped", json.dumps(marks))


def follow_renames(
    conn: apsw.Connection, store: Store, gone: dict[str, str], written: dict[str, str]
) -> list[tuple[str, str]]:
    """Keep the state rows of ``written`` files on the content the index now holds, and move
    the rows of files gone (in this call or an earlier one: a watcher may see a rename's two
    halves apart) to the one file now holding their content."""
    if not store.state_path.exists():
        return []
    hashes = sorted(set(gone.values()) | set(written.values()))
    unique = indexdb.unique_content_paths_among(conn, hashes)
    present = partial(indexdb.indexed_among, conn)
    return state_plane.follow_content(store, present, unique, gone, written)


def vectors_compatible(conn: apsw.Connection, embedder: Embedder) -> bool:
    """Whether vectors of ``embedder`` may be added without mixing models: the index's recorded
    model is this one (or none yet) and its oldest and newest vectors are too (a model switch
    is a full run's job: it re-embeds everything). Constant time: a scan of every vector would
    cost a remember at 50,000 memories a tenth of a second."""
    if read_meta(conn, "model") not in (None, embedder.name):
        return False
    ends = indexdb.vector_ends(conn)
    return all((model, dim) == (embedder.name, embedder.dim) for model, dim in ends)


def embed_files(
    conn: apsw.Connection, embedder: Embedder, keys: list[str], budget: int
) -> set[str]:
    """Embed the chunks of ``keys`` that lack a vector (within each file's embedding
    ``budget``); return the hashes of the texts embedded (none when the index is another
    model's)."""
    if not vectors_compatible(conn, embedder):
        return set()
    ensure_vector_table(conn, embedder.dim)
    done: set[str] = set()
    for start in range(0, len(keys), 500):
        missing = indexdb.chunks_missing_vectors(conn, keys[start : start + 500], budget)
        for offset in range(0, len(missing), FILL_BATCH):
            batch = missing[offset : offset + FILL_BATCH]
            store_vectors(conn, embedder, batch)
            done.update(digest for digest, _, _ in batch)
    return done


def fill_missing(
    store: Store,
    embedder: Embedder,
    *,
    stop: threading.Event | None = None,
    progress: Callable[[int], None] | None = None,
) -> int | None:
    """Embed every chunk of the index that lacks a vector, a small batch at a time, recording
    coverage as it rises. Returns how many were embedded, or None when the index holds another
    model's vectors (the caller then runs a full index, which switches models cleanly)."""
    if not store.index_path.exists():
        return 0
    conn = open_index(store.index_path)
    done = 0
    budget = store.config().embed_chunks_per_file
    try:
        if not vectors_compatible(conn, embedder):
            return None
        ensure_vector_table(conn, embedder.dim)
        last = time.monotonic()
        while not (stop is not None and stop.is_set()):
            batch = indexdb.chunks_missing_vectors(conn, None, budget, FILL_BATCH)
            if not batch:
                break
            done += store_vectors(conn, embedder, batch)
            if progress:
                progress(done)
            if time.monotonic() - last >= COVERAGE_EVERY_S:
                with immediate(conn):
                    record_coverage(conn, embedder.name, embedder.dim, budget)
                last = time.monotonic()
        with immediate(conn):
            indexdb.drop_left_out_vectors(conn, budget, [])  # all of them if the budget changed
            record_coverage(conn, embedder.name, embedder.dim, budget)
        refresh_floor(SqliteFloorPlace(conn), embedder, done)
    finally:
        conn.close()
    return done
