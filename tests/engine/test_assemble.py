"""The assembler: the arm registry and what this search has in, one fused statement out."""

from __future__ import annotations

import itertools
import json
import math
import re
import struct
import textwrap
from dataclasses import replace
from pathlib import Path

import apsw
import pytest

from engine.arms import ARMS, Arm
from engine.ranking.assemble import RRF_K, Assembly, AssemblyError, assemble
from engine.ranking.contract import INPUTS, Available, bind, bound_prefix
from engine.ranking.query import sanitize
from engine.ranking.scope import ScopeSpec, build_scope
from engine.sqlite.db import ensure_vector_table, open_index, open_state

INPUT = {i.name: i for i in INPUTS}


def lacking(*inputs: str) -> Available:
    return Available({name: INPUT[name].missing for name in inputs})


ALL = Available()
#: A typical search names no time: the time arm drops.
TYPICAL = lacking("query_time")
NO_VECTOR = lacking("query_vector", "query_time")
NO_TERMS = lacking("query_terms", "query_time")
NO_STATE = lacking("state_plane", "query_time")
PRIORS_ONLY = lacking("query_vector", "query_terms", "query_time")
TIME_DROPPED = {"time": INPUT["query_time"].missing}
ARM = {arm.name: arm for arm in ARMS}


def placeholders(sql: str) -> set[int]:
    return {int(n) for n in re.findall(r"\?(\d+)", sql)}


def names(arms: tuple[Arm, ...]) -> list[str]:
    return [arm.name for arm in arms]


def contributions(sql: str) -> dict[str, str]:
    """Each arm's weight literal as the fused CTE's contribution rows write it."""
    row = rf"SELECT (?:id|path), (\S+) / \({RRF_K} \+ rank\) AS contribution, .* FROM arm_(\w+)"
    return {arm: weight for weight, arm in re.findall(row, sql)}


# --- which arms fire -----------------------------------------------------------------------


def test_every_arm_fires_when_every_input_is_available():
    assembly = assemble(ALL)
    assert (names(assembly.fired), assembly.dropped) == (
        ["fts", "vector", "recency", "salience", "time"],
        {},
    )


@pytest.mark.parametrize(
    ("available", "arm", "reason"),
    [
        (NO_TERMS, "fts", "no query terms"),
        (NO_VECTOR, "vector", "no query vector"),
        (NO_STATE, "salience", "no state plane"),
    ],
)
def test_arm_is_dropped_with_the_reason_its_input_is_missing(available, arm, reason):
    assert assemble(available).dropped == {arm: reason, **TIME_DROPPED}


def test_the_reason_the_search_gives_is_the_reason_reported():
    available = Available({"query_vector": "lexical search requested (--no-vector)"})
    assert assemble(available).dropped == {"vector": "lexical search requested (--no-vector)"}


def test_dropped_arm_has_no_cte_and_no_rank_column():
    sql = assemble(NO_VECTOR).sql
    assert ("arm_vector" in sql, "vector_rank" in sql) == (False, False)


def test_arms_needing_nothing_survive_when_every_input_is_missing():
    assembly = assemble(lacking(*INPUT))
    assert (names(assembly.fired), assembly.dropped) == (
        ["recency"],
        {
            "fts": "no query terms",
            "vector": "no query vector",
            "salience": "no state plane",
            **TIME_DROPPED,
        },
    )


def test_no_surviving_arm_gives_an_empty_statement():
    assert assemble(NO_TERMS, arms=[ARM["fts"]]) == Assembly("", (), {"fts": "no query terms"})


def test_empty_registry_gives_an_empty_statement():
    assert assemble(ALL, arms=[]) == Assembly("", (), {})


# --- placeholders --------------------------------------------------------------------------


def test_full_statement_uses_every_fixed_placeholder():
    assert placeholders(assemble(ALL).sql) == {1, 2, 3, 4, 5, 6}


def test_typical_statement_uses_placeholders_1_to_4():
    assert placeholders(assemble(TYPICAL).sql) == {1, 2, 3, 4}


def test_dropping_the_vector_arm_removes_4_and_keeps_1_2_3():
    assert placeholders(assemble(NO_VECTOR).sql) == {1, 2, 3}


def test_dropping_the_fts_arm_removes_1_and_keeps_2_3_4():
    assert placeholders(assemble(NO_TERMS).sql) == {2, 3, 4}


