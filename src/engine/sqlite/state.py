"""The SQLite state plane: what the files cannot tell, kept in ``state.db`` and never rebuilt
(:mod:`engine.state` is the entry point on either backend).

A read is counted and timestamped; an outcome (+1 helped, -1 misled) is folded into a moving
average that stays in [-1, 1], so one bad outcome dents a memory without burying it and a
long record outweighs a single event. Rows are keyed by the memory's path; a rename that keeps
the content moves the row with it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

import apsw

from engine.errors import Database
from engine.files.store import Store
from engine.sqlite.db import guarded, has_table, open_state_reader
from engine.sqlite.state_queue import write_state
from engine.state_rules import OUTCOME_ALPHA, Access, Present, now_utc, paths_of, planned_moves

P = ParamSpec("P")
R = TypeVar("R")


def state_errors(func: Callable[Concatenate[Store, P], R]) -> Callable[Concatenate[Store, P], R]:
    """Errors raised while ``func`` uses the store's state.db name state.db (never index.db),
    so the advice fits the durable database."""

    @functools.wraps(func)
    def wrapper(store: Store, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with guarded(Database.STATE, store.state_path):
            return func(store, *args, **kwargs)

    return wrapper


@state_errors
def record_access(store: Store, path: str, content_hash: str | None = None) -> Access:
    """Count one read of ``path`` now (through the process's state queue, so a busy
    state.db makes the read wait its turn, never fail: :mod:`engine.sqlite.state_queue`)."""
    now = now_utc()

    def count(conn: apsw.Connection) -> Access:
        conn.execute(
            """
            INSERT INTO access(path, access_count, last_accessed_at, content_hash)
            VALUES (?, 1, ?, ?)
            ON CONFLICT(path) DO UPDATE SET
                access_count = access_count + 1,
                last_accessed_at = excluded.last_accessed_at,
                content_hash = coalesce(excluded.content_hash, content_hash)
            """,
            (path, now, content_hash),
        )
        return get_access(conn, path)

    return write_state(store.state_path, count)


@state_errors
def reinforce(store: Store, path: str, outcome: int, content_hash: str | None = None) -> Access:
    """Fold an outcome into ``path``'s score in one statement.

    A single UPSERT, applied in the write transaction of the process's state queue
    (:mod:`engine.sqlite.state_queue`), so concurrent reinforcements queue instead of failing, and
    none is lost.
    """
    if outcome not in (-1, 1):
        raise ValueError(f"outcome must be 1 or -1, got {outcome!r}")

    def fold(conn: apsw.Connection) -> Access:
        conn.execute(
            """
            INSERT INTO access(path, access_count, outcome_score, content_hash)
            VALUES (?1, 0, max(-1.0, min(1.0, ?2 * ?3)), ?4)
            ON CONFLICT(path) DO UPDATE SET
                outcome_score = max(-1.0, min(1.0, (1 - ?2) * outcome_score + ?2 * ?3)),
                content_hash = coalesce(excluded.content_hash, content_hash)
            """,
            (path, OUTCOME_ALPHA, outcome, content_hash),
        )
        return get_access(conn, path)

    return write_state(store.state_path, fold)


@state_errors
def lookup(store: Store, path: str) -> Access:
    """``path``'s record without counting anything (read-only; works in a read-only store).
    A state.db another process has just created may not hold its table yet: no record then."""
    if not store.state_path.exists():
        return Access(path, 0, None, 0.0)
    conn = open_state_reader(store.state_path)
    try:
        return get_access(conn, path) if has_table(conn, "access") else Access(path, 0, None, 0.0)
    finally:
        conn.close()


def get_access(conn: apsw.Connection, path: str) -> Access:
    row = conn.execute(
        "SELECT path, access_count, last_accessed_at, outcome_score FROM access WHERE path = ?",
        (path,),
    ).fetchone()
    return Access(*row) if row else Access(path, 0, None, 0.0)


@state_errors
def follow_content(
    store: Store,
    present: Present,
    unique: dict[str, str],
    gone: dict[str, str] | None = None,
    written: dict[str, str] | None = None,
) -> list[tuple[str, str]]:
    """Move the rows of memories that are gone to the file now holding the same content.

    ``present`` tells which paths are in the store, indexed or skipped; ``unique`` maps content
    hash -> path for hashes exactly one indexed file holds; ``gone`` gives the last indexed hash
    of paths this run removed; ``written`` the hash of each file this run (re)indexed, which its
    row takes, so a row always holds the content the index last saw of its file (an edit or a
    forget after a read changes it) and a rename seen by a later run still finds it. A row's
    content is what the index last saw: ``gone``'s hash before the row's own. One mechanism
    covers a rename seen within a run, one whose halves two runs see, and one made while the
    index was deleted or a run was killed. A row never leaves a
    file that still exists (one the index skips, e.g. while its front matter is broken, is not
    gone: moving its history to a copy would lose it), and never lands on a path that has its
    own; when two stale rows hold the content, the one removed in this run moves, and if that
    does not settle it neither does. Returns the (old, new) moves made.
    """
    if not (unique or written) or not store.state_path.exists():
        return []
    gone, written = gone or {}, written or {}
    # A look first, without the write lock: most runs (a remember, an edit of a memory never
    # read) have nothing to change, and a write per run would queue behind every read.
    rows = looked_up(store, lambda conn: rows_concerned(conn, unique, gone))
    stale = stale_hashes(rows, written)
    if not (stale or planned_moves(rows, store.root, present(paths_of(rows)), unique, gone)):
        return []

    # Then again inside the queue's write transaction: the write lock is held from the first
    # read, so a read counted by another process cannot come between.
    def follow(conn: apsw.Connection) -> list[tuple[str, str]]:
        rows = rows_concerned(conn, unique, gone)
        conn.executemany(
            "UPDATE access SET content_hash = ? WHERE path = ?",
            [(digest, path) for path, digest in stale_hashes(rows, written)],
        )
        moves = planned_moves(rows, store.root, present(paths_of(rows)), unique, gone)
        for source, target in moves:
            conn.execute("UPDATE access SET path = ? WHERE path = ?", (target, source))
        return moves

    return write_state(store.state_path, follow)


def looked_up(store: Store, read: Callable[[apsw.Connection], list[R]]) -> list[R]:
    """``read`` on a read-only connection to state.db, taking no lock; [] while another
    process has made the file but not yet its table."""
    conn = open_state_reader(store.state_path)
    try:
        return read(conn) if has_table(conn, "access") else []
    finally:
        conn.close()


def rows_concerned(
    conn: apsw.Connection, unique: dict[str, str], gone: dict[str, str]
) -> list[tuple[str, str | None]]:
    """The (path, content hash) rows a run's moves and hash updates can touch: rows of paths
    gone, rows on the paths content could move to (written files among them), and rows
    holding a content that one file now has."""
    paths = sorted(set(gone) | set(unique.values()))
    return conn.execute(
        "SELECT path, content_hash FROM access WHERE path IN (SELECT value FROM json_each(?1)) "
        "OR content_hash IN (SELECT value FROM json_each(?2))",
        (json.dumps(paths), json.dumps(sorted(unique))),
    ).fetchall()


def stale_hashes(
    rows: list[tuple[str, str | None]], written: dict[str, str]
) -> list[tuple[str, str]]:
    """(path, hash) of each written file whose row does not hold yet what the index saw."""
    return [
        (path, written[path])
        for path, digest in rows
        if path in written and digest != written[path]
    ]


@state_errors
def state_paths(store: Store) -> list[str]:
    """Every path the state plane holds a row for (empty when there is no state.db)."""
    if not store.state_path.exists():
        return []
    conn = open_state_reader(store.state_path)
    try:
        if not has_table(conn, "access"):  # made by another process a moment ago, table next
            return []
        return [row[0] for row in conn.execute("SELECT path FROM access ORDER BY path")]
    finally:
        conn.close()


@state_errors
def prune(store: Store, paths: list[str]) -> int:
    """Delete the state rows of ``paths`` (only ever on a user's explicit request)."""
    if not paths or not store.state_path.exists():
        return 0

    def delete(conn: apsw.Connection) -> int:
        before = conn.total_changes()
        conn.executemany("DELETE FROM access WHERE path = ?", [(p,) for p in paths])
        return conn.total_changes() - before

    return write_state(store.state_path, delete)
