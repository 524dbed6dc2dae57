"""benchmarks/quality.py measures the backend it is asked to, and only that one."""

from __future__ import annotations

import os

import pytest
from quality import QUERY_ARMS, select_database

from engine.pg.target import URL_VARIABLE


@pytest.fixture(autouse=True)
def restore_url(monkeypatch: pytest.MonkeyPatch) -> None:
    """Recorded by monkeypatch, so whatever the function sets is undone after the test."""
    monkeypatch.setenv(URL_VARIABLE, "")


def test_a_sqlite_run_ignores_a_team_url_left_in_the_environment(monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv(URL_VARIABLE, "postgresql://team.example/memories")

    assert select_database(None) is None
    assert URL_VARIABLE not in os.environ


def test_a_database_url_points_the_run_at_that_database():
    assert select_database("postgresql://bench.example/eval") is None
    assert os.environ[URL_VARIABLE] == "postgresql://bench.example/eval"


def test_a_url_that_is_not_postgresql_is_refused_naming_the_option():
    problem = select_database("mysql://bench.example/eval")

    assert problem is not None and problem.startswith("--database-url ")


def test_postgresql_scores_alone_the_arms_that_find_candidates():
    assert QUERY_ARMS == ("fts", "vector")
