"""Run one fused search and describe what happened.

The work is one SQL statement (see :mod:`engine.assemble`); this module decides which inputs
exist (query terms, a trustworthy vector plane, a state plane), picks the FTS form with a
one-row probe, binds the numbered tuple, and turns rows into typed hits with snippets. Nothing
is hidden: the result names the arms that fired, the arms dropped and why, the FTS form bound,
and whether the search ran degraded.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import apsw
import numpy as np

from engine.arms import ARMS, Arm
from engine.assemble import RRF_K, assemble, resolve_weights
from engine.backend import open_backend
from engine.contract import MIN_VECTOR_COVERAGE, Available, bind, bound_prefix
from engine.embedder import Embedder, make_embedder, to_blob
from engine.errors import Database, Problem
from engine.query import QueryTerms, sanitize
from engine.scope import Scope, ScopeSpec, build_scope
from engine.sqlite.db import guarded, open_index_reader, vector_table_dim
from engine.sqlite.errors import classify
from engine.sqlite.indexdb import vector_coverage
from engine.store import Config, Store, open_store
from engine.when import query_window

if TYPE_CHECKING:
    from engine.pg.search import PgSearchBackend

DEFAULT_LIMIT = 10
#: How many candidates each query arm offers to the fusion; chosen with the weights (40 and
#: 100 were tried on every evaluation set, and the deeper lists won on each).
CANDIDATE_LIMIT = 100
#: sqlite-vec answers k-NN for k <= 4096 and the vector arm asks for 4 per candidate.
MAX_LIMIT = 1000
SNIPPET_CHARS = 300
MAX_EMBED_QUERY_CHARS = 4000


@dataclass(frozen=True)
class ArmHit:
    rank: int
    contribution: float


@dataclass(frozen=True)
class Hit:
    path: str
    title: str
    kind: str | None
    event_at: str | None
    score: float
    snippet: str
    arms: dict[str, ArmHit]
    #: Cosine similarity of the memory's closest chunk to the query (None: no query vector).
    similarity: float | None = None


@dataclass
class SearchResult:
    """Hits plus an honest account of how they were found."""

    query: str
    hits: list[Hit]
    arms_fired: list[str]
    arms_dropped: dict[str, str]
    fts_form: str | None
    degraded: bool
    scope: str
    empty_scope: bool = False
    notes: list[str] = field(default_factory=list)
    sql: str = ""
    params: tuple[object, ...] = ()
    #: True when nothing found clears the similarity floor: the hits were withheld as noise.
    abstained: bool = False
    #: The best similarity among the hits found (withheld or not), when there was a vector.
    best_similarity: float | None = None
    #: Arms that dropped in the normal course of things (no date in the query, no state plane
    #: yet): listed in arms_dropped, but nothing a user needs warning of.
    routine_drops: tuple[str, ...] = ()
    #: Each arm's name in a user's words, from the registry the search ran with (its
    #: ``label``), so whoever reports a dropped arm needs no list of its own.
    arm_labels: dict[str, str] = field(default_factory=dict)
    #: How the semantic arm found the nearest chunks when it ran: "exact", or "approximate
    #: (...)" through a team store's HNSW index; None when it did not run.
    vector_search: str | None = None

    def to_json(self, *, explain: bool = False) -> dict[str, object]:
        out: dict[str, object] = {
            "query": self.query,
            "hits": [
                {
                    "path": h.path,
                    "title": h.title,
                    "kind": h.kind,
                    "event_at": h.event_at,
                    "score": h.score,
                    "snippet": h.snippet,
                    "similarity": h.similarity,
                    "arms": {
                        name: {"rank": a.rank, "contribution": a.contribution}
                        for name, a in h.arms.items()
                    },
                }
                for h in self.hits
            ],
            "arms_fired": self.arms_fired,
            "arms_dropped": self.arms_dropped,
            "fts_form": self.fts_form,
            "degraded": self.degraded,
            "scope": self.scope,
            "empty_scope": self.empty_scope,
            "abstained": self.abstained,
            "best_similarity": self.best_similarity,
            "vector_search": self.vector_search,
            "notes": self.notes,
        }
        if explain:
            out["sql"] = self.sql
            out["params"] = [shown_param(p) for p in self.params]
        return out


def shown_param(value: object) -> object:
    """A bound value as printable JSON: the query vector becomes a short placeholder."""
    if isinstance(value, bytes):
        return f"<float32[{len(value) // 4}] query vector>"
    return value


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
        chunks, embedded = vector_coverage(conn, embedder.name)
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

    In a folder nobody may write to it is attached immutable (as :func:`engine.db.open_reader`
    opens a database there). Errors name state.db, not the index. A file another process has
    just created and not yet given its table is no state plane yet: it is detached again, and
    the next search looks once more.
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


def attach(conn: apsw.Connection, uri: str) -> None:
    """ATTACH ``uri`` as ``state`` and read its schema (where a damaged file shows)."""
    conn.execute("ATTACH DATABASE ? AS state", (uri,))
    try:
        conn.execute("SELECT count(*) FROM state.sqlite_master").fetchall()
    except apsw.Error:
        conn.execute("DETACH DATABASE state")
        raise


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
    else the any form: the arm ranks memories by their best passage, so the probe asks the same."""
    all_form, any_form = terms.all_form(), terms.any_form()
    if all_form is None:
        return None, None
    if all_form == any_form:
        return all_form, "all"
    probe = (
        "SELECT 1 FROM chunks_fts JOIN chunks AS c ON c.id = chunks_fts.rowid "
        f"JOIN files AS f ON f.id = c.file_id WHERE chunks_fts MATCH ?1 AND {scope.sql} LIMIT 1"
    )
    params = bound_prefix(probe, bind({"match": all_form}, scope.values))
    if conn.execute(probe, params).fetchone():
        return all_form, "all"
    return any_form, "any"


