"""The registry's second dialect: each arm's PostgreSQL SQL under the same rules, folded the
same way, with the contract's numbered placeholders translated in one place."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine.arms import ARMS
from engine.ranking.arm_rules import registry_problems
from engine.ranking.assemble import AssemblyError, assemble
from engine.ranking.contract import INPUTS, Available, named, placeholders, pyformat
from engine.ranking.scope import ScopeSpec, build_scope

INPUT = {i.name: i for i in INPUTS}
TYPICAL = Available({"query_time": INPUT["query_time"].missing})
EVERY_SCOPE = ScopeSpec(
    kinds=("semantic", "episodic"),
    tags=("infra",),
    path_prefix="people/",
    since="2026-01-01",
    until="2026-12-31",
)


def test_every_arm_has_postgresql_sql_and_the_registry_has_no_problem_in_either_dialect():
    assert all(arm.pg_sql.strip() for arm in ARMS)
    assert [p for p in registry_problems(ARMS)] == []


def test_the_same_search_binds_the_same_placeholders_on_both_dialects():
    for available in (Available(), TYPICAL):
        sqlite = assemble(available, build_scope(EVERY_SCOPE).sql)
        postgresql = assemble(
            available,
            build_scope(EVERY_SCOPE, dialect="postgresql").sql,
            dialect_name="postgresql",
        )
        assert placeholders(sqlite.sql) == placeholders(postgresql.sql)
        assert [a.name for a in sqlite.fired] == [a.name for a in postgresql.fired]


def test_both_scopes_bind_the_same_values_in_the_same_order():
    assert build_scope(EVERY_SCOPE).values == build_scope(EVERY_SCOPE, dialect="postgresql").values


def test_the_postgresql_statement_is_made_of_the_arms_postgresql_fragments():
    sql = assemble(TYPICAL, "1", dialect_name="postgresql").sql

    assert "to_tsquery" in sql and "<=>" in sql
    assert "bm25" not in sql and "vec_chunks" not in sql


def test_postgresql_weights_are_floating_point_literals():
    sql = assemble(TYPICAL, "1", dialect_name="postgresql").sql

    assert "CAST(1.0 AS double precision) / (" in sql


def test_an_arm_without_postgresql_sql_cannot_be_assembled_for_postgresql():
    arms = [replace(ARMS[0], pg_sql=""), *ARMS[1:]]

    assemble(TYPICAL, "1", arms=arms)  # SQLite is unaffected
    with pytest.raises(AssemblyError, match="arm 'fts' has no PostgreSQL SQL"):
        assemble(TYPICAL, "1", arms=arms, dialect_name="postgresql")


def test_an_unknown_dialect_is_refused_by_name():
    with pytest.raises(AssemblyError, match="no SQL dialect 'oracle'; known: sqlite, postgresql"):
        assemble(TYPICAL, "1", dialect_name="oracle")


def test_postgresql_sql_is_held_to_the_placeholder_rules():
    arms = [
        replace(ARMS[2], pg_sql=ARMS[2].pg_sql.replace("WHERE {scope}", "WHERE ?1 AND {scope}"))
    ]

    (problem,) = [p for p in registry_problems(arms) if p.error]
    assert problem.field == "pg_sql"
    assert problem.message.startswith("arm 'recency' (PostgreSQL) uses ?1")


def test_postgresql_sql_reading_the_state_plane_must_need_it():
    arms = [
        replace(
            ARMS[2],
            pg_sql=ARMS[2].pg_sql.replace(
                "FROM files AS f", "FROM files AS f JOIN state_access AS a ON a.path = f.path"
            ),
        )
    ]

    (problem,) = [p for p in registry_problems(arms) if p.error]
    assert problem.field == "pg_sql" and "reads the state plane" in problem.message


def test_numbered_placeholders_become_named_ones_and_percent_signs_are_escaped():
    sql = "SELECT ?1, ?5 || '%', ?1 LIMIT ?12"

    assert pyformat(sql) == "SELECT %(p1)s, %(p5)s || '%%', %(p1)s LIMIT %(p12)s"


def test_only_the_values_a_statement_uses_are_passed_by_name():
    params = tuple(range(1, 13))

    assert named("SELECT ?1, ?5, ?1 LIMIT ?12", params) == {"p1": 1, "p5": 5, "p12": 12}
