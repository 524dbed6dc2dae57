"""The results files' one definition: what the benchmarks write is what the docs read."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from engine.arms import ARMS
from engine.measure.evaluate import METRIC_NAMES
from engine.measure.fingerprint import ranking
from engine.measure.results_schema import (
    FORMAT,
    LAB,
    LATENCY,
    MCP,
    METRICS,
    PAGE_FILES,
    QUALITY,
    QUALITY_PG,
    SCALE,
    AnswerBytes,
    ArmAblation,
    BackendSet,
    LoadWindow,
    McpResults,
    McpSettings,
    McpStoreBuild,
    Metrics,
    PgQualityResults,
    QualityResults,
    QualitySet,
    Recall,
    ResultsError,
    ScaleResults,
    ScaleSearch,
    ScaleSettings,
    ScaleStore,
    ServerStart,
    Stamp,
    StoreMcp,
    Target,
    Timing,
    read_results,
    write_results,
)
from engine.measure.typed_json import dump


def metrics(ndcg: float, queries: int = 10) -> Metrics:
    return Metrics(queries, ndcg, ndcg, ndcg, ndcg)


def quality() -> QualityResults:
    return QualityResults(
        stamp=Stamp("quality", FORMAT, "2026-06-01T09:30:00+00:00", ranking(ARMS)),
        sets=(
            QualitySet(
                name="set-a",
                fused=metrics(0.6),
                ablation=tuple(
                    ArmAblation(arm.name, alone=metrics(0.1 * i), without=metrics(0.5))
                    for i, arm in enumerate(ARMS)
                ),
                references={"BM25": 0.44},
            ),
        ),
    )


def written(tmp_path: Path, value: object, name: str = "quality.json") -> Path:
    path = tmp_path / name
    text = value if isinstance(value, str) else json.dumps(value)
    path.write_text(text, encoding="utf-8")
    return path


def refusal(path: Path, kind=QUALITY) -> str:
    with pytest.raises(ResultsError) as caught:
        read_results(kind, path, "benchmarks/results/" + path.name)
    return str(caught.value)


def test_what_a_benchmark_writes_reads_back_equal(tmp_path: Path):
    results = quality()
    write_results(results, tmp_path / "quality.json")

    assert read_results(QUALITY, tmp_path / "quality.json", "q") == results


def test_the_metrics_are_the_ones_memsift_eval_reports():
    assert [key for key, _ in METRICS] == list(METRIC_NAMES)


def test_a_set_reports_its_best_single_arm():
    best = quality().sets[0].best_single

    assert best is not None and best.arm == ARMS[-1].name


def test_a_wrong_field_is_named_with_the_file_and_the_command_that_rewrites_it(tmp_path: Path):
    document = dump(quality())
    document["sets"][0]["ablation"][1]["without"]["ndcg@10"] = "0.52"

    message = refusal(written(tmp_path, document))

    assert message == (
        "benchmarks/results/quality.json: /sets/0/ablation/1/without/ndcg@10: expected a "
        'number, found "0.52"; the file is written by `python benchmarks/quality.py`: run it '
        "again to rewrite it"
    )


def test_a_missing_field_is_named(tmp_path: Path):
    document = dump(quality())
    del document["stamp"]["ranking"]

    assert "quality.json: /stamp: missing 'ranking'; " in refusal(written(tmp_path, document))


def test_invalid_json_names_the_line_and_column(tmp_path: Path):
    message = refusal(written(tmp_path, '{\n  "stamp": {,}\n}\n'))

    assert message.startswith("benchmarks/results/quality.json:2:13: not valid JSON")


def test_a_file_of_the_first_layout_says_to_measure_it_again(tmp_path: Path):
    message = refusal(written(tmp_path, {"kind": "quality", "registry_sha256": "0" * 64}))

    assert "written in the layout before format 2" in message
    assert "python benchmarks/quality.py" in message and "again" in message


def test_a_format_this_memsift_does_not_read_is_refused(tmp_path: Path):
    document = dump(quality())
    document["stamp"]["format"] = FORMAT + 1

    assert f"/stamp/format: format {FORMAT + 1} is not one this memsift reads" in refusal(
        written(tmp_path, document)
    )


def test_one_benchmarks_file_in_anothers_place_is_refused(tmp_path: Path):
    message = refusal(written(tmp_path, dump(quality()), "latency.json"), LATENCY)

    assert "latency.json: /stamp/benchmark: expected 'latency', found 'quality'" in message


def test_a_stamp_of_another_benchmark_is_refused(tmp_path: Path):
    document = dump(quality())
    document["stamp"]["benchmark"] = "latency"

    assert "/stamp/benchmark: expected 'quality', found 'latency'" in refusal(
        written(tmp_path, document)
    )


def test_an_arm_listed_twice_in_an_ablation_is_refused(tmp_path: Path):
    document = dump(quality())
    ablation = document["sets"][0]["ablation"]
    ablation.append(ablation[0])

    assert "/sets/0: set 'set-a' lists an arm twice" in refusal(written(tmp_path, document))


def test_the_fusion_labs_record_has_its_own_file_and_command(tmp_path: Path):
    document = {"stamp": dump(quality().stamp) | {"benchmark": "fusion_lab"}}
    path = written(tmp_path, document | {"levers": {"baseline": "b"}}, "tuning.json")

    message = refusal(path, LAB)

    assert "tuning.json: /levers: missing 'baseline_ndcg@10'" in message
    assert "python benchmarks/fusion_lab.py" in message


def mcp_store(files: int, p50_ms: float = 12.5) -> StoreMcp:
    timing = Timing(n=20, p50_ms=p50_ms, p95_ms=2 * p50_ms)
    return StoreMcp(
        files=files,
        store=McpStoreBuild(files=files, chunks=3 * files // 2, build_s=1.5, cached=True),
        server=ServerStart(handshake_s=1.25, ready_s=2.5, first_search_ms=90.0),
        search_mcp=timing,
        search_in_process=Timing(n=20, p50_ms=10.0, p95_ms=14.0),
        query_embedding_alone=Timing(n=20, p50_ms=6.0, p95_ms=8.0),
        search_cli_one_shot=Timing(n=2, p50_ms=1100.0, p95_ms=1300.0),
        answer_bytes=AnswerBytes(p50=5000, max=5600),
        degraded_answers=0,
        remember_mcp=Timing(n=3, p50_ms=20.0, p95_ms=25.0),
        targets=(Target("warm MCP search p50", "<= 15 ms", p50_ms, p50_ms <= 15),),
        load_average=LoadWindow(before=(0.5, 0.4, 0.3), after=(0.75, 0.5, 0.25)),
    )


def mcp(*stores: StoreMcp) -> McpResults:
    return McpResults(
        stamp=Stamp("mcp", FORMAT, "2026-06-01T09:30:00+00:00", ranking(ARMS)),
        load_average_at_start=(0.5, 0.4, 0.3),
        settings=McpSettings(
            seed=1,
            queries=20,
            warmup=5,
            limit=10,
            query_vector="embedded by the server",
            stored_vectors="random",
            transport="stdio",
            remembers=3,
            cli_runs=2,
        ),
        stores=stores or (mcp_store(2000), mcp_store(50000, p50_ms=70.0)),
        elapsed_s=30.0,
        load_average_at_end=(0.75, 0.5, 0.25),
    )


def quality_pg(*names: str) -> PgQualityResults:
    return PgQualityResults(
        stamp=Stamp("quality_pg", FORMAT, "2026-06-01T09:30:00+00:00", ranking(ARMS)),
        server="PostgreSQL 18.1, pgvector 0.8.1",
        sets=tuple(
            BackendSet(name, fused=metrics(0.5), alone={"fts": metrics(0.4)}, seconds=3.0)
            for name in names or ("set-a",)
        ),
    )


def test_the_measured_page_reads_the_postgresql_quality_file():
    assert QUALITY_PG in PAGE_FILES
    assert (QUALITY_PG.name, QUALITY_PG.benchmark) == ("quality_pg.json", "quality_pg")


def test_what_the_postgresql_quality_run_writes_reads_back_equal(tmp_path: Path):
    results = quality_pg("set-a", "set-b")
    write_results(results, tmp_path / "quality_pg.json")

    assert read_results(QUALITY_PG, tmp_path / "quality_pg.json", "q") == results


def test_a_postgresql_quality_file_listing_a_set_twice_is_refused(tmp_path: Path):
    document = json.loads(json.dumps(dump(quality_pg("set-a"))))
    document["sets"].append(document["sets"][0])
    path = tmp_path / "quality_pg.json"
    path.write_text(json.dumps(document), encoding="utf-8")

    with pytest.raises(ResultsError, match="a set is listed twice"):
        read_results(QUALITY_PG, path, "quality_pg.json")


def test_the_measured_page_reads_the_mcp_servers_file():
    assert MCP in PAGE_FILES
    assert (MCP.name, MCP.benchmark, MCP.schema) == ("mcp.json", "mcp", McpResults)


def test_what_the_mcp_benchmark_writes_reads_back_equal(tmp_path: Path):
    results = mcp()
    write_results(results, tmp_path / "mcp.json")

    assert read_results(MCP, tmp_path / "mcp.json", "m") == results


def test_a_run_that_remembered_nothing_reads_back_without_a_remember_timing(tmp_path: Path):
    results = mcp(replace(mcp_store(2000), remember_mcp=None, load_average=None))
    write_results(results, tmp_path / "mcp.json")

    assert "remember_mcp" not in json.loads((tmp_path / "mcp.json").read_text())["stores"][0]
    assert read_results(MCP, tmp_path / "mcp.json", "m") == results


def test_the_runs_targets_are_every_stores_in_store_order():
    assert [(t.measured, t.met) for t in mcp().targets] == [(12.5, True), (70.0, False)]


def test_a_wrong_field_of_mcp_json_is_named_with_the_command_that_rewrites_it(tmp_path: Path):
    document = dump(mcp())
    document["stores"][1]["search_mcp"]["p50_ms"] = "fast"

    message = refusal(written(tmp_path, document, "mcp.json"), MCP)

    assert message == (
        "benchmarks/results/mcp.json: /stores/1/search_mcp/p50_ms: expected a number, found "
        '"fast"; the file is written by `python benchmarks/mcp_latency.py --large`: run it '
        "again to rewrite it"
    )


@pytest.mark.parametrize(
    ("where", "value", "problem"),
    [
        (
            ("stores", 0, "answer_bytes", "max"),
            5600.5,
            "/stores/0/answer_bytes/max: expected a whole number, found 5600.5",
        ),
        (("stores", 0, "server"), [1, 2, 3], "/stores/0/server: expected an object, found a list"),
        (
            ("stores", 0, "targets", 0, "met"),
            "yes",
            '/stores/0/targets/0/met: expected true or false, found "yes"',
        ),
        (("stores", 0, "shell"), "rm -rf /", "/stores/0: unknown field 'shell'"),
        (("settings",), None, "/settings: expected an object, found null"),
    ],
)
def test_a_hostile_mcp_json_fails_in_one_line_naming_the_field(
    tmp_path: Path, where: tuple, value: object, problem: str
):
    document = dump(mcp())
    target = document
    for step in where[:-1]:
        target = target[step]
    target[where[-1]] = value

    message = refusal(written(tmp_path, document, "mcp.json"), MCP)

    assert message.startswith(f"benchmarks/results/mcp.json: {problem}")
    assert "\n" not in message


def test_an_mcp_json_that_lists_a_store_size_twice_is_refused(tmp_path: Path):
    document = dump(mcp(mcp_store(2000), mcp_store(50000)))
    document["stores"][1]["files"] = 2000

    assert "mcp.json: /: a store size is listed twice: [2000, 2000]" in refusal(
        written(tmp_path, document, "mcp.json"), MCP
    )


def test_an_mcp_json_of_the_first_layout_says_to_measure_it_again(tmp_path: Path):
    path = written(tmp_path, {"benchmark": "mcp", "registry_sha256": "0" * 64}, "mcp.json")

    assert "python benchmarks/mcp_latency.py" in refusal(path, MCP)


def test_a_value_its_schema_refuses_is_not_written(tmp_path: Path):
    path = tmp_path / "mcp.json"
    path.write_text("the good file", encoding="utf-8")
    broken = replace(mcp_store(2000), degraded_answers="none")  # type: ignore[arg-type]

    with pytest.raises(ResultsError) as caught:
        write_results(mcp(broken), path)

    assert str(caught.value) == (
        f'{path}: /stores/0/degraded_answers: expected a whole number, found "none"; the '
        "benchmark built a value its results schema refuses, so nothing was written"
    )
    assert path.read_text(encoding="utf-8") == "the good file"


def test_a_figure_that_is_not_finite_is_not_written(tmp_path: Path):
    broken = replace(mcp_store(2000), search_mcp=Timing(n=0, p50_ms=float("nan"), p95_ms=0.0))

    with pytest.raises(ResultsError, match="a figure is not a finite number"):
        write_results(mcp(broken), tmp_path / "mcp.json")

    assert not (tmp_path / "mcp.json").exists()


def test_the_measured_page_reads_the_scale_file():
    assert SCALE in PAGE_FILES
    assert (SCALE.name, SCALE.benchmark, SCALE.schema) == ("scale.json", "scale", ScaleResults)


def scale_results() -> ScaleResults:
    window = LoadWindow((0.5, 0.4, 0.3), (0.6, 0.4, 0.3))
    exact = ScaleSearch(
        "exact", None, Timing(30, 400.0, 520.0), Timing(30, 420.0, 560.0), None, window
    )
    hnsw = ScaleSearch(
        "hnsw", 100, Timing(30, 80.0, 120.0), Timing(30, 95.0, 130.0), Recall(0.95, 0.8), window
    )
    store = ScaleStore(
        backend="postgresql",
        files=100_000,
        chunks=150_000,
        vectors=150_000,
        dim=384,
        queries=30,
        build_s=600.0,
        database_mib=900.0,
        hnsw_build_s=700.0,
        hnsw_mib=300.0,
        searches=(exact, hnsw),
        build_load_average=window,
        made_at="2026-06-01T12:00:00+00:00",
    )
    return ScaleResults(
        stamp=Stamp("scale", FORMAT, "2026-06-01T12:00:00+00:00", ranking(ARMS)),
        settings=ScaleSettings(11, "synthetic rows", "near a chunk", 2000, 16, 64, "128MB", "6GB"),
        stores=(store,),
    )


def test_what_the_scale_benchmark_writes_reads_back_equal(tmp_path: Path):
    results = scale_results()
    write_results(results, tmp_path / "scale.json")

    assert read_results(SCALE, tmp_path / "scale.json", "s") == results


def test_a_recall_that_is_not_a_number_names_the_field_and_the_command(tmp_path: Path):
    document = dump(scale_results())
    document["stores"][0]["searches"][1]["recall_at_40"]["mean"] = "high"

    message = refusal(written(tmp_path, document, "scale.json"), SCALE)

    assert "/stores/0/searches/1/recall_at_40/mean" in message
    assert "python benchmarks/scale.py" in message
