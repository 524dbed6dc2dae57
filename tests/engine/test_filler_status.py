"""What status says while the vector filler finishes. A search trusts the vector arm by the
coverage the filler records (every couple of seconds, and once more when it is done), while
status counts vectors live: between the filler's last vectors and that record, status shows
full coverage and a search is still degraded. ``filling_vectors`` stays true until the record
is written, which is what a client (and tests/engine/mcp_harness.py) waits on."""

from __future__ import annotations

import threading

from test_freshness import WAIT_S, eventually

import engine.sqlite.incremental
from conftest import HashEmbedder
from engine.indexing.budget import BUDGET_KEY, recorded_budget
from engine.indexing.freshness import Freshness
from engine.indexing.indexer import index_store
from engine.sqlite.db import open_index, read_meta
from engine.sqlite.indexdb import vector_coverage


def recorded_and_live(store) -> tuple[tuple[int, int], tuple[int, int]]:  # type: ignore[no-untyped-def]
    """(chunks, embedded) as the index last recorded them, and as counted now."""
    conn = open_index(store.index_path)
    try:
        recorded = (int(read_meta(conn, "chunks")), int(read_meta(conn, "embedded_chunks")))
        budget = recorded_budget({BUDGET_KEY: read_meta(conn, BUDGET_KEY)})
        return recorded, vector_coverage(conn, read_meta(conn, "model"), budget)
    finally:
        conn.close()


def test_the_filler_is_said_to_be_filling_until_the_coverage_searches_trust_is_recorded(
    make_store, monkeypatch
):
    embedder = HashEmbedder()
    monkeypatch.setattr("engine.indexing.freshness.make_embedder", lambda _name: embedder)
    store = make_store({"a.md": "Alpha.\n"})
    index_store(store, embedder=embedder)
    (store.root / "b.md").write_text("Beta, written while nothing ran.\n")

    real_record = engine.sqlite.incremental.record_coverage
    stored, release = threading.Event(), threading.Event()

    def record_held(conn, model, dim, budget):  # type: ignore[no-untyped-def]
        if threading.current_thread().name == "memsift-vectors" and not stored.is_set():
            stored.set()
            release.wait(WAIT_S)
        real_record(conn, model, dim, budget)

    monkeypatch.setattr(engine.sqlite.incremental, "record_coverage", record_held)
    freshness = Freshness(store, watch=False)
    freshness.start()
    try:
        assert stored.wait(WAIT_S)
        recorded, live = recorded_and_live(store)
        assert live == (2, 2) and recorded == (2, 1)  # what a search goes by is behind
        assert freshness.status()["filling_vectors"] is True
        release.set()
        assert eventually(lambda: freshness.status()["filling_vectors"] is False)
        assert recorded_and_live(store) == ((2, 2), (2, 2))
    finally:
        release.set()
        freshness.stop()
