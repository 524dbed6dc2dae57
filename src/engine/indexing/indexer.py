"""Bring a store's index in step with its files: the entry point of a full run.

The run is one loop for both backends (:mod:`engine.indexing.index_run`) over the backend's writer
(:mod:`engine.sqlite.indexer`, :mod:`engine.pg.indexer`), built from the pure pieces of
:mod:`engine.indexing.pipeline`: a walk, a scan that reads only what changed, chunks keyed by the
hash of their text so nothing is embedded twice, and a report of what changed, moved and was
skipped.
"""

from __future__ import annotations

import os

from engine.backend import open_backend
from engine.files.store import Store, open_store
from engine.indexing.embedder import Embedder, make_embedder
from engine.indexing.pipeline import IndexReport, Progress

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "index_store",
]


def index_store(
    store: Store | str | os.PathLike[str],
    *,
    embed: bool = True,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
) -> IndexReport:
    """Index ``store`` incrementally and return what changed.

    ``embedder`` overrides the configured model (tests, other backends); ``embed=False`` indexes
    lexically only and leaves existing vectors alone.
    """
    if not isinstance(store, Store):
        store = open_store(store)
    backend = open_backend(store)
    backend.prepare_index(store)  # before loading a model for nothing
    if embed and embedder is None:
        embedder = make_embedder(store.config().model)
    if not embed:
        embedder = None
    return backend.index_run(store, embedder, progress, IndexReport())
