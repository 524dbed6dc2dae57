"""Levers beyond the weights: the fts arm's query and scoring, the vector arm's file score, and
pseudo-relevance feedback, each measured by replaying the arm against the real index.

The fusion lab (``fusion_lab.py``) saved every arm's ranking once per set; this script adds
rankings the engine could produce with one change each (a bm25 column weight, a stop word
list, a file score built from more than one chunk, a query enriched from its own first hits),
fuses them with the lab's own ``fuse`` and scores them per set and leave one set out.

It reads copies of the lab's indexed stores (``<work>/stores``, the same layout as the lab's)
and never writes to them; the lab's pickles are read, never rewritten.

    python benchmarks/lever_lab.py extract --lab $TMPDIR/lab --work $TMPDIR/levers
    python benchmarks/lever_lab.py report --lab $TMPDIR/lab --work $TMPDIR/levers --out x.json
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import sys
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import apsw
import numpy as np
import sqlite_vec
from fusion_lab import (
    DATA,
    DEPTH,
    WHOLE_TEXT,
    QueryRuns,
    Setting,
    StoreRuns,
    build_file_fts,
    fuse,
    ndcg10,
    set_groups,
)

from engine.evaluate import load_set
from engine.query import STOP_WORDS, quote, sanitize, words_of

#: The setting the registry holds (tuning.json), with fts by best chunk as the engine ranks it.
BASE = Setting(
    fts=1.0, vector=1.0, recency=0.02, time=1.0, k=20, candidates=100, fts_variant="chunk"
)
SETS = ("cranfield", "madial-en", "realtalk", "scifact-train")

#: A wider English stop list than the engine's (which keeps negations and qualifiers on
#: purpose): the usual function words of a search engine's list, written out here.
WIDE_STOP = STOP_WORDS | frozenset(
    """
    all almost along already although among another anyone anything anyway anywhere around
    because become becomes becoming besides between both but can could did during either else
    elsewhere enough etc even ever every everyone everything except few first following
    further get gets getting give given go goes going got however if indeed instead itself
    last least less like made make makes many meanwhile more moreover most mostly much my
    namely neither nevertheless next nobody none nor nothing now nowhere often once one only
    onto other others otherwise over own per perhaps please quite rather really same seem
    seemed seeming seems several since still therefore thereby though through throughout thus
    together toward towards under unless until up upon us use used using various via want
    well whatever whenever whereas whether while whither whoever whole within without yet
    oh yeah ok okay hey hi hmm haha wow lol im ive dont didnt doesnt thats youre
    """.split()
)
#: Function words only, keeping the engine's rule: negations, qualifiers, quantifiers,
#: comparisons and verbs stay query words (a memory and its wrong-fact twin differ by those).
FUNCTION_WORDS = frozenset(
    """
    because but if though although however therefore thus whether while whereas yet since
    until upon via onto toward towards within through throughout during among between besides
    etc per itself ourselves yourself yourselves themselves herself himself anyone anything
    everyone everything someone something somebody anybody everybody whatever whoever
    whenever wherever whichever else
    """.split()
)
#: What chat adds: interjections, and the tails words_of leaves of contractions (I'm, you've,
#: we'll, they're, I'd); n't stays, "don" and "didn" carry a negation.
CHAT_WORDS = frozenset(
    "oh yeah yes ok okay hey hi hello hmm haha lol wow um uh ah m ve ll re d".split()
)
STOP_LISTS = {
    "engine": STOP_WORDS,
    "wide": WIDE_STOP,
    "func": STOP_WORDS | FUNCTION_WORDS,
    "chat": STOP_WORDS | CHAT_WORDS,
    "funcchat": STOP_WORDS | FUNCTION_WORDS | CHAT_WORDS,
}


# ----------------------------------------------------------------------------- the stores


def index_copy(work: Path, folder: Path) -> Path:
    """The copy of the lab's index for a set folder (``<work>/stores/<parent>/<name>``)."""
    return work / "stores" / folder.parent.name / folder.name / ".memsift" / "index.db"


def connect(path: Path) -> apsw.Connection:
    """A connection to a COPY of a lab index (the lab's own stores are never opened)."""
    conn = apsw.Connection(str(path))
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    conn.enable_load_extension(False)
    return conn


