"""The per-file embedding budget, on SQLite and on PostgreSQL: a file over
``[limits] embed_chunks_per_file`` chunks gets at most that many vectors, every ``s``-th chunk
from chunk 0 (``s`` a power of two, :mod:`engine.indexing.budget`); the rest are found by full
text, counted by status as full-text only, and not "missing" (the store is not degraded for
ever); a chunk left out whose text another chunk embeds shares that vector; a vector the rule no
longer covers (a lowered budget, a file that grew) is dropped by the next run, full or
incremental; what a run embedded and reused is reported."""

from __future__ import annotations

import pytest

from backends import memory
from engine.backend import open_backend
from engine.files.chunking import chunk_text
from engine.indexing.budget import embeddable, embeddable_sql
from engine.indexing.incremental import index_paths
from engine.indexing.indexer import index_store
from engine.search import search
from engine.status import store_status

BUDGET = 2
BUDGET_CONFIG = f'[embedder]\nmodel = "test-hash"\n[limits]\nembed_chunks_per_file = {BUDGET}\n'


def long_body(parts: int, word: str = "part") -> str:
    """A body that chunks into ``parts`` chunks, the k-th naming ``{word}{k}`` throughout (each
    paragraph one sentence of over 1,000 characters, so it closes a chunk of its own)."""
    paragraphs = [
        " ".join(f"clause {n} of the {word}{k} section names {word}{k}" for n in range(30))
        for k in range(parts)
    ]
    return "\n\n".join(paragraphs)


def test_long_body_chunks_into_the_parts_asked_for() -> None:
    assert len(chunk_text(long_body(5))) == 5


def embedded_seqs(backend, store) -> list[int]:  # type: ignore[no-untyped-def]
    """The chunk numbers of the store's chunks that have a vector (the vector arm reads those)."""
    rows = backend.rows(
        store, "SELECT c.seq FROM chunks c JOIN embeddings e ON e.hash = c.hash ORDER BY c.seq"
    )
    return [int(seq) for (seq,) in rows]


def test_a_file_over_the_budget_embeds_chunks_spread_over_its_length(backend_store, hash_embedder):
    store = backend_store(
        {".memsift/config.toml": BUDGET_CONFIG, "big.md": memory("Big", long_body(5))}
    )
    report = index_store(store, embedder=hash_embedder)
    assert (report.embedded, report.past_budget) == (BUDGET, 5 - BUDGET)
    chunks = [t for t in hash_embedder.calls if t.startswith("Big\n")]  # not the floor's probes
    assert sorted(t.split()[5] for t in chunks) == ["part0", "part4"]  # a stride of 4


def test_the_sql_rule_chooses_the_chunks_the_python_rule_does(backend, backend_store):
    store = backend_store({"a.md": memory("A", "alpha")})
    index_store(store)
    pairs = (
        "WITH RECURSIVE k(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM k WHERE x < 260) "
        "SELECT a.x AS seq, b.x AS n FROM k AS a, k AS b WHERE a.x < b.x"
    )
    for budget in (1, 3, 32, 2**63 - 1):
        rows = backend.rows(
            store,
            f"SELECT c.seq, c.n FROM ({pairs}) AS c WHERE {embeddable_sql(budget, chunks='c.n')}",
        )
        chosen = {(int(seq), int(n)) for seq, n in rows}
        wanted = {(q, n) for n in range(1, 261) for q in range(n) if embeddable(q, n, budget)}
        assert chosen == wanted, budget


def test_status_counts_chunks_past_the_budget_as_full_text_only(backend_store, hash_embedder):
    store = backend_store(
        {".memsift/config.toml": BUDGET_CONFIG, "big.md": memory("Big", long_body(5))}
    )
    index_store(store, embedder=hash_embedder)
    info = store_status(store)
    assert (info["chunks"], info["embeddable_chunks"], info["embedded_chunks"]) == (5, 2, 2)
    assert info["full_text_only_chunks"] == 3
    assert info["vector_coverage"] == 1.0 and info["vectors_pending"] == 0
    assert "embed_chunks_per_file" in str(info["full_text_only_note"])


