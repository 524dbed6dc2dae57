"""Reading the benchmark result files: what is loaded, what is stale, what stops the build."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from arms_doc_testing import (
    ENGINE_REGISTRY,
    LATENCY_FIXTURE,
    QUALITY_FIXTURE,
    REPO,
    fixture_document,
)

from arms_doc.results import (
    ResultsError,
    load_latency,
    load_quality,
    load_results,
    registry_sha256,
    stale_message,
)

CURRENT = "c" * 64


def write(folder: Path, name: str, document: dict[str, Any] | str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    text = document if isinstance(document, str) else json.dumps(document, indent=2)
    path.write_text(text, encoding="utf-8")
    return path


def test_quality_file_loads_every_set_with_its_ablation_and_references():
    quality = load_quality(QUALITY_FIXTURE, "benchmarks/results/quality.json")

    assert [result.name for result in quality.sets] == ["tiny-a", "tiny-b"]
    tiny = quality.sets[0]
    assert tiny.overall.queries == 40
    assert tiny.fused["ndcg@10"] == 0.6
    assert tiny.arms() == ["fts", "vector", "recency", "salience"]
    assert tiny.without("vector")["ndcg@10"] == 0.4705
    assert tiny.alone("vector")["ndcg@10"] == 0.553
    assert tiny.references == {"BM25 (bm25s)": 0.442, "dense": 0.542}
    assert list(tiny.by_category) == ["temporal", "factual"]


def test_quality_file_keeps_its_stamp():
    stamp = load_quality(QUALITY_FIXTURE, "q.json").stamp

    assert stamp.file == "q.json"
    assert stamp.command == "python benchmarks/quality.py"
    assert stamp.made_at == "2026-06-01T09:30:00+00:00"
    assert stamp.commit == "0123456789abcdef0123456789abcdef01234567"
    assert stamp.machine["cpu_model"] == "Test CPU"


def test_latency_stores_are_ordered_by_width_then_size():
    latency = load_latency(LATENCY_FIXTURE, "l.json")

    assert [(store.dim, store.files) for store in latency.stores] == [
        (384, 2000),
        (384, 10000),
        (384, 50000),
        (1024, 2000),
    ]


def test_latency_file_loads_timings_floor_targets_and_indexing():
    latency = load_latency(LATENCY_FIXTURE, "l.json")
    store = latency.stores[0]

    assert store.timings["fused"].p50_ms == 3.2
    assert store.floor.p50_ms == 0.06
    assert store.ratios["vector_over_floor"] == 35.0
    assert store.memory["search_peak_rss_mib"] == 60.5
    assert [target.met for target in latency.targets] == [True, False, True, True, True]
    assert latency.lexical is not None and latency.lexical.files_per_s == 1980.2
    assert latency.embedding is not None and latency.embedding.overhead == 0.0744


def test_missing_files_are_listed_not_raised(tmp_path: Path):
    results = load_results(tmp_path / "nowhere", display="bench/results", registry_sha256=CURRENT)

    assert results.quality is None and results.latency is None
    assert results.missing == ["bench/results/quality.json", "bench/results/latency.json"]
    assert results.stale == []


def test_a_file_stamped_with_the_current_registry_is_not_stale(tmp_path: Path):
    document = fixture_document("quality.json") | {"registry_sha256": CURRENT}
    write(tmp_path, "quality.json", document)

    results = load_results(tmp_path, display="r", registry_sha256=CURRENT)

    assert results.quality is not None
    assert results.stale == []
    assert results.missing == ["r/latency.json"]


def test_a_file_stamped_with_another_registry_is_stale(tmp_path: Path):
    write(
        tmp_path, "latency.json", fixture_document("latency.json") | {"registry_sha256": "a" * 64}
    )

    (stale,) = load_results(tmp_path, display="r", registry_sha256=CURRENT).stale

    assert (stale.file, stale.recorded, stale.current) == ("r/latency.json", "a" * 64, CURRENT)
    assert stale.command == "python benchmarks/latency.py"


def test_the_stale_message_names_file_registry_and_the_command_that_refreshes_it(tmp_path: Path):
    write(
        tmp_path, "quality.json", fixture_document("quality.json") | {"registry_sha256": "a" * 64}
    )
    (stale,) = load_results(tmp_path, display="r", registry_sha256=CURRENT).stale

    message = stale_message(stale, "src/engine/arms.py")

    assert message.startswith("r/quality.json was made with another version of src/engine/arms.py")
    assert "aaaaaaaaaaaa…" in message and "cccccccccccc…" in message
    assert "refresh them with `python benchmarks/quality.py` and commit the new file" in message


def test_without_a_registry_hash_nothing_is_called_stale(tmp_path: Path):
    write(tmp_path, "quality.json", fixture_document("quality.json"))

    assert load_results(tmp_path, display="r", registry_sha256=None).stale == []


def test_registry_hash_is_the_one_the_benchmarks_stamp():
    spec = importlib.util.spec_from_file_location("stamp", REPO / "benchmarks" / "stamp.py")
    assert spec is not None and spec.loader is not None
    stamp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(stamp)

    assert registry_sha256(ENGINE_REGISTRY) == stamp.registry_hash(ENGINE_REGISTRY)


def test_an_unreadable_registry_has_no_hash(tmp_path: Path):
    assert registry_sha256(tmp_path / "missing.py") is None


def test_invalid_json_names_file_line_and_column(tmp_path: Path):
    path = write(tmp_path, "quality.json", '{\n  "kind": "quality",\n  "sets": {,}\n}\n')

    with pytest.raises(ResultsError) as caught:
        load_quality(path, "benchmarks/results/quality.json")

    assert str(caught.value).startswith("benchmarks/results/quality.json:3:12: not valid JSON")
    assert "run it again" in str(caught.value) and "python benchmarks/quality.py" in str(
        caught.value
    )


def test_a_missing_field_is_named_by_its_json_pointer(tmp_path: Path):
    document = fixture_document("latency.json")
    del document["stores"][1]["floor"]["p50_ms"]
    path = write(tmp_path, "latency.json", document)

    with pytest.raises(ResultsError, match=r"^l\.json: /stores/1/floor: missing 'p50_ms'; "):
        load_latency(path, "l.json")


def test_a_field_of_the_wrong_type_is_refused(tmp_path: Path):
    document = fixture_document("quality.json")
    document["sets"]["tiny-a"]["ablation"]["without fts"]["ndcg@10"] = "0.52"
    path = write(tmp_path, "quality.json", document)

    with pytest.raises(
        ResultsError,
        match=r'/sets/tiny-a/ablation/without fts/ndcg@10: expected a number, found "0.52"',
    ):
        load_quality(path, "q.json")


def test_a_file_without_a_registry_hash_is_refused(tmp_path: Path):
    document = fixture_document("quality.json")
    del document["registry_sha256"]
    path = write(tmp_path, "quality.json", document)

    with pytest.raises(ResultsError, match="missing 'registry_sha256'"):
        load_quality(path, "q.json")


def test_a_latency_file_in_quality_json_is_refused(tmp_path: Path):
    path = write(tmp_path, "quality.json", fixture_document("latency.json"))

    with pytest.raises(ResultsError, match="missing 'sets'"):
        load_quality(path, "q.json")


def test_a_latency_format_this_reader_does_not_know_is_refused(tmp_path: Path):
    path = write(tmp_path, "latency.json", fixture_document("latency.json") | {"format": 2})

    with pytest.raises(ResultsError, match="format 2 is not one this plugin reads"):
        load_latency(path, "l.json")


def test_a_non_finite_figure_is_refused(tmp_path: Path):
    text = LATENCY_FIXTURE.read_text(encoding="utf-8").replace('"p95_ms": 3.84', '"p95_ms": NaN', 1)
    path = write(tmp_path, "latency.json", text)

    with pytest.raises(ResultsError, match="expected a finite number, found nan"):
        load_latency(path, "l.json")
