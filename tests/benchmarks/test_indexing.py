"""benchmarks/indexing.py: how it simulates a budget on a store indexed without one, how it
groups and scores its known-item questions, and how it reads questions out of HTML."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from indexing import (
    Doc,
    band_name,
    candidate_questions,
    html_sections,
    ndcg_at_10,
    shared_set_chunks,
    simulate_budget,
)

from engine.files.chunking import chunk_text
from engine.files.store import open_store
from engine.indexing.budget import embeddable
from engine.indexing.indexer import index_store
from engine.sqlite.db import connect

PARAGRAPHS = [
    " ".join(f"{topic}{n} sentence about {topic} number {n}." for n in range(30))
    for topic in ("alpha", "bravo", "charlie", "delta", "echo")
]


def chunk_rows(root: Path) -> list[tuple[str, int, str, bool]]:
    """(path, seq, text, has a vector) of every chunk."""
    conn = connect(str(root / ".memsift" / "index.db"))
    try:
        return conn.execute(
            "SELECT f.path, c.seq, c.text, e.hash IS NOT NULL FROM chunks AS c "
            "JOIN files AS f ON f.id = c.file_id LEFT JOIN embeddings AS e ON e.hash = c.hash "
            "ORDER BY f.path, c.seq"
        ).fetchall()
    finally:
        conn.close()


@pytest.fixture
def indexed(tmp_path: Path, hash_embedder) -> Path:  # type: ignore[no-untyped-def]
    """a.md: several chunks; b.md: one chunk, a.md's second (one a budget of 2 leaves out),
    under the same title."""
    root = tmp_path / "store"
    root.mkdir()
    (root / "a.md").write_text("---\ntitle: Same\n---\n" + "\n\n".join(PARAGRAPHS) + "\n")
    index_store(open_store(root), embedder=hash_embedder)
    second = chunk_rows(root)[1][2]
    (root / "b.md").write_text(f"---\ntitle: Same\n---\n{second}\n")
    index_store(open_store(root), embedder=hash_embedder)
    assert [row[2] for row in chunk_rows(root) if row[0] == "b.md"] == [second]
    return root


def vectors_of(root: Path, path: str) -> list[bool]:
    return [bool(row[3]) for row in chunk_rows(root) if row[0] == path]


def test_a_simulated_budget_takes_the_vectors_past_it_away(indexed: Path, hash_embedder):  # type: ignore[no-untyped-def]
    chunks = len(vectors_of(indexed, "a.md"))

    with_vector, without = simulate_budget(indexed, 2, hash_embedder.name, hash_embedder.dim)

    kept = [embeddable(seq, chunks, 2) for seq in range(chunks)]
    assert chunks > 4 and sum(kept) == 2  # chunk 0 and one further on, not the second
    assert vectors_of(indexed, "a.md") == [kept[0], True, *kept[2:]]  # the second: b.md's text
    assert (with_vector, without) == (4, chunks - 3)


def test_a_chunk_past_the_budget_keeps_a_vector_another_file_embeds(indexed: Path, hash_embedder):  # type: ignore[no-untyped-def]
    simulate_budget(indexed, 2, hash_embedder.name, hash_embedder.dim)

    assert vectors_of(indexed, "a.md")[1] and vectors_of(indexed, "b.md") == [True]


def test_a_simulated_store_counts_its_coverage_within_the_budget(indexed: Path, hash_embedder):  # type: ignore[no-untyped-def]
    simulate_budget(indexed, 2, hash_embedder.name, hash_embedder.dim)

    conn = connect(str(indexed / ".memsift" / "index.db"))
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    conn.close()
    assert (meta["chunks"], meta["embedded_chunks"], meta["embed_budget"]) == ("3", "3", "2")
    assert "store_floor" not in meta  # measured anew for the vectors left


@pytest.mark.parametrize(
    ("paths", "relevant", "score"),
    [
        (["a", "b"], ("a",), 1.0),
        (["b", "a"], ("a",), 0.6309),
        (["b", "a", "c"], ("a", "c"), 0.6934),
        (["x"] * 10 + ["a"], ("a",), 0.0),
    ],
)
def test_ndcg_counts_a_file_and_its_twin_in_the_first_ten(paths, relevant, score):  # type: ignore[no-untyped-def]
    assert ndcg_at_10(paths, relevant) == pytest.approx(score, abs=1e-4)


@pytest.mark.parametrize(
    ("chunk", "band"),
    [
        (0, "chunks 0-15"),
        (16, "chunks 16-31"),
        (63, "chunks 32-63"),
        (64, "chunks 64-127"),
        (900, "chunks 128+"),
    ],
)
def test_a_question_is_grouped_by_the_chunk_its_answer_lies_in(chunk: int, band: str):
    assert band_name(chunk) == band


def test_html_sections_are_read_from_their_headings():
    raw = (
        "<h2>Intro</h2><p>first</p>\n\n<h3 class='x'>The <code>fs.stat</code> call</h3>"
        "<p>Returns a <b>Stats</b> object.</p>"
    )

    assert html_sections(raw) == [
        ("Intro", "first"),
        ("The fs.stat call", "Returns a Stats object."),
    ]


def test_a_heading_repeated_in_a_file_is_not_asked_but_its_first_sentence_is():
    body = "This section lists every notable change in the release of this version."
    text = f"## Notable changes\n\n{body}\n\n## Notable changes\n\n{body} Again.\n"

    questions = candidate_questions(Doc("c.md", text, ("c.md",), text))

    assert "Notable changes" not in questions
    assert questions == [body]


def test_a_shared_sets_largest_document_is_counted_over_all_its_stores(tmp_path: Path):
    long = " ".join(f"Sentence number {n} of a long document." for n in range(200))
    for folder, texts in (("one", ["short"]), ("many/chat-01", ["hi"]), ("many/chat-02", [long])):
        (tmp_path / folder).mkdir(parents=True)
        rows = [json.dumps({"_id": str(n), "text": text}) for n, text in enumerate(texts)]
        (tmp_path / folder / "corpus.jsonl").write_text("\n".join(rows) + "\n")

    found = {s.name: s.max_chunks_per_document for s in shared_set_chunks(tmp_path)}

    assert found == {"one": 1, "many": len(chunk_text(long))} and found["many"] > 1