def path_ids(folder: Path) -> dict[str, str]:
    """Memory file name -> corpus id, as ``engine.evaluate.write_store`` names the files."""
    import re

    return {
        f"{n:07d}-{re.sub(r'[^A-Za-z0-9_-]+', '_', row['_id'])[:60]}.md": row["_id"]
        for n, row in enumerate(load_set(folder).corpus)
    }


# ----------------------------------------------------------------------------- fts variants


@dataclass(frozen=True)
class FtsSpec:
    """One way the fts arm could read a query and score a memory."""

    weights: tuple[float, float, float] = (4.0, 1.0, 2.0)  # bm25 column weights: title, body, tags
    stop: str = "engine"  # which stop list leaves the forms
    cap: str = "before"  # the 64-term cap counts stop words ("before") or content words only
    form: str = "probe"  # "probe": all terms when a chunk holds them, else any; "or": any
    unit: str = "chunk"  # "chunk": best chunk; "file": whole-file bm25; "mix": best + share*2nd
    share: float = 0.0  # for "mix": the share of the file's second-best chunk

    @property
    def name(self) -> str:
        w = "-".join(f"{x:g}" for x in self.weights)
        tail = f"{self.unit}{self.share:g}" if self.unit == "mix" else self.unit
        return f"fts:w{w}/{self.stop}/{self.cap}/{self.form}/{tail}"


def forms(text: str, spec: FtsSpec) -> tuple[str | None, str | None]:
    """(all-terms form, any-term form) as the engine builds them, with the spec's stop list
    and cap; the engine's own ``QueryTerms`` when the spec is the engine's."""
    if spec.stop == "engine" and spec.cap == "before":
        terms = sanitize(text)
        return terms.all_form(), terms.any_form()
    stop = STOP_LISTS[spec.stop]
    terms = sanitize(text, max_terms=10**6)
    content = [t for t in terms.terms if len(t) > 1 or t[0] not in stop] or list(terms.terms)
    if spec.cap == "before":
        allowed = set(terms.terms[:64])
        content = [t for t in content if t in allowed]
    content = content[:64]
    all_form = " AND ".join(quote(t) for t in content) or None
    words = list(dict.fromkeys(w for t in content for w in t))  # phrases opened, as the engine
    kept = [w for w in words if w not in stop] or words
    any_form = " OR ".join(quote((w,)) for w in kept) or None
    return all_form, any_form


def chunk_scores(conn: apsw.Connection, match: str, weights) -> list[tuple[int, float]]:  # type: ignore[no-untyped-def]
    """Every matching chunk's (file id, bm25) with the given column weights."""
    sql = (
        f"SELECT c.file_id, bm25(chunks_fts, {weights[0]!r}, {weights[1]!r}, {weights[2]!r}) "
        "FROM chunks_fts JOIN chunks AS c ON c.id = chunks_fts.rowid WHERE chunks_fts MATCH ?"
    )
    return [(int(f), float(s)) for f, s in conn.execute(sql, (match,))]


def file_scores(conn: apsw.Connection, match: str, weights) -> list[tuple[int, float]]:  # type: ignore[no-untyped-def]
    """Whole-file bm25 from a scratch files table (the engine before best-chunk ranking)."""
    sql = (
        f"SELECT rowid, bm25(ffts, {weights[0]!r}, {weights[1]!r}, {weights[2]!r}) "
        "FROM lab.ffts WHERE ffts MATCH ?"
    )
    return [(int(f), float(s)) for f, s in conn.execute(sql, (match,))]


def has_match(conn: apsw.Connection, match: str, table: str) -> bool:
    """The probe: does any row of ``table`` (chunks_fts, or the scratch whole-file table) hold
    every term?"""
    sql = f"SELECT 1 FROM {table} WHERE {table.split('.')[-1]} MATCH ? LIMIT 1"
    return conn.execute(sql, (match,)).fetchone() is not None


def rank_files(
    rows: Iterable[tuple[int, float]], unit: str, share: float, names: dict[int, tuple[str, str]]
) -> list[tuple[str, float]]:
    """Files best first (bm25 is negative: lower is better) by the unit's file score; ties by
    path as the engine breaks them. ``names``: file id -> (path, corpus id)."""
    per: dict[int, list[float]] = {}
    for fid, score in rows:
        per.setdefault(fid, []).append(score)
    scored = []
    for fid, scores in per.items():
        scores.sort()
        value = scores[0]
        if unit == "mix" and len(scores) > 1:
            value += share * scores[1]
        scored.append((value, names[fid][0], names[fid][1]))
    scored.sort()
    return [(doc, v) for v, _, doc in scored[:DEPTH]]


