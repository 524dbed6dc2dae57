"""What a store's index and state plane hold, and how far they are from the files.

``memsift status`` prints this; it is also what a user checks before trusting a search: vector
coverage below 0.95 drops the vector arm, files changed since the last run are not searchable
yet, and state rows whose memory is gone are listed (removed only by ``memsift state prune``).
"""

from __future__ import annotations

from engine import indexdb
from engine import state as state_plane
from engine.db import guarded, open_index_reader, read_meta
from engine.errors import Database
from engine.indexer import pending_changes
from engine.pg.target import database_target
from engine.status_report import stale_among, status_report
from engine.store import Store


def stale_state_paths(store: Store) -> list[str]:
    """State rows whose memory file no longer exists in the store."""
    return stale_among(store, state_plane.state_paths(store))


def store_status(store: Store) -> dict[str, object]:
    """Counts, coverage, model, database paths and pending changes, as one JSON-ready dict."""
    config = store.config()
    if (target := database_target(config)) is not None:  # a team store
        from engine.pg.status import database_status

        return database_status(store, target, config.model)
    conn = open_index_reader(store.index_path)
    with guarded(Database.INDEX, store.index_path):
        try:
            files = indexdb.file_count(conn)
            model = config.model
            chunks, embedded = indexdb.vector_coverage(conn, model)
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
