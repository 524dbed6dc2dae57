"""The state plane of a team store under concurrency that PostgreSQL answers with a retry: a
database whose default isolation is SERIALIZABLE (a DBA's choice memsift does not control)
rolls back one of two reinforcements of the same row ("could not serialize access"), which
must be tried again, not lost."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from engine import state as state_plane
from engine.indexing.indexer import index_store

THREADS = 6
ROUNDS = 5


@pytest.fixture
def serializable_store(make_store, pg_url, monkeypatch):
    with psycopg.connect(pg_url, autocommit=True) as conn:
        name = conn.execute("SELECT current_database()").fetchone()[0]
        conn.execute(f'ALTER DATABASE "{name}" SET default_transaction_isolation = serializable')
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    store = make_store({"db.md": "---\ntitle: Staging database\n---\nPort 5433.\n"})
    index_store(store, embed=False)
    return store


def test_reinforcements_at_once_in_a_serializable_database_are_all_folded_in(serializable_store):
    def work(_: int) -> None:
        for _ in range(ROUNDS):
            state_plane.reinforce(serializable_store, "db.md", 1)

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        list(pool.map(work, range(THREADS)))

    access = state_plane.lookup(serializable_store, "db.md")
    assert access.outcome_score == pytest.approx(1 - 0.7 ** (THREADS * ROUNDS))


def test_reads_at_once_in_a_serializable_database_are_all_counted(serializable_store):
    def work(_: int) -> None:
        for _ in range(ROUNDS):
            state_plane.record_access(serializable_store, "db.md")

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        list(pool.map(work, range(THREADS)))

    assert state_plane.lookup(serializable_store, "db.md").access_count == THREADS * ROUNDS
