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
import itertools
import json
import math
import pickle
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.db import open_index
from engine.embedder import default_embedder
from engine.evaluate import find_sets, load_set, write_store
from engine.indexer import index_store
from engine.query import sanitize
from engine.scope import ScopeSpec, build_scope
from engine.search import MAX_EMBED_QUERY_CHARS, choose_fts_form
from engine.store import open_store

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
DEPTH = 100
CANDIDATES = 40


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


def set_groups(data: Path) -> dict[str, list[Path]]:
    """Set name -> its store folders (one, or several for a folder of sets)."""
    groups: dict[str, list[Path]] = {}
    for folder in sorted(p for p in data.iterdir() if p.is_dir()):
        groups[folder.name] = find_sets(folder)
    return groups


FTS_SQL = {
    "file": """
        SELECT f.path, bm25(files_fts, 4.0, 1.0, 2.0) AS score
        FROM files_fts JOIN files AS f ON f.id = files_fts.rowid
        WHERE files_fts MATCH ?1 AND {scope}
        ORDER BY score, f.path LIMIT ?2
    """,
}


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


def extract_store(folder: Path, work: Path, embedder, fts_variants: Iterable[str]) -> StoreRuns:  # type: ignore[no-untyped-def]
    data = load_set(folder)
    root = work / "stores" / folder.parent.name / folder.name
    root.mkdir(parents=True, exist_ok=True)
    keys = write_store(data, root)
    store = open_store(root)
    index_store(store, embedder=embedder)
    conn = open_index(store.index_path)
    moments = {
        keys[p]: m for p, m in conn.execute("SELECT path, coalesce(event_at, updated_at) FROM files")
    }
    matrix, owner, paths = vector_matrix(conn)
    scope = build_scope(ScopeSpec())
    texts = [q.text for q in data.queries]
    vectors = embedder.embed([t[:MAX_EMBED_QUERY_CHARS] for t in texts])
    out = []
    for query, qvec in zip(data.queries, vectors, strict=True):
        runs = QueryRuns(query.id, query.text, query.category, data.qrels[query.id])
        match, form = choose_fts_form(conn, sanitize(query.text), scope)
        for variant in fts_variants:
            hits: list[tuple[str, float]] = []
            if match is not None:
                sql = FTS_SQL[variant].replace("{scope}", scope.sql)
                hits = [
                    (keys[p], float(s))
                    for p, s in conn.execute(sql, (match, DEPTH, *scope.values)).fetchall()
                ]
            runs.arms[f"fts:{variant}"] = hits
        sims = matrix @ qvec
        best = np.full(len(paths), -np.inf, dtype=np.float32)
        np.maximum.at(best, owner, sims)
        order = np.lexsort((np.array(paths), -best))[:DEPTH]
        runs.arms["vector"] = [(keys[paths[i]], float(best[i])) for i in order]
        out.append(runs)
    conn.close()
    return StoreRuns(folder.name, moments, out)


def extract(work: Path, only: list[str] | None) -> None:
    embedder = default_embedder()
    for name, folders in set_groups(DATA).items():
        if only and name not in only:
            continue
        started = time.perf_counter()
        stores = [extract_store(f, work, embedder, FTS_SQL) for f in folders]
        (work / f"{name}.pkl").write_bytes(pickle.dumps(stores))
        print(f"{name}: {sum(len(s.queries) for s in stores)} queries "
              f"in {time.perf_counter() - started:.0f} s", file=sys.stderr)


# ----------------------------------------------------------------------------- fusion replay


def ndcg10(ranked: list[str], relevant: dict[str, int]) -> float:
    gains = [relevant.get(d, 0) for d in ranked[:10]]
    dcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sorted(relevant.values(), reverse=True)[:10]
    idcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


@dataclass(frozen=True)
class Setting:
    fts: float = 1.0
    vector: float = 1.0
    recency: float = 0.2
    k: int = 60
    fts_variant: str = "file"
    fusion: str = "rrf"  # or "score": convex combination of normalised scores


