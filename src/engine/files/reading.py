"""Reading one memory file without trusting what sits at its path.

A store is a folder anyone may drop things into. A named pipe called ``x.md`` blocks whoever
opens it, a device file (a copy of ``/dev/zero``) never ends, and a file another process keeps
appending to can outgrow the size limit between ``stat`` and ``read``. So: the walk skips what
is not a regular file before anything opens it; the open here never blocks (``O_NONBLOCK``) and
never follows a link (``O_NOFOLLOW``), in case the path was swapped since; the open descriptor
is checked again; and the read stops one byte past the limit, so an oversized file is
recognised without ever being read whole.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from engine.files.store import kind_problem

READ_SIZE = 1 << 20
OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


class Unreadable(Exception):
    """A file that cannot be read as a memory; ``reason`` says why, for a skip or an error."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def over_limit(size: int, limit: int) -> str:
    return (
        f"{size} bytes is over the {limit}-byte limit "
        "([limits] max_file_bytes in .memsift/config.toml)"
    )


def read_regular(path: Path, max_bytes: int) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file at ``path`` and its ``fstat``, read at most once.

    Raises ``Unreadable`` for anything else: a link, a pipe or device, a file over ``max_bytes``
    (also one that grows past it while being read), or an error from the system.
    """
    try:
        fd = os.open(path, OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Unreadable("symlink (not followed)") from None
        raise Unreadable(f"cannot read: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        problem = kind_problem(info.st_mode)
        if problem:
            raise Unreadable(problem)
        if info.st_size > max_bytes:
            raise Unreadable(over_limit(info.st_size, max_bytes))
        parts: list[bytes] = []
        total = 0
        while total <= max_bytes:
            part = os.read(fd, min(READ_SIZE, max_bytes + 1 - total))
            if not part:
                break
            parts.append(part)
            total += len(part)
        if total > max_bytes:
            raise Unreadable(
                f"grew past the {max_bytes}-byte limit while being read "
                "([limits] max_file_bytes in .memsift/config.toml)"
            )
        return b"".join(parts), info
    except OSError as exc:
        raise Unreadable(f"cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)


def missing_because(exc: OSError, lister: str = "search") -> str:
    """Why a path names no memory, from the error its lookup met: a missing file, a folder
    that is a file and a name too long to exist all get the same kind of answer, in words
    (``lister``: the command that lists paths, as the caller's user knows it)."""
    if exc.errno == errno.ENAMETOOLONG:
        return (
            "a name in this path is too long for the file system, so no memory has it; "
            f"{lister} lists paths"
        )
    if isinstance(exc, (FileNotFoundError, NotADirectoryError)):
        return f"no such memory in the store; {lister} lists paths"
    return f"cannot be looked up ({exc.strerror}); {lister} lists paths"
