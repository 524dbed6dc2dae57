"""A team store's full text is the word rule's (engine.ranking.words) before PostgreSQL's parser
sees it, and an index of layout 2, whose ``terms`` the parser cut alone, is upgraded in place.

The parser is given words one space apart: it must find nothing to join across them (no number,
version, host, path or email can form). An upgrade rewrites every chunk's ``terms`` (and so its
length and the store's totals) and nothing else: files, vectors and the state plane stay, and
the store then ranks as one indexed fresh.
"""

from __future__ import annotations

import psycopg
import pytest

from engine.agents.write import remember
from engine.files.store import open_store
from engine.indexing.indexer import index_store
from engine.pg import indexdb
from engine.pg.driver import PgError, connect
from engine.pg.schema import SCHEMA_VERSION, ensure_schema
from engine.pg.target import DatabaseTarget
from engine.ranking.words import token_text
from engine.search import search
from engine.state import record_access, reinforce

TEXTS = [
    "after the 2.4 release, 3.14159 and -0.5",
    "upgraded to v2.4.1 (was 10.0.0-rc1) and 1e10 2e5x 0x1F",
    "/var/lib/memsift/index.conf and C:\\Users\\ana\\notes.md",
    "https://db-01.example.com:5432/x?y=1 mail ana.lopez@example.org",
    "a state-of-the-art e-mail, snake_case, <b>bold</b> &amp; don't",
    "Café Müller, naïve x²y ½ Ⅻ 東京の天気 हिन्दी Ελληνικά",
]


@pytest.fixture
def schema_conn(pg_url):  # type: ignore[no-untyped-def]
    """A connection in a store schema made by the engine (its ``memsift`` configuration)."""
    conn = connect(DatabaseTarget(pg_url, "memsift"), vectors=False)
    ensure_schema(conn)
    yield conn
    conn.close()


def parsed(conn, text: str) -> tuple[set[str], int]:  # type: ignore[no-untyped-def]
    """(lexemes, tokens) the store's configuration makes of ``text``."""
    lexemes, tokens = conn.run(
        "SELECT tsvector_to_array(v), memsift_tokens(v) "
        "FROM (SELECT to_tsvector('memsift', %s) AS v) AS t",
        (text,),
    ).fetchone()
    return set(lexemes), tokens


@pytest.mark.parametrize("text", TEXTS)
def test_the_parser_makes_of_the_rules_text_what_it_makes_of_each_word_alone(schema_conn, text):
    words = token_text(text).split()
    alone = [parsed(schema_conn, word) for word in words]

    assert parsed(schema_conn, " ".join(words)) == (
        set().union(*(lexemes for lexemes, _ in alone)),
        sum(tokens for _, tokens in alone),
    )


@pytest.mark.parametrize("text", TEXTS)
def test_no_lexeme_of_the_index_holds_a_separator(schema_conn, text):
    lexemes, _ = parsed(schema_conn, token_text(text))

    assert not [lexeme for lexeme in lexemes if set(lexeme) & set(" .-/\\@:_'&<>")]


# --- the upgrade from layout 2 ---------------------------------------------------------------

#: What layout 2 wrote into ``terms``: the raw texts, cut by PostgreSQL's parser alone.
LAYOUT_2_TERMS = """
    setweight(to_tsvector('memsift', f.title), 'A')
    || setweight(to_tsvector('memsift', coalesce(
           (SELECT string_agg(t, ' ') FROM jsonb_array_elements_text(f.tags) AS t), '')), 'B')
    || setweight(to_tsvector('memsift', c.text), 'D')
"""

NOTES = {
    "release.md": "---\ntitle: Release 2.4\ntags: [v2.4.1, on-call]\n---\n"
    "Latency doubled after the 2.4 release; see /var/lib/memsift/index.conf.\n",
    "twin.md": "---\ntitle: Release 2.5\n---\nLatency doubled after the 2.5 release.\n",
    "lunch.md": "---\ntitle: Lunch\n---\n"
    "The team lunch is at Café Müller; ask ana.lopez@example.org.\n",
    "host.md": "---\ntitle: Backups\n---\nNightly backups go to db-01.example.com now.\n",
}
QUERIES = ["2.4", "latency after 2.4", "cafe muller", "db-01.example.com", "index.conf", "2.5"]
FTS_ONLY = {"vector": 0.0, "recency": 0.0, "salience": 0.0, "time": 0.0}


def rows(url: str, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url, options="-c search_path=memsift") as conn:
        return conn.execute(sql).fetchall()


