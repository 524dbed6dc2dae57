"""The watcher against what users and their tools really do to a folder: a file saved fifty
times a second, an editor's save dance and swap files, a renamed folder, and the store folder
itself deleted (and made again, as `rm -rf` then `git clone` does)."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_freshness import LEXICAL, WAIT_S, eventually, indexed, running

from engine.files.store import open_store
from engine.indexing.freshness import Freshness
from engine.indexing.incremental import index_paths
from engine.indexing.indexer import index_store
from engine.sqlite.db import open_index


@pytest.fixture
def watched(make_store):  # type: ignore[no-untyped-def]
    store = make_store({".memsift/config.toml": LEXICAL, "facts/port.md": "Port 6432.\n"})
    with running(Freshness(store, debounce_ms=60)) as freshness:
        yield store, freshness


def texts(store) -> dict[str, str]:  # type: ignore[no-untyped-def]
    if not store.index_path.exists():
        return {}
    conn = open_index(store.index_path)
    try:
        return dict(
            conn.execute(
                "SELECT f.path, group_concat(c.text, ' ') FROM files f "
                "JOIN chunks c ON c.file_id = f.id GROUP BY f.path"
            )
        )
    finally:
        conn.close()


def test_a_file_saved_fifty_times_in_a_row_ends_indexed_as_last_saved(watched):
    store, _ = watched
    path = store.root / "facts" / "hot.md"
    for version in range(50):
        path.write_text(f"Hot memory, version {version}.\n")
    assert eventually(lambda: "version 49" in texts(store).get("facts/hot.md", ""))


def test_an_editors_save_dance_leaves_only_the_memory(watched):
    """vim: rename to a backup, write anew, delete the backup; a swap file and emacs' lock
    link and autosave file beside it."""
    store, freshness = watched
    folder = store.root / "facts"
    (folder / "port.md").rename(folder / "port.md~")
    (folder / ".port.md.swp").write_bytes(b"\x00swap")
    (folder / ".#port.md").symlink_to("user@host.4242:1700000000")
    (folder / "#port.md#").write_text("autosave\n")
    (folder / "port.md").write_text("Port 7777.\n")
    (folder / "port.md~").unlink()
    assert eventually(lambda: "7777" in texts(store).get("facts/port.md", ""))
    assert indexed(store) == {"facts/port.md"}
    assert freshness.status()["last_error"] is None


def test_a_folder_renamed_inside_the_store_moves_its_memories(watched):
    store, _ = watched
    (store.root / "facts").rename(store.root / "known")
    assert eventually(lambda: indexed(store) == {"known/port.md"})


def test_a_deleted_store_folder_is_reported_and_never_made_again(watched):
    store, freshness = watched
    shutil.rmtree(store.root)
    assert eventually(lambda: "is gone" in (freshness.status()["last_error"] or ""))
    assert freshness.status()["watching"] is False
    assert eventually(lambda: freshness.status()["pending_files"] == 0)
    # the deletion's events are handled by now: nothing wrote the folder back
    assert not os.path.lexists(store.root)


def test_a_store_folder_deleted_and_made_again_is_watched_again(watched):
    store, freshness = watched
    shutil.rmtree(store.root)
    assert eventually(lambda: "is gone" in (freshness.status()["last_error"] or ""))
    (store.root / "notes").mkdir(parents=True)
    (store.root / "notes" / "back.md").write_text("Back again.\n")
    assert eventually(lambda: indexed(store) == {"notes/back.md"})
    (store.root / "notes" / "later.md").write_text("Written after the catch-up.\n")
    assert eventually(lambda: indexed(store) == {"notes/back.md", "notes/later.md"})
    assert freshness.status()["watching"] is True


def test_a_folder_named_like_a_memory_is_indexed_and_removed_whole(watched, tmp_path):
    """Moved in, a folder is one event, and its name ends in .md: it is still a folder."""
    store, _ = watched
    outside = tmp_path / "archive.md"
    outside.mkdir()
    (outside / "inner.md").write_text("Inside a folder called archive.md.\n")
    shutil.move(str(outside), str(store.root / "archive.md"))
    assert eventually(lambda: "archive.md/inner.md" in indexed(store))
    shutil.move(str(store.root / "archive.md"), str(tmp_path / "archive.md"))
    assert eventually(lambda: indexed(store) == {"facts/port.md"})


def test_a_store_folder_replaced_by_another_is_caught_up_with(watched, tmp_path):
    """`mv notes notes.old && git clone … notes`: the same path, another folder."""
    store, _ = watched
    store.root.rename(tmp_path / "old-store")
    (store.root / "cloned").mkdir(parents=True)
    (store.root / "cloned" / "fresh.md").write_text("From the new clone.\n")
    assert eventually(lambda: indexed(store) == {"cloned/fresh.md"})


@pytest.fixture
def logged(make_store, monkeypatch):  # type: ignore[no-untyped-def]
    """A watched lexical store whose log lines are kept, retrying failed steps at once (so a
    line repeated on every retry shows up in a fraction of a second)."""
    import engine.indexing.freshness

    monkeypatch.setattr(engine.indexing.freshness, "RETRY_S", 0.02)
    monkeypatch.setattr(engine.indexing.freshness, "CONFIG_POLL_S", 0.02)
    store = make_store({".memsift/config.toml": LEXICAL, "facts/port.md": "Port 6432.\n"})
    lines: list[str] = []
    freshness = Freshness(store, debounce_ms=60, log=lines.append)
    freshness.start()
    assert freshness.caught_up.wait(WAIT_S)
    yield store, freshness, lines
    freshness.stop()


def config_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if "config.toml" in line]


def index_rounds(freshness: Freshness, rounds: int) -> bool:
    """Wait until the index loop has come round ``rounds`` more times (each round begins by
    checking config.toml): what a test that something does *not* happen waits for, instead
    of sleeping some time that a loaded machine may spend on one round."""
    counted: list[int] | None = getattr(freshness, "_test_rounds", None)
    if counted is None:
        counted = [0]
        real = freshness._config_usable

        def counting(settle: bool = True) -> bool:
            if threading.current_thread().name == "memsift-index":
                counted[0] += 1
            return real(settle)

        freshness._config_usable = counting  # type: ignore[method-assign]
        freshness._test_rounds = counted  # type: ignore[attr-defined]
    start = counted[0]
    return eventually(lambda: counted[0] >= start + rounds)


def test_a_broken_config_is_logged_once_not_on_every_retry(logged):
    store, freshness, lines = logged
    store.config_path.write_text("[weights\n")
    (store.root / "facts" / "new.md").write_text("New.\n")
    assert eventually(lambda: config_lines(lines))
    assert index_rounds(freshness, 20)
    assert len(config_lines(lines)) == 1, lines
    assert "not valid TOML" in config_lines(lines)[0]
    assert "not valid TOML" in (freshness.status()["last_error"] or "")
    assert "facts/new.md" not in indexed(store)


def test_a_broken_config_changed_but_still_broken_is_logged_again(logged):
    store, freshness, lines = logged
    store.config_path.write_text("[weights\n")
    (store.root / "facts" / "new.md").write_text("New.\n")
    assert eventually(lambda: config_lines(lines))
    store.config_path.write_text("[weight]\nfts = 1.0\n")
    assert eventually(lambda: len(config_lines(lines)) == 2)
    assert index_rounds(freshness, 20)
    assert len(config_lines(lines)) == 2, lines
    assert "[weight]" in config_lines(lines)[1]


def test_a_fixed_config_is_said_to_have_recovered_and_indexing_resumes(logged):
    store, freshness, lines = logged
    store.config_path.write_text("[weights\n")
    (store.root / "facts" / "new.md").write_text("New.\n")
    assert eventually(lambda: config_lines(lines))
    store.config_path.write_text(LEXICAL)
    assert eventually(lambda: "facts/new.md" in indexed(store))
    assert eventually(lambda: len(config_lines(lines)) == 2)
    assert "valid again" in config_lines(lines)[1]
    assert freshness.status()["last_error"] is None


def test_a_config_nested_10000_deep_is_logged_and_indexing_resumes_once_it_is_fixed(logged):
    """The TOML reader's RecursionError was no ConfigError: it ended the indexing thread."""
    store, _, lines = logged
    store.config_path.write_text("[weights]\nfts = " + "[" * 10_000 + "]" * 10_000 + "\n")
    (store.root / "facts" / "new.md").write_text("New.\n")
    assert eventually(lambda: any("nested too deeply" in line for line in config_lines(lines)))
    store.config_path.write_text(LEXICAL)
    assert eventually(lambda: "facts/new.md" in indexed(store)), lines


