"""The fused search on SQLite only: what rests on the index being files (a rebuilt index.db is
followed), on SQLite's own batches and on FTS5's bm25 (the full-text arm matches a reference
computed with bm25 directly).

The search contract both backends keep (hits, order, placeholders, drops and degradation,
abstention, salience, exact vectors) is in tests/engine/contract/, run once per backend.
"""

from __future__ import annotations

import apsw
import pytest

from backends import memory
from conftest import HashEmbedder
from engine.indexing.indexer import index_store
from engine.ranking.scope import ScopeSpec
from engine.search import Searcher, search


@pytest.fixture
def indexed(make_store, hash_embedder):  # type: ignore[no-untyped-def]
    def build(files: dict[str, str]):  # type: ignore[no-untyped-def]
        store = make_store(files)
        index_store(store, embedder=hash_embedder)
        return store

    return build


def many_files(count: int) -> dict[str, str]:
    words = "red green blue cyan amber violet olive coral ivory slate".split()
    return {
        f"f{i:03d}.md": memory(
            f"Note {i}", " ".join(words[(i * j) % 10] for j in range(1, 9)), tags=f"[t{i % 20}]"
        )
        for i in range(count)
    }


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


def test_a_searcher_finds_the_nearest_files_beside_its_statement(  # type: ignore[no-untyped-def]
    indexed, hash_embedder, monkeypatch
):
    """From its second search on (the vectors are then in memory), the statement takes the
    answer a worker made while the full-text arm ran, and the hits are the same either way."""
    from engine.sqlite import knn

    store = indexed(many_files(60))
    taken: list[bool] = []
    real = knn.computed_ahead

    def watched(*args):  # type: ignore[no-untyped-def]
        found = real(*args)
        taken.append(found is not None and found.k is not None)
        return found

    monkeypatch.setattr(knn, "computed_ahead", watched)
    with Searcher(store, embedder=hash_embedder) as searcher:
        first = searcher.search("amber coral")
        again = searcher.search("amber coral")
    assert taken == [False, True]
    assert [(h.path, h.score) for h in again.hits] == [(h.path, h.score) for h in first.hits]


def test_a_searcher_computes_nothing_ahead_on_vectors_a_write_has_replaced(  # type: ignore[no-untyped-def]
    indexed, hash_embedder, monkeypatch
):
    """After a write (``memsift index``, ``remember``, the server's watcher) the vectors in
    memory are stale: distances computed on them would be refused by the statement, after
    taking the product's turn from the statement's own. The search after next uses the
    worker again (its statement has loaded the new vectors)."""
    from engine.sqlite import knn

    store = indexed(many_files(60))
    computed: list[bytes] = []
    real = knn.compute_ahead

    def counted(matrix, query, k):  # type: ignore[no-untyped-def]
        computed.append(query)
        return real(matrix, query, k)

    monkeypatch.setattr(knn, "compute_ahead", counted)
    with Searcher(store, embedder=hash_embedder) as searcher:
        searcher.search("amber coral")  # the vectors are in memory
        (store.root / "new.md").write_text(memory("New", "amber coral teal"), encoding="utf-8")
        index_store(store, embedder=hash_embedder)
        searcher.search("amber coral")
        assert computed == []
        searcher.search("amber coral")
        assert len(computed) == 1


def test_a_searcher_sees_vectors_an_index_run_added_after_its_last_search(
    make_store, hash_embedder
):  # type: ignore[no-untyped-def]
    # Its verdict on the vector plane is kept between searches while the index is unchanged.
    store = make_store({"a.md": memory("A", "alpha"), "b.md": memory("B", "beta")})
    index_store(store, embed=False)
    with Searcher(store, embedder=hash_embedder) as searcher:
        assert "vector" in searcher.search("alpha").arms_dropped
        assert "vector" in searcher.search("alpha").arms_dropped
        index_store(store, embedder=hash_embedder)
        assert "vector" in searcher.search("alpha").arms_fired


def test_a_searchers_connection_plans_its_statements_without_the_values_bound(
    indexed, hash_embedder
):
    # Otherwise SQLite plans the fused statement anew each time a LIMIT's value is bound, that
    # is on every search, and the statement kept prepared between searches saves nothing.
    store = indexed({"a.md": memory("A", "alpha")})
    with Searcher(store, embedder=hash_embedder) as searcher:
        searcher.search("alpha")
        conn = searcher._session.conn  # type: ignore[attr-defined]
        assert conn.config(apsw.SQLITE_DBCONFIG_ENABLE_QPSG, -1) == 1


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
    from engine.indexing import index_run

    store = make_store({f"n{i}.md": memory(f"N{i}", f"body {i}") for i in range(10)})
    monkeypatch.setattr(index_run, "EMBED_BATCH", 3)
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
    from engine.indexing import index_run

    store = make_store({f"n{i}.md": memory(f"N{i}", f"body {i}") for i in range(10)})
    monkeypatch.setattr(index_run, "EMBED_BATCH", 4)
    with pytest.raises(Killed):
        index_store(store, embedder=EmbedderThatDies(batches=1))
    index_store(store, embed=False)
    result = search(store, "body", embedder=hash_embedder)
    assert "4 of 10 chunks" in result.arms_dropped["vector"]


def every_match_by_best_chunk(store, match: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The reference fts order: every matching chunk grouped by file, best bm25 first."""
    from engine.sqlite.db import open_index

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