def search(
    store: Store | str | os.PathLike[str],
    query: str,
    *,
    limit: int = DEFAULT_LIMIT,
    scope: ScopeSpec | None = None,
    use_vector: bool = True,
    embedder: Embedder | None = None,
    candidate_limit: int = CANDIDATE_LIMIT,
    weights: dict[str, float] | None = None,
    min_similarity: float | None = None,
) -> SearchResult:
    """Search ``store`` for ``query``; see the module docstring for what the result reports.

    ``weights`` replaces the configured weights (for evaluation; a CLI caller cannot set it).
    ``min_similarity`` replaces the configured abstention floor (0 never abstains).
    One call opens and closes the index; for many searches keep a :class:`Searcher`.
    """
    with Searcher(store, embedder=embedder) as searcher:
        return searcher.search(
            query,
            limit=limit,
            scope=scope,
            use_vector=use_vector,
            candidate_limit=candidate_limit,
            weights=weights,
            min_similarity=min_similarity,
        )


class Searcher:
    """A store held open for many searches: one connection (so SQLite keeps its prepared
    statements and page cache warm) and one embedder. An agent that searches often should keep
    one; the connection follows a rebuilt index (it reopens when ``index.db`` is replaced) and
    attaches the state plane as soon as it exists. Not for use by two threads at once."""

    def __init__(
        self, store: Store | str | os.PathLike[str], *, embedder: Embedder | None = None
    ) -> None:
        self.store = store if isinstance(store, Store) else open_store(store)
        self._embedder = embedder
        self._own_embedder = embedder is None
        self._conn: apsw.Connection | None = None
        self._identity: tuple[int, int] | None = None
        self._has_state = False
        #: A team store's database (None: SQLite under .memsift/, the default).
        self._target = open_backend(self.store).target
        self._pg: PgSearchBackend | None = None

    def __enter__(self) -> Searcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._pg is not None:
            self._pg.close()
            self._pg = None

    def _backend(self) -> tuple[SearchBackend, AbstractContextManager[None]]:
        """Where this search runs and how its errors are named: the store's SQLite index, or
        its team database when the store names one."""
        if self._target is not None:
            from engine.pg.search import PgSearchBackend

            if self._pg is None:
                self._pg = PgSearchBackend(self._target)
            return self._pg, self._pg.errors()
        conn = self._connection()
        backend = SqliteBackend(conn, self._has_state)
        return backend, search_errors(conn, self.store, self._has_state)

    def _connection(self) -> apsw.Connection:
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
            self._identity, self._has_state = identity, False
        if not self._has_state:
            self._has_state = attach_state(self._conn, self.store.state_path)
        return self._conn

    def search(
        self,
        query: str,
        *,
        limit: int = DEFAULT_LIMIT,
        scope: ScopeSpec | None = None,
        use_vector: bool = True,
        candidate_limit: int = CANDIDATE_LIMIT,
        weights: dict[str, float] | None = None,
        min_similarity: float | None = None,
    ) -> SearchResult:
        """Search for ``query``; the same options and result as :func:`search`."""
        if not 1 <= limit <= MAX_LIMIT or not 1 <= candidate_limit <= MAX_LIMIT:
            raise ValueError(f"limit and candidate_limit must be between 1 and {MAX_LIMIT}")
        config = self.store.config()
        if self._own_embedder:  # follow config.toml: another model, or none at all
            current = self._embedder.name if self._embedder else None
            if config.model is None:
                self._embedder = None
            elif current != config.model and use_vector and query.strip():
                self._embedder = make_embedder(config.model)
        for attempt in (1, 2):
            backend, errors = self._backend()
            try:
                with errors:
                    return run_search(
                        backend,
                        config,
                        backend.has_state(),
                        query,
                        limit=limit,
                        scope=scope,
                        use_vector=use_vector,
                        embedder=self._embedder,
                        candidate_limit=candidate_limit,
                        weights=weights,
                        min_similarity=(
                            config.min_similarity if min_similarity is None else min_similarity
                        ),
                    )
            except Exception:
                # A team database that dropped the connection kept since the last search: a
                # search only reads, so it runs once more on a new connection instead of
                # failing an agent's call for the server's restart.
                if attempt == 1 and self._pg is not None and self._pg.lost:
                    continue
                raise
        raise AssertionError("unreachable: the second attempt returns or raises")


