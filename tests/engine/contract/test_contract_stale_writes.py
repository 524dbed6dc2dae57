"""The index ends holding each file's last content, on SQLite and on PostgreSQL, whatever raced
with the read that indexed it.

Two races, each driven here step by step (a hook inside the reader's parse, a controlled clock
and ``os.utime``), never by timing:

* a watcher or index run that read a file just before another writer (``forget``, an edit and
  its own indexing) rewrote it must not write the old row over the new one: every writer
  checks, under the index's write lock, that the file still holds what it parsed;
* a rewrite that keeps the file's size within one mtime tick leaves size and mtime as they
  were: a file read before its mtime had settled is hashed by the next scan, not trusted.
"""

from __future__ import annotations

import hashlib
import os

import pytest

from backends import Backend, memory
from engine.agents.write import forget
from engine.indexing import index_run, pipeline
from engine.indexing.incremental import index_paths
from engine.indexing.indexer import index_store
from engine.status import store_status

LEXICAL = '[embedder]\nmodel = "none"\n'
#: A moment well in the past, for mtimes a test sets (2023-11-14).
T = 1_700_000_000 * 1_000_000_000
MS = 1_000_000
HOUR = 3600 * 1_000_000_000


def row(backend: Backend, store, key: str) -> tuple[str, bool]:  # type: ignore[no-untyped-def]
    """(content hash, archived) of ``key``'s row."""
    rows = backend.rows(store, f"SELECT content_hash, archived FROM files WHERE path = '{key}'")
    assert len(rows) == 1, rows
    digest, archived = rows[0]
    return str(digest), bool(archived)


def file_hash(store, key: str) -> str:  # type: ignore[no-untyped-def]
    return hashlib.sha256((store.root / key).read_bytes()).hexdigest()


def reindex(store, run: str):  # type: ignore[no-untyped-def]
    """The next look at ``m.md``: a full run, or the incremental run a watcher makes; returns
    its report."""
    if run == "full":
        return index_store(store, embed=False)
    return index_paths(store, ["m.md"])


