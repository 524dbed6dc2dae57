"""The results files' one definition: what the benchmarks write is what the docs read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.arms import ARMS
from engine.evaluate import METRIC_NAMES
from engine.fingerprint import ranking
from engine.results_schema import (
    FORMAT,
    LAB,
    LATENCY,
    METRICS,
    QUALITY,
    ArmAblation,
    Metrics,
    QualityResults,
    QualitySet,
    ResultsError,
    Stamp,
    read_results,
    write_results,
)
from engine.typed_json import dump


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
        'benchmarks/results/quality.json: /sets/0/ablation/1/without/ndcg@10: expected a '
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


def test_a_file_of_the_first_layout_says_how_to_convert_it(tmp_path: Path):
    message = refusal(written(tmp_path, {"kind": "quality", "registry_sha256": "0" * 64}))

    assert "written in the layout before format 2" in message
    assert "python benchmarks/convert_results.py" in message


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
