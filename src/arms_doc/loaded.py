"""Whether the code this process imported is still the code on disk.

The generated pages and the statements' verdict are remembered across builds under keys made
of files as they are on disk (:mod:`arms_doc.remembered`, :mod:`arms_doc.verdicts`). A process
keeps the modules it imported, so after an edit to the installed ``arms_doc`` or ``engine``
(a ``mkdocs serve`` left running) it renders and judges with the old code under the new
files' key. What it makes then must stay in the process: kept in the cache folder, it would be
the next build's, run by the new code.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import suppress
from importlib.util import find_spec
from pathlib import Path

#: The imported packages' files (:func:`signatures`) when this process first asked.
_LOADED: list[str] | None = None


def code_as_loaded() -> bool:
    """Whether the installed ``arms_doc`` and ``engine`` packages' files are as they were when
    this process first asked (each build asks, so the first build takes the snapshot)."""
    global _LOADED
    now = [line for folder in imported_folders() for line in signatures(folder)]
    if _LOADED is None:
        _LOADED = now
    return now == _LOADED


def imported_folders() -> list[Path]:
    """The folders of the installed ``arms_doc`` and ``engine`` packages: the code a build
    imports to render the pages."""
    folders: list[Path] = []
    for package in ("arms_doc", "engine"):
        spec = find_spec(package)
        for location in (spec.submodule_search_locations or []) if spec else []:
            folders.append(Path(location))
    return folders


def signatures(folder: Path) -> Iterator[str]:
    """Each file under ``folder`` (bytecode caches left out): path, size, modification time."""
    for current, folders, files in os.walk(folder):
        folders[:] = sorted(name for name in folders if name != "__pycache__")
        for name in sorted(files):
            path = os.path.join(current, name)
            with suppress(OSError):
                found = os.stat(path)
                yield f"{path} {found.st_size} {found.st_mtime_ns}"


def forget() -> None:
    """Forget the snapshot (for tests: as a new process starts)."""
    global _LOADED
    _LOADED = None
