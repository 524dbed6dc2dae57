"""Where a store keeps its index and state plane, chosen once: :func:`open_backend`.

A store's ``[database]`` configuration (or ``MEMSIFT_DATABASE_URL``) is read here and nowhere
else to decide between the SQLite files under ``.memsift/`` (:mod:`engine.sqlite.backend`) and
a schema of a PostgreSQL database (:mod:`engine.pg.backend`). The rest of the engine asks the
:class:`Backend` it gets for what it needs (an index run, a few keys indexed, vectors filled,
the status, a listing, a memory's indexed content, a session of searches), so a new operation
is one method on each backend, not an ``if`` in every caller, and a rule that guards a
backend's data (a team schema belongs to one store) lives inside that backend, where every
write passes it.

The PostgreSQL side is imported only when a store names a database, so a SQLite store never
loads the driver.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from engine.pg.target import DatabaseTarget, database_target

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    import numpy as np

    from engine.files.store import Store
    from engine.indexing.embedder import Embedder
    from engine.indexing.pipeline import IndexReport, Preparsed, Progress
    from engine.ranking.query import QueryTerms
    from engine.ranking.scope import Scope
    from engine.state_rules import Access


class SearchSession(Protocol):
    """What a search asks of the database it runs on, held open between searches; everything
    else (the inputs, the assembly, the fusion, abstention, the account of what happened) is
    the same on both backends (:func:`engine.search.run_search`)."""

    #: The SQL dialect the arms' fragments are taken in (engine.ranking.contract.DIALECTS).
    dialect: str
    #: Whether the last search failed only because a connection kept from an earlier search
    #: was dropped by the server: a search only reads, so it is run once more.
    lost: bool

    def open(self) -> None:
        """Be ready for the next search (connect, or follow a replaced index)."""

    def errors(self) -> AbstractContextManager[None]:
        """The driver's errors while a search runs, as one line naming the database."""

    def close(self) -> None: ...
    def has_state(self) -> bool: ...
    def vector_search(self) -> str: ...
    def full_text_search(self) -> str: ...
    def vector_plane_problem(self, embedder: Embedder) -> str | None: ...
    def choose_fts_form(self, terms: QueryTerms, scope: Scope) -> tuple[str | None, str | None]: ...
    def vector_ahead(self, vector: bytes, candidates: int) -> None:
        """The statement about to run ranks by ``vector`` (``candidates`` per arm, its
        ``?2``): start what it will ask of it, if anything can be done beside the statement
        (nothing is required: the statement computes what was not)."""
    def fetch(
        self,
        sql: str,
        params: tuple[object, ...],
        done: Callable[[list[str], list[tuple[object, ...]]], bool] | None = None,
    ) -> tuple[list[str], list[tuple[object, ...]]]:
        """The statement's columns and rows; with ``done``, the rows up to the first after
        which ``done(columns, rows_so_far)`` holds (a backend may read further)."""
    def hit_chunks(self, file_ids: list[int]) -> dict[int, list[tuple[str, bytes | None]]]: ...
    def scope_has_files(self, scope: Scope) -> bool: ...
    def chunk_counts(
        self, wanted: list[tuple[str, bool]]
    ) -> tuple[dict[tuple[str, bool], int], int]:
        """Chunks of the whole store holding each word (or, ``True``, a word starting with it),
        capped; and the store's number of chunks (engine.ranking.coverage)."""
    def chunk_span(self) -> tuple[int | None, int | None, int]:
        """The chunks' lowest and highest id and their number: it changes with every chunk
        written or deleted (a new chunk takes a new id), so what was read of a sample of the
        store holds while it stands."""
    def sample_texts(self, count: int, span: tuple[int | None, int | None, int]) -> list[str]:
        """The text of about ``count`` of the store's chunks, evenly spread over it (the
        names it writes: engine.ranking.names), given its :meth:`chunk_span`."""

    # The store floor (engine.floor.FloorPlace): its record, and the probes against the chunks.
    def floor_record(self) -> str | None: ...
    def embedded_chunks(self) -> tuple[str | None, int]: ...
    def probe_best(self, probes: np.ndarray) -> np.ndarray: ...


class Backend(Protocol):
    """What the engine asks of a store's databases."""

    #: "sqlite" or "postgresql".
    name: str
    #: The team database, or None for SQLite.
    target: DatabaseTarget | None

    def prepare_index(self, store: Store) -> None:
        """Refuse an index run that could not write, before a model is loaded for it."""

    def index_run(
        self,
        store: Store,
        embedder: Embedder | None,
        progress: Progress | None,
        report: IndexReport,
    ) -> IndexReport:
        """A full run: walk, scan, write, embed, tidy (see :mod:`engine.indexing.indexer`)."""

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
        """Exactly ``wanted`` (valid keys, sorted) brought in step with their files; without
        ``create``, into an index that exists (else :class:`engine.errors.IndexMissing`)."""

    def indexed_under(self, store: Store, prefixes: list[str]) -> set[str]:
        """The indexed keys starting with one of ``prefixes``."""

    def fill_missing(
        self,
        store: Store,
        embedder: Embedder,
        *,
        stop: threading.Event | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> int | None:
        """Embed the chunks still without a vector; None when the index is another model's."""

    def status(self, store: Store) -> dict[str, object]:
        """``memsift status``'s report (:func:`engine.status_report.status_report`)."""

    def recent_rows(self, store: Store, scope: Scope, limit: int) -> list[tuple[object, ...]]:
        """The newest ``limit`` files rows in ``scope`` (built in this backend's dialect)."""

    def content_hash(self, store: Store, key: str) -> str | None:
        """The content hash the index holds for ``key``, None when it holds none."""

    def open_search(self, store: Store) -> SearchSession:
        """A session for many searches of ``store`` (connected lazily, closed by the caller)."""

    def check_owner(self, store: Store, doing: str, key: str | None = None) -> None:
        """Refuse ``doing`` when the backend's data belongs to another store."""

    def record_access(self, store: Store, path: str, content_hash: str | None) -> Access:
        """Count one read of ``path`` (see :mod:`engine.state`)."""

    def reinforce(
        self, store: Store, path: str, outcome: int, content_hash: str | None
    ) -> Access:
        """Fold an outcome into ``path``'s score."""

    def lookup(self, store: Store, path: str) -> Access:
        """``path``'s record, counting nothing."""

    def state_paths(self, store: Store) -> list[str]:
        """Every path the state plane holds a row for."""

    def prune(self, store: Store, paths: list[str]) -> int:
        """Delete the state rows of ``paths``; how many went."""


def open_backend(store: Store) -> Backend:
    """The backend ``store``'s configuration names (the one place that reads ``[database]``)."""
    target = database_target(store.config())
    if target is None:
        from engine.sqlite.backend import SQLITE

        return SQLITE
    from engine.pg.backend import PgBackend

    return PgBackend(target)
