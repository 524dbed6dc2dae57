"""The Measured page's Markdown writer: its table helper, a section written from typed results
exactly, and results that lack what the page needs."""

from __future__ import annotations

import html
import json
import re
from dataclasses import fields
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import markdown
import pytest
from arms_doc_testing import SNAPSHOT_REGISTRY, fixture_document, ranking_of

from arms_doc.measured import Loaded, Results, load_results, measured_context
from arms_doc.measured_markdown import render_measured, row, table, text_cell
from engine.measure.results_schema import (
    ABSTENTION,
    PAGE_FILES,
    QUALITY,
    QUALITY_PG,
    AbstentionCorpus,
    AbstentionResults,
    ArmAblation,
    BackendSet,
    FloorOutcome,
    Metrics,
    PgQualityResults,
    QualityResults,
    QualitySet,
    QuestionOutcome,
    ResultsFile,
    Stamp,
)

ARMS = ["fts", "vector", "recency", "salience"]
STAMP = Stamp("quality", 2, "2026-06-01T09:30:00+00:00", ranking_of(SNAPSHOT_REGISTRY))


def metrics(queries: int, ndcg: float) -> Metrics:
    return Metrics(queries, ndcg, mrr_at_10=0.5, recall_at_5=0.5, recall_at_10=0.5)


def page_of(typed: dict[ResultsFile[object], object]) -> str:
    """The Measured page of a results folder holding ``typed`` (by file) and nothing else."""
    results = Results(
        "benchmarks/results",
        tuple(
            Loaded(kind, f"benchmarks/results/{kind.name}", typed.get(kind)) for kind in PAGE_FILES
        ),
    )
    return render_measured(measured_context(results, "src/engine/arms.py", ARMS))


def test_a_cell_left_empty_differs_from_a_cell_whose_text_is_empty():
    assert row(["a", None, "", "b"]) == "| a | |  | b |"


def test_a_table_is_its_head_a_rule_and_a_line_per_row():
    assert table(["Set", "Queries"], [["scifact", "300"], ["nfcorpus", None]]) == [
        "| Set | Queries |",
        "| --- | --- |",
        "| scifact | 300 |",
        "| nfcorpus | |",
    ]


#: The section for the results below, exactly: a dash where quality.json lacks the set or arm.
QUALITY_ON_POSTGRESQL = """\
## Quality on PostgreSQL

A team store keeps its index in PostgreSQL; its arms run their PostgreSQL SQL over the same
files. `python benchmarks/quality.py --database-url URL` scores the same sets on that path (each set indexed into a
schema of its own, as `memsift eval --database-url` does), with the default fusion and with
each arm that finds candidates alone. nDCG@10 on each backend, side by side
(server: PostgreSQL 18.1, pgvector 0.8.1 &lt;test&gt;):

| Set | Queries | Fusion, SQLite | Fusion, PostgreSQL | fts alone, SQLite | fts alone, PostgreSQL | vector alone, SQLite | vector alone, PostgreSQL |
| --- | --- | --- | --- | --- | --- | --- | --- |
| scifact | 300 | 0.7012 | 0.7011 | 0.6543 | 0.6611 | 0.6321 | 0.6321 |
| nf\\|corpus | 323 | – | 0.3333 | – | 0.3000 | – | – |

A dash: the SQLite results (`quality.json`) do not hold that set or arm.

"""  # noqa: E501


def test_quality_on_postgresql_sets_each_backends_ndcg_side_by_side():
    quality = QualityResults(
        STAMP,
        sets=(
            QualitySet(
                "scifact",
                metrics(300, 0.7012),
                ablation=(
                    ArmAblation("fts", alone=metrics(300, 0.6543), without=metrics(300, 0.6)),
                    ArmAblation("vector", alone=metrics(300, 0.6321), without=metrics(300, 0.6)),
                ),
            ),
        ),
    )
    quality_pg = PgQualityResults(
        STAMP,
        server="PostgreSQL 18.1, pgvector 0.8.1 <test>",
        sets=(
            BackendSet(
                "scifact",
                metrics(300, 0.7011),
                alone={"fts": metrics(300, 0.6611), "vector": metrics(300, 0.6321)},
            ),
            BackendSet("nf|corpus", metrics(323, 0.3333), alone={"fts": metrics(323, 0.3)}),
        ),
    )
    page = page_of({QUALITY: quality, QUALITY_PG: quality_pg})

    start = page.index("## Quality on PostgreSQL\n")
    assert page[start : page.index("## No answer", start)] == QUALITY_ON_POSTGRESQL


