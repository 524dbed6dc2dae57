"""The synthetic stores the latency benchmark times: built as an index run leaves a store, so a
timed search does no work a real store would not make it do."""

from __future__ import annotations

import numpy as np
from synthetic import StubEmbedder, build_index, queries

from engine.files.store import Store
from engine.ranking.floor import PROBES
from engine.ranking.scope import ScopeSpec, build_scope
from engine.search import Searcher
from engine.sqlite.db import open_index
from engine.sqlite.floor import SqliteFloorPlace

DIM = 16


def test_a_synthetic_store_holds_the_store_floors_record(tmp_path):
    build_index(tmp_path, 60, DIM, seed=5)

    conn = open_index(Store(tmp_path).index_path)
    try:
        record = SqliteFloorPlace(conn).floor_record()
    finally:
        conn.close()

    assert record is not None


def test_the_stub_embedder_gives_any_other_text_the_same_unit_vector_in_every_process():
    first, again = StubEmbedder(DIM, []), StubEmbedder(DIM, [])

    vectors = first.embed(list(PROBES[:3]))

    assert np.array_equal(vectors, again.embed(list(PROBES[:3])))
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_a_search_of_a_synthetic_store_answers_with_the_stub_embedder(tmp_path):
    build_index(tmp_path, 60, DIM, seed=5)
    store = Store(tmp_path)
    conn = open_index(store.index_path)
    try:
        table = queries(conn, 3, DIM, 5, build_scope(ScopeSpec()).sql)
    finally:
        conn.close()

    with Searcher(store, embedder=StubEmbedder(DIM, table)) as searcher:
        results = [searcher.search(query.text) for query in table]

    assert all("vector" in result.arms_fired for result in results)
