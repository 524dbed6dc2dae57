"""A fusion laboratory: every arm's ranking of every query, saved once, fused many times.

Tuning weights through ``memsift eval`` would run every query's full search once per weight
setting. The arms' own rankings do not depend on the weights, so this script asks the real
index for them once per set (fts through the engine's own sanitizer, form probe and bm25; the
vector arm exactly, best chunk per file, from the stored vectors; each memory's moment for
recency) and then replays weighted reciprocal rank fusion, score-aware fusion and the other
levers in NumPy, in milliseconds per setting. The chosen setting is then confirmed through the
real search path (``python benchmarks/quality.py``); this script only proposes.

    python benchmarks/fusion_lab.py extract --work $TMPDIR/lab     # index sets, save rankings
    python benchmarks/fusion_lab.py tune --work $TMPDIR/lab        # leave-one-set-out report
    python benchmarks/fusion_lab.py longtext --work $TMPDIR/lab    # long-text levers (below)

``longtext`` measures the levers for long texts and weak agreement (issue 21: a long generic
text in the middle of both arms' lists beat a short one first in one arm) on the shared sets
and on known-item sets of real documents (``--real``, default ``licences``: built by
``longtext_set.py`` and extracted with ``--extra``), and records them in
``results/levers.md``, ``results/levers.json`` and, as levers tried, ``results/tuning.json``.
``--data`` points at the shared sets when they are not at ``../shared/data``.

Sets are read from ``../shared/data`` (a folder of sets, such as realtalk's chats, is one set
of several stores, scored over all their queries together).
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import math
import pickle
import random
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from engine.arms import ARMS
from engine.files.store import open_store
from engine.indexing.embedder import default_embedder
from engine.indexing.indexer import index_store
from engine.measure.evaluate import KEEP_MARKER, find_sets, load_set, mark_keep_folder, write_store
from engine.ranking.contract import bind, bound_prefix
from engine.ranking.query import quote, sanitize
from engine.ranking.scope import ScopeSpec, build_scope
from engine.ranking.when import query_window
from engine.search import MAX_EMBED_QUERY_CHARS
from engine.sqlite.db import open_index
from engine.sqlite.search import choose_fts_form

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
DEPTH = 100
CANDIDATES = 40
FOREIGN = 40


@dataclass
class QueryRuns:
    """One query's rankings by each arm (paths best first, with each arm's raw score)."""

    qid: str
    text: str
    category: str | None
    relevant: dict[str, int]
    arms: dict[str, list[tuple[str, float]]] = field(default_factory=dict)


@dataclass
class StoreRuns:
    name: str
    moments: dict[str, str]
    queries: list[QueryRuns]
    #: queries of other sets: nothing here answers them (for calibrating abstention)
    foreign: list[QueryRuns] = field(default_factory=list)
    #: each memory's count of chunks (its length, as the index splits it), for length levers
    chunks: dict[str, int] = field(default_factory=dict)


def set_groups(data: Path, extra: list[Path]) -> dict[str, list[Path]]:
    """Set name -> its store folders (one, or several for a folder of sets)."""
    groups: dict[str, list[Path]] = {}
    for folder in sorted(p for p in data.iterdir() if p.is_dir()) + extra:
        groups[folder.name] = find_sets(folder)
    return groups


#: The engine's fts arm exactly as the registry holds it. Where the lab replays the engine's
#: own ranking (the "chunk" variants) it runs this statement, so it cannot drift from a search.
ENGINE_FTS = next(arm for arm in ARMS if arm.name == "fts")
#: The engine's bm25 expression, taken from that statement: the score-fusion lever needs each
#: listed memory's raw score, which the arm uses to order and never returns.
_RANK = re.search(r"rank MATCH 'bm25\(([^)]*)\)'", ENGINE_FTS.sql)
if _RANK is None:
    raise SystemExit("fusion_lab: the registry's fts arm no longer ranks by bm25 (rank MATCH)")
ENGINE_BM25 = f"bm25(chunks_fts, {_RANK.group(1)})"
CHUNK_SCORES = f"""
    WITH m AS MATERIALIZED (
        SELECT c.file_id AS fid, {ENGINE_BM25} AS score
        FROM chunks_fts JOIN chunks AS c ON c.id = chunks_fts.rowid WHERE chunks_fts MATCH ?1
    )
    SELECT f.path, min(m.score) FROM m JOIN files AS f ON f.id = m.fid
    WHERE f.path IN (SELECT value FROM json_each(?2)) GROUP BY f.id
"""
#: NOT the engine's: full text ranked by the whole file, as the engine did before it ranked by
#: each memory's best chunk (index layout 3). Kept for the lever that measures that change,
#: over a whole-file FTS5 table the lab builds for itself (:func:`build_file_fts`).
FILE_FTS = """
    SELECT f.path, bm25(ffts, 4.0, 1.0, 2.0) AS score
    FROM lab.ffts JOIN files AS f ON f.id = ffts.rowid
    WHERE ffts MATCH ?1 AND {scope}
    ORDER BY score, f.path LIMIT ?2
