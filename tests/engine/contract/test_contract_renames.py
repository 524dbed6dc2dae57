"""A memory's history follows its file to a new path, on SQLite and on PostgreSQL, whatever was
done to it first: read, reinforced, edited, forgotten; renamed and seen by a full run, by the
incremental path a watcher uses (which may see a rename's two halves apart), or by `watch`.
Every move is reported. And the CLI records a read's content hash as the tools do."""

from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner

from backends import Backend, memory
from engine import state
from engine.agents.service import content_hash_of, read_page, reinforce_memory
from engine.agents.write import forget
from engine.cli import cli
from engine.indexing.freshness import Freshness
from engine.indexing.incremental import index_paths
from engine.indexing.indexer import index_store
from engine.status import stale_state_paths

LEXICAL = '[embedder]\nmodel = "none"\n'


def history(store, path: str) -> tuple[int, float]:  # type: ignore[no-untyped-def]
    access = state.lookup(store, path)
    return access.access_count, round(access.outcome_score, 6)


def used(store, path: str) -> tuple[int, float]:  # type: ignore[no-untyped-def]
    """Read and reinforce ``path`` as an agent does; return its history."""
    read_page(store, path)
    reinforce_memory(store, path, 1)
    return history(store, path)


def move(store, old: str, new: str) -> None:  # type: ignore[no-untyped-def]
    target = store.root / new
    target.parent.mkdir(parents=True, exist_ok=True)
    (store.root / old).rename(target)


def test_state_follows_a_file_read_reinforced_and_forgotten_then_renamed(
    indexed, hash_embedder
):
    store = indexed({"f.md": memory("F", "The fact of f.")})
    before = used(store, "f.md")
    forget(store, "f.md")  # changes the file's content after the row recorded it
    move(store, "f.md", "archive/f.md")

    report = index_store(store, embedder=hash_embedder)

    assert report.renamed == [("f.md", "archive/f.md")]
    assert history(store, "archive/f.md") == before
    assert stale_state_paths(store) == []


def test_state_follows_a_file_edited_then_renamed(indexed, hash_embedder):
    store = indexed({"f.md": memory("F", "The fact of f.")})
    before = used(store, "f.md")
    (store.root / "f.md").write_text(memory("F", "The fact of f, corrected."))
    index_store(store, embedder=hash_embedder)
    move(store, "f.md", "g.md")

    report = index_store(store, embedder=hash_embedder)

    assert report.renamed == [("f.md", "g.md")]
    assert history(store, "g.md") == before


def test_state_follows_a_rename_whose_halves_two_incremental_runs_see(indexed):
    store = indexed({"f.md": memory("F", "The fact of f.")})
    before = used(store, "f.md")
    (store.root / "f.md").write_text(memory("F", "The fact of f, edited."))
    index_paths(store, ["f.md"])
    move(store, "f.md", "archive/f.md")

    removed = index_paths(store, ["f.md"])  # the watcher saw the old name go first
    added = index_paths(store, ["archive/f.md"])

    assert removed.renamed == []
    assert added.renamed == [("f.md", "archive/f.md")]
    assert history(store, "archive/f.md") == before
    assert stale_state_paths(store) == []


def test_the_cli_reports_every_move(backend: Backend, tmp_path, hash_embedder):
    store = backend.write(tmp_path / "store", {"f.md": memory("F", "The fact of f.")})
    index_store(store, embedder=hash_embedder)
    used(store, "f.md")
    move(store, "f.md", "archive/f.md")

    result = CliRunner().invoke(cli, ["--store", str(store.root), "index", "--no-embed"])

    assert result.exit_code == 0, result.output
    assert "moved state of f.md to archive/f.md (renamed, same content)" in result.output


def test_watch_moves_the_state_of_a_renamed_file_and_logs_it(backend: Backend, tmp_path):
    store = backend.write(
        tmp_path / "store", {".memsift/config.toml": LEXICAL, "f.md": memory("F", "Fact f.")}
    )
    lines: list[str] = []
    freshness = Freshness(store, log=lines.append)
    freshness.start()
    try:
        assert freshness.caught_up.wait(60)
        before = used(store, "f.md")
        forget(store, "f.md")
        move(store, "f.md", "archive/f.md")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "archive/f.md" not in state.state_paths(store):
            time.sleep(0.05)
    finally:
        freshness.stop()

    assert state.state_paths(store) == ["archive/f.md"]
    assert history(store, "archive/f.md") == before
    assert "moved state of f.md to archive/f.md (renamed, same content)" in lines


def row_hash(backend: Backend, store, path: str) -> str | None:  # type: ignore[no-untyped-def]
    """The content hash the state plane holds for ``path``."""
    if not backend.is_pg:
        from engine.sqlite.db import open_state_reader

        conn = open_state_reader(store.state_path)
        try:
            row = conn.execute("SELECT content_hash FROM access WHERE path = ?", (path,))
            return row.fetchone()[0]
        finally:
            conn.close()
    (found,) = backend.rows(store, f"SELECT content_hash FROM state_access WHERE path = '{path}'")
    return found[0]  # type: ignore[return-value]


def test_the_cli_read_and_reinforce_record_the_indexed_content_hash(backend: Backend, tmp_path):
    store = backend.write(
        tmp_path / "store", {".memsift/config.toml": LEXICAL, "r.md": memory("R", "Read me.")}
    )
    store2 = backend.write(
        tmp_path / "store2", {".memsift/config.toml": LEXICAL, "s.md": memory("S", "Score me.")}
    )
    index_store(store, embed=False)
    index_store(store2, embed=False)
    runner = CliRunner()

    read = runner.invoke(cli, ["--store", str(store.root), "read", "r.md", "--json"])
    scored = runner.invoke(
        cli, ["--store", str(store2.root), "reinforce", "s.md", "--outcome", "1", "--json"]
    )

    assert read.exit_code == 0 and scored.exit_code == 0, read.output + scored.output
    assert json.loads(read.stdout)["counted"] is True
    assert row_hash(backend, store, "r.md") == content_hash_of(store, "r.md") is not None
    assert row_hash(backend, store2, "s.md") == content_hash_of(store2, "s.md") is not None


@pytest.mark.parametrize("run", ["full", "incremental"])
def test_a_row_takes_the_content_its_file_has_after_an_edit(backend, indexed, run):
    store = indexed({"f.md": memory("F", "Before.")})
    used(store, "f.md")
    before = row_hash(backend, store, "f.md")
    (store.root / "f.md").write_text(memory("F", "After, and longer."))

    if run == "full":
        index_store(store, embed=False)
    else:
        index_paths(store, ["f.md"])

    assert row_hash(backend, store, "f.md") == content_hash_of(store, "f.md") != before
    assert history(store, "f.md")[0] == 1
