"""The SQLite backend (:class:`engine.backend.Backend`): the index in ``.memsift/index.db``."""

from __future__ import annotations

import threading
from collections.abc import Callable

from engine.files.store import Store
from engine.indexing.embedder import Embedder
from engine.indexing.pipeline import IndexReport, Preparsed, Progress
from engine.ranking.scope import Scope
from engine.sqlite import incremental, indexer, state, status
from engine.sqlite.indexdb import indexed_content_hash
from engine.sqlite.search import SqliteSearch
from engine.state_rules import Access


class SqliteBackend:
    """A store's databases as SQLite files under its ``.memsift/`` folder."""

    name = "sqlite"
    target = None

    def prepare_index(self, store: Store) -> None:
        indexer.prepare(store)

    def index_run(
        self,
        store: Store,
        embedder: Embedder | None,
        progress: Progress | None,
        report: IndexReport,
    ) -> IndexReport:
        return indexer.index_run(store, embedder, progress, report)

    def index_keys(
        self,
        store: Store,
        wanted: list[str],
        embedder: Embedder | None,
        report: IndexReport,
        preparsed: Preparsed | None,
        *,
        create: bool = True,
    ) -> IndexReport:
        return incremental.index_keys(store, wanted, embedder, report, preparsed, create=create)

    def indexed_under(self, store: Store, prefixes: list[str]) -> set[str]:
        return incremental.indexed_under(store, prefixes)

    def fill_missing(
        self,
        store: Store,
        embedder: Embedder,
        *,
        stop: threading.Event | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> int | None:
        return incremental.fill_missing(store, embedder, stop=stop, progress=progress)

    def status(self, store: Store) -> dict[str, object]:
        return status.store_status(store)

    def recent_rows(self, store: Store, scope: Scope, limit: int) -> list[tuple[object, ...]]:
        return status.recent_rows(store, scope, limit)

    def content_hash(self, store: Store, key: str) -> str | None:
        return indexed_content_hash(store.index_path, key)

    def open_search(self, store: Store) -> SqliteSearch:
        return SqliteSearch(store)

    def check_owner(self, store: Store, doing: str, key: str | None = None) -> None:
        """A store's own folder holds its SQLite files: no other store can write them."""

    def record_access(self, store: Store, path: str, content_hash: str | None) -> Access:
        return state.record_access(store, path, content_hash)

    def reinforce(
        self, store: Store, path: str, outcome: int, content_hash: str | None
    ) -> Access:
        return state.reinforce(store, path, outcome, content_hash)

    def lookup(self, store: Store, path: str) -> Access:
        return state.lookup(store, path)

    def state_paths(self, store: Store) -> list[str]:
        return state.state_paths(store)

    def prune(self, store: Store, paths: list[str]) -> int:
        return state.prune(store, paths)


SQLITE = SqliteBackend()