def fts_ranking(conn, text: str, spec: FtsSpec, names, memo: dict) -> list[tuple[str, float]]:  # type: ignore[no-untyped-def]
    """The fts arm's ranking (corpus id, file score) of one query under ``spec``; ``memo``
    keeps one query's bm25 rows, which specs differing only in the file score share."""
    all_form, any_form = forms(text, spec)
    if all_form is None or any_form is None:
        return []
    match = any_form
    table = "lab.ffts" if spec.unit == "file" else "chunks_fts"
    if spec.form == "probe" and (all_form == any_form or has_match(conn, all_form, table)):
        match = all_form
    if spec.unit == "file":
        return rank_files(file_scores(conn, match, spec.weights), "chunk", 0.0, names)
    key = (match, spec.weights)
    if key not in memo:
        memo[key] = chunk_scores(conn, match, spec.weights)
    return rank_files(memo[key], spec.unit, spec.share, names)


# ----------------------------------------------------------------------------- extraction


def lab_sets(lab: Path) -> dict[str, list[StoreRuns]]:
    return {n: pickle.loads((lab / f"{n}.pkl").read_bytes()) for n in SETS}


def our_sets(lab: Path, work: Path) -> dict[str, list[StoreRuns]]:
    """The lab's runs with this script's lists added (``<work>/<set>.pkl``), else the lab's."""
    out = {}
    for name in SETS:
        ours = work / f"{name}.pkl"
        out[name] = pickle.loads((ours if ours.exists() else lab / f"{name}.pkl").read_bytes())
    return out


#: Where the sets are (``--data``; the lab's default is ``../shared/data`` beside the checkout).
DATA_DIR = [DATA]


def folders_of(name: str) -> dict[str, Path]:
    return {f.name: f for f in set_groups(DATA_DIR[0], [])[name]}


def add_fts(lab: Path, work: Path, specs: list[FtsSpec], only: list[str] | None = None) -> None:
    """Rank every query of every set by each spec not yet saved, and save."""
    sets = our_sets(lab, work)
    for name, stores in sets.items():
        if only and name not in only:
            continue
        started = time.perf_counter()
        folders = folders_of(name)
        for st in stores:
            missing = [s for s in specs if s.name not in st.queries[0].arms]
            if not missing:
                continue
            folder = folders[st.name]
            ids = path_ids(folder)
            conn = connect(index_copy(work, folder))
            names = {i: (p, ids[p]) for i, p in conn.execute("SELECT id, path FROM files")}
            if any(s.unit == "file" for s in missing):
                build_file_fts(conn)
            for q in st.queries:
                memo: dict = {}
                for spec in missing:
                    q.arms[spec.name] = fts_ranking(conn, q.text, spec, names, memo)
            conn.close()
        (work / f"{name}.pkl").write_bytes(pickle.dumps(stores))
        print(f"{name}: fts in {time.perf_counter() - started:.0f} s", file=sys.stderr)


# ----------------------------------------------------------------------------- scoring


def score(stores: list[StoreRuns], s: Setting) -> float:
    values = [
        ndcg10([d for d, _ in fuse(st, q, s)], q.relevant) for st in stores for q in st.queries
    ]
    return sum(values) / len(values)


def alone(stores: list[StoreRuns], s: Setting, arm: str) -> float:
    if arm == "fts":
        return score(stores, replace(s, vector=0.0, recency=0.0, time=0.0))
    return score(stores, replace(s, fts=0.0, recency=0.0, time=0.0))


# ----------------------------------------------------------------------------- vector variants


@dataclass
class Plane:
    """One store's chunk vectors: row i belongs to file ``owner[i]`` (an index into ``docs``)."""

    matrix: np.ndarray
    owner: np.ndarray
    docs: list[str]  # corpus ids, in path order
    paths: list[str]


