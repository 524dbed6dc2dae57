"""Where a store lives, what it is configured to do, and which of its files are memories.

The store is the folder; everything memsift writes goes under ``<store>/.memsift/``. The
configuration file is trusted (it belongs to whoever owns the store): it may set arm weights
and the embedding model, which a search caller never can; :mod:`engine.files.config` reads and
checks it.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from engine.files.config import Config, load_config
from engine.files.memory import MEMORY_SUFFIXES

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "Store",
    "open_store",
]

STATE_DIR = ".memsift"


class StoreError(ValueError):
    """A store that cannot be used as given; the message says what to do."""


@dataclass(frozen=True)
class Store:
    """A memory store: its root folder and its derived and durable databases."""

    root: Path

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    @property
    def index_path(self) -> Path:
        return self.state_dir / "index.db"

    @property
    def state_path(self) -> Path:
        return self.state_dir / "state.db"

    @property
    def config_path(self) -> Path:
        return self.state_dir / "config.toml"

    def config(self) -> Config:
        return load_config(self.config_path)

    def key_of(self, path: Path) -> str:
        """The memory's key: its path relative to the store, with forward slashes."""
        return path.relative_to(self.root).as_posix()


def open_store(root: str | os.PathLike[str] | None = None) -> Store:
    """Resolve the store folder: the argument, else ``MEMSIFT_STORE``, else the current folder."""
    chosen = root if root is not None else os.environ.get("MEMSIFT_STORE") or "."
    path = Path(chosen).expanduser()
    if not path.exists():
        raise StoreError(f"{path}: no such folder; pass --store DIR pointing at your memories")
    if not path.is_dir():
        raise StoreError(f"{path}: not a folder; a store is a folder of memory files")
    store = Store(path.resolve())
    if problem := state_dir_problem(store.state_dir):
        raise StoreError(f"{store.state_dir}: {problem}")
    store.config()  # checked once, up front, whatever the command: a typo is never ignored
    return store


def state_dir_problem(state_dir: Path) -> str | None:
    """Why ``.memsift`` cannot hold the index and the state plane, or None (a folder, a link to
    one, or nothing yet). Each command used to fail on its own way past a file of that name
    (an OS error naming index.db, or advice to run the index that could not run)."""
    if not os.path.lexists(state_dir) or state_dir.is_dir():
        return None
    if state_dir.is_symlink():
        return (
            f"a link to {os.readlink(state_dir)}, which is not a folder; memsift keeps its index "
            "in a folder of this name: point the link at one, or delete it"
        )
    return "a file, where memsift keeps its index in a folder of this name; move the file away"


@dataclass(frozen=True)
class Candidate:
    """A file found by the walk, or a path skipped by it with the reason.

    ``info`` is the file's own ``lstat`` (never a link's target), taken by the walk so a reader
    knows size and mtime without touching the file again."""

    key: str
    path: Path
    skip: str | None = None
    info: os.stat_result | None = None


#: How many folders deep the walk goes below the store folder. A folder deeper than this is
#: skipped, with the reason, as one entry (what it holds is not walked): no hand-made hierarchy
#: comes near it, while a runaway script or a copy of a folder into itself makes chains
#: thousands deep, and 64 folders with names of 60 characters still leave room for the store
#: folder and a file name in the 4,096 characters a path may have on Linux.
MAX_FOLDER_DEPTH = 64

TOO_DEEP = (
    f"folder nested more than {MAX_FOLDER_DEPTH} folders deep (not walked); "
    "move the memories it holds nearer the store folder"
)


def too_deep(folder_key: str) -> bool:
    """Whether the folder at ``folder_key`` is more than :data:`MAX_FOLDER_DEPTH` folders below
    the store folder, counting itself (pure; ``""`` is the store folder)."""
    return folder_key.count("/") + 1 > MAX_FOLDER_DEPTH


