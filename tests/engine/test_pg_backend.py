"""A team store on PostgreSQL: what only a database store has (its advisory lock, its schema,
its one-line connection errors, nothing written under the store), and the write and list paths.

The contract both backends keep (search, scopes, hostile queries, degradation, the state plane,
the discrimination gate, concurrency) is in tests/engine/contract/, run once per backend.
"""

from __future__ import annotations

import psycopg
import pytest

from engine import state as state_plane
from engine.agents.write import forget, remember
from engine.errors import IndexMissing
from engine.indexing.indexer import index_store
from engine.pg.driver import PgError
from engine.ranking.scope import ScopeSpec
from engine.search import Searcher, search
from engine.status import store_status

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


def test_a_read_long_ago_still_ranks_without_an_arithmetic_error(team_store, hash_embedder, pg_url):
    state_plane.record_access(team_store, "episodes/deploy.md")
    with psycopg.connect(pg_url) as conn:
        conn.execute("UPDATE memsift.state_access SET last_accessed_at = '1901-01-01 00:00:00'")
    result = search(team_store, "release deploy", embedder=hash_embedder)

    assert result.hits[0].path == "episodes/deploy.md"
    assert "salience" in result.arms_fired


def test_an_index_run_holds_the_stores_advisory_lock(make_store, pg_url, monkeypatch):
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    store = make_store(MEMORIES)
    seen: list[bool] = []

    def probe(phase: str, done: int, total: int) -> None:
        with psycopg.connect(pg_url, autocommit=True) as other:
            got = other.execute(
                "SELECT pg_try_advisory_lock(hashtextextended('memsift index memsift', 0))"
            ).fetchone()[0]
            seen.append(got)

    index_store(store, embed=False, progress=probe)

    assert seen and not any(seen)


def test_a_second_run_finds_nothing_to_do_and_a_deleted_file_leaves_the_index(
    team_store, hash_embedder
):
    again = index_store(team_store, embedder=hash_embedder)
    assert (again.indexed, again.unchanged, again.embedded) == ([], len(MEMORIES), 0)

    (team_store.root / "people" / "priya.md").unlink()
    after = index_store(team_store, embedder=hash_embedder)
    assert after.removed == ["people/priya.md"]
    assert "people/priya.md" not in [
        h.path for h in search(team_store, "Priya flaky dashboard", embedder=hash_embedder).hits
    ]


def test_a_store_naming_no_database_is_not_searched_in_one(make_store, monkeypatch, pg_url):
    monkeypatch.delenv("MEMSIFT_DATABASE_URL", raising=False)
    store = make_store(MEMORIES)
    index_store(store, embed=False)

    assert (store.root / ".memsift" / "index.db").exists()


def test_a_database_that_cannot_be_reached_is_one_line_naming_it(make_store, monkeypatch):
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", "postgresql://nobody:secret@127.0.0.1:1/teamdb")
    store = make_store(MEMORIES)

    with pytest.raises(PgError) as caught:
        index_store(store, embed=False)
    message = str(caught.value)
    assert message.startswith("PostgreSQL 127.0.0.1:1/teamdb, schema memsift: ")
    assert "secret" not in message and "\n" not in message


def test_status_reports_the_database_and_what_changed_since_the_run(team_store):
    info = store_status(team_store)

    assert info["files"] == len(MEMORIES) and info["chunks"] >= len(MEMORIES)
    assert info["index_db"].startswith("PostgreSQL ") and info["index_db"].endswith("memsift")
    assert not info["changed_since_index"]
    (team_store.root / "new.md").write_text("# New\n\nnew memory\n", encoding="utf-8")
    assert store_status(team_store)["changes"]["added"] == 1


def test_remember_and_forget_index_into_the_database_not_beside_it(team_store, hash_embedder):
    key = remember(
        team_store,
        "Load-test week pauses deploys",
        "Staging deploys pause during the quarterly load-test week.",
        "procedural",
        embedder=hash_embedder,
    )
    found = search(team_store, "quarterly load-test week", embedder=hash_embedder)
    assert found.hits[0].path == key

    forget(team_store, key)
    gone = search(team_store, "quarterly load-test week", embedder=hash_embedder)
    assert key not in [h.path for h in gone.hits]
    assert not (team_store.root / ".memsift" / "index.db").exists()


def test_list_gives_the_same_records_as_on_sqlite_newest_first(
    team_store, make_store, hash_embedder, monkeypatch, tmp_path
):  # type: ignore[no-untyped-def]
    from engine.agents.write import list_memories
    from engine.files.store import open_store

    on_team = list_memories(team_store, ScopeSpec(tags=("infra",)), limit=5)
    everything = list_memories(team_store, ScopeSpec(kinds=("task", "semantic")), limit=5)
    monkeypatch.delenv("MEMSIFT_DATABASE_URL")
    local = tmp_path / "local"
    local.mkdir()
    for key in MEMORIES:
        (local / key).parent.mkdir(parents=True, exist_ok=True)
        (local / key).write_bytes((team_store.root / key).read_bytes())
    local_store = open_store(local)
    index_store(local_store, embedder=hash_embedder)
    assert [r["path"] for r in on_team] == ["infra/staging-db.md"]
    assert on_team[0]["tags"] == ["infra", "staging"] and on_team[0]["archived"] is False
    for record, expected in zip(
        everything, list_memories(local_store, ScopeSpec(kinds=("task", "semantic"))), strict=True
    ):
        assert {k: v for k, v in record.items() if k != "updated_at"} == {
            k: v for k, v in expected.items() if k != "updated_at"
        }


def test_list_on_a_team_store_without_an_index_says_to_run_index(make_store, pg_url, monkeypatch):  # type: ignore[no-untyped-def]
    from engine.agents.write import list_memories

    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    store = make_store({"a.md": "# A\n\nalpha"})
    with pytest.raises(IndexMissing, match="run `memsift index`"):
        list_memories(store)


def test_a_searcher_whose_connection_the_server_dropped_searches_on_a_new_one(
    team_store, hash_embedder, pg_url
):
    with psycopg.connect(pg_url, autocommit=True) as admin:
        (before,) = admin.execute("SELECT clock_timestamp()").fetchone()
        with Searcher(team_store, embedder=hash_embedder) as searcher:
            first = searcher.search("release deploy")
            (dropped,) = admin.execute(  # the searcher's own connection, opened since `before`
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE pid <> pg_backend_pid() AND backend_start >= %s",
                (before,),
            ).fetchone()
            again = searcher.search("release deploy")

    assert dropped == 1
    assert [h.path for h in again.hits] == [h.path for h in first.hits]
