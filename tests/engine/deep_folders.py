"""Make and remove chains of folders too deep for ordinary path calls.

A chain 1,000 folders deep, or one whose path is longer than the system allows, cannot be made
with ``Path.mkdir(parents=True)`` (a path over 4,096 characters is refused) nor removed with
``shutil.rmtree`` (on Python 3.11 it recurses once per level and dies with ``RecursionError``).
Both helpers here go one level at a time through open folder descriptors (``dir_fd``), holding
at most two open at once, so no path they pass is longer than one name.
"""

from __future__ import annotations

import os
from pathlib import Path

FOLDER = os.O_RDONLY | os.O_DIRECTORY


def make_chain(base: Path, name: str, depth: int, files: dict[int, str] | None = None) -> Path:
    """``depth`` folders called ``name``, each inside the last, under ``base``; ``files`` maps
    a level (1: inside the first folder) to a file name written there. Returns the first one."""
    files = files or {}
    fd = os.open(base, FOLDER)
    try:
        for level in range(1, depth + 1):
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, FOLDER, dir_fd=fd)
            os.close(fd)
            fd = inner
            if level in files:
                write = os.open(files[level], os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
                os.write(write, f"A memory {level} folders deep.\n".encode())
                os.close(write)
    finally:
        os.close(fd)
    return base / name


def remove_tree(top: Path) -> None:
    """Remove ``top`` and everything in it, however deep, without recursing: go down to a
    folder holding no folder, empty it, step up and remove it, until ``top`` itself is empty."""
    if not top.exists():
        return
    fd = os.open(top, FOLDER)
    names: list[str] = []  # the folders from top down to where fd is
    try:
        while True:
            with os.scandir(fd) as listing:
                entries = list(listing)
            inner = next((e.name for e in entries if e.is_dir(follow_symlinks=False)), None)
            if inner is not None:
                child = os.open(inner, FOLDER, dir_fd=fd)
                os.close(fd)
                fd = child
                names.append(inner)
                continue
            for entry in entries:
                os.unlink(entry.name, dir_fd=fd)
            if not names:
                break
            parent = os.open("..", FOLDER, dir_fd=fd)
            os.close(fd)
            fd = parent
            os.rmdir(names.pop(), dir_fd=fd)
    finally:
        os.close(fd)
    top.rmdir()
