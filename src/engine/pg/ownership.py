"""Whose schema is this? A guard against two stores writing one schema of a team database.

A schema does not say which folder it indexes: several machines index one store into it, each
from its own checkout, so no path or machine name can be its owner. What a schema does hold is
its memories' paths and contents. When it holds memories and not one of them is in this folder,
by path or by content, the folder is another store (most often: two stores left at the default
schema under one exported ``MEMSIFT_DATABASE_URL``), and a run would remove the other store's
memories from the index and a prune would delete its access and outcome rows. Both refuse
instead, naming the schema and the fix. One shared path or one shared file content is enough to
proceed: a store whose files were renamed or mostly deleted is still the same store.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable
from pathlib import Path

from engine.pg.target import DatabaseTarget, TargetError


class ForeignSchema(TargetError):
    """The schema holds another store's memories."""


def is_foreign(
    held: Collection[str], here: Callable[[str], bool], same_content: Callable[[], bool]
) -> bool:
    """Whether a schema holding ``held`` (its indexed paths) belongs to another store than the
    one for which ``here`` says which paths it has: it holds memories, none of them here, and
    ``same_content`` (asked only then, since it may read the folder) finds no file of the
    folder with the content of one of them."""
    return bool(held) and not any(here(path) for path in held) and not same_content()


def shares_content(files: Iterable[Path], contents: Collection[str], max_bytes: int) -> bool:
    """Whether any of ``files`` (read up to ``max_bytes``; unreadable ones pass) has one of
    the SHA-256 digests ``contents``: stops at the first that does."""
    for path in files:
        try:
            with path.open("rb") as handle:
                data = handle.read(max_bytes + 1)
        except OSError:
            continue
        if len(data) <= max_bytes and hashlib.sha256(data).hexdigest() in contents:
            return True
    return False


def refuse_foreign(
    target: DatabaseTarget,
    root: Path,
    held: Collection[str],
    here: Callable[[str], bool],
    same_content: Callable[[], bool],
    doing: str,
) -> None:
    """Raise :class:`ForeignSchema` when ``held`` is another store's (see :func:`is_foreign`)."""
    if not is_foreign(held, here, same_content):
        return
    example = min(held)
    config = root / ".memsift" / "config.toml"
    raise ForeignSchema(
        f"{target.shown()} holds {len(held)} memories of another store (e.g. {example!r}) and "
        f"none of them is in {root}; {doing} refused, so that store loses nothing. Give this "
        f'store a schema of its own: [database] schema = "..." in {config}'
    )