class SearchBackend(Protocol):
    """What a search asks of the database it runs on; everything else (the inputs, the
    assembly, the fusion, abstention, the account of what happened) is the same on both."""

    #: The SQL dialect the arms' fragments are taken in (engine.contract.DIALECTS).
    dialect: str

    def has_state(self) -> bool: ...
    def vector_search(self) -> str: ...
    def vector_plane_problem(self, embedder: Embedder) -> str | None: ...
    def choose_fts_form(self, terms: QueryTerms, scope: Scope) -> tuple[str | None, str | None]: ...
    def fetch(
        self, sql: str, params: tuple[object, ...]
    ) -> tuple[list[str], list[tuple[object, ...]]]: ...
    def hit_chunks(self, file_ids: list[int]) -> dict[int, list[tuple[str, bytes | None]]]: ...
    def scope_has_files(self, scope: Scope) -> bool: ...


class SqliteBackend:
    """A search on the store's ``index.db`` (its state plane attached when ``has_state``)."""

    dialect = "sqlite"

    def __init__(self, conn: apsw.Connection, has_state: bool) -> None:
        self.conn = conn
        self._has_state = has_state

    def has_state(self) -> bool:
        return self._has_state

    def vector_search(self) -> str:
        return "exact"  # nearest_chunks compares the query with every vector

    def vector_plane_problem(self, embedder: Embedder) -> str | None:
        return vector_plane_problem(self.conn, embedder)

    def choose_fts_form(self, terms: QueryTerms, scope: Scope) -> tuple[str | None, str | None]:
        return choose_fts_form(self.conn, terms, scope)

    def fetch(
        self, sql: str, params: tuple[object, ...]
    ) -> tuple[list[str], list[tuple[object, ...]]]:
        cursor = self.conn.execute(sql, params)
        try:
            columns = [name for name, _ in cursor.get_description()]
        except apsw.ExecutionCompleteError:  # no row at all: the statement has already finished
            return [], []
        return columns, cursor.fetchall()

    def hit_chunks(self, file_ids: list[int]) -> dict[int, list[tuple[str, bytes | None]]]:
        return hit_chunks(self.conn, file_ids)

    def scope_has_files(self, scope: Scope) -> bool:
        return scope_has_files(self.conn, scope)


