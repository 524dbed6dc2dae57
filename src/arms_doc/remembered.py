"""Both generated pages remembered across builds, for as long as nothing they are made from
changes.

Rendering the pages costs a build about a tenth of a second of the plugin's own work: the
results schema's classes (60 of them, made when the module is imported), reading and checking
the results files, assembling the statements, rendering. The pages are a function of what
they are read from, so a build remembers them (with the warnings and notes they came with),
in this process (a rebuild of ``mkdocs serve`` after a docs page was saved) and as a file in
the plugin's private cache folder (the one Jinja keeps for its bytecode cache, borrowed for
its safety checks: see :func:`arms_doc.verdicts.cache_folder`) for the next build, under a key
made of:

- the options (:class:`~arms_doc.pages.Sources`), the Python version and Python-Markdown's
  (its toc extension makes the anchors' slugs); not Jinja's, which renders neither page;
- the registry's and every results file's content, and which results files exist;
- what git says of the registry (the commit, whether the file differs from it), asked on
  every build;
- the code that renders, assembles and prepares, and every module a role can link to: each
  file's size and modification time in the registry's source tree (its packages) and in the
  installed ``arms_doc`` and ``engine`` packages, the modules that write both pages
  (:mod:`arms_doc.arms_markdown`, :mod:`arms_doc.measured_markdown`) included;
- the SQLite that prepared the statements (the files of apsw and sqlite-vec).

Any change to one of these is another key, and the pages are rendered afresh. The folder
keeps the latest pages only. A folder that cannot be read or written is no cache. Pages
rendered by a process whose imported code has changed on disk since it started (a ``mkdocs
serve`` left running while the engine is edited) are made by the old code under the new
code's key: they are kept in that process only (:func:`arms_doc.loaded.code_as_loaded`).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

from arms_doc import loaded
from arms_doc.loaded import code_as_loaded, signatures
from arms_doc.verdicts import cache_folder, verdict_key

#: Names the cache's files; the rest of the name is the key.
PREFIX = "arms-doc-pages-"
#: Bumped when what is stored changes shape.
FORMAT = "1"


@dataclass(frozen=True)
class Stored:
    """What a build remembers of the pages: their Markdown and what to tell."""

    arms: str
    measured: str | None
    warnings: tuple[str, ...]
    notes: tuple[str, ...]


_STORED: dict[str, Stored] = {}


def recall_or_render(key: str, render: Callable[[], Stored]) -> Stored:
    """The pages stored under ``key``, else ``render()``'s, stored for the next build unless
    the code this process imported has changed on disk since (:mod:`arms_doc.loaded`)."""
    as_loaded = code_as_loaded()  # on every build: the first one is the process's snapshot
    if key in _STORED:
        return _STORED[key]
    stored = read_stored(key)
    if stored is None:
        stored = render()
        if as_loaded:
            write_stored(key, stored)
    _STORED.clear()  # one entry: the pages as they are now
    _STORED[key] = stored
    return stored


def pages_key(options: str, registry: Path, results: Path, git: object, code: list[Path]) -> str:
    """The key of the pages rendered from these sources (see the module's docstring)."""
    return verdict_key(key_parts(options, registry, results, git, code))


def key_parts(
    options: str, registry: Path, results: Path, git: object, code: list[Path]
) -> Iterator[str]:
    import markdown

    yield FORMAT
    yield options
    yield sys.version
    yield f"markdown {markdown.__version__}"  # the slugs of the pages' anchors (its toc)
    yield repr(git)
    yield content(registry)
    if results.is_dir():
        for file in sorted(results.glob("*.json")):
            yield f"{file.name}\n{content(file)}"
    for folder in code:
        yield from signatures(folder)
    for package, pattern in (("apsw", "*"), ("sqlite_vec", "vec0.*")):
        yield from library_signatures(package, pattern)


def content(file: Path) -> str:
    """The file's content hashed, or a mark that it cannot be read."""
    try:
        return hashlib.sha256(file.read_bytes()).hexdigest()
    except OSError as exc:
        return f"unreadable {type(exc).__name__}"


def library_signatures(package: str, pattern: str) -> Iterator[str]:
    """The files of an installed package's compiled library, found without importing it."""
    spec = find_spec(package)
    origin = spec.origin if spec is not None else None
    if origin is None:
        yield f"{package} not found"
        return
    folder = Path(origin).parent
    files = [Path(origin)] if package == "apsw" else sorted(folder.glob(pattern))
    for file in files:
        with suppress(OSError):
            found = file.stat()
            yield f"{file} {found.st_size} {found.st_mtime_ns}"


def code_folders(source_root: Path) -> list[Path]:
    """The folders whose files the pages depend on: the packages of the registry's source tree
    (every folder under its root holding an ``__init__.py``) and the installed ``arms_doc``
    and ``engine`` packages."""
    folders: list[Path] = []
    with suppress(OSError):
        folders += [
            entry
            for entry in sorted(source_root.iterdir())
            if entry.is_dir() and (entry / "__init__.py").is_file()
        ]
    folders += loaded.imported_folders()
    unique: list[Path] = []
    for folder in folders:
        resolved = folder.resolve()
        if resolved not in unique:
            unique.append(resolved)
    return unique


def read_stored(key: str) -> Stored | None:
    folder = cache_folder()
    if folder is None:
        return None
    try:
        data = json.loads((folder / f"{PREFIX}{key}.json").read_text(encoding="utf-8"))
        return Stored(
            arms=str(data["arms"]),
            measured=None if data["measured"] is None else str(data["measured"]),
            warnings=tuple(str(w) for w in data["warnings"]),
            notes=tuple(str(n) for n in data["notes"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_stored(key: str, stored: Stored) -> None:
    folder = cache_folder()
    if folder is None:
        return
    data = {
        "arms": stored.arms,
        "measured": stored.measured,
        "warnings": list(stored.warnings),
        "notes": list(stored.notes),
    }
    with suppress(OSError):  # a full disk, a folder removed meanwhile: the next build renders
        for old in folder.glob(f"{PREFIX}*"):
            if old.name != f"{PREFIX}{key}.json":
                old.unlink(missing_ok=True)
        partial = folder / f"{PREFIX}{key}.json.{os.getpid()}"
        partial.write_text(json.dumps(data), encoding="utf-8")
        partial.replace(folder / f"{PREFIX}{key}.json")


def forget_all() -> None:
    """Forget what this process remembered (for tests: as a new process starts)."""
    _STORED.clear()
    loaded.forget()
