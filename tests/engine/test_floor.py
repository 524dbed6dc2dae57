"""The store floor's pure rule (engine.ranking.floor) and the choice a search makes
(engine.floor): which floor wins, what a record needs to be trusted, when it is measured again,
and what a search says about it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from engine.floor import DEFAULT_FLOOR, choose
from engine.ranking.floor import (
    MAX_FLOOR,
    MIN_FLOOR,
    PROBE_SET,
    PROBES,
    QUANTILE,
    REFRESH_MIN_CHUNKS,
    StoreFloor,
    floor_from,
    read_record,
)

QUESTIONS = Path(__file__).resolve().parents[2] / "benchmarks" / "abstention"


def test_the_floor_is_the_quantile_of_the_probes_best_similarities():
    best = [0.26 + 0.01 * i for i in range(11)]  # 0.26 .. 0.36
    assert floor_from(best) == pytest.approx(0.26 + 0.1 * QUANTILE, abs=1e-4)


def test_the_floor_stays_within_its_bounds():
    assert floor_from([0.01, 0.02, 0.03]) == MIN_FLOOR
    assert floor_from([0.9, 0.95, 0.99]) == MAX_FLOOR


def test_no_vector_means_no_floor_to_measure():
    assert floor_from([]) is None
    assert floor_from([math.nan]) is None


def record(**changes: object) -> StoreFloor:
    values = {"value": 0.3, "probes": 48, "probe_set": PROBE_SET, "model": "m", "chunks": 1000}
    return StoreFloor(**{**values, **changes})  # type: ignore[arg-type]


def test_a_record_is_kept_until_a_tenth_of_the_store_changed():
    assert not record().stale("m", 1000, embedded=99)
    assert record().stale("m", 1000, embedded=100)
    assert record().stale("m", 900)  # a tenth of the chunks removed
    assert record(changed=60).stale("m", 1040)  # 60 changed, then 40 added


def test_a_small_store_is_measured_again_only_after_a_few_chunks():
    assert not record(chunks=3).stale("m", 3 + REFRESH_MIN_CHUNKS - 1)
    assert record(chunks=3).stale("m", 3 + REFRESH_MIN_CHUNKS)


def test_a_record_of_another_model_or_probe_list_is_not_trusted():
    assert record().stale("other", 1000)
    assert record(probe_set="0123456789ab").stale("m", 1000)
    assert not record(probe_set="0123456789ab").fits("m")


@pytest.mark.parametrize(
    "text",
    [None, "", "not json", "[]", '{"value": 0.3}', json.dumps({**record().__dict__, "value": 7})],
)
def test_an_unreadable_record_is_measured_again_never_trusted(text):
    assert read_record(text) is None


def test_a_record_reads_back_as_written():
    assert read_record(record(changed=4).to_meta()) == record(changed=4)


class Place:
    """A store's record and vectors, without a database."""

    def __init__(self, text: str | None, best: list[float]) -> None:
        self.text, self.best, self.measured = text, np.array(best, dtype=np.float32), 0

    def floor_record(self) -> str | None:
        return self.text

    def embedded_chunks(self) -> tuple[str | None, int]:
        return "m", 10

    def probe_best(self, probes: np.ndarray) -> np.ndarray:
        self.measured += 1
        return self.best


class Embedder:
    name, dim = "m", 2

    def embed(self, texts):  # type: ignore[no-untyped-def]
        return np.ones((len(texts), 2), dtype=np.float32) / math.sqrt(2)


def test_a_floor_given_for_the_search_wins_then_one_in_config_toml():
    place = Place(record().to_meta(), [])
    assert choose(0.1, 0.2, place, Embedder()).describe() == "floor 0.10 set for this search"
    assert choose(None, 0.2, place, Embedder()).describe() == (
        "floor 0.20 from [limits] min_similarity"
    )
    assert place.measured == 0


def test_the_store_floor_comes_from_the_index_record_when_there_is_one():
    place = Place(record(value=0.37).to_meta(), [])
    floor = choose(None, None, place, Embedder())
    assert (floor.value, floor.describe()) == (0.37, "store floor 0.37 from 48 probes")
    assert place.measured == 0


def test_an_index_without_a_record_is_measured_once_per_search_session():
    place = Place(None, [0.4] * 48)
    first = choose(None, None, place, Embedder())
    second = choose(None, None, place, Embedder())
    assert first.value == second.value == 0.4
    assert "measured for this search" in first.describe()
    assert place.measured == 1


def test_a_store_with_no_vector_gets_the_old_default():
    floor = choose(None, None, Place(None, []), Embedder())
    assert floor.value == DEFAULT_FLOOR
    assert floor.source == "default"


def test_the_probes_are_not_the_benchmark_questions():
    """The benchmark measures the floor on questions it was not made from."""
    asked = {
        question["q"].lower()
        for path in QUESTIONS.glob("*.json")
        for kind in ("answerable", "foreign")
        for question in json.loads(path.read_text(encoding="utf-8"))[kind]
    }
    words = {word for question in asked for word in question.split()}
    assert not asked & {probe.lower() for probe in PROBES}
    assert not words & {word for probe in PROBES for word in probe.split()}
    assert len(set(PROBES)) == len(PROBES)