def test_priors_alone_use_the_candidate_limit_and_the_final_limit():
    # Recency listing alone gives only its first ?2 rows (read in order from the moment index).
    assert placeholders(assemble(PRIORS_ONLY).sql) == {2, 3}


SCOPE = "(f.kind IN (?7, ?8) AND f.archived = 0)"
EVERY_AVAILABILITY = [
    lacking(*(name for name, gone in zip(INPUT, flags, strict=True) if gone))
    for flags in itertools.product([True, False], repeat=len(INPUT))
]


@pytest.mark.parametrize("available", EVERY_AVAILABILITY, ids=repr)
def test_surviving_arms_keep_their_sql_exactly_as_in_the_full_statement(available):
    sql = assemble(available, SCOPE).sql
    for arm in assemble(available, SCOPE).fired:
        assert textwrap.indent(arm.sql.strip().replace("{scope}", SCOPE), "    ") in sql


@pytest.mark.parametrize("available", EVERY_AVAILABILITY, ids=repr)
def test_scope_placeholders_survive_every_drop(available):
    assert {7, 8} <= placeholders(assemble(available, SCOPE).sql)


@pytest.mark.parametrize("available", EVERY_AVAILABILITY, ids=repr)
def test_no_placeholder_appears_that_the_full_statement_lacks(available):
    assert placeholders(assemble(available, SCOPE).sql) <= placeholders(assemble(ALL, SCOPE).sql)


def test_scope_is_pasted_into_every_arm():
    assert all("{scope}" in arm.sql for arm in ARMS)
    slots = sum(arm.sql.count("{scope}") for arm in ARMS)
    assert assemble(ALL, SCOPE).sql.count(SCOPE) == slots


def test_no_scope_slot_is_left_unfilled():
    assert "{scope}" not in assemble(ALL, SCOPE).sql


# --- bound_prefix --------------------------------------------------------------------------

PARAMS = ("q", 40, 10, b"vec", "from", "to", "kind-a", "kind-b")


def test_bound_prefix_ends_at_the_highest_placeholder():
    assert bound_prefix("SELECT ?1, ?3", PARAMS) == ("q", 40, 10)


def test_bound_prefix_keeps_values_for_skipped_numbers():
    assert bound_prefix("SELECT ?3 WHERE x = ?5", PARAMS) == ("q", 40, 10, b"vec", "from")


def test_bound_prefix_reads_multi_digit_placeholders():
    assert len(bound_prefix("SELECT ?1, ?12", tuple(range(20)))) == 12


def test_bind_orders_values_by_placeholder_number_and_nulls_the_missing():
    assert bind({"limit": 10, "match": "q"}, ("kind-a",)) == (
        "q", None, 10, None, None, None, "kind-a",
    )  # fmt: skip


def test_bind_refuses_a_parameter_the_contract_does_not_have():
    with pytest.raises(ValueError, match="no such parameter: vector"):
        bind({"vector": b""}, ())


def test_bound_prefix_of_a_statement_without_placeholders_is_empty():
    assert bound_prefix("SELECT 1", PARAMS) == ()


def test_bound_prefix_without_the_vector_arm_stops_before_the_vector():
    assert bound_prefix(assemble(NO_VECTOR).sql, PARAMS) == ("q", 40, 10)


def test_bound_prefix_with_scope_values_keeps_the_unused_vector_slot():
    assert bound_prefix(assemble(NO_VECTOR, SCOPE).sql, PARAMS) == PARAMS


# --- weights -------------------------------------------------------------------------------


@pytest.mark.parametrize("arm", ARMS, ids=lambda arm: arm.name)
def test_registry_weights_are_inlined_as_numeric_literals(arm):
    assert contributions(assemble(ALL).sql).get(arm.name) == repr(arm.weight)


def test_weight_override_is_inlined_as_a_literal():
    assert contributions(assemble(ALL, weights={"recency": 0.25}).sql).get("recency") == "0.25"


def test_weight_override_adds_no_placeholder():
    assert placeholders(assemble(ALL, weights={"recency": 0.25}).sql) == {1, 2, 3, 4, 5, 6}


def test_integer_weight_is_written_as_a_float_literal():
    assert contributions(assemble(ALL, weights={"fts": 2}).sql).get("fts") == "2.0"


def test_tiny_weight_is_written_in_exponent_form():
    assert contributions(assemble(ALL, weights={"fts": 1e-20}).sql).get("fts") == "1e-20"


