"""What a new user trips over on the command line, following the README on their own notes:
an empty query that answered with ten strangers, and a status that spoke Python."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.cli import cli


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    (root / ".memsift").mkdir(parents=True)
    (root / ".memsift" / "config.toml").write_text('[embedder]\nmodel = "none"\n')
    for n in range(12):
        (root / f"note-{n}.md").write_text(f"# Note {n}\n\nSomething about topic {n}.\n")
    assert run("--store", str(root), "index").exit_code == 0
    return root


@pytest.mark.parametrize("query", ["", "   ", "\t\n"])
def test_an_empty_query_is_bad_input_not_ten_recent_memories(store, query):
    result = run("--store", str(store), "search", query)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("memsift: the query is empty")
    assert "memsift list" in result.stderr


def test_status_speaks_to_people_not_in_python_reprs(store):
    result = run("--store", str(store), "status")
    assert result.exit_code == 0
    text = result.stdout
    for python in ("None", "{'", "[]", "True", "False"):
        assert python not in text, (python, text)
    assert "changes: added 0, modified 0, removed 0" in text
    widths = {line.index(":") for line in text.splitlines()}
    assert len(widths) == 1, text  # every key right-aligned to one column


def test_remembering_a_task_says_where_to_find_it_again(store):
    """Tasks are out of default searches: a user who remembers one and searches for it would
    find nothing without being told (the server's answer says so; the CLI did not)."""
    result = CliRunner().invoke(
        cli,
        ["--store", str(store), "remember", "--title", "Renew the cert", "--kind", "task"],
        input="Before November.\n",
        catch_exceptions=False,
    )
    assert result.exit_code == 0
    assert result.stdout == "tasks/renew-the-cert.md\n"
    assert "--kind task" in result.stderr


def test_python_dash_m_engine_cli_runs_the_cli():
    """The helpers' brief and a checkout without the console script run `python -m
    engine.cli`; the module ran nothing and printed nothing."""
    src = Path(__file__).resolve().parents[2] / "src"
    done = subprocess.run(
        [sys.executable, "-m", "engine.cli", "--version"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(src)},
        check=False,
    )
    assert done.returncode == 0
    assert done.stdout.startswith("memsift ")


@pytest.mark.parametrize("query", ["title:", "tags:", "tag: ?", "body:'", 'title:""', "TITLE: :*"])
def test_a_column_prefix_with_no_word_after_it_is_bad_input_not_a_search(store, query):
    # It searched the embedding of "title:" and said "no memory holds every query word".
    result = run("--store", str(store), "search", query)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "limits the word after it to a column" in result.stderr
    assert "title:release" in result.stderr


def test_a_prefix_left_dangling_after_words_does_not_refuse_them(store):
    result = run("--store", str(store), "search", "topic 3 title:")
    assert result.exit_code == 0
    assert "note-3.md" in result.stdout