def run_search(
    db: SearchBackend,
    config: Config,
    has_state: bool,
    query: str,
    *,
    limit: int,
    scope: ScopeSpec | None,
    use_vector: bool,
    embedder: Embedder | None,
    candidate_limit: int,
    weights: dict[str, float] | None,
    min_similarity: float = 0.0,
) -> SearchResult:
    """One search on an open backend (with a state plane when ``has_state``)."""
    query = clean_text(query)
    spec = clean_scope(scope or ScopeSpec())
    built = build_scope(spec, dialect=db.dialect)
    terms = sanitize(query)
    missing: dict[str, str] = {}
    expected_missing = False
    vector: bytes | None = None
    if not use_vector:
        missing["query_vector"] = "lexical search requested (--no-vector)"
    elif not query.strip():
        missing["query_vector"] = "empty query"
    else:
        if embedder is None:
            missing["query_vector"] = "no embedding model configured (a lexical store)"
            expected_missing = config.model is not None
        elif problem := db.vector_plane_problem(embedder):
            missing["query_vector"] = problem
            expected_missing = True
        else:
            vector = to_blob(embedder.embed([query[:MAX_EMBED_QUERY_CHARS]])[0])
    if not has_state:
        missing["state_plane"] = "no memory has been read or reinforced yet"
    match, form = db.choose_fts_form(terms, built)
    if match is None:
        missing["query_terms"] = "no query terms (nothing searchable in the query text)"
    window = query_window(query, relative=False)
    if window is None:
        missing["query_time"] = "the query names no date or period"
    resolved = resolve_weights(ARMS, config.weights, weights)
    assembly = assemble(
        Available(missing), built.sql, arms=ARMS, weights=resolved, dialect_name=db.dialect
    )
    result = SearchResult(
        query=query,
        hits=[],
        arms_fired=[a.name for a in assembly.fired],
        arms_dropped=dict(assembly.dropped),
        routine_drops=assembly.routine,
        arm_labels={arm.name: arm.label for arm in ARMS},
        fts_form=form if match is not None and "fts" not in assembly.dropped else None,
        degraded=expected_missing,
        scope=spec.describe(),
    )
    if any("query_vector" in arm.needs for arm in assembly.fired):
        result.vector_search = db.vector_search()
    if terms.truncated:
        result.notes.append(f"query cut to its first {len(terms.terms)} terms")
    if not assembly.sql:
        return result
    time_from, time_to = window.bounds() if window else (None, None)
    full = bind(
        {
            "match": match,
            # Each arm must offer at least as many candidates as the caller asked for hits.
            "candidate_limit": max(candidate_limit, limit),
            "limit": limit,
            "query_vector": vector,
            "time_from": time_from,
            "time_to": time_to,
        },
        built.values,
    )
    params = bound_prefix(assembly.sql, full)
    result.sql, result.params = assembly.sql, params
    columns, rows = db.fetch(assembly.sql, params)
    records = [dict(zip(columns, row, strict=True)) for row in rows]
    chunks = db.hit_chunks([r["file_id"] for r in records])
    similarities = {
        r["file_id"]: chunk_similarities(chunks.get(r["file_id"], []), vector) for r in records
    }
    if not abstain(result, min_similarity, similarities):
        result.hits = make_hits(records, chunks, similarities, assembly.fired, resolved, terms)
    if not result.hits and not result.abstained and not db.scope_has_files(built):
        result.empty_scope = True
        result.notes.append(f"no memory is in scope ({spec.describe()})")
    return result


def abstain(
    result: SearchResult, floor: float, similarities: dict[int, np.ndarray | None]
) -> bool:
    """Withhold the hits when none of them is an answer: no memory holds every content word
    of the query (the all-terms form did not bind) and none is as similar to it as the floor.
    ``similarities`` holds each hit's chunks' similarity to the query, by file id; True means
    the hits are withheld (and need no snippets).

    The fused score cannot say this: it is made of ranks, and the semantic arm always has a
    nearest neighbour to rank first, so nonsense gets a top hit with the same score as a real
    answer. Similarity is absolute. The floor is calibrated on the evaluation sets (see the
    Measured page): below it, a top hit is almost never relevant. Without a query vector there
    is no similarity to judge by, and nothing is withheld."""
    best = [round(float(s.max()), 4) for s in similarities.values() if s is not None]
    if not best:
        return False
    result.best_similarity = max(best)
    if result.fts_form == "all" or result.best_similarity >= floor:
        return False
    result.abstained = True
    result.notes.append(
        f"no answer: no memory holds every query word and the closest is "
        f"{result.best_similarity:.2f} similar, under the floor of {floor:.2f} "
        f"({len(similarities)} weaker hit(s) withheld)"
    )
    return True


def clean_text(text: str) -> str:
    """Text SQLite and the tokenizer can take: lone surrogates (a non-UTF-8 command line
    argument arrives as those) become U+FFFD instead of raising deep inside a search."""
    return text.encode("utf-8", "replace").decode("utf-8")


