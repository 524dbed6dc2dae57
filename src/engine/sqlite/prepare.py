"""Statements prepared on an empty index and never run: SQLite's verdict on SQL, for callers
that must not import the driver.

The docs plugin (:mod:`arms_doc.prepare`) asks whether every statement a search can assemble
from the registry compiles against the engine's own schema. Only SQLite can say, so the empty
index is made here, in memory, with the engine's DDL, the state plane attached the way a search
attaches it, and each statement is prepared with an exec tracer that stops it after SQLite
prepared it and before it runs (as ``apsw.ext.query_info`` does, without importing that
module's 2,000 lines into every docs build): nothing is ever stepped, and only the first
statement of a string is prepared. The plugin gets plain values back and judges them.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import apsw

from engine.sqlite.db import (
    STATE_SCHEMA,
    attach,
    connect,
    ensure_vector_table,
    install_index_schema,
)

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "EmptyIndex",
    "Refused",
    "empty_index",
]


class Refused(Exception):
    """SQLite would not prepare the statement; ``str()`` is SQLite's own reason."""


@dataclass(frozen=True)
class Prepared:
    """What SQLite says of the first statement of a string, prepared and not run.

    ``remaining`` is the text after that statement (empty when there is none); ``bindings``
    holds, for each placeholder number from 1 up to the highest the statement uses, the name
    it was written with (``"3"`` for ``?3``, ``"evil"`` for ``:evil``) or None for a number
    no named placeholder took (a bare ``?``, or a gap).
    """

    remaining: str
    readonly: bool
    bindings: tuple[str | None, ...]


class EmptyIndex:
    """An index with the engine's schema and no rows, on which statements are only prepared.

    ``connection`` is there for a test that looks at the tables afterwards (to see that a
    statement was never run); callers prepare through :meth:`prepare`.
    """

    def __init__(self, connection: apsw.Connection) -> None:
        self.connection = connection

    def identity(self) -> str:
        """What SQLite's verdict on a statement depends on besides its text: the SQLite and
        sqlite-vec versions, SQLite's compile options and the schema of both databases as they
        were made. Two indexes with the same identity prepare the same text the same way."""
        versions = self.connection.execute("SELECT sqlite_version(), vec_version()").fetchone()
        options = [row[0] for row in self.connection.execute("PRAGMA compile_options")]
        schema = [
            row[0]
            for row in self.connection.execute(
                "SELECT sql FROM main.sqlite_schema WHERE sql IS NOT NULL UNION ALL "
                "SELECT sql FROM state.sqlite_schema WHERE sql IS NOT NULL"
            )
        ]
        return "\n".join([*map(str, versions or ()), *options, *sorted(schema)])

    def prepare(self, sql: str) -> Prepared:
        """Prepare the first statement of ``sql``, never step it; :class:`Refused` if SQLite
        will not."""
        found: list[Prepared] = []

        def stop(cursor: apsw.Cursor, first: str, bindings: object) -> bool:
            remaining = sql[len(first) :] if len(sql) > len(first) else ""
            found.append(Prepared(remaining, cursor.is_readonly, tuple(cursor.bindings_names)))
            return False  # apsw raises ExecTraceAbort: the statement never runs

        cursor = self.connection.cursor()
        cursor.exec_trace = stop
        try:
            # No values bound (apsw's own marker for that, as query_info passes it).
            cursor.execute(sql, apsw._null_bindings, can_cache=False)
        except apsw.ExecTraceAbort:
            pass
        except apsw.Error as exc:
            raise Refused(str(exc)) from exc
        finally:
            cursor.exec_trace = None
        if not found:  # nothing to prepare (an empty string, a comment): nothing to run
            return Prepared("", True, ())
        return found[0]


@contextmanager
def empty_index(vector_dim: int) -> Iterator[EmptyIndex]:
    """An empty index made by the engine's own DDL, with a vector table ``vector_dim`` wide and
    the state plane attached read-only as ``state``, the way a search attaches it.

    Both databases live in memory (the state plane in SQLite's memdb, so the index's connection
    can attach it by name): nothing is written to disk, where the file system's syncs cost more
    than preparing every statement does.
    """
    state_uri = f"file:/memsift-prepare-{uuid.uuid4().hex}?vfs=memdb"
    state = connect(state_uri)
    try:
        with state:
            state.execute(STATE_SCHEMA)
        conn = connect(":memory:")
        try:
            with conn:
                install_index_schema(conn)
            ensure_vector_table(conn, vector_dim)
            attach(conn, state_uri + "&mode=ro")
            yield EmptyIndex(conn)
        finally:
            conn.close()
    finally:
        state.close()
