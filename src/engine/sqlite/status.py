"""``memsift status`` for a SQLite store: the report of :mod:`engine.status_report`, from
``index.db`` and ``state.db``."""

from __future__ import annotations

from engine.errors import Database
from engine.files.store import Store
from engine.ranking.scope import Scope
from engine.sqlite import indexdb
from engine.sqlite import state as state_plane
from engine.sqlite.db import guarded, open_index_reader, read_meta
from engine.sqlite.indexer import pending_changes
from engine.status_report import status_report


def store_status(store: Store) -> dict[str, object]:
    """Counts, coverage, model, database paths and pending changes, as one JSON-ready dict."""
    config = store.config()
    conn = open_index_reader(store.index_path)
    with guarded(Database.INDEX, store.index_path):
        try:
            files = indexdb.file_count(conn)
            model = config.model
            budget = config.embed_chunks_per_file
            chunks, embedded = indexdb.vector_coverage(conn, model, budget)
            total, text_only = indexdb.chunk_totals(conn, model, budget)
            dim = indexdb.vector_dim_of(conn, model)
            not_walked: list[tuple[str, str]] = []
            changes = pending_changes(store, conn, not_walked)
            complete = read_meta(conn, "complete") == "1"
            indexed_at = read_meta(conn, "indexed_at")
        finally:
            conn.close()
    return status_report(
        store,
        files=files,
        coverage=(chunks, embedded),
        full_text_only=(total, text_only, budget),
        model=model,
        dimension=dim,
        databases=(
            str(store.index_path),
            str(store.state_path) if store.state_path.exists() else None,
        ),
        known=state_plane.state_paths(store),
        indexed_at=indexed_at,
        complete=complete,
        changes=changes,
        not_walked=not_walked,
    )


def recent_rows(store: Store, scope: Scope, limit: int) -> list[tuple[object, ...]]:
    """The newest ``limit`` files rows in ``scope``, for ``memsift list``: read-only, as a
    search reads, so a read-only store lists too."""
    conn = open_index_reader(store.index_path)
    try:
        with guarded(Database.INDEX, store.index_path):
            return indexdb.recent_files(conn, scope.sql, scope.values, limit)
    finally:
        conn.close()
