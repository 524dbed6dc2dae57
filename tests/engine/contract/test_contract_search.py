"""The search contract, on SQLite and on PostgreSQL: what a hit carries, in what order, how many,
what the statement binds, and that --explain's contributions are the scores the SQL computed.

Every test runs once per backend (the ``backend`` fixture). Both rank full text by BM25, but over
different tokenizers (FTS5's porter, PostgreSQL's parser and Snowball), so where a test is about
full text it asserts what both
must honour (a memory holding every term comes first, a focused note beats a long file that
only mentions the words) rather than an exact order.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from backends import memory
from engine.indexing.indexer import index_store
from engine.ranking.assemble import RRF_K
from engine.ranking.scope import ScopeSpec
from engine.search import CANDIDATE_LIMIT, Searcher, search

# --- what a hit carries ----------------------------------------------------------------------


def test_a_hit_carries_its_path_title_kind_date_snippet_and_arms(indexed, hash_embedder):
    store = indexed(
        {
            "infra/staging-db.md": memory(
                "Staging database credentials rotate monthly",
                "The staging database password rotates monthly. The port is 5433.",
                kind="semantic",
                event_at="2026-10-03",
            ),
            "people/priya.md": memory("Priya Raman", "Priya owns the flaky test dashboard."),
        }
    )
    result = search(store, "staging database port", embedder=hash_embedder)
    hit = result.hits[0]
    assert (hit.path, hit.title, hit.kind) == (
        "infra/staging-db.md",
        "Staging database credentials rotate monthly",
        "semantic",
    )
    assert hit.event_at is not None and hit.event_at.startswith("2026-10-03")
    assert "5433" in hit.snippet
    assert result.fts_form == "all"
    assert {"fts", "vector", "recency"} <= set(result.arms_fired)
    assert 0.0 <= hit.similarity <= 1.0 + 1e-6


def test_hit_reports_rank_and_contribution_per_arm(indexed, hash_embedder):
    store = indexed({"a.md": memory("A", "alpha"), "b.md": memory("B", "beta")})
    hit = search(store, "alpha", embedder=hash_embedder).hits[0]
    assert hit.path == "a.md"
    assert hit.arms["fts"].rank == 1
    assert hit.arms["fts"].contribution == pytest.approx(1.0 / (RRF_K + 1))
    assert hit.score == pytest.approx(sum(a.contribution for a in hit.arms.values()))


def test_hits_come_best_first_and_each_score_is_the_sum_of_its_contributions(
    indexed, hash_embedder
):
    store = indexed(
        {f"n{i}.md": memory(f"Note {i}", f"deploy pipeline {'step ' * i}") for i in range(12)}
    )
    hits = search(store, "deploy pipeline step", embedder=hash_embedder, limit=8).hits
    assert len(hits) == 8
    assert all(a.score >= b.score - 1e-12 for a, b in itertools.pairwise(hits))
    for hit in hits:
        assert hit.score == pytest.approx(sum(a.contribution for a in hit.arms.values()))
        assert all(arm.rank >= 1 for arm in hit.arms.values())


def test_the_limit_caps_the_hits_and_never_changes_their_order(indexed, hash_embedder):
    store = indexed({f"n{i}.md": memory(f"Note {i}", f"tea {'leaf ' * i}") for i in range(9)})
    many = [h.path for h in search(store, "tea leaf", embedder=hash_embedder, limit=9).hits]
    few = [h.path for h in search(store, "tea leaf", embedder=hash_embedder, limit=3).hits]
    assert len(many) == 9
    assert few == many[:3]


def test_limit_above_the_candidate_limit_returns_that_many_hits(indexed, hash_embedder):
    words = "red green blue cyan amber violet olive coral ivory slate".split()
    store = indexed(
        {
            f"f{i:03d}.md": memory(f"Note {i}", " ".join(words[(i * j) % 10] for j in range(8)))
            for i in range(120)
        }
    )
    result = search(store, "note", embedder=hash_embedder, limit=100, use_vector=False)
    assert len(result.hits) == 100


def test_snippet_highlights_query_words_and_stays_short(indexed, hash_embedder):
    long_body = "Intro sentence here. " * 40 + "The zeppelin docked at noon. " + "More. " * 40
    store = indexed({"a.md": memory("A", long_body)})
    snippet = search(store, "zeppelin", embedder=hash_embedder).hits[0].snippet
    assert "**zeppelin**" in snippet
    assert len(snippet.replace("**", "")) <= 302


# --- the statement and its numbered placeholders ---------------------------------------------


def match_text(backend, word: str) -> str:  # type: ignore[no-untyped-def]
    """One word as ?1 binds it: FTS5 text on SQLite, ``to_tsquery`` text on PostgreSQL."""
    return f'"{word}"' if backend.name == "sqlite" else f"'{word}'"


def test_dropped_vector_arm_leaves_other_placeholders_numbered(indexed, backend):
    store = indexed({"a.md": memory("Alpha", "alpha beta", kind="semantic")})
    result = search(store, "alpha", use_vector=False, scope=ScopeSpec(kinds=("semantic",)))
    assert "?4" not in result.sql
    assert all(f"?{n}" in result.sql for n in (1, 2, 3, 7))
    assert result.params == (
        match_text(backend, "alpha"), CANDIDATE_LIMIT, 10, None, None, None, '["semantic"]'
    )


def test_bound_tuple_stops_at_the_highest_placeholder(indexed, backend):
    store = indexed({"a.md": memory("Alpha", "alpha beta")})
    result = search(store, "alpha", use_vector=False)
    assert "?4" not in result.sql and "?5" not in result.sql
    assert result.params == (match_text(backend, "alpha"), CANDIDATE_LIMIT, 10)


def test_explain_shows_the_statement_and_every_bound_value_by_its_number(
    indexed, backend, hash_embedder
):
    store = indexed({"a.md": memory("Alpha", "alpha beta", kind="semantic")})
    result = search(store, "alpha", embedder=hash_embedder, scope=ScopeSpec(kinds=("semantic",)))
    shown = result.to_json(explain=True)
    assert shown["sql"] == result.sql and "?4" in result.sql
    # With a query vector the ranking is read down to the end of the candidate pool (?3:
    # two query arms, each offering ?2), for the no-answer rule; the hits are its first 10.
    assert shown["params"] == [
        match_text(backend, "alpha"),
        CANDIDATE_LIMIT,
        2 * CANDIDATE_LIMIT,
        f"<float32[{hash_embedder.dim}] query vector>",
        None,
        None,
        '["semantic"]',
    ]
    for hit, listed in zip(result.hits, shown["hits"], strict=True):
        assert listed["score"] == pytest.approx(
            sum(a["contribution"] for a in listed["arms"].values())
        )
        assert listed["score"] == hit.score


def test_configured_weights_are_inlined_in_the_statement(backend_store, hash_embedder):
    store = backend_store(
        {".memsift/config.toml": "[weights]\nrecency = 0.25\n", "a.md": memory("A", "alpha")}
    )
    index_store(store, embedder=hash_embedder)
    result = search(store, "alpha", embedder=hash_embedder)
    # Inlined as a literal (PostgreSQL's is cast to double precision), never bound.
    assert re.search(rf"0\.25( AS double precision\))? / \({RRF_K} \+ rank\)", result.sql)
    assert 0.25 not in result.params
    assert result.hits[0].arms["recency"].contribution == pytest.approx(0.25 / (RRF_K + 1))


def test_an_empty_weights_override_means_the_registrys_weights_over_a_configured_store(
    backend_store, hash_embedder
):
    store = backend_store(
        {
            ".memsift/config.toml": "[weights]\nfts = 0\nvector = 3.0\n",
            "a.md": memory("Port", "PgBouncer listens on 6432"),
            "b.md": memory("Other", "the listener of another service"),
        }
    )
    index_store(store, embedder=hash_embedder)
    configured = search(store, "PgBouncer listens", embedder=hash_embedder)
    assert "fts" in configured.arms_dropped
    registry = search(store, "PgBouncer listens", embedder=hash_embedder, weights={})
    assert "fts" in registry.arms_fired and "fts" not in registry.arms_dropped
    for hit in registry.hits:  # --explain's contributions are the scores the SQL computed
        assert hit.score == pytest.approx(sum(a.contribution for a in hit.arms.values()))
        if "vector" in hit.arms:
            rank = hit.arms["vector"].rank
            assert hit.arms["vector"].contribution == pytest.approx(1.0 / (RRF_K + rank))


# --- the full-text probe and ranking ---------------------------------------------------------

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


def test_the_term_dense_memory_outranks_the_one_mentioning_the_term_once(indexed, hash_embedder):
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


def test_a_huge_file_mentioning_everything_does_not_outrank_the_focused_note(indexed):
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


# --- the time arm ----------------------------------------------------------------------------


def test_a_query_naming_a_date_ranks_the_memory_of_that_day_by_the_time_arm(indexed, hash_embedder):
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


def test_a_query_naming_the_last_day_of_the_calendar_is_searched(indexed, hash_embedder):
    store = indexed({"a.md": memory("Pasta", "we made pasta", event_at="9999-12-31")})
    result = search(store, "what pasta did we make on 9999-12-31", embedder=hash_embedder)
    assert result.params[4:6] == ("9999-12-31 00:00:00", "9999-12-31 23:59:59")
    assert [(h.path, h.arms["time"].rank) for h in result.hits] == [("a.md", 1)]


# --- the vector arm is exact -----------------------------------------------------------------


def many_files(count: int) -> dict[str, str]:
    words = "red green blue cyan amber violet olive coral ivory slate".split()
    return {
        f"f{i:03d}.md": memory(
            f"Note {i}", " ".join(words[(i * j) % 10] for j in range(1, 9)), tags=f"[t{i % 20}]"
        )
        for i in range(count)
    }


@pytest.fixture
def many_store(indexed):  # type: ignore[no-untyped-def]
    return indexed(many_files(400))


def brute_force_distances(backend, store, embedder, query: str) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Each file's best-chunk cosine distance, computed in NumPy from the stored vectors."""
    q = embedder.embed([query])[0]
    best: dict[str, float] = {}
    for path, vector in backend.chunk_vectors(store):
        distance = 1.0 - float(np.asarray(vector) @ q)
        best[path] = min(best.get(path, 2.0), distance)
    return best


