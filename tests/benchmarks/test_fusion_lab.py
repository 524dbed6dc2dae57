"""The fusion lab replays the engine's own full-text ranking, and its small scoring helpers."""

from __future__ import annotations

import shutil
from dataclasses import replace
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


# ------------------------------------------------------------ long texts and weak agreement


def test_the_labs_engine_setting_is_the_registrys():
    """The long-text levers are each measured as a change to ENGINE: it must be the search."""
    from engine.arms import ARMS
    from engine.ranking.assemble import RRF_K

    weights = {arm.name: arm.weight for arm in ARMS}
    assert (lab.ENGINE.fts, lab.ENGINE.vector) == (weights["fts"], weights["vector"])
    assert (lab.ENGINE.recency, lab.ENGINE.time) == (weights["recency"], weights["time"])
    assert lab.ENGINE.k == RRF_K
    assert lab.ENGINE.fts_variant == "chunk"


def zlib_and_gpl() -> tuple[lab.StoreRuns, lab.QueryRuns]:
    """Issue 21's shape: the zlib licence is fts #38 and vector #1, a long GPL text fts #4 and
    vector #14; fillers take every other place."""
    fts = [(f"f{n}", -10.0 + n * 0.1) for n in range(1, 60)]
    fts[3], fts[37] = ("gpl", fts[3][1]), ("zlib", fts[37][1])
    vector = [(f"v{n}", 0.6 - n * 0.005) for n in range(1, 60)]
    vector[0], vector[13] = ("zlib", 0.7), ("gpl", vector[13][1])
    query = lab.QueryRuns("q", "what license covers the zlib code", None, {"zlib": 1})
    query.arms = {"fts:chunk": fts, "vector": vector}
    docs = {d for d, _ in fts + vector}
    moments = dict.fromkeys(docs, "2026-01-01T00:00:00")
    chunks = dict.fromkeys(docs, 1) | {"gpl": 80, "zlib": 3}
    return lab.StoreRuns("s", moments, [query], chunks=chunks), query


def higher(setting: lab.Setting) -> str:
    """Which of the two the fusion ranks higher."""
    store, query = zlib_and_gpl()
    ranked = [doc for doc, _ in lab.fuse(store, query, setting)]
    return min(("zlib", "gpl"), key=ranked.index)


def test_under_the_engines_fusion_two_middling_agreements_beat_one_strong_match():
    assert higher(lab.ENGINE) == "gpl"


def test_an_arm_that_counts_nothing_past_rank_ten_puts_the_strong_match_first():
    assert higher(replace(lab.ENGINE, fade_rank=10)) == "zlib"


def test_a_length_aware_vector_arm_puts_the_short_licence_first():
    assert higher(replace(lab.ENGINE, vector_length=0.02)) == "zlib"


def test_every_long_text_lever_is_off_by_default():
    store, query = zlib_and_gpl()
    plain = replace(lab.ENGINE)
    assert lab.shaped(store, query.arms | {}, plain) == query.arms
    assert lab.contribution(1.0, 20, 7, plain) == 1.0 / 27


def test_the_power_lever_keeps_a_first_place_and_lowers_the_rest():
    setting = replace(lab.ENGINE, power=2.0)
    assert lab.contribution(1.0, 20, 1, setting) == pytest.approx(1.0 / 21)
    assert lab.contribution(1.0, 20, 5, setting) < 1.0 / 25


def test_a_steep_fade_is_continuous_at_its_rank_and_falls_faster_past_it():
    setting = replace(lab.ENGINE, fade_rank=10, fade="steep")
    assert lab.contribution(1.0, 20, 10, setting) == pytest.approx(1.0 / 30)
    assert lab.contribution(1.0, 20, 20, setting) == pytest.approx(1.0 / 40 * 30 / 40)


def test_the_vector_floor_drops_memories_below_it_from_the_arm():
    store, query = zlib_and_gpl()
    lists = lab.shaped(
        store, {"vector": query.arms["vector"]}, replace(lab.ENGINE, vector_floor=0.59)
    )
    assert [d for d, _ in lists["vector"]] == ["zlib", "v2"]


def test_the_shape_counts_a_long_text_above_a_short_answer():
    store, _ = zlib_and_gpl()
    figures = lab.shape([store], lab.ENGINE)
    assert figures["short_long_above"] == 1.0
    assert figures["short_first"] == 0.0


def test_a_lever_is_kept_only_when_it_fixes_the_shape_without_losing_on_a_shared_set():
    base, real_base = {"a": 0.5}, {"r": {"short_long_above": 0.3, "long_ndcg@10": 0.9}}
    fixed = {"r": {"short_long_above": 0.1, "long_ndcg@10": 0.9}}
    assert lab.verdict({"a": 0.499}, base, fixed, real_base) == "kept"
    assert lab.verdict({"a": 0.49}, base, fixed, real_base).startswith("dropped: loses")
    buried = {"r": {"short_long_above": 0.1, "long_ndcg@10": 0.7}}
    assert lab.verdict({"a": 0.5}, base, buried, real_base) == "dropped: shape not fixed"