def test_the_store_floor_paragraph_follows_the_list_of_stores_not_its_last_item():
    asked = QuestionOutcome("Who wrote the staging runbook?", False, "any", 0.21)
    floor = FloorOutcome("store", "store floor 0.37 from 48 probes", 0, 0, 0, (), (asked,))
    corpus = AbstentionCorpus("docs", "a folder of docs", 10, 20, 0, (), (floor,), 1.0)

    page = page_of({ABSTENTION: AbstentionResults(STAMP, 0.25, (corpus,))})

    assert (
        "- **docs** (a folder of docs). The default rule answers no "
        "foreign question.\n\nA store floor is measured at the end of an index run"
    ) in page


def test_the_foreign_questions_listed_are_those_the_default_rule_answers():
    answered = QuestionOutcome("How do I write a Flask route?", True, "any", 0.51)
    withheld = QuestionOutcome("How do I write a Flask route?", False, "any", 0.51, None, None)
    alone = FloorOutcome("store", "store floor 0.28", 1, 0, 0, (), (answered,))
    default = FloorOutcome("default", "store floor 0.28 and ...", 0, 0, 0, (), (withheld,))
    corpus = AbstentionCorpus("docs", "a folder of docs", 10, 20, 0, (), (alone, default), 1.0)

    page = page_of({ABSTENTION: AbstentionResults(STAMP, 0.25, (corpus,))})

    assert "- **docs** (a folder of docs). The default rule answers no foreign question." in page


def test_a_figure_the_page_needs_and_the_results_lack_fails_naming_it(tmp_path: Path):
    document = fixture_document("scale.json")
    for store in document["stores"]:
        for way in store["searches"]:
            if way["vector_index"] == "hnsw":
                way["recall_at_40"] = None
    (tmp_path / "scale.json").write_text(json.dumps(document), encoding="utf-8")
    current = ranking_of(SNAPSHOT_REGISTRY)
    results = load_results(tmp_path, display="benchmarks/results", current=current)

    with pytest.raises(AttributeError, match="recall_at_40"):
        render_measured(measured_context(results, "r", ARMS))


def test_a_layout_without_a_field_the_page_needs_fails_naming_it():
    results = Results("r", tuple(Loaded(kind, kind.name, None) for kind in PAGE_FILES))
    page = measured_context(results, "r", ARMS)
    lacking = SimpleNamespace(
        **{field.name: getattr(page, field.name) for field in fields(page)}, stale=page.stale
    )
    del lacking.scale_view

    with pytest.raises(AttributeError, match="scale_view"):
        render_measured(lacking)  # type: ignore[arg-type]


def page_with(tmp_path: Path, name: str, document: dict[str, object]) -> str:
    """The Measured page of a results folder holding ``document`` as ``name`` only."""
    (tmp_path / name).write_text(json.dumps(document), encoding="utf-8")
    results = load_results(tmp_path, display="benchmarks/results", current=None)
    return render_measured(measured_context(results, "src/engine/arms.py", ARMS))


def test_a_plugin_cost_below_zero_is_written_with_one_sign(tmp_path: Path):
    document = fixture_document("docs_build.json")
    document["sites"][0]["versus_files"]["wall_extra_s"] = -0.13
    page = page_with(tmp_path, "docs_build.json", document)
    assert "(1.06×), -0.13 s |" in page and "+-" not in page


