"""The SQLite side of a search: what :func:`engine.search.run_search` asks of ``index.db``.

:class:`SqliteSearch` holds one read connection between searches (so SQLite keeps its prepared
statements and page cache warm), follows an index that a full run replaced (it reopens when
``index.db`` is another file), and attaches ``state.db`` read-only as soon as it exists. Its
errors name the database the failing statement hit: the index's advice ("delete it, it is
rebuilt") must never be given for the durable state plane.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import apsw
import numpy as np

from engine.errors import Database, Problem
from engine.files.store import Store
from engine.indexing.budget import recorded_budget
from engine.indexing.embedder import Embedder
from engine.ranking.contract import MIN_VECTOR_COVERAGE, bind, bound_prefix
from engine.ranking.coverage import COUNT_CAP
from engine.ranking.names import by_position, spread
from engine.ranking.query import QueryTerms, quote
from engine.ranking.scope import Scope
from engine.sqlite import knn
from engine.sqlite.db import attach, guarded, open_index_reader, vector_table_dim
from engine.sqlite.errors import classify
from engine.sqlite.floor import SqliteFloorPlace, probe_best
from engine.sqlite.indexdb import vector_coverage

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "SqliteSearch",
    "attach_state",
    "choose_fts_form",
    "stable_plans",
]


class SqliteSearch:
    """Searches of one store's ``index.db`` (its state plane attached once there is one)."""

    dialect = "sqlite"
    #: A file on this machine never drops a connection between searches.
    lost = False

    def __init__(self, store: Store) -> None:
        self.store = store
        self._conn: apsw.Connection | None = None
        self._key = ""  # the open index's file, as the k-NN names it (engine.sqlite.knn)
        self._identity: tuple[int, int] | None = None
        self._has_state = False
        #: The last verdict on the vector plane, with what it was given: the index's
        #: ``data_version`` and the embedder's name and width (see :meth:`vector_plane_problem`).
        self._plane: tuple[tuple[int, str, int], str | None] | None = None
        #: Whether another connection has written the index since this one's last search by
        #: meaning (its ``data_version`` moved): the vectors the k-NN holds in memory may then
        #: be stale, and nothing is computed ahead on them (:meth:`vector_ahead`).
        self._index_moved = False

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def open(self) -> None:
        """Be ready for a search: connect, or reconnect when ``index.db`` was replaced, and
        attach the state plane if it has appeared since the last search."""
        try:
            info = os.stat(self.store.index_path)
        except FileNotFoundError:
            self.close()
            # Waits while a first run creates the index, else raises IndexMissing with the fix.
            open_index_reader(self.store.index_path).close()
            info = os.stat(self.store.index_path)
        identity = (info.st_dev, info.st_ino)
        if self._conn is None or identity != self._identity:
            self.close()
            self._conn = open_index_reader(self.store.index_path)
            self._key = self._conn.db_filename("main")  # the k-NN's name for the index
            stable_plans(self._conn)
            self._identity, self._has_state, self._plane = identity, False, None
        if not self._has_state:
            self._has_state = attach_state(self._conn, self.store.state_path)

    @property
    def conn(self) -> apsw.Connection:
        if self._conn is None:
            self.open()
        assert self._conn is not None
        return self._conn

    def errors(self) -> AbstractContextManager[None]:
        return search_errors(self.conn, self.store, self._has_state)

    def has_state(self) -> bool:
        return self._has_state

    def vector_search(self) -> str:
        return "exact"  # nearest_chunks compares the query with every vector

    def full_text_search(self) -> str:
        return "exact"  # FTS5 ranks every match (its shortcut is exact, see the fts arm)

    def vector_plane_problem(self, embedder: Embedder) -> str | None:
        """:func:`vector_plane_problem`, asked again only when the index has changed since.

        The verdict reads the index's ``meta`` and schema (two statements, a hundredth of a
        search at 2,000 memories) and only a committed write can change it: SQLite's
        ``data_version`` of this connection moves with every commit another connection makes,
        and this connection only reads."""
        (version,) = self.conn.execute("PRAGMA main.data_version").fetchone()
        key = (int(version), embedder.name, embedder.dim)
        self._index_moved = self._plane is not None and self._plane[0][0] != key[0]
        if self._plane is None or self._plane[0] != key:
            self._plane = (key, vector_plane_problem(self.conn, embedder))
        return self._plane[1]

    def choose_fts_form(self, terms: QueryTerms, scope: Scope) -> tuple[str | None, str | None]:
        return choose_fts_form(self.conn, terms, scope)

    def vector_ahead(self, vector: bytes, candidates: int) -> None:
        """The files nearest ``vector``, found on a worker while the statement's full-text
        arm runs (:func:`engine.sqlite.knn.ahead`). Not after a write: the vectors in memory
        may be stale, and distances on them would be refused by the statement, after taking the
        product's turn from the statement's own (which then loads the new vectors, for the
        next search). :meth:`vector_plane_problem`, asked first, has read whether the index
        moved, so this asks nothing of SQLite."""
        if self._index_moved:
            return
        knn.ahead(self._key, vector, knn.FILES_PER_CANDIDATE * candidates)

    def fetch(
        self,
        sql: str,
        params: tuple[object, ...],
        done: Callable[[list[str], list[tuple[object, ...]]], bool] | None = None,
    ) -> tuple[list[str], list[tuple[object, ...]]]:
        cursor = self.conn.execute(sql, params)
        try:
            columns = [name for name, _ in cursor.get_description()]
        except apsw.ExecutionCompleteError:  # no row at all: the statement has already finished
            return [], []
        if done is None:
            return columns, cursor.fetchall()
        # The rows past the ones wanted are never made into Python values (at 2,000 memories
        # a fused search returns about 200 rows and needs the first ten or so).
        rows: list[tuple[object, ...]] = []
        try:
            for row in cursor:
                rows.append(row)
                if done(columns, rows):
                    break
        finally:
            cursor.close()  # ends the statement, and its read of the index, at once
        return columns, rows

    def hit_chunks(self, file_ids: list[int]) -> dict[int, list[tuple[str, bytes | None]]]:
        return hit_chunks(self.conn, file_ids)

    def scope_has_files(self, scope: Scope) -> bool:
        return scope_has_files(self.conn, scope)

    def chunk_counts(
        self, wanted: list[tuple[str, bool]]
    ) -> tuple[dict[tuple[str, bool], int], int]:
        return chunk_counts(self.conn, wanted)

    def chunk_span(self) -> tuple[int | None, int | None, int]:
        sql = "SELECT min(id), max(id), count(*) FROM chunks"
        low, high, total = self.conn.execute(sql).fetchone()
        return low, high, total

    def sample_texts(self, count: int, span: tuple[int | None, int | None, int]) -> list[str]:
        low, high, total = span
        if by_position(low, high, total, count):
            sql = (
                "SELECT text FROM chunks WHERE id IN (SELECT id FROM (SELECT id, row_number() "
                "OVER (ORDER BY id) - 1 AS n FROM chunks) WHERE n IN (SELECT value FROM "
                "json_each(?)))"
            )
            picks = json.dumps(spread(0, total - 1, count))
        else:
            sql = "SELECT text FROM chunks WHERE id IN (SELECT value FROM json_each(?))"
            picks = json.dumps(spread(low, high, count))
        return [text for (text,) in self.conn.execute(sql, (picks,))]

    def floor_record(self) -> str | None:
        return SqliteFloorPlace(self.conn).floor_record()

    def embedded_chunks(self) -> tuple[str | None, int]:
        return SqliteFloorPlace(self.conn).embedded_chunks()

    def probe_best(self, probes: np.ndarray) -> np.ndarray:
        return probe_best(self.conn, probes)


