"""The static reading of src/engine/arms.py is the registry the engine runs.

This is the one place the arms_doc tests import the engine's registry: the page is made from
the source text, and these tests prove that text means what the runtime sees.
"""

from __future__ import annotations

import dataclasses
import inspect

import pytest
from arms_doc_testing import ENGINE_REGISTRY

import engine.arms
from arms_doc.checks import quality_findings
from arms_doc.reader import FIELDS, read_registry
from arms_doc.statements import assemble_statements
from engine.arms import ARMS, Arm
from engine.measure.fingerprint import ranking
from engine.ranking.assemble import assemble
from engine.ranking.contract import Available
from engine.ranking.scope import ScopeSpec, build_scope


@pytest.fixture(scope="module")
def static():
    return read_registry(ENGINE_REGISTRY, display="src/engine/arms.py")


def test_names_are_the_runtime_names_in_the_runtime_order(static):
    assert [arm.name for arm in static.arms] == [arm.name for arm in ARMS]


def test_weights_are_the_runtime_weights(static):
    assert [arm.weight for arm in static.arms] == [arm.weight for arm in ARMS]


def test_preconditions_are_the_runtime_preconditions(static):
    def needs(arm):
        return tuple(arm.needs)

    assert [needs(arm) for arm in static.arms] == [needs(arm) for arm in ARMS]


def test_prose_and_sql_are_the_runtime_strings(static):
    assert [(arm.raw_prose, arm.sql) for arm in static.arms] == [
        (arm.prose, arm.sql) for arm in ARMS
    ]


def test_docstring_is_the_runtime_module_docstring(static):
    assert static.docstring == inspect.getdoc(engine.arms)


def test_reader_knows_exactly_the_fields_of_arm():
    assert tuple(field.name for field in dataclasses.fields(Arm)) == FIELDS


def test_the_registry_has_no_quality_findings(static):
    assert quality_findings(static) == []


def test_page_statements_are_the_statements_a_search_runs(static):
    scope = build_scope(ScopeSpec()).sql
    statements = assemble_statements(static)

    assert statements.full.sql == assemble(Available(), scope, arms=ARMS).sql
    floor = Available({n: "absent" for n in ("query_vector", "state_plane", "query_time")})
    assert statements.lexical_floor.sql == assemble(floor, scope, arms=ARMS).sql


def test_the_ranking_read_statically_is_the_one_the_benchmarks_stamp(static):
    # The benchmarks stamp their results with ranking(engine.arms.ARMS); the docs build
    # compares it with the ranking of the entries it read. Equal, or every result is stale.
    assert ranking(static.arms) == ranking(ARMS)


def test_page_statements_in_postgresql_are_the_statements_a_postgresql_search_runs(static):
    scope = build_scope(ScopeSpec(), dialect="postgresql").sql
    statements = assemble_statements(static)
    floor = Available({n: "absent" for n in ("query_vector", "state_plane", "query_time")})

    def postgresql(statement):
        (version,) = [v for v in statement.dialects if v.dialect == "postgresql"]
        return version

    full, lexical = postgresql(statements.full), postgresql(statements.lexical_floor)
    assert (full.refused, lexical.refused) == ("", "")
    assert full.sql == assemble(Available(), scope, arms=ARMS, dialect_name="postgresql").sql
    assert lexical.sql == assemble(floor, scope, arms=ARMS, dialect_name="postgresql").sql


def test_postgresql_sql_is_the_runtime_string(static):
    assert [arm.pg_sql for arm in static.arms] == [arm.pg_sql for arm in ARMS]
