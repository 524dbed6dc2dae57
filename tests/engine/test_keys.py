"""One resolver names a memory on every surface: the text given is the file acted on.

A store holds files whose names differ only by what a careless resolver throws away: spaces at
either end, two Unicode spellings of one word, a folder reached through a symlink. Each
command and each MCP tool must act on exactly the file named, or refuse it in one line."""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp_harness import ServerSession

from engine import state as state_plane
from engine.cli import cli
from engine.files.keys import PathRefused, resolve_memory
from engine.files.memory import parse_memory
from engine.files.store import open_store

NFC = unicodedata.normalize("NFC", "café.md")
NFD = unicodedata.normalize("NFD", "café.md")
#: Every name below is a different file of the store.
NAMES = ["lead.md", " lead.md", "notes/lead.md", "notes /lead.md", NFC, NFD]


def write_store(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / ".memsift").mkdir()
    (root / ".memsift" / "config.toml").write_text('[embedder]\nmodel = "none"\n')
    for number, name in enumerate(NAMES):
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text(f"---\ntitle: Memory {number}\n---\nBody {number}.\n")
    (root / "real").mkdir()
    (root / "real" / "a.md").write_text("Real.\n")
    (root / "linked").symlink_to(root / "real")


@pytest.fixture
def store(tmp_path):  # type: ignore[no-untyped-def]
    write_store(tmp_path / "store")
    return open_store(tmp_path / "store")


# --------------------------------------------------------------------------- the rule


@pytest.mark.parametrize("name", NAMES, ids=repr)
def test_a_name_is_taken_exactly_as_given(store, name):
    key, full = resolve_memory(store, name)

    assert key == name
    assert full == store.root / name


@pytest.mark.parametrize(
    ("given", "key"),
    [("./lead.md", "lead.md"), ("real//a.md", "real/a.md"), ("./real/./a.md", "real/a.md")],
)
def test_spellings_that_name_the_same_file_give_its_key(store, given, key):
    assert resolve_memory(store, given)[0] == key


def test_an_absolute_path_inside_the_store_gives_its_key(store):
    assert resolve_memory(store, str(store.root / "real" / "a.md"))[0] == "real/a.md"


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("", "path is empty"),
        ("   ", "not a memory"),
        ("lead.md ", "not a memory"),
        ("../outside.md", "not inside the store"),
        ("real/../lead.md", "'..' is not followed"),
        ("/etc/passwd", "not inside the store"),
        (".memsift/index.db", "not a memory"),
        ("real/", "names a folder"),
        (".", "names the store itself"),
        ("missing.md", "no such memory"),
        ("linked/a.md", "goes through a symlink"),
        ("real/a.md\x00.md", "NUL"),
        ("/" + "x" * 3 + "/a.md", "not inside the store"),
        ("a\ud800.md", "not valid UTF-8"),
        ("bad\udcff.md", "not valid UTF-8"),
    ],
    ids=repr,
)
def test_the_rule_refuses_what_names_no_memory(store, given, message):
    with pytest.raises(PathRefused, match=message):
        resolve_memory(store, given)


def test_a_refusal_quotes_a_path_with_spaces_so_they_show(store):
    with pytest.raises(PathRefused) as refused:
        resolve_memory(store, " missing.md")

    assert str(refused.value).startswith("' missing.md': ")


# --------------------------------------------------------------------------- every surface


