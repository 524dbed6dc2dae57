"""The SQLite statement names memories by row id and lets the k-NN group chunks by file (and
compute the files' distances ahead, on a worker): it must rank exactly as the statement keyed
by path did (fixtures/fused_by_path.sql), row for row,
score for score, on a store with multi-chunk files, copies, authority tags, a state plane,
dates, and scopes narrow enough to take each arm's exhaustive branch."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import numpy as np
import pytest

from engine.indexing.indexer import index_store
from engine.ranking.assemble import assemble
from engine.ranking.contract import Available, bind, bound_prefix
from engine.ranking.query import sanitize
from engine.ranking.scope import ScopeSpec, build_scope
from engine.sqlite.db import open_state
from engine.sqlite.search import SqliteSearch

BY_PATH = (Path(__file__).parent / "fixtures" / "fused_by_path.sql").read_text(encoding="utf-8")
WORDS = [f"w{i}" for i in range(40)]
TAGS = ["pinned", "canonical", "superseded", "do-not-answer-from", "t1", "t2", "t3"]
KINDS = ["semantic", "episodic", "task", "person", "procedural"]
SCOPES = [
    ScopeSpec(),
    ScopeSpec(kinds=("episodic",)),
    ScopeSpec(tags=("t2",)),
    ScopeSpec(path_prefix="b/"),
    ScopeSpec(include_archived=True),
]


def body(rng: random.Random) -> str:
    """One to four paragraphs of 20-160 words: long ones make several chunks."""
    return "\n\n".join(
        " ".join(rng.choice(WORDS[: rng.randint(8, 40)]) for _ in range(rng.randint(20, 160)))
        for _ in range(rng.randint(1, 4))
    )


def memory(rng: random.Random) -> str:
    tags = json.dumps(rng.sample(TAGS, rng.choice([0, 0, 1, 2])))
    lines = [f"title: {' '.join(rng.sample(WORDS, 2))}", f"kind: {rng.choice(KINDS)}"]
    lines.append(f"tags: {tags}")
    if rng.random() < 0.5:
        lines.append(f"event_at: 2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}")
    if rng.random() < 0.05:
        lines.append("archived: true")
    return "---\n" + "\n".join(lines) + "\n---\n\n" + body(rng) + "\n"


@pytest.fixture(scope="module")
def store(tmp_path_factory):  # type: ignore[no-untyped-def]
    from conftest import HashEmbedder

    rng = random.Random(11)
    root = tmp_path_factory.mktemp("by-id")
    texts = [memory(rng) for _ in range(220)]
    texts += texts[:12]  # copies: the same vectors, so the vector arm sees exact ties
    for i, text in enumerate(texts):
        path = root / ("a" if i % 2 else "b") / f"m{i:03d}.md"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    from engine.files.store import open_store

    opened = open_store(root)
    index_store(opened, embedder=HashEmbedder())
    state = open_state(opened.state_path)
    with state:
        for i in range(0, len(texts), 7):
            state.execute(
                "INSERT INTO access(path, access_count, last_accessed_at, outcome_score) "
                "VALUES (?, ?, ?, ?)",
                (
                    f"{'a' if i % 2 else 'b'}/m{i:03d}.md",
                    i % 5,
                    f"2026-0{1 + i % 9}-1{i % 10} 10:00:00",
                    (i % 3 - 1) * 0.5,
                ),
            )
    state.close()
    return opened


def test_every_row_is_the_one_the_path_keyed_statement_gives(store):  # type: ignore[no-untyped-def]
    from conftest import HashEmbedder

    embedder = HashEmbedder()
    session = SqliteSearch(store)
    session.open()
    assert session.has_state()
    rng = random.Random(3)
    queries = [" ".join(rng.sample(WORDS, rng.randint(1, 3))) for _ in range(24)]
    queries += ["nothing here", "w1 unknownword"]
    compared = 0
    try:
        for query, spec, offered in itertools.product(queries, SCOPES, (5, 30)):
            scope = build_scope(spec)
            by_id = assemble(Available(), scope.sql).sql
            by_path = BY_PATH.replace("{scope}", scope.sql)
            terms = sanitize(query)
            vector = np.asarray(embedder.embed([query])[0], dtype="<f4").tobytes()
            values = {
                "match": terms.any_form(),
                "candidate_limit": offered,
                "limit": 4 * offered,
                "query_vector": vector,
                "time_from": "2026-03-01 00:00:00",
                "time_to": "2026-03-31 23:59:59",
            }
            params = bind(values, scope.values)
            expected = session.conn.execute(by_path, bound_prefix(by_path, params)).fetchall()
            got = session.conn.execute(by_id, bound_prefix(by_id, params)).fetchall()
            assert got == expected, (query, spec, offered)
            session.vector_ahead(vector, offered)  # the nearest files found beside the statement
            ahead = session.conn.execute(by_id, bound_prefix(by_id, params)).fetchall()
            assert ahead == expected, (query, spec, offered)
            compared += len(expected)
    finally:
        session.close()
    assert compared > 2000
