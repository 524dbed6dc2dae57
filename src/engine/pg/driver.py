"""Connections to a team store's database, and its errors in one line.

psycopg is imported here and only here, on first use: a store on SQLite never loads it, and a
store naming a database without the ``postgres`` extra installed gets one line saying which
extra to install. Every connection works in the store's schema (``search_path``), so the arms'
SQL names its tables as it does on SQLite, and has pgvector's types registered. A reader's
connection is read-only at the server (``default_transaction_read_only``): a search cannot
write, whatever its SQL.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType, TracebackType
from typing import Any

import numpy as np

from engine.errors import PgError
from engine.pg.target import DatabaseTarget
from engine.ranking.contract import named, pyformat
from engine.redact import hide_passwords_of, redact

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "connect",
]

EXTRA_HINT = "pip install 'memsift[postgres]'"


def psycopg_module() -> ModuleType:
    try:
        import psycopg
    except ImportError:
        raise PgError(
            f"this store names a PostgreSQL database but its driver is not installed; "
            f"run `{EXTRA_HINT}`"
        ) from None
    return psycopg


def failure(target: DatabaseTarget, exc: BaseException) -> PgError:
    """``exc`` of the driver as one line naming the database (never its password: libpq
    quotes the offending token of a URL it cannot parse, and that token may be the password)."""
    hide_passwords_of(target.url)
    text = " ".join(str(exc).split()) or type(exc).__name__
    return PgError(f"{target.shown()}: {redact(text)}")


@contextmanager
def guarded(target: DatabaseTarget) -> Iterator[None]:
    """Turn the driver's errors raised inside into a :class:`PgError` naming ``target``."""
    psycopg = psycopg_module()
    try:
        yield
    except psycopg.Error as exc:
        raise failure(target, exc) from exc


class PgConnection:
    """A connection in a store's schema that speaks the engine's numbered placeholders.

    ``execute`` takes SQL with ``?N`` placeholders and the full numbered tuple (as the SQLite
    path binds them), translated once by :func:`engine.ranking.contract.pyformat`; ``run`` takes
    psycopg's own ``%s`` SQL for the backend's fixed statements. ``with conn:`` is one
    transaction, as with apsw, so callers group writes the same way on both backends.
    """

    def __init__(self, raw: Any, target: DatabaseTarget) -> None:
        self.raw = raw
        self.target = target
        self._transactions: list[Any] = []

    def execute(self, sql: str, params: Sequence[object] = ()) -> Any:
        """Run a statement written with ``?N``; ``params`` is the full numbered tuple."""
        values = {key: pg_value(value) for key, value in named(sql, params).items()}
        return self.raw.execute(pyformat(sql), values)

    def run(self, sql: str, params: Sequence[object] | None = None) -> Any:
        return self.raw.execute(sql, params)

    def many(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        if rows:
            with self.raw.cursor() as cursor:
                cursor.executemany(sql, rows)

    def __enter__(self) -> PgConnection:
        transaction = self.raw.transaction()
        transaction.__enter__()
        self._transactions.append(transaction)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._transactions.pop().__exit__(kind, exc, tb)

    def close(self) -> None:
        self.raw.close()


def pg_value(value: object) -> object:
    """A bound value as PostgreSQL takes it: the query vector (a float32 blob, as sqlite-vec
    takes it) becomes a vector; text loses NUL characters, which PostgreSQL text cannot hold
    (no path or indexed text holds one, so a value with one matches what it matched before)."""
    if isinstance(value, bytes):
        return np.frombuffer(value, dtype="<f4")
    if isinstance(value, str) and "\x00" in value:
        return value.replace("\x00", "\ufffd")
    return value


def connect(
    target: DatabaseTarget, *, readonly: bool = False, vectors: bool = True
) -> PgConnection:
    """A connection working in ``target``'s schema, autocommit outside ``with conn:`` blocks;
    ``vectors=False`` before the schema (and so pgvector) may exist."""
    psycopg = psycopg_module()
    options = f"-c search_path={target.schema},public"
    if readonly:
        options += " -c default_transaction_read_only=on"
    with guarded(target):
        raw = psycopg.connect(target.url, autocommit=True, options=options)
        try:
            if vectors:
                register_vectors(raw, target)
        except BaseException:
            raw.close()
            raise
    return PgConnection(raw, target)


def register_vectors(raw: Any, target: DatabaseTarget) -> None:
    """pgvector's adapters, so a numpy array binds as a vector; the extension must exist."""
    from pgvector.psycopg import register_vector

    found = raw.execute("SELECT 1 FROM pg_type WHERE typname = 'vector'").fetchone()
    if found is None:
        raise PgError(
            f"{target.shown()}: the pgvector extension is not installed in this database; "
            "run `CREATE EXTENSION vector` as its owner (or let `memsift index` do it)"
        )
    register_vector(raw)


@contextmanager
def run_lock(conn: PgConnection) -> Iterator[None]:
    """One index run per store at a time, across machines: a session advisory lock keyed by
    the schema. A second run waits for the first, then finds its work done; the server drops
    the lock if a run's connection dies."""
    key = f"memsift index {conn.target.schema}"
    conn.run("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (key,))
    try:
        yield
    finally:
        conn.run("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (key,))
