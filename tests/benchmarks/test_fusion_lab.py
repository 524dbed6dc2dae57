"""The fusion lab replays the engine's own full-text ranking, and its small scoring helpers."""

from __future__ import annotations

import shutil
from pathlib import Path

import fusion_lab as lab
import pytest

from engine.files.store import open_store
from engine.indexing.indexer import index_store
from engine.ranking.query import sanitize
from engine.ranking.scope import ScopeSpec, build_scope
from engine.search import search
from engine.sqlite.db import open_index

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QUERIES = ("staging database port", "flaky tests priya", "who owns the deploy", "deploy rollback")


@pytest.fixture(scope="module")
def examples(tmp_path_factory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("lab") / "examples"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".memsift"))
    store = open_store(root)
    index_store(store, embed=False)
    conn = open_index(store.index_path)
    lab.build_file_fts(conn)
    yield store, conn
    conn.close()


def test_the_labs_engine_ranking_runs_the_registrys_fts_statement():
    from engine.arms import ARMS

    assert lab.ENGINE_FTS is next(arm for arm in ARMS if arm.name == "fts")


@pytest.mark.parametrize("query", QUERIES)
def test_the_labs_engine_fts_list_is_the_searchs_fts_ranking(examples, query):
    store, conn = examples
    scope = build_scope(ScopeSpec())
    match = lab.fts_form(conn, sanitize(query), scope, "chunk")

    replayed = [path for path, _ in lab.fts_hits(conn, "chunk", match, scope)]

    result = search(store, query, use_vector=False, limit=100, min_similarity=0)
    ranked = sorted((hit.arms["fts"].rank, hit.path) for hit in result.hits if "fts" in hit.arms)
    assert replayed[: len(ranked)] == [path for _, path in ranked]
    assert ranked


def test_the_whole_file_lever_ranks_from_the_labs_own_table(examples):
    _, conn = examples
    scope = build_scope(ScopeSpec())
    match = lab.fts_form(conn, sanitize("staging database port"), scope, "file")

    hits = lab.fts_hits(conn, "file", match, scope)

    assert hits[0][0] == "facts/staging-database-connection.md"
    assert all(score < 0 for _, score in hits)  # FTS5's bm25: more negative is better


def test_ndcg_at_10_is_one_for_the_ideal_order_and_zero_without_a_relevant_hit():
    assert lab.ndcg10(["a", "b"], {"a": 2, "b": 1}) == 1.0
    assert lab.ndcg10(["x", "y"], {"a": 1}) == 0.0


def test_equal_keys_share_a_rank_and_the_next_rank_skips():
    assert lab.tie_ranks({"a": 1, "b": 1, "c": 2}) == {"a": 1, "b": 1, "c": 3}


@pytest.mark.parametrize(
    "query", [*QUERIES, "release decision july 2026", "what happened on 2026-09-17"]
)
def test_the_labs_fusion_orders_hits_as_the_fused_sql_statement_does(examples, query):
    """The lab proposes the registry's weights, so its fusion must be the statement's: on a
    lexical search (no state rows, so no salience) its order is the SQL's, hit for hit."""
    from engine.arms import ARMS
    from engine.ranking.assemble import RRF_K

    store, conn = examples
    weights = {arm.name: arm.weight for arm in ARMS}
    scope = build_scope(ScopeSpec())
    match = lab.fts_form(conn, sanitize(query), scope, "chunk")
    runs = lab.QueryRuns("q", query, None, {})
    runs.arms["fts:chunk"] = lab.fts_hits(conn, "chunk", match, scope) if match else []
    runs.arms["vector"] = []
    moments = dict(conn.execute("SELECT path, coalesce(event_at, updated_at) FROM files"))
    setting = lab.Setting(
        fts=weights["fts"],
        vector=0.0,
        recency=weights["recency"],
        time=weights["time"],
        relative=True,
        k=RRF_K,
        fts_variant="chunk",
        candidates=100,
    )

    replayed = [path for path, _ in lab.fuse(lab.StoreRuns("s", moments, [runs]), runs, setting)]

    result = search(store, query, use_vector=False, limit=10, min_similarity=0)
    assert [hit.path for hit in result.hits] == replayed[:10]
    assert result.hits
