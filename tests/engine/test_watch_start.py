"""A watcher slow to start (a loaded machine) must not cost a change: the catch-up scan does not
wait for it for ever, so a file written after the scan passed it and before the watcher ran is
in neither, unless the watcher, once it runs, has the store caught up with once more.

Each test holds the watcher back on an event and releases it at the moment that matters, so
the interleaving is the same on every run."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
import watchfiles
from test_freshness import LEXICAL, eventually, indexed

import engine.indexing.freshness
from engine.indexing.freshness import Freshness

WAIT_S = 120


@pytest.fixture
def held_watcher(monkeypatch) -> threading.Event:  # type: ignore[no-untyped-def]
    """``watchfiles.watch`` that installs no watch until the returned event is set; the scan
    waits for the watcher a tenth of a second, not ten."""
    release = threading.Event()
    real = watchfiles.watch

    def held(*args, **kwargs) -> Iterator[set[tuple[watchfiles.Change, str]]]:  # type: ignore[no-untyped-def]
        release.wait(WAIT_S)
        yield from real(*args, **kwargs)

    monkeypatch.setattr(watchfiles, "watch", held)
    monkeypatch.setattr(engine.indexing.freshness, "WATCH_START_S", 0.1)
    return release


def test_a_file_written_after_a_catch_up_that_ran_before_the_watcher_is_indexed(
    make_store, held_watcher
):
    store = make_store({".memsift/config.toml": LEXICAL, "a.md": "A.\n"})
    lines: list[str] = []
    freshness = Freshness(store, log=lines.append)
    freshness.start()
    try:
        assert freshness.caught_up.wait(WAIT_S)
        assert freshness.status()["watching"] is False
        (store.root / "b.md").write_text("Written before anything watched.\n")
        held_watcher.set()
        assert eventually(lambda: indexed(store) == {"a.md", "b.md"}, WAIT_S), lines
    finally:
        freshness.stop()


def test_a_watcher_that_starts_during_the_catch_up_gets_it_run_again(
    make_store, held_watcher, monkeypatch
):
    """The scan has passed the file when it changes, and the watcher starts only after that:
    the catch-up under way must not swallow the watcher's request for another."""
    real_index_store = engine.indexing.freshness.index_store
    scanned, finish_scan = threading.Event(), threading.Event()

    def scan_held_at_its_end(store, **kwargs):  # type: ignore[no-untyped-def]
        report = real_index_store(store, **kwargs)
        if not scanned.is_set():
            scanned.set()
            finish_scan.wait(WAIT_S)
        return report

    monkeypatch.setattr(engine.indexing.freshness, "index_store", scan_held_at_its_end)
    store = make_store({".memsift/config.toml": LEXICAL, "a.md": "A.\n"})
    freshness = Freshness(store)
    freshness.start()
    try:
        assert scanned.wait(WAIT_S)
        (store.root / "b.md").write_text("Written behind the scan.\n")
        held_watcher.set()
        assert eventually(lambda: freshness.status()["watching"] is True, WAIT_S)
        finish_scan.set()
        assert eventually(lambda: indexed(store) == {"a.md", "b.md"}, WAIT_S), indexed(store)
    finally:
        finish_scan.set()
        freshness.stop()


def test_a_watcher_is_seen_to_run_while_a_hidden_folder_never_rests(make_store):
    """watchfiles comes back only with changes that pass the filter, or after a quiet tick; a
    ``.git`` written without pause (or an index another process polls) has neither, and the
    watcher that runs must still say so, and let the catch-up go ahead."""
    store = make_store({".memsift/config.toml": LEXICAL, "a.md": "A.\n"})
    (store.root / ".git").mkdir()
    done = threading.Event()

    def churn() -> None:
        number = 0
        while not done.is_set():
            (store.root / ".git" / "busy").write_text(str(number))
            number += 1
            done.wait(0.01)

    churner = threading.Thread(target=churn, daemon=True)
    churner.start()
    freshness = Freshness(store)
    try:
        freshness.start()
        assert eventually(lambda: freshness.status()["watching"] is True, WAIT_S)
        assert freshness.caught_up.wait(WAIT_S)
        (store.root / "b.md").write_text("Written while .git churns.\n")
        assert eventually(lambda: indexed(store) == {"a.md", "b.md"}, WAIT_S)
    finally:
        done.set()
        churner.join(WAIT_S)
        freshness.stop()
