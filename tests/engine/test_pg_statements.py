"""Every statement a search can assemble runs on PostgreSQL, against the engine's own schema.

The SQLite statements are compiled by the docs build (tests/arms_doc/test_prepare.py); these
are the PostgreSQL ones, run for real with values of the right kinds bound, on an empty store
and on a small one, so a fragment that does not parse, names a column that does not exist or
binds a value PostgreSQL cannot type fails here, naming the combination.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from engine.pg.driver import connect
from engine.pg.schema import ensure_schema
from engine.pg.target import DatabaseTarget
from engine.ranking.assemble import assemble
from engine.ranking.contract import INPUTS, Available, bind
from engine.ranking.scope import ScopeSpec, build_scope

SCOPES = {
    "default": ScopeSpec(),
    "every option": ScopeSpec(
        kinds=("semantic",),
        tags=("infra", "o'brien"),
        path_prefix="people/%_",
        since="2026-01-01",
        until="2026-12-31",
        include_archived=True,
    ),
}
COMBINATIONS = [
    frozenset(missing)
    for size in range(len(INPUTS) + 1)
    for missing in itertools.combinations([i.name for i in INPUTS], size)
]


@pytest.fixture
def schema_conn(pg_url):
    conn = connect(DatabaseTarget(pg_url, "memsift"), vectors=False)
    ensure_schema(conn)
    yield conn
    conn.close()


def values(scope_values):
    return bind(
        {
            "match": "'staging' & 'database':A",  # to_tsquery text, as engine.pg.tsquery writes it
            "candidate_limit": 10,
            "limit": 5,
            "query_vector": np.ones(4, dtype="<f4").tobytes(),
            "time_from": "2026-10-01 00:00:00",
            "time_to": "2026-10-31 23:59:59",
        },
        scope_values,
    )


@pytest.mark.parametrize("scope_name", list(SCOPES))
def test_every_combination_of_arms_runs(schema_conn, scope_name):
    scope = build_scope(SCOPES[scope_name], dialect="postgresql")
    failures = []
    for missing in COMBINATIONS:
        available = Available({name: "absent" for name in missing})
        assembly = assemble(available, scope.sql, dialect_name="postgresql")
        if not assembly.sql:
            continue
        try:
            with schema_conn:
                schema_conn.execute(assembly.sql, values(scope.values)).fetchall()
        except Exception as exc:  # collect every failing combination, not just the first
            failures.append((sorted(missing), str(exc).splitlines()[0]))
    assert failures == []
