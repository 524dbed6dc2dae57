"""Which problem a SQLite exception stands for: the SQLite backend's side of
:mod:`engine.errors`.

apsw names its failures by SQLite's result codes (``CorruptError``, ``BusyError``, ...), so the
mapping from them to a :class:`~engine.errors.Problem` needs the driver and lives with the
backend that imports it; the advice each problem gets, and the error class every surface
catches, stay in :mod:`engine.errors`, which imports no driver.
"""

from __future__ import annotations

import apsw

from engine.errors import (
    FULL_ERRNOS,
    READ_ONLY_ERRNOS,
    Database,
    DatabaseError,
    Problem,
    detail_of,
)

#: What the SQLite driver raises that no boundary of the engine has named a database for yet.
#: The surfaces (the CLI, the server, the writer) catch these as their last net with a line
#: that says "SQLite:" and asks for a report, without importing the driver themselves.
DRIVER_ERRORS: tuple[type[Exception], ...] = (apsw.Error,)


def classify(exc: BaseException, system_errno: int = 0) -> Problem:
    """The problem an apsw or OS exception stands for.

    ``system_errno`` is the OS error behind a SQLite I/O error when known (apsw's
    ``Connection.system_errno``): a failed write caused by a full disk is a full disk, whatever
    SQLite code it surfaced as.
    """
    if isinstance(exc, apsw.CorruptError | apsw.NotADBError):
        return Problem.CORRUPT
    if isinstance(exc, apsw.ReadOnlyError):
        return Problem.READ_ONLY
    if isinstance(exc, apsw.FullError):
        return Problem.FULL
    if isinstance(exc, apsw.BusyError | apsw.LockedError):
        return Problem.BUSY
    if isinstance(exc, apsw.CantOpenError | apsw.PermissionsError):
        return Problem.CANT_OPEN
    if isinstance(exc, apsw.IOError):
        return Problem.FULL if system_errno in FULL_ERRNOS else Problem.IO
    if isinstance(exc, apsw.SQLError) and str(exc).startswith("no such table"):
        return Problem.EMPTY
    if isinstance(exc, OSError):
        if exc.errno in FULL_ERRNOS:
            return Problem.FULL
        if exc.errno in READ_ONLY_ERRNOS:
            return Problem.READ_ONLY
        return Problem.IO
    return Problem.OTHER


def from_exception(
    database: Database,
    path: str,
    exc: BaseException,
    *,
    culprit: str | None = None,
    system_errno: int = 0,
) -> DatabaseError:
    """Wrap ``exc``, raised while using ``database`` at ``path``, with its advice."""
    problem = classify(exc, system_errno)
    if problem is Problem.READ_ONLY and culprit is None and isinstance(exc, OSError):
        culprit = exc.filename if isinstance(exc.filename, str) else None
    return DatabaseError(database, path, problem, detail_of(exc), culprit)
