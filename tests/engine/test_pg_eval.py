"""`memsift eval` on PostgreSQL: each set in a schema of its own, never the team's store."""

from __future__ import annotations

import json

import psycopg
from click.testing import CliRunner
from test_evaluate import CORPUS, QUERIES, write_set
from test_pg_backend import MEMORIES

from conftest import HashEmbedder
from engine.cli import cli
from engine.indexing.indexer import index_store
from engine.measure.evaluate import eval_schema, evaluate
from engine.search import search


def schemas(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT schema_name FROM information_schema.schemata").fetchall()
    return {name for (name,) in rows}


def test_eval_with_a_team_url_in_force_leaves_the_teams_index_whole(
    make_store, pg_url, monkeypatch, tmp_path
):  # type: ignore[no-untyped-def]
    embedder = HashEmbedder()
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    team = make_store(MEMORIES)
    index_store(team, embedder=embedder)
    folder = write_set(tmp_path / "birds", CORPUS, QUERIES, [("q1", "d1", 1)])

    report = evaluate(folder, embedder=embedder)

    assert report["overall"]["queries"] == 1
    assert eval_schema("birds") in schemas(pg_url)
    hits = search(team, "staging database port", embedder=embedder).hits
    assert hits and hits[0].path == "infra/staging-db.md"


def test_eval_database_url_scores_the_postgresql_path(pg_url, tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    # Recorded by monkeypatch, so what the command sets in this process is undone afterwards.
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", "")
    folder = write_set(tmp_path / "birds", CORPUS, QUERIES, [("q1", "d1", 1), ("q2", "d3", 1)])
    keep = tmp_path / "keep"
    result = CliRunner().invoke(
        cli, ["eval", str(folder), "--database-url", pg_url, "--keep", str(keep), "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["overall"]["queries"] == 2
    assert eval_schema("birds") in schemas(pg_url)
    assert not (keep / "birds" / ".memsift" / "index.db").exists()


def test_eval_without_database_url_stays_on_sqlite_even_with_the_variable_set(
    pg_url, tmp_path, monkeypatch
):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    folder = write_set(tmp_path / "birds", CORPUS, QUERIES, [("q1", "d1", 1)])
    keep = tmp_path / "keep"
    result = CliRunner().invoke(cli, ["eval", str(folder), "--keep", str(keep), "--json"])
    assert result.exit_code == 0, result.output
    assert (keep / "birds" / ".memsift" / "index.db").exists()
    assert eval_schema("birds") not in schemas(pg_url)


def test_eval_refuses_a_url_that_is_not_postgresql(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", "")
    folder = write_set(tmp_path / "birds", CORPUS, QUERIES, [("q1", "d1", 1)])
    result = CliRunner().invoke(cli, ["eval", str(folder), "--database-url", "mysql://x/y"])
    assert result.exit_code != 0
    assert "--database-url must be a PostgreSQL URL" in result.output
