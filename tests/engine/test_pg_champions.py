"""On PostgreSQL the fts arm scores a pre-selection of chunks once the store has champion lists.

A word held by more than ``COMMON`` chunks keeps its ``DEPTH`` best chunks by its part of BM25
(:mod:`engine.pg.champions`); a search scores exactly the lists of its common words, every chunk
of its other words, and every chunk written since the lists were made. The tests shrink both
numbers so a store of a dozen notes has lists, and check the pre-selection against the exact
scan the arm falls back to without them, through every write path.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import psycopg
import pytest
from test_freshness import WAIT_S, eventually

from engine.agents.write import forget, remember
from engine.files.store import open_store
from engine.indexing.incremental import index_paths
from engine.indexing.indexer import index_store
from engine.pg import champions
from engine.pg.driver import PgError
from engine.search import search
from engine.status import store_status

#: Every note holds "cluster", as often as its number says, in a body of its own length; a few
#: hold "backup" too. So "cluster" is common (it gets a list) and "backup" is rare.
NOTES = {
    f"note-{number:02d}.md": (
        f"---\ntitle: Note {number}\n---\n"
        + "cluster " * (1 + number % 4)
        + "racks fans cables power disks " * (1 + number % 5)
        + ("backup plan. " if number % 3 == 0 else "")
    )
    for number in range(12)
}
FTS_ONLY = {"vector": 0.0, "recency": 0.0, "salience": 0.0, "time": 0.0}
#: Few enough files asked for that the pre-selection (four chunks of "cluster") has them.
WANTED = 3


@pytest.fixture
def lists(monkeypatch: pytest.MonkeyPatch) -> None:
    """Champion lists for any word held by more than 4 chunks, 4 chunks deep."""
    monkeypatch.setattr(champions, "COMMON", 4)
    monkeypatch.setattr(champions, "DEPTH", 4)


@pytest.fixture(autouse=True)
def settled(pg_url: str) -> Iterator[None]:
    """No rebuild behind a write outlives its test (its database is dropped after it)."""
    yield
    assert champions.settle(WAIT_S)


@pytest.fixture
def kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lists are not remade by the writes of the test (the drift they allow is tested)."""
    monkeypatch.setattr(champions, "STALE_SHARE", 1.0)


@pytest.fixture
def notes(make_store, pg_url, monkeypatch, lists):  # type: ignore[no-untyped-def]
    """The notes indexed lexically on PostgreSQL, with champion lists."""
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    store = make_store(NOTES)
    index_store(store, embed=False)
    return store


def ranking(store, query: str) -> list[str]:  # type: ignore[no-untyped-def]
    found = search(store, query, limit=WANTED, candidate_limit=WANTED, weights=FTS_ONLY)
    return [hit.path for hit in found.hits]


