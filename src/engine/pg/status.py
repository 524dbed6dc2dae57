"""``memsift status`` for a team store: the same report, read from its schema."""

from __future__ import annotations

from engine.db import IndexMissing
from engine.indexer import changes_since
from engine.pg import indexdb
from engine.pg.driver import connect, guarded
from engine.pg.schema import has_index
from engine.pg.state import state_paths
from engine.pg.target import DatabaseTarget
from engine.store import Store


def database_status(store: Store, target: DatabaseTarget, model: str | None) -> dict[str, object]:
    """The keys of :func:`engine.status.store_status`; both databases are the one schema."""
    conn = connect(target, readonly=True, vectors=False)
    try:
        with guarded(target):
            if not has_index(conn):
                raise IndexMissing(
                    f"{target.shown()}: no index yet; run `memsift index` in the store first"
                )
            files = int(conn.run("SELECT count(*) FROM files").fetchone()[0])
            chunks, embedded = indexdb.vector_coverage(conn, model)
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
    finally:
        conn.close()
    changes = changes_since(store, fingerprints, skipped)
    known = state_paths(target)
    stale = [p for p in known if not (store.root / p).is_file()]
    return {
        "store": str(store.root),
        "files": files,
        "chunks": chunks,
        "embedded_chunks": embedded,
        "vector_coverage": round(embedded / chunks, 4) if chunks else None,
        "model": model,
        "dimension": int(row[0]) if row else None,
        "index_db": target.shown(),
        "state_db": target.shown(),
        "state_rows": len(known),
        "stale_state_rows": stale,
        "indexed_at": indexed_at,
        "last_run_complete": complete,
        "changed_since_index": any(changes.values()) or not complete,
        "changes": changes,
    }
