"""The state plane: reads counted, outcomes folded, and nothing lost when the index goes."""

from __future__ import annotations

import pytest

from engine import state
from engine.indexer import index_store


def test_reinforce_moves_the_score_towards_the_outcome(make_store):
    store = make_store({"a.md": "# A\n\nalpha"})
    assert state.reinforce(store, "a.md", 1).outcome_score == pytest.approx(0.3)
    assert state.reinforce(store, "a.md", -1).outcome_score == pytest.approx(0.3 * 0.7 - 0.3)


def test_reinforce_stays_within_bounds_after_many_outcomes(make_store):
    store = make_store({"a.md": "# A\n\nalpha"})
    for _ in range(40):
        score = state.reinforce(store, "a.md", 1).outcome_score
    assert 0.99 < score <= 1.0
    for _ in range(40):
        score = state.reinforce(store, "a.md", -1).outcome_score
    assert -1.0 <= score < -0.99


def test_reinforce_refuses_other_outcomes_and_writes_nothing(make_store):
    store = make_store({"a.md": "# A\n\nalpha"})
    with pytest.raises(ValueError, match="1 or -1"):
        state.reinforce(store, "a.md", 2)
    assert state.state_paths(store) == []


def test_record_access_counts_and_timestamps(make_store):
    store = make_store({"a.md": "# A\n\nalpha"})
    state.record_access(store, "a.md")
    access = state.record_access(store, "a.md")
    assert access.access_count == 2
    assert access.last_accessed_at is not None


def test_reinforce_keeps_access_count(make_store):
    store = make_store({"a.md": "# A\n\nalpha"})
    state.record_access(store, "a.md")
    access = state.reinforce(store, "a.md", -1)
    assert (access.access_count, access.outcome_score) == (1, pytest.approx(-0.3))


def test_state_survives_deleting_and_rebuilding_the_index(make_store, hash_embedder):
    store = make_store({"a.md": "# A\n\nalpha"})
    index_store(store, embedder=hash_embedder)
    state.record_access(store, "a.md")
    state.reinforce(store, "a.md", 1)
    for suffix in ("", "-wal", "-shm"):
        store.index_path.with_name(store.index_path.name + suffix).unlink(missing_ok=True)
    index_store(store, embedder=hash_embedder)
    conn = state.open_state(store.state_path)
    try:
        access = state.get_access(conn, "a.md")
    finally:
        conn.close()
    assert (access.access_count, access.outcome_score) == (1, pytest.approx(0.3))


def test_state_follows_a_renamed_file_with_the_same_content(make_store, hash_embedder):
    store = make_store({"a.md": "# A\n\nalpha"})
    index_store(store, embedder=hash_embedder)
    state.record_access(store, "a.md")
    (store.root / "a.md").rename(store.root / "b.md")
    index_store(store, embedder=hash_embedder)
    assert state.state_paths(store) == ["b.md"]


def test_state_follows_a_rename_made_while_the_index_was_deleted(make_store, hash_embedder):
    store = make_store({"a.md": "# A\n\nalpha"})
    index_store(store, embedder=hash_embedder)
    from engine.db import open_index

    index = open_index(store.index_path)
    (digest,) = index.execute("SELECT content_hash FROM files WHERE path = 'a.md'").fetchone()
    index.close()
    state.record_access(store, "a.md", digest)
    for suffix in ("", "-wal", "-shm"):
        store.index_path.with_name(store.index_path.name + suffix).unlink(missing_ok=True)
    (store.root / "a.md").rename(store.root / "moved.md")
    index_store(store, embedder=hash_embedder)
    assert state.state_paths(store) == ["moved.md"]


def test_concurrent_reinforcements_all_succeed(make_store):
    import subprocess
    import sys

    store = make_store({"a.md": "# A\n\nalpha"})
    code = (
        "import sys\nfrom engine import state\nfrom engine.store import open_store\n"
        "s = open_store(sys.argv[1])\n"
        "for _ in range(30): state.reinforce(s, 'a.md', 1)\n"
    )
    workers = [
        subprocess.Popen([sys.executable, "-c", code, str(store.root)]) for _ in range(4)
    ]
    assert [w.wait(timeout=120) for w in workers] == [0, 0, 0, 0]
    conn = state.open_state(store.state_path)
    try:
        assert state.get_access(conn, "a.md").outcome_score == pytest.approx(1 - 0.7**120)
    finally:
        conn.close()


def test_a_row_never_moves_onto_a_memory_that_has_its_own(make_store, hash_embedder):
    store = make_store({"a.md": "# A\n\nalpha"})
    index_store(store, embedder=hash_embedder)
    state.record_access(store, "a.md")
    (store.root / "a.md").rename(store.root / "b.md")
    state.record_access(store, "b.md")
    index_store(store, embedder=hash_embedder)
    assert state.state_paths(store) == ["a.md", "b.md"]


DEPLOY = "---\ntitle: Deploy steps\n---\nTag the release, then run the pipeline.\n"


def test_state_stays_with_a_memory_that_is_briefly_unparsable_while_a_copy_exists(
    make_store, hash_embedder
):
    store = make_store({"deploy.md": DEPLOY})
    index_store(store, embedder=hash_embedder)
    from engine.db import open_index

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
    conn = state.open_state(store.state_path)
    try:
        access = state.get_access(conn, "deploy.md")
    finally:
        conn.close()
    assert (access.access_count, access.outcome_score) == (5, pytest.approx(0.3))


def test_a_row_stays_while_its_file_exists_even_when_the_file_leaves_the_index(
    make_store, hash_embedder
):
    store = make_store({"a.md": "# A\n\nalpha"})
    index_store(store, embedder=hash_embedder)
    state.record_access(store, "a.md")
    (store.root / "copy.md").write_text("# A\n\nalpha", encoding="utf-8")
    (store.root / "a.md").write_bytes(b"# A\n\n\xff not UTF-8 any more")
    report = index_store(store, embedder=hash_embedder)
    assert report.removed == ["a.md"] and report.renamed == []
    assert state.state_paths(store) == ["a.md"]


def test_a_rename_that_moves_a_row_is_reported(make_store, hash_embedder):
    store = make_store({"a.md": "# A\n\nalpha", "b.md": "# B\n\nbeta"})
    index_store(store, embedder=hash_embedder)
    state.record_access(store, "a.md")
    (store.root / "a.md").rename(store.root / "renamed.md")
    (store.root / "b.md").rename(store.root / "no-row.md")
    report = index_store(store, embedder=hash_embedder)
    assert report.renamed == [("a.md", "renamed.md")]
    assert report.summary()["moved"] == [{"from": "a.md", "to": "renamed.md"}]