def recency_ranks(moments: dict[str, str], pool: Iterable[str]) -> dict[str, int]:
    """rank() OVER (ORDER BY moment DESC) among the pool, as the recency arm computes it."""
    items = sorted(pool, key=lambda d: moments[d], reverse=True)
    ranks: dict[str, int] = {}
    previous, rank = None, 0
    for position, doc in enumerate(items, 1):
        if moments[doc] != previous:
            rank, previous = position, moments[doc]
        ranks[doc] = rank
    return ranks


def fuse(store: StoreRuns, query: QueryRuns, s: Setting) -> list[str]:
    lists = {
        "fts": query.arms[f"fts:{s.fts_variant}"][:CANDIDATES],
        "vector": query.arms["vector"][:CANDIDATES],
    }
    weights = {"fts": s.fts, "vector": s.vector}
    lists = {n: v for n, v in lists.items() if weights[n] > 0}
    pool = {d for hits in lists.values() for d, _ in hits}
    scores: dict[str, float] = dict.fromkeys(pool, 0.0)
    if s.fusion == "rrf":
        for name, hits in lists.items():
            for rank, (doc, _) in enumerate(hits, 1):
                scores[doc] += weights[name] / (s.k + rank)
    else:
        for name, hits in lists.items():
            if not hits:
                continue
            raw = np.array([v for _, v in hits])
            if name == "fts":
                raw = -raw  # bm25: more negative is better
            lo, hi = raw.min(), raw.max()
            norm = (raw - lo) / (hi - lo) if hi > lo else np.ones_like(raw)
            for (doc, _), value in zip(hits, norm, strict=True):
                scores[doc] += weights[name] * float(value)
    if s.recency > 0 and pool:
        ranks = recency_ranks(store.moments, pool)
        for doc, rank in ranks.items():
            scores[doc] += s.recency / (s.k + rank) if s.fusion == "rrf" else 0.0
    lead = {d: r for r, (d, _) in enumerate(lists.get("fts", []) or lists.get("vector", []))}
    return sorted(scores, key=lambda d: (-scores[d], lead.get(d, 10**6), d))


def score_set(stores: list[StoreRuns], s: Setting) -> float:
    values = [ndcg10(fuse(st, q, s), q.relevant) for st in stores for q in st.queries]
    return sum(values) / len(values)


def load(work: Path) -> dict[str, list[StoreRuns]]:
    return {p.stem: pickle.loads(p.read_bytes()) for p in sorted(work.glob("*.pkl"))}


def grid() -> list[Setting]:
    out = []
    for fts, vector, recency, k in itertools.product(
        (0.6, 0.8, 1.0, 1.2, 1.5), (0.6, 0.8, 1.0, 1.2), (0.0, 0.05, 0.1, 0.2), (20, 40, 60)
    ):
        out.append(Setting(fts, vector, recency, k))
    return out


def tune(work: Path) -> None:
    sets = load(work)
    settings = grid()
    table = {name: [score_set(stores, s) for s in settings] for name, stores in sets.items()}
    names = list(sets)
    baseline = Setting()
    print("baseline (registry):", {n: round(score_set(sets[n], baseline), 4) for n in names})
    for held in names:
        others = [n for n in names if n != held]
        mean = [sum(table[n][i] for n in others) / len(others) for i in range(len(settings))]
        best = max(range(len(settings)), key=lambda i: mean[i])
        print(f"held out {held}: chose {settings[best]} -> {table[held][best]:.4f}")
    mean_all = [sum(table[n][i] for n in names) / len(names) for i in range(len(settings))]
    best = max(range(len(settings)), key=lambda i: mean_all[i])
    print("best on all:", settings[best], {n: round(table[n][best], 4) for n in names})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("extract", "tune"))
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    commands: dict[str, Callable[[], None]] = {
        "extract": lambda: extract(args.work, args.only),
        "tune": lambda: tune(args.work),
    }
    commands[args.command]()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
