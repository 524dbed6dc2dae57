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
    ranked = [p for p, _ in conn.execute(sql, bound_prefix(sql, values))]
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
    return StoreRuns(folder.name, moments, own, [q for q in wanted if q.category == "foreign"])


def extract(work: Path, only: list[str] | None, extra: list[Path]) -> None:
    embedder = default_embedder()
    groups = set_groups(DATA, extra)
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
    pool = {d for hits in lists.values() for d, _ in hits}
    scores: dict[str, float] = dict.fromkeys(pool, 0.0)
    if s.fusion == "rrf":
        for name, hits in lists.items():
            for rank, (doc, _) in enumerate(hits, 1):
                scores[doc] += weights[name] / (s.k + rank)
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


def revector(work: Path, name: str, modes: list[str]) -> None:
    """Add vector-arm lists computed from other embedded texts (``vector:<mode>``)."""
    embedder = default_embedder()
    path = work / f"{name}.pkl"
    stores: list[StoreRuns] = pickle.loads(path.read_bytes())
    folders = {f.name: f for f in set_groups(DATA, []).get(name, [])}
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


def report(work: Path, out: Path) -> None:
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

    shared = {p.name for p in DATA.iterdir() if p.is_dir()}
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


def weights_of(s: Setting) -> dict[str, float]:
    return {"fts": s.fts, "vector": s.vector, "recency": s.recency, "time": s.time}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "command", choices=("extract", "levers", "tune", "abstention", "revector", "report")
    )
    parser.add_argument("--exclude", nargs="*", default=[], help="sets left out of tuning")
    parser.add_argument("--fusion", choices=("rrf", "score", "form"), default="rrf")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "tuning.json")
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--only", nargs="*", help="extract only these sets")
    parser.add_argument("--extra", nargs="*", type=Path, default=[], help="more set folders")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    commands: dict[str, Callable[[], None]] = {
        "extract": lambda: extract(args.work, args.only, args.extra),
        "levers": lambda: levers(args.work),
        "revector": lambda: revector(args.work, args.only[0], ["text", "prev"]),
        "abstention": lambda: abstention(args.work),
        "tune": lambda: tune(args.work, args.exclude, args.fusion),
        "report": lambda: report(args.work, args.out),
    }
    commands[args.command]()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
