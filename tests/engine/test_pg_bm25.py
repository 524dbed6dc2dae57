"""Full text on PostgreSQL ranks by Okapi BM25, as FTS5 does on SQLite.

The fts arm computes BM25 (k1 = 1.2, b = 0.75, a title match four times a body match and a tag
match twice) in SQL from each chunk's tsvector, its length and the store's totals, which the
index keeps in step through every write path. An index of the layout before BM25 is refused by
search with the fix, and upgraded in place by the next index run.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from engine.agents.write import forget, remember
from engine.files.store import open_store
from engine.indexing.incremental import index_paths
from engine.indexing.indexer import index_store
from engine.indexing.pipeline import FileRow
from engine.pg import indexdb
from engine.pg.driver import PgError, connect
from engine.pg.target import DatabaseTarget
from engine.search import search

#: Plain words on which Porter (FTS5) and Snowball (PostgreSQL) stem alike, so both backends
#: match the same chunks and rank only by their scoring. Built so that scorers disagree:
#: a long note repeating a common word, short notes holding a rare one, title and tag matches.
NOTES = {
    "a-long-cluster.md": """
        ---
        title: Cluster notes
        ---
        The cluster has a backup plan. The cluster runs nightly. The cluster keeps logs.
        Many teams share the cluster, and the cluster team answers questions about the
        cluster every week, with a long report on disks, racks, cables, fans and power.
        """,
    "b-backup.md": """
        ---
        title: Restore drill
        ---
        A backup is restored every quarter to prove it works.
        """,
    "c-short-cluster.md": """
        ---
        title: Rack layout
        ---
        The cluster sits in rack nine.
        """,
    "d-titled.md": """
        ---
        title: Backup schedule
        ---
        Copies are taken at midnight and kept for thirty days.
        """,
    "e-tagged.md": """
        ---
        title: Storage budget
        tags: [backup]
        ---
        Disks for the archive are bought in spring.
        """,
    "f-other.md": """
        ---
        title: Lunch rota
        ---
        The team orders lunch on Fridays from the noodle bar near the station.
        """,
    "g-cluster-backup.md": """
        ---
        title: Cluster backup window
        ---
        The cluster backup runs after the nightly jobs and before the morning reports.
        """,
}
QUERIES = ["cluster", "backup", "cluster backup", "cluster drill", "nightly reports", "rack"]
#: Column prefixes: FTS5 column filters on SQLite, weight labels (A title, B tags, D body) on
#: PostgreSQL; each keeps only the memories holding the word in that part, ranked alike.
PREFIXED = [
    "title:backup",
    "tags:backup",
    "body:backup",
    "title:cluster backup",
    "tag:backup cluster",
]
FTS_ONLY = {"vector": 0.0, "recency": 0.0, "salience": 0.0, "time": 0.0}


def fts_ranking(store, query: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [h.path for h in search(store, query, limit=20, weights=FTS_ONLY).hits]


def backend(url: str | None, monkeypatch):  # type: ignore[no-untyped-def]
    if url is None:
        monkeypatch.delenv("MEMSIFT_DATABASE_URL", raising=False)
    else:
        monkeypatch.setenv("MEMSIFT_DATABASE_URL", url)


@pytest.fixture
def notes(make_store, pg_url, monkeypatch):  # type: ignore[no-untyped-def]
    """The notes indexed lexically on PostgreSQL."""
    backend(pg_url, monkeypatch)
    store = make_store(NOTES)
    index_store(store, embed=False)
    return store


def query_rows(url: str, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url, options="-c search_path=memsift") as conn:
        return conn.execute(sql).fetchall()


def waits_for_a_lock(url: str, pid: int, timeout: float = 120) -> bool:
    """Whether the server process ``pid`` is seen waiting for a lock before the deadline (not a
    sleep that a loaded machine may spend before the wait has begun)."""
    deadline = time.monotonic() + timeout
    with psycopg.connect(url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            (waits,) = conn.execute(
                "SELECT wait_event_type IS NOT DISTINCT FROM 'Lock' FROM pg_stat_activity "
                "WHERE pid = %s",
                (pid,),
            ).fetchone()
            if waits:
                return True
            time.sleep(0.02)
    return False


def totals_match_the_chunks(url: str) -> bool:
    kept = query_rows(url, "SELECT chunks, tokens FROM fts_totals")
    counted = query_rows(url, "SELECT count(*), coalesce(sum(length), 0) FROM chunks")
    return kept == counted


@pytest.mark.parametrize("query", QUERIES + PREFIXED)
def test_the_fts_arm_ranks_as_fts5_bm25_ranks_the_same_store(notes, monkeypatch, pg_url, query):  # type: ignore[no-untyped-def]
    on_postgresql = fts_ranking(notes, query)
    backend(None, monkeypatch)
    index_store(notes, embed=False)

    assert on_postgresql == fts_ranking(notes, query)


def test_a_rare_word_in_a_short_note_outranks_a_common_one_repeated(notes):  # type: ignore[no-untyped-def]
    ranking = fts_ranking(notes, "cluster drill")  # no note holds both: any word will do

    assert ranking[0] == "b-backup.md"


def test_a_chunks_length_counts_its_title_tags_and_body_tokens(notes, pg_url):  # type: ignore[no-untyped-def]
    (length,) = query_rows(
        pg_url,
        "SELECT c.length FROM chunks AS c JOIN files AS f ON f.id = c.file_id "
        "WHERE f.path = 'e-tagged.md'",
    )[0]

    assert length == 2 + 1 + 8  # "Storage budget", "backup", the eight words of the body


def test_the_totals_follow_every_write_path(notes, pg_url):  # type: ignore[no-untyped-def]
    assert totals_match_the_chunks(pg_url)

    key = remember(notes, "Tape rotation", "Tapes rotate weekly to the vault.", "procedural")
    assert totals_match_the_chunks(pg_url)
    (notes.root / "c-short-cluster.md").write_text("# Rack layout\n\nMoved to rack two, row b.\n")
    index_paths(notes, ["c-short-cluster.md"])
    assert totals_match_the_chunks(pg_url)
    forget(notes, key)
    (notes.root / "f-other.md").unlink()
    index_store(notes, embed=False)

    assert totals_match_the_chunks(pg_url)


def downgrade_to_layout_1(url: str) -> None:
    """Make the index what memsift wrote before BM25: no lengths, no totals, layout 1."""
    with psycopg.connect(url, options="-c search_path=memsift") as conn:
        conn.execute("DROP TRIGGER chunks_count ON chunks")
        conn.execute("DROP FUNCTION memsift_count_chunk()")
        conn.execute("DROP TABLE fts_totals")
        conn.execute("ALTER TABLE chunks DROP COLUMN length")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")


def test_a_search_on_an_index_of_the_old_layout_says_to_run_index(notes, pg_url):  # type: ignore[no-untyped-def]
    downgrade_to_layout_1(pg_url)

    with pytest.raises(PgError) as refused:
        search(notes, "cluster backup")

    message = str(refused.value)
    assert "\n" not in message
    assert "layout 1" in message and "run `memsift index`" in message


def test_an_index_run_upgrades_the_old_layout_in_place_keeping_vectors(
    make_store, pg_url, monkeypatch, hash_embedder
):  # type: ignore[no-untyped-def]
    backend(pg_url, monkeypatch)
    store = make_store(NOTES)
    index_store(store, embedder=hash_embedder)
    before = fts_ranking(store, "cluster backup")
    vectors = query_rows(pg_url, "SELECT hash FROM embeddings ORDER BY hash")
    downgrade_to_layout_1(pg_url)

    report = index_store(open_store(store.root), embedder=hash_embedder)

    assert report.embedded == 0 and report.indexed == []
    assert query_rows(pg_url, "SELECT hash FROM embeddings ORDER BY hash") == vectors
    assert totals_match_the_chunks(pg_url)
    assert fts_ranking(store, "cluster backup") == before


def test_remember_on_an_index_of_the_old_layout_upgrades_it_first(notes, pg_url):  # type: ignore[no-untyped-def]
    downgrade_to_layout_1(pg_url)

    key = remember(notes, "Tape rotation", "Tapes rotate weekly to the vault.", "procedural")

    assert totals_match_the_chunks(pg_url)
    assert fts_ranking(notes, "tapes vault") == [key]


def test_an_index_of_a_newer_layout_is_refused_not_rewritten(notes, pg_url):  # type: ignore[no-untyped-def]
    with psycopg.connect(pg_url, options="-c search_path=memsift") as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")

    with pytest.raises(PgError, match="newer memsift"):
        index_store(notes, embed=False)
    with pytest.raises(PgError, match="newer memsift"):
        search(notes, "cluster")


def row(path: str, text: str) -> FileRow:
    return FileRow(
        path, path, None, None, "2026-01-01T00:00:00Z", "[]", False, text, 1, 1, [(text, text)]
    )


def test_two_writers_crossing_files_neither_deadlock_nor_lose_a_count(notes, pg_url):  # type: ignore[no-untyped-def]
    # A full run's batch writes "x" then "y"; a remember writes "y" meanwhile. Were the totals
    # row taken at each chunk written, the run would hold it while waiting for "y", and the
    # remember would hold "y" while waiting for it: a deadlock, one writer's work refused.
    target = DatabaseTarget(pg_url, "memsift")
    run, other = connect(target, vectors=False), connect(target, vectors=False)
    try:
        for conn in (run, other):
            conn.run("SET lock_timeout = '120s'")
        with run:
            indexdb.write_file(run, row("x.md", "crossing writers one"))
            with ThreadPoolExecutor(1) as pool:
                with other:
                    indexdb.write_file(other, row("y.md", "crossing writers two"))
                    waiting = pool.submit(indexdb.write_file, run, row("y.md", "crossing three"))
                    # the run now waits for "y"; then the remember commits
                    assert waits_for_a_lock(pg_url, run.raw.info.backend_pid), waiting
                waiting.result()
    finally:
        run.close()
        other.close()

    assert totals_match_the_chunks(pg_url)
    assert sorted(fts_ranking(notes, "crossing")) == ["x.md", "y.md"]
