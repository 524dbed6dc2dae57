"""The Measured page and "What each arm buys", rendered from the results fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from arms_doc_testing import FIXTURES, SNAPSHOT_REGISTRY, fixture_document, ranking_of

from arms_doc.arms_markdown import render_arms
from arms_doc.measured import Results, buys_context, load_results, measured_context
from arms_doc.measured_markdown import render_measured
from arms_doc.render import delta, ms

ARMS = ["fts", "vector", "recency", "salience"]
CURRENT = ranking_of(SNAPSHOT_REGISTRY)


@pytest.fixture(scope="module")
def results() -> Results:
    return load_results(FIXTURES, display="benchmarks/results", current=CURRENT)


@pytest.fixture(scope="module")
def page(results: Results) -> str:
    return render_measured(measured_context(results, "src/engine/arms.py", ARMS))


def folder_with(tmp_path: Path, name: str, document: dict) -> Results:
    (tmp_path / name).write_text(json.dumps(document), encoding="utf-8")
    return load_results(tmp_path, display="benchmarks/results", current=CURRENT)


def section(page: str, heading: str) -> str:
    start = page.index(f"{heading}\n")
    end = page.find("\n#", start + 1)
    return page[start : end if end != -1 else None]


@pytest.mark.parametrize(
    ("value", "text"), [(0.0333, "+0.0333"), (-0.01, "-0.0100"), (-0.00001, "0.0000")]
)
def test_deltas_are_signed_except_zero(value: float, text: str):
    assert delta(value) == text


@pytest.mark.parametrize(("value", "text"), [(0.0571, "0.057"), (3.214, "3.21"), (283.657, "284")])
def test_milliseconds_keep_about_three_digits(value: float, text: str):
    assert ms(value) == text


def test_the_summary_says_whether_fusion_beats_the_best_single_arm(page: str):
    assert (
        "| [tiny-a](#tiny-a) | 40 | 0.6000 | 0.6500 | 0.5800 | 0.6800 | vector 0.5530 | "
        "yes (+0.0470) |" in page
    )
    assert "| fts 0.4200 | **no** (-0.0200) |" in page
    assert (
        "The full fusion scores **below** the best single arm: 0.4000 against 0.4200 for fts "
        "alone (-0.0200)." in page
    )


def test_every_arm_of_the_registry_has_an_alone_and_a_without_row(page: str):
    rows = [line.split(" | ")[0] for line in section(page, "### tiny-a").splitlines()]

    assert [
        row for row in rows if row.startswith("| ") and ("alone" in row or "without" in row)
    ] == [
        *(f"| {arm} alone" for arm in ARMS),
        *(f"| without {arm}" for arm in ARMS),
    ]


def test_an_arm_the_results_did_not_measure_shows_dashes(results: Results):
    page = render_measured(measured_context(results, "r", [*ARMS, "graph"]))

    assert "| graph alone | – | – | – | – | |" in section(page, "### tiny-a")
    assert "| without graph | – | – | – | – | |" in section(page, "### tiny-a")


def test_the_rows_of_the_category_table_follow_its_rule(page: str):
    assert (
        "| Category | Queries | nDCG@10 | MRR@10 | R@5 | R@10 |\n"
        "| --- | --- | --- | --- | --- | --- |\n"
        "| temporal | 15 | 0.5500 | 0.6000 | 0.5300 | 0.6300 |\n"
        "| factual | 25 | 0.6300 | 0.6800 | 0.6100 | 0.7100 |\n"
    ) in section(page, "### tiny-a")


def test_reference_figures_sit_beside_ours(page: str):
    assert "| BM25 (bm25s) | 0.442 | +0.1580 |" in section(page, "### tiny-a")


def test_the_tuning_record_shows_the_chosen_setting_and_each_held_out_figure(page: str):
    tuning = section(page, "### How the weights were chosen")

    assert "A grid over the weights of recency and salience" in tuning
    assert "which the registry holds: fts 1, vector 1, recency 0.5, salience 0.4; k = 20." in tuning
    assert (
        "| tiny-a | fts 1, vector 1, recency 0.4, salience 0.4 | 20 | 0.5912 | 0.6000 |" in tuning
    )


def test_the_lab_record_says_when_and_from_which_commit_it_was_made(page: str):
    assert (
        "The tuning record comes from `fusion_lab`, run 2026-05-31 18:00 UTC at `0123456789ab`."
        in page
    )


def test_the_levers_table_has_each_lever_per_set_kept_or_dropped(page: str):
    levers = section(page, "### Levers tried")

    assert "| Lever | tiny-a | tiny-b | Kept | Note |" in levers
    assert "| *baseline* | 0.6000 | 0.4000 | | |" in levers
    assert (
        "| score-aware fusion | 0.6120 (+0.0120) | 0.4105 (+0.0105) | kept | wins on both sets |"
        in levers
    )
    assert "| dropped | loses on both sets |" in levers


def test_the_calibration_table_has_a_row_per_floor_and_marks_the_chosen_one(page: str):
    calibration = section(page, "### Abstention calibration")

    assert "The chosen floor is **0.3**." in calibration
    assert "| Floor | tiny-a (40 / 40) | tiny-b (30 / 40) |" in calibration
    assert "| 0.2 | 0.0 % / 35.0 % | – |" in calibration
    assert "| **0.3** (chosen) | 2.5 % / 80.0 % | 3.3 % / 75.0 % |" in calibration


def test_without_a_lab_record_the_page_has_no_tuning_blocks(tmp_path: Path):
    document = fixture_document("quality.json")
    del document["lab"]

    page = render_measured(
        measured_context(folder_with(tmp_path, "quality.json", document), "r", ARMS)
    )

    assert "### tiny-a" in page
    for heading in ("How the weights were chosen", "Levers tried", "Abstention calibration"):
        assert heading not in page


def test_the_page_says_which_files_are_current(page: str):
    assert (
        f"| `benchmarks/results/quality.json` | 2026-06-01 09:30 UTC | `0123456789ab` | current "
        f"(`{CURRENT.sha256[:12]}`) |" in page
    )
    assert "**Stale:**" not in page


def test_the_page_marks_a_stale_file_with_what_changed(tmp_path: Path):
    document = fixture_document("latency.json")
    document["stamp"]["ranking"]["arms"][0]["sql_sha256"] = "0" * 64

    page = render_measured(
        measured_context(
            folder_with(tmp_path, "latency.json", document), "src/engine/arms.py", ARMS
        )
    )

    assert "| **stale**: SQL of fts |" in page
    assert (
        "> **Stale:** `benchmarks/results/latency.json` was measured with another ranking" in page
    )


def test_a_note_in_a_stamp_is_shown(tmp_path: Path):
    document = fixture_document("quality.json")
    document["stamp"]["note"] = "restamped <by hand>"

    page = render_measured(
        measured_context(folder_with(tmp_path, "quality.json", document), "r", ARMS)
    )

    assert "> **Note on `benchmarks/results/quality.json`:** restamped &lt;by hand&gt;" in page


def test_the_page_lists_each_store_with_its_floor_ratio(page: str):
    assert "| 50,000 files, 384-d | 75,000 | 41.0 | 49.2 | – | 32.8 | 3.40 | 12.1× | 8.9× |" in page


def test_stores_are_ordered_by_width_then_size(page: str):
    stores = [line.split(" | ")[0] for line in section(page, "## Latency").splitlines()]
    first_table = [row for row in stores if row.startswith("| ") and "files," in row][:4]

    assert first_table == [
        "| 2,000 files, 384-d",
        "| 10,000 files, 384-d",
        "| 50,000 files, 384-d",
        "| 2,000 files, 1024-d",
    ]


def test_the_long_lived_searcher_is_shown_beside_the_one_shot_search(tmp_path: Path):
    document = fixture_document("latency.json")
    for store in document["stores"]:
        store["latency"]["fused_searcher"] = dict(store["latency"]["fused"], p50_ms=4.25)

    page = render_measured(
        measured_context(folder_with(tmp_path, "latency.json", document), "r", ARMS)
    )

    assert "| 41.0 | 49.2 | 4.25 | 32.8 |" in page
    assert "| fused_searcher |" not in page


def test_a_goal_in_percent_shows_the_measured_fraction_as_a_percentage(page: str):
    assert "| indexer overhead over raw embedder | &lt; 15% | +7.4 % | met |" in page


def test_a_quick_run_is_flagged(tmp_path: Path):
    document = fixture_document("latency.json")
    document["settings"]["quick"] = True

    page = render_measured(
        measured_context(folder_with(tmp_path, "latency.json", document), "r", ARMS)
    )

    assert "These figures come from a `--quick` run" in page


def test_names_from_a_results_file_are_escaped_on_the_measured_page(tmp_path: Path):
    document = fixture_document("quality.json")
    document["sets"][0]["ablation"][0]["arm"] = "<img src=x>"
    document["lab"]["levers"]["levers"][0]["name"] = "<b>lever</b>"

    page = render_measured(
        measured_context(folder_with(tmp_path, "quality.json", document), "r", ARMS)
    )

    assert "<img" not in page and "<b>" not in page
    assert "| &lt;img src=x&gt; alone |" in page
    assert "| &lt;b&gt;lever&lt;/b&gt; |" in page


def test_what_each_arm_buys_is_the_fusion_minus_the_fusion_without_it(results: Results):
    context = buys_context(results, ARMS, None)
    page = render_page_with_buys(context)

    for result in fixture_document("quality.json")["sets"]:
        fused = result["fused"]["ndcg@10"]
        for entry in result["ablation"]:
            without, alone = entry["without"]["ndcg@10"], entry["alone"]["ndcg@10"]
            row = f"| {entry['arm']} | {without:.4f} | {fused - without:+.4f} | {alone:.4f} |"
            assert row.replace("+0.0000", "0.0000") in page


def test_what_each_arm_buys_follows_the_registry_order(results: Results):
    context = buys_context(results, ["vector", "fts", "recency", "salience"], None)

    assert context["arms"] == ["vector", "fts", "recency", "salience"]


def test_an_arm_the_results_did_not_buy_says_so(results: Results):
    page = render_page_with_buys(buys_context(results, [*ARMS, "graph"], None))

    assert "| graph | – | – | – |" in page


def render_page_with_buys(buys: dict) -> str:
    from arms_doc.page import page_context
    from arms_doc.reader import read_registry
    from arms_doc.statements import assemble_statements

    registry = read_registry(SNAPSHOT_REGISTRY)
    context = page_context(registry, assemble_statements(registry), None, None)
    return render_arms({**context, "buys": buys})


def test_the_mcp_section_has_a_table_per_store_size_smallest_first(page: str):
    agents = page[page.index("## Agents: the MCP server\n") : page.index("## Scale")]

    assert [line for line in agents.splitlines() if line.startswith("### ")] == [
        "### 2,000 memories",
        "### 50,000 memories",
    ]


def test_warm_mcp_search_sits_beside_in_process_the_embedding_and_the_one_shot_cli(page: str):
    store = section(page, "### 2,000 memories")

    assert "| Warm search through MCP (`memory_search`) | **12.5** | 18.0 | 200 |" in store
    assert "| The same search in process (`MemoryService`, no protocol) | 10.0 | 14.0 | 200 |" in (
        store
    )
    assert "| Query embedding alone | 6.25 | 8.50 | 200 |" in store
    assert "| One-shot CLI search (`memsift search`, a new process) | **1125** | 1300 | 10 |" in (
        store
    )
    assert "| `memory_remember` (write, index, embed) | 20.0 | 30.0 | 20 |" in store
    assert "The one-shot CLI takes **90.0×** as long as a warm search through the server" in store


def test_the_mcp_section_shows_start_answer_size_and_the_stores_load(page: str):
    store = section(page, "### 50,000 memories")

    assert "handshake 1.50 s after it was spawned" in store
    assert "at full vector coverage, after 9.25 s" in store
    assert "Answers: 5,400 bytes at the median, 7,900 at most; 0 of 200 ran degraded." in store
    assert "Load average before these measurements: 0.5, 0.3, 0.2; after: 1.2, 0.6, 0.3." in store


def test_each_store_has_its_targets_met_or_missed(page: str):
    assert "| warm MCP search p50 | &lt;= 15 ms | 12.5 | met |" in section(
        page, "### 2,000 memories"
    )
    assert "| warm MCP search p50 | &lt;= 60 ms | 72.5 | **missed** |" in section(
        page, "### 50,000 memories"
    )
    assert "3 of 4 targets met; each store's are under its table." in page


def test_the_mcp_runs_load_average_is_shown_with_the_cores(page: str):
    assert (
        "Load average when the run started: 0.4, 0.3, 0.2, when it ended: 1.2, 0.6, 0.3 on 2 "
        "CPUs. The whole run took 240 s." in page
    )


def test_a_busy_machine_is_said_to_inflate_the_mcp_times(tmp_path: Path):
    document = fixture_document("mcp.json")
    document["load_average_at_start"] = [4.35, 4.28, 4.96]

    page = render_measured(measured_context(folder_with(tmp_path, "mcp.json", document), "r", ARMS))

    assert "on 2 CPUs (over half the cores busy: the times are inflated)." in page


def test_a_run_that_remembered_nothing_shows_dashes_for_remember(tmp_path: Path):
    document = fixture_document("mcp.json")
    for store in document["stores"]:
        del store["remember_mcp"], store["load_average"]
        store["targets"] = []

    page = render_measured(measured_context(folder_with(tmp_path, "mcp.json", document), "r", ARMS))

    assert "| `memory_remember` (write, index, embed) | – | – | – |" in page
    assert "Load average before these measurements" not in page
    assert "No targets are recorded for this store." in page


def test_text_from_mcp_json_is_escaped(tmp_path: Path):
    document = fixture_document("mcp.json")
    document["stores"][0]["targets"][0]["name"] = "<script>x</script> | y"

    page = render_measured(measured_context(folder_with(tmp_path, "mcp.json", document), "r", ARMS))

    assert "<script>" not in page
    assert "| &lt;script&gt;x&lt;/script&gt; \\| y |" in page


def test_without_mcp_json_the_page_says_nothing_was_measured(tmp_path: Path):
    page = render_measured(
        measured_context(
            folder_with(tmp_path, "quality.json", fixture_document("quality.json")), "r", ARMS
        )
    )

    assert section(page, "## Agents: the MCP server").strip().splitlines()[-1] == (
        "No MCP server results are recorded: `benchmarks/results/mcp.json` does not exist; run "
        "`python benchmarks/mcp_latency.py --large` to make it."
    )


def test_a_stale_mcp_json_is_marked_on_the_page(tmp_path: Path):
    document = fixture_document("mcp.json")
    document["stamp"]["ranking"]["embedder_dim"] = 768

    page = render_measured(
        measured_context(folder_with(tmp_path, "mcp.json", document), "src/engine/arms.py", ARMS)
    )

    assert "> **Stale:** `benchmarks/results/mcp.json` was measured with another ranking" in page
    assert "`python benchmarks/mcp_latency.py --large` |" in page


def test_the_scale_section_has_a_row_per_store_and_way_of_searching_sqlite_first(page: str):
    scale = section(page, "## Scale: large stores on SQLite and PostgreSQL")
    rows = [line.split(" | ") for line in scale.splitlines() if line.count(" | ") == 9]

    assert [[*row[:2], row[3]] for row in rows[2:]] == [
        ["| SQLite", "10,000", "exact"],
        ["| PostgreSQL", "10,000", "exact"],
        ["| PostgreSQL", "10,000", "HNSW, ef_search 100"],
        ["| PostgreSQL", "100,000", "exact"],
        ["| PostgreSQL", "100,000", "HNSW, ef_search 40"],
        ["| PostgreSQL", "100,000", "HNSW, ef_search 100"],
    ]


def test_an_hnsw_row_shows_its_recall_and_an_exact_row_says_exact(page: str):
    scale = section(page, "## Scale: large stores on SQLite and PostgreSQL")

    assert "| HNSW, ef_search 100 | 80.0 | 120 | 100 | 140 | 95.0 % / 80.0 % | 50 |" in scale
    assert "| exact | 400 | 520 | 420 | 560 | exact | 50 |" in scale


def test_the_hnsw_build_time_and_size_are_shown(page: str):
    scale = section(page, "## Scale: large stores on SQLite and PostgreSQL")

    assert "| PostgreSQL | 100,000 | 100 | 1,000 | 600 | 300 |" in scale


def test_when_to_switch_names_the_first_size_where_hnsw_halves_the_median(page: str):
    switch = section(page, "### When to switch")

    assert "400 ms at the median exactly and 80.0 ms through HNSW at ef_search 100" in switch
    assert "5.0× as fast" in switch
    assert "holds 100,000 memories; there it finds 95.0 % of the exact nearest 40" in switch


def test_when_hnsw_never_halves_the_median_the_page_says_exact_stays(tmp_path: Path):
    document = fixture_document("scale.json")
    for store in document["stores"]:
        for way in store["searches"]:
            way["fused"]["p50_ms"] = 100.0

    results = folder_with(tmp_path, "scale.json", document)

    page = render_measured(measured_context(results, "r", ARMS))

    assert "At no measured size did HNSW at the default ef_search halve" in page
    assert "(100,000 memories) it was 1.0× as fast and found 95.0 %" in page


def test_without_scale_json_the_page_says_nothing_was_measured(tmp_path: Path):
    page = render_measured(
        measured_context(
            folder_with(tmp_path, "quality.json", fixture_document("quality.json")), "r", ARMS
        )
    )

    assert "No scale results are recorded: `benchmarks/results/scale.json` does not exist" in page


def test_the_scale_files_machine_names_postgresql_and_pgvector(page: str):
    assert "PostgreSQL 18.6, pgvector 0.8.6" in page


# --- the docs build ---------------------------------------------------------------------------

DOCS_BUILD = "## The docs build: what the plugin costs"


def test_the_docs_build_section_has_a_row_per_site_with_both_ratios(page: str):
    rows = [line for line in section(page, DOCS_BUILD).splitlines() if line.startswith("| **")]

    assert [row.split(" | ")[0].split("**")[1] for row in rows] == ["project", "small"]
    assert rows[0].endswith(
        "| 20 | 1.62 (1.52) | 1.42 (1.32) | 1.52 (1.43) | **1.14×** (1.15×), +0.20 s "
        "| **1.07×** (1.06×), +0.10 s |"
    )


def test_the_docs_build_section_shows_where_the_plugins_time_goes(page: str):
    text = section(page, "### Where the plugin's time goes: the project site")

    assert "Medians of 3 processes" in text
    assert "| Import `engine.sqlite.prepare` | 12.5 | – |" in text
    assert "| Import `engine.measure.results_schema`" not in text  # it brought nothing new
    assert "| Prepare every statement in SQLite |" in text
    assert "in all (reading, checking, rendering both pages) | 120 | 90.0 |" in text
    assert "a machine's first build\ncompiled it, which added 88.0 ms" in text


def test_a_docs_build_measured_with_no_template_to_compile_says_nothing_of_one(tmp_path: Path):
    document = fixture_document("docs_build.json")
    del document["sites"][0]["phases"]["templates_compile_ms"]
    results = folder_with(tmp_path, "docs_build.json", document)

    text = render_measured(measured_context(results, "src/engine/arms.py", ARMS))

    assert "### Where the plugin's time goes: the project site" in text
    assert "template" not in section(text, "### Where the plugin's time goes: the project site")


def test_the_docs_build_targets_are_met_or_missed(page: str):
    text = page[page.index(DOCS_BUILD) :]

    assert "÷ without the plugin, CPU | &lt;= 1.15 | 1.151 | **missed** |" in text
    assert "÷ without the plugin, wall | &lt;= 1.15 | 1.143 | met |" in text


def test_a_docs_build_file_without_cold_builds_says_nothing_of_them(page: str):
    assert "nothing remembered" not in section(page, DOCS_BUILD)


def test_the_docs_build_section_gives_a_cold_builds_cost_per_site(tmp_path: Path):
    document = fixture_document("docs_build.json")
    project = document["sites"][0]
    project["with_plugin_cold"] = {**project["with_plugin"], "wall_median_s": 1.8}
    project["with_plugin_cold"]["cpu_median_s"] = 1.7
    project["cold_versus_without"] = {
        **project["versus_without"],
        "wall_ratio": 1.27,
        "cpu_ratio": 1.29,
        "wall_extra_s": 0.38,
    }

    text = render_measured(
        measured_context(folder_with(tmp_path, "docs_build.json", document), "r", ARMS)
    )

    assert "A build with nothing remembered (a fresh checkout's\nfirst build, or CI)" in text
    assert (
        "- **project**: 1.80 s (1.70 s CPU), **1.27×** (1.29× CPU) a build without the plugin, "
        "+0.38 s.\n"
    ) in text
    assert "- **small**:" not in text


def test_without_docs_build_json_the_page_says_nothing_was_measured(tmp_path: Path):
    page = render_measured(
        measured_context(
            folder_with(tmp_path, "quality.json", fixture_document("quality.json")), "r", ARMS
        )
    )

    assert section(page, DOCS_BUILD).strip().splitlines()[-1] == (
        "No docs build results are recorded: `benchmarks/results/docs_build.json` does not "
        "exist; run `python benchmarks/docs_build.py` to make it."
    )


def test_a_docs_build_file_is_never_stale_since_no_ranking_moves_a_build_cost(tmp_path: Path):
    document = fixture_document("docs_build.json")
    document["stamp"]["ranking"]["arms"][0]["sql_sha256"] = "0" * 64

    page = render_measured(
        measured_context(
            folder_with(tmp_path, "docs_build.json", document), "src/engine/arms.py", ARMS
        )
    )

    assert "**Stale:**" not in page
    assert "**stale**" not in page


# --- indexing ---------------------------------------------------------------------------------

INDEXING = "## Indexing a store of real documents"


def test_the_indexing_section_has_a_row_per_code_and_after_over_before(page: str):
    rows = [line for line in section(page, INDEXING).splitlines() if line.startswith("| **")]

    assert [row.split("**")[1] for row in rows] == ["before", "after"]
    assert rows[1] == (
        "| **after**: this commit (budget 64) | 125 | 2,809 | 1,300 | 20 | 1,489 | 320.0 | "
        "80.0 | 11.0 | 320.0 | 580 |"
    )
    assert "| after ÷ before | | | | | | 0.40× | 0.40× | 0.88× | **0.40×** | 0.95× |" in page


def test_the_budget_table_has_a_column_per_group_and_the_default_in_bold(page: str):
    text = section(page, "### The embedding budget")

    assert "| Budget | Chunks with a vector | Without | chunks 0-15 | chunks 64-127 | " in text
    assert "| **64** (default) | 1,300 | 1,509 | 0.9100 (40) | 0.5500 (30) | " in text
    assert "| none | 2,809 | 0 | 0.9100 (40) | – | 0.9500 (60) | 0.9300 | 99.0 % |" in text


def test_the_page_says_whether_the_default_budget_leaves_the_shared_sets_alone(page: str):
    assert (
        "cranfield 4 chunk(s), scifact-train 9 chunk(s); a budget of 64 leaves every one of "
        "their indexes, and so their quality, unchanged." in page
    )


def test_a_shared_set_with_a_document_longer_than_the_budget_is_called_out(tmp_path: Path):
    document = fixture_document("indexing.json")
    document["shared_sets"][1]["max_chunks_per_document"] = 65

    page = render_measured(
        measured_context(folder_with(tmp_path, "indexing.json", document), "r", ARMS)
    )

    assert "**some of their documents without every vector**" in page


def test_the_indexing_targets_are_met_or_missed(page: str):
    text = page[page.index(INDEXING) :]

    assert (
        "| time to a fully indexed store ÷ today's code's, wall | &lt;= 0.5 | 0.400 | met |" in text
    )


def test_without_indexing_json_the_page_says_nothing_was_measured(tmp_path: Path):
    page = render_measured(
        measured_context(
            folder_with(tmp_path, "quality.json", fixture_document("quality.json")), "r", ARMS
        )
    )

    assert section(page, INDEXING).strip().splitlines()[-1] == (
        "No indexing results are recorded: `benchmarks/results/indexing.json` does not exist; "
        "run `nice -n 10 python benchmarks/indexing.py --src BEFORE/src` to make it."
    )


def test_an_indexing_file_is_never_stale_since_no_ranking_moves_indexing_time(tmp_path: Path):
    document = fixture_document("indexing.json")
    document["stamp"]["ranking"]["arms"][0]["sql_sha256"] = "0" * 64
    document["stamp"]["ranking"]["arms"][2]["weight"] = 0.9

    results = folder_with(tmp_path, "indexing.json", document)

    assert results.stale == []
