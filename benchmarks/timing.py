"""How the latency benchmarks summarise and qualify what they time, written once.

``latency.py`` (the engine's statement) and ``mcp_latency.py`` (the server an agent talks to)
report timings in the same shape, so their figures can be read side by side: the same
percentiles, rounded the same way, and the same warning when the machine is too busy for the
figures to mean much. Each keeps its own loops (one times phases in child processes, the other
an asyncio client); what they share is here.
"""

from __future__ import annotations

import os
import sys

import numpy as np


def log(message: str) -> None:
    """Progress on stderr, so stdout stays the report."""
    print(message, file=sys.stderr, flush=True)


def stats(seconds: list[float], cpu: list[float] | None = None) -> dict[str, float]:
    """Wall-clock percentiles in ms; with ``cpu``, this process's CPU time per run as well
    (steadier than wall time when other processes share the cores)."""
    ms = np.array(seconds) * 1000.0
    out = {
        "n": len(ms),
        "p50_ms": round(float(np.percentile(ms, 50)), 3),
        "p95_ms": round(float(np.percentile(ms, 95)), 3),
        "mean_ms": round(float(ms.mean()), 3),
        "min_ms": round(float(ms.min()), 3),
        "max_ms": round(float(ms.max()), 3),
    }
    if cpu is not None:
        cpu_ms = np.array(cpu) * 1000.0
        out["cpu_p50_ms"] = round(float(np.percentile(cpu_ms, 50)), 3)
        out["cpu_p95_ms"] = round(float(np.percentile(cpu_ms, 95)), 3)
    return out


def load_average() -> list[float]:
    """1, 5 and 15 minute load averages: above the core count, timings are inflated."""
    return [round(x, 2) for x in os.getloadavg()]


def busy_warning(load: list[float], cpus: int | None = None) -> str | None:
    """The warning a run starts with when the last minute's load is over half the cores (the
    figures will be inflated), or None when the machine is quiet enough."""
    cpus = cpus or os.cpu_count() or 1
    if load[0] > cpus / 2:
        return f"warning: load average {load} on {cpus} CPUs; timings will be inflated"
    return None