def stable_plans(conn: apsw.Connection) -> None:
    """Let SQLite plan a search's statements without looking at the values bound to them.

    SQLite reads the value bound to a ``LIMIT ?N`` (every arm has one) while it plans, and
    then marks the statement to be planned again whenever that parameter is bound anew: the
    fused statement, kept prepared between searches, was compiled afresh on every search,
    about 1.3 ms of a 6 ms search at 2,000 memories. With the query planner stability
    guarantee on, the plan depends on the statement's text alone, and a prepared statement
    stays prepared. The rows are the same: a plan decides how they are found, not which.
    """
    conn.config(apsw.SQLITE_DBCONFIG_ENABLE_QPSG, 1)


def vector_plane_problem(conn: apsw.Connection, embedder: Embedder) -> str | None:
    """Why the stored vectors cannot serve this embedder's query vector, or None if they can.

    The indexer records its model before the first vector, so an interrupted first run is
    recognised; vectors of this model under no recorded model (a run killed before that
    existed) are counted too. The reason says how far embedding got and what resumes it.
    """
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    model = meta.get("model")
    if model is None and not has_vectors_of(conn, embedder.name):
        return f"the index holds no vectors yet; run `memsift index` to embed with {embedder.name}"
    if model is not None and model != embedder.name:
        return (
            f"index holds vectors of {model}, configured model is {embedder.name}; "
            "run `memsift index`"
        )
    if vector_table_dim(conn) != embedder.dim:
        return "the index has no vector table for this model yet; run `memsift index`"
    complete = meta.get("complete") == "1" and model is not None
    if complete:
        chunks = int(meta.get("chunks") or 0)
        embedded = int(meta.get("embedded_chunks") or 0)
    else:  # an interrupted run: count for real
        chunks, embedded = vector_coverage(conn, embedder.name, recorded_budget(meta))
    coverage = embedded / chunks if chunks else 1.0
    if coverage >= MIN_VECTOR_COVERAGE:
        return None
    if not complete:
        return (
            f"embedding stopped at {embedded} of {chunks} chunks (an index run was interrupted "
            "or is still running); run `memsift index` to resume it"
        )
    return (
        f"vector coverage {coverage:.2f} is below {MIN_VECTOR_COVERAGE}: {embedded} of {chunks} "
        "chunks embedded; run `memsift index` (without --no-embed) to embed the rest"
    )


