"""Run one fused search and describe what happened.

The work is one SQL statement (see :mod:`engine.ranking.assemble`); this module decides which inputs
exist (query terms, a trustworthy vector plane, a state plane), picks the FTS form with a
one-row probe, binds the numbered tuple, and turns rows into typed hits with snippets. Nothing
is hidden: the result names the arms that fired, the arms dropped and why, the FTS form bound,
and whether the search ran degraded.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any
from weakref import WeakKeyDictionary

import numpy as np

from engine.arms import ARMS, AUTHORITY, Arm, Authority
from engine.backend import SearchSession, open_backend
from engine.files.config import similarity_floor, unseen_rule
from engine.files.store import Config, Store, open_store
from engine.floor import choose as choose_floor
from engine.indexing.embedder import Embedder, make_embedder, to_blob
from engine.ranking.arm_rules import reads_query
from engine.ranking.assemble import RRF_K, Assembly, assemble, resolve_weights
from engine.ranking.authority import judge
from engine.ranking.contract import Available, bind, bound_prefix
from engine.ranking.coverage import (
    NEAR,
    WORDS_RULE,
    Coverage,
    carries,
    coverage,
    lookups,
    query_words,
    without,
)
from engine.ranking.floor import Floor
from engine.ranking.names import SAMPLE as NAMES_SAMPLE
from engine.ranking.names import StoreNames, alike, store_names
from engine.ranking.query import QueryTerms, sanitize
from engine.ranking.scope import ScopeSpec, build_scope
from engine.ranking.twins import Candidate, order_twins
from engine.ranking.when import query_window, time_spans

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "CANDIDATE_LIMIT",
    "DEFAULT_LIMIT",
    "MAX_EMBED_QUERY_CHARS",
    "MAX_LIMIT",
    "ArmHit",
    "Hit",
    "SearchResult",
    "Searcher",
    "run_search",
    "search",
]

DEFAULT_LIMIT = 10
#: How many candidates each query arm offers to the fusion; chosen with the weights (40 and
#: 100 were tried on every evaluation set, and the deeper lists won on each).
CANDIDATE_LIMIT = 100
#: The most hits or candidates per arm a caller may ask for: each arm ranks at most this many
#: (the vector arm's k-NN two files per candidate), and each hit costs a snippet.
MAX_LIMIT = 1000
SNIPPET_CHARS = 300
#: What :func:`trim` puts where it cut a text.
ELLIPSIS = "\u2026"
#: The emphasis runs :data:`MARKUP` removes, longest first (see there).
EMPHASIS_RUNS = tuple(re.escape(mark * count) for mark in "*_" for count in (3, 2, 1))
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
    #: Paths of lower-ranked hits that hold the same text (a page's .md and .html copies, a
    #: memory saved twice): folded into this hit instead of taking places of their own.
    copies: list[str] = field(default_factory=list)
    #: The multiplier the memory's own tags gave its fused score (1: none of the registry's
    #: authority signals), and the signals that made it (engine.ranking.authority).
    authority: float = 1.0
    authority_signals: tuple[str, ...] = ()
    #: The path of the near-twin this hit was moved above because that twin negates or marks
    #: as past what this one says (engine.ranking.twins); None when it kept its place.
    above_twin: str | None = None


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
    #: Why they were withheld: "floor" (nothing as similar as the floor) or "coverage" (the
    #: store never saw what the query is about, and nothing is near in meaning).
    withheld_by: str | None = None
    #: The best similarity of any memory in scope to the query (the vector arm's first, among
    #: the hits or not; withheld or not), when there was a vector.
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
    #: How the full-text arm chose the chunks it scored when it ran: "exact" (every chunk
    #: holding a query word), or "pre-selected (...)" through a team store's champion lists
    #: (:mod:`engine.pg.champions`); None when it did not run.
    full_text_search: str | None = None
    #: The abstention floor the search compared its best similarity with, and where it came
    #: from ("store floor 0.37 from 48 probes"); None when none was needed (a memory holds
    #: every query word, or there was no query vector).
    floor: str | None = None

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
                    "copies": h.copies,
                    "authority": {"factor": h.authority, "signals": list(h.authority_signals)},
                    "above_twin": h.above_twin,
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
            "withheld_by": self.withheld_by,
            "best_similarity": self.best_similarity,
            "vector_search": self.vector_search,
            "full_text_search": self.full_text_search,
            "floor": self.floor,
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
    withhold_unseen: bool | str | None = None,
) -> SearchResult:
    """Search ``store`` for ``query``; see the module docstring for what the result reports.

    ``weights`` replaces the configured weights (for evaluation; a CLI caller cannot set it).
    ``min_similarity`` replaces the abstention floor (``[limits] min_similarity``, else the
    store's own; 0 never abstains). ``withhold_unseen`` chooses the coverage test for this
    search: True both its rules (names and words), ``"words"`` the words rule alone, False
    none, None ``[limits] withhold_unseen`` (unset there: both; :mod:`engine.ranking.coverage`).
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
            withhold_unseen=withhold_unseen,
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
        #: Where the searches run: the store's SQLite index or its team database.
        self._session: SearchSession = open_backend(self.store).open_search(self.store)

    def __enter__(self) -> Searcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._session.close()

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
        withhold_unseen: bool | str | None = None,
    ) -> SearchResult:
        """Search for ``query``; the same options and result as :func:`search`."""
        if not 1 <= limit <= MAX_LIMIT or not 1 <= candidate_limit <= MAX_LIMIT:
            raise ValueError(f"limit and candidate_limit must be between 1 and {MAX_LIMIT}")
        if min_similarity is not None and (problem := similarity_floor(min_similarity)):
            raise ValueError(f"min_similarity {min_similarity}: {problem}")  # as config.toml's
        if withhold_unseen is not None and (problem := unseen_rule(withhold_unseen)):
            raise ValueError(f"withhold_unseen {withhold_unseen!r}: {problem}")  # as config.toml's
        config = self.store.config()
        if self._own_embedder:  # follow config.toml: another model, or none at all
            current = self._embedder.name if self._embedder else None
            if config.model is None:
                self._embedder = None
            elif current != config.model and use_vector and query.strip():
                self._embedder = make_embedder(config.model)
        session = self._session
        for attempt in (1, 2):
            session.open()
            try:
                with session.errors():
                    return run_search(
                        session,
                        config,
                        session.has_state(),
                        query,
                        limit=limit,
                        scope=scope,
                        use_vector=use_vector,
                        embedder=self._embedder,
                        candidate_limit=candidate_limit,
                        weights=weights,
                        min_similarity=min_similarity,
                        withhold_unseen=withhold_unseen,
                    )
            except Exception:
                # A team database that dropped the connection kept since the last search: a
                # search only reads, so it runs once more on a new connection instead of
                # failing an agent's call for the server's restart.
                if attempt == 1 and session.lost:
                    continue
                raise
        raise AssertionError("unreachable: the second attempt returns or raises")