def load_plane(conn: apsw.Connection, ids: dict[str, str]) -> Plane:
    rows = conn.execute(
        "SELECT f.path, e.vector FROM chunks AS c JOIN embeddings AS e ON e.hash = c.hash "
        "JOIN files AS f ON f.id = c.file_id WHERE f.archived = 0 ORDER BY f.path, c.seq"
    ).fetchall()
    paths = sorted({p for p, _ in rows})
    where = {p: i for i, p in enumerate(paths)}
    owner = np.array([where[p] for p, _ in rows])
    matrix = np.stack([np.frombuffer(v, dtype="<f4") for _, v in rows])
    return Plane(matrix, owner, [ids[p] for p in paths], paths)


def file_best(plane: Plane, sims: np.ndarray) -> np.ndarray:
    best = np.full(len(plane.docs), -np.inf, dtype=np.float32)
    np.maximum.at(best, plane.owner, sims)
    return best


def file_second(plane: Plane, sims: np.ndarray, best: np.ndarray) -> np.ndarray:
    """Each file's second-best chunk similarity (-inf for a one-chunk file)."""
    is_best = sims >= best[plane.owner]
    rest = np.where(is_best, -np.inf, sims).astype(np.float32)
    # a file whose best value occurs twice keeps it as its second
    twice = np.bincount(plane.owner, weights=is_best, minlength=len(plane.docs)) > 1
    second = np.full(len(plane.docs), -np.inf, dtype=np.float32)
    np.maximum.at(second, plane.owner, rest)
    return np.where(twice, best, second)


def ranked(plane: Plane, values: np.ndarray) -> list[tuple[str, float]]:
    """Top files by value, ties by path (the engine's order)."""
    order = np.lexsort((np.array(plane.paths), -values))[:DEPTH]
    return [(plane.docs[i], float(values[i])) for i in order]


def vector_file_score(plane: Plane, sims: np.ndarray, mode: str) -> np.ndarray:
    """``max``: the best chunk (the engine); ``mean2``: the mean of the best two (one-chunk
    files: their one); ``plus<b>``: best + b * second."""
    best = file_best(plane, sims)
    if mode == "max":
        return best
    second = file_second(plane, sims, best)
    has2 = np.isfinite(second)
    if mode == "mean2":
        return np.where(has2, (best + second) / 2, best)
    bonus = float(mode.removeprefix("plus"))
    return np.where(has2, best + bonus * second, best)


def query_vectors(work: Path, name: str, stores: list[StoreRuns]) -> dict[str, np.ndarray]:
    """Each query's embedding, as the search embeds it (cached in ``<work>``)."""
    from engine.embedder import default_embedder
    from engine.search import MAX_EMBED_QUERY_CHARS

    cache = work / f"{name}.qvec.pkl"
    if cache.exists():
        return pickle.loads(cache.read_bytes())
    queries = [q for st in stores for q in st.queries]
    vectors = default_embedder().embed([q.text[:MAX_EMBED_QUERY_CHARS] for q in queries])
    out = {}
    position = 0
    for st in stores:
        for q in st.queries:
            out[f"{st.name}/{q.qid}"] = np.asarray(vectors[position], dtype=np.float32)
            position += 1
    cache.write_bytes(pickle.dumps(out))
    return out


@dataclass(frozen=True)
class Feedback:
    """Rocchio on the vector side: q + alpha * mean(best-chunk vectors of the top m hits of
    ``source`` (the fused ranking, or one arm's)), the vector arm re-run with it."""

    alpha: float
    m: int
    source: str = "fused"  # or "fts", "vector"

    @property
    def name(self) -> str:
        return f"vector:rocchio-{self.source}-a{self.alpha:g}-m{self.m}"


def feedback_docs(st: StoreRuns, q: QueryRuns, source: str, m: int) -> list[str]:
    if source == "fused":
        return [d for d, _ in fuse(st, q, BASE)[:m]]
    key = "fts:chunk" if source == "fts" else "vector"
    return [d for d, _ in q.arms[key][:m]]


