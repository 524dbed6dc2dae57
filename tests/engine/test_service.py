"""The server's core without the protocol: bounded search answers, paging reads, refusals."""

from __future__ import annotations

import pytest

from engine import state as state_plane
from engine.agents.service import (
    BUDGET_BYTES,
    MemoryService,
    SearchArgs,
    ServiceError,
    bounded_answer,
    cut,
    size_of,
)
from engine.errors import Database, DatabaseError, Problem
from engine.indexing.indexer import index_store
from engine.search import ArmHit, Hit, SearchResult


def result_with(hits: list[Hit], **extra: object) -> SearchResult:
    result = SearchResult(
        query="q",
        hits=hits,
        arms_fired=["fts"],
        arms_dropped={},
        fts_form="all",
        degraded=False,
        scope="default",
    )
    for name, value in extra.items():
        setattr(result, name, value)
    return result


def hit(number: int, snippet_words: int = 60) -> Hit:
    return Hit(
        path=f"notes/memory-{number:03}.md",
        title=f"Memory number {number} with a title of ordinary length",
        kind="semantic",
        event_at="2026-10-03 00:00:00",
        score=0.03 - number * 1e-4,
        snippet=" ".join(["word"] * snippet_words)[:300],
        arms={"fts": ArmHit(number + 1, 0.01), "vector": ArmHit(number + 2, 0.01)},
    )


def test_a_small_answer_is_returned_whole():
    answer = bounded_answer(result_with([hit(1), hit(2)]))
    assert answer["truncated"] is None
    assert answer["hits"][0]["snippet"] == hit(1).snippet
    assert answer["hits"][0]["ranks"] == {"fts": 2, "vector": 3}


def test_a_large_answer_is_cut_to_the_budget_and_says_what_went():
    answer = bounded_answer(result_with([hit(n) for n in range(50)]))
    assert size_of(answer) <= BUDGET_BYTES
    truncated = answer["truncated"]
    assert truncated["snippet_chars"] < 300
    assert len(answer["hits"]) + truncated["hits_dropped"] == 50


def test_fifty_hits_keep_their_snippets_and_the_answer_says_how_many_more_exist():
    answer = bounded_answer(result_with([hit(n) for n in range(50)]))
    hits, truncated = answer["hits"], answer["truncated"]
    assert all(len(h["snippet"]) >= 100 for h in hits)
    assert truncated["snippet_chars"] == 120 and truncated["hits_dropped"] > 0
    assert f"{truncated['hits_dropped']} more hit(s) left out" in answer["notes"][-1]
    assert size_of(answer) <= BUDGET_BYTES


def test_a_budget_too_small_for_one_snippet_cuts_snippets_rather_than_answer_nothing():
    answer = bounded_answer(result_with([hit(n) for n in range(5)]), budget=700)
    assert size_of(answer) <= 700
    assert len(answer["hits"]) >= 1


def test_snippets_are_shortened_before_any_hit_is_dropped():
    answer = bounded_answer(result_with([hit(n) for n in range(20)]))
    assert answer["truncated"]["hits_dropped"] == 0
    assert len(answer["hits"]) == 20


def test_the_abstained_flag_is_passed_through_when_the_result_has_one():
    assert bounded_answer(result_with([], abstained=True))["abstained"] is True
    assert bounded_answer(result_with([]))["abstained"] is False


def test_cut_ends_at_a_word_boundary_with_an_ellipsis():
    assert cut("alpha beta gamma delta", 12) == "alpha beta…"
    assert cut("short", 12) == "short"
    assert cut("anything", 0) == ""


@pytest.fixture
def service(make_store):  # type: ignore[no-untyped-def]
    store = make_store(
        {
            ".memsift/config.toml": '[embedder]\nmodel = "none"\n',
            "facts/port.md": "---\ntitle: Port\n---\nStaging listens on 6432.\n",
        }
    )
    index_store(store)
    return MemoryService(store)


@pytest.mark.parametrize("limit", [0, 51])
def test_search_refuses_a_limit_out_of_range(service, limit):
    with pytest.raises(ServiceError, match="between 1 and 50"):
        service.search(SearchArgs("port", limit=limit))


def test_search_refuses_an_empty_query(service):
    with pytest.raises(ServiceError, match="query is empty"):
        service.search(SearchArgs("   "))


def test_read_counts_only_the_first_page(service):
    assert service.read("facts/port.md", 0, 10)["access_count"] == 1
    assert service.read("facts/port.md", 10, 10)["access_count"] is None
    assert service.read("facts/port.md")["access_count"] == 2