def assert_exact_order(ranked, distances, candidates, count):  # type: ignore[no-untyped-def]
    """``ranked`` is the ``count`` nearest of ``candidates``, nearest first (ties in any order)."""
    pool = sorted(candidates, key=lambda p: distances[p])
    assert len(ranked) == min(count, len(pool))
    cutoff = distances[pool[len(ranked) - 1]]
    assert all(distances[p] <= cutoff + 1e-5 for p in ranked)
    assert all(distances[a] <= distances[b] + 1e-5 for a, b in itertools.pairwise(ranked))


ONLY_VECTOR = {"fts": 0, "recency": 0, "salience": 0}


def test_vector_arm_matches_brute_force_in_the_default_scope(backend, many_store, hash_embedder):
    query = "amber coral violet"
    result = search(many_store, query, embedder=hash_embedder, weights=ONLY_VECTOR, limit=40)
    distances = brute_force_distances(backend, many_store, hash_embedder, query)
    assert_exact_order([h.path for h in result.hits], distances, set(distances), 40)


def test_vector_arm_stays_exact_when_the_scope_is_narrow(backend, many_store, hash_embedder):
    # Only 20 of 400 one-chunk files are in scope: a shortcut through the nearest chunks of
    # the whole store would miss most of them; only an exact search in scope ranks them all.
    query = "amber coral violet"
    result = search(
        many_store,
        query,
        embedder=hash_embedder,
        weights=ONLY_VECTOR,
        scope=ScopeSpec(tags=("t7",)),
        limit=40,
    )
    distances = brute_force_distances(backend, many_store, hash_embedder, query)
    in_scope = {f"f{i:03d}.md" for i in range(400) if i % 20 == 7}
    assert_exact_order([h.path for h in result.hits], distances, in_scope, 40)


