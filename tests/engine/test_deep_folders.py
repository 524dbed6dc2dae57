"""A folder nested 1,000 deep, or one whose path the system refuses as too long, is one skip
with its reason: `index`, `status`, the watcher's catch-up and the server's `memory_status` go
on with the rest of the store (issue 19, item 6)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from deep_folders import make_chain, remove_tree
from mcp_harness import SRC, ServerSession
from test_freshness import LEXICAL, eventually, indexed

from engine.files.store import MAX_FOLDER_DEPTH, TOO_DEEP, Store, StoreError, open_store
from engine.indexing.freshness import Freshness
from engine.indexing.indexer import index_store
from engine.indexing.pipeline import memory_key
from engine.status import store_status

CLI = [sys.executable, "-c", "from engine.cli import main; main()"]
#: The key of the first folder of a chain of ``d`` the walk does not enter.
TOO_DEEP_KEY = "/".join(["d"] * (MAX_FOLDER_DEPTH + 1))
REACHABLE = ["a/b/c/low.md", "top.md"]


def memsift(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real entry point, in its own process: its last line of defence is what a user saw
    (`unexpected RecursionError … please report it`)."""
    return subprocess.run(
        [*CLI, "--store", str(store), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        timeout=300,
        check=False,
    )


def write_reachable(root: Path) -> None:
    """A memory at the top of the store and one a few folders down, and a lexical config."""
    (root / ".memsift").mkdir(parents=True)
    (root / ".memsift" / "config.toml").write_text(LEXICAL)
    (root / "top.md").write_text("A memory at the top.\n")
    (root / "a" / "b" / "c").mkdir(parents=True)
    (root / "a" / "b" / "c" / "low.md").write_text("A memory three folders down.\n")


@pytest.fixture
def deep_store(tmp_path: Path) -> Iterator[Store]:
    """Two reachable memories beside a chain of 1,000 folders ``d/d/…/d`` holding a memory in
    its 10th folder (within the limit) and one at its bottom (beyond it)."""
    root = tmp_path / "store"
    write_reachable(root)
    chain = make_chain(root, "d", 1000, files={10: "ten.md", 1000: "bottom.md"})
    try:
        yield open_store(root)
    finally:
        remove_tree(chain)  # shutil.rmtree (pytest's clean-up) dies on a chain this deep


TEN = "/".join(["d"] * 10) + "/ten.md"


def test_index_takes_the_reachable_memories_and_skips_the_deep_folder_once(deep_store):
    report = index_store(deep_store, embed=False)
    assert sorted(report.indexed) == sorted([*REACHABLE, TEN])
    assert report.skipped == [(TOO_DEEP_KEY, TOO_DEEP)]


def test_status_lists_the_deep_folder_as_not_walked_and_nothing_as_changed(deep_store):
    index_store(deep_store, embed=False)
    info = store_status(deep_store)
    assert info["files"] == 3
    assert info["not_walked"] == [{"path": TOO_DEEP_KEY, "reason": TOO_DEEP}]
    assert info["changed_since_index"] is False


def test_memsift_index_and_status_exit_0_naming_the_deep_folder(deep_store):
    indexing = memsift(deep_store.root, "index")
    assert indexing.returncode == 0, indexing.stderr
    assert f"  skipped {TOO_DEEP_KEY}: {TOO_DEEP}\n" in indexing.stdout
    status = memsift(deep_store.root, "status", "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["not_walked"] == [{"path": TOO_DEEP_KEY, "reason": TOO_DEEP}]


def test_a_folder_whose_path_is_longer_than_the_system_allows_is_one_skip(tmp_path):
    """Folders of 200-character names: the 20th one's path passes 4,096 characters, which the
    system refuses, long before the depth limit. The memory in the 5th folder is indexed."""
    root = tmp_path / "store"
    write_reachable(root)
    name = "n" * 200
    chain = make_chain(root, name, 40, files={5: "five.md", 30: "thirty.md"})
    try:
        report = index_store(open_store(root), embed=False)
        info = store_status(open_store(root))
    finally:
        remove_tree(chain)
    assert sorted(report.indexed) == sorted([*REACHABLE, "/".join([name] * 5) + "/five.md"])
    [(key, reason)] = report.skipped
    assert len(str(root / key)) >= 4096 > len(str(root / key)) - len(name) - 1
    assert reason.startswith("folder path is longer than the system allows")
    assert info["not_walked"] == [{"path": key, "reason": reason}]


def test_a_store_folder_that_cannot_be_listed_is_an_error_not_an_empty_store(
    make_store, monkeypatch
):
    """Taking an unreadable store for an empty one would remove every memory from the index."""
    store = make_store({"a.md": "Alpha.\n"})
    index_store(store, embed=False)

    def refuse(folder: Path) -> list[os.DirEntry[str]]:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("engine.files.store.listed", refuse)
    with pytest.raises(StoreError, match=r"cannot list the store folder \(Permission denied\)"):
        index_store(store, embed=False)


def test_a_path_below_the_depth_limit_is_no_memory_key(tmp_path):
    store = Store(tmp_path)
    assert memory_key(store, tmp_path / TEN) == TEN
    assert memory_key(store, tmp_path / TOO_DEEP_KEY / "x.md") is None


def test_the_watcher_catches_up_with_a_store_holding_a_1000_deep_folder(deep_store):
    lines: list[str] = []
    freshness = Freshness(deep_store, log=lines.append)
    freshness.start()
    try:
        assert freshness.caught_up.wait(60), lines
        assert freshness.status()["last_error"] is None
    finally:
        freshness.stop()
    assert indexed(deep_store) == {*REACHABLE, TEN}
    caught_up = "caught up with the store: indexed 3, removed 0, skipped 1"
    assert any(caught_up in line for line in lines), lines


def test_a_1000_deep_folder_moved_into_a_watched_store_is_indexed_down_to_the_limit(
    tmp_path,
):
    root = tmp_path / "store"
    write_reachable(root)
    outside = tmp_path / "incoming"
    outside.mkdir()
    (outside / "kept.md").write_text("Moved in with a deep folder beside it.\n")
    chain = make_chain(outside, "d", 1000, files={10: "ten.md", 1000: "bottom.md"})
    store = open_store(root)
    freshness = Freshness(store)
    freshness.start()
    try:
        assert freshness.caught_up.wait(60)
        os.rename(outside, root / "incoming")
        wanted = {*REACHABLE, "incoming/kept.md", "incoming/" + TEN}
        assert eventually(lambda: indexed(store) == wanted, timeout=60), indexed(store)
        assert freshness.status()["last_error"] is None
    finally:
        freshness.stop()
        remove_tree(root / "incoming" / chain.name)


def test_memory_status_answers_on_a_store_holding_a_1000_deep_folder(deep_store):
    session = ServerSession(deep_store.root)
    try:
        status: dict[str, object] = {}

        def caught_up() -> bool:
            nonlocal status
            status = session.ok("memory_status")
            return bool(status["freshness"]["caught_up"])  # type: ignore[index]

        assert session.wait_for(caught_up, timeout=60), status
    finally:
        session.close()
    assert status["files"] == 3
    assert status["not_walked"] == 1
    assert status["freshness"]["last_error"] is None  # type: ignore[index]


def test_front_matter_nested_20000_deep_is_skipped_naming_the_file(tmp_path):
    root = tmp_path / "store"
    write_reachable(root)
    (root / "nested.md").write_text("---\ntags: " + "[" * 20_000 + "]" * 20_000 + "\n---\nBody.\n")
    result = memsift(root, "index")
    assert result.returncode == 0, result.stderr
    assert "  skipped nested.md: front matter nests too deeply to be metadata\n" in result.stdout
    assert "indexed 2," in result.stdout


def test_the_deep_chain_helpers_make_and_remove_what_shutil_cannot(tmp_path):
    """The fixture's own tools: a chain 1,000 deep is made and removed whole."""
    chain = make_chain(tmp_path, "d", 1000, files={1000: "bottom.md"})
    assert (tmp_path / "/".join(["d"] * 10)).is_dir()
    remove_tree(chain)
    assert not chain.exists()
