"""Which database failed and why, in words a user can act on.

A store has two databases with opposite rules: ``index.db`` is derived from the files and may
be deleted and rebuilt at any time; ``state.db`` holds access counts and outcomes that exist
nowhere else. Advice that fits one is harmful for the other ("delete it and re-index" repairs a
damaged index and destroys a damaged state plane), so an error must carry which database it
came from. The engine wraps SQLite's and the OS's exceptions at the boundary where it knows
that (see :func:`engine.sqlite.db.guarded`) into a :class:`DatabaseError`; this module is the
pure mapping from a problem to one line of advice, and imports no database driver, so every
surface (the CLI, the server, the writer) can name and catch these errors on either backend.
Which problem a SQLite exception stands for is the SQLite backend's to say
(:mod:`engine.sqlite.errors`).
"""

from __future__ import annotations

import errno
from enum import Enum


class Database(Enum):
    """The two databases of a store, named by their file."""

    INDEX = "index.db"
    STATE = "state.db"


class Problem(Enum):
    """What went wrong, at the level a user can act on."""

    CORRUPT = "corrupt"
    READ_ONLY = "read-only"
    FULL = "disk full"
    BUSY = "busy"
    INDEXING = "indexing in progress"
    EMPTY = "no index yet"
    CANT_OPEN = "cannot open"
    IO = "I/O error"
    OTHER = "SQLite error"


FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
READ_ONLY_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


def detail_of(exc: BaseException) -> str:
    """The cause in a few words: SQLite's message, or the OS's (without Python's decoration)."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc).strip() or type(exc).__name__


class DatabaseError(Exception):
    """A database of the store could not be used; ``str()`` is the one-line advice.

    ``culprit`` is the file or folder that stops a write (for ``READ_ONLY``), when known.
    """

    def __init__(
        self,
        database: Database,
        path: str,
        problem: Problem,
        detail: str = "",
        culprit: str | None = None,
    ) -> None:
        self.database = database
        self.path = path
        self.problem = problem
        self.detail = detail
        self.culprit = culprit
        super().__init__(explain(database, path, problem, detail, culprit))


ROLE = {
    Database.INDEX: "the derived index",
    Database.STATE: "the durable state plane: access counts and outcomes",
}


def explain(
    database: Database,
    path: str,
    problem: Problem,
    detail: str = "",
    culprit: str | None = None,
) -> str:
    """One line: which database, what went wrong, what to do. Only a damaged index is ever
    advised to be deleted; state.db never is."""
    cause = f" ({detail})" if detail else ""
    named = f"{path} ({ROLE[database]})"
    if problem is Problem.CORRUPT:
        if database is Database.INDEX:
            return (
                f"{named} is damaged{cause}; it is rebuilt from your files: delete it and run "
                "`memsift index` (state.db is separate and kept)"
            )
        return (
            f"{named} is damaged{cause}; it cannot be rebuilt from the files, so do not delete "
            f'it: restore a backup, or salvage its rows with `sqlite3 {path} ".recover" | '
            "sqlite3 recovered.db` and put that copy in its place; index.db is not the cause"
        )
    if problem is Problem.READ_ONLY:
        where = culprit or path
        if database is Database.INDEX:
            return (
                f"{where} is read-only, so {path} cannot be written{cause}; searches, `status` "
                "and `read` still work; make it writable to index the store"
            )
        return (
            f"{where} is read-only, so {named} cannot be written{cause}; make it writable to "
            "record reads and outcomes"
        )
    if problem is Problem.FULL:
        return (
            f"the disk is full: {named} could not be written{cause}; what was saved before "
            "is intact; free some space and run the command again"
        )
    if problem is Problem.BUSY:
        return (
            f"{named} is locked by another process{cause}; another memsift process is "
            "writing, retry when it finishes"
        )
    if problem is Problem.INDEXING:
        return (
            f"{path}: indexing in progress (a first `memsift index` run is creating the "
            "index); retry in a moment"
        )
    if problem is Problem.EMPTY:
        return f"{path} holds no index yet{cause}; run `memsift index`"
    if problem is Problem.CANT_OPEN:
        return f"cannot open {named}{cause}; check that it and its folder exist and are readable"
    if problem is Problem.IO:
        return f"disk I/O error on {named}{cause}; check the disk, then retry"
    return f"{named}: SQLite error{cause}"


class PgError(ValueError):
    """A team-store database that cannot be used; one line naming it, the cause and the fix.

    Defined here, not beside the driver, so a surface can catch it without loading the
    PostgreSQL backend (:mod:`engine.pg.driver` raises it)."""


class IndexMissing(FileNotFoundError):
    """The store has not been indexed yet (on either backend: the message says which index and
    how to make it)."""
