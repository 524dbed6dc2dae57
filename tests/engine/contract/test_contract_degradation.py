"""Degradation, on SQLite and on PostgreSQL: when an input is missing the search still runs,
drops the arm that needs it and says why; when nothing can run, the error says what to do.

An input missing in the normal course of things (no date in the query, nothing read yet, a store
configured lexical) is a routine drop, not a degraded search; a vector plane that cannot serve
the query (another model, too few chunks embedded) degrades it, and says so.
"""

from __future__ import annotations

import pytest

from backends import memory
from conftest import HashEmbedder
from engine.errors import IndexMissing
from engine.indexing.indexer import index_store
from engine.ranking.scope import ScopeSpec
from engine.search import Searcher, search


@pytest.fixture
def alpha(backend_store, hash_embedder):  # type: ignore[no-untyped-def]
    store = backend_store({"a.md": memory("A", "alpha", kind="semantic")})
    index_store(store, embedder=hash_embedder)
    return store


def test_no_embedder_drops_the_vector_arm_with_the_reason(backend_store):
    store = backend_store(
        {".memsift/config.toml": '[embedder]\nmodel = "none"\n', "a.md": "# A\n\nalpha"}
    )
    index_store(store)
    result = search(store, "alpha")
    assert result.arms_dropped["vector"] == "no embedding model configured (a lexical store)"
    assert [h.path for h in result.hits] == ["a.md"]
    assert not result.degraded


def test_a_lexical_search_asked_for_drops_the_vector_arm_and_says_so(alpha):
    result = search(alpha, "alpha", use_vector=False)
    assert result.arms_dropped["vector"] == "lexical search requested (--no-vector)"
    assert not result.degraded


def test_a_store_indexed_without_vectors_degrades_and_says_to_index(backend_store, hash_embedder):
    store = backend_store({"a.md": memory("A", "alpha")})
    index_store(store, embed=False)
    result = search(store, "alpha", embedder=hash_embedder)
    assert "run `memsift index`" in result.arms_dropped["vector"]
    assert result.degraded and [h.path for h in result.hits] == ["a.md"]


def test_low_vector_coverage_drops_vector_and_marks_degraded(alpha, hash_embedder):
    (alpha.root / "b.md").write_text(memory("B", "beta"), encoding="utf-8")
    index_store(alpha, embed=False)
    result = search(alpha, "alpha", embedder=hash_embedder)
    assert "coverage" in result.arms_dropped["vector"]
    assert result.degraded


def test_vectors_of_another_model_are_never_compared(alpha):
    result = search(alpha, "alpha", embedder=HashEmbedder(name="other", dim=16))
    assert "other" in result.arms_dropped["vector"]
    assert result.degraded


def test_missing_state_plane_drops_salience_with_reason(alpha, hash_embedder):
    result = search(alpha, "alpha", embedder=hash_embedder)
    assert result.arms_dropped["salience"] == "no memory has been read or reinforced yet"
    assert "salience" in result.routine_drops
    assert not result.degraded


def test_a_query_naming_no_time_drops_the_time_arm_with_the_reason(alpha, hash_embedder):
    result = search(alpha, "alpha", embedder=hash_embedder)
    assert result.arms_dropped["time"] == "the query names no date or period"


def test_query_without_terms_drops_fts_and_says_why(alpha, hash_embedder):
    result = search(alpha, '*** "" ^^', embedder=hash_embedder)
    assert "no query terms" in result.arms_dropped["fts"]
    assert result.fts_form is None
    assert "vector" in result.arms_fired


def test_an_empty_lexical_query_falls_back_to_recency_alone(alpha):
    result = search(alpha, "   ", use_vector=False)
    assert {"fts", "vector"} <= set(result.arms_dropped)
    assert [(h.path, set(h.arms)) for h in result.hits] == [("a.md", {"recency"})]


def test_empty_scope_is_reported_not_widened(alpha, hash_embedder):
    result = search(alpha, "alpha", embedder=hash_embedder, scope=ScopeSpec(kinds=("episodic",)))
    assert result.hits == [] and result.empty_scope
    assert "no memory is in scope" in result.notes[-1]


def test_a_missing_index_is_one_clear_error_saying_to_run_index(backend_store, backend):
    store = backend_store({"a.md": "# A\n\nalpha"})
    with pytest.raises(IndexMissing) as caught:
        search(store, "alpha")
    message = str(caught.value)
    assert message.endswith("no index yet; run `memsift index` in the store first")
    where = "PostgreSQL " if backend.is_pg else str(store.index_path)
    assert message.startswith(where) and "\n" not in message


def test_searcher_follows_a_configuration_that_turns_vectors_off(alpha, backend):
    with Searcher(alpha) as searcher:
        before = searcher.search("alpha")  # the default model, which this index lacks
        backend.configure(alpha, '[embedder]\nmodel = "none"\n')
        after = searcher.search("alpha")
    assert before.degraded
    assert "vector" in after.arms_dropped and not after.degraded
