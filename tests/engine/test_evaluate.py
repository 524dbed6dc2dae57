"""The evaluation loader and the metrics wiring, on sets small enough to check by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import HashEmbedder
from engine.db import open_index
from engine.evaluate import (
    DatasetError,
    KeepError,
    evaluate,
    find_sets,
    load_set,
    score,
    write_store,
)
from engine.store import open_store


def write_set(folder: Path, corpus, queries, qrels, split="test") -> Path:  # type: ignore[no-untyped-def]
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in corpus) + "\n")
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries) + "\n")
    lines = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t{g}" for q, d, g in qrels]
    (folder / "qrels" / f"{split}.tsv").write_text("\n".join(lines) + "\n")
    return folder


CORPUS = [
    {
        "_id": "d1",
        "title": "Kestrel",
        "text": "kestrels hover over meadows",
        "event_at": "2024-05-01",
    },
    {"_id": "d2", "title": "Heron", "text": "herons wade in shallow rivers"},
    {"_id": "d3", "title": "Puffin", "text": "puffins nest on sea cliffs"},
]
QUERIES = [
    {"_id": "q1", "text": "kestrels hover", "category": "birds of prey"},
    {"_id": "q2", "text": "puffins nest on cliffs"},
    {"_id": "q3", "text": "unjudged query"},
]


def test_score_matches_hand_computed_figures():
    qrels = {"q1": {"d1": 2, "d2": 1}, "q2": {"d3": 1}}
    runs = {"q1": {"d1": 3.0, "d3": 2.0, "d2": 1.0}, "q2": {"d1": 2.0, "d2": 1.0}}
    figures = score(runs, qrels)
    # q1: DCG = 2/log2(2) + 1/log2(4) = 2.5, ideal = 2 + 1/log2(3); q2 finds nothing.
    assert figures["ndcg@10"] == pytest.approx((2.5 / (2 + 1 / 1.5849625)) / 2, abs=1e-4)
    assert figures["mrr@10"] == pytest.approx(0.5)
    assert figures["recall@5"] == pytest.approx(0.5)
    assert figures["queries"] == 2


def test_graded_qrels_skip_the_header_and_zero_grades(tmp_path):
    folder = write_set(
        tmp_path / "s", CORPUS, QUERIES, [("q1", "d1", 2), ("q1", "d2", 0), ("q2", "d3", 1)]
    )
    data = load_set(folder)
    assert data.qrels == {"q1": {"d1": 2}, "q2": {"d3": 1}}
    assert [q.id for q in data.queries] == ["q1", "q2"]
    assert data.queries[0].category == "birds of prey"


def test_only_split_is_used_when_there_is_no_test_split(tmp_path):
    folder = write_set(tmp_path / "s", CORPUS, QUERIES, [("q1", "d1", 1)], split="train")
    assert load_set(folder).qrels == {"q1": {"d1": 1}}


def test_missing_split_names_the_available_ones(tmp_path):
    folder = write_set(tmp_path / "s", CORPUS, QUERIES, [("q1", "d1", 1)], split="train")
    with pytest.raises(DatasetError, match="available: train"):
        load_set(folder, "dev")


def test_broken_jsonl_names_file_and_line(tmp_path):
    folder = write_set(tmp_path / "s", CORPUS, QUERIES, [("q1", "d1", 1)])
    (folder / "corpus.jsonl").write_text('{"_id": "d1", "text": "x"}\n{not json\n')
    with pytest.raises(DatasetError, match=r"corpus.jsonl:2"):
        load_set(folder)


def test_folder_of_sets_is_several_stores(tmp_path):
    write_set(tmp_path / "all" / "a", CORPUS, QUERIES, [("q1", "d1", 1)])
    write_set(tmp_path / "all" / "b", CORPUS, QUERIES, [("q2", "d3", 1)])
    assert [p.name for p in find_sets(tmp_path / "all")] == ["a", "b"]


def test_event_at_becomes_the_memorys_event_time(tmp_path):
    data = load_set(write_set(tmp_path / "s", CORPUS, QUERIES, [("q1", "d1", 1)]))
    root = tmp_path / "store"
    root.mkdir()
    keys = write_store(data, root)
    from engine.indexer import index_store

    store = open_store(root)
    index_store(store, embed=False)
    conn = open_index(store.index_path)
    rows = dict(conn.execute("SELECT path, event_at FROM files").fetchall())
    conn.close()
    by_id = {doc: rows[key] for key, doc in keys.items()}
    assert by_id == {"d1": "2024-05-01 00:00:00", "d2": None, "d3": None}


def test_evaluate_runs_the_real_path_and_pools_sets(tmp_path):
    write_set(tmp_path / "all" / "a", CORPUS, QUERIES, [("q1", "d1", 1)])
    write_set(tmp_path / "all" / "b", CORPUS, QUERIES, [("q2", "d3", 1)])
    report = evaluate(tmp_path / "all", embedder=HashEmbedder(), ablation=True)
    assert report["overall"]["queries"] == 2
    assert report["overall"]["mrr@10"] == 1.0
    assert set(report["ablation"]) >= {"fused", "only fts", "without vector"}


def test_unknown_arm_is_refused(tmp_path):
    folder = write_set(tmp_path / "s", CORPUS, QUERIES, [("q1", "d1", 1)])
    with pytest.raises(DatasetError, match="unknown arm"):
        evaluate(folder, arms=["bm42"], embedder=HashEmbedder())


def test_a_kept_store_follows_a_smaller_corpus(tmp_path):
    keep = tmp_path / "keep"
    write_set(tmp_path / "big" / "s", CORPUS, QUERIES, [("q1", "d1", 1)])
    evaluate(tmp_path / "big" / "s", embedder=HashEmbedder(), workdir=keep)
    write_set(tmp_path / "small" / "s", CORPUS[:1], QUERIES, [("q1", "d1", 1)])
    report = evaluate(tmp_path / "small" / "s", embedder=HashEmbedder(), workdir=keep)
    assert report["overall"]["mrr@10"] == 1.0
    assert len(list((keep / "s").glob("*.md"))) == 1


def test_corpus_rows_the_indexer_skips_are_reported(tmp_path):
    corpus = [*CORPUS, {"_id": "d4", "title": "Bad", "text": "x", "event_at": "yesterday"}]
    folder = write_set(tmp_path / "s", corpus, QUERIES, [("q1", "d1", 1)])
    report = evaluate(folder, embedder=HashEmbedder())
    [row] = report["skipped"]["s"]
    assert row["id"] == "d4" and "event_at" in row["reason"]


def test_keep_refuses_a_folder_it_did_not_create_and_deletes_nothing(tmp_path):
    folder = write_set(tmp_path / "data" / "s", CORPUS, QUERIES, [("q1", "d1", 1)])
    mine = tmp_path / "memories" / "s" / "my-notes.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("# Mine\n\nthe only copy", encoding="utf-8")
    with pytest.raises(KeepError, match=r"memories: .*not made by memsift eval"):
        evaluate(folder, embedder=HashEmbedder(), workdir=tmp_path / "memories")
    assert mine.read_text(encoding="utf-8") == "# Mine\n\nthe only copy"
    assert sorted(p.name for p in (tmp_path / "memories").rglob("*")) == ["my-notes.md", "s"]


def test_keep_refuses_a_set_folder_it_did_not_create_inside_its_own(tmp_path):
    folder = write_set(tmp_path / "data" / "s", CORPUS, QUERIES, [("q1", "d1", 1)])
    keep = tmp_path / "keep"
    evaluate(folder, embedder=HashEmbedder(), workdir=keep)
    other = write_set(tmp_path / "data2" / "t", CORPUS, QUERIES, [("q1", "d1", 1)])
    (keep / "t").mkdir()
    (keep / "t" / "user.md").write_text("# User\n\nkeep me", encoding="utf-8")
    with pytest.raises(KeepError, match="not made by memsift eval"):
        evaluate(other, embedder=HashEmbedder(), workdir=keep)
    assert (keep / "t" / "user.md").exists()


def test_keep_accepts_a_new_or_empty_folder_and_reuses_its_own(tmp_path):
    folder = write_set(tmp_path / "data" / "s", CORPUS, QUERIES, [("q1", "d1", 1)])
    empty = tmp_path / "empty"
    empty.mkdir()
    for keep in (tmp_path / "new" / "deeper", empty, empty):
        report = evaluate(folder, embedder=HashEmbedder(), workdir=keep)
        assert report["overall"]["mrr@10"] == 1.0
        assert len(list((keep / "s").glob("*.md"))) == len(CORPUS)


def test_keep_never_deletes_a_file_it_did_not_write(tmp_path):
    keep = tmp_path / "keep"
    write_set(tmp_path / "big" / "s", CORPUS, QUERIES, [("q1", "d1", 1)])
    evaluate(tmp_path / "big" / "s", embedder=HashEmbedder(), workdir=keep)
    dropped = keep / "s" / "zz-dropped-in.md"
    dropped.write_text("# Dropped in\n\nby the user", encoding="utf-8")
    write_set(tmp_path / "small" / "s", CORPUS[:1], QUERIES, [("q1", "d1", 1)])
    with pytest.raises(KeepError, match=r"zz-dropped-in\.md"):
        evaluate(tmp_path / "small" / "s", embedder=HashEmbedder(), workdir=keep)
    assert dropped.read_text(encoding="utf-8") == "# Dropped in\n\nby the user"
