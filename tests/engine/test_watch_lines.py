"""What `memsift watch` (and the server's log) says about a change: every file it skips with
the reason, as `memsift index` would say it; how many paths a long list leaves out; and no
control character from a file name on the terminal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_freshness import LEXICAL, SRC, WAIT_S, eventually, indexed, running

from engine.indexing.freshness import Freshness
from engine.indexing.incremental import index_paths
from engine.indexing.indexer import index_store


@pytest.fixture
def logged(make_store):  # type: ignore[no-untyped-def]
    """A lexical store watched by a running Freshness whose log lines are collected."""
    store = make_store({".memsift/config.toml": LEXICAL, "a.md": "A.\n"})
    lines: list[str] = []
    with running(Freshness(store, log=lines.append)):
        yield store, lines


def test_a_file_saved_unusable_is_named_with_the_reason(logged):
    store, lines = logged
    (store.root / "broken.md").write_text("---\ntitle: [unclosed\n---\nBody.\n")

    assert eventually(lambda: any("broken.md: front matter" in line for line in lines)), lines


def test_a_long_change_says_how_many_paths_it_leaves_out(logged, tmp_path):
    """Twelve files in one change: a folder moved in is one event (files written one by one
    may reach the watcher in several short batches on a loaded machine)."""
    store, lines = logged
    folder = tmp_path / "batch"
    folder.mkdir()
    for number in range(12):
        (folder / f"m{number:02}.md").write_text(f"Memory {number}.\n")
    folder.rename(store.root / "batch")

    assert eventually(lambda: len(indexed(store)) == 13)
    # The line is logged after the index is written: wait for it, not for the index
    assert eventually(lambda: paths_logged(lines, "batch/") == 12), lines
    assert any("batch/" in line and " and 7 more" in line for line in lines), lines


def paths_logged(lines: list[str], prefix: str) -> int:
    """How many paths under ``prefix`` the log lines name or count ("… and N more")."""
    total = 0
    for line in lines:
        if prefix in line:
            shown = line.split(": ", 1)[1]
            more = int(shown.split(" and ")[1].split()[0]) if " and " in shown else 0
            total += shown.count(prefix) + more
    return total


def test_memsift_watch_escapes_a_hostile_file_name(make_store):
    store = make_store({".memsift/config.toml": LEXICAL, "a.md": "A.\n"})
    with subprocess.Popen(
        [sys.executable, "-c", "from engine.cli import main; main()", "watch"],
        cwd=store.root,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        try:
            assert eventually(lambda: indexed(store) == {"a.md"})
            Path(store.root / "evil\x1b]0;pwned\x07.md").write_text("Evil.\n")
            assert eventually(lambda: len(indexed(store)) == 2)
        finally:
            child.send_signal(signal.SIGINT)
            _, stderr = child.communicate(timeout=60)

    assert "evil\\x1b]0;pwned\\x07.md" in stderr
    assert "\x1b" not in stderr and "\x07" not in stderr


def test_a_folder_named_like_a_memory_is_not_a_skipped_file(make_store):
    """The full walk goes into notes.md/ as into any folder; a watcher's event for the folder
    itself must not report it as a file it skipped, nor keep a record of it as one."""
    store = make_store({".memsift/config.toml": LEXICAL, "notes.md/inner.md": "Inner.\n"})
    index_store(store, embed=False)

    report = index_paths(store, ["notes.md", "notes.md/inner.md"])

    assert report.skipped == []


def test_a_file_replaced_by_a_folder_of_its_name_leaves_the_index(make_store):
    store = make_store({".memsift/config.toml": LEXICAL, "notes.md": "Notes.\n"})
    index_store(store, embed=False)
    (store.root / "notes.md").unlink()
    (store.root / "notes.md").mkdir()
    (store.root / "notes.md" / "inner.md").write_text("Inner.\n")

    report = index_paths(store, ["notes.md", "notes.md/inner.md"])

    assert (report.removed, report.indexed, report.skipped) == (
        ["notes.md"],
        ["notes.md/inner.md"],
        [],
    )


def test_an_index_deleted_while_watched_is_rebuilt_whole(make_store):
    """index.db is derived and may be deleted any time; a watcher that only indexed the next
    changed file into a fresh one would leave the rest of the store out of every search."""
    store = make_store({".memsift/config.toml": LEXICAL, "a.md": "A.\n", "b.md": "B.\n"})
    lines: list[str] = []
    freshness = Freshness(store, log=lines.append)
    freshness.start()
    try:
        assert freshness.caught_up.wait(WAIT_S)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{store.index_path}{suffix}").unlink(missing_ok=True)
        (store.root / "c.md").write_text("C.\n")

        assert eventually(lambda: indexed(store) == {"a.md", "b.md", "c.md"}), lines
    finally:
        freshness.stop()
