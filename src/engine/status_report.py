"""The keys of ``memsift status``, written in one place from either backend's facts.

Both backends' status functions (:mod:`engine.status` for SQLite, :mod:`engine.pg.status`)
gather counts from their own databases and hand them here, so the report has one shape and
neither backend imports the other.
"""

from __future__ import annotations

from pathlib import Path

from engine.files.store import Store
from engine.indexing.budget import budget_note


def stale_among(store: Store, known: list[str]) -> list[str]:
    """Those of the state rows ``known`` whose memory file no longer exists in the store."""
    return [p for p in known if not is_file(store.root / p)]


def is_file(path: Path) -> bool:
    """Whether ``path`` is a file; False for a path the system refuses (longer than it
    allows), which no memory can have."""
    try:
        return path.is_file()
    except OSError:
        return False


def vectors_note(pending: int, chunks: int) -> str | None:
    """How far the vectors are and what fills the rest, for a person or an agent deciding
    whether to wait: a client that starts a server per call (and kills it) never lets that
    server fill them, so the note names what does. None when nothing is missing."""
    if pending <= 0:
        return None
    return (
        f"{pending:,} of {chunks:,} chunks have no vector yet: searches find them by full text "
        "only until `memsift index` embeds them, or a long-lived `memsift serve` or "
        "`memsift watch` fills them in the background"
    )


def status_report(
    store: Store,
    *,
    files: int,
    coverage: tuple[int, int],
    full_text_only: tuple[int, int, int],
    model: str | None,
    dimension: int | None,
    databases: tuple[str, str | None],
    known: list[str],
    indexed_at: str | None,
    complete: bool,
    changes: dict[str, int],
    not_walked: list[tuple[str, str]],
    vector_search: str = "exact",
    full_text_search: str = "exact",
) -> dict[str, object]:
    """``status --json``'s keys, the one place they are written, from either backend's facts:
    ``coverage`` is (chunks that get a vector, those with one), ``full_text_only`` (every
    chunk, those past their file's embedding budget without a vector, the budget),
    ``databases`` where the index and the state plane live, ``known`` the paths the state
    plane holds rows for, ``not_walked`` the paths the walk skips with the reason (links,
    special files, bad names, folders it does not enter), ``vector_search`` how the semantic
    arm finds the nearest chunks (exact, or an approximate index named), ``full_text_search``
    which chunks the full-text arm scores (exact, or a team store's champion lists named)."""
    chunks, embedded = coverage
    total, text_only, budget = full_text_only
    pending = chunks - embedded if model is not None else 0
    return {
        "store": str(store.root),
        "files": files,
        "chunks": total,
        "embeddable_chunks": chunks,
        "embedded_chunks": embedded,
        "vector_coverage": round(embedded / chunks, 4) if chunks else None,
        "vectors_pending": pending,
        "vectors_note": vectors_note(pending, chunks),
        "full_text_only_chunks": text_only,
        "embed_chunks_per_file": budget,
        "full_text_only_note": budget_note(text_only, budget) if model is not None else None,
        "model": model,
        "dimension": dimension,
        "vector_search": vector_search,
        "full_text_search": full_text_search,
        "index_db": databases[0],
        "state_db": databases[1],
        "state_rows": len(known),
        "stale_state_rows": stale_among(store, known),
        "indexed_at": indexed_at,
        "last_run_complete": complete,
        "changed_since_index": any(changes.values()) or not complete,
        "changes": changes,
        "not_walked": [{"path": path, "reason": reason} for path, reason in not_walked],
    }
