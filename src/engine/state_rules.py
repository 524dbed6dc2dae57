"""The state plane's record and arithmetic, the same on every backend.

A read is counted and timestamped; an outcome (+1 helped, -1 misled) is folded into a moving
average that stays in [-1, 1], so one bad outcome dents a memory without burying it and a long
record outweighs a single event. Rows are keyed by the memory's path; a rename that keeps the
content moves the row with it, by the rules of :func:`planned_moves`, which both backends'
``follow_content`` apply.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: How long a state write keeps trying while another process holds the state plane's lock (or,
#: on PostgreSQL, while serialization failures repeat), in seconds: several busy timeouts, so a
#: long transaction elsewhere is waited out, not lost. Both backends' write paths obey it.
WRITE_DEADLINE_S = 60.0
#: Pause between two tries once the database's own wait has run out.
RETRY_PAUSE_S = 0.05

#: Weight of a new outcome in the moving average: the last ~3 outcomes dominate.
OUTCOME_ALPHA = 0.3


@dataclass(frozen=True)
class Access:
    path: str
    access_count: int
    last_accessed_at: str | None
    outcome_score: float


def now_utc() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


#: Which of the given paths are in the store (indexed or skipped): a set for a full run, a
#: query for an incremental one (which must not list a million paths to move one row).
Present = Callable[[list[str]], set[str]]


def within(paths: set[str]) -> Present:
    """``paths`` as a :data:`Present`."""
    return lambda some: paths.intersection(some)


def paths_of(rows: list[tuple[str, str | None]]) -> list[str]:
    return [path for path, _ in rows]


def planned_moves(
    rows: list[tuple[str, str | None]],
    root: Path,
    present: set[str],
    unique: dict[str, str],
    gone: dict[str, str],
) -> list[tuple[str, str]]:
    """The (old, new) path of each state row (``rows``: path, content hash) that follows its
    content to another file, by the rules of :func:`follow_content`; both backends use it."""
    have = {path for path, _ in rows}
    claims: dict[str, list[str]] = {}
    for path, digest in sorted(rows, key=lambda row: row[0]):
        if path in present or os.path.lexists(root / path):
            continue
        target = unique.get(gone.get(path) or digest or "")
        if target is not None and target not in have:
            claims.setdefault(target, []).append(path)
    moves = []
    for target, paths in claims.items():
        if (source := heir(paths, gone)) is not None:
            moves.append((source, target))
    return moves


def heir(paths: list[str], gone: dict[str, str]) -> str | None:
    """Which of the stale rows ``paths`` (all holding one content) a new file inherits.

    A file removed in this very run is the one renamed; an older stale row of the same content
    (a copy deleted earlier) is not, and must not take the new file's place. Two candidates
    alike leave both rows where they are: handing one memory another's history is worse than
    handing it none, and ``memsift prune`` still lists them."""
    if len(paths) > 1:
        paths = [path for path in paths if path in gone]
    return paths[0] if len(paths) == 1 else None