# --- abstention ------------------------------------------------------------------------------


class TopicEmbedder:
    """Texts about tea point one way, everything else another: similarity is 1 or 0."""

    name, dim = "topic", 2

    def embed(self, texts):  # type: ignore[no-untyped-def]
        return np.array(
            [[1.0, 0.0] if "tea" in t.lower() else [0.0, 1.0] for t in texts], dtype=np.float32
        )


@pytest.fixture
def tea_store(backend_store):  # type: ignore[no-untyped-def]
    store = backend_store(
        {"a.md": memory("Tea", "green tea is brewed at 80 degrees"), "b.md": memory("Tea", "tea")}
    )
    index_store(store, embedder=TopicEmbedder())
    return store


def test_a_query_nothing_answers_is_abstained_with_no_hits(tea_store):
    result = search(tea_store, "quantum chromodynamics", embedder=TopicEmbedder())
    assert (result.abstained, result.hits, result.best_similarity) == (True, [], 0.0)
    assert "no answer" in result.notes[-1]


def test_the_no_answer_note_names_no_command_line_option(tea_store):
    """The note reaches MCP clients too, which have no --min-similarity to pass."""
    result = search(tea_store, "quantum chromodynamics", embedder=TopicEmbedder())
    assert result.notes[-1].endswith("(2 weaker hit(s) withheld)")
    assert "--" not in " ".join(result.notes)