def test_zero_weight_drops_the_arm_with_a_reason():
    assembly = assemble(ALL, weights={"salience": 0})
    assert (assembly.dropped, "arm_salience" in assembly.sql) == (
        {"salience": "weight 0 in configuration"},
        False,
    )


def test_weight_for_an_unknown_arm_raises_naming_it():
    with pytest.raises(AssemblyError, match=r"unknown arm.*popularity"):
        assemble(ALL, weights={"popularity": 1.0})


@pytest.mark.parametrize("weight", [-0.1, -math.inf, math.inf, math.nan, True, "1", None], ids=repr)
def test_weight_that_is_not_a_finite_non_negative_number_raises(weight):
    with pytest.raises(AssemblyError, match="'recency'"):
        assemble(ALL, weights={"recency": weight})


def test_registry_weight_that_is_negative_raises():
    broken = Arm(**{**vars(ARM["recency"]), "weight": -1.0})
    with pytest.raises(AssemblyError, match="'recency'"):
        assemble(ALL, arms=[ARM["fts"], broken])


# --- shape of the statement ----------------------------------------------------------------


@pytest.mark.parametrize("arm", [arm.name for arm in ARMS])
def test_every_fired_arm_reports_its_rank_column(arm):
    assert f"fused.{arm}_rank AS {arm}_rank" in assemble(ALL).sql


def test_statement_ends_with_the_final_limit():
    assert assemble(ALL).sql.endswith("LIMIT ?3")


def test_statement_orders_by_score_then_the_lead_arm_then_path():
    assert (
        "ORDER BY score DESC, fts_rank IS NULL, fts_rank, path" in assemble(ALL).sql
    )


def test_without_authority_signals_the_score_is_the_fused_sum():
    sql = assemble(ALL, authority=()).sql
    assert "json_each(f.tags)" not in sql
    assert "fused_score AS score" in sql and "1.0 AS authority" in sql


# --- executed on a real index --------------------------------------------------------------

DIM = 3


def vector(*values: float) -> bytes:
    return struct.pack(f"{DIM}f", *values)


def add_file(
    conn: apsw.Connection,
    path: str,
    title: str,
    body: str,
    *,
    kind: str | None = "semantic",
    event_at: str | None = None,
    archived: bool = False,
    embedding: bytes | None = None,
) -> None:
    conn.execute(
        "INSERT INTO files(path, title, kind, event_at, updated_at, tags, archived, "
        "content_hash, size, mtime_ns) "
        "VALUES (?, ?, ?, ?, '2026-01-01 00:00:00', ?, ?, ?, 0, 0)",
        (path, title, kind, event_at, json.dumps([]), int(archived), path),
    )
    # Every file has at least one chunk, as the indexer writes them (the title when the body
    # is empty): full text is indexed per chunk.
    conn.execute(
        "INSERT INTO chunks(file_id, seq, text, hash) "
        "SELECT id, 0, ?, path FROM files WHERE path = ?",
        (body, path),
    )
    if embedding is not None:
        conn.execute(
            "INSERT INTO embeddings(hash, model, dim, vector) VALUES (?, 'test', ?, ?)",
            (path, DIM, embedding),
        )


@pytest.fixture
def index(tmp_path: Path) -> apsw.Connection:
    conn = open_index(tmp_path / "index.db", create=True)
    ensure_vector_table(conn, DIM)
    add_file(
        conn,
        "ops/rotate.md",
        "Staging credentials rotate monthly",
        "The staging database password rotates on the first of each month.",
        event_at="2026-10-03 00:00:00",
        embedding=vector(1, 0, 0),
    )
    add_file(
        conn,
        "ops/backup-rotation.md",
        "Backups",
        "Backup tapes rotate weekly between the two sites.",
        event_at="2026-11-01 00:00:00",
        embedding=vector(0.8, 0.6, 0),
    )
    add_file(
        conn,
        "people/ana.md",
        "Ana",
        "Ana owns the staging database.",
        kind="person",
        embedding=vector(0, 1, 0),
    )
    add_file(conn, "tasks/rotate.md", "Rotate keys", "Rotate the keys.", kind="task")
    add_file(conn, "old/rotate.md", "Old rotation", "We used to rotate daily.", archived=True)
    state_path = tmp_path / "state.db"
    open_state(state_path).close()
    conn.execute("ATTACH DATABASE ? AS state", (str(state_path),))
    conn.execute(
        "INSERT INTO state.access(path, access_count, last_accessed_at, outcome_score) "
        "VALUES ('ops/backup-rotation.md', 9, '2026-11-02 00:00:00', 1.0)"
    )
    return conn


