"""The PostgreSQL backend (:class:`engine.backend.Backend`): a store's index and state plane in
one schema of a team database. Every write passes :mod:`engine.pg.ownership`'s guard inside the
functions it calls, so no surface can write another store's schema."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from engine.files.store import Store
from engine.indexing.embedder import Embedder
from engine.indexing.pipeline import IndexReport, Preparsed, Progress
from engine.pg import incremental, indexer, state, status
from engine.pg.ownership import check_owner
from engine.pg.search import PgSearchBackend
from engine.pg.target import DatabaseTarget
from engine.ranking.scope import Scope
from engine.state_rules import Access


@dataclass(frozen=True)
class PgBackend:
    """A store whose databases are one schema of a PostgreSQL database."""

    target: DatabaseTarget
    name: str = "postgresql"

    def prepare_index(self, store: Store) -> None:
        """Nothing to check before the run: its first connection names any problem."""

    def index_run(
        self,
        store: Store,
        embedder: Embedder | None,
        progress: Progress | None,
        report: IndexReport,
    ) -> IndexReport:
        limit = store.config().max_file_bytes
        return indexer.index_to_database(store, self.target, limit, embedder, progress, report)

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
        # The index lives in the database, not in a folder a deletion could be emptying: a
        # missing schema gets its full first run either way.
        return incremental.index_keys(store, self.target, wanted, embedder, report, preparsed)

    def indexed_under(self, store: Store, prefixes: list[str]) -> set[str]:
        return incremental.paths_under(self.target, prefixes)

    def fill_missing(
        self,
        store: Store,
        embedder: Embedder,
        *,
        stop: threading.Event | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> int | None:
        budget = store.config().embed_chunks_per_file
        return incremental.fill_missing(
            self.target, embedder, budget, stop=stop, progress=progress
        )

    def status(self, store: Store) -> dict[str, object]:
        return status.database_status(store, self.target, store.config().model)

    def recent_rows(self, store: Store, scope: Scope, limit: int) -> list[tuple[object, ...]]:
        return status.recent_rows(self.target, scope, limit)

    def content_hash(self, store: Store, key: str) -> str | None:
        return incremental.indexed_content_hash(self.target, key)

    def open_search(self, store: Store) -> PgSearchBackend:
        return PgSearchBackend(self.target)

    def check_owner(self, store: Store, doing: str, key: str | None = None) -> None:
        check_owner(self.target, store, doing, key)

    def record_access(self, store: Store, path: str, content_hash: str | None) -> Access:
        return state.record_access(self.target, store, path, content_hash)

    def reinforce(
        self, store: Store, path: str, outcome: int, content_hash: str | None
    ) -> Access:
        return state.reinforce(self.target, store, path, outcome, content_hash)

    def lookup(self, store: Store, path: str) -> Access:
        return state.lookup(self.target, path)

    def state_paths(self, store: Store) -> list[str]:
        return state.state_paths(self.target)

    def prune(self, store: Store, paths: list[str]) -> int:
        return state.prune(self.target, store, paths)
