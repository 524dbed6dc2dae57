"""The timing summary both latency benchmarks report in."""

from __future__ import annotations

from timing import busy_warning, stats


def test_stats_are_milliseconds_rounded_to_microseconds():
    summary = stats([0.001, 0.002, 0.003])

    assert summary == {
        "n": 3,
        "p50_ms": 2.0,
        "p95_ms": 2.9,
        "mean_ms": 2.0,
        "min_ms": 1.0,
        "max_ms": 3.0,
    }


def test_stats_with_cpu_times_add_their_percentiles():
    summary = stats([0.001, 0.002], cpu=[0.0005, 0.0015])

    assert (summary["cpu_p50_ms"], summary["cpu_p95_ms"]) == (1.0, 1.45)


def test_a_load_over_half_the_cores_is_warned_of():
    assert busy_warning([1.5, 1.0, 1.0], cpus=2) == (
        "warning: load average [1.5, 1.0, 1.0] on 2 CPUs; timings will be inflated"
    )


def test_a_load_of_half_the_cores_or_less_is_quiet():
    assert busy_warning([1.0, 3.0, 3.0], cpus=2) is None