def walk(store: Store, under: Path | None = None) -> Iterator[Candidate]:
    """Every memory file under the store (or its folder ``under``), folder by folder, each
    folder's names sorted; symlinks and hidden folders are skipped.

    Symlinks are never followed: a link can point outside the store (leaking files into the
    index) or at its own parent (a loop). Only regular files are memories: a named pipe blocks
    whoever opens it and a device file can be endless, so either is skipped on its ``lstat``,
    before anything opens it. A skipped path is reported, not silently dropped, and so is a name
    that is not valid UTF-8 (it could not be a key in the index), a folder deeper than
    :data:`MAX_FOLDER_DEPTH` and one that cannot be listed (a path longer than the system
    allows, no permission): each is one entry, and what it holds is not walked.

    The walk keeps its own stack of folders to visit instead of recursing (``os.walk`` recurses
    once per level and dies with ``RecursionError`` in a chain of 1,000 folders).
    """
    start = store.root if under is None else under
    pending = [start]
    while pending:
        here = pending.pop()
        if here != store.root and too_deep(store.key_of(here)):
            yield Candidate(printable_key(store, here), here, TOO_DEEP)
            continue
        try:
            entries = listed(here)
        except OSError as exc:
            if here == store.root:
                raise StoreError(
                    f"{here}: cannot list the store folder ({exc.strerror}); "
                    "check that it can be read"
                ) from None
            yield Candidate(printable_key(store, here), here, unlistable(exc))
            continue
        folders = []
        for entry in entries:
            path = here / entry.name
            if entry_is_folder(entry):
                if entry.name.startswith("."):
                    continue
                if problem := name_problem(path, folder_mode(entry)):
                    yield Candidate(printable_key(store, path), path, problem)
                else:
                    folders.append(path)
            elif is_memory_name(entry.name) and (found := file_candidate(store, path)):
                yield found
        pending.extend(reversed(folders))  # popped in name order: depth first, as os.walk goes


def listed(folder: Path) -> list[os.DirEntry[str]]:
    """A folder's entries, sorted by name (raises ``OSError`` when it cannot be listed)."""
    with os.scandir(folder) as entries:
        return sorted(entries, key=lambda entry: entry.name)


def entry_is_folder(entry: os.DirEntry[str]) -> bool:
    """Whether an entry is a folder or a link to one, as ``os.walk`` sorts them: a link to a
    folder is then reported as a link, never walked into."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def folder_mode(entry: os.DirEntry[str]) -> int:
    """The ``lstat`` file type of an entry that is a folder or a link to one, from what the
    listing says (no system call on a path that may be longer than the system takes)."""
    try:
        return stat.S_IFLNK if entry.is_symlink() else stat.S_IFDIR
    except OSError:
        return stat.S_IFDIR  # then listing it fails, and says why


#: The skip reason for a path the system refuses as too long (``ENAMETOOLONG``).
PATH_TOO_LONG = "path is longer than the system allows; shorten its name or those above it"


def unlistable(exc: OSError) -> str:
    """Why a folder could not be listed, worded for the skip."""
    if exc.errno == errno.ENAMETOOLONG:
        return f"folder {PATH_TOO_LONG} (not walked)"
    return f"cannot list this folder: {exc.strerror} (not walked)"


def file_candidate(store: Store, path: Path) -> Candidate | None:
    """A file the walk found, with its ``lstat`` or the reason it is skipped; None when it is
    gone since its folder was listed (nothing to index)."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        reason = (
            PATH_TOO_LONG if exc.errno == errno.ENAMETOOLONG else f"cannot stat: {exc.strerror}"
        )
        return Candidate(printable_key(store, path), path, reason)
    problem = name_problem(path, info.st_mode) or kind_problem(info.st_mode)
    return Candidate(printable_key(store, path), path, problem, None if problem else info)


def is_memory_name(name: str) -> bool:
    """Markdown or HTML, and not hidden."""
    return not name.startswith(".") and Path(name).suffix.lower() in MEMORY_SUFFIXES


def name_problem(path: Path, mode: int | None = None) -> str | None:
    """Why a path cannot be indexed by its name or for being a link (None when it can).

    ``mode`` is the path's ``lstat`` mode when the caller has it (saves a system call)."""
    if stat.S_ISLNK(mode) if mode is not None else path.is_symlink():
        return "symlink (not followed)"
    try:
        path.name.encode("utf-8")
    except UnicodeEncodeError:
        return "file name is not valid UTF-8; rename it"
    return None


#: What a file that is not a regular file is, for the reason it is skipped.
OTHER_KINDS = (
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISLNK, "a symlink"),
)


def kind_problem(mode: int) -> str | None:
    """Why a file of this ``st_mode`` is no memory: only regular files are (None for those)."""
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in OTHER_KINDS if test(mode)), "a special file")
    return f"{kind}, not a regular file (only regular files are memories)"


def printable_key(store: Store, path: Path) -> str:
    """The key, with the undecodable bytes of a bad file name shown as escapes (``bad\\xff.md``).

    A name that is not UTF-8 reaches Python with each bad byte as a lone surrogate; turning it
    back into the file system's bytes first shows the byte the user would see in ``ls -b``."""
    return os.fsencode(store.key_of(path)).decode("utf-8", "backslashreplace")