def test_a_config_save_caught_half_done_is_not_read_until_it_holds_still(  # type: ignore[no-untyped-def]
    make_store, monkeypatch
):
    """A save that truncates then writes shows an empty file for an instant: read then, it
    was the defaults, and a broken file rewritten broken another way was "valid again"."""
    import engine.indexing.freshness as module

    clock = [100.0]
    monkeypatch.setattr(module, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    store = make_store({".memsift/config.toml": LEXICAL, "facts/port.md": "Port 6432.\n"})
    lines: list[str] = []
    freshness = Freshness(store, debounce_ms=60, log=lines.append)  # not started: asked here
    assert freshness._config_usable() is True  # the first look reads at once
    store.config_path.write_text("[weights\n")
    assert freshness._config_usable() is True  # the last verdict, until the change holds
    clock[0] += 2 * module.CONFIG_SETTLE_S
    assert freshness._config_usable() is False
    store.config_path.write_text("")  # the save, caught between truncating and writing
    assert freshness._config_usable() is False
    clock[0] += module.CONFIG_SETTLE_S / 2
    assert freshness._config_usable() is False
    store.config_path.write_text("[weight]\nfts = 1.0\n")
    assert freshness._config_usable() is False
    clock[0] += 2 * module.CONFIG_SETTLE_S
    assert freshness._config_usable() is False
    assert len(config_lines(lines)) == 2 and "[weight]" in config_lines(lines)[1], lines
    store.config_path.write_text(LEXICAL)
    assert freshness._config_usable() is False  # not yet: the change has not held still
    clock[0] += 2 * module.CONFIG_SETTLE_S
    assert freshness._config_usable() is True
    assert "valid again" in config_lines(lines)[-1]


def test_an_index_deleted_while_the_config_is_broken_is_rebuilt_once_it_is_fixed(logged):
    store, freshness, lines = logged
    store.config_path.write_text("[weights\n")
    store.index_path.unlink()
    assert eventually(lambda: config_lines(lines))
    assert index_rounds(freshness, 3)  # the loop has come by with the index gone
    store.config_path.write_text(LEXICAL)
    assert eventually(lambda: indexed(store) == {"facts/port.md"}), lines


def test_a_deleted_index_is_neither_rebuilt_nor_written_until_it_has_stayed_gone(
    logged, monkeypatch
):
    """A store deleted whole loses index.db a moment before .memsift/ and its own folder: a
    rebuild in that moment, or a changed file indexed into a new index, made them again under
    the deletion (which then failed: "Directory not empty")."""
    import engine.indexing.freshness

    monkeypatch.setattr(engine.indexing.freshness, "INDEX_SETTLE_S", 3600.0)
    store, freshness, lines = logged
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store.index_path}{suffix}").unlink(missing_ok=True)
    (store.root / "facts" / "new.md").write_text("New.\n")
    assert index_rounds(freshness, 5)
    assert not store.index_path.exists(), lines

    monkeypatch.setattr(engine.indexing.freshness, "INDEX_SETTLE_S", 0.0)
    assert eventually(lambda: indexed(store) == {"facts/port.md", "facts/new.md"}), lines