def add_vectors(
    lab: Path, work: Path, modes: list[str], feedback: list[Feedback], only: list[str] | None
) -> None:
    sets = our_sets(lab, work)
    for name, stores in sets.items():
        if only and name not in only:
            continue
        started = time.perf_counter()
        qvecs = query_vectors(work, name, stores)
        folders = folders_of(name)
        for st in stores:
            folder = folders[st.name]
            conn = connect(index_copy(work, folder))
            plane = load_plane(conn, path_ids(folder))
            conn.close()
            row_of = {d: i for i, d in enumerate(plane.docs)}
            for q in st.queries:
                qv = qvecs[f"{st.name}/{q.qid}"]
                sims = plane.matrix @ qv
                for mode in modes:
                    q.arms[f"vector:{mode}"] = ranked(plane, vector_file_score(plane, sims, mode))
                for fb in feedback:
                    docs = [row_of[d] for d in feedback_docs(st, q, fb.source, fb.m)]
                    if not docs:
                        q.arms[fb.name] = q.arms["vector"]
                        continue
                    picks = []
                    for doc in docs:  # the file's chunk nearest the query
                        rows = np.flatnonzero(plane.owner == doc)
                        picks.append(rows[np.argmax(sims[rows])])
                    moved = qv + fb.alpha * plane.matrix[picks].mean(axis=0)
                    q.arms[fb.name] = ranked(plane, file_best(plane, plane.matrix @ moved))
        (work / f"{name}.pkl").write_bytes(pickle.dumps(stores))
        print(f"{name}: vectors in {time.perf_counter() - started:.0f} s", file=sys.stderr)


# ----------------------------------------------------------------------------- lexical feedback


@dataclass(frozen=True)
class Expansion:
    """RM3-like: the ``terms`` best words of the top ``m`` hits of the first pass (each word
    weighted by its share of a hit's words, summed over the hits, times its idf), OR-ed to the
    query's any-term form, ranked again by bm25 (best chunk)."""

    terms: int
    m: int
    source: str = "fused"  # or "fts"

    @property
    def name(self) -> str:
        return f"fts:rm3-{self.source}-t{self.terms}-m{self.m}"