def run_search(
    db: SearchSession,
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
    min_similarity: float | None = 0.0,
    withhold_unseen: bool | str | None = None,
) -> SearchResult:
    """One search on an open backend (with a state plane when ``has_state``); the abstention
    floor is ``min_similarity`` when given, else ``config``'s, else the store's own."""
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
    assembly = assembled(
        tuple(missing.items()), built.sql, ARMS, tuple(resolved.items()), db.dialect
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
    # Each arm must offer at least as many candidates as the caller asked for hits.
    offered = max(candidate_limit, limit)
    by_meaning = any("query_vector" in arm.needs for arm in assembly.fired)
    if by_meaning:
        result.vector_search = db.vector_search()
    if any(arm.name == "fts" for arm in assembly.fired):
        result.full_text_search = db.full_text_search()
    if terms.truncated:
        result.notes.append(f"query cut to its first {len(terms.terms)} terms")
    if not assembly.sql:
        return result
    time_from, time_to = window.bounds() if window else (None, None)
    # With a query vector the fused ranking is read past the hits asked for, down to the end
    # of the candidate pool (each arm that reads the query offers ``offered``), so the no-answer
    # rule sees the vector arm's first whatever the limit (see below): the first ``offered``
    # rows alone can all be the words' candidates.
    pool = offered * sum(1 for arm in assembly.fired if reads_query(arm.needs))
    full = bind(
        {
            "match": match,
            "candidate_limit": offered,
            "limit": limit if vector is None else max(pool, limit),
            "query_vector": vector,
            "time_from": time_from,
            "time_to": time_to,
        },
        built.values,
    )
    params = bound_prefix(assembly.sql, full)
    result.sql, result.params = assembly.sql, params
    if vector is not None and by_meaning:
        # Started last, so the worker's Python does not hold up this thread's: from here this
        # thread is in SQLite, which runs without Python's lock.
        db.vector_ahead(vector, offered)
    columns, rows = db.fetch(assembly.sql, params, read_until(limit))
    records = [dict(zip(columns, row, strict=True)) for row in rows[:limit]]
    # The memory nearest in meaning, whether or not it made the hits: whether anything answers
    # is judged by it, as the store's floor was measured (each probe's best over every chunk),
    # so a search answers or not whatever its limit.
    at = columns.index("vector_rank") if "vector_rank" in columns else None
    nearest = [
        dict(zip(columns, row, strict=True))
        for row in (rows[limit:] if at is not None else ())
        if row[at] == 1
    ]
    chunks = db.hit_chunks([r["file_id"] for r in records + nearest])
    similarities = {
        r["file_id"]: chunk_similarities(chunks.get(r["file_id"], []), vector)
        for r in records + nearest
    }
    # A memory is as near as its closest chunk with a vector, as the vector arm ranks it: a
    # file over the embedding budget has chunks without one, and still a similarity. When
    # every chunk has one, that is the best of the similarities just computed.
    closest = {
        r["file_id"]: (
            float(near.max())
            if (near := similarities[r["file_id"]]) is not None and near.size
            else closest_similarity(chunks.get(r["file_id"], []), vector)
        )
        for r in records + nearest
    }
    unseen = config.withhold_unseen if withhold_unseen is None else withhold_unseen
    set_floor = set_floor_text(min_similarity, config)
    if withhold_unseen not in (None, False) and set_floor is not None:
        # asked for by name, and silently not applied, it reads as "nothing was unseen"
        result.notes.append(f"the coverage test does not apply under a {set_floor}")

    def carried(words: Sequence[str]) -> bool:
        """Whether the memory nearest in meaning says ``words`` in other words: taking them
        out of the query makes it no closer (engine.ranking.coverage)."""
        return vector is not None and embedder is not None and nearest_carries(
            query, words, chunks, closest, vector, embedder
        )

    if not abstain(
        result,
        lambda: choose_floor(min_similarity, config.min_similarity, db, embedder),
        closest,
        (
            (lambda: store_coverage(db, query, chunks, respell=unseen != WORDS_RULE))
            if unseen is not False
            else None
        ),
        names=unseen != WORDS_RULE,
        carried=carried,
        hits=len(records),
    ):
        records, above = twin_order(query, records, chunks, similarities)
        hits = make_hits(
            records, chunks, similarities, closest, assembly.fired, resolved, terms, above=above
        )
        ids = {r["path"]: r["file_id"] for r in records}
        result.hits = fold_copies(hits, {path: chunks.get(i, []) for path, i in ids.items()})
    if not result.hits and not result.abstained and not db.scope_has_files(built):
        result.empty_scope = True
        result.notes.append(f"no memory is in scope ({spec.describe()})")
    return result


@lru_cache(maxsize=64)
def assembled(
    missing: tuple[tuple[str, str], ...],
    scope_sql: str,
    arms: tuple[Arm, ...],
    weights: tuple[tuple[str, float], ...],
    dialect: str,
) -> Assembly:
    """The fused statement for these inputs, built once: a searcher asks for the same one
    search after search, and folding the registry each time cost a fiftieth of a search."""
    return assemble(
        Available(dict(missing)), scope_sql, arms=arms, weights=dict(weights), dialect_name=dialect
    )


def read_until(limit: int) -> Callable[[list[str], list[tuple[object, ...]]], bool]:
    """When a search has read enough of the fused statement's rows: the first ``limit``, and
    the semantic arm's first (only one row has ``vector_rank`` 1) wherever it ranked."""
    seen = False

    def done(columns: list[str], rows: list[tuple[object, ...]]) -> bool:
        nonlocal seen
        if "vector_rank" not in columns:
            return len(rows) >= limit
        seen = seen or rows[-1][columns.index("vector_rank")] == 1
        return seen and len(rows) >= limit

    return done


def abstain(
    result: SearchResult,
    floor: Callable[[], Floor],
    closest: dict[int, float | None],
    coverage: Callable[[], Coverage] | None = None,
    *,
    hits: int,
    names: bool = False,
    carried: Callable[[Sequence[str]], bool] | None = None,
) -> bool:
    """Withhold the hits when none of them is an answer: no memory holds every content word
    of the query (the all-terms form did not bind) and either none is as similar to it as the
    floor, or the store has never seen what the query is about (``coverage``: a name it gives,
    or most of its information, in no chunk; :mod:`engine.ranking.coverage`) and none is near
    in meaning. ``closest`` holds each hit's similarity to the query (its closest chunk with a
    vector: :func:`closest_similarity`), by file id;
    ``floor`` gives the floor when it is needed (a store floor may have to be measured); True
    means the hits are withheld (and need no snippets).

    The fused score cannot say this: it is made of ranks, and the semantic arm always has a
    nearest neighbour to rank first, so nonsense gets a top hit with the same score as a real
    answer. Similarity is absolute, but what a query nothing answers reaches depends on the
    store, so the floor is measured on it unless one is set (:mod:`engine.floor`); a floor set
    for the search or in the configuration is the whole rule, so it is not joined by the
    coverage test. Without a query vector there is no similarity to judge by, and nothing is
    withheld.

    ``closest`` also holds the memory nearest in meaning when it ranked below the ``hits``
    returned: the best similarity is the store's (in scope), as each probe's was when the
    store's floor was measured, so ``--limit 1`` and ``--limit 10`` withhold alike."""
    best = [round(s, 4) for s in closest.values() if s is not None]
    if not best:
        return False
    judged: list[Coverage] = []

    def seen() -> Coverage:
        if not judged and coverage is not None:
            judged.append(coverage())
        return judged[0]

    result.best_similarity = max(best)
    if result.fts_form == "all":
        return False
    chosen = floor()
    result.floor = chosen.describe()
    withheld = f"({hits} weaker hit(s) withheld)"
    if result.best_similarity < chosen.value:
        result.withheld_by = "floor"
        result.notes.append(
            f"no answer: no memory holds every query word and the closest is "
            f"{result.best_similarity:.2f} similar, under the {chosen.describe()} {withheld}"
        )
    elif (
        coverage is not None
        and chosen.source in ("store", "default")
        and result.best_similarity < NEAR
        and (why := uncovered(seen(), names, carried)) is not None
    ):
        result.withheld_by = "coverage"
        result.notes.append(
            f"no answer: {why}, and the closest memory is "
            f"{result.best_similarity:.2f} similar, under the {NEAR:.2f} a memory needs to "
            f"answer such a question {withheld}"
        )
    else:
        if judged and judged[0].respelt:
            result.notes.append(respelt_note(judged[0]))
        if judged and judged[0].words_uncovered:  # answered all the same: carried
            words = ", ".join(repr(w) for w in judged[0].unseen)
            result.notes.append(
                f"the store never wrote {words} ({judged[0].unseen_share:.0%} of the query); "
                "the memory nearest in meaning says them otherwise, so it answers"
            )
        return False
    result.abstained = True
    return True


def uncovered(
    seen: Coverage, names: bool, carried: Callable[[Sequence[str]], bool] | None
) -> str | None:
    """Why the coverage test withholds the answer (:mod:`engine.ranking.coverage`), or None:
    with ``names`` a name the store never wrote is enough; otherwise unseen words carrying
    half the query, unless the nearest memory ``carried`` their meaning in other words. A
    name is not judged by the carry check: a store of package docs says what a question about
    Flask or Selenium wants in its own tools' words, and the nearest memory carries them."""
    if names and seen.names_uncovered:
        return seen.describe(names=True)
    if not seen.words_uncovered:
        return None
    if seen.seen and carried is not None and carried(seen.unseen):
        return None
    return seen.describe(names=False)


def nearest_carries(
    query: str,
    words: Sequence[str],
    chunks: dict[int, list[tuple[str, bytes | None]]],
    closest: dict[int, float | None],
    vector: bytes,
    embedder: Embedder,
) -> bool:
    """Whether the chunk nearest the query is no closer to it with ``words`` taken out: it
    says them in other words. One more embedding, only for a query the words rule would
    otherwise silence."""
    known = {i: s for i, s in closest.items() if s is not None}
    if not known:
        return False
    own = [c for c in chunks.get(max(known, key=known.__getitem__), []) if c[1] is not None]
    near = chunk_similarities(own, vector)
    rest = without(query, words)
    if near is None or not rest:
        return False
    best = own[int(near.argmax())]
    other = to_blob(embedder.embed([rest[:MAX_EMBED_QUERY_CHARS]])[0])
    again = chunk_similarities([best], other)
    return again is not None and carries(float(near.max()), float(again[0]))


def twin_order(
    query: str,
    records: list[dict[str, Any]],
    chunks: dict[int, list[tuple[str, bytes | None]]],
    similarities: dict[int, np.ndarray | None],
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The records with each asserting memory above its denying near-twin
    (:mod:`engine.ranking.twins`), and for each that moved, the path it now ranks above. A
    hit speaks by its chunk closest to the query (its first without a query vector)."""
    candidates = []
    for record in records:
        own = chunks.get(record["file_id"], [])
        near = similarities.get(record["file_id"])
        best = int(np.argmax(near)) if near is not None and len(own) else 0
        text, blob = own[best] if own else ("", None)
        vector = np.frombuffer(blob, dtype="<f4") if blob is not None else None
        authority = float(record["authority"])
        candidates.append(Candidate(text, vector, record["title"] or "", authority))
    order, moved = order_twins(query, candidates)
    above = {records[i]["path"]: records[j]["path"] for i, j in moved.items()}
    return [records[i] for i in order], above


def set_floor_text(min_similarity: float | None, config: Config) -> str | None:
    """The floor set for this search or the store, in words, or None (the store's own): a
    floor set is the whole abstention rule, without the coverage test (:func:`abstain`)."""
    if min_similarity is not None:
        return f"floor set for this search ({min_similarity:.2f})"
    if config.min_similarity is not None:
        return f"floor set for the store ({config.min_similarity:.2f}, [limits] min_similarity)"
    return None


def respelt_note(seen: Coverage) -> str:
    """What a search answered by taking the query's names for the store's own spellings."""
    return "; ".join(
        f"the store never wrote {word!r}: taken for its {written!r}"
        for word, written in seen.respelt
    )


#: The names read from a sample of each open session's store, with the store's chunk span
#: when they were read (engine.ranking.names): a long-lived Searcher reads them once per
#: version of the store, not on every search that gives an unseen name (about 90 ms of text
#: at a thousand chunks).
SAMPLED_NAMES: WeakKeyDictionary[SearchSession, tuple[object, StoreNames]] = WeakKeyDictionary()


def sampled_names(db: SearchSession) -> StoreNames:
    """The names of a sample of the store behind ``db``, read again only when a chunk was
    written or deleted since (its chunk span moved)."""
    span = db.chunk_span()
    kept = SAMPLED_NAMES.get(db)
    if kept is not None and kept[0] == span:
        return kept[1]
    names = store_names(db.sample_texts(NAMES_SAMPLE, span))
    SAMPLED_NAMES[db] = (span, names)
    return names


def store_coverage(
    db: SearchSession,
    query: str,
    found: Mapping[int, list[tuple[str, bytes | None]]],
    respell: bool = True,
) -> Coverage:
    """What of ``query`` the store behind ``db`` has seen (counted only when the abstention
    rule needs it: a query that misses the floor or binds every word never asks). With
    ``respell`` (the names rule), a name the store never wrote is looked for, spelt
    otherwise, among the names of a sample of its chunks (:func:`sampled_names`) and of the
    chunks the search ``found`` (by file id; :mod:`engine.ranking.names`; only for a query
    that gives such a name)."""
    words = query_words(query, skip=time_spans(query))
    counts, chunks = db.chunk_counts(lookups(words) if words else [])
    names: list[StoreNames] = []

    def respelt(name: str) -> str | None:
        if not names:
            hits = store_names(text for own in found.values() for text, _ in own)
            names.append(sampled_names(db).plus(hits))
        return alike(name, names[0])

    return coverage(words, counts, chunks, respelt if respell else None)


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


def make_hits(
    records: list[dict[str, Any]],
    chunks: dict[int, list[tuple[str, bytes | None]]],
    similarities: dict[int, np.ndarray | None],
    closest: dict[int, float | None],
    fired: Sequence[Arm],
    weight_of: dict[str, float],
    terms: QueryTerms,
    signals: Sequence[Authority] = AUTHORITY,
    above: dict[str, str] | None = None,
) -> list[Hit]:
    """Rows of the fused statement (``records``, read by the column names the assembler
    gives them) to hits, with each arm's rank and contribution, the authority signals that
    scaled its score (named by the same rule the statement applied), the best passage and
    the similarity (``closest``, by file id: :func:`closest_similarity`)."""
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
                None if (best := closest.get(r["file_id"])) is None else round(best, 4),
                authority=float(r["authority"]),
                authority_signals=(
                    tag_signals(r["tags"])
                    if signals is AUTHORITY
                    else judge(stored_tags(r["tags"]), signals).signals
                ),
                above_twin=(above or {}).get(r["path"]),
            )
        )
    return hits


@lru_cache(maxsize=1024)
def tag_signals(text: object) -> tuple[str, ...]:
    """The registry's authority signals a memory's stored tags carry, as :func:`judge` names
    them; kept per tags text (most memories share a handful: none, or one of a few tags)."""
    return judge(stored_tags(text), AUTHORITY).signals


def stored_tags(text: object) -> list[str]:
    """A memory's tags as the index stores them (a JSON array); none when unreadable."""
    try:
        tags = json.loads(text) if isinstance(text, str) else []
    except ValueError:
        return []
    return [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else []


def fold_copies(hits: list[Hit], chunks: dict[str, list[tuple[str, bytes | None]]]) -> list[Hit]:
    """Each text once: a hit with the same title and words as a higher hit (markup, case and
    spacing set aside: a page's ``.md`` and ``.html`` copies, a memory saved twice) is listed in
    that hit's ``copies`` instead of taking a place of its own. Near-identical texts (a word
    changed) stay apart: telling a memory from its edited twin is the ranking's work.

    Copies share their title, so only hits whose title another hit shares have their text
    read: a search whose hits all differ in title (nearly every one) compares titles only."""
    titles = [" ".join(plain(hit.title).lower().split()) for hit in hits]
    shared = {title for title, count in Counter(titles).items() if count > 1}
    first: dict[str, Hit] = {}
    kept: list[Hit] = []
    for hit, title in zip(hits, titles, strict=True):
        if title in shared:
            key = copy_text(hit.title, chunks.get(hit.path, []))
            if key and key in first:
                first[key].copies.append(hit.path)
                continue
            first.setdefault(key, hit)
        kept.append(hit)
    return kept


def copy_text(title: str, chunks: list[tuple[str, bytes | None]]) -> str:
    """A memory's title and words as copies share them: markup, case and spacing set aside,
    and a leading heading that repeats the title left out (a Markdown page keeps its
    ``# Title`` in the text, its HTML copy holds the title in ``<title>``)."""
    words = plain(" ".join(text for text, _ in chunks)).lower().split()
    heading = plain(title).lower().split()
    if heading and words[: len(heading)] == heading:
        words = words[len(heading) :]
    return " ".join(heading) + "\n" + " ".join(words) if words else ""


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


def closest_similarity(
    chunks: list[tuple[str, bytes | None]], vector: bytes | None
) -> float | None:
    """Cosine similarity to the query of the closest chunk that has a vector of the query's
    width, as the vector arm ranks a memory; None when none has one. Chunks a file's embedding
    budget leaves out have none, and do not make the file's similarity unknown."""
    embedded = [(text, blob) for text, blob in chunks if blob is not None]
    near = chunk_similarities(embedded, vector)
    return None if near is None else float(near.max())


def snippet_for(
    chunks: list[tuple[str, bytes | None]],
    pattern: WordPattern | None,
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
    return highlight(trim(plain(best), pattern), pattern)


#: Markdown's own markup, taken out of a snippet before query words are bolded: the bold marks
#: added would otherwise nest inside the file's (``**PgBouncer on **port** 6432**``) and a
#: link's address would take the room of its words. Each pattern keeps the text it marks up.
#: Each entry also names texts of which every match holds one: a text holding none of them
#: cannot match, and the pattern is not run on it (most chunks hold no markup at all).
MARKUP: tuple[tuple[re.Pattern[str], str, tuple[str, ...]], ...] = (
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1", ("![",)),  # an image: its alt text
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1", ("](",)),  # a link: its words
    (re.compile(r"\[([^\]]+)\]\[[^\]]*\]"), r"\1", ("][",)),  # a reference link
    (re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>"), " ", ("<",)),  # an HTML tag
    (re.compile(r"^\s{0,3}(?:#{1,6}|>+)\s*", re.MULTILINE), "", ("#", ">")),  # heading, quote
    (re.compile(r"^\s*(?:[-*_]\s*){3,}$", re.MULTILINE), " ", ("-", "*", "_")),  # a rule
    (re.compile(r"`+"), "", ("`",)),  # code spans keep their text
    (
        # Emphasis: a run of up to three * or _ that opens (nothing of a word or * before it,
        # something after) or closes (something before, nothing of a word or * after). Each
        # run is its own alternative, longest first as a greedy {1,3} tries them, so every
        # alternative starts with its mark and the scan jumps from mark to mark instead of
        # testing both lookarounds at every character (16 times faster on a typical chunk).
        re.compile(
            "|".join(
                [rf"{run}(?<![\w*]{run})(?=\S)" for run in EMPHASIS_RUNS]
                + [rf"{run}(?<=\S{run})(?![\w*])" for run in EMPHASIS_RUNS]
            )
        ),
        "",
        ("*", "_"),
    ),
)


def plain(text: str) -> str:
    """``text`` without Markdown's markup (emphasis, code marks, links, headings, tags); the
    words, numbers and identifiers (``snake_case``, ``2*3``) stay as written."""
    for pattern, replacement, needs in MARKUP:
        # Asked of the text as the earlier patterns left it: removing markup can bring two
        # characters together, never a character that was not there. (A loop, not any() over
        # a generator: this runs for every hit's title and snippet.)
        for need in needs:
            if need in text:
                text = pattern.sub(replacement, text)
                break
    return text


class WordPattern:
    """The regular expression :func:`word_pattern` describes, compiled the first time it is
    used: ``pattern`` and ``flags`` are read as those of an ``re.Pattern``, and ``search``,
    ``findall`` and ``sub`` compile it. Compiling takes about as long as the snippets of a
    search's ten hits, every query has its own, and a snippet of ASCII text never needs it
    (:func:`first_word` and :func:`highlight` find ASCII stems with ``str.find``)."""

    __slots__ = ("_compiled", "flags", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.flags = re.IGNORECASE | re.UNICODE
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, re.IGNORECASE)
        return self._compiled

    def search(self, text: str) -> re.Match[str] | None:
        return self.compiled().search(text)

    def findall(self, text: str) -> list[str]:
        return self.compiled().findall(text)

    def sub(self, replacement: Callable[[re.Match[str]], str], text: str) -> str:
        return self.compiled().sub(replacement, text)


def word_pattern(terms: QueryTerms) -> WordPattern | None:
    """Words that look like a query word (same start: a crude stand-in for Porter stemming)."""
    stems = sorted(
        {w if len(w) <= 4 else w[: max(4, math.ceil(len(w) * 0.75))] for w in terms.words},
        key=len,
        reverse=True,
    )
    if not stems:
        return None
    return WordPattern(r"\b(?:" + "|".join(re.escape(s) for s in stems) + r")\w*")


def trim(text: str, pattern: WordPattern | None) -> str:
    text = " ".join(text.split())
    if len(text) <= SNIPPET_CHARS:
        return text
    first = first_word(text, pattern) if pattern else None
    start = max(0, (first or 0) - SNIPPET_CHARS // 4)
    if start:
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < start + 30 else start
    end = start + SNIPPET_CHARS
    if end < len(text):
        space = text.rfind(" ", start, end)
        end = space if space > start + SNIPPET_CHARS // 2 else end
    return (ELLIPSIS if start else "") + text[start:end] + (ELLIPSIS if end < len(text) else "")


#: The pattern :func:`word_pattern` makes when every stem is ASCII letters, digits or ``_``.
PLAIN_STEMS = re.compile(r"\\b\(\?:([A-Za-z0-9_]+(?:\|[A-Za-z0-9_]+)*)\)\\w\*")


def first_word(text: str, pattern: WordPattern) -> int | None:
    """Where ``pattern.search(text)`` starts (None: nowhere), found faster when it can be.

    The pattern tries every stem, ignoring case, at every position of the text (about 15
    microseconds a chunk, a tenth of a search over ten hits). When the text and the stems are
    ASCII, ignoring case is lower-casing and a word boundary before a stem is a character that
    is not a letter, digit or ``_``, so ``str.find`` on the lower-cased text finds the same
    first start."""
    stems = plain_stems(pattern.pattern, pattern.flags)
    if stems is None or not text.isascii():
        found = pattern.search(text)
        return found.start() if found else None
    lowered = text.lower()
    starts = []
    for stem in stems:
        at = lowered.find(stem)
        while at > 0 and (lowered[at - 1].isalnum() or lowered[at - 1] == "_"):
            at = lowered.find(stem, at + 1)
        if at >= 0:
            starts.append(at)
    return min(starts, default=None)


@lru_cache(maxsize=256)
def plain_stems(source: str, flags: int) -> tuple[str, ...] | None:
    """The stems of a :func:`word_pattern` pattern when all are ASCII letters, digits or
    ``_`` (lower-cased), else None."""
    shape = PLAIN_STEMS.fullmatch(source)
    if shape is None or not flags & re.IGNORECASE:
        return None
    return tuple(stem.lower() for stem in shape.group(1).split("|"))


def highlight(text: str, pattern: WordPattern | None) -> str:
    """``text`` with each word the pattern matches in **bold**. For ASCII text and stems the
    matches are found as :func:`first_word` finds the first: a match is a word (a run of
    letters, digits and ``_``) whose lower-cased start is a stem, since a stem of word
    characters can only follow a word boundary at the start of a word, and ``\\w*`` then runs
    to the word's end."""
    if pattern is None:
        return text
    stems = plain_stems(pattern.pattern, pattern.flags)
    if stems is None or not ascii_but_ellipses(text):
        return pattern.sub(lambda m: f"**{m.group(0)}**", text)
    lowered = text.lower()
    starts = set()
    for stem in stems:
        at = lowered.find(stem)
        while at >= 0:
            if at == 0 or not (lowered[at - 1].isalnum() or lowered[at - 1] == "_"):
                starts.add(at)
            at = lowered.find(stem, at + 1)
    if not starts:
        return text
    parts: list[str] = []
    last = 0
    for start in sorted(starts):
        end = WORD_TAIL.match(text, start).end()  # type: ignore[union-attr]
        parts += (text[last:start], "**", text[start:end], "**")
        last = end
    parts.append(text[last:])
    return "".join(parts)


def ascii_but_ellipses(text: str) -> bool:
    """True when ``text`` is ASCII but for the ellipses :func:`trim` puts where it cut.

    The ellipsis is neither a letter, a digit nor ``_``, lower-cases to itself and folds to no
    ASCII letter, so the ASCII path of :func:`highlight` reads it as the pattern does: as a
    word boundary. Without this, every trimmed snippet compiled its query's pattern (a
    fifteenth of a search at 2,000 memories)."""
    return text.isascii() or text.replace(ELLIPSIS, "").isascii()


#: The rest of a word from where a stem starts (it matches at any position, if only "").
WORD_TAIL = re.compile(r"\w*")
