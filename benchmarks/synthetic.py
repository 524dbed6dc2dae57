"""Synthetic memory stores for the benchmarks: a Zipf language, realistic lengths, random vectors.

Two builders share one document generator:

* :func:`build_index` writes rows straight into a fresh ``index.db`` (made by the engine's own
  ``open_index(create=True)``, so the schema, triggers and FTS5 table are the real ones) and a
  ``state.db`` (``open_state``). Chunks come from the engine's ``chunk_text`` and are keyed by the
  engine's ``text_hash(embed_text(title, chunk))``; every distinct chunk text gets a random unit
  vector stored under a stub model name, the coverage keys are written by the engine's
  ``record_coverage`` and the store floor's record by the engine's ``engine.floor.refresh``
  (the floor's probes get random unit vectors too), as an index run leaves them. Nothing is
  parsed or embedded, so a 50k-file store takes seconds.
* :func:`write_markdown` writes the same kind of documents as Markdown files with front matter,
  for the benchmarks that go through the real indexer.

Everything is a pure function of the seed: a search benchmark and its NumPy floor, run in two
processes, see the same store and the same queries.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.files.chunking import chunk_text
from engine.files.config import DEFAULT_EMBED_CHUNKS_PER_FILE
from engine.floor import refresh as refresh_floor
from engine.indexing.pipeline import embed_text, text_hash
from engine.sqlite.db import open_index, open_state, write_meta
from engine.sqlite.floor import SqliteFloorPlace
from engine.sqlite.indexdb import record_coverage

#: Bump when the generator changes, so cached stores of an older generator are not reused.
GENERATOR_VERSION = "2"

VOCABULARY = 20_000
ZIPF_S = 1.1
#: The most frequent words of the synthetic language play the part of function words: queries
#: skip them, as real queries mostly carry content words (and the stop list drops the rest).
QUERY_SKIP_TOP = 50
#: Words per body: lognormal around this median, clipped to [MIN_WORDS, MAX_WORDS]. The median
#: is tuned so the engine's chunker (1000-2000 characters) yields about 1.5 chunks per file.
MEDIAN_WORDS = 195
SIGMA_WORDS = 0.5
MIN_WORDS, MAX_WORDS = 60, 400
EVENT_AT_SHARE = 0.5
ACCESS_SHARE = 0.05
NOW = dt.datetime(2026, 6, 1, 12, 0, 0)

KINDS = ("semantic", "episodic", "procedural", "person", "task", None)
KIND_P = (0.40, 0.30, 0.15, 0.07, 0.05, 0.03)
ARCHIVED_SHARE = 0.02
FOLDERS = ("people", "projects", "infra", "journal", "notes", "howto", "meetings", "ideas")

_ONSETS = "b c d f g h j k l m n p r s t v w z br ch cl dr fl gr kr pl pr sh sk sl sp st tr th"
_VOWELS = "a e i o u ai ea ou io"
_CODAS = " n r s l m k t nd st"


def vocabulary(size: int = VOCABULARY, seed: int = 7) -> list[str]:
    """``size`` distinct pronounceable words; frequent ranks get short words, as in English."""
    rng = np.random.default_rng(seed)
    onsets, vowels, codas = _ONSETS.split(), _VOWELS.split(), [*_CODAS.split(), ""]
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < size:
        rank = len(words)
        syllables = 1 if rank < 60 else 2 if rank < 2000 else int(rng.integers(2, 5))
        word = "".join(
            rng.choice(onsets)
            + rng.choice(vowels)
            + (rng.choice(codas) if i == syllables - 1 else "")
            for i in range(syllables)
        )
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def zipf_p(size: int = VOCABULARY, s: float = ZIPF_S) -> np.ndarray:
    weights = 1.0 / np.arange(1, size + 1, dtype=np.float64) ** s
    return weights / weights.sum()


@dataclass(frozen=True)
class Doc:
    path: str
    title: str
    kind: str | None
    event_at: str | None
    updated_at: str
    tags: tuple[str, ...]
    archived: bool
    body: str


def stamp(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S")



def file_values(doc: Doc, path: str) -> tuple[object, ...]:
    """A synthetic document's ``files`` row after its id, stored under ``path``: the columns
    the indexer writes (size and content hash of the body, mtime 0)."""
    body = doc.body.encode("utf-8")
    return (
        path,
        doc.title,
        doc.kind,
        doc.event_at,
        doc.updated_at,
        json.dumps(list(doc.tags)),
        int(doc.archived),
        hashlib.sha256(body).hexdigest(),
        len(body),
        0,
    )


def documents(n: int, seed: int) -> Iterator[Doc]:
    """``n`` synthetic memories, a pure function of ``(n, seed)``."""
    rng = np.random.default_rng(seed)
    words = np.array(vocabulary())
    p = zipf_p()
    lengths = np.clip(
        rng.lognormal(np.log(MEDIAN_WORDS), SIGMA_WORDS, n).round(), MIN_WORDS, MAX_WORDS
    ).astype(int)
    stream = words[rng.choice(len(words), size=int(lengths.sum()), p=p)]
    content_p = p[QUERY_SKIP_TOP:] / p[QUERY_SKIP_TOP:].sum()
    title_words = words[QUERY_SKIP_TOP + rng.choice(len(content_p), size=n * 8, p=content_p)]
    title_lengths = rng.integers(3, 9, n)
    tag_pool = [f"tag{i:02d}" for i in range(40)]
    kinds = rng.choice(len(KINDS), size=n, p=KIND_P)
    archived = rng.random(n) < ARCHIVED_SHARE
    has_event = rng.random(n) < EVENT_AT_SHARE
    event_days = rng.uniform(0, 3 * 365, n)
    updated_days = rng.uniform(0, 2 * 365, n)
    tag_counts = rng.integers(0, 4, n)
    sentence_lengths = rng.integers(6, 22, int(lengths.sum()) // 6 + n)
    folders = rng.integers(0, len(FOLDERS), n)
    offset = sentence_at = 0
    for i in range(n):
        body_words = stream[offset : offset + lengths[i]]
        offset += lengths[i]
        sentences = []
        start = 0
        while start < len(body_words):
            stop = start + int(sentence_lengths[sentence_at])
            sentence_at += 1
            piece = " ".join(body_words[start:stop])
            sentences.append(piece[:1].upper() + piece[1:] + ".")
            start = stop
        # Paragraphs of about four sentences, as notes are written.
        body = "\n\n".join(" ".join(sentences[j : j + 4]) for j in range(0, len(sentences), 4))
        title_terms = title_words[i * 8 : i * 8 + title_lengths[i]]
        title = " ".join(title_terms).capitalize()
        tags = tuple(tag_pool[j] for j in rng.choice(40, size=tag_counts[i], replace=False))
        event_at = stamp(NOW - dt.timedelta(days=float(event_days[i]))) if has_event[i] else None
        yield Doc(
            path=f"{FOLDERS[folders[i]]}/{i:06d}-{'-'.join(title_terms[:3])}.md",
            title=title,
            kind=KINDS[kinds[i]],
            event_at=event_at,
            updated_at=stamp(NOW - dt.timedelta(days=float(updated_days[i]))),
            tags=tags,
            archived=bool(archived[i]),
            body=body,
        )


def stub_model_name(dim: int) -> str:
    return f"bench-random-unit-{dim}"


def build_index(root: Path, n: int, dim: int, seed: int) -> dict[str, object]:
    """Write a store of ``n`` files at ``root`` straight into index.db and state.db."""
    store_dir = root / ".memsift"
    store_dir.mkdir(parents=True, exist_ok=True)
    conn = open_index(store_dir / "index.db", create=True)
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("PRAGMA cache_size=-262144")
    rng = np.random.default_rng(seed + 1)
    model = stub_model_name(dim)
    files = chunks = 0
    with conn:
        file_rows = []
        chunk_rows = []
        hashes: dict[str, None] = {}
        paths: list[str] = []
        for file_id, doc in enumerate(documents(n, seed), start=1):
            paths.append(doc.path)
            file_rows.append((file_id, *file_values(doc, doc.path)))
            for seq, chunk in enumerate(chunk_text(doc.body) or [doc.title]):
                digest = text_hash(embed_text(doc.title, chunk))
                chunk_rows.append((file_id, seq, chunk, digest))
                hashes[digest] = None
            if len(file_rows) >= 2000:
                flush(conn, file_rows, chunk_rows)
                files += len(file_rows)
                chunks += len(chunk_rows)
                file_rows, chunk_rows = [], []
        flush(conn, file_rows, chunk_rows)
        files += len(file_rows)
        chunks += len(chunk_rows)
        distinct = list(hashes)
        for start in range(0, len(distinct), 8192):
            part = distinct[start : start + 8192]
            vectors = unit_rows(rng, len(part), dim)
            conn.executemany(
                "INSERT INTO embeddings(hash, model, dim, vector) VALUES (?, ?, ?, ?)",
                [(h, model, dim, v.tobytes()) for h, v in zip(part, vectors, strict=True)],
            )
        record_coverage(conn, model, dim, DEFAULT_EMBED_CHUNKS_PER_FILE)
        write_meta(conn, "indexed_at", stamp(NOW))
        write_meta(conn, "complete", 1)
    # A real index run ends by measuring the store floor; a store without its record would
    # measure it in every search() (one new session per call) and time that instead.
    refresh_floor(SqliteFloorPlace(conn), StubEmbedder(dim, []), chunks)
    conn.execute("PRAGMA optimize")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    access = write_state(root, paths, seed)
    return {"files": files, "chunks": chunks, "vectors": len(distinct), "access_rows": access}


def flush(conn, file_rows: list[tuple], chunk_rows: list[tuple]) -> None:  # type: ignore[no-untyped-def]
    conn.executemany(
        "INSERT INTO files(id, path, title, kind, event_at, updated_at, tags, archived,"
        " content_hash, size, mtime_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        file_rows,
    )
    conn.executemany("INSERT INTO chunks(file_id, seq, text, hash) VALUES (?, ?, ?, ?)", chunk_rows)


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    rows = rng.standard_normal((n, dim), dtype=np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows.astype("<f4")


def state_rows(paths: Sequence[str], seed: int) -> list[tuple[str, int, str, float]]:
    """Access rows (path, access_count, last_accessed_at, outcome_score) for about
    ACCESS_SHARE of the files, a pure function of ``(paths, seed)``: the same state plane
    whichever backend a benchmark writes it into."""
    rng = np.random.default_rng(seed + 2)
    picked = np.flatnonzero(rng.random(len(paths)) < ACCESS_SHARE)
    return [
        (
            paths[i],
            int(rng.geometric(0.2)),
            stamp(NOW - dt.timedelta(hours=float(rng.exponential(24 * 30)))),
            float(np.clip(rng.normal(0.1, 0.4), -1, 1)),
        )
        for i in picked
    ]


def write_state(root: Path, paths: Sequence[str], seed: int) -> int:
    """The state plane a search ATTACHes (``state.db``), holding :func:`state_rows`."""
    rows = state_rows(paths, seed)
    conn = open_state(root / ".memsift" / "state.db")
    with conn:
        conn.executemany(
            "INSERT OR REPLACE INTO access(path, access_count, last_accessed_at, outcome_score)"
            " VALUES (?, ?, ?, ?)",
            rows,
        )
    conn.close()
    return len(rows)


def write_markdown(root: Path, n: int, seed: int) -> int:
    """Write ``n`` synthetic memories as Markdown files with front matter under ``root``."""
    written = 0
    for doc in documents(n, seed):
        path = root / doc.path
        path.parent.mkdir(parents=True, exist_ok=True)
        front = [f"title: {json.dumps(doc.title)}"]
        if doc.kind:
            front.append(f"kind: {doc.kind}")
        if doc.event_at:
            front.append(f"event_at: {doc.event_at.replace(' ', 'T')}Z")
        front.append(f"tags: [{', '.join(doc.tags)}]")
        if doc.archived:
            front.append("archived: true")
        path.write_text("---\n" + "\n".join(front) + "\n---\n" + doc.body + "\n", "utf-8")
        written += 1
    return written


@dataclass(frozen=True)
class Query:
    text: str
    vector: np.ndarray


def queries(
    conn,
    count: int,
    dim: int,
    seed: int,
    scope_sql: str,  # type: ignore[no-untyped-def]
) -> list[Query]:
    """``count`` queries: 1-4 content words drawn from the Zipf law, and a query vector near a
    random in-scope chunk's vector (cosine about 0.7), so each query has real neighbours."""
    rng = np.random.default_rng(seed + 3)
    words = vocabulary()
    p = zipf_p()
    content_p = p[QUERY_SKIP_TOP:] / p[QUERY_SKIP_TOP:].sum()
    in_scope = [
        chunk_id
        for (chunk_id,) in conn.execute(
            f"SELECT c.id FROM chunks AS c JOIN files AS f ON f.id = c.file_id WHERE {scope_sql} "
            "ORDER BY c.id"
        )
    ]
    out = []
    seen: set[str] = set()
    while len(out) < count:
        terms = [
            words[QUERY_SKIP_TOP + i]
            for i in rng.choice(
                len(content_p), size=int(rng.integers(1, 5)), p=content_p, replace=False
            )
        ]
        text = " ".join(terms)
        if text in seen:
            continue
        seen.add(text)
        chunk_id = in_scope[int(rng.integers(0, len(in_scope)))]
        (blob,) = conn.execute(
            "SELECT e.vector FROM chunks AS c JOIN embeddings AS e ON e.hash = c.hash "
            "WHERE c.id = ?",
            (chunk_id,),
        ).fetchone()
        near = np.frombuffer(blob, dtype="<f4")
        noise = unit_rows(rng, 1, dim)[0]
        vector = near + noise
        out.append(Query(text, (vector / np.linalg.norm(vector)).astype("<f4")))
    return out


class StubEmbedder:
    """Stands in for the model at query time: returns the benchmark's chosen vector for each
    query text, so a search's latency excludes embedding time. Any other text (the store
    floor's probes) gets a random unit vector seeded by the text, the same in every process."""

    def __init__(self, dim: int, table: Sequence[Query]) -> None:
        self.name = stub_model_name(dim)
        self.dim = dim
        self._vectors = {q.text: q.vector for q in table}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.vector(t) for t in texts]).astype(np.float32)

    def vector(self, text: str) -> np.ndarray:
        known = self._vectors.get(text)
        if known is not None:
            return known
        seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
        return unit_rows(np.random.default_rng(seed), 1, self.dim)[0]
