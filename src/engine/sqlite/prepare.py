"""Statements prepared on an empty index and never run: SQLite's verdict on SQL, for callers
that must not import the driver.

The docs plugin (:mod:`arms_doc.prepare`) asks whether every statement a search can assemble
from the registry compiles against the engine's own schema. Only SQLite can say, so the empty
index is made here with the engine's DDL, the state plane attached the way a search attaches
it, and each statement is prepared through apsw's ``query_info``, which stops at the exec
tracer apsw calls after preparing and before running: nothing is ever stepped, and only the
first statement of a string is prepared. The plugin gets plain values back and judges them.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import apsw
import apsw.ext

from engine.sqlite.db import ensure_vector_table, open_index, open_state
from engine.sqlite.search import attach_state

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

    def prepare(self, sql: str) -> Prepared:
        """Prepare the first statement of ``sql``, never step it; :class:`Refused` if SQLite
        will not."""
        try:
            info = apsw.ext.query_info(self.connection, sql)
        except apsw.Error as exc:
            raise Refused(str(exc)) from exc
        return Prepared(info.query_remaining or "", info.is_readonly, tuple(info.bindings_names))


@contextmanager
def empty_index(vector_dim: int) -> Iterator[EmptyIndex]:
    """An empty index made by the engine's own DDL, with a vector table ``vector_dim`` wide and
    the state plane attached the way a search attaches it; in a temporary folder that is
    removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="arms-doc-") as folder:
        index_path, state_path = Path(folder) / "index.db", Path(folder) / "state.db"
        conn = open_index(index_path, create=True)
        try:
            ensure_vector_table(conn, vector_dim)
            open_state(state_path).close()
            attach_state(conn, state_path)
            yield EmptyIndex(conn)
        finally:
            conn.close()
