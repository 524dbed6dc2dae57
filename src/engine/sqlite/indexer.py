"""A full index run on SQLite: ``index.db`` brought in step with the files of a store, doing
as little work as possible (:func:`engine.indexer.index_store` is the entry point).

A run has three passes, each committed in small transactions so a killed run leaves a
consistent index that the next run completes:

1. scan: walk the store; a file whose size and mtime match the index is not even read, one
   whose content hash matches is unchanged, anything else is parsed and written with its chunks;
   files gone from the store are removed (their chunks cascade, FTS follows by trigger);
2. embed: every chunk without a vector for the configured model gets one. Vectors are keyed by
   the hash of the embedded text, so an unchanged chunk is never embedded twice, a renamed file
   costs nothing, and switching models re-embeds without ever mixing two models' vectors;
3. tidy: vectors no chunk uses are dropped and the coverage figures are recorded.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw

from engine.embedder import Embedder, to_blob
from engine.errors import Database
from engine.pipeline import (
    EMBED_BATCH,
    WRITE_BATCH,
    IndexReport,
    Parsed,
    Progress,
    batched,
    changes_since,
    embed_text,
    file_row,
    scan,
    skipped_fingerprint,
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
from engine.sqlite.indexdb import record_coverage
from engine.state_rules import within
from engine.store import Store, walk


def prepare(store: Store) -> None:
    """Refuse a run that could not write the index before the caller loads a model for it."""
    require_writable(Database.INDEX, store.index_path)


def index_run(
    store: Store, embedder: Embedder | None, progress: Progress | None, report: IndexReport
) -> IndexReport:
    """A full run on SQLite: one at a time per store (the run lock), errors naming index.db."""
    with guarded(Database.INDEX, store.index_path):
        store.state_dir.mkdir(parents=True, exist_ok=True)
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
        with conn:
            write_meta(conn, "complete", 0)
        known = indexdb.known_files(conn)
        seen: set[str] = set()
        touched: list[tuple[int, str, str]] = []
        candidates = list(walk(store))
        changed = scan(candidates, max_file_bytes, known, seen, report, touched, progress)
        for batch in batched(changed, WRITE_BATCH):
            write_files(conn, batch)
            report.took(batch)
        if touched:
            with conn:
                indexdb.touch_files(conn, touched)
        gone = sorted(set(known) - seen)
        if gone:
            with conn:
                indexdb.delete_files(conn, gone)
            report.removed = gone
        if store.state_path.exists():
            # Every path still in the store counts, a skipped one too: a memory that is briefly
            # unparsable has not moved, so its row must not follow a copy of its content.
            present = {c.key for c in candidates} | indexdb.indexed_paths(conn)
            report.renamed = state_plane.follow_content(
                store,
                within(present),
                indexdb.unique_content_paths(conn),
                {path: known[path].content_hash for path in gone},
                report.written,
            )
        if embedder is not None:
            report.embedded = fill_vectors(conn, embedder, progress)
        # Counts the chunks (a read) before it records them: the write lock comes first.
        with immediate(conn):
            if embedder is not None:
                indexdb.drop_unused_vectors(conn)
            record_coverage(
                conn,
                embedder.name if embedder else read_meta(conn, "model"),
                embedder.dim if embedder else None,
            )
            write_meta(conn, "indexed_at", dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))
            write_meta(conn, "skipped", json.dumps(skipped_fingerprint(store, report.skipped)))
            write_meta(conn, "complete", 1)
    finally:
        conn.close()
    return report


def write_files(conn: apsw.Connection, batch: list[Parsed]) -> None:
    """Upsert a batch of files and replace their chunks, in one transaction."""
    with conn:
        for item in batch:
            indexdb.write_file(conn, file_row(item))


def fill_vectors(
    conn: apsw.Connection, embedder: Embedder, progress: Progress | None = None
) -> int:
    """Embed every chunk text that has no vector for ``embedder``; return how many were made."""
    with conn:
        indexdb.drop_other_vectors(conn, embedder.name, embedder.dim)
        # Recorded before the first vector, not at the end: after a killed run a search can
        # then tell these vectors' model and say how far embedding got.
        write_meta(conn, "model", embedder.name)
        write_meta(conn, "dim", embedder.dim)
    ensure_vector_table(conn, embedder.dim)
    missing = indexdb.chunks_without_vectors(conn)
    done = 0
    for start in range(0, len(missing), EMBED_BATCH):
        done += store_vectors(conn, embedder, missing[start : start + EMBED_BATCH])
        if progress:
            progress("embed", done, len(missing))
    return done


def store_vectors(
    conn: apsw.Connection, embedder: Embedder, batch: list[tuple[str, str, str]]
) -> int:
    """Embed a batch of (hash, title, text) chunks as the indexer keys them (title and text
    together) and store the vectors in one transaction; return how many. A full run and an
    incremental one both embed through here, so a chunk's vector never depends on which
    made it."""
    vectors = embedder.embed([embed_text(title, text) for _, title, text in batch])
    with conn:
        indexdb.add_vectors(
            conn,
            embedder.name,
            embedder.dim,
            [(digest, to_blob(v)) for (digest, _, _), v in zip(batch, vectors, strict=True)],
        )
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