def run(
    conn: apsw.Connection,
    assembly: Assembly,
    query: str = "rotate",
    spec: ScopeSpec | None = None,
) -> list[dict[str, object]]:
    """Execute an assembly as a search does; rows as dicts keyed by column name."""
    scope = build_scope(spec or ScopeSpec())
    values = {"match": sanitize(query).all_form(), "candidate_limit": 40, "limit": 10}
    values |= {"query_vector": vector(1, 0, 0)}
    values |= {"time_from": "2026-10-01 00:00:00", "time_to": "2026-10-31 23:59:59"}
    params = bind(values, scope.values)
    cursor = conn.execute(assembly.sql, bound_prefix(assembly.sql, params))
    columns = [name for name, _ in cursor.get_description()]
    return [dict(zip(columns, row, strict=True)) for row in cursor]


def search(conn, available: Available, query: str = "rotate", spec=None, **kwargs):
    scope = build_scope(spec or ScopeSpec())
    return run(conn, assemble(available, scope.sql, **kwargs), query, spec)


def test_full_statement_runs_and_returns_every_arms_rank_column(index):
    rows = search(index, ALL)
    assert list(rows[0]) == [
        "path", "title", "kind", "event_at", "file_id", "score", "authority", "tags",
        "fts_rank", "vector_rank", "recency_rank", "salience_rank", "time_rank",
    ]  # fmt: skip


def test_time_arm_ranks_the_memory_inside_the_named_time_first(index):
    ranks = {row["path"]: row["time_rank"] for row in search(index, ALL)}
    assert ranks["ops/rotate.md"] == 1 and ranks["ops/backup-rotation.md"] == 2


def test_full_statement_finds_in_scope_memories_only(index):
    paths = {row["path"] for row in search(index, ALL)}
    assert paths == {"ops/rotate.md", "ops/backup-rotation.md", "people/ana.md"}


def test_fts_arm_ranks_memories_holding_the_query_words(index):
    ranks = {row["path"]: row["fts_rank"] for row in search(index, ALL)}
    assert (sorted(r for r in ranks.values() if r), ranks["people/ana.md"]) == ([1, 2], None)


def test_vector_arm_ranks_the_closest_memory_first(index):
    ranks = {row["path"]: row["vector_rank"] for row in search(index, ALL)}
    assert ranks == {"ops/rotate.md": 1, "ops/backup-rotation.md": 2, "people/ana.md": 3}


def test_salience_arm_gives_person_records_no_rank(index):
    ranks = {row["path"]: row["salience_rank"] for row in search(index, ALL)}
    assert (ranks["people/ana.md"], ranks["ops/backup-rotation.md"]) == (None, 1)


@pytest.mark.parametrize("available", [ALL, NO_VECTOR, NO_TERMS, NO_STATE, PRIORS_ONLY], ids=repr)
def test_score_is_the_weighted_reciprocal_rank_sum(index, available):
    rows = search(index, available)
    weights = {arm.name: arm.weight for arm in ARMS}
    expected = [
        sum(weights[a] / (RRF_K + row[f"{a}_rank"]) for a in weights if row.get(f"{a}_rank"))
        for row in rows
    ]
    assert [row["score"] for row in rows] == pytest.approx(expected)


@pytest.mark.parametrize("available", [ALL, NO_VECTOR, NO_TERMS, NO_STATE, PRIORS_ONLY], ids=repr)
def test_hits_come_in_descending_score_order(index, available):
    scores = [row["score"] for row in search(index, available)]
    assert scores == sorted(scores, reverse=True)


def test_statement_without_vector_runs_with_scope_values_bound(index):
    rows = search(index, NO_VECTOR, spec=ScopeSpec(kinds=("task",)))
    assert [row["path"] for row in rows] == ["tasks/rotate.md"]


def test_weight_override_changes_the_score_it_inlines(index):
    rows = search(index, PRIORS_ONLY, weights={"recency": 0.25})
    top = rows[0]
    assert top["score"] == pytest.approx(
        0.25 / (RRF_K + top["recency_rank"])
        + ARM["salience"].weight / (RRF_K + top["salience_rank"])
    )


# --- a fifth arm ---------------------------------------------------------------------------