class DocFreq:
    """Chunk document frequencies from the real FTS5 index, one MATCH per word (cached)."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn
        self.n = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        self.cache: dict[str, int] = {}

    def idf(self, word: str) -> float:
        if word not in self.cache:
            sql = "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?"
            self.cache[word] = self.conn.execute(sql, (quote((word,)),)).fetchone()[0]
        return math.log((self.n + 1) / (self.cache[word] + 0.5))


def expansion_words(texts: list[str], query_words: set[str], df: DocFreq, count: int) -> list[str]:
    weights: Counter[str] = Counter()
    for text in texts:
        words = [w for w in words_of(text) if w not in WIDE_STOP and not w.isdigit()]
        if not words:
            continue
        for word, tf in Counter(words).items():
            weights[word] += tf / len(words)
    scored = sorted(
        ((v * df.idf(w), w) for w, v in weights.items() if w not in query_words and len(w) > 2),
        reverse=True,
    )
    return [w for _, w in scored[:count]]


def add_expansions(
    lab: Path, work: Path, expansions: list[Expansion], only: list[str] | None
) -> None:
    sets = our_sets(lab, work)
    for name, stores in sets.items():
        if only and name not in only:
            continue
        started = time.perf_counter()
        folders = folders_of(name)
        for st in stores:
            missing = [e for e in expansions if e.name not in st.queries[0].arms]
            if not missing:
                continue
            folder = folders[st.name]
            ids = path_ids(folder)
            conn = connect(index_copy(work, folder))
            names = {i: (p, ids[p]) for i, p in conn.execute("SELECT id, path FROM files")}
            bodies = {
                ids[p]: f"{t}\n{b}"
                for p, t, b in conn.execute(f"SELECT path, title, {WHOLE_TEXT} FROM files AS f")
            }
            df = DocFreq(conn)
            for q in st.queries:
                terms = sanitize(q.text)
                any_form = terms.any_form()
                if any_form is None:
                    for e in missing:
                        q.arms[e.name] = []
                    continue
                own = set(terms.words)
                memo: dict = {}
                for e in missing:
                    if e.source == "fused":
                        top = [d for d, _ in fuse(st, q, BASE)[: e.m]]
                    else:
                        top = [d for d, _ in q.arms["fts:chunk"][: e.m]]
                    extra = expansion_words([bodies[d] for d in top], own, df, e.terms)
                    match = " OR ".join([any_form, *(quote((w,)) for w in extra)])
                    key = (match, (4.0, 1.0, 2.0))
                    if key not in memo:
                        memo[key] = chunk_scores(conn, match, key[1])
                    q.arms[e.name] = rank_files(memo[key], "chunk", 0.0, names)
            conn.close()
        (work / f"{name}.pkl").write_bytes(pickle.dumps(stores))
        print(f"{name}: expansions in {time.perf_counter() - started:.0f} s", file=sys.stderr)


# ----------------------------------------------------------------------------- a fifth arm


def fuse_extra(st: StoreRuns, q: QueryRuns, base: Setting, arm: str, weight: float) -> list[str]:
    """The base fusion plus one more query arm (``arm``: a saved list) at ``weight``: what a
    feedback arm beside the two query arms, not in place of one, would give."""
    scores = dict(fuse(st, q, base))
    for rank, (doc, _) in enumerate(q.arms[arm][: base.candidates], 1):
        scores[doc] = scores.get(doc, 0.0) + weight / (base.k + rank)
    lead = {d: r for r, (d, _) in enumerate(q.arms[f"fts:{base.fts_variant}"])}
    return sorted(scores, key=lambda d: (-scores[d], lead.get(d, 10**6), d))


def score_extra(stores: list[StoreRuns], base: Setting, arm: str, weight: float) -> float:
    values = [
        ndcg10(fuse_extra(st, q, base, arm, weight), q.relevant)
        for st in stores
        for q in st.queries
    ]
    return sum(values) / len(values)


# ----------------------------------------------------------------------------- the report


@dataclass(frozen=True)
class Option:
    """One value of a lever: a changed setting, optionally with a fifth arm beside it."""

    label: str
    setting: Setting
    extra: str | None = None
    weight: float = 0.0

    def score(self, stores: list[StoreRuns]) -> float:
        if self.extra is None:
            return score(stores, self.setting)
        return score_extra(stores, self.setting, self.extra, self.weight)


def fts_option(spec: FtsSpec) -> Option:
    return Option(spec.name, replace(BASE, fts_variant=spec.name.removeprefix("fts:")))


def vector_option(name: str) -> Option:
    return Option(name, replace(BASE, vector_variant=name))


FEEDBACK = [
    Feedback(a, m, src) for src in ("fused", "fts", "vector") for a in (0.5, 1.0) for m in (3, 5)
]
EXPANSIONS = [Expansion(t, m, src) for src in ("fused", "fts") for t in (5, 10) for m in (3, 5)]


def families() -> dict[str, list[Option]]:
    """Every lever as its values; the first value of each is the registry's (the baseline)."""
    base = FtsSpec()
    return {
        "fts bm25 column weights (title, body, tags)": [
            fts_option(replace(base, weights=w))
            for w in ((4.0, 1.0, 2.0), (2.0, 1.0, 1.0), (1.0, 1.0, 1.0), (0.0, 1.0, 0.0))
        ],
        "fts form: all-terms probe vs any-term always": [
            fts_option(base),
            fts_option(replace(base, form="or")),
        ],
        "fts file score: best chunk, whole file, best + share x second": [
            fts_option(base),
            fts_option(replace(base, unit="file")),
            *(fts_option(replace(base, unit="mix", share=x)) for x in (0.1, 0.25, 0.5, 1.0)),
        ],
        "fts stop list (cap counted after stop words)": [
            fts_option(base),
            *(
                fts_option(replace(base, stop=x, cap="after"))
                for x in ("wide", "func", "chat", "funcchat")
            ),
        ],
        "vector file score: best chunk, mean of top 2, best + b x second": [
            vector_option(f"vector:{m}") for m in ("max", "mean2", "plus0.1", "plus0.25")
        ],
        "vector Rocchio in place of the vector arm": [
            Option("off", BASE),
            *(vector_option(f.name) for f in FEEDBACK),
        ],
        "RM3 expansion in place of the fts arm": [
            Option("off", BASE),
            *(fts_option_named(e.name) for e in EXPANSIONS),
        ],
        "vector Rocchio as a fifth arm": [
            Option("off", BASE),
            *(
                Option(f"{f.name} w{w:g}", BASE, f.name, w)
                for f in FEEDBACK
                if f.source != "vector"
                for w in (0.25, 0.5)
            ),
        ],
        "RM3 expansion as a fifth arm": [
            Option("off", BASE),
            *(Option(f"{e.name} w{w:g}", BASE, e.name, w) for e in EXPANSIONS for w in (0.25, 0.5)),
        ],
    }