def test_an_index_made_again_by_a_write_while_it_was_gone_is_caught_up_whole(
    logged, monkeypatch
):
    """A write (``remember``) into a store whose index was just deleted indexes its one memory
    into a new index: without a catch-up, the rest of the store stayed out of every search."""
    import engine.indexing.freshness

    monkeypatch.setattr(engine.indexing.freshness, "INDEX_SETTLE_S", 3600.0)
    store, freshness, lines = logged
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store.index_path}{suffix}").unlink(missing_ok=True)
    assert index_rounds(freshness, 2)  # the loop has seen it gone
    (store.root / "facts" / "new.md").write_text("New.\n")
    index_paths(store, ["facts/new.md"])  # as remember does
    assert eventually(lambda: indexed(store) == {"facts/port.md", "facts/new.md"}), lines
    assert any("was made again" in line for line in lines), lines


def test_an_index_made_again_by_a_write_the_moment_it_was_deleted_is_caught_up_whole(logged):
    """``rm .memsift/index.db`` and, before the watcher has looked (it looks about once a
    second when idle), a ``remember``: the loop never sees the index missing, yet the new
    index holds the one memory written and nothing else."""
    store, _, lines = logged
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store.index_path}{suffix}").unlink(missing_ok=True)
    (store.root / "facts" / "new.md").write_text("New.\n")
    index_paths(store, ["facts/new.md"])  # as remember does
    assert eventually(lambda: indexed(store) == {"facts/port.md", "facts/new.md"}), lines