TITLE_LEN = Arm(
    name="title_len",
    label="title length ranking",
    weight=0.3,
    needs=(),
    prose="Shorter titles first: a prior, so it ranks only the query arms' candidates.",
    sql="""
SELECT id, row_number() OVER (ORDER BY title_length, path) AS rank
FROM (
    SELECT f.id AS id, f.path AS path, length(f.title) AS title_length
    FROM files AS f
    WHERE {scope} AND f.id IN (SELECT id FROM candidates)
)
""",
)
FIVE_ARMS = [*ARMS, TITLE_LEN]


def test_fifth_arm_fires_after_the_registry_arms():
    assert names(assemble(ALL, arms=FIVE_ARMS).fired) == [*names(ARMS), "title_len"]


def test_fifth_arm_gets_its_own_cte_and_contribution():
    sql = assemble(ALL, arms=FIVE_ARMS).sql
    assert ("arm_title_len AS (" in sql, contributions(sql).get("title_len") == "0.3") == (
        True,
        True,
    )


def test_fifth_arm_leaves_the_registry_arms_sql_unchanged():
    four = assemble(ALL, SCOPE).sql
    five = assemble(ALL, SCOPE, arms=FIVE_ARMS).sql
    assert all(
        textwrap.indent(arm.sql.strip().replace("{scope}", SCOPE), "    ") in five for arm in ARMS
    )
    assert placeholders(five) == placeholders(four)


def test_fifth_arm_rank_column_is_in_the_executed_result(index):
    rows = search(index, ALL, arms=FIVE_ARMS)
    assert {row["path"]: row["title_len_rank"] for row in rows} == {
        "people/ana.md": 1,
        "ops/backup-rotation.md": 2,
        "ops/rotate.md": 3,
    }


def test_fifth_arm_contributes_its_weight_to_the_score(index):
    four = {row["path"]: row["score"] for row in search(index, ALL)}
    five = search(index, ALL, arms=FIVE_ARMS)
    added = {row["path"]: row["score"] - four[row["path"]] for row in five}
    assert added == pytest.approx({r["path"]: 0.3 / (RRF_K + r["title_len_rank"]) for r in five})


def test_fifth_arm_is_dropped_like_any_other_when_its_input_is_missing():
    needs_state = Arm(**{**vars(TITLE_LEN), "needs": ("state_plane",)})
    assembly = assemble(NO_STATE, arms=[*ARMS, needs_state])
    assert assembly.dropped == {
        "salience": "no state plane",
        "title_len": "no state plane",
        **TIME_DROPPED,
    }


def test_fifth_arm_weight_can_be_overridden():
    sql = assemble(ALL, arms=FIVE_ARMS, weights={"title_len": 0.05}).sql
    assert contributions(sql).get("title_len") == "0.05"


def test_arm_name_that_is_not_an_identifier_is_refused():
    bad = replace(ARMS[0], name="title-len")
    with pytest.raises(AssemblyError, match="identifier"):
        assemble(Available(), arms=[bad])


@pytest.mark.parametrize("label", ["", "full-text\nranking"])
def test_an_arm_whose_label_cannot_be_printed_on_one_line_is_refused(label):
    with pytest.raises(AssemblyError, match="label"):
        assemble(Available(), arms=[replace(ARMS[0], label=label)])


def test_duplicate_arm_names_are_refused():
    with pytest.raises(AssemblyError, match="unique"):
        assemble(Available(), arms=[ARMS[0], ARMS[0]])


def test_arm_name_with_a_leading_underscore_is_refused_by_the_shared_rule():
    with pytest.raises(AssemblyError, match="'_recency' cannot be part of a SQL identifier"):
        assemble(Available(), arms=[replace(ARMS[0], name="_recency")])


@pytest.mark.parametrize("digits", [401, 5000])
def test_weight_too_large_for_a_float_is_an_assembly_error_not_an_overflow(digits):
    with pytest.raises(AssemblyError, match=r"'recency': weight .* is too large for a number"):
        assemble(ALL, weights={"recency": 10**digits})


def test_an_authority_signal_breaking_a_rule_is_refused():
    from engine.arms import Authority

    lowered = Authority("pinned", "pinned", ("pinned",), "raise", 0.5, "Lowers, though a raise.")
    with pytest.raises(AssemblyError, match=r"raises by 0\.5"):
        assemble(ALL, authority=(lowered,))
