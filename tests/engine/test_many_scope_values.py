"""Any number of scope values: 10,000 kinds or tags, a 100 kB path prefix.

Each list is bound as one JSON array, so the statement has the same shape for one value as for
ten thousand; before, 107 tags failed with "nested too deep" and 10,000 with "Expression tree is
too large". Every search below runs with the vector arm too (it holds the scope several times).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import HashEmbedder
from engine.cli import cli
from engine.files.store import Store, open_store
from engine.indexing.indexer import index_store
from engine.ranking.scope import ScopeSpec
from engine.search import search

MANY = 10_000
KINDS = [f"kind-{i}" for i in range(MANY - 1)]


def base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    return (base36(number // 36) if number >= 36 else "") + digits[number % 36]


#: Short tags, so that a memory holding all of them stays under the 64 KiB front matter limit.
TAGS = [f"t{base36(i)}" for i in range(MANY)]


def memory(title: str, kind: str, tags: list[str]) -> str:
    """A memory whose tags are written as comma-separated text (the shortest form)."""
    listed = ",".join(tags)
    return f"---\ntitle: {title}\nkind: {kind}\ntags: '{listed}'\n---\nThe database port.\n"


def write_store(root: Path) -> None:
    root.mkdir()
    (root / "every-tag.md").write_text(memory("Every tag", "semantic", TAGS), encoding="utf-8")
    (root / "all-but-one.md").write_text(memory("Nearly", "semantic", TAGS[1:]), encoding="utf-8")
    (root / "person.md").write_text(memory("A person", "person", []), encoding="utf-8")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Store:  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("many") / "store"
    write_store(root)
    opened = open_store(root)
    index_store(opened, embedder=HashEmbedder())
    return opened


def paths(result) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(hit.path for hit in result.hits)


# --- engine.search -------------------------------------------------------------------------


def test_ten_thousand_tags_find_the_memory_holding_all_of_them(store):
    result = search(
        store, "database port", scope=ScopeSpec(tags=tuple(TAGS)), embedder=HashEmbedder()
    )
    assert (paths(result), result.arms_fired) == (["every-tag.md"], ["fts", "vector", "recency"])


def test_ten_thousand_kinds_find_the_memories_of_any_of_them(store):
    spec = ScopeSpec(kinds=(*KINDS, "person"))
    result = search(store, "database port", scope=spec, embedder=HashEmbedder())
    assert (paths(result), result.arms_fired) == (["person.md"], ["fts", "vector", "recency"])


def test_ten_thousand_unknown_tags_give_an_empty_scope_with_a_short_note(store):
    spec = ScopeSpec(tags=tuple(f"nobody-{i}" for i in range(MANY)))
    result = search(store, "database port", scope=spec, embedder=HashEmbedder())
    assert (result.hits, result.empty_scope) == ([], True)
    assert result.notes == [
        "no memory is in scope (tag=nobody-0 tag=nobody-1 tag=nobody-2 tag=nobody-3 "
        "tag=nobody-4 (+9,995 more tags))"
    ]


def test_a_100_kilobyte_path_prefix_gives_an_empty_scope_with_a_short_note(store):
    spec = ScopeSpec(path_prefix="every-tag" * 12_000)
    result = search(store, "database port", scope=spec, embedder=HashEmbedder())
    assert (result.hits, result.empty_scope) == ([], True)
    assert len(result.notes[0]) < 200


# --- the command line ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def cli_store(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    """The same store, indexed by the CLI with the configured (real) embedder."""
    root = tmp_path_factory.mktemp("many-cli") / "store"
    write_store(root)
    assert run(root, "index").exit_code == 0
    return root


def run(root: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["--store", str(root), *args], catch_exceptions=False)


def repeated(option: str, values: list[str]) -> list[str]:
    return [arg for value in values for arg in (option, value)]


def test_cli_search_takes_ten_thousand_tag_options(cli_store):
    result = run(cli_store, "search", "database port", "--json", *repeated("--tag", TAGS))
    data = json.loads(result.stdout)
    assert (result.exit_code, [hit["path"] for hit in data["hits"]]) == (0, ["every-tag.md"])
    assert "vector" in data["arms_fired"]


def test_cli_search_takes_ten_thousand_kind_options(cli_store):
    args = repeated("--kind", [*KINDS, "person"])
    result = run(cli_store, "search", "database port", "--json", *args)
    data = json.loads(result.stdout)
    assert (result.exit_code, [hit["path"] for hit in data["hits"]]) == (0, ["person.md"])


def test_cli_search_with_ten_thousand_unknown_tags_says_the_scope_is_empty(cli_store):
    args = repeated("--tag", [f"nobody-{i}" for i in range(MANY)])
    result = run(cli_store, "search", "database port", *args)
    assert (result.exit_code, result.stdout) == (1, "no results (the scope holds no memories)\n")
    assert all(len(line) < 300 for line in result.stderr.splitlines())


def test_cli_search_takes_a_100_kilobyte_path_prefix(cli_store):
    result = run(cli_store, "search", "database port", "--path-prefix", "x" * 100_000)
    assert (result.exit_code, result.stdout) == (1, "no results (the scope holds no memories)\n")
    assert all(len(line) < 300 for line in result.stderr.splitlines())
