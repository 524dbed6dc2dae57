"""The command line on a team store: `MEMSIFT_DATABASE_URL=… memsift index && memsift search …`.

Run as a user runs it (the real embedding model, the real CLI), against the test run's
PostgreSQL; nothing is written under the store's .memsift/.
"""

from __future__ import annotations

import json

from click.testing import CliRunner
from test_pg_backend import MEMORIES

from engine.cli import cli


def memsift(store, url, *args):  # type: ignore[no-untyped-def]
    runner = CliRunner()
    return runner.invoke(
        cli,
        ["--store", str(store.root), *args],
        env={"MEMSIFT_DATABASE_URL": url},
        catch_exceptions=False,
    )


def test_index_then_search_through_the_cli(make_store, pg_url):
    store = make_store(MEMORIES)

    indexed = memsift(store, pg_url, "index", "--json")
    assert indexed.exit_code == 0, indexed.output
    assert json.loads(indexed.stdout)["indexed"] == len(MEMORIES)

    found = memsift(store, pg_url, "search", "staging database port", "--json")
    assert found.exit_code == 0, found.output
    result = json.loads(found.stdout)
    assert result["hits"][0]["path"] == "infra/staging-db.md"
    assert {"fts", "vector"} <= set(result["arms_fired"])
    assert not result["degraded"]
    assert not (store.root / ".memsift").exists()


def test_the_meaning_arm_finds_a_memory_sharing_no_word(make_store, pg_url):
    store = make_store(MEMORIES)
    memsift(store, pg_url, "index")

    found = memsift(store, pg_url, "search", "the rollout failed", "--json")
    result = json.loads(found.stdout)
    assert result["hits"][0]["path"] == "episodes/deploy.md"


def test_read_and_reinforce_count_in_the_database(make_store, pg_url):
    store = make_store(MEMORIES)
    memsift(store, pg_url, "index", "--no-embed")

    assert memsift(store, pg_url, "read", "people/priya.md").exit_code == 0
    reinforced = memsift(store, pg_url, "reinforce", "people/priya.md", "--outcome", "1", "--json")
    record = json.loads(reinforced.stdout)
    assert record["access_count"] == 1
    assert not (store.root / ".memsift").exists()


def test_an_unreachable_database_is_a_one_line_error(make_store):
    store = make_store(MEMORIES)
    result = memsift(store, "postgresql://u:pw@127.0.0.1:1/team", "index")

    assert result.exit_code == 2
    assert result.output.startswith("memsift: PostgreSQL 127.0.0.1:1/team, schema memsift: ")
    assert len(result.output.strip().splitlines()) == 1 and "pw" not in result.output
