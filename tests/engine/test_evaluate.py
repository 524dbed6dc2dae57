"""The evaluation loader and the metrics wiring, on sets small enough to check by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import HashEmbedder
from engine.files.store import open_store
from engine.measure.evaluate import (
    DatasetError,
    KeepError,
    evaluate,
    find_sets,
    load_set,
    score,
    write_store,
)
from engine.sqlite.db import open_index


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
    from engine.indexing.indexer import index_store

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


# ------------------------------------------------------------------ malformed sets are refused


def good_set(tmp_path: Path) -> Path:
    return write_set(tmp_path / "s", CORPUS, QUERIES, [("q1", "d1", 1), ("q2", "d3", 1)])


def refusal(folder: Path) -> str:
    """The one-line message ``load_set`` refuses ``folder`` with."""
    with pytest.raises(DatasetError) as error:
        load_set(folder)
    return str(error.value)


def test_an_empty_queries_file_is_refused(tmp_path):
    folder = good_set(tmp_path)
    (folder / "queries.jsonl").write_text("\n")
    assert refusal(folder).startswith(f"{folder / 'queries.jsonl'}: no queries in it; ")


def test_an_empty_corpus_is_refused(tmp_path):
    folder = good_set(tmp_path)
    (folder / "corpus.jsonl").write_text("")
    assert refusal(folder).startswith(f"{folder / 'corpus.jsonl'}: no documents in it; ")


def test_qrels_without_a_positive_judgement_are_refused(tmp_path):
    folder = write_set(tmp_path / "s", CORPUS, QUERIES, [("q1", "d1", 0)])
    message = refusal(folder)
    assert message.startswith(f"{folder / 'qrels' / 'test.tsv'}: no judgement with a relevance")


def test_a_judged_query_missing_from_queries_jsonl_is_refused_with_its_qrels_line(tmp_path):
    folder = write_set(tmp_path / "s", CORPUS, QUERIES, [("q1", "d1", 1), ("q9", "d2", 1)])
    message = refusal(folder)
    assert message.startswith(f'{folder / "qrels" / "test.tsv"}:3: query "q9" is not in ')
    assert "queries.jsonl (1 such line); add it there or remove its lines" in message


def test_qrels_naming_only_documents_missing_from_the_corpus_are_refused(tmp_path):
    folder = write_set(tmp_path / "s", CORPUS, QUERIES, [("q1", "x1", 1), ("q2", "x2", 1)])
    message = refusal(folder)
    assert message.startswith(f"{folder / 'qrels' / 'test.tsv'}:2: no judged document is in ")
    assert '"x1"' in message


def test_some_judged_documents_missing_from_the_corpus_are_a_warning_naming_count_and_line(
    tmp_path,
):
    folder = write_set(
        tmp_path / "s",
        CORPUS,
        QUERIES,
        [("q1", "d1", 1), ("q1", "gone1", 1), ("q2", "d3", 1), ("q2", "gone2", 2)],
    )
    data = load_set(folder)
    assert data.qrels["q1"] == {"d1": 1, "gone1": 1}  # still relevant, as BEIR counts it
    [warning] = data.warnings
    assert warning.startswith(f"{folder / 'qrels' / 'test.tsv'}:3: 2 judgements name a document")
    assert '(first "gone1")' in warning


def test_eval_reports_the_missing_documents_warning_and_still_scores(tmp_path):
    folder = write_set(tmp_path / "s", CORPUS, QUERIES, [("q1", "d1", 1), ("q2", "gone", 1)])
    heard: list[str] = []
    report = evaluate(folder, embedder=HashEmbedder(), warn=heard.append)
    assert report["overall"]["queries"] == 2
    assert report["warnings"] == heard and "1 judgement name" in heard[0]


@pytest.mark.parametrize(
    ("name", "row", "shown"),
    [
        ("corpus.jsonl", {"_id": None, "text": "x"}, "null"),
        ("corpus.jsonl", {"_id": "", "text": "x"}, '""'),
        ("corpus.jsonl", {"_id": ["d9"], "text": "x"}, '["d9"]'),
        ("queries.jsonl", {"_id": None, "text": "x"}, "null"),
        ("queries.jsonl", {"_id": True, "text": "x"}, "true"),
    ],
)
def test_a_null_or_unusable_id_is_refused_with_its_line(tmp_path, name, row, shown):
    folder = good_set(tmp_path)
    path = folder / name
    path.write_text(path.read_text() + json.dumps(row) + "\n")
    line = len(path.read_text().splitlines())
    assert refusal(folder) == (
        f"{path}:{line}: _id is {shown}; every row needs a non-empty string _id"
    )


@pytest.mark.parametrize("name", ["corpus.jsonl", "queries.jsonl"])
def test_a_repeated_id_is_refused_naming_both_lines(tmp_path, name):
    folder = good_set(tmp_path)
    path = folder / name
    path.write_text(path.read_text() + json.dumps({"_id": "d1" if "corpus" in name else "q1"}))
    line = len(path.read_text().splitlines())
    assert refusal(folder).startswith(f"{path}:{line}: _id ")
    assert "again (first on line 1); ids must be unique" in refusal(folder)


def test_a_judged_query_without_text_is_refused(tmp_path):
    queries = [{"_id": "q1", "text": "  "}, *QUERIES[1:]]
    folder = write_set(tmp_path / "s", CORPUS, queries, [("q1", "d1", 1)])
    assert refusal(folder).startswith(
        f'{folder / "queries.jsonl"}:1: query "q1" is judged but has no text; '
    )


def test_an_unjudged_query_without_text_is_no_problem(tmp_path):
    queries = [*QUERIES, {"_id": "q4", "text": ""}]
    folder = write_set(tmp_path / "s", CORPUS, queries, [("q1", "d1", 1)])
    assert [q.id for q in load_set(folder).queries] == ["q1"]


@pytest.mark.parametrize("name", ["corpus.jsonl", "queries.jsonl"])
def test_a_missing_file_is_named_with_the_layout(tmp_path, name):
    folder = good_set(tmp_path)
    (folder / name).unlink()
    message = refusal(folder)
    assert message.startswith(f"{folder / name}: missing; a BEIR set holds corpus.jsonl, ")
    assert "Errno" not in message


def test_a_missing_qrels_folder_is_named(tmp_path):
    folder = good_set(tmp_path)
    (folder / "qrels" / "test.tsv").unlink()
    (folder / "qrels").rmdir()
    assert refusal(folder).startswith(f"{folder / 'qrels'}: missing folder; a BEIR set holds")


def test_a_qrels_folder_without_a_split_file_is_named(tmp_path):
    folder = good_set(tmp_path)
    (folder / "qrels" / "test.tsv").rename(folder / "qrels" / "test.txt")
    assert refusal(folder).startswith(f"{folder / 'qrels'}: no <split>.tsv file in it")


@pytest.mark.parametrize("name", ["corpus.jsonl", "queries.jsonl", "qrels/test.tsv"])
def test_undecodable_utf8_is_named_with_file_and_line(tmp_path, name):
    folder = good_set(tmp_path)
    path = folder / name
    lines = path.read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].replace(b"d", b"\xe9", 1) if b"d" in lines[1] else b"\xe9" + lines[1]
    path.write_bytes(b"".join(lines))
    message = refusal(folder)
    assert message.startswith(f"{path}:2: not UTF-8 (byte 0xe9 at column ")
    assert message.endswith("; save the file as UTF-8")


def test_a_byte_order_mark_is_not_a_malformed_first_line(tmp_path):
    folder = good_set(tmp_path)
    path = folder / "corpus.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert [row["_id"] for row in load_set(folder).corpus] == ["d1", "d2", "d3"]


def broken_sets(tmp_path: Path) -> dict[str, Path]:
    """One set per refusal ``memsift eval`` must make before indexing anything."""
    sets: dict[str, Path] = {}
    for name in ("no queries", "no corpus", "null id", "missing queries", "bad utf8"):
        sets[name] = write_set(
            tmp_path / name.replace(" ", "-"), CORPUS, QUERIES, [("q1", "d1", 1)]
        )
    (sets["no queries"] / "queries.jsonl").write_text("")
    (sets["no corpus"] / "corpus.jsonl").write_text("\n\n")
    (sets["null id"] / "corpus.jsonl").write_text('{"_id": null, "text": "x"}\n')
    (sets["missing queries"] / "queries.jsonl").unlink()
    (sets["bad utf8"] / "queries.jsonl").write_bytes(b'{"_id": "q1", "text": "caf\xe9"}\n')
    sets["unknown query"] = write_set(tmp_path / "unknown", CORPUS, QUERIES, [("q9", "d1", 1)])
    sets["no qrels"] = write_set(tmp_path / "no-qrels", CORPUS, QUERIES, [])
    (sets["no qrels"] / "qrels" / "test.tsv").unlink()
    (sets["no qrels"] / "qrels").rmdir()
    return sets


@pytest.mark.parametrize(
    ("case", "where"),
    [
        ("no queries", "queries.jsonl: "),
        ("no corpus", "corpus.jsonl: "),
        ("null id", "corpus.jsonl:1: "),
        ("missing queries", "queries.jsonl: "),
        ("bad utf8", "queries.jsonl:1: "),
        ("unknown query", "test.tsv:2: "),
        ("no qrels", "qrels: "),
    ],
)
def test_memsift_eval_refuses_a_malformed_set_in_one_line_with_exit_code_2(tmp_path, case, where):
    from click.testing import CliRunner

    from engine.cli import cli

    folder = broken_sets(tmp_path)[case]
    result = CliRunner().invoke(cli, ["eval", str(folder)])
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert line.startswith(f"memsift: {folder}") and where in line and "; " in line, line
    assert "Errno" not in line and "codec" not in line and "0.0000" not in result.output
