"""The results folder as the pages see it: what is loaded, what is stale, what is missing."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from arms_doc_testing import (
    FIXTURES,
    SNAPSHOT_REGISTRY,
    fixture_document,
    ranking_of,
)

from arms_doc.measured import load_results, stale_message, tuning_drift
from engine.measure.results_schema import ResultsError

CURRENT = ranking_of(SNAPSHOT_REGISTRY)
#: The snapshot's ranking with the recency arm weighted differently.
OTHER = replace(
    CURRENT, arms=(*CURRENT.arms[:2], replace(CURRENT.arms[2], weight=0.9), *CURRENT.arms[3:])
)


def write(folder: Path, name: str, document: dict[str, Any] | str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    text = document if isinstance(document, str) else json.dumps(document, indent=2)
    path.write_text(text, encoding="utf-8")
    return path


def test_missing_files_are_listed_not_raised(tmp_path: Path):
    results = load_results(tmp_path / "nowhere", display="bench/results", current=CURRENT)

    assert results.quality is None and results.latency is None and results.mcp is None
    assert [loaded.shown for loaded in results.missing] == [
        "bench/results/quality.json",
        "bench/results/quality_pg.json",
        "bench/results/abstention.json",
        "bench/results/latency.json",
        "bench/results/mcp.json",
        "bench/results/scale.json",
        "bench/results/docs_build.json",
        "bench/results/indexing.json",
    ]
    assert results.stale == []


def test_a_folder_named_like_a_results_file_is_an_error_naming_it(tmp_path: Path):
    """Not "does not exist": the page would say the benchmark never ran while something sits
    at the file's place."""
    (tmp_path / "mcp.json").mkdir()
    with pytest.raises(ResultsError, match=r"^bench/results/mcp\.json: cannot be read"):
        load_results(tmp_path, display="bench/results", current=CURRENT)


def test_a_link_to_a_results_file_that_is_not_there_is_an_error_naming_it(tmp_path: Path):
    """A results folder linked to a share that is not mounted must not read as 'not measured'."""
    (tmp_path / "latency.json").symlink_to(tmp_path / "unmounted" / "latency.json")
    with pytest.raises(ResultsError, match=r"^bench/results/latency\.json: cannot be read"):
        load_results(tmp_path, display="bench/results", current=CURRENT)


def test_the_fixtures_load_with_every_block_of_the_quality_file():
    results = load_results(FIXTURES, display="r", current=CURRENT)

    quality = results.quality
    assert quality is not None and quality.lab is not None
    assert [s.name for s in quality.sets] == ["tiny-a", "tiny-b"]
    assert [entry.arm for entry in quality.sets[0].ablation] == [
        "fts",
        "vector",
        "recency",
        "salience",
    ]
    assert quality.lab.tuning and quality.lab.levers and quality.lab.calibration
    assert results.latency is not None and len(results.latency.stores) == 4
    assert results.mcp is not None and [s.files for s in results.mcp.stores] == [50000, 2000]


def test_a_file_measured_with_the_current_ranking_is_not_stale():
    assert load_results(FIXTURES, display="r", current=CURRENT).stale == []


def test_a_file_measured_with_another_ranking_is_stale_and_says_what_changed(tmp_path: Path):
    document = fixture_document("latency.json")
    document["stamp"]["ranking"]["arms"][2]["weight"] = 0.9
    write(tmp_path, "latency.json", document)

    (stale,) = load_results(tmp_path, display="r", current=CURRENT).stale

    assert stale.shown == "r/latency.json"
    assert stale.changes == ("weight of recency 0.9 -> 0.5",)


def test_an_mcp_file_measured_with_another_ranking_is_stale_and_names_its_command(
    tmp_path: Path,
):
    document = fixture_document("mcp.json")
    document["stamp"]["ranking"]["arms"][1]["sql_sha256"] = "0" * 64
    write(tmp_path, "mcp.json", document)

    (stale,) = load_results(tmp_path, display="r", current=CURRENT).stale

    assert stale.changes == ("SQL of vector",)
    assert stale_message(stale, "src/engine/arms.py") == (
        "r/mcp.json was measured with another ranking than src/engine/arms.py now describes "
        "(SQL of vector), so its figures may no longer hold; refresh them with "
        "`python benchmarks/mcp_latency.py --large` and commit the new file"
    )


def test_a_malformed_mcp_file_stops_with_the_file_and_the_field(tmp_path: Path):
    document = fixture_document("mcp.json")
    document["stores"][0]["search_cli_one_shot"]["n"] = -0.5
    write(tmp_path, "mcp.json", document)

    with pytest.raises(
        ResultsError,
        match=r"^r/mcp\.json: /stores/0/search_cli_one_shot/n: expected a whole number, found "
        r"-0\.5; the file is written by `python benchmarks/mcp_latency\.py --large`",
    ):
        load_results(tmp_path, display="r", current=CURRENT)


def test_the_stale_message_names_file_registry_change_and_the_command(tmp_path: Path):
    document = fixture_document("quality.json")
    document["stamp"]["ranking"]["rrf_k"] = 60
    write(tmp_path, "quality.json", document)
    (stale,) = load_results(tmp_path, display="r", current=CURRENT).stale

    message = stale_message(stale, "src/engine/arms.py")

    assert message == (
        "r/quality.json was measured with another ranking than src/engine/arms.py now "
        "describes (fusion constant k 60 -> 20), so its figures may no longer hold; refresh "
        "them with `python benchmarks/quality.py` and commit the new file"
    )


def test_without_a_current_ranking_nothing_is_called_stale():
    assert load_results(FIXTURES, display="r", current=None).stale == []


def test_a_malformed_file_stops_with_the_file_and_the_field(tmp_path: Path):
    document = fixture_document("latency.json")
    del document["stores"][1]["floor"]["p50_ms"]
    write(tmp_path, "latency.json", document)

    with pytest.raises(
        ResultsError, match=r"^r/latency\.json: /stores/1/floor: missing 'p50_ms'; "
    ):
        load_results(tmp_path, display="r", current=CURRENT)


def test_a_tuning_record_that_matches_the_registry_raises_no_drift():
    quality = load_results(FIXTURES, display="r", current=CURRENT).quality
    weights = {arm.name: arm.weight for arm in CURRENT.arms}

    assert tuning_drift(quality, weights, 20) == []


def test_a_tuning_record_the_registry_does_not_hold_is_named():
    quality = load_results(FIXTURES, display="r", current=CURRENT).quality
    weights = {arm.name: arm.weight for arm in OTHER.arms} | {"salience": 0.4}
    del weights["fts"]

    assert tuning_drift(quality, weights, 60) == [
        "weight of fts: chosen 1, no such arm in the registry",
        "weight of recency: chosen 0.5, registry 0.9",
        "k: chosen 20, the engine's 60",
    ]
