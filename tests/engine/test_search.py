"""The fused search through the real statement: ranking signs, scope, drops and reports."""

from __future__ import annotations

import itertools

import pytest

from conftest import HashEmbedder
from engine import state
from engine.assemble import RRF_K
from engine.indexer import index_store
from engine.scope import ScopeSpec
from engine.search import CANDIDATE_LIMIT, Searcher, search


def memory(title: str, body: str, **fields: str) -> str:
    extra = "".join(f"{k}: {v}\n" for k, v in fields.items())
    return f"---\ntitle: {title}\n{extra}---\n{body}\n"


@pytest.fixture
def indexed(make_store, hash_embedder):  # type: ignore[no-untyped-def]
    def build(files: dict[str, str]):  # type: ignore[no-untyped-def]
        store = make_store(files)
        index_store(store, embedder=hash_embedder)
        return store

    return build


def test_bm25_ranks_the_term_dense_memory_first_whatever_its_rowid(indexed, hash_embedder):
    filler = " ".join(f"filler{i}" for i in range(200))
    store = indexed(
        {
            "a-sparse.md": memory("Notes", f"zeppelin once. {filler}"),
            "b-dense.md": memory("Notes", "zeppelin zeppelin zeppelin mooring"),
            "c-none.md": memory("Notes", "nothing relevant here"),
        }
    )
    result = search(store, "zeppelin", embedder=hash_embedder)
    fts_ranks = {h.path: h.arms["fts"].rank for h in result.hits if "fts" in h.arms}
    assert fts_ranks == {"b-dense.md": 1, "a-sparse.md": 2}


def test_dropped_vector_arm_leaves_other_placeholders_numbered(indexed):
    store = indexed({"a.md": memory("Alpha", "alpha beta", kind="semantic")})
    result = search(store, "alpha", use_vector=False, scope=ScopeSpec(kinds=("semantic",)))
    assert "?4" not in result.sql
    assert all(f"?{n}" in result.sql for n in (1, 2, 3, 7))
    assert result.params == ('"alpha"', CANDIDATE_LIMIT, 10, None, None, None, '["semantic"]')


def test_bound_tuple_stops_at_the_highest_placeholder(indexed):
    store = indexed({"a.md": memory("Alpha", "alpha beta")})
    result = search(store, "alpha", use_vector=False)
    assert "?4" not in result.sql and "?5" not in result.sql
    assert result.params == ('"alpha"', CANDIDATE_LIMIT, 10)


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


def test_tasks_are_out_of_scope_unless_asked_for(indexed, hash_embedder):
    store = indexed({"t.md": memory("Task", "renew the certificate", kind="task")})
    assert search(store, "certificate", embedder=hash_embedder).hits == []
    asked = search(store, "certificate", embedder=hash_embedder, scope=ScopeSpec(kinds=("task",)))
    assert [h.path for h in asked.hits] == ["t.md"]


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


