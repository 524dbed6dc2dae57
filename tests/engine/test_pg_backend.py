"""A team store on PostgreSQL: indexed, searched, read and reinforced like a store on SQLite."""

from __future__ import annotations

import pytest

from engine import state as state_plane
from engine.indexer import index_store
from engine.search import search

MEMORIES = {
    "infra/staging-db.md": """
        ---
        title: Staging database credentials rotate monthly
        kind: semantic
        tags: [infra, staging]
        event_at: 2026-10-03
        ---
        The staging database password rotates on the first Monday of each month.
        The port is 5433, not the default.
        """,
    "people/priya.md": """
        ---
        title: Priya Raman
        kind: person
        ---
        Priya owns the flaky test dashboard and prefers async reviews.
        """,
    "episodes/deploy.md": """
        ---
        title: Release rolled back after errors
        kind: episodic
        tags: [deploy]
        event_at: 2026-09-12
        ---
        The deploy broke checkout; we rolled the release back within ten minutes.
        """,
    "tasks/rotate.md": """
        ---
        title: Rotate the staging keys
        kind: task
        ---
        Rotate the staging keys before the audit.
        """,
}


@pytest.fixture
def team_store(make_store, pg_url, monkeypatch, hash_embedder):
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    store = make_store(MEMORIES)
    index_store(store, embedder=hash_embedder)
    return store


def test_an_index_run_writes_nothing_under_the_store(team_store):
    assert not (team_store.root / ".memsift" / "index.db").exists()
    assert not (team_store.root / ".memsift" / "state.db").exists()


def test_a_search_finds_the_memory_by_its_words(team_store, hash_embedder):
    result = search(team_store, "staging database port", embedder=hash_embedder)

    assert result.hits[0].path == "infra/staging-db.md"
    assert result.fts_form == "all"
    assert {"fts", "vector", "recency"} <= set(result.arms_fired)
    assert "5433" in result.hits[0].snippet


def test_tasks_stay_out_of_scope_unless_asked_for(team_store, hash_embedder):
    result = search(team_store, "rotate staging keys", embedder=hash_embedder)

    assert "tasks/rotate.md" not in [h.path for h in result.hits]