@pytest.fixture
def coffee_first_store(backend_store):  # type: ignore[no-untyped-def]
    """Two memories about coffee that the words rank first, and one about tea that no query
    word matches but that is nearest in meaning to a question about steam (which
    TopicEmbedder reads as about tea), ranked third by fusion."""
    store = backend_store(
        {
            "c1.md": memory("Coffee", "coffee brewing coffee brewing at home"),
            "c2.md": memory("Coffee", "coffee brewing in the office"),
            "t.md": memory("Kettle", "a kettle of tea"),
        }
    )
    index_store(store, embedder=TopicEmbedder())
    return store


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_whether_a_search_answers_does_not_depend_on_its_limit(coffee_first_store, limit):
    """The no-answer rule judges the memory nearest in meaning even when it ranks below the
    hits returned, as the store's floor is measured over every chunk."""
    result = search(
        coffee_first_store,
        "coffee brewing steam",
        embedder=TopicEmbedder(),
        limit=limit,
        min_similarity=0.5,
    )
    assert (result.abstained, result.best_similarity) == (False, 1.0)
    assert [h.path for h in result.hits] == ["c1.md", "c2.md", "t.md"][:limit]


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_whether_a_search_answers_does_not_depend_on_its_limit_under_a_small_candidate_pool(
    coffee_first_store, limit
):
    """Each query arm offers ``candidate_limit`` candidates, so the fused ranking holds up to
    twice that many memories; the nearest in meaning may rank below the first
    ``candidate_limit`` of them (here below the coffee memory the words find)."""
    result = search(
        coffee_first_store,
        "coffee brewing steam",
        embedder=TopicEmbedder(),
        limit=limit,
        candidate_limit=1,
        min_similarity=0.5,
    )
    assert (result.abstained, result.best_similarity) == (False, 1.0)


@pytest.fixture
def big_tea_store(backend_store):  # type: ignore[no-untyped-def]
    """One memory about tea of five chunks under an embedding budget of two: chunks 0 and 4
    have a vector, the three between are found by full text only."""
    paragraphs = [
        " ".join(f"tea leaf {k} note {n} of the tea log" for n in range(40)) for k in range(5)
    ]
    store = backend_store(
        {
            ".memsift/config.toml": "[limits]\nembed_chunks_per_file = 2\n",
            "big.md": memory("Tea log", "\n\n".join(paragraphs)),
        }
    )
    index_store(store, embedder=TopicEmbedder())
    return store


def test_a_memory_over_the_embedding_budget_is_judged_by_its_closest_embedded_chunk(
    big_tea_store,
):
    result = search(big_tea_store, "quantum chromodynamics", embedder=TopicEmbedder())
    assert (result.abstained, result.best_similarity) == (True, 0.0)


def test_a_hit_over_the_embedding_budget_carries_its_similarity(big_tea_store):
    result = search(big_tea_store, "green tea", embedder=TopicEmbedder())
    assert [(h.path, h.similarity) for h in result.hits] == [("big.md", 1.0)]


def test_a_withheld_search_counts_only_the_hits_it_withheld(tea_store):
    result = search(tea_store, "quantum chromodynamics", embedder=TopicEmbedder(), limit=1)
    assert result.abstained is True
    assert result.notes[-1].endswith("(1 weaker hit(s) withheld)")


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


