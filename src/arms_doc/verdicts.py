"""SQLite's verdict that every statement of a registry prepares, remembered across builds.

Preparing every statement a search can assemble (:mod:`arms_doc.prepare`) is most of the
plugin's own work on a build: each of the 62 statements of a five-arm registry costs SQLite a
millisecond or two to compile. Its verdict depends only on the statements' text, the SQLite
that prepares them (its version, sqlite-vec's, its compile options), the schema they are
prepared against and the rules that judge what SQLite answered. So a build that found no
problem remembers that, under a key made of all of these: in this process (a rebuild of
``mkdocs serve``) and as an empty file in the plugin's private cache folder (the one Jinja
keeps for its bytecode cache, see :func:`cache_folder`), for the next build. A build whose
key matches skips the preparing; any change to a statement, to the schema or to SQLite makes
another key and prepares again. Only a pass is remembered: a registry SQLite refuses is
prepared, and refused, on every build. A folder that cannot be read or written is no cache.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path

from arms_doc.loaded import code_as_loaded

#: Names the cache's files; the rest of the name is the key.
PREFIX = "arms-doc-prepared-"
#: Keys that passed in this process.
_PASSED: set[str] = set()


def verdict_key(parts: Iterable[str]) -> str:
    """A key for the verdict on everything ``parts`` names (statements, schema, rules)."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


def cache_folder() -> Path | None:
    """The plugin's private cache folder, or None when there is no safe one.

    It is the folder Jinja keeps its bytecode cache in (Jinja is there wherever MkDocs is): a
    folder of the user's own in the temporary directory, which Jinja makes private and checks
    (a place that is not a private folder of this user's is no cache). No template is compiled
    into it any more (both pages are written in plain Python); the plugin borrows the folder
    for those checks, and keeps it so that what earlier builds left there is found, not
    orphaned in a folder nothing reads."""
    from jinja2 import FileSystemBytecodeCache

    try:
        return Path(FileSystemBytecodeCache().directory)
    except (OSError, RuntimeError):
        return None


def passed_before(key: str) -> bool:
    """Whether statements with this key were all prepared without a problem before."""
    if key in _PASSED:
        return True
    folder = cache_folder()
    if folder is not None and (folder / f"{PREFIX}{key}").is_file():
        _PASSED.add(key)
        return True
    return False


def remember_passed(key: str) -> None:
    """Remember that statements with this key all prepared; the folder keeps only the latest
    key (the registry's statements as they are now), so it never grows."""
    _PASSED.add(key)
    folder = cache_folder()
    # The key holds the rules' files as they are now; a process whose imported code changed
    # on disk since it started judged by the old rules (see arms_doc.loaded).
    if folder is None or not code_as_loaded():
        return
    with suppress(OSError):  # a full disk, a folder removed meanwhile: the next build prepares
        for old in folder.glob(f"{PREFIX}*"):
            if old.name != f"{PREFIX}{key}":
                old.unlink(missing_ok=True)
        (folder / f"{PREFIX}{key}").touch()


def forget_all() -> None:
    """Forget what this process remembered (for tests: as a new process starts)."""
    _PASSED.clear()
