"""The PostgreSQL side of a search: what :func:`engine.search.run_search` asks of a database.

Everything that decides a ranking is shared with SQLite (the inputs, the fused statement from
the arms' PostgreSQL fragments, the scope, the placeholders, abstention and the explanation);
this module only runs the probe, the statement and the lookups around it on a read-only
connection in the store's schema.

The full-text query is the same terms as on SQLite, column prefixes included, written as
``to_tsquery`` text by :mod:`engine.pg.tsquery`: ``&`` between them requires all of them, ``|``
accepts any.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from engine.indexing.budget import recorded_budget
from engine.indexing.embedder import Embedder
from engine.pg.driver import PgConnection, connect, guarded, register_vectors
from engine.pg.floor import PgFloorPlace, probe_best
from engine.pg.indexdb import vector_coverage
from engine.pg.schema import has_hnsw, require_index, require_layout
from engine.pg.target import DatabaseTarget
from engine.pg.tsquery import all_text, any_text
from engine.ranking.contract import MIN_VECTOR_COVERAGE, bind, bound_prefix
from engine.ranking.coverage import COUNT_CAP
from engine.ranking.names import by_position, spread
from engine.ranking.query import QueryTerms
from engine.ranking.scope import Scope
from engine.ranking.words import token_text

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "PgSearchBackend",
]

#: Does some chunk in scope hold every term? (The SQLite probe's question, in PostgreSQL.)
PROBE = (
    "SELECT 1 FROM chunks AS c JOIN files AS f ON f.id = c.file_id "
    "WHERE c.terms @@ to_tsquery('memsift', CAST(?1 AS text)) AND {scope} LIMIT 1"
)


class PgSearchBackend:
    """Searches of one team store, on one read-only connection kept open between them."""

    dialect = "postgresql"

    def __init__(self, target: DatabaseTarget) -> None:
        self.target = target
        self._conn: PgConnection | None = None
        #: Whether the open connection has served a whole search (it was good once).
        self._served = False
        #: Whether the last search failed because the server had dropped a connection kept
        #: from an earlier search (a restart, an idle timeout, a proxy): nothing about the
        #: search itself, so a searcher runs it again on a new connection.
        self.lost = False

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._served = False

    def open(self) -> None:
        """Nothing to do before a search: :attr:`conn` connects on first use."""

    @contextmanager
    def errors(self) -> Iterator[None]:
        """The driver's errors as one line naming the database; a broken connection is
        dropped, so the next search connects again."""
        self.lost = False
        try:
            with guarded(self.target):
                yield
        except Exception:
            conn, served = self._conn, self._served
            self.lost = conn is not None and served and bool(getattr(conn.raw, "broken", False))
            self.close()
            raise
        self._served = self._conn is not None

    @property
    def conn(self) -> PgConnection:
        if self._conn is None:
            conn = connect(self.target, readonly=True, vectors=False)
            try:
                require_index(conn)
                require_layout(conn)
                register_vectors(conn.raw, self.target)
                # The width of the walk through an HNSW graph, and the walk goes on until the
                # arm has every row it asked for (without it pgvector stops at ef_search rows).
                conn.run(f"SET hnsw.ef_search = {int(self.target.ef_search)}")
                # Enough memory that the full-text arm's bitmap of matching chunks stays exact
                # on a large store (see engine.files.config.DEFAULT_WORK_MEM).
                conn.run("SELECT set_config('work_mem', %s, false)", (self.target.work_mem,))
                conn.run("SET hnsw.iterative_scan = strict_order")
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def has_state(self) -> bool:
        """Whether any memory has been read or reinforced (the salience arm has rows)."""
        return bool(self.conn.run("SELECT EXISTS (SELECT 1 FROM state_access)").fetchone()[0])

    def vector_search(self) -> str:
        """How the vector arm found its nearest chunks: through the HNSW index when the store
        holds one (whatever the configuration says until the next index run), else exactly."""
        if not has_hnsw(self.conn):
            return "exact"
        return hnsw_description(self.target.ef_search)

    def full_text_search(self) -> str:
        """How the full-text arm chooses the chunks it scores: through the store's champion
        lists once an index run made them (the arm still scans every match when they hold too
        few memories in scope), else exactly."""
        return full_text_description(self.conn)

    def vector_plane_problem(self, embedder: Embedder) -> str | None:
        meta = dict(self.conn.run("SELECT key, value FROM meta").fetchall())
        model = meta.get("model")
        if model is None:
            return (
                f"the index holds no vectors yet; run `memsift index` to embed with {embedder.name}"
            )
        if model != embedder.name or int(meta.get("dim") or 0) != embedder.dim:
            return (
                f"index holds vectors of {model}, configured model is {embedder.name}; "
                "run `memsift index`"
            )
        complete = meta.get("complete") == "1"
        if complete:
            chunks = int(meta.get("chunks") or 0)
            embedded = int(meta.get("embedded_chunks") or 0)
        else:
            chunks, embedded = vector_coverage(self.conn, embedder.name, recorded_budget(meta))
        coverage = embedded / chunks if chunks else 1.0
        if coverage >= MIN_VECTOR_COVERAGE:
            return None
        if not complete:
            return (
                f"embedding stopped at {embedded} of {chunks} chunks (an index run was "
                "interrupted or is still running); run `memsift index` to resume it"
            )
        return (
            f"vector coverage {coverage:.2f} is below {MIN_VECTOR_COVERAGE}: {embedded} of "
            f"{chunks} chunks embedded; run `memsift index` (without --no-embed) to embed the rest"
        )

    def vector_ahead(self, vector: bytes, candidates: int) -> None:
        """Nothing: pgvector computes the distances inside the statement."""

    def choose_fts_form(self, terms: QueryTerms, scope: Scope) -> tuple[str | None, str | None]:
        """As on SQLite: the all-terms form when some chunk in scope holds every term (one
        term is probed too: "all" tells the no-answer rule a memory holds every word)."""
        every, some = all_text(terms), any_text(terms)
        if every is None or some is None:
            return None, None
        probe = PROBE.replace("{scope}", scope.sql)
        if self.conn.execute(probe, bind({"match": every}, scope.values)).fetchone():
            return every, "all"
        return some, "any"

    def fetch(
        self,
        sql: str,
        params: tuple[object, ...],
        done: Callable[[list[str], list[tuple[object, ...]]], bool] | None = None,
    ) -> tuple[list[str], list[tuple[object, ...]]]:
        # ``done`` is not needed here: the server sends every row before the first is read.
        cursor = self.conn.execute(sql, params)
        columns = [column.name for column in cursor.description or ()]
        return columns, cursor.fetchall() if columns else []

    def hit_chunks(self, file_ids: list[int]) -> dict[int, list[tuple[str, bytes | None]]]:
        """Every chunk (text, vector as a float32 blob) of the hits, in order, in one query."""
        if not file_ids:
            return {}
        found: dict[int, list[tuple[str, bytes | None]]] = {}
        for file_id, text, vector in self.conn.run(
            "SELECT c.file_id, c.text, e.vector FROM chunks AS c "
            "LEFT JOIN embeddings AS e ON e.hash = c.hash WHERE c.file_id = ANY(%s) "
            "ORDER BY c.file_id, c.seq",
            (file_ids,),
        ):
            blob = None if vector is None else as_blob(vector)
            found.setdefault(file_id, []).append((text, blob))
        return found

    def scope_has_files(self, scope: Scope) -> bool:
        sql = f"SELECT 1 FROM files AS f WHERE {scope.sql} LIMIT 1"
        params = bound_prefix(sql, bind({}, scope.values))
        return self.conn.execute(sql, params).fetchone() is not None

    def chunk_span(self) -> tuple[int | None, int | None, int]:
        """As on SQLite."""
        low, high, total = self.conn.run("SELECT min(id), max(id), count(*) FROM chunks").fetchone()
        return low, high, total

    def sample_texts(self, count: int, span: tuple[int | None, int | None, int]) -> list[str]:
        """As on SQLite: the chunks' ids are an identity, so evenly spread ids are a sample,
        and where edits freed many of them, evenly spread positions in their order."""
        low, high, total = span
        if by_position(low, high, total, count):
            sql = (
                "SELECT text FROM chunks WHERE id IN (SELECT id FROM (SELECT id, row_number() "
                "OVER (ORDER BY id) - 1 AS n FROM chunks) AS numbered WHERE n = ANY(%s))"
            )
            picks = spread(0, total - 1, count)
        else:
            sql = "SELECT text FROM chunks WHERE id = ANY(%s)"
            picks = spread(low, high, count)
        return [text for (text,) in self.conn.run(sql, (picks,))]

    def chunk_counts(
        self, wanted: list[tuple[str, bool]]
    ) -> tuple[dict[tuple[str, bool], int], int]:
        """As on SQLite, through the chunks' ``terms`` and the store's text search
        configuration (a prefix as ``word:*``), each word folded as the index folded it."""
        counts: dict[tuple[str, bool], int] = {}
        for word, prefix in wanted:
            query = (
                "to_tsquery('memsift', %s)" if prefix else "plainto_tsquery('memsift', %s)"
            )
            folded = token_text(word) or word
            text = f"'{folded}':*" if prefix else folded
            # A word the configuration drops as a stop word makes an empty query: common.
            row = self.conn.run(
                "SELECT CASE WHEN numnode(q) = 0 THEN %s ELSE (SELECT count(*) FROM "
                "(SELECT 1 FROM chunks WHERE terms @@ q LIMIT %s) AS hit) END "
                f"FROM (SELECT {query} AS q) AS asked",
                (COUNT_CAP, COUNT_CAP, text),
            ).fetchone()
            counts[(word, prefix)] = int(row[0]) if row else 0
        total = self.conn.run("SELECT count(*) FROM chunks").fetchone()
        return counts, int(total[0]) if total else 0

    def floor_record(self) -> str | None:
        return PgFloorPlace(self.conn).floor_record()

    def embedded_chunks(self) -> tuple[str | None, int]:
        return PgFloorPlace(self.conn).embedded_chunks()

    def probe_best(self, probes: np.ndarray) -> np.ndarray:
        return probe_best(self.conn, probes)


def full_text_description(conn: PgConnection) -> str:
    """What the full-text arm's pre-selection is on this store, in the words status and search
    print: "exact" until champion lists exist, for a word or more."""
    from engine.pg.champions import description

    return description(conn)


def hnsw_description(ef_search: int) -> str:
    """What a search through the HNSW index is, in the words status and search print."""
    return f"approximate (pgvector HNSW index, hnsw.ef_search = {ef_search})"


def as_blob(vector: object) -> bytes:
    """A pgvector value as the float32 blob the shared code compares (sqlite-vec's form)."""
    values = vector.to_numpy() if hasattr(vector, "to_numpy") else vector
    return np.asarray(values, dtype="<f4").tobytes()
