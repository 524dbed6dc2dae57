"""Promises about killed runs and concurrent use, each kept by a test that fails if it breaks.

The indexer runs in a child process (a real process, killed with SIGKILL) with a deliberately
slow stand-in embedder and small batches, so a kill lands mid-transaction often.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from engine.indexing.indexer import index_store
from engine.sqlite.db import open_index
from engine.status import store_status
from slow_indexer import finish, start


def run_worker(root: Path) -> None:
    assert finish(start(root)) == 0


def write_corpus(root: Path, rng: random.Random, count: int) -> None:
    words = "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega".split()
    for number in range(count):
        sentences = rng.randint(1, 60)
        body = " ".join(
            " ".join(rng.choices(words, k=rng.randint(4, 14))).capitalize() + "."
            for _ in range(sentences)
        )
        path = root / f"dir{number % 5}" / f"note-{number:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ntitle: Note {number} {rng.choice(words)}\n---\n{body}\n")


def mutate(root: Path, rng: random.Random) -> None:
    """Edit, delete, rename and add a few files, so every run has real work to do."""
    files = sorted(root.rglob("*.md"))
    for path in rng.sample(files, 12):
        path.write_text(path.read_text() + f"\nEdited {rng.random()}.\n")
    rng.choice(files).unlink()
    survivor = rng.choice([p for p in files if p.exists()])
    survivor.rename(survivor.with_name(f"renamed-{rng.randint(0, 10**9)}.md"))
    write_corpus(root / f"added-{rng.randint(0, 10**9)}", rng, 2)


def snapshot(index: Path) -> dict[str, list[tuple[object, ...]]]:
    """The logical content of an index, independent of rowids and timing."""
    conn = open_index(index)
    try:
        return {
            "files": conn.execute(
                "SELECT path, title, kind, event_at, updated_at, tags, archived, content_hash "
                "FROM files ORDER BY path"
            ).fetchall(),
            "chunks": conn.execute(
                "SELECT f.path, c.seq, c.text, c.hash FROM chunks c JOIN files f "
                "ON f.id = c.file_id ORDER BY f.path, c.seq"
            ).fetchall(),
            "embeddings": conn.execute(
                "SELECT hash, model, dim, vector FROM embeddings ORDER BY hash"
            ).fetchall(),
            "vec_chunks": conn.execute(
                "SELECT f.path, c.seq, v.embedding FROM vec_chunks AS v "
                "JOIN chunks AS c ON c.id = v.chunk_id JOIN files AS f ON f.id = c.file_id "
                "ORDER BY f.path, c.seq"
            ).fetchall(),
        }
    finally:
        conn.close()


def assert_consistent(index: Path) -> None:
    conn = open_index(index)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")
        orphans = conn.execute(
            "SELECT count(*) FROM chunks WHERE file_id NOT IN (SELECT id FROM files)"
        ).fetchone()
        assert orphans == (0,)
    finally:
        conn.close()


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_at_random_moments_never_corrupts_and_a_rerun_converges(tmp_path):
    rng = random.Random(20261130)
    root = tmp_path / "store"
    write_corpus(root, rng, 60)
    kills = runs = 0
    while kills < 20 and runs < 60:
        runs += 1
        mutate(root, rng)
        process = start(root)
        time.sleep(rng.uniform(0.0, 0.25))
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            kills += 1
        finish(process)
        if (root / ".memsift" / "index.db").exists():
            assert_consistent(root / ".memsift" / "index.db")
    assert kills == 20
    run_worker(root)
    clean = tmp_path / "clean"
    shutil.copytree(root, clean, ignore=shutil.ignore_patterns(".memsift"))
    run_worker(clean)
    assert_consistent(root / ".memsift" / "index.db")
    assert snapshot(root / ".memsift" / "index.db") == snapshot(clean / ".memsift" / "index.db")


def test_unreadable_file_is_skipped_with_a_reason(make_store, hash_embedder, monkeypatch):
    store = make_store({"a.md": "# A\n\nalpha", "locked.md": "# L\n\nlocked"})
    real_open = os.open

    def refuse(path, flags, *args, **kwargs):  # type: ignore[no-untyped-def]
        if os.fsdecode(path).endswith("locked.md"):  # what chmod 000 does to a non-root reader
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    report = index_store(store, embedder=hash_embedder)
    assert report.indexed == ["a.md"]
    assert report.skipped == [("locked.md", "cannot read: Permission denied")]


def test_symlink_loop_is_reported_and_not_followed(make_store, hash_embedder):
    store = make_store({"sub/a.md": "# A\n\nalpha"})
    (store.root / "sub" / "loop").symlink_to(store.root, target_is_directory=True)
    report = index_store(store, embedder=hash_embedder)
    assert report.indexed == ["sub/a.md"]
    assert report.skipped == [("sub/loop", "symlink (not followed)")]


def test_two_index_runs_at_once_embed_each_chunk_once(tmp_path):
    rng = random.Random(11)
    root = tmp_path / "store"
    write_corpus(root, rng, 30)
    first, second = start(root), start(root)
    outputs = []
    for process in (first, second):
        assert process.stdout is not None
        outputs.append(process.stdout.read())
        assert finish(process) == 0
    embedded = sum(int(out.split()[-1]) for out in outputs)
    conn = open_index(root / ".memsift" / "index.db")
    try:
        (distinct,) = conn.execute("SELECT count(DISTINCT hash) FROM chunks").fetchone()
    finally:
        conn.close()
    assert embedded == distinct


INDEX_AND_REPORT = textwrap.dedent(
    """
    import json, os, resource, sys
    from engine.indexing.indexer import index_store

    # A regression that reads an endless file must fail here, not exhaust a shared machine.
    resource.setrlimit(resource.RLIMIT_DATA, (1 << 30, 1 << 30))

    opened = []
    real_open = os.open

    def spy(path, flags, *args, **kwargs):
        opened.append(os.fsdecode(path))
        return real_open(path, flags, *args, **kwargs)

    os.open = spy
    report = index_store(sys.argv[1], embed=False)
    print(json.dumps({"indexed": report.indexed, "skipped": report.skipped, "opened": opened}))
    """
)


def index_in_child(root: Path) -> dict[str, list]:
    """Index in a child process with a timeout, so a file that blocks a reader fails the test
    instead of hanging the suite."""
    done = subprocess.run(
        [sys.executable, "-c", INDEX_AND_REPORT, str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_is_skipped_before_it_is_opened_and_the_run_finishes(make_store):
    store = make_store({"a.md": "# A\n\nalpha"})
    os.mkfifo(store.root / "pipe.md")
    for _ in range(2):  # a second run must not wait on a lock the first never released
        outcome = index_in_child(store.root)
        [(key, reason)] = outcome["skipped"]
        assert key == "pipe.md" and "named pipe" in reason and "regular file" in reason
        assert not [path for path in outcome["opened"] if path.endswith("pipe.md")]
    assert outcome["indexed"] == [] and store_status(store)["files"] == 1


def test_a_device_file_is_skipped_before_it_is_opened(make_store):
    store = make_store({"a.md": "# A\n\nalpha"})
    try:  # a copy of /dev/zero: endless bytes to any reader (making one needs privileges)
        os.mknod(store.root / "zero.md", 0o600 | stat.S_IFCHR, os.makedev(1, 5))
    except (AttributeError, PermissionError, OSError):
        pytest.skip("cannot make a device file here")
    outcome = index_in_child(store.root)
    assert outcome["indexed"] == ["a.md"]
    [(key, reason)] = outcome["skipped"]
    assert key == "zero.md" and "device" in reason
    assert not [path for path in outcome["opened"] if path.endswith("zero.md")]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_status_does_not_count_a_named_pipe_as_an_added_file(make_store, hash_embedder):
    store = make_store({"a.md": "# A\n\nalpha"})
    index_store(store, embedder=hash_embedder)
    os.mkfifo(store.root / "pipe.md")
    assert store_status(store)["changes"] == {"added": 0, "modified": 0, "removed": 0}


def test_a_file_that_grows_while_it_is_read_is_skipped_and_never_read_whole(
    make_store, hash_embedder, monkeypatch
):
    limit = 1000
    store = make_store(
        {
            ".memsift/config.toml": f"[limits]\nmax_file_bytes = {limit}\n",
            "a.md": "# A\n\nalpha",
            "log.md": "# Log\n\nstarts small",
        }
    )
    grown = store.root / "log.md"
    real_read = os.read
    delivered = {"log.md": 0}

    def read_while_a_writer_appends(fd: int, size: int) -> bytes:
        """Every read of log.md finds 4 kB more written since: it outgrows any reader."""
        if os.path.samestat(os.fstat(fd), grown.stat()):
            with grown.open("ab") as writer:
                writer.write(b"more " * 800)
            data = real_read(fd, size)
            delivered["log.md"] += len(data)
            return data
        return real_read(fd, size)

    monkeypatch.setattr(os, "read", read_while_a_writer_appends)
    report = index_store(store, embedder=hash_embedder)
    assert report.indexed == ["a.md"]
    [(key, reason)] = report.skipped
    assert key == "log.md" and f"{limit}-byte limit" in reason
    assert delivered["log.md"] <= limit + 1