def test_an_index_replaced_by_another_stores_is_caught_up_with_this_store(logged, tmp_path):
    """An index.db moved in from another store (a backup, a copied folder) held that store's
    memories: searches found files this store does not have, and missed its own."""
    store, _, lines = logged
    other = tmp_path / "other"
    (other / ".memsift").mkdir(parents=True)
    (other / ".memsift" / "config.toml").write_text(LEXICAL)
    (other / "elsewhere.md").write_text("Elsewhere.\n")
    index_store(open_store(other), embed=False)
    os.replace(other / ".memsift" / "index.db", store.index_path)
    assert eventually(lambda: indexed(store) == {"facts/port.md"}), lines


def test_an_index_made_again_by_a_write_during_a_rebuild_is_caught_up_whole(logged, monkeypatch):
    """The index deleted again while the watcher rebuilt it, and a ``remember`` made a new one
    before the rebuild ended: the rebuild had filled the deleted file, and the new index kept
    the one memory written."""
    import engine.indexing.freshness

    store, _, lines = logged
    real = engine.indexing.freshness.index_store
    calls: list[str] = []

    def deleted_and_written_during(*args, **kwargs):  # type: ignore[no-untyped-def]
        report = real(*args, **kwargs)
        if not calls:
            calls.append("called")
            for suffix in ("", "-wal", "-shm"):
                Path(f"{store.index_path}{suffix}").unlink(missing_ok=True)
            (store.root / "facts" / "new.md").write_text("New.\n")
            index_paths(store, ["facts/new.md"])  # as remember does
        return report

    monkeypatch.setattr(engine.indexing.freshness, "index_store", deleted_and_written_during)
    store.index_path.unlink()  # rebuilt once it has stayed gone: by the wrapper
    assert eventually(lambda: bool(calls))
    assert eventually(lambda: indexed(store) == {"facts/port.md", "facts/new.md"}), lines


def test_a_memsift_folder_deleted_between_the_loops_look_and_its_write_is_not_made_again(
    logged, monkeypatch
):
    """``rm -rf`` of a store reaches .memsift/ while the loop, having just seen the index
    there, indexes a changed file: that write made .memsift/ and a new index again under the
    deletion (whose last ``rmdir`` then failed: "Directory not empty")."""
    import engine.indexing.freshness

    store, freshness, lines = logged
    real = engine.indexing.freshness.index_paths
    calls: list[str] = []

    def deleted_first(*args, **kwargs):  # type: ignore[no-untyped-def]
        if not calls:
            shutil.rmtree(store.state_dir)
        calls.append("called")
        return real(*args, **kwargs)

    monkeypatch.setattr(engine.indexing.freshness, "index_paths", deleted_first)
    (store.root / "facts" / "new.md").write_text("New.\n")
    assert eventually(lambda: any(line.startswith(f"{store.state_dir} is gone") for line in lines))
    assert index_rounds(freshness, 5)
    assert not os.path.lexists(store.state_dir), lines
    assert not any("error while" in line for line in lines), lines


