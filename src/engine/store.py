"""Where a store lives, what it is configured to do, and which of its files are memories.

The store is the folder; everything memsift writes goes under ``<store>/.memsift/``. The
configuration file is trusted (it belongs to whoever owns the store): it may set arm weights
and the embedding model, which a search caller never can; :mod:`engine.config` reads and checks
it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from engine.config import Config, load_config
from engine.memory import MEMORY_SUFFIXES

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
    store.config()  # checked once, up front, whatever the command: a typo is never ignored
    return store


@dataclass(frozen=True)
class Candidate:
    """A file found by the walk, or a path skipped by it with the reason.

    ``info`` is the file's own ``lstat`` (never a link's target), taken by the walk so a reader
    knows size and mtime without touching the file again."""

    key: str
    path: Path
    skip: str | None = None
    info: os.stat_result | None = None


def walk(store: Store) -> Iterator[Candidate]:
    """Every memory file under the store, sorted by key; symlinks and hidden folders are skipped.

    Symlinks are never followed: a link can point outside the store (leaking files into the
    index) or at its own parent (a loop). Only regular files are memories: a named pipe blocks
    whoever opens it and a device file can be endless, so either is skipped on its ``lstat``,
    before anything opens it. A skipped path is reported, not silently dropped, and so is a name
    that is not valid UTF-8 (it could not be a key in the index).
    """
    for dirpath, dirnames, filenames in os.walk(store.root, followlinks=False):
        here = Path(dirpath)
        kept = []
        for name in sorted(dirnames):
            if name.startswith("."):
                continue
            problem = name_problem(here / name)
            if problem:
                yield Candidate(printable_key(store, here / name), here / name, problem)
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            path = here / name
            if not is_memory_name(name):
                continue
            try:
                info = path.lstat()
            except FileNotFoundError:  # gone since the folder was listed: nothing to index
                continue
            except OSError as exc:
                yield Candidate(printable_key(store, path), path, f"cannot stat: {exc.strerror}")
                continue
            problem = name_problem(path, info.st_mode) or kind_problem(info.st_mode)
            yield Candidate(printable_key(store, path), path, problem, None if problem else info)


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