def clean_scope(spec: ScopeSpec) -> ScopeSpec:
    return replace(
        spec,
        kinds=tuple(clean_text(k) for k in spec.kinds),
        tags=tuple(clean_text(t) for t in spec.tags),
        path_prefix=clean_text(spec.path_prefix) if spec.path_prefix else spec.path_prefix,
    )


def scope_has_files(conn: apsw.Connection, scope: Scope) -> bool:
    sql = f"SELECT 1 FROM files AS f WHERE {scope.sql} LIMIT 1"
    return conn.execute(sql, bound_prefix(sql, bind({}, scope.values))).fetchone() is not None


def make_hits(
    records: list[dict[str, Any]],
    chunks: dict[int, list[tuple[str, bytes | None]]],
    similarities: dict[int, np.ndarray | None],
    fired: Sequence[Arm],
    weight_of: dict[str, float],
    terms: QueryTerms,
) -> list[Hit]:
    """Rows of the fused statement (``records``, read by the column names the assembler
    gives them) to hits, with each arm's rank and contribution and the best passage."""
    pattern = word_pattern(terms)
    hits = []
    for r in records:
        arms = {
            arm.name: ArmHit(rank, weight_of[arm.name] / (RRF_K + rank))
            for arm in fired
            if (rank := r[f"{arm.name}_rank"]) is not None
        }
        own = chunks.get(r["file_id"], [])
        near = similarities.get(r["file_id"])
        hits.append(
            Hit(
                r["path"],
                r["title"],
                r["kind"],
                r["event_at"],
                r["score"],
                snippet_for(own, pattern, near),
                arms,
                None if near is None else round(float(near.max()), 4),
            )
        )
    return hits


def chunk_similarities(
    chunks: list[tuple[str, bytes | None]], vector: bytes | None
) -> np.ndarray | None:
    """Cosine similarity of each chunk to the query (vectors are unit length, so dot products),
    computed once per hit for both the snippet and the abstention floor; None when a chunk has
    no vector of the query's width."""
    blobs = [blob for _, blob in chunks]
    if vector is None or not blobs or any(blob is None for blob in blobs):
        return None
    query = np.frombuffer(vector, dtype="<f4")
    matrix = np.frombuffer(b"".join(blobs), dtype="<f4")  # type: ignore[arg-type]
    if matrix.size != query.size * len(blobs):
        return None
    return matrix.reshape(len(blobs), -1) @ query


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


def snippet_for(
    chunks: list[tuple[str, bytes | None]],
    pattern: re.Pattern[str] | None,
    similarities: np.ndarray | None,
) -> str:
    """The best chunk of a hit (closest to the query vector, else most query words), trimmed
    to about SNIPPET_CHARS around its first query word, query words in **bold**."""
    if not chunks:
        return ""
    if len(chunks) == 1:
        best = chunks[0][0]
    elif similarities is not None:
        best = chunks[int(similarities.argmax())][0]
    elif pattern is not None:
        best = max(chunks, key=lambda c: len(pattern.findall(c[0])))[0]
    else:
        best = chunks[0][0]
    return highlight(trim(best, pattern), pattern)


def word_pattern(terms: QueryTerms) -> re.Pattern[str] | None:
    """Words that look like a query word (same start: a crude stand-in for Porter stemming)."""
    stems = sorted(
        {w if len(w) <= 4 else w[: max(4, math.ceil(len(w) * 0.75))] for w in terms.words},
        key=len,
        reverse=True,
    )
    if not stems:
        return None
    return re.compile(r"\b(?:" + "|".join(re.escape(s) for s in stems) + r")\w*", re.IGNORECASE)


def trim(text: str, pattern: re.Pattern[str] | None) -> str:
    text = " ".join(text.split())
    if len(text) <= SNIPPET_CHARS:
        return text
    first = pattern.search(text) if pattern else None
    start = max(0, (first.start() if first else 0) - SNIPPET_CHARS // 4)
    if start:
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < start + 30 else start
    end = start + SNIPPET_CHARS
    if end < len(text):
        space = text.rfind(" ", start, end)
        end = space if space > start + SNIPPET_CHARS // 2 else end
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


def highlight(text: str, pattern: re.Pattern[str] | None) -> str:
    return pattern.sub(lambda m: f"**{m.group(0)}**", text) if pattern else text
