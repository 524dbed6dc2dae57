"""The freshness seam on a team store: a few named files indexed without a walk, vectors
filled behind, and a folder that went away resolved to its indexed keys, all in PostgreSQL."""

from __future__ import annotations

import psycopg
import pytest
from test_pg_backend import MEMORIES

from conftest import HashEmbedder
from engine.indexing.incremental import fill_missing, index_paths, indexed_under
from engine.indexing.indexer import index_store
from engine.search import search

LLAMA = """---
title: Llama feeding schedule
kind: semantic
---
The office llama is fed at 07:30 and 16:00; never after dark.
"""


@pytest.fixture
def lexical_store(make_store, pg_url, monkeypatch):
    """The example memories indexed lexically only (as a server's catch-up leaves them)."""
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    store = make_store(MEMORIES)
    index_store(store, embed=False)
    return store


def indexed(url: str) -> set[str]:
    with psycopg.connect(url, options="-c search_path=memsift") as conn:
        return {row[0] for row in conn.execute("SELECT path FROM files")}


def test_index_paths_writes_the_named_files_and_no_others(lexical_store, pg_url):
    (lexical_store.root / "facts").mkdir()
    (lexical_store.root / "facts" / "llama.md").write_text(LLAMA)
    (lexical_store.root / "facts" / "unnamed.md").write_text("# Not named\n\nLeft for later.\n")

    report = index_paths(lexical_store, ["facts/llama.md"])

    assert report.indexed == ["facts/llama.md"]
    assert "facts/llama.md" in indexed(pg_url)
    assert "facts/unnamed.md" not in indexed(pg_url)
    assert not (lexical_store.root / ".memsift").exists()


def test_index_paths_removes_a_named_file_that_is_gone(lexical_store, pg_url):
    (lexical_store.root / "people" / "priya.md").unlink()

    report = index_paths(lexical_store, ["people/priya.md"])

    assert report.removed == ["people/priya.md"]
    assert "people/priya.md" not in indexed(pg_url)


def test_index_paths_embeds_what_it_writes_so_meaning_finds_it_at_once(lexical_store):
    embedder = HashEmbedder()
    fill_missing(lexical_store, embedder)
    (lexical_store.root / "llama.md").write_text(LLAMA)

    report = index_paths(lexical_store, ["llama.md"], embedder=embedder)

    assert report.embedded > 0
    result = search(lexical_store, "office llama fed", embedder=embedder)
    assert result.hits[0].path == "llama.md"
    assert "vector" in result.arms_fired and not result.degraded


def test_fill_missing_embeds_a_lexical_store_until_the_vector_arm_rejoins(lexical_store):
    embedder = HashEmbedder()
    assert search(lexical_store, "staging database port", embedder=embedder).degraded

    done = fill_missing(lexical_store, embedder)

    assert done == 4
    result = search(lexical_store, "staging database port", embedder=embedder)
    assert "vector" in result.arms_fired and not result.degraded


def test_fill_missing_leaves_another_models_index_to_a_full_run(lexical_store):
    fill_missing(lexical_store, HashEmbedder("model-a"))

    assert fill_missing(lexical_store, HashEmbedder("model-b")) is None


def test_a_folder_that_went_away_stands_for_its_indexed_keys(lexical_store):
    assert indexed_under(lexical_store, ["infra", "people"]) == {
        "infra/staging-db.md",
        "people/priya.md",
    }
    assert indexed_under(lexical_store, ["%"]) == set()
