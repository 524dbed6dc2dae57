"""The index follows the files while a process watches: catch-up at start, each change at once
(lexically), vectors behind, whole folders moved in or out, and a clean stop."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw
import pytest

from conftest import HashEmbedder
from engine.indexing.freshness import Freshness
from engine.indexing.indexer import index_store
from engine.sqlite.db import open_index, read_meta

SRC = Path(__file__).resolve().parents[2] / "src"
LEXICAL = '[embedder]\nmodel = "none"\n'
#: How long a test waits for the threads to do something: generous (a loaded machine is slow),
#: and a condition that holds ends the wait at once.
WAIT_S = 120


def eventually(check: Callable[[], bool], timeout: float = WAIT_S) -> bool:
    """Poll until ``check`` holds or the deadline passes (no timed assertion)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


def indexed(store) -> set[str]:  # type: ignore[no-untyped-def]
    if not store.index_path.exists():
        return set()
    conn = open_index(store.index_path)
    try:
        return {path for (path,) in conn.execute("SELECT path FROM files")}
    except apsw.SQLError:  # another process is creating the schema right now
        return set()
    finally:
        conn.close()


@contextmanager
def running(freshness: Freshness) -> Iterator[Freshness]:
    """``freshness`` started and caught up with its store; stopped on the way out."""
    freshness.start()
    try:
        assert freshness.caught_up.wait(WAIT_S)
        yield freshness
    finally:
        freshness.stop()


@pytest.fixture
def watched(make_store):  # type: ignore[no-untyped-def]
    """A lexical store with a running Freshness; stopped after the test."""
    store = make_store({".memsift/config.toml": LEXICAL, "facts/port.md": "Port 6432.\n"})
    with running(Freshness(store)) as freshness:
        yield store, freshness


def test_it_catches_up_with_files_present_at_start(watched):
    store, _ = watched
    assert indexed(store) == {"facts/port.md"}


def test_a_new_file_is_indexed_while_watching(watched):
    store, _ = watched
    (store.root / "facts" / "new.md").write_text("New.\n")
    assert eventually(lambda: "facts/new.md" in indexed(store))


def test_a_deleted_file_leaves_the_index(watched):
    store, _ = watched
    (store.root / "facts" / "port.md").unlink()
    assert eventually(lambda: indexed(store) == set())


def test_a_folder_moved_into_the_store_is_indexed_whole(watched, tmp_path):
    store, _ = watched
    outside = tmp_path / "incoming"
    outside.mkdir()
    for name in ("a.md", "b.md"):
        (outside / name).write_text(f"{name}\n")
    shutil.move(str(outside), str(store.root / "incoming"))
    assert eventually(lambda: {"incoming/a.md", "incoming/b.md"} <= indexed(store))


def test_a_folder_moved_out_of_the_store_leaves_the_index(watched, tmp_path):
    store, _ = watched
    shutil.move(str(store.root / "facts"), str(tmp_path / "facts"))
    assert eventually(lambda: indexed(store) == set())


def test_changes_in_hidden_folders_and_other_files_are_ignored(watched):
    store, freshness = watched
    (store.root / ".git").mkdir()
    (store.root / ".git" / "x.md").write_text("Hidden.\n")
    (store.root / "notes.txt").write_text("Not a memory.\n")
    (store.root / "facts" / "seen.md").write_text("Seen.\n")
    assert eventually(lambda: "facts/seen.md" in indexed(store))
    assert indexed(store) == {"facts/port.md", "facts/seen.md"}
    assert freshness.status()["last_error"] is None


def test_stop_ends_every_thread(make_store):
    store = make_store({".memsift/config.toml": LEXICAL, "a.md": "A.\n"})
    freshness = Freshness(store)
    freshness.start()
    assert freshness.caught_up.wait(WAIT_S)
    freshness.stop(timeout=WAIT_S)
    assert not any(thread.is_alive() for thread in freshness._threads)


def test_vectors_follow_behind_the_lexical_index(make_store, monkeypatch):
    """With an embedding model, the filler brings coverage back to full after a change."""
    embedder = HashEmbedder()
    monkeypatch.setattr("engine.indexing.freshness.make_embedder", lambda _name: embedder)
    store = make_store({"a.md": "Alpha.\n"})
    index_store(store, embedder=embedder)
    freshness = Freshness(store)
    freshness.start()
    try:
        (store.root / "b.md").write_text("Beta, a second memory.\n")

        def covered() -> bool:
            conn = open_index(store.index_path)
            try:
                return (read_meta(conn, "chunks"), read_meta(conn, "embedded_chunks")) == (
                    "2",
                    "2",
                )
            finally:
                conn.close()

        assert eventually(covered)
    finally:
        freshness.stop()


@pytest.mark.parametrize("parent_ignores_sigint", [False, True], ids=["terminal", "background"])
def test_memsift_watch_indexes_changes_and_exits_cleanly_on_ctrl_c(
    make_store, parent_ignores_sigint
):
    """Also when started as a script's background job, which inherits SIGINT ignored."""
    store = make_store({".memsift/config.toml": LEXICAL, "a.md": "A.\n"})
    with subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from engine.cli import main; main()",
            "watch",
            "--store",
            str(store.root),
        ],
        env={**os.environ, "PYTHONPATH": str(SRC)},
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ignore_sigint if parent_ignores_sigint else None,
    ) as child:
        try:
            assert eventually(lambda: indexed(store) == {"a.md"})
            (store.root / "b.md").write_text("B.\n")
            assert eventually(lambda: indexed(store) == {"a.md", "b.md"})
        finally:
            child.send_signal(signal.SIGINT)
            try:
                _, stderr = child.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                child.kill()
                pytest.fail("memsift watch did not stop on SIGINT within 60 s")
    assert child.returncode == 0, stderr
    assert "memsift watch: stopping" in stderr
    assert "Traceback" not in stderr


def ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
