"""What mcp_latency.py checks its figures against: issue 11's targets, per store size."""

from __future__ import annotations

from mcp_latency import targets

from engine.measure.results_schema import AnswerBytes, Target, Timing


def timing(p50_ms: float) -> Timing:
    return Timing(n=20, p50_ms=p50_ms, p95_ms=2 * p50_ms)


def test_at_2000_memories_warm_search_is_held_to_15_ms_and_answers_to_8000_bytes():
    assert targets(2000, timing(14.5), AnswerBytes(p50=5000, max=8000)) == (
        Target("warm MCP search p50", "<= 15 ms", 14.5, True),
        Target("largest search answer", "<= 8000 bytes", 8000, True),
    )


def test_at_50000_memories_a_warm_search_over_60_ms_misses():
    (warm, _) = targets(50000, timing(60.5), AnswerBytes(p50=5000, max=5600))

    assert warm == Target("warm MCP search p50", "<= 60 ms", 60.5, False)


def test_an_answer_over_8000_bytes_misses():
    (_, answer) = targets(2000, timing(10.0), AnswerBytes(p50=5000, max=8001))

    assert not answer.met


def test_a_store_size_the_issue_sets_no_speed_for_is_held_to_the_answer_size_only():
    assert [t.name for t in targets(300, timing(99.0), AnswerBytes(p50=400, max=5300))] == [
        "largest search answer"
    ]