def test_read_reports_why_the_index_skips_a_file(service):
    (service.store.root / "facts" / "broken.md").write_text("---\ntitle: [x\n---\nBody.\n")
    data = service.read("facts/broken.md")
    assert data["problem"].startswith("the index skips this file: front matter is not valid")
    assert data["front_matter"] == {}


def test_remember_of_a_task_notes_that_tasks_are_out_of_default_searches(service):
    data = service.remember("Renew the TLS cert", "Before November.", "task", None, None)
    assert data["path"] == "tasks/renew-the-tls-cert.md"
    assert data["notes"] == ["tasks are out of default searches; search with kinds=['task']"]


def test_status_without_an_index_says_so(make_store):
    data = MemoryService(make_store({"a.md": "A.\n"})).status()
    assert data["files"] == 0
    assert "memsift index" in data["index"]


def test_remember_with_the_index_locked_answers_with_the_path_not_an_error(service, index_locked):
    data = service.remember("Pager", "Ana carries the pager.", "semantic", None, None)
    assert (data["path"], data["indexed"], data["embedded"]) == ("facts/pager.md", False, False)
    assert "index.db" in data["notes"][0] and "do not write it again" in data["notes"][0]
    assert (service.store.root / "facts" / "pager.md").is_file()


def test_read_in_a_read_only_store_gives_the_memory_and_says_the_read_was_not_counted(
    service, monkeypatch
):
    def read_only(store, *_args: object) -> None:  # type: ignore[no-untyped-def]
        raise DatabaseError(
            Database.STATE, str(store.state_path), Problem.READ_ONLY, culprit="/ro/.memsift"
        )

    monkeypatch.setattr(state_plane, "record_access", read_only)
    data = service.read("facts/port.md")
    assert "Staging listens on 6432." in data["text"]
    assert data["access_count"] == 0
    assert data["notes"] == ["the access was not counted: /ro/.memsift is read-only"]


def test_a_damaged_state_database_is_an_error_naming_it(service):
    service.store.state_path.write_bytes(b"this is not a database, it is garbage" * 200)
    with pytest.raises(DatabaseError, match=r"state\.db"):
        service.read("facts/port.md")


# --- missing vectors are said, with what fills them ------------------------------------------


def test_the_first_answer_on_a_store_without_vectors_says_what_fills_them(make_store):
    store = make_store({"a.md": "# Alpha\n\nThe alpha runbook says rotate keys monthly.\n"})
    index_store(store, embed=False)  # the default model is configured, no vector computed
    service = MemoryService(store)
    try:
        first = service.search(SearchArgs("rotate keys"))
        second = service.search(SearchArgs("rotate keys"))
    finally:
        service.close()
    assert first["degraded"] is True and "vector" in first["arms_dropped"]
    assert any("`memsift index` fills them" in note for note in first["notes"])
    assert not any("fills them" in note for note in second["notes"])


def test_status_says_how_many_chunks_wait_for_a_vector_and_what_fills_them(make_store):
    store = make_store({"a.md": "# Alpha\n\nalpha\n", "b.md": "# Beta\n\nbeta\n"})
    index_store(store, embed=False)
    service = MemoryService(store)
    try:
        info = service.status()
    finally:
        service.close()
    assert info["vectors_pending"] == info["chunks"] == 2
    assert "2 of 2 chunks have no vector yet" in str(info["vectors_note"])
    assert "memsift serve" in str(info["vectors_note"])


def test_a_lexical_store_has_no_vectors_pending(make_store):
    store = make_store({".memsift/config.toml": '[embedder]\nmodel = "none"\n', "a.md": "alpha\n"})
    index_store(store)
    assert MemoryService(store).status()["vectors_pending"] == 0


@pytest.mark.parametrize("budget", range(700, 4000, 97))
def test_the_note_about_dropped_hits_never_pushes_an_answer_over_its_budget(budget):
    answer = bounded_answer(result_with([hit(n) for n in range(30)], notes=["a note"]), budget)
    assert size_of(answer) <= budget and answer["hits"]
    dropped = answer["truncated"]["hits_dropped"]
    assert answer["notes"][0] == "a note" and len(answer["hits"]) + dropped == 30


@pytest.mark.parametrize("query", ["title:", "tags: !", "body:\\"])
def test_search_refuses_a_column_prefix_with_no_word_after_it(service, query):
    with pytest.raises(ServiceError, match="limits the word after it to a column"):
        service.search(SearchArgs(query))