def test_the_configured_floor_is_read_from_config_toml(backend, tea_store):
    backend.configure(tea_store, "[limits]\nmin_similarity = 0\n")
    result = search(tea_store, "quantum chromodynamics", embedder=TopicEmbedder())
    assert result.abstained is False


def test_a_searcher_answers_many_queries_on_one_connection(indexed, hash_embedder):
    store = indexed({"a.md": memory("A", "alpha"), "b.md": memory("B", "beta")})
    with Searcher(store, embedder=hash_embedder) as searcher:
        firsts = [searcher.search(q).hits[0].path for q in ("alpha", "beta", "alpha")]
    assert firsts == ["a.md", "b.md", "a.md"]


# --- column prefixes -------------------------------------------------------------------------


@pytest.fixture
def parts(indexed):  # type: ignore[no-untyped-def]
    """The same words in a title, in a body, in a tag."""
    return indexed(
        {
            "cadence.md": memory("Release cadence", "We ship every second Tuesday."),
            "notes.md": memory("Weekly notes", "The release cadence came up again."),
            "tagged.md": memory("Calendar", "Dates of the year.", tags="[cadence]"),
        }
    )


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("title:cadence", {"cadence.md"}),
        ("body:cadence", {"notes.md"}),
        ("tags:cadence", {"tagged.md"}),
        ("tag:cadence", {"tagged.md"}),
        ("cadence", {"cadence.md", "notes.md", "tagged.md"}),
    ],
)
def test_a_column_prefix_finds_the_word_in_that_part_only(parts, query, found):
    result = search(parts, query, use_vector=False)
    assert ({hit.path for hit in result.hits}, result.notes) == (found, [])


def test_a_prefixed_phrase_must_occur_as_a_phrase_in_that_part(parts):
    hits = search(parts, 'body:"release cadence"', use_vector=False).hits
    assert [hit.path for hit in hits] == ["notes.md"]


def test_a_prefix_limits_only_the_word_after_it(parts):
    hits = search(parts, "title:release cadence", use_vector=False).hits
    assert [hit.path for hit in hits] == ["cadence.md"]


def test_a_column_prefix_is_never_a_query_word(indexed):
    store = indexed({"body.md": memory("Body", "The body of a page, not its title.")})
    result = search(store, "body:cadence title:cadence", use_vector=False)
    assert result.hits == []  # were "body" or "title" words, this memory would match


# --- copies take one place -------------------------------------------------------------------


def test_a_text_saved_twice_takes_one_place_and_lists_its_copy(indexed):
    text = memory("Pool size", "The connection pool holds forty sessions at most.")
    store = indexed(
        {
            "pool.md": text,
            "archive/pool-copy.md": text,
            "other.md": memory("Pool heating", "The swimming pool is heated in May."),
        }
    )
    result = search(store, "connection pool sessions")
    paths = [hit.path for hit in result.hits]
    first = result.hits[0]
    assert {first.path, *first.copies} == {"pool.md", "archive/pool-copy.md"}
    assert len(first.copies) == 1
    assert len(paths) == len(set(paths)) and not set(first.copies) & set(paths)


def test_a_markdown_page_and_its_html_copy_take_one_place(indexed):
    store = indexed(
        {
            "guide.md": "# Rotating keys\n\nRotate the **signing keys** every ninety days.\n",
            "guide.html": (
                "<html><head><title>Rotating keys</title></head><body>"
                "<p>Rotate the <b>signing keys</b> every ninety days.</p></body></html>"
            ),
            "other.md": memory("Lunch", "The canteen opens at noon."),
        }
    )
    result = search(store, "rotate signing keys")
    assert len(result.hits[0].copies) == 1
    assert {result.hits[0].path, *result.hits[0].copies} == {"guide.md", "guide.html"}


def test_different_texts_are_never_copies(indexed):
    store = indexed(
        {
            "a.md": memory("Port", "The staging database listens on port 5433."),
            "b.md": memory("Port", "The production database listens on port 5432."),
        }
    )
    result = search(store, "database port")
    assert all(hit.copies == [] for hit in result.hits) and len(result.hits) == 2