def fts_option_named(name: str) -> Option:
    return Option(name, replace(BASE, fts_variant=name.removeprefix("fts:")))


def singles(stores: list[StoreRuns]) -> float:
    return max(alone(stores, BASE, "fts"), alone(stores, BASE, "vector"))


def report(lab: Path, work: Path, out: Path) -> None:
    """Per lever: each value's nDCG@10 per set, and leave one set out (each fold picks the
    value with the best mean on the other sets, among values whose fusion stays within 0.003
    of the best single arm on each of them, and is scored on the held-out set)."""
    sets = our_sets(lab, work)
    best_single = {n: singles(st) for n, st in sets.items()}
    result: dict[str, object] = {
        "baseline_setting": {
            "weights": {
                "fts": BASE.fts,
                "vector": BASE.vector,
                "recency": BASE.recency,
                "time": BASE.time,
            },
            "k": BASE.k,
            "candidates": BASE.candidates,
            "fts": "best chunk",
        },
        "best_single_arm": {n: round(v, 4) for n, v in best_single.items()},
        "levers": [],
    }
    for family, options in families().items():
        table = {n: [o.score(st) for o in options] for n, st in sets.items()}
        folds = []
        for held in SETS:
            others = [n for n in SETS if n != held]
            fair = [
                i
                for i in range(len(options))
                if all(table[n][i] >= best_single[n] - 0.003 for n in others)
            ]
            pick = max(
                fair or range(len(options)),
                key=lambda i: sum(table[n][i] for n in others) / len(others),
            )
            folds.append(
                {
                    "held_out": held,
                    "chose": options[pick].label,
                    "ndcg@10": round(table[held][pick], 4),
                    "baseline": round(table[held][0], 4),
                }
            )
        loso = sum(f["ndcg@10"] for f in folds) / len(folds)
        base_mean = sum(table[n][0] for n in SETS) / len(SETS)
        entry = {
            "lever": family,
            "values": [
                {"value": o.label, **{n: round(table[n][i], 4) for n in SETS}}
                for i, o in enumerate(options)
            ],
            "loso": folds,
            "loso_mean": round(loso, 4),
            "baseline_mean": round(base_mean, 4),
        }
        result["levers"].append(entry)  # type: ignore[union-attr]
        print(f"{family}: LOSO mean {loso:.4f} vs baseline {base_mean:.4f}", file=sys.stderr)
        for f in folds:
            print(
                f"   held {f['held_out']:<14} {f['ndcg@10']:.4f} (base {f['baseline']:.4f})"
                f"  chose {f['chose']}",
                file=sys.stderr,
            )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}", file=sys.stderr)


def extract(lab: Path, work: Path, only: list[str] | None) -> None:
    """Every list the report needs: fts variants, vector variants and feedback, expansions."""
    specs = [
        o.setting.fts_variant
        for options in families().values()
        for o in options
        if o.setting.fts_variant.startswith("w")
    ]
    add_fts(lab, work, [spec_of(v) for v in dict.fromkeys(specs)], only)
    add_vectors(lab, work, ["max", "mean2", "plus0.1", "plus0.25"], FEEDBACK, only)
    add_expansions(lab, work, EXPANSIONS, only)


def spec_of(variant: str) -> FtsSpec:
    """The FtsSpec a variant name was made from (the inverse of ``FtsSpec.name``)."""
    weights, stop, cap, form, unit = variant.removeprefix("w").split("/")
    share = 0.0
    if unit.startswith("mix"):
        unit, share = "mix", float(unit.removeprefix("mix"))
    w = tuple(float(x) for x in weights.split("-"))
    return FtsSpec(w, stop, cap, form, unit, share)  # type: ignore[arg-type]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("extract", "report"))
    parser.add_argument("--lab", type=Path, required=True, help="the fusion lab's --work")
    parser.add_argument("--work", type=Path, required=True, help="copies of its stores, lists")
    parser.add_argument("--data", type=Path, default=DATA, help="the evaluation sets")
    parser.add_argument("--only", nargs="*", help="extract only these sets")
    parser.add_argument("--out", type=Path, default=Path("levers.json"))
    args = parser.parse_args()
    DATA_DIR[0] = args.data
    if args.command == "extract":
        extract(args.lab, args.work, args.only)
    else:
        report(args.lab, args.work, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
