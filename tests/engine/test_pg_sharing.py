"""Two stores in one PostgreSQL database: each in its own schema they never see each other;
in one schema (both left at the default, with one MEMSIFT_DATABASE_URL exported in the shell)
the second store's run must not take the first one's memories and state rows with it."""

from __future__ import annotations

import pytest

from backends import named_store as make
from engine import state as state_plane
from engine.indexing.indexer import index_store
from engine.pg.ownership import ForeignSchema
from engine.search import search
from engine.status import stale_state_paths


def test_stores_in_their_own_schemas_of_one_database_never_see_each_other(
    tmp_path, pg_url, monkeypatch
):
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    alpha, beta = make(tmp_path, "alpha", "team_alpha"), make(tmp_path, "beta", "team_beta")
    index_store(alpha)
    state_plane.reinforce(alpha, "alpha.md", 1)
    index_store(beta)
    assert [h.path for h in search(alpha, "store holds").hits] == ["alpha.md"]
    assert [h.path for h in search(beta, "store holds").hits] == ["beta.md"]
    assert stale_state_paths(beta) == []
    assert state_plane.lookup(alpha, "alpha.md").outcome_score > 0


def test_a_second_store_on_the_same_schema_leaves_the_first_ones_memories(
    tmp_path, pg_url, monkeypatch
):
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    alpha, beta = make(tmp_path, "alpha", None), make(tmp_path, "beta", None)
    index_store(alpha)
    state_plane.reinforce(alpha, "alpha.md", 1)
    try:
        index_store(beta)
    except ValueError as refused:  # refusing, naming the schema, is a fine answer too
        assert "schema memsift" in str(refused)
    assert [h.path for h in search(alpha, "store holds").hits] == ["alpha.md"]


def test_a_second_stores_index_run_on_the_same_schema_is_refused_naming_it(
    tmp_path, pg_url, monkeypatch
):
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    alpha, beta = make(tmp_path, "alpha", None), make(tmp_path, "beta", None)
    index_store(alpha)

    with pytest.raises(ForeignSchema, match=r"schema memsift.*'alpha.md'.*\[database\] schema"):
        index_store(beta)
    assert [h.path for h in search(alpha, "store holds").hits] == ["alpha.md"]


def test_a_second_stores_prune_on_the_same_schema_deletes_no_state_row(
    tmp_path, pg_url, monkeypatch
):
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    alpha, beta = make(tmp_path, "alpha", None), make(tmp_path, "beta", None)
    index_store(alpha)
    state_plane.reinforce(alpha, "alpha.md", 1)

    with pytest.raises(ForeignSchema, match="pruning refused"):
        state_plane.prune(beta, stale_state_paths(beta))
    assert state_plane.lookup(alpha, "alpha.md").outcome_score > 0


def test_a_store_whose_files_were_mostly_renamed_still_indexes_into_its_schema(
    tmp_path, pg_url, monkeypatch
):
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    alpha = make(tmp_path, "alpha", None)
    (alpha.root / "kept.md").write_text("# Kept\n\nStays where it was.\n")
    index_store(alpha)
    (alpha.root / "alpha.md").rename(alpha.root / "renamed.md")

    report = index_store(alpha)

    assert report.removed == ["alpha.md"]
    assert sorted(h.path for h in search(alpha, "store holds").hits) == ["renamed.md"]


# --- every write, from a second folder on the first store's schema --------------------------

WRITES = {
    "remember": ["remember", "--title", "Beta fact", "--body", "Only beta knows."],
    "read": ["read", "beta.md"],
    "reinforce": ["reinforce", "beta.md", "--outcome", "1"],
    "forget": ["forget", "beta.md"],
}


def schema_rows(store) -> tuple[list[str], list[str]]:  # type: ignore[no-untyped-def]
    """The schema's indexed paths and state rows, as the first store's status counts them."""
    from engine.pg.driver import connect
    from engine.pg.target import database_target

    target = database_target(store.config())
    conn = connect(target, readonly=True, vectors=False)
    try:
        files = [p for (p,) in conn.run("SELECT path FROM files ORDER BY path").fetchall()]
        rows = [p for (p,) in conn.run("SELECT path FROM state_access ORDER BY path").fetchall()]
    finally:
        conn.close()
    return files, rows


@pytest.mark.parametrize("write", sorted(WRITES))
def test_every_cli_write_from_a_second_store_on_the_schema_is_refused_naming_it(
    tmp_path, pg_url, monkeypatch, write
):
    from click.testing import CliRunner

    from engine.cli import cli

    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    alpha, beta = make(tmp_path, "alpha", None), make(tmp_path, "beta", None)
    index_store(alpha)
    state_plane.reinforce(alpha, "alpha.md", 1)
    before = schema_rows(alpha)
    beta_files = sorted(p.name for p in beta.root.rglob("*.md"))
    beta_bytes = (beta.root / "beta.md").read_bytes()

    result = CliRunner().invoke(cli, ["--store", str(beta.root), *WRITES[write]])

    assert result.exit_code == 2, result.output
    assert "schema memsift" in result.output and "[database] schema" in result.output
    assert result.output.count("\n") == 1
    assert schema_rows(alpha) == before
    assert sorted(p.name for p in beta.root.rglob("*.md")) == beta_files  # nothing written
    assert (beta.root / "beta.md").read_bytes() == beta_bytes


@pytest.mark.parametrize("tool", ["memory_remember", "memory_read", "memory_reinforce",
                                  "memory_forget"])
def test_every_tool_write_from_a_second_store_on_the_schema_is_refused_naming_it(
    tmp_path, pg_url, monkeypatch, tool
):
    from engine.agents.service import MemoryService

    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    alpha, beta = make(tmp_path, "alpha", None), make(tmp_path, "beta", None)
    index_store(alpha)
    before = schema_rows(alpha)
    service = MemoryService(beta)
    calls = {
        "memory_remember": lambda: service.remember("Beta", "Only beta.", "semantic", [], None),
        "memory_read": lambda: service.read("beta.md"),
        "memory_reinforce": lambda: service.reinforce("beta.md", 1),
        "memory_forget": lambda: service.forget("beta.md"),
    }
    try:
        with pytest.raises(ForeignSchema, match=r"schema memsift.*\[database\] schema"):
            calls[tool]()
    finally:
        service.close()

    assert schema_rows(alpha) == before
    assert sorted(p.name for p in beta.root.rglob("*.md")) == ["beta.md"]


def test_the_schemas_own_store_still_writes_through_every_surface(tmp_path, pg_url, monkeypatch):
    from engine.agents.service import MemoryService

    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    alpha = make(tmp_path, "alpha", None)
    index_store(alpha)
    service = MemoryService(alpha)
    try:
        assert service.read("alpha.md")["access_count"] == 1
        assert service.reinforce("alpha.md", 1)["outcome_score"] > 0
        assert service.remember("New", "A new memory.", "semantic", [], None)["indexed"]
        assert service.forget("alpha.md")["archived"]
    finally:
        service.close()
