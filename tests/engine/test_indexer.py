"""The incremental indexer: what a run writes, what a second run skips, what stays in step."""

from __future__ import annotations

import json

import apsw
import pytest

from conftest import HashEmbedder, touch_later
from engine.indexing.indexer import index_store
from engine.search import search
from engine.sqlite.db import open_index, read_meta

NOTE = """
---
title: Staging database port
kind: semantic
event_at: 2026-10-21
tags: [infra, staging]
---
Staging Postgres listens on 6432 behind PgBouncer.
"""


def rows(store, sql, params=()):  # type: ignore[no-untyped-def]
    conn = open_index(store.index_path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def fts_integrity_ok(store) -> None:  # type: ignore[no-untyped-def]
    """FTS5's own check of an external-content table against its content (raises if not)."""
    conn = open_index(store.index_path)
    try:
        conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        conn.close()


def test_index_writes_file_fields(make_store, hash_embedder):
    store = make_store({"facts/port.md": NOTE})
    index_store(store, embedder=hash_embedder)
    [(path, title, kind, event_at, tags, archived)] = rows(
        store, "SELECT path, title, kind, event_at, tags, archived FROM files"
    )
    assert (path, title, kind, event_at) == (
        "facts/port.md",
        "Staging database port",
        "semantic",
        "2026-10-21 00:00:00",
    )
    assert json.loads(tags) == ["infra", "staging"]
    assert archived == 0


def test_every_chunk_gets_a_vector_with_model_and_dimension(make_store, hash_embedder):
    store = make_store({"a.md": NOTE, "b.md": "# Long\n\n" + "A sentence of words. " * 300})
    index_store(store, embedder=hash_embedder)
    (chunks,) = rows(store, "SELECT count(*) FROM chunks")[0]
    assert chunks > 2
    stored = rows(
        store,
        "SELECT e.model, e.dim, length(e.vector) "
        "FROM chunks AS c JOIN embeddings AS e ON e.hash = c.hash",
    )
    assert len(stored) == chunks
    assert set(stored) == {("test-hash", 16, 64)}


def test_second_run_over_unchanged_files_does_nothing(make_store, hash_embedder):
    store = make_store({"a.md": NOTE, "b.md": "# B\n\nAnother memory."})
    index_store(store, embedder=hash_embedder)
    hash_embedder.calls.clear()
    report = index_store(store, embedder=hash_embedder)
    assert (report.indexed, report.unchanged, report.removed) == ([], 2, [])
    assert hash_embedder.calls == []


def test_touched_but_identical_file_counts_as_unchanged(make_store, hash_embedder):
    store = make_store({"a.md": NOTE})
    index_store(store, embedder=hash_embedder)
    touch_later(store.root / "a.md")
    report = index_store(store, embedder=hash_embedder)
    assert report.indexed == [] and report.unchanged == 1


def test_edited_file_is_reindexed_and_fts_follows(make_store, hash_embedder):
    store = make_store({"a.md": NOTE})
    index_store(store, embedder=hash_embedder)
    (store.root / "a.md").write_text(NOTE.replace("6432", "7777"), encoding="utf-8")
    touch_later(store.root / "a.md")
    report = index_store(store, embedder=hash_embedder)
    assert report.indexed == ["a.md"]
    assert rows(store, "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH '6432'") == []
    assert len(rows(store, "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH '7777'")) == 1
    fts_integrity_ok(store)


def test_deleted_file_disappears_with_its_chunks_and_vectors(make_store, hash_embedder):
    store = make_store({"a.md": NOTE, "b.md": "# B\n\nSomething else entirely."})
    index_store(store, embedder=hash_embedder)
    (store.root / "a.md").unlink()
    report = index_store(store, embedder=hash_embedder)
    assert report.removed == ["a.md"]
    assert rows(store, "SELECT path FROM files") == [("b.md",)]
    assert rows(store, "SELECT count(*) FROM chunks")[0][0] == 1
    assert rows(store, "SELECT count(*) FROM embeddings")[0][0] == 1
    assert rows(store, "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH 'pgbouncer'") == []
    fts_integrity_ok(store)


def test_rename_reuses_vectors_instead_of_embedding_again(make_store, hash_embedder):
    store = make_store({"a.md": NOTE})
    index_store(store, embedder=hash_embedder)
    (store.root / "a.md").rename(store.root / "renamed.md")
    hash_embedder.calls.clear()
    report = index_store(store, embedder=hash_embedder)
    assert (report.indexed, report.removed) == (["renamed.md"], ["a.md"])
    assert hash_embedder.calls == []
    fts_integrity_ok(store)


def test_only_changed_chunks_are_embedded_again(make_store, hash_embedder):
    sentences = [
        f"Sentence number {i} talks about topic {i} in some detail here." for i in range(80)
    ]
    store = make_store({"long.md": "# Long\n\n" + " ".join(sentences)})
    index_store(store, embedder=hash_embedder)
    first = len(hash_embedder.calls)
    hash_embedder.calls.clear()
    sentences[-1] = "The very last sentence was rewritten."
    (store.root / "long.md").write_text("# Long\n\n" + " ".join(sentences), encoding="utf-8")
    touch_later(store.root / "long.md")
    index_store(store, embedder=hash_embedder)
    assert first >= 3
    assert len(hash_embedder.calls) == 1


def test_switching_model_reembeds_and_never_mixes(make_store, hash_embedder):
    store = make_store({"a.md": NOTE, "b.md": "# B\n\nOther."})
    index_store(store, embedder=hash_embedder)
    other = HashEmbedder(name="other-model", dim=8)
    report = index_store(store, embedder=other)
    assert report.embedded == 2
    assert rows(store, "SELECT DISTINCT model, dim FROM embeddings") == [("other-model", 8)]
    assert read_meta_of(store, "model") == "other-model"


def read_meta_of(store, key):  # type: ignore[no-untyped-def]
    conn = open_index(store.index_path)
    try:
        return read_meta(conn, key)
    finally:
        conn.close()


def test_no_embed_indexes_lexically_and_a_later_run_fills_vectors(make_store, hash_embedder):
    store = make_store({"a.md": NOTE})
    index_store(store, embed=False)
    assert rows(store, "SELECT count(*) FROM embeddings")[0][0] == 0
    assert len(rows(store, "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH 'pgbouncer'")) == 1
    report = index_store(store, embedder=hash_embedder)
    assert report.embedded == 1


def test_malformed_front_matter_is_skipped_and_the_run_goes_on(make_store, hash_embedder):
    store = make_store(
        {
            "bad.md": "---\ntitle: [unclosed\n---\nbody\n",
            "good.md": NOTE,
        }
    )
    report = index_store(store, embedder=hash_embedder)
    assert report.indexed == ["good.md"]
    [(path, reason)] = report.skipped
    assert path == "bad.md" and "YAML" in reason


def test_file_that_turns_malformed_leaves_the_index(make_store, hash_embedder):
    store = make_store({"a.md": NOTE})
    index_store(store, embedder=hash_embedder)
    (store.root / "a.md").write_bytes(b"\xff\xfe not utf-8")
    report = index_store(store, embedder=hash_embedder)
    assert report.removed == ["a.md"] and report.skipped[0][0] == "a.md"
    fts_integrity_ok(store)


def test_files_over_the_size_limit_are_skipped(make_store, hash_embedder):
    store = make_store(
        {
            ".memsift/config.toml": "[limits]\nmax_file_bytes = 100\n",
            "big.md": "# Big\n\n" + "word " * 100,
            "small.md": "# Small\n\nok",
        }
    )
    report = index_store(store, embedder=hash_embedder)
    assert report.indexed == ["small.md"]
    assert report.skipped[0][0] == "big.md" and "limit" in report.skipped[0][1]


def test_symlinks_are_reported_and_not_followed(make_store, hash_embedder, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("# Secret\n\nnot part of the store", encoding="utf-8")
    store = make_store({"a.md": NOTE})
    (store.root / "link.md").symlink_to(outside)
    report = index_store(store, embedder=hash_embedder)
    assert report.indexed == ["a.md"]
    assert report.skipped == [("link.md", "symlink (not followed)")]


def test_fts_stays_in_step_after_every_kind_of_change(make_store, hash_embedder):
    store = make_store({"a.md": NOTE, "b.md": "# B\n\nbeta", "c.md": "# C\n\ngamma"})
    index_store(store, embedder=hash_embedder)
    fts_integrity_ok(store)
    (store.root / "a.md").write_text(NOTE + "\nMore text.", encoding="utf-8")
    (store.root / "b.md").unlink()
    (store.root / "c.md").rename(store.root / "d.md")
    (store.root / "e.md").write_text("# E\n\nepsilon", encoding="utf-8")
    index_store(store, embedder=hash_embedder)
    fts_integrity_ok(store)
    assert [r[0] for r in rows(store, "SELECT path FROM files ORDER BY path")] == [
        "a.md",
        "d.md",
        "e.md",
    ]


def test_run_records_complete_coverage(make_store, hash_embedder):
    store = make_store({"a.md": NOTE, "b.md": "# B\n\nbeta"})
    index_store(store, embedder=hash_embedder)
    assert read_meta_of(store, "complete") == "1"
    assert read_meta_of(store, "chunks") == read_meta_of(store, "embedded_chunks") == "2"


def test_outdated_index_schema_is_rebuilt_not_migrated(make_store, hash_embedder):
    store = make_store({"a.md": NOTE})
    store.index_path.parent.mkdir(parents=True)
    conn = apsw.Connection(str(store.index_path))
    conn.execute(
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO meta VALUES ('schema_version', '0');"
        "CREATE TABLE files(junk)"
    )
    conn.close()
    report = index_store(store, embedder=hash_embedder)
    assert report.indexed == ["a.md"]


@pytest.mark.parametrize("name", ["with space.md", "ünïcödé.md", "new\nline.md"])
def test_awkward_file_names_are_indexed(make_store, hash_embedder, name):
    store = make_store({name: "# Title\n\nbody text"})
    report = index_store(store, embedder=hash_embedder)
    assert report.indexed == [name]


def vec_rows_match_embedded_chunks(store) -> bool:  # type: ignore[no-untyped-def]
    vec = rows(store, "SELECT chunk_id, embedding FROM vec_chunks ORDER BY chunk_id")
    embedded = rows(
        store,
        "SELECT c.id, e.vector FROM chunks AS c JOIN embeddings AS e ON e.hash = c.hash "
        "ORDER BY c.id",
    )
    return vec == embedded and len(vec) > 0


def test_vector_table_follows_edits_deletes_and_renames(make_store, hash_embedder):
    store = make_store({"a.md": NOTE, "b.md": "# B\n\nbeta", "c.md": "# C\n\ngamma"})
    index_store(store, embedder=hash_embedder)
    assert vec_rows_match_embedded_chunks(store)
    (store.root / "a.md").write_text(NOTE + "\nMore text.", encoding="utf-8")
    (store.root / "b.md").unlink()
    (store.root / "c.md").rename(store.root / "d.md")
    index_store(store, embedder=hash_embedder)
    assert vec_rows_match_embedded_chunks(store)


def test_vector_table_is_rebuilt_for_a_model_of_another_width(make_store, hash_embedder):
    store = make_store({"a.md": NOTE})
    index_store(store, embedder=hash_embedder)
    index_store(store, embedder=HashEmbedder(name="wider", dim=32))
    assert read_meta_of(store, "vec_dim") == "32"
    assert vec_rows_match_embedded_chunks(store)


def test_progress_reports_every_phase_up_to_its_total(make_store, hash_embedder):
    store = make_store({f"n{i}.md": f"# N{i}\n\nbody {i}" for i in range(30)})
    calls: list[tuple[str, int, int]] = []
    index_store(store, embedder=hash_embedder, progress=lambda *a: calls.append(a))
    assert ("scan", 30, 30) in calls
    assert calls[-1] == ("embed", 30, 30)


def test_a_file_skipped_again_is_not_a_pending_change(make_store, hash_embedder):
    from engine.status import store_status

    store = make_store({"a.md": NOTE, "bad.md": "---\ntitle: [unclosed\n---\nbody\n"})
    index_store(store, embedder=hash_embedder)
    assert store_status(store)["changes"] == {"added": 0, "modified": 0, "removed": 0}
    (store.root / "bad.md").write_text("# Fixed\n\nnow fine", encoding="utf-8")
    touch_later(store.root / "bad.md")
    assert store_status(store)["changes"]["added"] == 1


def test_a_file_name_that_is_not_utf8_is_skipped_and_the_rest_indexed(make_store, hash_embedder):
    import os

    store = make_store({"a.md": NOTE})
    with open(os.path.join(os.fsencode(store.root), b"caf\xe9.md"), "wb") as handle:
        handle.write(b"# x\n\nhi")
    report = index_store(store, embedder=hash_embedder)
    assert report.indexed == ["a.md"]
    [(key, reason)] = report.skipped
    assert "UTF-8" in reason and key.startswith("caf")


def test_a_skip_reason_shows_the_bytes_of_a_name_that_is_not_utf8(make_store, hash_embedder):
    import os

    store = make_store({"a.md": NOTE})
    with open(os.path.join(os.fsencode(store.root), b"bad\xff.md"), "wb") as handle:
        handle.write(b"# x\n\nhi")
    [(key, _)] = index_store(store, embedder=hash_embedder).skipped
    assert key == "bad\\xff.md"


def test_an_index_of_the_previous_layout_is_upgraded_without_losing_a_vector(
    make_store, hash_embedder
):  # type: ignore[no-untyped-def]
    store = make_store({"a.md": "# Port\n\nPgBouncer listens on 6432.\n"})
    index_store(store, embedder=hash_embedder)
    conn = open_index(store.index_path)
    with conn:  # make it look like layout 2: whole-file FTS, no chunk FTS
        conn.execute("DROP TABLE chunks_fts")
        conn.execute("CREATE VIRTUAL TABLE files_fts USING fts5(title, body, tags)")
        conn.execute("ALTER TABLE files ADD COLUMN body TEXT NOT NULL DEFAULT ''")
        conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    vectors = conn.execute("SELECT hash, vector FROM embeddings").fetchall()
    conn.close()
    conn = open_index(store.index_path, create=True)
    try:
        assert conn.execute("SELECT hash, vector FROM embeddings").fetchall() == vectors
        assert conn.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH '6432'").fetchall()
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
        assert "files_fts" not in tables
    finally:
        conn.close()
    embedded = len(hash_embedder.calls)
    assert index_store(store, embedder=hash_embedder).embedded == 0
    assert len(hash_embedder.calls) == embedded


def test_an_index_of_layout_3_loses_the_unread_body_column_and_keeps_ids_and_vectors(
    make_store, hash_embedder
):  # type: ignore[no-untyped-def]
    store = make_store({"a.md": "# Port\n\nPgBouncer listens on 6432.\n", "b.md": "# B\n\nother"})
    index_store(store, embedder=hash_embedder)
    conn = open_index(store.index_path)
    with conn:  # layout 3 kept each file's whole text inline in files.body
        conn.execute("ALTER TABLE files ADD COLUMN body TEXT NOT NULL DEFAULT 'whole text'")
        conn.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    before = conn.execute("SELECT id, path FROM files ORDER BY id").fetchall()
    vectors = conn.execute("SELECT hash, vector FROM embeddings").fetchall()
    conn.close()
    conn = open_index(store.index_path, create=True)
    try:
        assert "body" not in {row[1] for row in conn.execute("PRAGMA table_info(files)")}
        assert conn.execute("SELECT id, path FROM files ORDER BY id").fetchall() == before
        assert conn.execute("SELECT hash, vector FROM embeddings").fetchall() == vectors
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
            "4",
        )
    finally:
        conn.close()
    assert search(store, "6432", embedder=hash_embedder).hits[0].path == "a.md"
    assert index_store(store, embedder=hash_embedder).embedded == 0