"""
#: variant -> (whether it is the engine's ranking or the lab's whole-file one, how the form is
#: chosen: the engine's probe, the all-terms probe with stop words kept, or any term always)
FTS_VARIANTS = {
    "file": ("file", "probe"),
    "file-oldstop": ("file", "oldstop"),
    "file-or": ("file", "or"),
    "chunk": ("engine", "probe"),
    "chunk-or": ("engine", "or"),
}


#: A file's whole text as the index keeps it: its chunks (which do not overlap) joined in order.
WHOLE_TEXT = (
    "(SELECT group_concat(c.text, char(10)) FROM "
    "(SELECT text FROM chunks WHERE file_id = f.id ORDER BY seq) AS c)"
)


def build_file_fts(conn) -> None:  # type: ignore[no-untyped-def]
    """A whole-file FTS5 table (the engine's tokenizer and columns, one row per memory) in an
    attached scratch database, for the whole-file lever; the index itself is never written."""
    conn.execute("ATTACH DATABASE ':memory:' AS lab")
    conn.execute(
        "CREATE VIRTUAL TABLE lab.ffts USING fts5(title, body, tags, "
        "tokenize='porter unicode61 remove_diacritics 2')"
    )
    conn.execute(
        "INSERT INTO lab.ffts(rowid, title, body, tags) "
        f"SELECT f.id, f.title, {WHOLE_TEXT}, f.tags FROM files AS f"
    )


def fts_form(conn, terms, scope, variant: str) -> str | None:  # type: ignore[no-untyped-def]
    """The form bound for ``variant``: for the engine's ranking, what a search binds (its own
    probe); for the whole-file lever, all terms when one whole file in scope holds them."""
    unit, mode = FTS_VARIANTS[variant]
    any_form = terms.any_form()
    if mode == "or":
        return any_form
    if unit == "engine":
        return choose_fts_form(conn, terms, scope)[0]
    if mode == "oldstop":
        all_form = " AND ".join(quote(t) for t in terms.terms) or None
    else:
        all_form = terms.all_form()
    if all_form is None or all_form == any_form:
        return all_form
    probe = (
        "SELECT 1 FROM lab.ffts JOIN files AS f ON f.id = ffts.rowid "
        f"WHERE ffts MATCH ?1 AND {scope.sql} LIMIT 1"
    )
    found = conn.execute(
        probe, bound_prefix(probe, bind({"match": all_form}, scope.values))
    ).fetchone()
    return all_form if found else any_form


def fts_hits(conn, variant: str, match: str, scope) -> list[tuple[str, float]]:  # type: ignore[no-untyped-def]
    """The fts list of ``variant`` for a bound form: (path, bm25), best first, at most DEPTH."""
    unit, _ = FTS_VARIANTS[variant]
    values = bind({"match": match, "candidate_limit": DEPTH}, scope.values)
    if unit == "file":
        sql = FILE_FTS.replace("{scope}", scope.sql)
        return [(p, float(v)) for p, v in conn.execute(sql, bound_prefix(sql, values))]
    sql = ENGINE_FTS.sql.replace("{scope}", scope.sql)
    # The engine's SQLite arm names a memory by its row id in files.
    ids = [i for i, _ in conn.execute(sql, bound_prefix(sql, values))]
    path_of = dict(
        conn.execute(
            "SELECT id, path FROM files WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(ids),),
        )
    )
    ranked = [path_of[i] for i in ids]
    scores = dict(conn.execute(CHUNK_SCORES, (match, json.dumps(ranked))))
    return [(p, float(scores[p])) for p in ranked]


def vector_matrix(conn) -> tuple[np.ndarray, np.ndarray, list[str]]:  # type: ignore[no-untyped-def]
    rows = conn.execute(
        "SELECT f.path, e.vector FROM chunks AS c JOIN embeddings AS e ON e.hash = c.hash "
        "JOIN files AS f ON f.id = c.file_id WHERE f.archived = 0 ORDER BY f.path"
    ).fetchall()
    paths = sorted({p for p, _ in rows})
    index = {p: i for i, p in enumerate(paths)}
    owner = np.array([index[p] for p, _ in rows])
    matrix = np.stack([np.frombuffer(v, dtype="<f4") for _, v in rows])
    return matrix, owner, paths


def extract_store(  # type: ignore[no-untyped-def]
    folder: Path, work: Path, embedder, foreign: list[str]
) -> StoreRuns:
    """Index one store and rank its own queries, and ``foreign`` ones (no answer here), by
    every arm."""
    data = load_set(folder)
    root = work / "stores" / folder.parent.name / folder.name
    root.mkdir(parents=True, exist_ok=True)
    if not (root / KEEP_MARKER).exists():  # a lab store from before eval kept a marker
        mark_keep_folder(root, {p.name for p in root.glob("*.md")})
    keys = write_store(data, root)
    store = open_store(root)
    index_store(store, embedder=embedder)
    conn = open_index(store.index_path)
    moments = {
        keys[p]: m
        for p, m in conn.execute("SELECT path, coalesce(event_at, updated_at) FROM files")
    }
    chunks = {
        keys[p]: n
        for p, n in conn.execute(
            "SELECT f.path, count(*) FROM chunks AS c JOIN files AS f ON f.id = c.file_id "
            "GROUP BY f.id"
        )
    }
    matrix, owner, paths = vector_matrix(conn)
    build_file_fts(conn)
    scope = build_scope(ScopeSpec())
    wanted = [QueryRuns(q.id, q.text, q.category, data.qrels[q.id]) for q in data.queries]
    wanted += [QueryRuns(f"foreign{n}", t, "foreign", {}) for n, t in enumerate(foreign)]
    vectors = embedder.embed([q.text[:MAX_EMBED_QUERY_CHARS] for q in wanted])
    for runs, qvec in zip(wanted, vectors, strict=True):
        terms = sanitize(runs.text)
        for variant in FTS_VARIANTS:
            match = fts_form(conn, terms, scope, variant)
            hits = fts_hits(conn, variant, match, scope) if match is not None else []
            runs.arms[f"fts:{variant}"] = [(keys[p], score) for p, score in hits]
        sims = matrix @ qvec
        best = np.full(len(paths), -np.inf, dtype=np.float32)
        np.maximum.at(best, owner, sims)
        order = np.lexsort((np.array(paths), -best))[:DEPTH]
        runs.arms["vector"] = [(keys[paths[i]], float(best[i])) for i in order]
    conn.close()
    own = [q for q in wanted if q.category != "foreign"]
    others = [q for q in wanted if q.category == "foreign"]
    return StoreRuns(folder.name, moments, own, others, chunks)


def extract(work: Path, only: list[str] | None, extra: list[Path], data: Path = DATA) -> None:
    embedder = default_embedder()
    groups = set_groups(data, extra)
    texts = {
        name: [q.text for f in folders for q in load_set(f).queries]
        for name, folders in groups.items()
    }
    for name, folders in groups.items():
        if only and name not in only:
            continue
        started = time.perf_counter()
        pool = [t for other, ts in texts.items() if other != name for t in ts]
        rng = random.Random(name)
        stores = [extract_store(f, work, embedder, rng.sample(pool, FOREIGN)) for f in folders]
        (work / f"{name}.pkl").write_bytes(pickle.dumps(stores))
        print(
            f"{name}: {sum(len(s.queries) for s in stores)} queries "
            f"in {time.perf_counter() - started:.0f} s",
            file=sys.stderr,
        )


# ----------------------------------------------------------------------------- fusion replay


def ndcg10(ranked: list[str], relevant: dict[str, int]) -> float:
    gains = [relevant.get(d, 0) for d in ranked[:10]]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sorted(relevant.values(), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


@dataclass(frozen=True)
class Setting:
    fts: float = 1.0
    #: The fts weight when no memory holds every content term (the any-term form bound);
    #: None: the same as ``fts``.
    fts_any: float | None = None
    vector: float = 1.0
    recency: float = 0.2
    time: float = 0.0  # the temporal-expression prior
    relative: bool = False  # does it read "yesterday", "last week"?
    k: int = 60
    fts_variant: str = "file"
    vector_variant: str = "vector"
    fusion: str = "rrf"  # or "score": a convex combination of normalised arm scores
    candidates: int = CANDIDATES
    # Levers for long texts and weak agreement (issue 21, item 4); the defaults are off.
    #: Past this rank a query arm's contribution ends ("cut") or falls with the square of the
    #: rank ("steep": continuous at the rank); 0: no fading.
    fade_rank: int = 0
    fade: str = "cut"
    #: The exponent p of a query arm's contribution ``w / (k + 1) * ((k + 1) / (k + r)) ** p``:
    #: 1 is plain RRF; above 1 a first place counts more against a tenth, the same at rank 1.
    power: float = 1.0
    #: A query arm's own fusion constant (None: ``k``); a smaller one is a bonus for a strong
    #: single-arm match.
    k_fts: int | None = None
    k_vector: int | None = None
    #: Length-aware lists: fts re-ranked by ``bm25 / (1 + a * ln(chunks))`` (bm25 is negative,
    #: more negative better, so a long memory's score shrinks toward 0); the vector arm by
    #: ``similarity - a * ln(chunks)``. 0: off.
    fts_length: float = 0.0
    vector_length: float = 0.0
    #: The vector arm contributes only for memories at least this similar (absolute), or
    #: within ``vector_gap`` of its best similarity for this query (0: off).
    vector_floor: float = -1.0
    vector_gap: float = 0.0
    #: The fts arm contributes only for memories whose bm25 reaches this share of its best.
    fts_share: float = 0.0
    #: Score-aware ranks: a memory's vector rank is at least ``1 + (best - similarity) / g``,
    #: so one far below a clear leader counts as far down, whatever its ordinal (0: off).
    vector_gap_rank: float = 0.0
    #: The exponent e of the length penalty's ``(ln chunks) ** e`` (1: the plain logarithm).
    length_power: float = 1.0


def tie_ranks(keys: dict[str, object]) -> dict[str, int]:
    """rank() OVER (ORDER BY key): equal keys share a rank, the next rank skips."""
    items = sorted(keys, key=lambda d: keys[d])  # type: ignore[arg-type,return-value]
    ranks: dict[str, int] = {}
    previous, rank = object(), 0
    for position, doc in enumerate(items, 1):
        if keys[doc] != previous:
            rank, previous = position, keys[doc]
        ranks[doc] = rank
    return ranks


def moment(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


_WINDOWS: dict[tuple[str, bool], tuple[dt.datetime, dt.datetime] | None] = {}


def window_of(text: str, relative: bool) -> tuple[dt.datetime, dt.datetime] | None:
    if (text, relative) not in _WINDOWS:
        found = query_window(text, relative=relative)
        _WINDOWS[text, relative] = (found.start, found.end) if found else None
    return _WINDOWS[text, relative]


def fts_list(query: QueryRuns, variant: str) -> list[tuple[str, float]]:
    """The fts arm's list; "<unit>-tiered": memories holding every content term first (when
    any does), then the rest of the any-term list, each tier by bm25."""
    if not variant.endswith("-tiered"):
        return query.arms[f"fts:{variant}"]
    unit = variant.removesuffix("-tiered")
    probed, anyterm = query.arms[f"fts:{unit}"], query.arms[f"fts:{unit}-or"]
    first = {d for d, _ in probed}
    return probed + [(d, v) for d, v in anyterm if d not in first]


def fuse(store: StoreRuns, query: QueryRuns, s: Setting) -> list[tuple[str, float]]:
    """The fused ranking (doc, score), best first."""
    fts_weight = s.fts
    if s.fts_any is not None and not all_terms_matched(query):
        fts_weight = s.fts_any
    weights = {"fts": fts_weight, "vector": s.vector}
    lists = {
        name: fts_list(query, s.fts_variant)[: s.candidates]
        if name == "fts"
        else query.arms[s.vector_variant][: s.candidates]
        for name, weight in weights.items()
        if weight > 0
    }
    lists = shaped(store, lists, s)
    pool = {d for hits in lists.values() for d, _ in hits}
    scores: dict[str, float] = dict.fromkeys(pool, 0.0)
    if s.fusion == "rrf":
        arm_k = {"fts": s.k if s.k_fts is None else s.k_fts}
        arm_k["vector"] = s.k if s.k_vector is None else s.k_vector
        for name, hits in lists.items():
            best = hits[0][1] if hits else 0.0
            for rank, (doc, value) in enumerate(hits, 1):
                if name == "vector" and s.vector_gap_rank:
                    rank = max(rank, 1 + int((best - value) / s.vector_gap_rank))
                scores[doc] += contribution(weights[name], arm_k[name], rank, s)
    else:  # convex combination of theoretical-min-max normalised scores (Bruch et al.)
        for name, hits in lists.items():
            if not hits:
                continue
            raw = np.array([v for _, v in hits])
            if name == "fts":
                raw = -raw  # bm25 >= 0 once negated; its maximum is the best seen
                lo, hi = 0.0, raw.max()
            else:
                lo, hi = -1.0, raw.max()  # cosine >= -1
            norm = (raw - lo) / (hi - lo) if hi > lo else np.ones_like(raw)
            for (doc, _), value in zip(hits, norm, strict=True):
                scores[doc] += weights[name] * float(value)
    priors: list[tuple[float, dict[str, int]]] = []
    if s.recency > 0 and pool:
        newest = {d: -moment(store.moments[d]).timestamp() for d in pool}
        priors.append((s.recency, tie_ranks(newest)))
    window = window_of(query.text, s.relative) if s.time > 0 else None
    if window and pool:
        start, end = window
        gaps = {}
        for doc in pool:
            when = moment(store.moments[doc])
            gaps[doc] = max((start - when).total_seconds(), (when - end).total_seconds(), 0.0)
        priors.append((s.time, tie_ranks(gaps)))
    for weight, ranks in priors:
        for doc, rank in ranks.items():
            scores[doc] += weight / (s.k + rank) if s.fusion == "rrf" else weight / rank
    lead_list = lists.get("fts") or lists.get("vector") or []
    lead = {d: r for r, (d, _) in enumerate(lead_list)}
    order = sorted(scores, key=lambda d: (-scores[d], lead.get(d, 10**6), d))
    return [(d, scores[d]) for d in order]


def contribution(weight: float, k: int, rank: int, s: Setting) -> float:
    """What a query arm's rank ``rank`` earns a memory under ``s``'s fade and power."""
    if s.fade_rank and rank > s.fade_rank and s.fade == "cut":
        return 0.0
    value = weight / (k + rank)
    if s.power != 1.0:
        value = weight / (k + 1) * ((k + 1) / (k + rank)) ** s.power
    if s.fade_rank and rank > s.fade_rank:  # "steep": one more factor of 1/(k + r)
        value *= (k + s.fade_rank) / (k + rank)
    return value


def shaped(
    store: StoreRuns, lists: dict[str, list[tuple[str, float]]], s: Setting
) -> dict[str, list[tuple[str, float]]]:
    """The arms' lists after the length and floor levers of ``s`` (unchanged when all are off).

    Re-ranking by length reorders what the arm listed (its first ``candidates``); the engine
    would reorder before the cut, so a long memory pushed out could let in one from beyond it,
    which the lab (its lists end at DEPTH) approximates by the lists it holds."""
    out = dict(lists)
    if s.fts_length and "fts" in out:

        def fts_key(hit: tuple[str, float]) -> tuple[float, str]:
            length = math.log(max(1, store.chunks.get(hit[0], 1))) ** s.length_power
            return hit[1] / (1 + s.fts_length * length), hit[0]

        out["fts"] = sorted(out["fts"], key=fts_key)
    if s.vector_length and "vector" in out:

        def vector_key(hit: tuple[str, float]) -> tuple[float, str]:
            length = math.log(max(1, store.chunks.get(hit[0], 1))) ** s.length_power
            return -(hit[1] - s.vector_length * length), hit[0]

        out["vector"] = sorted(out["vector"], key=vector_key)
    if "vector" in out and (s.vector_floor > -1.0 or s.vector_gap) and out["vector"]:
        top = out["vector"][0][1]
        out["vector"] = [
            (d, v)
            for d, v in out["vector"]
            if v >= s.vector_floor and (not s.vector_gap or v >= top - s.vector_gap)
        ]
    if s.fts_share and out.get("fts"):
        best = min(v for _, v in out["fts"])
        out["fts"] = [(d, v) for d, v in out["fts"] if v <= s.fts_share * best]
    return out


def per_query(sets: dict[str, list[StoreRuns]], s: Setting) -> dict[str, list[float]]:
    return {
        name: [
            ndcg10([d for d, _ in fuse(st, q, s)], q.relevant) for st in stores for q in st.queries
        ]
        for name, stores in sets.items()
    }


def score_set(stores: list[StoreRuns], s: Setting) -> float:
    values = [
        ndcg10([d for d, _ in fuse(st, q, s)], q.relevant) for st in stores for q in st.queries
    ]
    return sum(values) / len(values)


def load(work: Path) -> dict[str, list[StoreRuns]]:
    return {p.stem: pickle.loads(p.read_bytes()) for p in sorted(work.glob("*.pkl"))}


#: Named settings: the levers, each against the registry as it stood before this work.
LEVERS = {
    "before (registry 0.1)": Setting(fts_variant="file-oldstop"),
    "stop words out of AND": Setting(),
    "fts best chunk": Setting(fts_variant="chunk"),
    "fts any-term always": Setting(fts_variant="file-or"),
    "fts all-terms first, then any": Setting(fts_variant="file-tiered"),
    "fts best chunk, tiered": Setting(fts_variant="chunk-tiered"),
    "no recency": Setting(recency=0.0),
    "temporal prior 0.5": Setting(time=0.5),
    "temporal prior 1.0": Setting(time=1.0),
    "temporal prior 1.0 + relative": Setting(time=1.0, relative=True),
    "k=20": Setting(k=20),
    "vector: text without title": Setting(vector_variant="vector:text"),
    "vector: with previous memory": Setting(vector_variant="vector:prev"),
    "score fusion (convex, 0.5/0.5)": Setting(fusion="score", recency=0.0),
    "score fusion (convex, 0.3 fts)": Setting(fusion="score", fts=0.3, vector=0.7, recency=0.0),
    "score fusion (convex, 0.2 fts)": Setting(fusion="score", fts=0.2, vector=0.8, recency=0.0),
    "candidates 100": Setting(candidates=100),
    "only fts": Setting(vector=0.0, recency=0.0),
    "only vector": Setting(fts=0.0, recency=0.0),
}


def has_variants(stores: list[StoreRuns], setting: Setting) -> bool:
    """Were the lists this setting fuses extracted for this set?"""
    arms = stores[0].queries[0].arms
    unit = setting.fts_variant.removesuffix("-tiered")
    return setting.vector_variant in arms and f"fts:{unit}" in arms


def levers(work: Path) -> None:
    sets = load(work)
    names = list(sets)
    print(f"{'lever':<34}" + "".join(f"{n[:13]:>14}" for n in names))
    for label, setting in LEVERS.items():
        row = [
            f"{score_set(sets[n], setting):>14.4f}" if has_variants(sets[n], setting) else "-"
            for n in names
        ]
        print(f"{label:<34}" + "".join(f"{v:>14}" for v in row))


def context_texts(corpus: list[dict[str, str]], mode: str) -> list[str]:
    """What to embed per corpus row: its text alone, or with the row before it (by event
    time) as context, for short memories such as chat messages."""
    if mode == "text":
        return [row["text"] for row in corpus]
    order = sorted(range(len(corpus)), key=lambda i: (corpus[i]["event_at"], i))
    previous: dict[int, int | None] = {}
    for position, index in enumerate(order):
        previous[index] = order[position - 1] if position else None
    out = []
    for index, row in enumerate(corpus):
        before = previous[index]
        context = corpus[before]["text"] if before is not None and mode == "prev" else ""
        out.append(f"{context}\n{row['text']}" if context else row["text"])
    return out


def revector(work: Path, name: str, modes: list[str], data: Path = DATA) -> None:
    """Add vector-arm lists computed from other embedded texts (``vector:<mode>``)."""
    embedder = default_embedder()
    path = work / f"{name}.pkl"
    stores: list[StoreRuns] = pickle.loads(path.read_bytes())
    folders = {f.name: f for f in set_groups(data, []).get(name, [])}
    for st in stores:
        data = load_set(folders[st.name])
        ids = [row["_id"] for row in data.corpus]
        qvecs = embedder.embed([q.text[:MAX_EMBED_QUERY_CHARS] for q in st.queries])
        for mode in modes:
            matrix = embedder.embed(context_texts(data.corpus, mode))
            sims = qvecs @ matrix.T
            for q, row in zip(st.queries, sims, strict=True):
                order = np.argsort(-row, kind="stable")[:DEPTH]
                q.arms[f"vector:{mode}"] = [(ids[i], float(row[i])) for i in order]
        print(f"{name}/{st.name}: {', '.join(modes)}", file=sys.stderr)
    path.write_bytes(pickle.dumps(stores))


def all_terms_matched(query: QueryRuns) -> bool:
    """Did the probe find a memory holding every content term (the all-terms form bound)?"""
    return [d for d, _ in query.arms["fts:file"]] != [d for d, _ in query.arms["fts:file-or"]]


def abstention(work: Path) -> None:
    """How well "no memory holds every query word, and none is similar enough" tells an
    answerable query from a foreign one.

    Own queries whose fused top 10 holds a relevant memory are the answerable ones; queries of
    other sets (nothing relevant here) are the foreign ones. For each similarity floor: the
    share of answerable queries it would silence (the cost) and of foreign ones (the gain)."""
    sets = load(work)
    setting = Setting()
    floors = (0.15, 0.2, 0.25, 0.3, 0.35, 0.4)
    print(f"{'set':<14}" + "".join(f"{f:>13.2f}" for f in floors) + "   (lost / caught)")
    for name, stores in sets.items():
        answerable: list[tuple[bool, float]] = []
        foreign: list[tuple[bool, float]] = []
        for st in stores:
            for q in st.queries:
                top = [d for d, _ in fuse(st, q, setting)[:10]]
                if any(q.relevant.get(d, 0) > 0 for d in top):
                    answerable.append((all_terms_matched(q), q.arms["vector"][0][1]))
            foreign += [(all_terms_matched(q), q.arms["vector"][0][1]) for q in st.foreign]
        cells = []
        for floor in floors:
            lost = sum(not m and v < floor for m, v in answerable) / max(1, len(answerable))
            caught = sum(not m and v < floor for m, v in foreign) / max(1, len(foreign))
            cells.append(f"{lost:.3f}/{caught:.3f}")
        print(f"{name:<14}" + "".join(f"{c:>13}" for c in cells))


def grid(fusion: str) -> list[Setting]:
    """The settings tuning chooses among: weighted RRF (weights, k) or a convex combination of
    normalised scores (the fts share; vector takes the rest), each with the two priors."""
    out = []
    if fusion == "form":
        for fts, fts_any, recency, time_w, k in itertools.product(
            (0.8, 1.0, 1.25, 1.5, 2.0),
            (0.3, 0.5, 0.7, 0.9, 1.1),
            (0.0, 0.05, 0.1),
            (0.0, 0.5, 1.0),
            (20, 40, 60),
        ):
            out.append(Setting(fts=fts, fts_any=fts_any, recency=recency, time=time_w, k=k))
    elif fusion == "rrf":
        for fts, recency, time_w, k, depth in itertools.product(
            (0.6, 0.8, 1.0, 1.25, 1.5),
            (0.02, 0.05, 0.1, 0.2),  # recency stays: a tie-breaker toward what is still true
            (0.0, 0.5, 1.0),
            (20, 40, 60),
            (40, 100),
        ):
            out.append(Setting(fts=fts, recency=recency, time=time_w, k=k, candidates=depth))
    else:
        for share, recency, time_w, variant in itertools.product(
            (0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5),
            (0.0, 0.01, 0.02, 0.05),
            (0.0, 0.02, 0.05, 0.1),
            ("file", "chunk"),
        ):
            out.append(
                Setting(
                    fts=share,
                    vector=1 - share,
                    recency=recency,
                    time=time_w,
                    fusion="score",
                    fts_variant=variant,
                )
            )
    return out


def tune(work: Path, exclude: list[str], fusion: str) -> None:
    """Leave one set out: choose on the others (mean of per-set nDCG@10), score the held one."""
    sets = {n: v for n, v in load(work).items() if n not in exclude}
    settings = grid(fusion)
    table = {name: [score_set(stores, s) for s in settings] for name, stores in sets.items()}
    names = list(sets)
    for held in names:
        others = [n for n in names if n != held]
        mean = [sum(table[n][i] for n in others) / len(others) for i in range(len(settings))]
        best = max(range(len(settings)), key=lambda i: mean[i])
        print(f"held out {held}: chose {settings[best]} -> {table[held][best]:.4f}")
    mean_all = [sum(table[n][i] for n in names) / len(names) for i in range(len(settings))]
    ranked = sorted(range(len(settings)), key=lambda i: -mean_all[i])
    for i in ranked[:8]:
        print("all:", settings[i], {n: round(table[n][i], 4) for n in names})


PROCEDURE = (
    "Weighted RRF over the arms' rankings replayed offline from the real index (this script), "
    "on every set in ../shared/data. Grid: fts weight 0.6-1.5 (vector fixed at 1), recency "
    "0.02-0.2 (kept above 0: the arm breaks near-ties toward the newer memory, which the sets "
    "do not reward), time 0-1, k in 20/40/60, 40 or 100 candidates per arm. Objective: the "
    "mean of the per-set nDCG@10, among settings whose fusion is within 0.003 of the best "
    "single arm on every set tuned on. Leave one set out: each fold chooses on the other sets "
    "and is scored on the held-out one; the registry holds the choice made on all sets."
)


def arm_alone(stores: list[StoreRuns], arm: str, base: Setting) -> float:
    weights = {"fts": 0.0, "vector": 0.0}
    weights[arm] = 1.0
    return score_set(
        stores, replace(base, fts=weights["fts"], vector=weights["vector"], recency=0.0, time=0.0)
    )


def choose(table: dict[str, list[float]], singles: dict[str, float], names: list[str]) -> int:
    """The index of the best setting on ``names``: highest mean nDCG@10 among those within
    0.003 of the best single arm on each of them (else highest mean)."""
    count = len(next(iter(table.values())))
    mean = [sum(table[n][i] for n in names) / len(names) for i in range(count)]
    fair = [i for i in range(count) if all(table[n][i] >= singles[n] - 0.003 for n in names)]
    return max(fair or range(count), key=lambda i: mean[i])


def report(work: Path, out: Path, data: Path = DATA) -> None:
    """Tune (leave one set out), try every lever against the choice, calibrate abstention, and
    write it all to ``out`` (benchmarks/results/tuning.json) for quality.py and the docs."""
    from stamp import make_stamp

    from engine.measure.results_schema import (
        Fold,
        LabResults,
        Lever,
        LeverTrials,
        Tuning,
        write_results,
    )

    shared = {p.name for p in data.iterdir() if p.is_dir()}
    sets = {n: v for n, v in load(work).items() if n in shared}  # never the stress set
    names = list(sets)
    settings = grid("rrf")
    table = {n: [score_set(sets[n], s) for s in settings] for n in names}
    singles = {n: max(arm_alone(sets[n], a, Setting()) for a in ("fts", "vector")) for n in names}
    folds = []
    for held in names:
        chosen = settings[choose(table, singles, [n for n in names if n != held])]
        folds.append(
            Fold(held, weights_of(chosen), chosen.k, round(score_set(sets[held], chosen), 4))
        )
        print(f"held out {held}: {chosen} -> {folds[-1].ndcg_at_10}", file=sys.stderr)
    best = settings[choose(table, singles, names)]
    print(f"chosen on all: {best}", file=sys.stderr)
    baseline = {n: round(score_set(sets[n], best), 4) for n in names}
    levers = []
    for label, (change, kept, note) in lever_trials(best).items():
        figures = {
            n: round(score_set(sets[n], change), 4) for n in names if has_variants(sets[n], change)
        }
        levers.append(Lever(label, figures, kept, note))
    write_results(
        LabResults(
            stamp=make_stamp("fusion_lab"),
            tuning=Tuning(
                f"{PROCEDURE} Chosen depth: {best.candidates} candidates per arm "
                "(the search's default candidate limit).",
                weights_of(best),
                best.k,
                tuple(folds),
            ),
            levers=LeverTrials("weighted RRF with the chosen setting", baseline, tuple(levers)),
            calibration=calibrate(sets),
        ),
        out,
    )
    print(f"wrote {out}", file=sys.stderr)


FLOORS = (0.15, 0.2, 0.25, 0.3, 0.35, 0.4)
CHOSEN_FLOOR = 0.25
ABSTAIN_RULE = (
    "answer nothing when no memory holds every content word of the query (the any-term form "
    "bound) and no hit's closest chunk reaches the similarity floor"
)


def calibrate(sets: dict[str, list[StoreRuns]]):  # type: ignore[no-untyped-def]
    """Per set and floor: answerable queries silenced, foreign queries caught."""
    from engine.measure.results_schema import Calibration, FloorPoint, SetCalibration

    rows = []
    for name, stores in sets.items():
        answerable, foreign = [], []
        for st in stores:
            for q in st.queries:
                top = [d for d, _ in fuse(st, q, Setting())[:10]]
                if any(q.relevant.get(d, 0) > 0 for d in top):
                    answerable.append((all_terms_matched(q), q.arms["vector"][0][1]))
            foreign += [(all_terms_matched(q), q.arms["vector"][0][1]) for q in st.foreign]
        points = tuple(
            FloorPoint(
                floor,
                round(sum(not m and v < floor for m, v in answerable) / max(1, len(answerable)), 4),
                round(sum(not m and v < floor for m, v in foreign) / max(1, len(foreign)), 4),
            )
            for floor in FLOORS
        )
        rows.append(SetCalibration(name, len(answerable), len(foreign), points))
    return Calibration(ABSTAIN_RULE, CHOSEN_FLOOR, tuple(rows))


def lever_trials(best: Setting) -> dict[str, tuple[Setting, bool, str]]:
    """Every lever built and measured, as a change to the chosen setting."""
    unit = best.fts_variant
    other = "chunk" if unit == "file" else "file"
    return {
        "stop words required again in the all-terms form": (
            replace(best, fts_variant="file-oldstop"),
            True,
            "kept: the row shows what undoing it costs",
        ),
        f"fts ranked by {'best chunk' if other == 'chunk' else 'whole file'}": (
            replace(best, fts_variant=other),
            other == "chunk",
            "kept for long files: on a stress set of real docs (Node.js API sections beside 15 "
            "changelogs of 0.3-1 MB, benchmarks/stress_set.py) fts alone went from 0.896 to "
            "0.913 nDCG@10 and huge files from 20.3 % to 1.4 % of the top-3 places; about even "
            "on these sets",
        ),
        "fts: any-term form always (no all-terms probe)": (
            replace(best, fts_variant=f"{unit}-or"),
            False,
            "dropped: the all-terms form is the sharper list when it binds",
        ),
        "fts: all-terms matches first, then any-term matches": (
            replace(best, fts_variant=f"{unit}-tiered"),
            False,
            "dropped: a long tail of any-term matches dilutes the fusion",
        ),
        "time arm off": (
            replace(best, time=0.0),
            True,
            "kept: the row shows what removing it costs",
        ),
        "time arm also reading relative words (yesterday, last week)": (
            replace(best, relative=True),
            False,
            "dropped: in chat, such words speak of the conversation, not of the memory",
        ),
        "recency at 0.2 (the weight before)": (replace(best, recency=0.2), False, "the old weight"),
        "k = 60 (the constant before)": (replace(best, k=60), False, "the old constant"),
        "score-aware fusion: convex combination, fts share 0.2": (
            replace(best, fusion="score", fts=0.2, vector=0.8, recency=0.0, time=0.05),
            False,
            "dropped: best share differs by set (0.1 on MADial, 0.5 on REALTALK); "
            "held out it lost to RRF",
        ),
        "score-aware fusion: convex combination, fts share 0.5": (
            replace(best, fusion="score", fts=0.5, vector=0.5, recency=0.0, time=0.05),
            False,
            "dropped, as above",
        ),
        "embed a message without its title": (
            replace(best, vector_variant="vector:text"),
            False,
            "dropped (REALTALK only, where titles are message ids)",
        ),
        "embed a short memory with the one before it": (
            replace(best, vector_variant="vector:prev"),
            False,
            "dropped: a neighbour's words blur a short message's meaning",
        ),
        f"{140 - best.candidates} candidates per arm instead of {best.candidates}": (
            replace(best, candidates=140 - best.candidates),
            False,
            "the other depth of the grid",
        ),
    }


#: The engine's setting as the registry holds it (tuning.json's choice, fts by best chunk).
ENGINE = Setting(recency=0.02, time=1.0, k=20, fts_variant="chunk", candidates=100)
#: A memory this many chunks long (about 30 KB) or more counts as a long text in the shape
#: figure: how often one ranks above the document that answers a known-item question.
LONG_CHUNKS = 20
#: The lever families for long texts and weak agreement (issue 21, item 4): label -> the
#: settings tried, each a change to ENGINE.
LONGTEXT_LEVERS: dict[str, list[tuple[str, Setting]]] = {
    "fade: a query arm counts nothing past rank R": [
        (f"R={r}", replace(ENGINE, fade_rank=r)) for r in (5, 10, 15, 20, 30, 50)
    ],
    "fade: past rank R a query arm's share falls with the square of the rank": [
        (f"R={r}", replace(ENGINE, fade_rank=r, fade="steep")) for r in (5, 10, 20, 30)
    ],
    "strong match: w/(k+1) * ((k+1)/(k+r))^p for query arms": [
        (f"p={p}", replace(ENGINE, power=p)) for p in (1.5, 2.0, 3.0)
    ],
    "strong match: a smaller k for one query arm (or both)": [
        (f"k_vector={k}", replace(ENGINE, k_vector=k)) for k in (2, 5, 10)
    ]
    + [(f"k_fts={k}", replace(ENGINE, k_fts=k)) for k in (5, 10)]
    + [(f"k={k}", replace(ENGINE, k=k)) for k in (5, 10)],
    "length-aware fts: bm25 / (1 + a ln chunks)": [
        (f"a={a}", replace(ENGINE, fts_length=a)) for a in (0.05, 0.1, 0.25, 0.5, 1.0)
    ],
    "length-aware vector: similarity - a ln chunks": [
        (f"a={a}", replace(ENGINE, vector_length=a)) for a in (0.005, 0.01, 0.02, 0.05)
    ],
    "length-aware, both arms": [
        (f"fts a={a}, vector a={b}", replace(ENGINE, fts_length=a, vector_length=b))
        for a, b in ((0.1, 0.01), (0.25, 0.01), (0.25, 0.02), (0.5, 0.02))
    ],
    "score-aware vector rank: at least 1 + (best - similarity) / g": [
        (f"g={g}", replace(ENGINE, vector_gap_rank=g)) for g in (0.002, 0.005, 0.01, 0.02)
    ],
    "length-aware vector, concave: similarity - a sqrt(ln chunks)": [
        (f"a={a}", replace(ENGINE, vector_length=a, length_power=0.5)) for a in (0.005, 0.01, 0.02)
    ],
    "strong match and length together: p=1.5, vector similarity - a ln chunks": [
        (f"a={a}", replace(ENGINE, power=1.5, vector_length=a)) for a in (0.005, 0.01)
    ],
    "vector floor: no share below similarity f": [
        (f"f={f}", replace(ENGINE, vector_floor=f)) for f in (0.2, 0.25, 0.3, 0.35, 0.4)
    ],
    "vector floor: no share beyond d below the arm's best": [
        (f"d={d}", replace(ENGINE, vector_gap=d)) for d in (0.05, 0.1, 0.15, 0.2, 0.3)
    ],
    "fts floor: no share below a part s of the arm's best bm25": [
        (f"s={v}", replace(ENGINE, fts_share=v)) for v in (0.2, 0.35, 0.5)
    ],
}


#: A value fixes the shape when it at least halves the questions with a long text above their
#: short answer while the control questions (a long text is the answer) lose at most this much.
CONTROL_LOSS = 0.01
ALLOWED_LOSS = 0.003


def verdict(
    shared: dict[str, float], base: dict[str, float], real: dict[str, dict], base_real: dict
) -> str:
    """``kept`` when the value fixes the shape on every real-document set and loses at most
    ALLOWED_LOSS nDCG@10 on every shared set; else "dropped" and why."""
    fixed = all(
        real[n]["short_long_above"] <= base_real[n]["short_long_above"] / 2
        and real[n]["long_ndcg@10"] >= base_real[n]["long_ndcg@10"] - CONTROL_LOSS
        for n in real
    )
    losers = [n for n in shared if shared[n] < base[n] - ALLOWED_LOSS]
    if fixed and not losers:
        return "kept"
    why = [] if fixed else ["shape not fixed"]
    why += [f"loses {base[n] - shared[n]:.4f} on {n}" for n in losers]
    return "dropped: " + ", ".join(why)


def shape(stores: list[StoreRuns], s: Setting) -> dict[str, float]:
    """Known-item figures on a set whose every question has one answer: nDCG@10 over all of
    them; over those answered by a short text, the share answered first and the share where a
    long text (LONG_CHUNKS) ranks above the answer; nDCG@10 over those answered by a long one
    (the control: a lever that merely buries long texts loses there)."""
    short, long_, values = [], [], []
    for st in stores:
        for q in st.queries:
            ranked = [d for d, _ in fuse(st, q, s)]
            value = ndcg10(ranked, q.relevant)
            values.append(value)
            if any(st.chunks.get(d, 1) >= LONG_CHUNKS for d in q.relevant):
                long_.append(value)
                continue
            answer = min((ranked.index(d) for d in q.relevant if d in ranked), default=len(ranked))
            above = any(st.chunks.get(d, 1) >= LONG_CHUNKS for d in ranked[:answer])
            short.append((answer == 0, above))
    return {
        "ndcg@10": round(sum(values) / len(values), 4),
        "short_first": round(sum(f for f, _ in short) / max(1, len(short)), 4),
        "short_long_above": round(sum(a for _, a in short) / max(1, len(short)), 4),
        "long_ndcg@10": round(sum(long_) / max(1, len(long_)), 4),
    }


def longtext(work: Path, real: list[str], data: Path = DATA) -> None:
    """Every long-text lever on the shared sets (nDCG@10, leave one set out for its
    parameter) and on the real-document sets ``real`` (known-item shape); appended to the
    record, ``benchmarks/results/levers.md`` and ``levers.json``."""
    shared_names = {p.name for p in data.iterdir() if p.is_dir()}
    sets = load(work)
    shared = {n: v for n, v in sets.items() if n in shared_names}
    reals = {n: sets[n] for n in real}
    names = list(shared)
    base = {n: round(score_set(shared[n], ENGINE), 4) for n in names}
    base_real = {n: shape(reals[n], ENGINE) for n in reals}
    families = []
    lines = [
        "## long texts and weak agreement (issue 21, item 4)",
        "",
        "Baseline: the engine's setting (fts 1, vector 1, recency 0.02, time 1, k 20, fts by "
        "best chunk, 100 candidates). Real-document sets: known-item licence questions over "
        "Debian's copyright files and common licences (benchmarks/longtext_set.py); "
        "figures: nDCG@10 over all questions / over the questions a short text answers, the "
        f"share answered first / the share with a text of {LONG_CHUNKS}+ chunks ranked above "
        "the answer (the shape) / nDCG@10 over the control questions a long text answers. A "
        "value is kept only if it fixes the shape on the real documents (at least halves the "
        "share with a long text above, while the control loses at most "
        f"{CONTROL_LOSS}) and loses at most {ALLOWED_LOSS} nDCG@10 on every shared set.",
        "",
        "| lever | value | "
        + " | ".join(names)
        + " | "
        + " | ".join(f"{n}: nDCG / short first / long above / long nDCG" for n in reals)
        + " | verdict |",
        "|---|---|" + "---|" * (len(names) + len(reals) + 1),
    ]

    def row(label: str, value: str, figures: dict[str, float], real_figs) -> str:  # type: ignore[no-untyped-def]
        cells = [f"{figures[n]:.4f}" for n in names]
        cells += [
            f"{f['ndcg@10']:.4f} / {f['short_first']:.2f} / {f['short_long_above']:.2f} / "
            f"{f['long_ndcg@10']:.4f}"
            for f in real_figs.values()
        ]
        cells.append(verdict(figures, base, real_figs, base_real) if value != "-" else "")
        return f"| {label} | {value} | " + " | ".join(cells) + " |"

    lines.append(row("baseline", "-", base, base_real))
    for label, trials in LONGTEXT_LEVERS.items():
        values = [("off", ENGINE), *trials]
        table = {n: [round(score_set(shared[n], t), 4) for _, t in values] for n in names}
        real_table = [{n: shape(reals[n], t) for n in reals} for _, t in values]
        loso = []
        for held in names:
            others = [n for n in names if n != held]
            pick = max(range(len(values)), key=lambda i: sum(table[n][i] for n in others))
            loso.append(
                {
                    "held_out": held,
                    "chose": values[pick][0],
                    "ndcg@10": table[held][pick],
                    "baseline": base[held],
                }
            )
        for i, (value, _) in enumerate(trials, 1):
            lines.append(row(label, value, {n: table[n][i] for n in names}, real_table[i]))
        lines.append(
            f"| {label}: leave one set out | "
            + ", ".join(f"{x['held_out']} chose {x['chose']}" for x in loso)
            + " | "
            + " | ".join(f"{x['ndcg@10']:.4f}" for x in loso)
            + " |"
            + " |" * (len(reals) + 1)
        )
        families.append(
            {
                "lever": label,
                "values": [
                    {
                        "value": value,
                        **{n: table[n][i] for n in names},
                        **{f"{n} (real)": real_table[i][n] for n in reals},
                    }
                    for i, (value, _) in enumerate(values)
                ],
                "loso": loso,
            }
        )
        print(f"{label}: done", file=sys.stderr)
    record_md = REPO / "benchmarks" / "results" / "levers.md"
    record_json = REPO / "benchmarks" / "results" / "levers.json"
    heading = lines[0]
    text = record_md.read_text(encoding="utf-8")
    if heading in text:
        text = text[: text.index(heading)].rstrip() + "\n"
    record_md.write_text(text + "\n" + "\n".join(lines) + "\n", encoding="utf-8")
    record = json.loads(record_json.read_text(encoding="utf-8"))
    record["longtext"] = {
        "baseline": {"setting": weights_of(ENGINE), "k": ENGINE.k, **base},
        "baseline_real": base_real,
        "long_chunks": LONG_CHUNKS,
        "levers": families,
    }
    record_json.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    merge_into_tuning(families, base, base_real, names)
    print("\n".join(lines))


#: The mark of a long-text lever among the levers of tuning.json (they are replaced on a rerun).
LONGTEXT_MARK = "long texts: "


def merge_into_tuning(
    families: list[dict], base: dict[str, float], base_real: dict, names: list[str]
) -> None:
    """Each long-text lever family, at its best value on the shared sets (the mean nDCG@10),
    as a dropped lever in tuning.json (the Measured page's "Levers tried"), beside the levers
    ``report`` wrote. The file's stamp is kept: these levers change no ranking."""
    from engine.measure.results_schema import LAB, Lever, read_results, write_results

    path = REPO / "benchmarks" / "results" / LAB.name
    lab = read_results(LAB, path, str(path.relative_to(REPO)))
    rows = []
    for family in families:
        values = family["values"][1:]  # the first is "off"
        best = max(values, key=lambda v: sum(v[n] for n in names))
        real = "; ".join(
            f"{key.removesuffix(' (real)')}: known-item nDCG@10 {best[key]['ndcg@10']} "
            f"(baseline {base_real[key.removesuffix(' (real)')]['ndcg@10']}), a long text above "
            f"the short answer in {best[key]['short_long_above']:.0%} of questions (baseline "
            f"{base_real[key.removesuffix(' (real)')]['short_long_above']:.0%}), long answers "
            f"{best[key]['long_ndcg@10']} "
            f"(baseline {base_real[key.removesuffix(' (real)')]['long_ndcg@10']})"
            for key in best
            if key.endswith(" (real)")
        )
        engine = ", ".join(f"{n} {base[n]}" for n in names)
        reals = {key.removesuffix(" (real)"): best[key] for key in best if key.endswith(" (real)")}
        said = verdict({n: best[n] for n in names}, base, reals, base_real)
        rows.append(
            Lever(
                f"{LONGTEXT_MARK}{family['lever']} ({best['value']})",
                {n: best[n] for n in names},
                said == "kept",
                f"{said}; against the engine's setting ({engine}); {real}; "
                "benchmarks/results/levers.md has every value",
            )
        )
    kept = tuple(lever for lever in lab.levers.levers if not lever.name.startswith(LONGTEXT_MARK))
    levers = replace(lab.levers, levers=kept + tuple(rows))
    write_results(replace(lab, levers=levers), path)


def weights_of(s: Setting) -> dict[str, float]:
    return {"fts": s.fts, "vector": s.vector, "recency": s.recency, "time": s.time}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "command",
        choices=("extract", "levers", "tune", "abstention", "revector", "report", "longtext"),
    )
    parser.add_argument("--exclude", nargs="*", default=[], help="sets left out of tuning")
    parser.add_argument("--fusion", choices=("rrf", "score", "form"), default="rrf")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "tuning.json")
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument(
        "--data", type=Path, default=DATA, help="the shared sets (default: ../shared/data)"
    )
    parser.add_argument("--only", nargs="*", help="extract only these sets")
    parser.add_argument("--extra", nargs="*", type=Path, default=[], help="more set folders")
    parser.add_argument(
        "--real", nargs="*", default=["licences"], help="known-item sets of real documents"
    )
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    commands: dict[str, Callable[[], None]] = {
        "extract": lambda: extract(args.work, args.only, args.extra, args.data),
        "levers": lambda: levers(args.work),
        "revector": lambda: revector(args.work, args.only[0], ["text", "prev"], args.data),
        "abstention": lambda: abstention(args.work),
        "tune": lambda: tune(args.work, args.exclude, args.fusion),
        "report": lambda: report(args.work, args.out, args.data),
        "longtext": lambda: longtext(args.work, args.real, args.data),
    }
    commands[args.command]()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