def test_a_memsift_folder_deleted_whole_is_not_made_again_and_is_named_once(logged):
    store, freshness, lines = logged
    shutil.rmtree(store.state_dir)
    (store.root / "facts" / "new.md").write_text("New.\n")

    def folder_lines() -> list[str]:
        return [line for line in lines if line.startswith(f"{store.state_dir} is gone")]

    assert eventually(folder_lines), lines
    assert index_rounds(freshness, 5)
    assert not os.path.lexists(store.state_dir), lines
    assert len(folder_lines()) == 1
    assert "`memsift index` makes the store again" in folder_lines()[0]


def test_a_catch_up_cut_off_by_the_memsift_folder_being_deleted_does_not_make_it_again(
    logged, monkeypatch
):
    """``rm -rf .memsift`` while the watcher rebuilds the index: the rebuild fails (SQLite's
    "disk I/O error" when its -wal goes mid-write), and its retry made .memsift/ again behind
    the owner's back, with no config.toml: the defaults, an embedding model among them."""
    import engine.indexing.freshness

    store, freshness, lines = logged
    real = engine.indexing.freshness.index_store
    calls: list[str] = []

    def cut_off_once(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append("called")
        if len(calls) == 1:
            shutil.rmtree(store.state_dir)
            raise OSError("disk I/O error")
        return real(*args, **kwargs)

    monkeypatch.setattr(engine.indexing.freshness, "index_store", cut_off_once)
    store.index_path.unlink()  # rebuilt once it has stayed gone: by cut_off_once
    assert eventually(lambda: any(line.startswith(f"{store.state_dir} is gone") for line in lines))
    assert index_rounds(freshness, 5)
    assert not os.path.lexists(store.state_dir), lines


def test_a_memsift_folder_deleted_whole_is_named_in_the_status_until_it_is_made_again(logged):
    """The log is the owner's; an agent reads ``memory_status``, which said nothing was wrong
    (no error, caught up) while the watcher waited for a store with no .memsift/ at all."""
    store, freshness, lines = logged
    shutil.rmtree(store.state_dir)

    def waiting() -> str:
        return str(freshness.status()["last_error"] or "")

    assert eventually(lambda: f"{store.state_dir} is gone" in waiting()), lines
    assert "`memsift index` makes the store again" in waiting()
    index_store(store, embed=False)  # what the status says to do
    assert eventually(lambda: freshness.status()["last_error"] is None), lines


def test_an_error_that_a_retry_got_past_leaves_the_status(make_store, monkeypatch):
    """A one-off failure (a locked database, a file mid-copy) is retried; once the retry
    works, status must not keep reporting the error as if the store were still broken."""
    import engine.indexing.freshness

    monkeypatch.setattr(engine.indexing.freshness, "RETRY_S", 0.02)
    real = engine.indexing.freshness.index_paths
    calls: list[set[str]] = []

    def fails_once(store, keys, **how):  # type: ignore[no-untyped-def]
        calls.append(set(keys))
        if len(calls) == 1:
            raise OSError("database is locked for a moment")
        return real(store, keys, **how)

    monkeypatch.setattr(engine.indexing.freshness, "index_paths", fails_once)
    store = make_store({".memsift/config.toml": LEXICAL, "a.md": "A.\n"})
    lines: list[str] = []
    with running(Freshness(store, log=lines.append)) as freshness:
        (store.root / "b.md").write_text("Beta.\n")

        assert eventually(lambda: indexed(store) == {"a.md", "b.md"}), lines
        assert eventually(lambda: freshness.status()["last_error"] is None), lines
        assert any("database is locked for a moment" in line for line in lines)
        assert any(line == "indexing changed files works again" for line in lines), lines