def test_salience_ranks_only_memories_with_a_state_row(indexed, hash_embedder):
    store = indexed(
        {
            "read.md": memory("Tea once", "tea notes"),
            "never.md": memory("Tea twice", "tea notes again"),
        }
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


def test_reading_one_memory_never_reorders_a_query_it_is_not_a_hit_of(indexed, hash_embedder):  # type: ignore[no-untyped-def]
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


def test_a_query_naming_a_date_ranks_the_memory_of_that_day_by_the_time_arm(indexed, hash_embedder):  # type: ignore[no-untyped-def]
    store = indexed(
        {
            "a.md": memory("Pasta", "we made pasta", event_at="2023-12-29T19:00:00"),
            "b.md": memory("Pasta", "we made pasta again", event_at="2024-01-20T19:00:00"),
        }
    )
    result = search(store, "what pasta did we make on 29 Dec 2023", embedder=hash_embedder)
    assert "time" in result.arms_fired
    assert result.params[4:6] == ("2023-12-29 00:00:00", "2023-12-29 23:59:59")
    ranks = {h.path: h.arms["time"].rank for h in result.hits}
    assert ranks == {"a.md": 1, "b.md": 2}


def test_a_query_naming_no_time_drops_the_time_arm_with_the_reason(indexed, hash_embedder):
    store = indexed({"a.md": memory("Pasta", "we made pasta")})
    result = search(store, "pasta", embedder=hash_embedder)
    assert result.arms_dropped["time"] == "the query names no date or period"


def test_probe_binds_all_terms_when_one_memory_holds_them_all(indexed):
    store = indexed({"a.md": memory("A", "red apple"), "b.md": memory("B", "green pear")})
    result = search(store, "red apple", use_vector=False)
    assert result.fts_form == "all"
    assert [h.path for h in result.hits if "fts" in h.arms] == ["a.md"]


def test_probe_falls_back_to_any_term_when_none_holds_them_all(indexed):
    store = indexed({"a.md": memory("A", "red apple"), "b.md": memory("B", "green pear")})
    result = search(store, "red pear", use_vector=False)
    assert result.fts_form == "any"
    assert {h.path for h in result.hits if "fts" in h.arms} == {"a.md", "b.md"}


def test_probe_respects_the_scope(indexed):
    store = indexed(
        {
            "a.md": memory("A", "red pear", archived="true"),
            "b.md": memory("B", "red apple"),
            "c.md": memory("C", "green pear"),
        }
    )
    result = search(store, "red pear", use_vector=False)
    assert result.fts_form == "any"


def test_configured_weights_are_inlined_in_the_statement(make_store, hash_embedder):
    store = make_store(
        {
            ".memsift/config.toml": "[weights]\nrecency = 0.25\n",
            "a.md": memory("A", "alpha"),
        }
    )
    index_store(store, embedder=hash_embedder)
    result = search(store, "alpha", embedder=hash_embedder)
    assert f"0.25 / ({RRF_K} + rank)" in result.sql
    assert result.hits[0].arms["recency"].contribution == pytest.approx(0.25 / (RRF_K + 1))


def test_query_without_terms_drops_fts_and_says_why(indexed, hash_embedder):
    store = indexed({"a.md": memory("A", "alpha")})
    result = search(store, '*** "" ^^', embedder=hash_embedder)
    assert "no query terms" in result.arms_dropped["fts"]
    assert result.fts_form is None
    assert "vector" in result.arms_fired


def test_missing_state_plane_drops_salience_with_reason(indexed, hash_embedder):
    store = indexed({"a.md": memory("A", "alpha")})
    result = search(store, "alpha", embedder=hash_embedder)
    assert result.arms_dropped["salience"] == "no memory has been read or reinforced yet"
    assert "salience" in result.routine_drops
    assert not result.degraded


def test_low_vector_coverage_drops_vector_and_marks_degraded(indexed, hash_embedder):
    store = indexed({"a.md": memory("A", "alpha")})
    (store.root / "b.md").write_text(memory("B", "beta"), encoding="utf-8")
    index_store(store, embed=False)
    result = search(store, "alpha", embedder=hash_embedder)
    assert "coverage" in result.arms_dropped["vector"]
    assert result.degraded


def test_vectors_of_another_model_are_never_compared(indexed):
    store = indexed({"a.md": memory("A", "alpha")})
    result = search(store, "alpha", embedder=HashEmbedder(name="other", dim=16))
    assert "other" in result.arms_dropped["vector"]
    assert result.degraded


def test_empty_scope_is_reported_not_widened(indexed, hash_embedder):
    store = indexed({"a.md": memory("A", "alpha", kind="semantic")})
    result = search(store, "alpha", embedder=hash_embedder, scope=ScopeSpec(kinds=("episodic",)))
    assert result.hits == [] and result.empty_scope


def test_hit_reports_rank_and_contribution_per_arm(indexed, hash_embedder):
    store = indexed({"a.md": memory("A", "alpha"), "b.md": memory("B", "beta")})
    hit = search(store, "alpha", embedder=hash_embedder).hits[0]
    assert hit.path == "a.md"
    assert hit.arms["fts"].rank == 1
    assert hit.arms["fts"].contribution == pytest.approx(1.0 / (RRF_K + 1))
    assert hit.score == pytest.approx(sum(a.contribution for a in hit.arms.values()))


def test_snippet_highlights_query_words_and_stays_short(indexed, hash_embedder):
    long_body = "Intro sentence here. " * 40 + "The zeppelin docked at noon. " + "More. " * 40
    store = indexed({"a.md": memory("A", long_body)})
    snippet = search(store, "zeppelin", embedder=hash_embedder).hits[0].snippet
    assert "**zeppelin**" in snippet
    assert len(snippet.replace("**", "")) <= 302


def brute_force_distances(store, embedder, query):  # type: ignore[no-untyped-def]
    """Each file's best-chunk cosine distance, computed in NumPy."""
    import numpy as np

    from engine.db import open_index

    conn = open_index(store.index_path)
    rows = conn.execute(
        "SELECT f.path, e.vector FROM chunks c JOIN embeddings e ON e.hash = c.hash "
        "JOIN files f ON f.id = c.file_id"
    ).fetchall()
    conn.close()
    q = embedder.embed([query])[0]
    best: dict[str, float] = {}
    for path, blob in rows:
        distance = 1.0 - float(np.frombuffer(blob, dtype="<f4") @ q)
        best[path] = min(best.get(path, 2.0), distance)
    return best


def assert_exact_order(ranked, distances, candidates, count):  # type: ignore[no-untyped-def]
    """``ranked`` is the ``count`` nearest of ``candidates``, nearest first (ties in any order)."""
    pool = sorted(candidates, key=lambda p: distances[p])
    assert len(ranked) == min(count, len(pool))
    cutoff = distances[pool[len(ranked) - 1]]
    assert all(distances[p] <= cutoff + 1e-5 for p in ranked)
    assert all(distances[a] <= distances[b] + 1e-5 for a, b in itertools.pairwise(ranked))


def many_files(count: int) -> dict[str, str]:
    words = "red green blue cyan amber violet olive coral ivory slate".split()
    return {
        f"f{i:03d}.md": memory(
            f"Note {i}", " ".join(words[(i * j) % 10] for j in range(1, 9)), tags=f"[t{i % 20}]"
        )
        for i in range(count)
    }


def test_vector_arm_matches_brute_force_in_the_default_scope(indexed, hash_embedder):
    store = indexed(many_files(400))
    only_vector = {"fts": 0, "recency": 0, "salience": 0}
    result = search(
        store, "amber coral violet", embedder=hash_embedder, weights=only_vector, limit=40
    )
    distances = brute_force_distances(store, hash_embedder, "amber coral violet")
    assert_exact_order([h.path for h in result.hits], distances, set(distances), 40)


def test_vector_arm_stays_exact_when_the_scope_is_narrow(indexed, hash_embedder):
    # 400 one-chunk files: the k-NN shortcut fetches 160 chunks, so most of the 20 files in
    # scope are not among them and only the exact fallback can rank them all.
    store = indexed(many_files(400))
    only_vector = {"fts": 0, "recency": 0, "salience": 0}
    result = search(
        store,
        "amber coral violet",
        embedder=hash_embedder,
        weights=only_vector,
        scope=ScopeSpec(tags=("t7",)),
        limit=40,
    )
    distances = brute_force_distances(store, hash_embedder, "amber coral violet")
    in_scope = {f"f{i:03d}.md" for i in range(400) if i % 20 == 7}
    assert_exact_order([h.path for h in result.hits], distances, in_scope, 40)


def test_searcher_follows_an_index_that_was_deleted_and_rebuilt(indexed, hash_embedder):
    store = indexed({"a.md": memory("A", "alpha")})
    with Searcher(store, embedder=hash_embedder) as searcher:
        assert [h.path for h in searcher.search("alpha").hits] == ["a.md"]
        store.index_path.unlink()
        for suffix in ("-wal", "-shm"):
            store.index_path.with_name(store.index_path.name + suffix).unlink(missing_ok=True)
        (store.root / "a.md").unlink()
        (store.root / "b.md").write_text(memory("B", "alpha beta"), encoding="utf-8")
        index_store(store, embedder=hash_embedder)
        assert [h.path for h in searcher.search("alpha").hits] == ["b.md"]


def test_searcher_attaches_the_state_plane_once_it_exists(indexed, hash_embedder):
    store = indexed({"a.md": memory("A", "alpha")})
    with Searcher(store, embedder=hash_embedder) as searcher:
        assert "salience" in searcher.search("alpha").arms_dropped
        state.record_access(store, "a.md")
        assert "salience" in searcher.search("alpha").arms_fired


def test_limit_above_the_candidate_limit_returns_that_many_hits(indexed, hash_embedder):
    store = indexed(many_files(120))
    result = search(store, "note", embedder=hash_embedder, limit=100, use_vector=False)
    assert len(result.hits) == 100


def test_lexical_store_by_configuration_is_not_degraded(make_store):
    store = make_store(
        {".memsift/config.toml": '[embedder]\nmodel = "none"\n', "a.md": "# A\n\nalpha"}
    )
    index_store(store)
    result = search(store, "alpha")
    assert "vector" in result.arms_dropped and not result.degraded


def test_searcher_follows_a_configuration_that_turns_vectors_off(indexed, hash_embedder):
    store = indexed({"a.md": memory("A", "alpha")})
    with Searcher(store) as searcher:
        before = searcher.search("alpha")  # the default model, which this index lacks
        (store.state_dir / "config.toml").write_text('[embedder]\nmodel = "none"\n')
        after = searcher.search("alpha")
    assert before.degraded
    assert "vector" in after.arms_dropped and not after.degraded


class Killed(Exception):
    """Stands in for the signal that stops a run mid-way."""


class EmbedderThatDies(HashEmbedder):
    """Embeds ``batches`` batches, then fails as a killed run would stop."""

    def __init__(self, batches: int) -> None:
        super().__init__()
        self.batches = batches

    def embed(self, texts):  # type: ignore[no-untyped-def]
        if self.batches == 0:
            raise Killed
        self.batches -= 1
        return super().embed(texts)


def test_an_interrupted_first_embedding_run_says_how_far_it_got(
    make_store, hash_embedder, monkeypatch
):
    from engine import indexer

    store = make_store({f"n{i}.md": memory(f"N{i}", f"body {i}") for i in range(10)})
    monkeypatch.setattr(indexer, "EMBED_BATCH", 3)
    with pytest.raises(Killed):
        index_store(store, embedder=EmbedderThatDies(batches=1))
    result = search(store, "body", embedder=hash_embedder)
    assert result.arms_dropped["vector"] == (
        "embedding stopped at 3 of 10 chunks (an index run was interrupted or is still "
        "running); run `memsift index` to resume it"
    )
    assert result.degraded


def test_a_lexical_run_after_an_interrupted_one_still_says_how_far_embedding_got(
    make_store, hash_embedder, monkeypatch
):
    from engine import indexer

    store = make_store({f"n{i}.md": memory(f"N{i}", f"body {i}") for i in range(10)})
    monkeypatch.setattr(indexer, "EMBED_BATCH", 4)
    with pytest.raises(Killed):
        index_store(store, embedder=EmbedderThatDies(batches=1))
    index_store(store, embed=False)
    result = search(store, "body", embedder=hash_embedder)
    assert "4 of 10 chunks" in result.arms_dropped["vector"]


def test_a_huge_file_mentioning_everything_does_not_outrank_the_focused_note(
    indexed, hash_embedder
):  # type: ignore[no-untyped-def]
    # A changelog-like file: the query's words appear, scattered among thousands of others,
    # more often in total than in the focused note.
    filler = " ".join(f"change{i} fixed in module{i}." for i in range(3000))
    scattered = " ".join(
        f"{filler[i * 900 : (i + 1) * 900]} The retry budget was touched. Backoff noted."
        for i in range(40)
    )
    store = indexed(
        {
            "changelog.md": memory("Changelog", scattered),
            "note.md": memory("Retry budget", "The retry budget caps backoff at three attempts."),
        }
    )
    result = search(store, "retry budget backoff", use_vector=False)
    ranks = {h.path: h.arms["fts"].rank for h in result.hits if "fts" in h.arms}
    assert ranks["note.md"] == 1


class TopicEmbedder:
    """Texts about tea point one way, everything else another: similarity is 1 or 0."""

    name, dim = "topic", 2

    def embed(self, texts):  # type: ignore[no-untyped-def]
        import numpy as np

        return np.array(
            [[1.0, 0.0] if "tea" in t.lower() else [0.0, 1.0] for t in texts], dtype=np.float32
        )


@pytest.fixture
def tea_store(make_store):  # type: ignore[no-untyped-def]
    store = make_store(
        {"a.md": memory("Tea", "green tea is brewed at 80 degrees"), "b.md": memory("Tea", "tea")}
    )
    index_store(store, embedder=TopicEmbedder())
    return store


def test_a_query_nothing_answers_is_abstained_with_no_hits(tea_store):
    result = search(tea_store, "quantum chromodynamics", embedder=TopicEmbedder())
    assert (result.abstained, result.hits, result.best_similarity) == (True, [], 0.0)
    assert "no answer" in result.notes[-1]


def test_a_floor_of_zero_always_answers(tea_store):
    result = search(tea_store, "quantum chromodynamics", embedder=TopicEmbedder(), min_similarity=0)
    assert (result.abstained, len(result.hits)) == (False, 2)


def test_a_similar_memory_clears_the_floor_and_carries_its_similarity(tea_store):
    result = search(tea_store, "which tea", embedder=TopicEmbedder())
    assert result.abstained is False
    assert {h.similarity for h in result.hits} == {1.0}


def test_a_memory_holding_every_query_word_is_an_answer_however_dissimilar(tea_store):
    result = search(tea_store, "brewed degrees", embedder=TopicEmbedder())
    assert result.fts_form == "all"
    assert (result.abstained, [h.path for h in result.hits][:1]) == (False, ["a.md"])


def test_the_configured_floor_is_read_from_config_toml(tea_store):
    (tea_store.state_dir / "config.toml").write_text("[limits]\nmin_similarity = 0\n")
    result = search(tea_store, "quantum chromodynamics", embedder=TopicEmbedder())
    assert result.abstained is False


def every_match_by_best_chunk(store, match: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The reference fts order: every matching chunk grouped by file, best bm25 first."""
    from engine.db import open_index

    conn = open_index(store.index_path)
    try:
        rows = conn.execute(
            "WITH m AS MATERIALIZED (SELECT rowid AS id, bm25(chunks_fts, 4.0, 1.0, 2.0) AS s "
            "FROM chunks_fts WHERE chunks_fts MATCH ?) SELECT f.path, min(m.s) AS score FROM m "
            "JOIN chunks AS c ON c.id = m.id JOIN files AS f ON f.id = c.file_id "
            "GROUP BY f.id ORDER BY score, f.path",
            (match,),
        ).fetchall()
    finally:
        conn.close()
    return [path for path, _ in rows]


def fts_only_paths(store, query: str, scope: ScopeSpec, embedder) -> tuple[list[str], str]:  # type: ignore[no-untyped-def]
    only_fts = {"vector": 0, "recency": 0, "salience": 0, "time": 0}
    result = search(store, query, embedder=embedder, weights=only_fts, scope=scope, limit=40)
    return [hit.path for hit in result.hits], result.params[0]


def test_fts_arm_takes_the_best_chunks_first_and_matches_every_match_in_the_default_scope(
    indexed, hash_embedder
):  # type: ignore[no-untyped-def]
    # 600 files match: more than the 400 best chunks the shortcut takes.
    store = indexed(many_files(600))
    paths, match = fts_only_paths(store, "amber coral", ScopeSpec(), hash_embedder)
    assert paths == every_match_by_best_chunk(store, match)[:40]


def test_fts_arm_stays_exact_when_the_scope_is_narrow(indexed, hash_embedder):  # type: ignore[no-untyped-def]
    # Only 30 of 600 files are in scope, so the 400 best chunks hold too few of them and the
    # statement must group every match in scope instead.
    store = indexed(many_files(600))
    spec = ScopeSpec(tags=("t7",))
    paths, match = fts_only_paths(store, "amber coral", spec, hash_embedder)
    in_scope = {f"f{i:03d}.md" for i in range(600) if i % 20 == 7}
    expected = [path for path in every_match_by_best_chunk(store, match) if path in in_scope]
    assert len(expected) == 30
    assert paths == expected


def test_an_empty_weights_override_means_the_registrys_weights_over_a_configured_store(
    indexed, hash_embedder
):  # type: ignore[no-untyped-def]
    store = indexed(
        {
            ".memsift/config.toml": "[weights]\nfts = 0\nvector = 3.0\n",
            "a.md": memory("Port", "PgBouncer listens on 6432"),
            "b.md": memory("Other", "the listener of another service"),
        }
    )
    configured = search(store, "PgBouncer listens", embedder=hash_embedder)
    assert "fts" in configured.arms_dropped
    registry = search(store, "PgBouncer listens", embedder=hash_embedder, weights={})
    assert "fts" in registry.arms_fired and "fts" not in registry.arms_dropped
    for hit in registry.hits:  # --explain's contributions are the scores the SQL computed
        assert hit.score == pytest.approx(sum(a.contribution for a in hit.arms.values()))
        if "vector" in hit.arms:
            rank = hit.arms["vector"].rank
            assert hit.arms["vector"].contribution == pytest.approx(1.0 / (RRF_K + rank))
