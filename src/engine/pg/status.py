"""``memsift status`` for a team store: the same report, read from its schema."""

from __future__ import annotations

from engine.files.store import Store
from engine.indexing.pipeline import changes_since
from engine.pg import indexdb
from engine.pg.driver import connect, guarded
from engine.pg.schema import has_hnsw, require_index
from engine.pg.search import full_text_description, hnsw_description
from engine.pg.state import state_paths
from engine.pg.target import DatabaseTarget
from engine.ranking.scope import Scope
from engine.status_report import status_report


def database_status(store: Store, target: DatabaseTarget, model: str | None) -> dict[str, object]:
    """The keys of :func:`engine.status.store_status`; both databases are the one schema."""
    conn = connect(target, readonly=True, vectors=False)
    try:
        with guarded(target):
            require_index(conn)
            files = int(conn.run("SELECT count(*) FROM files").fetchone()[0])
            budget = store.config().embed_chunks_per_file
            chunks, embedded = indexdb.vector_coverage(conn, model, budget)
            total, text_only = indexdb.chunk_totals(conn, model, budget)
            row = conn.run(
                "SELECT dim FROM embeddings WHERE model = %s LIMIT 1", (model or "",)
            ).fetchone()
            fingerprints = {
                path: (size, mtime_ns)
                for path, size, mtime_ns in conn.run("SELECT path, size, mtime_ns FROM files")
            }
            complete = indexdb.read_meta(conn, "complete") == "1"
            indexed_at = indexdb.read_meta(conn, "indexed_at")
            skipped = indexdb.read_meta(conn, "skipped")
            hnsw = has_hnsw(conn)
            full_text = full_text_description(conn)
    finally:
        conn.close()
    not_walked: list[tuple[str, str]] = []
    changes = changes_since(store, fingerprints, skipped, not_walked)
    return status_report(
        store,
        files=files,
        coverage=(chunks, embedded),
        full_text_only=(total, text_only, budget),
        model=model,
        dimension=int(row[0]) if row else None,
        databases=(target.shown(), target.shown()),
        known=state_paths(target),
        indexed_at=indexed_at,
        complete=complete,
        changes=changes,
        not_walked=not_walked,
        vector_search=vector_search_status(target, hnsw),
        full_text_search=full_text,
    )


def vector_search_status(target: DatabaseTarget, hnsw: bool) -> str:
    """How searches find the nearest chunks now, and what the next index run will change."""
    now = hnsw_description(target.ef_search) if hnsw else "exact"
    if hnsw != (target.vector_index == "hnsw"):
        now += (
            f'; config.toml asks for vector_index = "{target.vector_index}", which the next '
            "`memsift index` applies"
        )
    return now


def recent_rows(target: DatabaseTarget, scope: Scope, limit: int) -> list[tuple[object, ...]]:
    """The newest ``limit`` files rows in ``scope`` (PostgreSQL's dialect), for ``memsift list``."""
    conn = connect(target, readonly=True, vectors=False)
    try:
        with guarded(target):
            require_index(conn)
            return indexdb.recent_files(conn, scope.sql, scope.values, limit)
    finally:
        conn.close()
