"""The page models: what each arm buys, and the Measured page's figures, from result files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from arms_doc_testing import FIXTURES, QUALITY_FIXTURE, fixture_document
from jinja2 import UndefinedError

from arms_doc.measured import arm_gains, delta, measured_context, ms
from arms_doc.render import render_measured
from arms_doc.results import Results, load_latency, load_quality, load_results

ARMS = ["fts", "vector", "recency", "salience"]


@pytest.fixture(scope="module")
def quality():
    return load_quality(QUALITY_FIXTURE, "benchmarks/results/quality.json")


@pytest.fixture(scope="module")
def both() -> Results:
    return load_results(FIXTURES, display="benchmarks/results", registry_sha256="0" * 64)


def test_what_each_arm_buys_is_the_fusion_minus_the_fusion_without_it(quality):
    document = fixture_document("quality.json")

    for result in arm_gains(quality, ARMS):
        ablation = document["sets"][result["name"]]["ablation"]
        fused = ablation["fused"]["ndcg@10"]
        for row in result["rows"]:
            without = ablation[f"without {row['arm']}"]["ndcg@10"]
            assert float(row["buys"]) == round(fused - without, 4)
            assert float(row["without"]) == without
            assert float(row["alone"]) == ablation[f"only {row['arm']}"]["ndcg@10"]


def test_what_each_arm_buys_follows_the_registry_order(quality):
    gains = arm_gains(quality, ["vector", "fts", "recency", "salience"])

    assert [row["arm"] for row in gains[0]["rows"]] == ["vector", "fts", "recency", "salience"]


def test_an_arm_the_results_did_not_measure_says_so(quality):
    rows = arm_gains(quality, [*ARMS, "graph"])[0]["rows"]

    assert rows[-1] == {"arm": "graph", "without": "–", "buys": "–", "alone": "–"}


def test_no_quality_results_buy_nothing():
    assert arm_gains(None, ARMS) == []


@pytest.mark.parametrize(
    ("value", "text"), [(0.0333, "+0.0333"), (-0.01, "-0.0100"), (-0.00001, "0.0000")]
)
def test_deltas_are_signed_except_zero(value: float, text: str):
    assert delta(value) == text


@pytest.mark.parametrize(("value", "text"), [(0.0571, "0.057"), (3.214, "3.21"), (283.657, "284")])
def test_milliseconds_keep_about_three_digits(value: float, text: str):
    assert ms(value) == text


def quality_set(context: dict, name: str) -> dict:
    (found,) = [s for s in context["quality"]["sets"] if s["name"] == name]
    return found


def test_fusion_against_the_best_single_arm(both: Results):
    context = measured_context(both, "src/engine/arms.py", ARMS)

    assert quality_set(context, "tiny-a")["verdict"] == {
        "holds": True,
        "arm": "vector",
        "arm_score": "0.5530",
        "margin": "+0.0470",
    }
    assert quality_set(context, "tiny-b")["verdict"]["holds"] is False


def test_reference_figures_sit_beside_ours(both: Results):
    references = quality_set(measured_context(both, "r", ARMS), "tiny-a")["references"]

    assert references == [
        {"name": "BM25 (bm25s)", "score": "0.442", "ours_minus": "+0.1580"},
        {"name": "dense", "score": "0.542", "ours_minus": "+0.0580"},
    ]


def test_a_goal_in_percent_shows_the_measured_fraction_as_a_percentage(both: Results):
    targets = measured_context(both, "r", ARMS)["latency"]["targets"]

    assert targets[3]["measured"] == "+7.4 %"
    assert targets[0]["measured"] == "3.2"


def test_the_page_says_which_files_are_current():
    # The fixtures are stamped with "0" * 64.
    results = load_results(FIXTURES, display="benchmarks/results", registry_sha256="0" * 64)

    page = render_measured(measured_context(results, "src/engine/arms.py", ARMS))

    assert (
        "| `benchmarks/results/quality.json` | 2026-06-01 09:30 UTC | `0123456789ab` | current |"
        in page
    )
    assert "**Stale:**" not in page


def test_the_page_marks_a_stale_file_as_stale():
    results = load_results(FIXTURES, display="benchmarks/results", registry_sha256="1" * 64)

    page = render_measured(measured_context(results, "src/engine/arms.py", ARMS))

    assert "| `0123456789ab` with uncommitted changes to `src/` | **stale** |" in page
    assert (
        "> **Stale:** `benchmarks/results/latency.json` was made with another version of "
        "`src/engine/arms.py`" in page
    )


def test_the_page_says_below_when_fusion_loses(both: Results):
    page = render_measured(measured_context(both, "r", ARMS))

    assert (
        "The full fusion scores **below** the best single arm: 0.4000 against 0.4200 for fts "
        "alone (-0.0200)." in page
    )


def test_the_page_lists_each_store_with_its_floor_ratio(both: Results):
    page = render_measured(measured_context(both, "r", ARMS))

    assert "| 50,000 files, 384-d | 75,000 | 41.0 | 49.2 | – | 32.8 | 3.40 | 12.1× | 8.9× |" in page


def test_the_page_shows_the_long_lived_searcher_beside_the_one_shot_search(tmp_path: Path):
    document = fixture_document("latency.json")
    for store in document["stores"]:
        store["latency"]["fused_searcher"] = dict(store["latency"]["fused"], p50_ms=4.25)
    path = tmp_path / "latency.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    page = render_measured(measured_context(Results("r", None, load_latency(path, "l")), "r", ARMS))

    assert "| 41.0 | 49.2 | 4.25 | 32.8 |" in page
    assert "| fused_searcher |" not in page


def test_a_quick_run_is_flagged(tmp_path: Path):
    document = fixture_document("latency.json")
    document["settings"]["quick"] = True
    path = tmp_path / "latency.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    latency = load_latency(path, "l.json")
    results = Results("r", None, latency)

    page = render_measured(measured_context(results, "r", ARMS))

    assert "These figures come from a `--quick` run" in page


def test_the_template_refuses_a_missing_name():
    with pytest.raises(UndefinedError):
        render_measured({"folder": "r"})


def test_arm_names_from_a_results_file_are_escaped_on_the_measured_page(tmp_path: Path):
    document = fixture_document("quality.json")
    for figures in document["sets"].values():
        figures["ablation"]["only <img src=x>"] = figures["ablation"]["only fts"]
    (tmp_path / "quality.json").write_text(json.dumps(document), encoding="utf-8")
    results = load_results(tmp_path, display="benchmarks/results", registry_sha256="0" * 64)

    page = render_measured(measured_context(results, "src/engine/arms.py", ARMS))

    assert ("<img" in page, "| &lt;img src=x&gt; alone |" in page) == (False, True)