def test_a_store_with_chunks_past_the_budget_is_not_degraded(backend_store, hash_embedder):
    store = backend_store(
        {".memsift/config.toml": BUDGET_CONFIG, "big.md": memory("Big", long_body(5))}
    )
    index_store(store, embedder=hash_embedder)
    result = search(store, "part3", embedder=hash_embedder)
    assert "vector" not in result.arms_dropped and not result.degraded
    assert [h.path for h in result.hits] == ["big.md"]  # a chunk with no vector, by full text


def test_a_chunk_past_the_budget_shares_the_vector_another_file_embeds(
    backend, backend_store, hash_embedder
):
    body = long_body(3)
    middle = chunk_text(body)[1]  # the chunk a stride of 2 leaves out
    store = backend_store(
        {
            ".memsift/config.toml": BUDGET_CONFIG,
            "big.md": memory("Same", body),
            "small.md": memory("Same", middle),
        }
    )
    report = index_store(store, embedder=hash_embedder)
    # big's second chunk is past the budget but holds small's text: it has a vector, so the run
    # counts it as status does, not as full text only.
    assert report.embedded == 3 and report.past_budget == 0
    vectors = backend.rows(
        store,
        "SELECT count(*) FROM chunks c JOIN embeddings e ON e.hash = c.hash",
    )
    assert vectors == [(4,)]
    assert store_status(store)["full_text_only_chunks"] == 0


def test_raising_the_budget_embeds_the_rest_on_the_next_run(backend, backend_store, hash_embedder):
    store = backend_store(
        {".memsift/config.toml": BUDGET_CONFIG, "big.md": memory("Big", long_body(5))}
    )
    index_store(store, embedder=hash_embedder)
    backend.configure(store, BUDGET_CONFIG.replace(f"= {BUDGET}", "= 5"))
    assert store_status(store)["vectors_pending"] == 3
    report = index_store(store, embedder=hash_embedder)
    assert report.embedded == 3
    assert store_status(store)["full_text_only_chunks"] == 0
    assert embedded_seqs(backend, store) == [0, 1, 2, 3, 4]


def test_lowering_the_budget_drops_the_vectors_it_no_longer_covers(
    backend, backend_store, hash_embedder
):
    config = BUDGET_CONFIG.replace(f"= {BUDGET}", "= 5")
    store = backend_store({".memsift/config.toml": config, "big.md": memory("Big", long_body(5))})
    index_store(store, embedder=hash_embedder)
    backend.configure(store, BUDGET_CONFIG)
    index_store(store, embedder=hash_embedder)
    assert embedded_seqs(backend, store) == [0, 4]
    assert store_status(store)["full_text_only_chunks"] == 3


def test_an_incremental_run_after_the_budget_was_lowered_drops_every_file_s_uncovered_vectors(
    backend, backend_store, hash_embedder
):
    config = BUDGET_CONFIG.replace(f"= {BUDGET}", "= 5")
    store = backend_store({".memsift/config.toml": config, "big.md": memory("Big", long_body(5))})
    index_store(store, embedder=hash_embedder)
    backend.configure(store, BUDGET_CONFIG)
    (store.root / "note.md").write_text(memory("Note", "a new note"), encoding="utf-8")
    index_paths(store, ["note.md"], embedder=hash_embedder)  # what a watcher or remember runs
    assert [seq for seq in embedded_seqs(backend, store)] == [0, 0, 4]  # note's chunk, big's two


def test_a_file_that_grows_within_its_stride_embeds_only_its_new_chosen_chunks(
    backend, backend_store, hash_embedder
):
    store = backend_store(
        {".memsift/config.toml": BUDGET_CONFIG, "big.md": memory("Big", long_body(3))}
    )
    index_store(store, embedder=hash_embedder)  # 3 chunks, a stride of 2: chunks 0 and 2
    (store.root / "big.md").write_text(memory("Big", long_body(4)), encoding="utf-8")
    report = index_paths(store, ["big.md"], embedder=hash_embedder)
    assert report.embedded == 0 and embedded_seqs(backend, store) == [0, 2]