@pytest.fixture(scope="module")
def served(tmp_path_factory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("keys") / "store"
    write_store(root)
    session = ServerSession(root)
    session.wait_until_caught_up()
    yield root, session
    session.close()


def run_cli(root: Path, *args: str) -> dict[str, object]:
    result = CliRunner().invoke(cli, ["--store", str(root), *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def archived(root: Path, name: str) -> bool:
    return parse_memory(name, (root / name).read_bytes()).archived


SURFACES = ["cli", "mcp"]


@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.parametrize("name", NAMES[1:], ids=repr)
def test_read_counts_the_file_named_and_no_other(served, surface, name):
    root, server = served
    store = open_store(root)
    others = {n: state_plane.lookup(store, n).access_count for n in NAMES if n != name}
    before = state_plane.lookup(store, name).access_count

    if surface == "cli":
        answer = run_cli(root, "read", name)
    else:
        answer = server.ok("memory_read", {"path": name})

    assert answer["path"] == name
    assert answer["text"].endswith(f"Body {NAMES.index(name)}.\n")
    assert state_plane.lookup(store, name).access_count == before + 1
    assert {n: state_plane.lookup(store, n).access_count for n in others} == others


@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.parametrize("name", NAMES[1:], ids=repr)
def test_reinforce_lands_on_the_file_named_and_no_other(served, surface, name):
    root, server = served
    store = open_store(root)
    others = {n: state_plane.lookup(store, n).outcome_score for n in NAMES if n != name}

    if surface == "cli":
        answer = run_cli(root, "reinforce", name, "--outcome", "-1")
    else:
        answer = server.ok("memory_reinforce", {"path": name, "outcome": -1})

    assert answer["path"] == name
    assert state_plane.lookup(store, name).outcome_score < 0
    assert {n: state_plane.lookup(store, n).outcome_score for n in others} == others


@pytest.mark.parametrize("surface", SURFACES)
def test_forget_archives_the_file_named_and_no_other(tmp_path, surface):
    root = tmp_path / "store"
    write_store(root)
    name = " lead.md"
    if surface == "cli":
        answer = run_cli(root, "forget", name)
    else:
        server = ServerSession(root, "--no-watch")
        try:
            answer = server.ok("memory_forget", {"path": name})
        finally:
            server.close()

    assert answer["path"] == name
    assert archived(root, name)
    assert [n for n in NAMES if n != name and archived(root, n)] == []


@pytest.mark.parametrize("surface", SURFACES)
def test_a_store_whose_only_memory_has_a_leading_space_can_forget_it(tmp_path, surface):
    root = tmp_path / "store"
    root.mkdir()
    (root / " only.md").write_text("The only memory.\n")
    if surface == "cli":
        answer = run_cli(root, "forget", " only.md")
    else:
        (root / ".memsift").mkdir()
        (root / ".memsift" / "config.toml").write_text('[embedder]\nmodel = "none"\n')
        server = ServerSession(root, "--no-watch")
        try:
            answer = server.ok("memory_forget", {"path": " only.md"})
        finally:
            server.close()

    assert answer["path"] == " only.md"
    assert archived(root, " only.md")


@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.parametrize("tool", ["read", "reinforce", "forget"])
def test_a_symlinked_parent_folder_is_refused_on_every_surface(served, surface, tool):
    root, server = served
    before = (root / "real" / "a.md").read_bytes()
    if surface == "cli":
        extra = ["--outcome", "1"] if tool == "reinforce" else []
        result = CliRunner().invoke(cli, ["--store", str(root), tool, "linked/a.md", *extra])
        assert result.exit_code == 2
        message = result.output
    else:
        arguments: dict[str, object] = {"path": "linked/a.md"}
        if tool == "reinforce":
            arguments["outcome"] = 1
        answer = server.call(f"memory_{tool}", arguments)
        assert answer.is_error
        message = answer.content[0].text  # type: ignore[union-attr]

    assert "goes through a symlink" in message
    assert (root / "real" / "a.md").read_bytes() == before
    assert "linked/a.md" not in state_plane.state_paths(open_store(root))


def test_the_cli_does_not_look_up_a_path_in_the_current_folder(tmp_path, monkeypatch):
    root = tmp_path / "store"
    write_store(root)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "other.md").write_text("Not in the store.\n")
    monkeypatch.chdir(elsewhere)

    result = CliRunner().invoke(cli, ["--store", str(root), "read", "other.md"])

    assert result.exit_code == 2
    assert "no such memory" in result.output
    assert not os.path.exists(root / ".memsift" / "state.db")