def downgrade_to_layout_2(url: str) -> None:
    """Make the index what memsift wrote before the word rule: ``terms`` as the parser cut the
    raw texts, and layout 2 (the totals follow by their trigger, as they did then)."""
    with psycopg.connect(url, options="-c search_path=memsift") as conn:
        conn.execute(
            f"UPDATE chunks AS c SET terms = {LAYOUT_2_TERMS} FROM files AS f "
            "WHERE f.id = c.file_id"
        )
        conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")


#: Everything an upgrade must leave as it found it, and what it must make anew.
KEPT = {
    "files": "SELECT id, path, title, tags::text, content_hash, size, mtime_ns FROM files "
    "ORDER BY id",
    "chunks": "SELECT id, file_id, seq, text, hash FROM chunks ORDER BY id",
    "vectors": "SELECT hash, model, vector::text FROM embeddings ORDER BY hash",
    "state": "SELECT * FROM state_access ORDER BY path",
}
DERIVED = {
    "terms": "SELECT id, terms::text, length FROM chunks ORDER BY id",
    "totals": "SELECT chunks, tokens FROM fts_totals",
}


def fts_rankings(store) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    return {q: [h.path for h in search(store, q, limit=10, weights=FTS_ONLY).hits] for q in QUERIES}


@pytest.fixture
def fresh(make_store, pg_url, monkeypatch, hash_embedder):  # type: ignore[no-untyped-def]
    """The notes indexed on PostgreSQL by this memsift, with a read and an outcome counted."""
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    store = make_store(NOTES)
    index_store(store, embedder=hash_embedder)
    record_access(store, "release.md")
    reinforce(store, "lunch.md", 1)
    return store


def test_a_search_on_a_layout_2_index_says_to_run_index(fresh, pg_url):  # type: ignore[no-untyped-def]
    downgrade_to_layout_2(pg_url)

    with pytest.raises(PgError) as refused:
        search(fresh, "2.4")

    message = str(refused.value)
    assert "\n" not in message
    assert "layout 2" in message and "run `memsift index`" in message


def test_an_index_run_upgrades_layout_2_in_place_and_it_ranks_as_a_fresh_index(
    fresh, pg_url, hash_embedder
):  # type: ignore[no-untyped-def]
    kept = {name: rows(pg_url, sql) for name, sql in KEPT.items()}
    derived = {name: rows(pg_url, sql) for name, sql in DERIVED.items()}
    rankings = fts_rankings(fresh)
    downgrade_to_layout_2(pg_url)
    assert rows(pg_url, DERIVED["terms"]) != derived["terms"]  # the old layout's words differ
    heard: list[tuple[str, int, int]] = []

    report = index_store(
        open_store(fresh.root), embedder=hash_embedder, progress=lambda *a: heard.append(a)
    )

    assert report.indexed == [] and report.embedded == 0 and report.removed == []
    assert {name: rows(pg_url, sql) for name, sql in KEPT.items()} == kept
    assert {name: rows(pg_url, sql) for name, sql in DERIVED.items()} == derived
    assert rows(pg_url, "SELECT value FROM meta WHERE key = 'schema_version'") == [
        (SCHEMA_VERSION,)
    ]
    assert fts_rankings(fresh) == rankings
    assert rankings["2.4"] == ["release.md"]
    chunks = len(kept["chunks"])
    assert [h for h in heard if h[0] == "retokenize"][-1] == ("retokenize", chunks, chunks)


def test_an_upgrade_stopped_midway_leaves_the_old_layout_whole(
    fresh, pg_url, monkeypatch
):  # type: ignore[no-untyped-def]
    downgrade_to_layout_2(pg_url)
    old = rows(pg_url, DERIVED["terms"])
    monkeypatch.setattr(indexdb, "RETOKENIZE_BATCH", 1)

    def stop(phase: str, done: int, total: int) -> None:
        if phase == "retokenize" and done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        index_store(open_store(fresh.root), embed=False, progress=stop)

    assert rows(pg_url, DERIVED["terms"]) == old
    assert rows(pg_url, "SELECT value FROM meta WHERE key = 'schema_version'") == [("2",)]


def test_remember_on_a_layout_2_index_upgrades_it_first(fresh, pg_url):  # type: ignore[no-untyped-def]
    downgrade_to_layout_2(pg_url)

    key = remember(fresh, "Rollback", "Production went back to build 7.13.2 today.", "episodic")

    assert fts_rankings(fresh)["2.4"] == ["release.md"]
    assert [h.path for h in search(fresh, "7.13.2", weights=FTS_ONLY).hits] == [key]