def test_a_file_whose_stride_doubles_loses_the_vectors_it_no_longer_chooses(
    backend, backend_store, hash_embedder
):
    store = backend_store(
        {".memsift/config.toml": BUDGET_CONFIG, "big.md": memory("Big", long_body(4))}
    )
    index_store(store, embedder=hash_embedder)  # 4 chunks, a stride of 2: chunks 0 and 2
    (store.root / "big.md").write_text(memory("Big", long_body(5)), encoding="utf-8")
    report = index_paths(store, ["big.md"], embedder=hash_embedder)
    assert report.embedded == 1 and embedded_seqs(backend, store) == [0, 4]  # a stride of 4


def vectors_of(backend, store, path: str) -> list[int]:  # type: ignore[no-untyped-def]
    """The chunk numbers of the file at ``path`` that have a vector the vector arm reads."""
    rows = backend.rows(
        store,
        "SELECT c.seq FROM chunks c JOIN files f ON f.id = c.file_id "
        f"JOIN embeddings e ON e.hash = c.hash WHERE f.path = '{path}' ORDER BY c.seq",
    )
    return [int(seq) for (seq,) in rows]


@pytest.fixture
def shared_middle(backend_store, hash_embedder):  # type: ignore[no-untyped-def]
    """big.md (3 chunks, a stride of 2) whose left-out middle chunk shares the vector of
    small.md, a file within the budget holding the same text under the same title."""
    body = long_body(3)
    store = backend_store(
        {
            ".memsift/config.toml": BUDGET_CONFIG,
            "big.md": memory("Same", body),
            "small.md": memory("Same", chunk_text(body)[1]),
        }
    )
    index_store(store, embedder=hash_embedder)
    return store


def test_a_chunk_past_the_budget_loses_the_shared_vector_when_its_holder_changes(
    backend, shared_middle, hash_embedder
):
    assert vectors_of(backend, shared_middle, "big.md") == [0, 1, 2]  # the middle shares
    (shared_middle.root / "small.md").write_text(memory("Other", "other words"), encoding="utf-8")
    index_paths(shared_middle, ["small.md"], embedder=hash_embedder)  # a watcher's run
    assert vectors_of(backend, shared_middle, "big.md") == [0, 2]


def test_a_chunk_past_the_budget_loses_the_shared_vector_when_its_holder_is_deleted(
    backend, shared_middle, hash_embedder
):
    (shared_middle.root / "small.md").unlink()
    index_paths(shared_middle, ["small.md"], embedder=hash_embedder)
    assert vectors_of(backend, shared_middle, "big.md") == [0, 2]


def test_a_run_interrupted_after_the_budget_was_lowered_leaves_no_uncovered_vector(
    backend, backend_store, hash_embedder, monkeypatch
):
    """Searches run while a run embeds, and after one is stopped: the vectors a lowered
    budget no longer covers are gone before the first new vector is computed."""
    monkeypatch.setattr("engine.indexing.index_run.EMBED_BATCH", 1)
    config = BUDGET_CONFIG.replace(f"= {BUDGET}", "= 5")
    store = backend_store({".memsift/config.toml": config, "big.md": memory("Big", long_body(5))})
    index_store(store, embedder=hash_embedder)
    backend.configure(store, BUDGET_CONFIG)
    (store.root / "new.md").write_text(memory("New", "a new note"), encoding="utf-8")
    with pytest.raises(KeyboardInterrupt):
        index_store(store, embedder=FailingAfter(hash_embedder, good=0))
    assert vectors_of(backend, store, "big.md") == [0, 4]
    (store.root / "note.md").write_text(memory("Note", "a later note"), encoding="utf-8")
    index_paths(store, ["note.md"], embedder=hash_embedder)  # what remember runs next
    assert vectors_of(backend, store, "big.md") == [0, 4]


