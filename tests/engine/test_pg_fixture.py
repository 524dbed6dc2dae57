"""The PostgreSQL the team-store tests run against: real, with pgvector, one database per test."""

from __future__ import annotations

import psycopg


def test_the_server_is_postgresql_18_with_pgvector(pg_url):
    with psycopg.connect(pg_url) as conn:
        version = conn.execute("SHOW server_version_num").fetchone()[0]
        vector = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
    assert int(version) >= 180000
    assert vector is not None


def test_each_database_starts_empty(pg_server):
    with pg_server.database() as first, pg_server.database() as second:
        assert first != second
        with psycopg.connect(first) as conn:
            conn.execute("CREATE TABLE only_here(x int)")
        with psycopg.connect(second) as conn:
            found = conn.execute("SELECT to_regclass('only_here')").fetchone()[0]
    assert found is None
