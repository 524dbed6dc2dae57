"""The one rule that turns a path someone typed into a memory of the store.

Every surface that names a memory (``memsift read``/``reinforce``/``forget``, the MCP tools and
resources, the write path) asks :func:`resolve_memory`, so the same text names the same file
everywhere. A path is taken exactly as given: a leading or trailing space is part of a file's
name (``" lead.md"`` is not ``lead.md``), Unicode is not normalised (two spellings of ``é`` are
two names to the file system), and nothing is looked up relative to the current folder, which
would let one spelling name two files. What the rule tolerates changes no file it names: ``./``
and repeated slashes, and an absolute path inside the store. It refuses what could: ``..``
(which a symlinked folder makes mean something else than its text), any symlink on the way,
hidden folders, names that are not Markdown/HTML, and anything but a regular file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath

from engine.files.reading import missing_because
from engine.files.store import Store, is_memory_name, kind_problem


class PathRefused(ValueError):
    """A path that names no memory of the store; the message quotes it and says why."""


def shown(given: str) -> str:
    """``given`` quoted so that what the user cannot see is visible: spaces at either end,
    control characters, bytes that are not UTF-8 (shown as escapes)."""
    try:  # a name that is not UTF-8 reaches Python with its bytes as surrogate escapes
        text = os.fsencode(given).decode("utf-8", "backslashreplace")
    except UnicodeError:  # a lone surrogate of JSON's "\ud800" kind: no bytes at all
        text = given.encode("utf-8", "backslashreplace").decode("utf-8")
    if text != text.strip() or not text.isprintable():
        return repr(text)
    return text


def name_refusal(parts: tuple[str, ...]) -> str | None:
    """Why a key of these parts cannot be a memory by its name alone (None when it can):
    the rule the walk, the watcher and every command share."""
    if not parts or any(part.startswith(".") for part in parts) or not is_memory_name(parts[-1]):
        return (
            "not a memory (memories are .md/.markdown/.html/.htm files outside hidden folders)"
        )
    return None


def key_parts(store: Store, given: str) -> tuple[str, ...]:
    """The key's parts of ``given``, by text alone (no file is looked at)."""
    if given.startswith("/"):
        for root in (str(store.root), os.path.realpath(store.root)):
            if given == root or given.startswith(root.rstrip("/") + "/"):
                given = given[len(root.rstrip("/")) :]
                break
        else:
            raise PathRefused(
                f"{shown(given)}: not inside the store {store.root}; give a path relative to "
                "the store"
            )
    if given.endswith("/"):
        raise PathRefused(f"{shown(given)}: names a folder, not a memory")
    parts = tuple(part for part in given.split("/") if part not in ("", "."))
    if ".." in parts:
        if os.path.normpath("/".join(parts)).startswith(".."):
            raise PathRefused(
                f"{shown(given)}: not inside the store {store.root}; give a path relative to "
                "the store"
            )
        raise PathRefused(
            f"{shown(given)}: '..' is not followed; give the memory's path relative to the "
            "store, as `memsift list` shows it"
        )
    if not parts:
        raise PathRefused(f"{shown(given)}: names the store itself, not a memory")
    return parts


def resolve_memory(store: Store, given: object) -> tuple[str, Path]:
    """The ``(key, file)`` of the memory ``given`` names: a path relative to the store, or an
    absolute path inside it, taken exactly as given (see the module docstring).

    Raises :class:`PathRefused` naming the path and the
    reason; never an ``OSError``."""
    if not isinstance(given, str) or given == "":
        raise PathRefused("path is empty; give a memory's path relative to the store")
    if "\x00" in given:
        raise PathRefused(f"{shown(given)}: contains a NUL character, which no file name can")
    parts = key_parts(store, given)
    key = "/".join(parts)
    try:
        os.fsencode(key).decode("utf-8")
    except (UnicodeError, ValueError):
        raise PathRefused(
            f"{shown(given)}: the file name is not valid UTF-8, so it cannot be a memory; "
            "rename it"
        ) from None
    if (problem := name_refusal(PurePosixPath(key).parts)) is not None:
        raise PathRefused(f"{shown(given)}: {problem}")
    here = store.root
    for part in parts:
        here = here / part
        try:
            info = here.lstat()
        except OSError as exc:
            raise PathRefused(f"{shown(given)}: {missing_because(exc)}") from None
        if stat.S_ISLNK(info.st_mode):
            raise PathRefused(
                f"{shown(given)}: goes through a symlink; memsift never follows links"
            )
    if (problem := kind_problem(info.st_mode)) is not None:
        raise PathRefused(f"{shown(given)}: {problem}")
    return key, here
