"""What a store's index and state plane hold, and how far they are from the files.

``memsift status`` prints this; it is also what a user checks before trusting a search: vector
coverage below 0.95 drops the vector arm, files changed since the last run are not searchable
yet, and state rows whose memory is gone are listed (removed only by ``memsift state prune``).
"""

from __future__ import annotations

from pathlib import Path

from engine import indexdb
from engine import state as state_plane
from engine.db import guarded, open_index_reader, read_meta
from engine.errors import Database
from engine.indexer import pending_changes
from engine.pg.target import database_target
from engine.store import Store


def stale_state_paths(store: Store, known: list[str] | None = None) -> list[str]:
    """State rows whose memory file no longer exists in the store."""
    paths = state_plane.state_paths(store) if known is None else known
    return [p for p in paths if not is_file(store.root / p)]


def is_file(path: Path) -> bool:
    """Whether ``path`` is a file; False for a path the system refuses (longer than it
    allows), which no memory can have."""
    try:
        return path.is_file()
    except OSError:
        return False


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


def status_report(
    store: Store,
    *,
    files: int,
    coverage: tuple[int, int],
    model: str | None,
    dimension: int | None,
    databases: tuple[str, str | None],
    known: list[str],
    indexed_at: str | None,
    complete: bool,
    changes: dict[str, int],
    not_walked: list[tuple[str, str]],
    vector_search: str = "exact",
) -> dict[str, object]:
    """``status --json``'s keys, the one place they are written, from either backend's facts:
    ``coverage`` is (chunks, chunks with a vector), ``databases`` where the index and the
    state plane live, ``known`` the paths the state plane holds rows for, ``not_walked`` the
    paths the walk skips with the reason (links, special files, bad names, folders it does not
    enter), ``vector_search`` how the semantic arm finds the nearest chunks (exact, or an
    approximate index named)."""
    chunks, embedded = coverage
    return {
        "store": str(store.root),
        "files": files,
        "chunks": chunks,
        "embedded_chunks": embedded,
        "vector_coverage": round(embedded / chunks, 4) if chunks else None,
        "model": model,
        "dimension": dimension,
        "vector_search": vector_search,
        "index_db": databases[0],
        "state_db": databases[1],
        "state_rows": len(known),
        "stale_state_rows": stale_state_paths(store, known),
        "indexed_at": indexed_at,
        "last_run_complete": complete,
        "changed_since_index": any(changes.values()) or not complete,
        "changes": changes,
        "not_walked": [{"path": path, "reason": reason} for path, reason in not_walked],
    }
