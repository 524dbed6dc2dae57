"""The state plane, on SQLite and on PostgreSQL: every read and outcome counted, none lost when
the index is rebuilt, a file renamed or the embedding model switched, and salience given only to
memories that have a state row (and a helpful one).
"""

from __future__ import annotations

import pytest

from backends import memory
from conftest import HashEmbedder
from engine import state
from engine.agents.service import content_hash_of
from engine.indexing.indexer import index_store
from engine.ranking.scope import ScopeSpec
from engine.search import Searcher, search
from engine.status import stale_state_paths, store_status


@pytest.fixture
def one(indexed):  # type: ignore[no-untyped-def]
    return indexed({"a.md": "# A\n\nalpha"})


# --- reads and outcomes ----------------------------------------------------------------------


def test_record_access_counts_and_timestamps(one):
    state.record_access(one, "a.md")
    access = state.record_access(one, "a.md")
    assert access.access_count == 2
    assert access.last_accessed_at is not None
    assert state.lookup(one, "a.md") == access


def test_reinforce_moves_the_score_towards_the_outcome(one):
    assert state.reinforce(one, "a.md", 1).outcome_score == pytest.approx(0.3)
    assert state.reinforce(one, "a.md", -1).outcome_score == pytest.approx(0.3 * 0.7 - 0.3)


def test_reinforce_stays_within_bounds_after_many_outcomes(one):
    for _ in range(40):
        score = state.reinforce(one, "a.md", 1).outcome_score
    assert 0.99 < score <= 1.0
    for _ in range(40):
        score = state.reinforce(one, "a.md", -1).outcome_score
    assert -1.0 <= score < -0.99


def test_reinforce_refuses_other_outcomes_and_writes_nothing(one):
    with pytest.raises(ValueError, match="1 or -1"):
        state.reinforce(one, "a.md", 2)
    assert state.state_paths(one) == []


def test_reinforce_keeps_access_count(one):
    state.record_access(one, "a.md")
    access = state.reinforce(one, "a.md", -1)
    assert (access.access_count, access.outcome_score) == (1, pytest.approx(-0.3))


def test_a_memory_never_read_has_an_empty_record(one):
    access = state.lookup(one, "a.md")
    assert (access.access_count, access.last_accessed_at, access.outcome_score) == (0, None, 0.0)


def test_a_read_before_the_first_index_run_is_counted(backend_store):
    store = backend_store({"a.md": "# A\n\nalpha"})
    state.record_access(store, "a.md")
    state.reinforce(store, "a.md", 1)
    assert state.state_paths(store) == ["a.md"]
    index_store(store, embed=False)
    access = state.lookup(store, "a.md")
    assert (access.access_count, access.outcome_score) == (1, pytest.approx(0.3))


# --- nothing lost ----------------------------------------------------------------------------


def test_state_rows_of_deleted_memories_stay_until_pruned(indexed, hash_embedder):
    store = indexed({"a.md": "# A\n\nalpha", "b.md": "# B\n\nbeta"})
    state.record_access(store, "a.md")
    state.record_access(store, "b.md")
    (store.root / "a.md").unlink()
    index_store(store, embedder=hash_embedder)
    assert state.state_paths(store) == ["a.md", "b.md"]
    assert store_status(store)["stale_state_rows"] == ["a.md"]
    assert state.prune(store, stale_state_paths(store)) == 1
    assert state.state_paths(store) == ["b.md"]


def test_switching_the_embedding_model_keeps_every_state_row(indexed):
    store = indexed({"a.md": "# A\n\nalpha", "b.md": "# B\n\nbeta"})
    state.record_access(store, "a.md")
    state.reinforce(store, "b.md", -1)
    index_store(store, embedder=HashEmbedder(name="another-model", dim=8))
    assert state.state_paths(store) == ["a.md", "b.md"]


def test_state_follows_a_renamed_file_with_the_same_content(one, hash_embedder):
    state.record_access(one, "a.md")
    (one.root / "a.md").rename(one.root / "b.md")
    report = index_store(one, embedder=hash_embedder)
    assert state.state_paths(one) == ["b.md"]
    assert report.renamed == [("a.md", "b.md")]
    assert state.lookup(one, "b.md").access_count == 1


def test_a_row_never_moves_onto_a_memory_that_has_its_own(one, hash_embedder):
    state.record_access(one, "a.md")
    (one.root / "a.md").rename(one.root / "b.md")
    state.record_access(one, "b.md")
    index_store(one, embedder=hash_embedder)
    assert state.state_paths(one) == ["a.md", "b.md"]


def test_a_row_stays_while_its_file_exists_even_when_the_file_leaves_the_index(one, hash_embedder):
    state.record_access(one, "a.md")
    (one.root / "copy.md").write_text("# A\n\nalpha", encoding="utf-8")
    (one.root / "a.md").write_bytes(b"# A\n\n\xff not UTF-8 any more")
    report = index_store(one, embedder=hash_embedder)
    assert report.removed == ["a.md"] and report.renamed == []
    assert state.state_paths(one) == ["a.md"]


def test_a_renamed_copy_takes_its_own_history_not_an_older_copy_s(indexed, hash_embedder):
    """Two files with one content each have a row; one is deleted (its row goes stale), then
    the other is renamed: the renamed file's own row follows it, the deleted copy's stays."""
    store = indexed({"a.md": "# Same\n\nsame text", "b.md": "# Same\n\nsame text"})
    state.reinforce(store, "a.md", -1, content_hash_of(store, "a.md"))
    state.record_access(store, "b.md", content_hash_of(store, "b.md"))
    (store.root / "a.md").unlink()
    index_store(store, embedder=hash_embedder)
    (store.root / "b.md").rename(store.root / "c.md")
    report = index_store(store, embedder=hash_embedder)
    assert report.renamed == [("b.md", "c.md")]
    assert state.state_paths(store) == ["a.md", "c.md"]
    moved = state.lookup(store, "c.md")
    assert (moved.access_count, moved.outcome_score) == (1, 0.0)