def test_a_question_group_named_with_a_pipe_keeps_the_budget_table_whole(tmp_path: Path):
    document = fixture_document("indexing.json")
    for budget in document["budgets"]:
        for group in budget["groups"]:
            if group["group"] == "chunks 0-15":
                group["group"] = "chunks 0|15"
    page = page_with(tmp_path, "indexing.json", document)
    head = next(line for line in page.splitlines() if line.startswith("| Budget |"))
    assert "| chunks 0\\|15 |" in head


def test_a_calibration_rule_without_a_full_stop_still_ends_its_sentence(tmp_path: Path):
    document = fixture_document("quality.json")
    document["lab"]["calibration"]["rule"] = "answer nothing below the floor"
    page = page_with(tmp_path, "quality.json", document)
    assert "answer nothing below the floor. The chosen floor is" in page


def test_the_no_answer_section_states_the_rule_the_search_applies():
    """Whether a search answers is judged by the memory nearest in meaning, a hit or not
    (engine.search.abstain), which is what abstention.py measures."""
    asked = QuestionOutcome("Who wrote the staging runbook?", False, "any", 0.21)
    floor = FloorOutcome("store", "store floor 0.37 from 48 probes", 0, 0, 0, (), (asked,))
    corpus = AbstentionCorpus("docs", "a folder of docs", 10, 20, 0, (), (floor,), 1.0)

    page = page_of({ABSTENTION: AbstentionResults(STAMP, 0.25, (corpus,))})

    section = " ".join(page[page.index("## No answer") :].split())
    assert "no hit" not in section
    assert "the memory nearest in meaning" in section


def rename_site(document: dict[str, Any], text: str) -> None:
    document["sites"][0]["name"] = text


def rename_module(document: dict[str, Any], text: str) -> None:
    document["sites"][0]["phases"]["imports"][0]["module"] = text


def rename_run(document: dict[str, Any], text: str) -> None:
    document["runs"][0]["code"] = text


def rename_timed_arm(document: dict[str, Any], text: str) -> None:
    for store in document["stores"]:
        store["latency"][text] = store["latency"].pop("recency")


def rename_scale_moment(document: dict[str, Any], text: str) -> None:
    document["stores"][0]["made_at"] = text


def rename_best_arm(document: dict[str, Any], text: str) -> None:
    for result in document["sets"]:
        for entry in result["ablation"]:
            if entry["arm"] == "vector":
                entry["arm"] = text


def table_rows_shorter_or_longer_than_their_head(page: str) -> list[str]:
    """The lines of the page's tables whose cell count differs from their table's head, and
    text that runs on from a table's last line (a row cut in two)."""
    cells = lambda line: len(re.findall(r"(?<!\\)\|", line))  # noqa: E731
    ragged, head = [], None
    for line in page.splitlines():
        if not line.startswith("|"):
            if head is not None and line.strip():
                ragged.append(line)
            head = None
        elif head is None:
            head = cells(line)
        elif cells(line) != head:
            ragged.append(line)
    return ragged


@pytest.mark.parametrize("text", ["a|b", "two\nlines"])
@pytest.mark.parametrize(
    ("name", "change"),
    [
        ("docs_build.json", rename_site),
        ("docs_build.json", rename_module),
        ("indexing.json", rename_run),
        ("latency.json", rename_timed_arm),
        ("scale.json", rename_scale_moment),
        ("quality.json", rename_best_arm),
    ],
)
def test_a_name_from_a_results_file_keeps_its_table_whole(tmp_path: Path, name, change, text):
    document = fixture_document(name)
    change(document, text)
    assert table_rows_shorter_or_longer_than_their_head(page_with(tmp_path, name, document)) == []


@pytest.mark.parametrize("text", ["a\\|b", "C:\\temp\\", "a\\\\|b"])
def test_a_backslash_in_text_from_a_results_file_is_shown_as_written(text: str):
    # a backslash before the pipe escaped for the table made "\\\\|": the cell ended there
    page = markdown.markdown(f"| A |\n| --- |\n| {text_cell(text)} |", extensions=["tables"])
    assert f"<td>{html.escape(text, quote=False)}</td>" in page