def has_vectors_of(conn: apsw.Connection, model: str) -> bool:
    row = conn.execute("SELECT 1 FROM embeddings WHERE model = ? LIMIT 1", (model,)).fetchone()
    return row is not None


def attach_state(conn: apsw.Connection, path: Path) -> bool:
    """Attach ``state.db`` read-only as schema ``state``; False when there is none.

    In a folder nobody may write to it is attached immutable (as
    :func:`engine.sqlite.db.open_reader` opens a database there). Errors name state.db, not
    the index. A file another process has just created and not yet given its table is no state
    plane yet: it is detached again, and the next search looks once more.
    """
    if not path.exists():
        return False
    with guarded(Database.STATE, path):
        try:
            attach(conn, path.as_uri() + "?mode=ro")
        except (apsw.CantOpenError, apsw.ReadOnlyError):
            if Path(f"{path}-wal").exists():
                raise
            attach(conn, path.as_uri() + "?mode=ro&immutable=1")
        table = "SELECT 1 FROM state.sqlite_master WHERE type = 'table' AND name = 'access'"
        if conn.execute(table).fetchone() is None:
            conn.execute("DETACH DATABASE state")
            return False
    return True


@contextmanager
def search_errors(conn: apsw.Connection, store: Store, has_state: bool) -> Iterator[None]:
    """Name the database a failing search statement hit. The statement reads both; damage is
    pinned on state.db only when its own check finds it, so the index's advice ("delete it")
    is never given for the durable database, nor the reverse."""
    try:
        yield
    except apsw.Error as exc:
        database, path = Database.INDEX, store.index_path
        if has_state and classify(exc) is Problem.CORRUPT and state_damaged(conn):
            database, path = Database.STATE, store.state_path
        with guarded(database, path):
            raise


def state_damaged(conn: apsw.Connection) -> bool:
    try:
        rows = conn.execute("PRAGMA state.quick_check").fetchall()
    except apsw.Error:
        return True
    return rows != [("ok",)]


def choose_fts_form(
    conn: apsw.Connection, terms: QueryTerms, scope: Scope
) -> tuple[str | None, str | None]:
    """Bind the all-terms form when some passage (chunk) of a memory in scope holds every term,
    else the any form: the arm ranks memories by their best passage, so the probe asks the same.
    One term is probed too: the two forms are then the same text, but "all" tells the no-answer
    rule that a memory holds every query word, which a word no memory holds must not say."""
    all_form, any_form = terms.all_form(), terms.any_form()
    if all_form is None:
        return None, None
    probe = (
        "SELECT 1 FROM chunks_fts JOIN chunks AS c ON c.id = chunks_fts.rowid "
        f"JOIN files AS f ON f.id = c.file_id WHERE chunks_fts MATCH ?1 AND {scope.sql} LIMIT 1"
    )
    params = bound_prefix(probe, bind({"match": all_form}, scope.values))
    if conn.execute(probe, params).fetchone():
        return all_form, "all"
    return any_form, "any"



def chunk_counts(
    conn: apsw.Connection, wanted: list[tuple[str, bool]]
) -> tuple[dict[tuple[str, bool], int], int]:
    """How many chunks of the whole store hold each word (``(word, True)``: a word starting
    with it), up to :data:`engine.ranking.coverage.COUNT_CAP`, through the full-text index and
    its own tokenizer (so "rotates" counts the chunks holding "rotation"); and how many chunks
    the store has."""
    counts: dict[tuple[str, bool], int] = {}
    for word, prefix in wanted:
        match = quote((word,)) + (" *" if prefix else "")
        counts[(word, prefix)] = conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)",
            (match, COUNT_CAP),
        ).fetchone()[0]
    # Every chunk, as on PostgreSQL: the meta table's "chunks" counts those within the
    # embedding budget, fewer when a file is over it. Counted through an index: under a
    # millisecond at 4,000 chunks.
    return counts, conn.execute("SELECT count(*) FROM chunks").fetchone()[0]


def scope_has_files(conn: apsw.Connection, scope: Scope) -> bool:
    sql = f"SELECT 1 FROM files AS f WHERE {scope.sql} LIMIT 1"
    return conn.execute(sql, bound_prefix(sql, bind({}, scope.values))).fetchone() is not None


def hit_chunks(
    conn: apsw.Connection, file_ids: list[int]
) -> dict[int, list[tuple[str, bytes | None]]]:
    """Every chunk (text, vector) of the hits, in order, fetched in one query."""
    if not file_ids:
        return {}
    marks = ", ".join("?" * len(file_ids))
    found: dict[int, list[tuple[str, bytes | None]]] = {}
    for file_id, text, blob in conn.execute(
        "SELECT c.file_id, c.text, e.vector FROM chunks AS c "
        f"LEFT JOIN embeddings AS e ON e.hash = c.hash WHERE c.file_id IN ({marks}) "
        "ORDER BY c.file_id, c.seq",
        file_ids,
    ):
        found.setdefault(file_id, []).append((text, blob))
    return found
