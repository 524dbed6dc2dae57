"""Whose schema is this? A guard against two stores writing one schema of a team database.

A schema does not say which folder it indexes: several machines index one store into it, each
from its own checkout, so no path or machine name can be its owner. What a schema does hold is
its memories' paths and contents. When it holds memories and not one of them is in this folder,
by path or by content, the folder is another store (most often: two stores left at the default
schema under one exported ``MEMSIFT_DATABASE_URL``), and a run would remove the other store's
memories from the index and a prune would delete its access and outcome rows. Both refuse
instead, naming the schema and the fix. One shared path or one shared file content is enough to
proceed: a store whose files were renamed or mostly deleted is still the same store.

Every write asks (:func:`refuse_other_store`): an index run, a prune, and also a remember,
forget, read or reinforce, which would otherwise put a row for a file of this folder into the
other store's index or state plane. A write cannot afford a full comparison, so the proofs that
cost least come first: the memory named is indexed here under the same path, or one of a few
of the schema's paths is a file of this folder; only when neither holds is every path (and
then every file's content) compared. A folder found to be the schema's store is remembered for
the process, so a server asks once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from engine.pg.target import DatabaseTarget, TargetError

if TYPE_CHECKING:
    from engine.files.store import Store
    from engine.pg.driver import PgConnection

#: Paths of the schema looked at before a write compares them all.
SAMPLE_PATHS = 16

#: (schema's place, folder) pairs found to belong together in this process.
_owned: set[tuple[str, str, str]] = set()


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


def refuse_other_store(
    conn: PgConnection, target: DatabaseTarget, store: Store, doing: str, key: str | None = None
) -> None:
    """Raise :class:`ForeignSchema` when the schema ``conn`` reaches holds another store's
    memories, before ``doing`` writes anything (``key``: the memory the write is about, if
    any). Cheap when the folder is the schema's store (see the module docstring)."""
    from engine.files.store import walk
    from engine.pg.indexdb import known_files
    from engine.pg.schema import has_index

    root = store.root
    mark = (target.url, target.schema, str(root))
    if mark in _owned or not has_index(conn):
        return
    if key is not None and (root / key).is_file() and conn.run(
        "SELECT 1 FROM files WHERE path = %s", (key,)
    ).fetchone():
        _owned.add(mark)
        return
    sample = conn.run("SELECT path FROM files LIMIT %s", (SAMPLE_PATHS,)).fetchall()
    if not sample or any((root / path).is_file() for (path,) in sample):
        if sample:
            _owned.add(mark)
        return
    held = known_files(conn)
    refuse_foreign(
        target,
        root,
        held.keys(),
        lambda path: (root / path).is_file(),
        lambda: shares_content(
            (c.path for c in walk(store) if not c.skip),
            {file.content_hash for file in held.values()},
            store.config().max_file_bytes,
        ),
        doing,
    )
    _owned.add(mark)


def check_owner(target: DatabaseTarget, store: Store, doing: str, key: str | None = None) -> None:
    """:func:`refuse_other_store` on a connection of its own, for a write that must be refused
    before it changes a file (remember, forget)."""
    from engine.pg.driver import connect, guarded

    conn = connect(target, readonly=True, vectors=False)
    try:
        with guarded(target):
            refuse_other_store(conn, target, store, doing, key)
    finally:
        conn.close()