def test_a_watcher_run_stopped_while_embedding_a_grown_file_leaves_no_uncovered_vector(
    backend, backend_store, hash_embedder
):
    store = backend_store(
        {".memsift/config.toml": BUDGET_CONFIG, "big.md": memory("Big", long_body(4))}
    )
    index_store(store, embedder=hash_embedder)  # a stride of 2: chunks 0 and 2
    (store.root / "big.md").write_text(memory("Big", long_body(5)), encoding="utf-8")
    with pytest.raises(KeyboardInterrupt):
        index_paths(store, ["big.md"], embedder=FailingAfter(hash_embedder, good=0))
    assert vectors_of(backend, store, "big.md") == [0]  # a stride of 4; chunk 4 not yet


def test_identical_chunks_of_two_files_are_embedded_once_and_reported_reused(
    backend_store, hash_embedder
):
    store = backend_store(
        {
            "a.md": memory("Licence", "The same boilerplate text."),
            "b.md": memory("Licence", "The same boilerplate text."),
        }
    )
    report = index_store(store, embedder=hash_embedder)
    assert (report.embedded, report.reused) == (1, 1)
    summary = report.summary()
    assert (summary["embedded"], summary["reused"], summary["past_budget"]) == (1, 1, 0)


def test_a_new_file_whose_text_is_already_embedded_costs_no_embedding(backend_store, hash_embedder):
    store = backend_store({"a.md": memory("Licence", "The same boilerplate text.")})
    index_store(store, embedder=hash_embedder)
    (store.root / "copy.md").write_text(memory("Licence", "The same boilerplate text."))
    report = index_store(store, embedder=hash_embedder)
    assert (report.embedded, report.reused) == (0, 1)


class FailingAfter:
    """An embedder that embeds ``good`` batches of chunks, then fails: a run killed midway."""

    def __init__(self, inner, good: int) -> None:  # type: ignore[no-untyped-def]
        self.inner, self.good = inner, good
        self.name, self.dim = inner.name, inner.dim

    def embed(self, texts):  # type: ignore[no-untyped-def]
        if self.good <= 0:
            raise KeyboardInterrupt
        self.good -= 1
        return self.inner.embed(texts)


def test_a_rerun_after_an_interrupted_run_says_it_resumes_and_embeds_only_the_rest(
    backend_store, hash_embedder, monkeypatch
):
    monkeypatch.setattr("engine.indexing.index_run.EMBED_BATCH", 1)
    store = backend_store(
        {
            ".memsift/config.toml": BUDGET_CONFIG.replace(f"= {BUDGET}", "= 10"),
            "big.md": memory("Big", long_body(3)),
        }
    )
    with pytest.raises(KeyboardInterrupt):
        index_store(store, embedder=FailingAfter(hash_embedder, good=1))
    said: list[tuple[str, int, int]] = []
    report = index_store(store, embedder=hash_embedder, progress=lambda *p: said.append(p))
    assert ("resume", 1, 3) in said
    assert report.embedded == 2 and said.index(("resume", 1, 3)) < said.index(("embed", 1, 2))


def test_a_run_after_a_finished_one_does_not_say_it_resumes(backend_store, hash_embedder):
    store = backend_store({".memsift/config.toml": BUDGET_CONFIG, "a.md": memory("A", "alpha")})
    index_store(store, embedder=hash_embedder)
    (store.root / "b.md").write_text(memory("B", "beta"))
    said: list[tuple[str, int, int]] = []
    index_store(store, embedder=hash_embedder, progress=lambda *p: said.append(p))
    assert [p for p in said if p[0] == "resume"] == []
    assert ("embed", 1, 1) in said


def test_the_coverage_test_counts_every_chunk_of_the_store_not_those_within_the_budget(
    backend_store, hash_embedder
):
    # SQLite counted the chunks the budget embeds, PostgreSQL every chunk: the two backends
    # weighed a query's words apart, and judged a store of 100 chunks or not apart
    store = backend_store(
        {".memsift/config.toml": BUDGET_CONFIG, "big.md": memory("Big", long_body(5))}
    )
    index_store(store, embedder=hash_embedder)
    session = open_backend(store).open_search(store)
    session.open()
    try:
        assert session.chunk_counts([("part1", False)]) == ({("part1", False): 1}, 5)
    finally:
        session.close()
