"""Bring a team store's index (in PostgreSQL) in step with its files.

The same three passes as :mod:`engine.indexer` (scan, embed, tidy), built from the same pure
parts (the walk, the scan that decides what changed, the rows written, the embedding batches),
so a store indexes to the same rows on either backend. What differs is where rows go and how a
run excludes another: a session advisory lock in the database, held for the whole run, so two
machines indexing one store take turns.
"""

from __future__ import annotations

import datetime as dt
import json

from engine.embedder import Embedder, to_blob
from engine.pg import indexdb
from engine.pg.driver import PgConnection, connect, guarded, run_lock
from engine.pg.ownership import refuse_foreign, shares_content
from engine.pg.schema import apply_vector_index, ensure_schema, release_vector_width, vector_width
from engine.pg.state import follow_content
from engine.pg.target import DatabaseTarget
from engine.pipeline import (
    EMBED_BATCH,
    WRITE_BATCH,
    IndexReport,
    Progress,
    batched,
    embed_text,
    file_row,
    scan,
    skipped_fingerprint,
)
from engine.state_rules import within
from engine.store import Store, walk


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
            ensure_schema(conn)
            run(conn, store, max_file_bytes, embedder, progress, report)
    finally:
        conn.close()
    return report


def run(
    conn: PgConnection,
    store: Store,
    max_file_bytes: int,
    embedder: Embedder | None,
    progress: Progress | None,
    report: IndexReport,
) -> None:
    with conn:
        indexdb.write_meta(conn, "complete", 0)
    known = indexdb.known_files(conn)
    seen: set[str] = set()
    touched: list[tuple[int, str, str]] = []
    candidates = list(walk(store))
    keys = {c.key for c in candidates}
    refuse_foreign(
        conn.target,
        store.root,
        known.keys(),
        keys.__contains__,
        lambda: shares_content(
            (c.path for c in candidates if not c.skip),
            {file.content_hash for file in known.values()},
            max_file_bytes,
        ),
        "this index run",
    )
    changed = scan(candidates, max_file_bytes, known, seen, report, touched, progress)
    for batch in batched(changed, WRITE_BATCH):
        with conn:
            for item in batch:
                indexdb.write_file(conn, file_row(item))
        report.took(batch)
    if touched:
        with conn:
            indexdb.touch_files(conn, touched)
    gone = sorted(set(known) - seen)
    if gone:
        with conn:
            indexdb.delete_files(conn, gone)
        report.removed = gone
    with conn:
        present = {c.key for c in candidates} | indexdb.indexed_paths(conn)
        report.renamed = follow_content(
            conn,
            store.root,
            within(present),
            indexdb.unique_content_paths(conn),
            {path: known[path].content_hash for path in gone},
            report.written,
        )
    if embedder is not None:
        report.embedded = fill_vectors(conn, embedder, progress)
    with conn:
        if embedder is not None:
            indexdb.drop_unused_vectors(conn)
        dim = embedder.dim if embedder else indexdb.read_meta(conn, "dim")
        apply_vector_index(conn, conn.target.vector_index, int(dim) if dim else None)
    with conn:
        indexdb.record_coverage(
            conn,
            embedder.name if embedder else indexdb.read_meta(conn, "model"),
            embedder.dim if embedder else None,
        )
        indexdb.write_meta(
            conn, "indexed_at", dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        )
        indexdb.write_meta(conn, "skipped", json.dumps(skipped_fingerprint(store, report.skipped)))
        indexdb.write_meta(conn, "complete", 1)


def fill_vectors(conn: PgConnection, embedder: Embedder, progress: Progress | None) -> int:
    """Embed every chunk text without a vector of ``embedder``; return how many were made."""
    with conn:
        indexdb.drop_other_vectors(conn, embedder.name, embedder.dim)
        if vector_width(conn) not in (None, embedder.dim):  # an HNSW index of another model
            release_vector_width(conn)
        indexdb.write_meta(conn, "model", embedder.name)
        indexdb.write_meta(conn, "dim", embedder.dim)
    missing = indexdb.chunks_without_vectors(conn)
    done = 0
    for start in range(0, len(missing), EMBED_BATCH):
        done += store_vectors(conn, embedder, missing[start : start + EMBED_BATCH])
        if progress:
            progress("embed", done, len(missing))
    return done


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
    :func:`engine.pipeline.embed_text`) and store them in one transaction; return how many.

    ``claim``: a writer outside the run lock first checks, in that transaction, that the index
    is still of ``embedder``'s model (:func:`engine.pg.indexdb.claim_model`), and raises
    :class:`ModelChanged` (storing nothing) when it is not."""
    vectors = embedder.embed([embed_text(title, text) for _, title, text in batch])
    with conn:
        if claim and not indexdb.claim_model(conn, embedder.name, embedder.dim):
            raise ModelChanged(embedder.name)
        indexdb.add_vectors(
            conn,
            embedder.name,
            embedder.dim,
            [
                (digest, to_blob(vector))
                for (digest, _, _), vector in zip(batch, vectors, strict=True)
            ],
        )
    return len(batch)
