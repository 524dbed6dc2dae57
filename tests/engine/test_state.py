"""The state plane on SQLite: state.db outlives a deleted index.db, and a row follows its file by
the content hash the index kept.

Reads and outcomes counted, renames followed and salience given, on both backends, are in
tests/engine/contract/test_contract_state.py.
"""

from __future__ import annotations

import pytest

from engine import state
from engine.indexing.indexer import index_store
from engine.sqlite import state as sqlite_state
from engine.sqlite.db import open_state


def test_state_survives_deleting_and_rebuilding_the_index(make_store, hash_embedder):
    store = make_store({"a.md": "# A\n\nalpha"})
    index_store(store, embedder=hash_embedder)
    state.record_access(store, "a.md")
    state.reinforce(store, "a.md", 1)
    for suffix in ("", "-wal", "-shm"):
        store.index_path.with_name(store.index_path.name + suffix).unlink(missing_ok=True)
    index_store(store, embedder=hash_embedder)
    conn = open_state(store.state_path)
    try:
        access = sqlite_state.get_access(conn, "a.md")
    finally:
        conn.close()
    assert (access.access_count, access.outcome_score) == (1, pytest.approx(0.3))


def test_state_follows_a_rename_made_while_the_index_was_deleted(make_store, hash_embedder):
    store = make_store({"a.md": "# A\n\nalpha"})
    index_store(store, embedder=hash_embedder)
    from engine.sqlite.db import open_index

    index = open_index(store.index_path)
    (digest,) = index.execute("SELECT content_hash FROM files WHERE path = 'a.md'").fetchone()
    index.close()
    state.record_access(store, "a.md", digest)
    for suffix in ("", "-wal", "-shm"):
        store.index_path.with_name(store.index_path.name + suffix).unlink(missing_ok=True)
    (store.root / "a.md").rename(store.root / "moved.md")
    index_store(store, embedder=hash_embedder)
    assert state.state_paths(store) == ["moved.md"]


DEPLOY = "---\ntitle: Deploy steps\n---\nTag the release, then run the pipeline.\n"


def test_state_stays_with_a_memory_that_is_briefly_unparsable_while_a_copy_exists(
    make_store, hash_embedder
):
    store = make_store({"deploy.md": DEPLOY})
    index_store(store, embedder=hash_embedder)
    from engine.sqlite.db import open_index

    index = open_index(store.index_path)
    (digest,) = index.execute("SELECT content_hash FROM files").fetchone()
    index.close()
    for _ in range(5):
        state.record_access(store, "deploy.md", digest)
    state.reinforce(store, "deploy.md", 1, digest)
    (store.root / "deploy-backup.md").write_text(DEPLOY, encoding="utf-8")
    index_store(store, embedder=hash_embedder)
    (store.root / "deploy.md").write_text(DEPLOY.replace("Deploy steps", "a: b"))
    broken = index_store(store, embedder=hash_embedder)
    assert broken.skipped[0][0] == "deploy.md" and broken.renamed == []
    (store.root / "deploy.md").write_text(DEPLOY, encoding="utf-8")
    index_store(store, embedder=hash_embedder)
    assert state.state_paths(store) == ["deploy.md"]
    conn = open_state(store.state_path)
    try:
        access = sqlite_state.get_access(conn, "deploy.md")
    finally:
        conn.close()
    assert (access.access_count, access.outcome_score) == (5, pytest.approx(0.3))


def test_a_rename_that_moves_a_row_is_reported(make_store, hash_embedder):
    store = make_store({"a.md": "# A\n\nalpha", "b.md": "# B\n\nbeta"})
    index_store(store, embedder=hash_embedder)
    state.record_access(store, "a.md")
    (store.root / "a.md").rename(store.root / "renamed.md")
    (store.root / "b.md").rename(store.root / "no-row.md")
    report = index_store(store, embedder=hash_embedder)
    assert report.renamed == [("a.md", "renamed.md")]
    assert report.summary()["moved"] == [{"from": "a.md", "to": "renamed.md"}]
