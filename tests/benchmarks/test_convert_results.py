"""convert_results.py: a first-layout mcp.json moves into the typed layout, figures unchanged."""

from __future__ import annotations

import json
from pathlib import Path

from convert_results import convert

from engine.results_schema import MCP, read_results

TIMING = {"n": 10, "p50_ms": 56.12, "p95_ms": 89.268, "mean_ms": 57.4}


def first_layout_store(files: int) -> dict:
    return {
        "files": files,
        "store": {"files": files, "chunks": files * 3 // 2, "build_s": 13.8, "cached": True},
        "server": {"handshake_s": 1.72, "ready_s": 2.672, "first_search_ms": 136.402},
        "search_mcp": TIMING,
        "search_in_process": TIMING,
        "query_embedding_alone": TIMING,
        "search_cli_one_shot": TIMING,
        "remember_mcp": None,
        "answer_bytes": {"p50": 5363, "max": 5529},
        "degraded_answers": 0,
    }


FIRST_LAYOUT = {
    "benchmark": "mcp",
    "format": 1,
    "timestamp": "2026-11-30T16:51:38+00:00",
    "registry_sha256": "f" * 64,
    "registry_path": "src/engine/arms.py",
    "git": {"commit": None, "src_dirty": False},
    "load_average_at_start": [4.35, 4.28, 4.96],
    "machine": {"cpu_count": 2},
    "settings": {
        "seed": 1,
        "queries": 200,
        "warmup": 20,
        "limit": 10,
        "query_vector": "q",
        "stored_vectors": "s",
        "transport": "t",
    },
    "stores": [first_layout_store(2000), first_layout_store(50000)],
    "elapsed_s": 197.8,
    "load_average_at_end": [4.64, 4.52, 4.93],
    "targets": [
        {
            "name": "warm MCP search p50 @ 2000 files",
            "target": "<= 15.0 ms",
            "measured": 56.12,
            "met": False,
        },
        {
            "name": "largest search answer @ 2000 files",
            "target": "<= 8000 bytes",
            "measured": 5529,
            "met": True,
        },
        {
            "name": "largest search answer @ 50000 files",
            "target": "<= 8000 bytes",
            "measured": 5608,
            "met": True,
        },
    ],
}


def test_a_first_layout_mcp_json_keeps_its_figures_and_each_store_its_targets(tmp_path: Path):
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(FIRST_LAYOUT), encoding="utf-8")

    convert(path, restamp=True)
    results = read_results(MCP, path, "mcp.json")

    assert [s.files for s in results.stores] == [2000, 50000]
    assert results.stores[0].search_mcp.p50_ms == 56.12
    assert results.stores[0].remember_mcp is None
    assert [(t.name, t.measured) for t in results.stores[0].targets] == [
        ("warm MCP search p50", 56.12),
        ("largest search answer", 5529),
    ]
    assert [t.name for t in results.stores[1].targets] == ["largest search answer"]
    assert results.stamp.made_at == "2026-11-30T16:51:38+00:00"
    assert "restamped" in (results.stamp.note or "")