def test_two_rows_removed_at_once_with_one_content_both_stay(indexed, hash_embedder):
    """Which of two deleted copies became the new file cannot be told: neither row moves."""
    store = indexed({"a.md": "# Same\n\nsame text", "b.md": "# Same\n\nsame text"})
    state.record_access(store, "a.md", content_hash_of(store, "a.md"))
    state.record_access(store, "b.md", content_hash_of(store, "b.md"))
    (store.root / "a.md").unlink()
    (store.root / "b.md").rename(store.root / "c.md")
    report = index_store(store, embedder=hash_embedder)
    assert report.renamed == []
    assert state.state_paths(store) == ["a.md", "b.md"]


# --- salience --------------------------------------------------------------------------------


def test_reads_and_outcomes_feed_salience(indexed, hash_embedder):
    store = indexed(
        {
            "deploy.md": memory("Release rolled back", "the deploy broke; release rolled back"),
            "other.md": memory("Release notes", "release notes for the deploy"),
        }
    )
    state.record_access(store, "deploy.md")
    state.reinforce(store, "deploy.md", 1)
    result = search(store, "release deploy", embedder=hash_embedder)
    assert "salience" in result.arms_fired
    by_path = {h.path: h for h in result.hits}
    assert by_path["deploy.md"].arms["salience"].rank == 1
    assert "salience" not in by_path["other.md"].arms


def test_salience_ranks_only_memories_with_a_state_row(indexed, hash_embedder):
    store = indexed(
        {"read.md": memory("Tea once", "tea notes"), "never.md": memory("Tea twice", "tea again")}
    )
    state.record_access(store, "read.md")
    result = search(store, "tea", embedder=hash_embedder)
    arms = {h.path: set(h.arms) for h in result.hits}
    assert "salience" in arms["read.md"]
    assert "salience" not in arms["never.md"]


def test_a_memory_only_reported_unhelpful_earns_no_salience(indexed, hash_embedder):
    store = indexed({"a.md": memory("Tea", "tea notes"), "b.md": memory("Tea", "tea more")})
    state.record_access(store, "b.md")
    state.reinforce(store, "a.md", -1)
    result = search(store, "tea", embedder=hash_embedder)
    assert "salience" not in {h.path: h.arms for h in result.hits}["a.md"]


def test_salience_gives_no_rank_to_tasks_and_people_but_other_arms_do(indexed, hash_embedder):
    store = indexed(
        {
            "p.md": memory("Ana", "ana likes tea", kind="person"),
            "t.md": memory("Ana task", "ask ana about tea", kind="task"),
            "s.md": memory("Tea fact", "tea is brewed at 80 degrees", kind="semantic"),
        }
    )
    for path in ("p.md", "t.md", "s.md"):
        state.record_access(store, path)
    result = search(
        store, "tea", embedder=hash_embedder, scope=ScopeSpec(kinds=("person", "task", "semantic"))
    )
    arms = {h.path: set(h.arms) for h in result.hits}
    assert "salience" not in arms["p.md"] and "salience" not in arms["t.md"]
    assert "fts" in arms["p.md"] and "fts" in arms["t.md"]
    assert "salience" in arms["s.md"]


def test_out_of_scope_memory_never_appears_through_any_arm(indexed, hash_embedder):
    secret = memory("Quasar secret", "quasar quasar quasar", archived="true", event_at="2030-01-01")
    store = indexed(
        {
            "archived.md": secret,
            "visible.md": memory("Visible", "quasar mention", event_at="2020-01-01"),
            "other.md": memory("Other", "unrelated words"),
        }
    )
    for _ in range(5):
        state.record_access(store, "archived.md")
    state.reinforce(store, "archived.md", 1)
    result = search(store, "quasar", embedder=hash_embedder)
    assert set(result.arms_fired) == {"fts", "vector", "recency", "salience"}
    assert "archived.md" not in {h.path for h in result.hits}
    shown = search(store, "quasar", embedder=hash_embedder, scope=ScopeSpec(include_archived=True))
    assert shown.hits[0].path == "archived.md"


def test_reading_one_memory_never_reorders_a_query_it_is_not_a_hit_of(indexed):
    notes = {
        f"n{i}.md": memory(f"Deploy note {i}", f"deploy pipeline step {i} " + "word " * i)
        for i in range(8)
    }
    store = indexed({**notes, "other.md": memory("Gardening", "tomatoes need sun")})
    before = search(store, "deploy pipeline", use_vector=False)
    assert "other.md" not in {h.path for h in before.hits}
    state.record_access(store, "other.md")  # the first read creates the state plane
    after = search(store, "deploy pipeline", use_vector=False)
    assert "salience" in after.arms_fired
    assert [(h.path, h.score) for h in after.hits] == [(h.path, h.score) for h in before.hits]


def test_a_searcher_sees_the_state_plane_once_a_memory_is_read(one, hash_embedder):
    with Searcher(one, embedder=hash_embedder) as searcher:
        assert "salience" in searcher.search("alpha").arms_dropped
        state.record_access(one, "a.md")
        assert "salience" in searcher.search("alpha").arms_fired
