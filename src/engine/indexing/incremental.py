"""Index a few named files now, without walking the store, and fill missing vectors behind.

What ``remember``, ``forget`` and a watcher call: :func:`index_paths` brings the rows of exactly
the keys given in step with their files (a key whose file is gone, unusable or skipped loses
its row, as a full run would do), :func:`fill_missing` embeds the chunks still without a vector
a small batch at a time, and :func:`indexed_under` says what a folder that went away stood
for. Each is its backend's (:mod:`engine.sqlite.incremental`, :mod:`engine.pg.incremental`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from engine.backend import open_backend
from engine.files.store import Store
from engine.indexing.embedder import Embedder
from engine.indexing.pipeline import IndexReport, Preparsed, wanted_keys

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "index_paths",
]


def index_paths(
    store: Store,
    keys: Iterable[str],
    *,
    embedder: Embedder | None = None,
    preparsed: Preparsed | None = None,
    create: bool = True,
) -> IndexReport:
    """Bring the index rows of exactly ``keys`` in step with their files, and return what changed.

    With ``embedder``, the chunks of the files written get their vectors before this returns
    (when the index's vectors are of the same model; otherwise they are left to a full run,
    which switches models cleanly). A file the caller has just parsed (``preparsed``, checked
    against the bytes read) is not parsed again. ``create=False`` (a watcher) writes only into
    an index that exists, and raises :class:`engine.errors.IndexMissing` rather than make one
    (with ``.memsift/``) under a deletion, or one holding only ``keys``.
    """
    wanted = wanted_keys(store, keys)
    report = IndexReport()
    if not wanted:
        return report
    return open_backend(store).index_keys(
        store, wanted, embedder, report, preparsed, create=create
    )


def indexed_under(store: Store, folders: Iterable[str]) -> set[str]:
    """The indexed keys inside ``folders`` (store-relative folder names): what a folder that
    went away stood for. Empty before the first index run."""
    prefixes = [f"{folder}/" for folder in folders]
    if not prefixes:
        return set()
    return open_backend(store).indexed_under(store, prefixes)


def fill_missing(
    store: Store,
    embedder: Embedder,
    *,
    stop: threading.Event | None = None,
    progress: Callable[[int], None] | None = None,
) -> int | None:
    """Embed every chunk of the index that lacks a vector, a small batch at a time, recording
    coverage as it rises. Returns how many were embedded, or None when the index holds another
    model's vectors (the caller then runs a full index, which switches models cleanly)."""
    return open_backend(store).fill_missing(store, embedder, stop=stop, progress=progress)