def sql(url: str, statement: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    with psycopg.connect(url, options="-c search_path=memsift") as conn:
        rows = conn.execute(statement, params or None)
        return rows.fetchall() if rows.description else []


def exact_ranking(store, url: str, query: str) -> list[str]:  # type: ignore[no-untyped-def]
    """What the arm ranks with no lists (every matching chunk scored); the lists are put back."""
    kept = sql(url, "SELECT key, value FROM meta WHERE key LIKE 'fts_champions%'")
    sql(url, "DELETE FROM meta WHERE key LIKE 'fts_champions%'")
    try:
        return ranking(store, query)
    finally:
        for key, value in kept:
            sql(url, "INSERT INTO meta(key, value) VALUES (%s, %s)", (key, value))


def listed(url: str, word: str) -> list[int]:
    rows = sql(url, "SELECT chunks FROM fts_champions WHERE lexeme = %s", (word,))
    return list(rows[0][0]) if rows else []


def test_an_index_run_lists_the_best_chunks_of_a_common_word_only(notes, pg_url):  # type: ignore[no-untyped-def]
    assert len(listed(pg_url, "cluster")) == 4
    assert listed(pg_url, "backup") == []  # four notes hold it: not common


@pytest.mark.parametrize("query", ["cluster", "cluster backup", "cluster racks"])
def test_the_pre_selection_ranks_as_the_exact_scan(notes, pg_url, query):  # type: ignore[no-untyped-def]
    assert ranking(notes, query) == exact_ranking(notes, pg_url, query)


def test_a_search_scores_only_the_listed_chunks_of_a_common_word(notes, pg_url):  # type: ignore[no-untyped-def]
    # The lists decide what is scored: replaced by the three worst chunks, those are found.
    worst = sql(
        pg_url,
        "SELECT c.id, f.path FROM chunks AS c JOIN files AS f ON f.id = c.file_id "
        "WHERE f.path IN ('note-04.md', 'note-08.md', 'note-09.md')",
    )
    sql(
        pg_url,
        "UPDATE fts_champions SET chunks = %s WHERE lexeme = 'cluster'",
        ([chunk for chunk, _ in worst],),
    )

    assert sorted(ranking(notes, "cluster")) == sorted(path for _, path in worst)
    assert sorted(exact_ranking(notes, pg_url, "cluster")) != sorted(path for _, path in worst)


def test_a_memory_written_after_the_lists_is_found(notes):  # type: ignore[no-untyped-def]
    key = remember(notes, "Cluster", "cluster cluster cluster cluster", "semantic")

    assert ranking(notes, "cluster")[0] == key


def test_a_file_rewritten_after_the_lists_is_ranked_by_its_new_text(notes):  # type: ignore[no-untyped-def]
    (notes.root / "note-05.md").write_text("---\ntitle: Cluster\n---\ncluster cluster\n")
    index_paths(notes, ["note-05.md"])

    assert ranking(notes, "cluster")[0] == "note-05.md"


def test_a_forgotten_memory_is_never_returned(notes, pg_url):  # type: ignore[no-untyped-def]
    best = ranking(notes, "cluster")[0]

    forget(notes, best)

    assert best not in ranking(notes, "cluster")


def test_a_deleted_file_is_never_returned(notes, pg_url):  # type: ignore[no-untyped-def]
    best = ranking(notes, "cluster")[0]
    listed_before = listed(pg_url, "cluster")

    (notes.root / best).unlink()
    index_paths(notes, [best])

    assert listed(pg_url, "cluster") == listed_before  # the list still names its chunk
    assert best not in ranking(notes, "cluster")


def test_after_every_write_path_the_pre_selection_still_ranks_as_the_exact_scan(
    notes, pg_url, kept
):  # type: ignore[no-untyped-def]
    remember(notes, "Cluster backup", "cluster backup drill", "semantic")
    (notes.root / "note-03.md").write_text("---\ntitle: Note 3\n---\nracks only\n")
    (notes.root / "note-06.md").unlink()
    index_paths(notes, ["note-03.md", "note-06.md"])
    forget(notes, "note-09.md")

    assert ranking(notes, "cluster backup") == exact_ranking(notes, pg_url, "cluster backup")
    # the counts a listed word's rarity is computed from are the store's, not the list's
    (recorded,) = sql(pg_url, "SELECT hits FROM fts_champions WHERE lexeme = 'cluster'")[0]
    (held,) = sql(pg_url, "SELECT count(*) FROM chunks WHERE terms @@ 'cluster'::tsquery")[0]
    assert recorded != held


def test_a_listed_words_rarity_follows_the_chunks_deleted_since_the_lists(
    make_store, pg_url, monkeypatch, lists, kept
):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    others = {f"lunch-{n}.md": f"# Lunch {n}\n\nNoodles on Friday {n}.\n" for n in range(10)}
    store = make_store(NOTES | others)
    index_store(store, embed=False)
    # "cluster" was in 12 of 22 notes; now in 4 of 14, as rare as "backup" (the same 4)
    gone = [key for key in NOTES if int(key[5:7]) % 3 != 0]
    for key in gone:
        (store.root / key).unlink()
    index_paths(store, gone)

    assert ranking(store, "cluster backup") == exact_ranking(store, pg_url, "cluster backup")


def test_a_full_run_remakes_lists_the_store_outgrew(notes, pg_url):  # type: ignore[no-untyped-def]
    for number in range(12, 16):
        (notes.root / f"note-{number:02d}.md").write_text(
            f"---\ntitle: Cluster {number}\n---\ncluster\n"
        )
    before = sql(pg_url, "SELECT value FROM meta WHERE key = 'fts_champions_through'")

    index_store(notes, embed=False)

    after = sql(pg_url, "SELECT value FROM meta WHERE key = 'fts_champions_through'")
    assert int(after[0][0]) > int(before[0][0])
    assert ranking(notes, "cluster") == exact_ranking(notes, pg_url, "cluster")


def test_a_full_run_reports_the_passes_of_the_lists_it_makes(notes):  # type: ignore[no-untyped-def]
    for number in range(2):
        name, text = cluster_note(number)
        (notes.root / name).write_text(text)
    heard: list[tuple[str, int, int]] = []

    index_store(notes, embed=False, progress=lambda *step: heard.append(step))

    assert [step for step in heard if step[0] == "champions"] == [
        ("champions", 0, 2),
        ("champions", 1, 2),
        ("champions", 2, 2),
    ]


def downgrade_to_layout_3(url: str) -> None:
    """Make the index what memsift wrote before champion lists: layout 3."""
    sql(url, "DROP TABLE fts_champions")
    sql(url, "DELETE FROM meta WHERE key LIKE 'fts_champions%'")
    sql(url, "UPDATE meta SET value = '3' WHERE key = 'schema_version'")


def test_a_layout_3_index_is_upgraded_in_place_keeping_its_rows(
    make_store, pg_url, monkeypatch, lists, hash_embedder
):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    store = make_store(NOTES)
    index_store(store, embedder=hash_embedder)
    rows = "SELECT f.path, c.id, c.hash FROM files AS f JOIN chunks AS c ON c.file_id = f.id"
    kept = sorted(sql(pg_url, rows))
    vectors = sql(pg_url, "SELECT hash FROM embeddings ORDER BY hash")
    before = ranking(store, "cluster backup")
    downgrade_to_layout_3(pg_url)
    with pytest.raises(PgError, match="layout 3"):
        ranking(store, "cluster")

    report = index_store(open_store(store.root), embedder=hash_embedder)

    assert report.indexed == [] and report.embedded == 0
    assert sorted(sql(pg_url, rows)) == kept  # the same chunks, not written again
    assert sql(pg_url, "SELECT hash FROM embeddings ORDER BY hash") == vectors
    assert len(listed(pg_url, "cluster")) == 4
    assert ranking(store, "cluster backup") == before


def test_search_and_status_say_the_full_text_is_pre_selected(notes):  # type: ignore[no-untyped-def]
    result = search(notes, "cluster", weights=FTS_ONLY)

    assert str(result.to_json()["full_text_search"]).startswith("pre-selected (champion lists")
    assert str(store_status(notes)["full_text_search"]).startswith("pre-selected")


def test_a_store_without_common_words_is_searched_exactly_and_says_so(
    make_store, pg_url, monkeypatch
):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    store = make_store(NOTES)  # no word is held by 2,000 chunks
    index_store(store, embed=False)

    assert search(store, "cluster", weights=FTS_ONLY).full_text_search == "exact"
    assert store_status(store)["full_text_search"] == "exact"


# ------------------------------------------------------------- writes outside a full run


def mark(url: str) -> int | None:
    rows = sql(url, "SELECT value FROM meta WHERE key = 'fts_champions_through'")
    return int(rows[0][0]) if rows else None


def cluster_note(number: int) -> tuple[str, str]:
    return f"cluster-{number}.md", f"---\ntitle: Cluster {number}\n---\ncluster cluster\n"


def test_remembering_past_a_tenth_of_the_store_remakes_the_lists(notes, pg_url):  # type: ignore[no-untyped-def]
    before = mark(pg_url)

    keys = [remember(notes, f"Cluster {n}", "cluster cluster", "semantic") for n in range(2)]
    assert champions.settle(WAIT_S)

    assert mark(pg_url) > before  # type: ignore[operator]
    chunk = "SELECT c.id FROM chunks AS c JOIN files AS f ON f.id = c.file_id WHERE f.path = %s"
    top = sql(pg_url, chunk, (keys[-1],))[0][0]
    assert top in listed(pg_url, "cluster")
    assert ranking(notes, "cluster") == exact_ranking(notes, pg_url, "cluster")


def test_a_watchers_batch_past_a_tenth_of_the_store_remakes_the_lists(notes, pg_url):  # type: ignore[no-untyped-def]
    before = mark(pg_url)
    for number in range(2):
        name, text = cluster_note(number)
        (notes.root / name).write_text(text)

    index_paths(notes, [cluster_note(n)[0] for n in range(2)])  # what the watcher calls
    assert champions.settle(WAIT_S)

    assert mark(pg_url) > before  # type: ignore[operator]


def test_forgetting_past_a_tenth_of_the_store_remakes_the_lists_and_empties_fts_gone(
    notes, pg_url
):  # type: ignore[no-untyped-def]
    before = mark(pg_url)

    for key in ("note-01.md", "note-02.md"):
        (notes.root / key).unlink()
        index_paths(notes, [key])
    assert champions.settle(WAIT_S)

    assert mark(pg_url) == before  # no chunk written since: the mark stays, the count moved
    assert sql(pg_url, "SELECT count(*) FROM fts_gone")[0][0] == 0
    assert sql(pg_url, "SELECT value FROM meta WHERE key = 'fts_champions_chunks'")[0][0] == "10"


def test_a_write_within_a_tenth_of_the_store_keeps_the_lists(notes, pg_url):  # type: ignore[no-untyped-def]
    before = mark(pg_url)

    remember(notes, "Cluster", "cluster cluster", "semantic")  # 1 chunk of 13: within 1.3
    assert champions.settle(WAIT_S)

    assert mark(pg_url) == before


def test_a_small_store_without_lists_makes_none_as_it_is_written(
    make_store, pg_url, monkeypatch, lists
):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(champions, "COMMON", 40)  # no word of a store this small can be common
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    store = make_store(NOTES)
    index_store(store, embed=False)

    for number in range(6):
        remember(store, f"Cluster {number}", "cluster backup", "semantic")
    assert champions.settle(WAIT_S)

    assert mark(pg_url) is None
    assert search(store, "cluster", weights=FTS_ONLY).full_text_search == "exact"


def test_a_write_and_a_search_answer_while_the_lists_are_remade(notes, pg_url):  # type: ignore[no-untyped-def]
    # The rebuild is held at its last step (the mark's row locked here): a write that starts it
    # returns, and a search answers, from the old lists, before it ends.
    answers: dict[str, object] = {}
    with psycopg.connect(pg_url, options="-c search_path=memsift") as holder:
        holder.execute("SELECT value FROM meta WHERE key = 'fts_champions_through' FOR UPDATE")

        def write() -> None:
            answers["keys"] = [
                remember(notes, f"Cluster {n}", "cluster cluster", "semantic") for n in range(2)
            ]

        writer = threading.Thread(target=write)
        writer.start()
        writer.join(WAIT_S)
        assert not writer.is_alive() and "keys" in answers
        assert eventually(
            lambda: sql(pg_url, "SELECT count(*) FROM pg_locks WHERE NOT granted")[0][0] > 0
        )

        def find() -> None:
            answers["found"] = ranking(notes, "cluster")

        searcher = threading.Thread(target=find)
        searcher.start()
        searcher.join(WAIT_S)
        assert not searcher.is_alive() and answers["found"]
    assert champions.settle(WAIT_S)

    assert ranking(notes, "cluster") == exact_ranking(notes, pg_url, "cluster")