def while_parsing(monkeypatch: pytest.MonkeyPatch, key: str, meanwhile) -> None:  # type: ignore[no-untyped-def]
    """Run ``meanwhile()`` once, right after the next parse of ``key`` and before its reader
    writes the row: the moment a stale write would come from."""
    real = pipeline.parse_memory
    fired = []

    def parse(path: str, data: bytes):  # type: ignore[no-untyped-def]
        parsed = real(path, data)
        if path == key and not fired:
            fired.append(path)
            meanwhile()
        return parsed

    monkeypatch.setattr(pipeline, "parse_memory", parse)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The wall clock a scan reads to judge mtimes: ``clock[0]``, set by the test."""
    now = [T]
    monkeypatch.setattr(pipeline, "wall_clock_ns", lambda: now[0])
    return now


@pytest.mark.parametrize("run", ["full", "incremental"])
def test_a_read_made_before_forget_rewrote_the_file_does_not_overwrite_forgets_row(
    backend, backend_store, monkeypatch, run
):
    store = backend_store(
        {"m.md": memory("M", "The deploy key rotates monthly."), ".memsift/config.toml": LEXICAL}
    )
    index_store(store, embed=False)
    (store.root / "m.md").write_text(memory("M", "The deploy key rotates weekly now."))
    os.utime(store.root / "m.md", ns=(T, T))  # settled long before the read
    while_parsing(monkeypatch, "m.md", lambda: forget(store, "m.md"))

    reindex(store, run)

    assert row(backend, store, "m.md") == (file_hash(store, "m.md"), True)


@pytest.mark.parametrize("run", ["full", "incremental"])
def test_a_read_made_before_a_rewrite_keeping_size_and_mtime_does_not_overwrite_its_row(
    backend, backend_store, monkeypatch, run
):
    store = backend_store(
        {"m.md": memory("M", "The code word is alpha."), ".memsift/config.toml": LEXICAL}
    )
    index_store(store, embed=False)
    path = store.root / "m.md"
    path.write_text(memory("M", "The code word is bravo."))
    os.utime(path, ns=(T, T))

    def rewrite() -> None:  # same size, same mtime, and indexed by its writer
        path.write_text(memory("M", "The code word is delta."))
        os.utime(path, ns=(T, T))
        index_paths(store, ["m.md"])

    while_parsing(monkeypatch, "m.md", rewrite)

    reindex(store, run)

    assert "delta" in path.read_text()
    assert row(backend, store, "m.md") == (file_hash(store, "m.md"), False)


@pytest.mark.parametrize("run", ["full", "incremental"])
def test_a_same_size_rewrite_within_one_mtime_tick_is_seen_by_the_next_scan(
    backend, backend_store, clock, run
):
    store = backend_store(
        {"m.md": memory("M", "The code word is alpha."), ".memsift/config.toml": LEXICAL}
    )
    path = store.root / "m.md"
    os.utime(path, ns=(T, T))
    clock[0] = T + MS  # indexed a millisecond after it was written
    index_store(store, embed=False)
    path.write_text(memory("M", "The code word is bravo."))  # same size, same tick
    os.utime(path, ns=(T, T))
    clock[0] = T + HOUR

    reindex(store, run)

    assert row(backend, store, "m.md")[0] == file_hash(store, "m.md")


def test_a_file_settled_since_its_read_is_hashed_once_then_trusted(
    backend, backend_store, clock, monkeypatch
):
    store = backend_store(
        {"m.md": memory("M", "The code word is alpha."), ".memsift/config.toml": LEXICAL}
    )
    os.utime(store.root / "m.md", ns=(T, T))
    clock[0] = T + MS
    index_store(store, embed=False)
    real = pipeline.read_regular
    reads: list[str] = []

    def counted(path, max_bytes):  # type: ignore[no-untyped-def]
        reads.append(path.name)
        return real(path, max_bytes)

    monkeypatch.setattr(pipeline, "read_regular", counted)
    clock[0] = T + HOUR

    index_store(store, embed=False)
    hashed = len(reads)
    index_store(store, embed=False)

    assert (hashed, len(reads)) == (1, 1)
    assert row(backend, store, "m.md")[0] == file_hash(store, "m.md")


def test_status_counts_a_file_read_before_it_settled_as_unchanged(backend, backend_store, clock):
    store = backend_store(
        {"m.md": memory("M", "The code word is alpha."), ".memsift/config.toml": LEXICAL}
    )
    os.utime(store.root / "m.md", ns=(T, T))
    clock[0] = T + MS  # recorded as not to be trusted by size and mtime

    index_store(store, embed=False)

    assert store_status(store)["changes"] == {"added": 0, "modified": 0, "removed": 0}


def test_a_file_back_in_place_after_the_walk_missed_it_keeps_its_row(
    backend, backend_store, monkeypatch
):
    # An editor that moves the old file away and writes a new one leaves the path empty for a
    # moment; a run whose walk passes then must not delete the row of the file that is back
    # (a watcher may have indexed it meanwhile, and sees no event after the run's delete).
    from engine.indexing import index_run

    store = backend_store(
        {
            "m.md": memory("M", "The deploy key rotates monthly."),
            "n.md": memory("N", "Another memory."),
            ".memsift/config.toml": LEXICAL,
        }
    )
    index_store(store, embed=False)
    real = index_run.walk
    monkeypatch.setattr(index_run, "walk", lambda s: [c for c in real(s) if c.key != "m.md"])

    report = index_store(store, embed=False)

    assert report.removed == []
    assert row(backend, store, "m.md") == (file_hash(store, "m.md"), False)


def test_a_watcher_that_missed_a_file_back_in_place_keeps_its_row(
    backend, backend_store, monkeypatch
):
    # The watcher's incremental run looks at the keys an event named: a file it did not find
    # (moved away a moment by an editor) but back before its delete keeps its row.
    from engine.indexing import index_run

    store = backend_store(
        {"m.md": memory("M", "The deploy key rotates monthly."), ".memsift/config.toml": LEXICAL}
    )
    index_store(store, embed=False)
    real = index_run.key_candidates
    monkeypatch.setattr(
        index_run, "key_candidates", lambda s, keys: [c for c in real(s, keys) if c.key != "m.md"]
    )

    report = index_paths(store, ["m.md"])

    assert report.removed == []
    assert row(backend, store, "m.md") == (file_hash(store, "m.md"), False)


@pytest.mark.parametrize("replaced_by", ["nothing", "a folder of its name"])
@pytest.mark.parametrize("run", ["full", "watch"])
def test_a_file_still_gone_under_the_lock_loses_its_row(backend, backend_store, run, replaced_by):
    store = backend_store(
        {
            "m.md": memory("M", "Gone soon."),
            "n.md": memory("N", "Stays."),
            ".memsift/config.toml": LEXICAL,
        }
    )
    index_store(store, embed=False)
    (store.root / "m.md").unlink()
    if replaced_by != "nothing":
        (store.root / "m.md").mkdir()

    assert reindex(store, run).removed == ["m.md"]
    assert backend.rows(store, "SELECT path FROM files WHERE path = 'm.md'") == []


@pytest.mark.parametrize("run", ["full", "watch"])
def test_a_file_behind_a_folder_now_a_link_loses_its_row(backend, backend_store, tmp_path, run):
    # Its folder moved to another disk and linked back: the walk never follows the link, and a
    # file reached through it is no memory back in place (the full run kept its row for ever:
    # search found notes/m.md, read refused it, status counted it as removed on every call).
    store = backend_store(
        {
            "notes/m.md": memory("M", "Moved with its folder."),
            "n.md": memory("N", "Stays."),
            ".memsift/config.toml": LEXICAL,
        }
    )
    index_store(store, embed=False)
    elsewhere = tmp_path / "elsewhere"
    (store.root / "notes").rename(elsewhere)
    (store.root / "notes").symlink_to(elsewhere, target_is_directory=True)

    if run == "full":
        report = index_store(store, embed=False)
    else:
        report = index_paths(store, ["notes/m.md"])

    assert report.removed == ["notes/m.md"]
    assert backend.rows(store, "SELECT path FROM files WHERE path = 'notes/m.md'") == []
    assert store_status(store)["changes"]["removed"] == 0


def test_a_file_deleted_after_it_was_listed_and_before_its_stat_leaves_the_index(
    backend, backend_store, monkeypatch
):
    """``rm -rf`` of a folder while a watcher indexes the files it saw change: a file listed,
    then deleted before the scan looked at it, failed the whole batch (FileNotFoundError, an
    error line, the status saying so, and nothing indexed until the retry)."""
    store = backend_store(
        {
            "a.md": memory("A", "Alpha."),
            "b.md": memory("B", "Bravo."),
            ".memsift/config.toml": LEXICAL,
        }
    )
    index_store(store, embed=False)
    (store.root / "b.md").write_text(memory("B", "Bravo, edited."))
    real = index_run.key_candidates

    def listed_then_deleted(store, wanted):  # type: ignore[no-untyped-def]
        candidates = real(store, wanted)
        (store.root / "a.md").unlink()
        return candidates

    monkeypatch.setattr(index_run, "key_candidates", listed_then_deleted)

    report = index_paths(store, ["a.md", "b.md"])

    assert report.removed == ["a.md"] and not report.skipped
    assert backend.rows(store, "SELECT path FROM files") == [("b.md",)]
    assert row(backend, store, "b.md")[0] == file_hash(store, "b.md")


@pytest.mark.parametrize("run", ["full", "incremental"])
def test_a_file_deleted_just_before_its_read_is_gone_not_skipped(
    backend, backend_store, monkeypatch, run
):
    """A file deleted between the scan's stat and its read was reported as skipped ("cannot
    read: No such file or directory"), a line telling its owner to fix a file that is simply
    gone."""
    store = backend_store({"m.md": memory("M", "Mike."), ".memsift/config.toml": LEXICAL})
    index_store(store, embed=False)
    (store.root / "m.md").write_text(memory("M", "Mike, edited."))
    real = pipeline.read_regular

    def deleted_first(path, max_bytes):  # type: ignore[no-untyped-def]
        path.unlink(missing_ok=True)
        return real(path, max_bytes)

    monkeypatch.setattr(pipeline, "read_regular", deleted_first)

    report = reindex(store, run)

    assert report.removed == ["m.md"] and not report.skipped
    assert backend.rows(store, "SELECT path FROM files") == []
