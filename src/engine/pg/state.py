"""The state plane of a team store: the ``state_access`` table of its schema.

The same record and the same arithmetic as :mod:`engine.state` (a read counted and timestamped
in UTC text, an outcome folded into a moving average clamped to [-1, 1]), each a single UPSERT:
PostgreSQL locks the row for the update, so reads and reinforcements from many processes on many
machines queue instead of overwriting each other, and none is lost. One that PostgreSQL rolls
back for a retry (a serialization failure in a database whose default isolation is stricter,
a deadlock) is tried again.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

from engine.files.store import Store
from engine.pg.driver import PgConnection, connect, guarded, psycopg_module
from engine.pg.ownership import refuse_other_store
from engine.pg.schema import ensure_state_plane, own_relation
from engine.pg.target import DatabaseTarget
from engine.state_rules import (
    OUTCOME_ALPHA,
    RETRY_PAUSE_S,
    WRITE_DEADLINE_S,
    Access,
    Present,
    now_utc,
    paths_of,
    planned_moves,
)

SELECT = (
    "SELECT path, access_count, last_accessed_at, outcome_score FROM state_access WHERE path = %s"
)


def get_access(conn: PgConnection, path: str) -> Access:
    row = conn.run(SELECT, (path,)).fetchone()
    return Access(*row) if row else Access(path, 0, None, 0.0)


def record_access(
    target: DatabaseTarget, store: Store, path: str, content_hash: str | None = None
) -> Access:
    """Count one read of ``path`` now (refused in another store's schema)."""
    return upsert(
        target,
        store,
        path,
        """
        INSERT INTO state_access(path, access_count, last_accessed_at, content_hash)
        VALUES (%s, 1, %s, %s)
        ON CONFLICT (path) DO UPDATE SET
            access_count = state_access.access_count + 1,
            last_accessed_at = excluded.last_accessed_at,
            content_hash = coalesce(excluded.content_hash, state_access.content_hash)
        """,
        (path, now_utc(), content_hash),
    )


def reinforce(
    target: DatabaseTarget,
    store: Store,
    path: str,
    outcome: int,
    content_hash: str | None = None,
) -> Access:
    """Fold an outcome into ``path``'s score in one statement (refused in another store's
    schema)."""
    if outcome not in (-1, 1):
        raise ValueError(f"outcome must be 1 or -1, got {outcome!r}")
    return upsert(
        target,
        store,
        path,
        """
        INSERT INTO state_access(path, access_count, outcome_score, content_hash)
        VALUES (%(path)s, 0, greatest(-1.0, least(1.0, %(alpha)s * %(outcome)s)), %(hash)s)
        ON CONFLICT (path) DO UPDATE SET
            outcome_score = greatest(-1.0, least(1.0,
                (1 - %(alpha)s) * state_access.outcome_score + %(alpha)s * %(outcome)s)),
            content_hash = coalesce(excluded.content_hash, state_access.content_hash)
        """,
        {"path": path, "alpha": OUTCOME_ALPHA, "outcome": outcome, "hash": content_hash},
    )


def upsert(target: DatabaseTarget, store: Store, path: str, sql: str, params: object) -> Access:
    """Run one state UPSERT and return ``path``'s record. A store read before its first index
    run has no state table yet: it is made then (alone, not the index), so the read counts.

    Under the default isolation (READ COMMITTED) concurrent UPSERTs of one row queue on its
    lock. A database whose default is REPEATABLE READ or SERIALIZABLE (set by its owner)
    instead rolls one of them back ("could not serialize access"), and a deadlock rolls one
    back under any isolation; PostgreSQL's answer to both is to run the transaction again,
    so it is, until :data:`engine.sqlite.WRITE_DEADLINE_S` has passed."""
    errors = psycopg_module().errors
    deadline = time.monotonic() + WRITE_DEADLINE_S
    conn = connect(target, vectors=False)
    try:
        with guarded(target):
            refuse_other_store(conn, target, store, "counting this read or outcome", path)
            while True:
                try:
                    return upsert_once(conn, path, sql, params, errors.UndefinedTable)
                except (errors.SerializationFailure, errors.DeadlockDetected):
                    if time.monotonic() >= deadline:
                        raise
                    time.sleep(random.uniform(0, RETRY_PAUSE_S))
    finally:
        conn.close()


def upsert_once(
    conn: PgConnection, path: str, sql: str, params: object, missing_table: type[Exception]
) -> Access:
    """One try at an UPSERT's transaction (making the state table first if it is missing)."""
    try:
        with conn:
            conn.run(sql, params)
            return get_access(conn, path)
    except missing_table:
        ensure_state_plane(conn)
    with conn:
        conn.run(sql, params)
        return get_access(conn, path)


def lookup(target: DatabaseTarget, path: str) -> Access:
    """``path``'s record without counting anything."""
    conn = connect(target, readonly=True, vectors=False)
    try:
        with guarded(target):
            if not own_relation(conn, "state_access"):
                return Access(path, 0, None, 0.0)
            return get_access(conn, path)
    finally:
        conn.close()


def state_paths(target: DatabaseTarget) -> list[str]:
    """Every path the state plane holds a row for (empty before the first index run)."""
    conn = connect(target, readonly=True, vectors=False)
    try:
        with guarded(target):
            if not own_relation(conn, "state_access"):
                return []
            return [row[0] for row in conn.run("SELECT path FROM state_access ORDER BY path")]
    finally:
        conn.close()


def prune(target: DatabaseTarget, store: Store, paths: list[str]) -> int:
    """Delete the state rows of ``paths`` (only ever on a user's explicit request); refused
    when the schema's index is another store's (:mod:`engine.pg.ownership`)."""
    if not paths:
        return 0
    conn = connect(target, vectors=False)
    try:
        with guarded(target), conn:
            refuse_other_store(conn, target, store, "pruning")
            cursor = conn.run("DELETE FROM state_access WHERE path = ANY(%s)", (paths,))
            return cursor.rowcount
    finally:
        conn.close()


def follow_content(
    conn: PgConnection,
    root: Path,
    present: Present,
    unique: dict[str, str],
    gone: dict[str, str],
    written: dict[str, str] | None = None,
) -> list[tuple[str, str]]:
    """Keep the rows of ``written`` files on the content the index now holds, and move the rows
    of memories that are gone to the file now holding the same content, by the rules of
    :func:`engine.sqlite.state.follow_content` (a row never leaves a file that still exists, and
    never lands on a path with its own row). Runs inside the caller's transaction."""
    if written:  # one statement: a first run of a million files must not make a million
        paths, digests = zip(*sorted(written.items()), strict=True)
        conn.run(
            "UPDATE state_access AS s SET content_hash = w.digest "
            "FROM unnest(%s::text[], %s::text[]) AS w(path, digest) "
            "WHERE s.path = w.path AND s.content_hash IS DISTINCT FROM w.digest",
            (list(paths), list(digests)),
        )
    if not unique:
        return []
    rows = conn.run(
        "SELECT path, content_hash FROM state_access "
        "WHERE path = ANY(%s) OR content_hash = ANY(%s) FOR UPDATE",
        (sorted(set(gone) | set(unique.values())), sorted(unique)),
    ).fetchall()
    moves = planned_moves(rows, root, present(paths_of(rows)), unique, gone)
    for source, target in moves:
        conn.run("UPDATE state_access SET path = %s WHERE path = %s", (target, source))
    return moves
