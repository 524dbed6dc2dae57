"""The state plane: what the files cannot tell (reads, outcomes), kept apart from the derived
index and never rebuilt, on whichever backend the store uses (:func:`engine.backend.open_backend`:
``state.db`` beside a SQLite index, a table of the team schema on PostgreSQL).

A read is counted and timestamped; an outcome is folded into a moving average in [-1, 1]
(:mod:`engine.state_rules` holds the record and the arithmetic both backends share). A search
never writes here; ``read`` and ``reinforce`` do, and ``memsift state prune`` is the only
deletion.
"""

from __future__ import annotations

from engine.backend import open_backend
from engine.errors import DatabaseError, Problem
from engine.files.store import Store
from engine.state_rules import OUTCOME_ALPHA, Access

__all__ = ["OUTCOME_ALPHA", "Access", "lookup", "prune", "record_access", "record_read",
           "reinforce", "state_paths"]


def record_access(store: Store, path: str, content_hash: str | None = None) -> Access:
    """Count one read of ``path`` now (``content_hash``: what the index holds of it, so the
    row can follow a later rename)."""
    return open_backend(store).record_access(store, path, content_hash)


def reinforce(store: Store, path: str, outcome: int, content_hash: str | None = None) -> Access:
    """Fold an outcome (+1 helped, -1 misled) into ``path``'s score; none is ever lost to a
    concurrent writer."""
    return open_backend(store).reinforce(store, path, outcome, content_hash)


def lookup(store: Store, path: str) -> Access:
    """``path``'s record without counting anything (works in a read-only store)."""
    return open_backend(store).lookup(store, path)


def state_paths(store: Store) -> list[str]:
    """Every path the state plane holds a row for."""
    return open_backend(store).state_paths(store)


def prune(store: Store, paths: list[str]) -> int:
    """Delete the state rows of ``paths`` (only ever on a user's explicit request)."""
    return open_backend(store).prune(store, paths)


def record_read(store: Store, path: str, content_hash: str | None) -> tuple[Access, str | None]:
    """Count one read of ``path``, and say why not when it cannot be counted.

    A read-only store still gives its memories: the access is then not counted and the
    second value names what is read-only. Any other failure is raised (a full disk or a
    damaged state.db needs fixing, not a shrug)."""
    try:
        return record_access(store, path, content_hash), None
    except DatabaseError as exc:
        if exc.problem is not Problem.READ_ONLY:
            raise
        why = f"the access was not counted: {exc.culprit or exc.path} is read-only"
        return lookup(store, path), why
