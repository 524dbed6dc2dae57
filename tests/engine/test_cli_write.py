"""The write path and the small conveniences on the command line: remember, forget, list,
--version, --store after the command, and progress lines when stderr is not a terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.cli import cli
from engine.indexing.progress import EMBED_START, duration, periodic_progress


def run(*args: str, stdin: str | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False)


@pytest.fixture
def lexical_store(tmp_path: Path) -> Path:
    """A store configured without an embedding model, so nothing loads onnxruntime."""
    root = tmp_path / "store"
    (root / ".memsift").mkdir(parents=True)
    (root / ".memsift" / "config.toml").write_text('[embedder]\nmodel = "none"\n')
    (root / "facts").mkdir()
    (root / "facts" / "port.md").write_text("---\ntitle: Port\nevent_at: 2026-01-01\n---\n6432.\n")
    assert run("--store", str(root), "index").exit_code == 0
    return root


def test_remember_reads_the_body_from_stdin_and_prints_the_path(lexical_store):
    result = run(
        "--store",
        str(lexical_store),
        "remember",
        "--title",
        "Priya on retries",
        "--kind",
        "episodic",
        "--tag",
        "testing",
        "--event-at",
        "2026-09-17",
        stdin="Priya wants flaky tests fixed, never retried.\n",
    )
    assert result.exit_code == 0
    assert result.stdout == "episodes/priya-on-retries.md\n"
    text = (lexical_store / "episodes/priya-on-retries.md").read_text()
    assert "Priya wants flaky tests fixed, never retried." in text


def test_remembered_memory_is_found_by_the_next_search(lexical_store):
    store = str(lexical_store)
    run("--store", store, "remember", "--title", "Pager", "--body", "Ana carries the pager.")
    found = json.loads(run("--store", store, "search", "who carries the pager", "--json").stdout)
    assert found["hits"][0]["path"] == "facts/pager.md"


def test_remember_json_prints_the_path_as_json(lexical_store):
    result = run("remember", "--store", str(lexical_store), "--title", "T", "--body", "B", "--json")
    assert json.loads(result.stdout) == {"path": "facts/t.md", "indexed": True}


def test_remember_with_an_invalid_kind_is_a_one_line_usage_error(lexical_store):
    result = run(
        "--store", str(lexical_store), "remember", "--title", "T", "--body", "B", "--kind", "Bad!"
    )
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert "not a valid kind" in result.stderr
    assert not (lexical_store / "bad!").exists()


def test_remember_with_a_bad_event_at_names_the_option_and_writes_nothing(lexical_store):
    before = sorted(lexical_store.rglob("*.md"))

    result = run(
        "--store", str(lexical_store), "remember", "--title", "T", "--event-at", "soon",
        stdin="Body.\n",
    )  # fmt: skip

    assert result.exit_code == 2
    assert result.stderr == (
        "memsift: --event-at 'soon' is not an ISO 8601 date; "
        "write it like 2026-10-03 or 2026-10-03T14:20:00Z\n"
    )
    assert sorted(lexical_store.rglob("*.md")) == before


def test_forget_archives_then_reports_it_was_already_archived(lexical_store):
    store = str(lexical_store)
    assert run("--store", store, "forget", "facts/port.md").stdout == "archived facts/port.md\n"
    again = run("--store", store, "forget", "facts/port.md", "--json")
    assert json.loads(again.stdout) == {
        "path": "facts/port.md",
        "archived": True,
        "changed": False,
        "indexed": True,
    }
    undone = run("--store", store, "forget", "--undo", "facts/port.md")
    assert undone.stdout == "unarchived facts/port.md\n"


def test_forget_refuses_a_path_outside_the_store(lexical_store, tmp_path):
    (tmp_path / "outside.md").write_text("x\n")
    result = run("--store", str(lexical_store), "forget", "../outside.md")
    assert result.exit_code == 2
    assert "not inside the store" in result.stderr
    assert (tmp_path / "outside.md").read_text() == "x\n"


def test_list_prints_recent_memories_newest_first(lexical_store):
    store = str(lexical_store)
    run("--store", store, "remember", "--title", "Newer", "--body", "B", "--event-at", "2026-05-01")
    listed = json.loads(run("--store", store, "list", "--json").stdout)
    assert [m["path"] for m in listed] == ["facts/newer.md", "facts/port.md"]
    human = run("--store", store, "list", "--limit", "1").stdout
    assert human == "2026-05-01  semantic    facts/newer.md  Newer\n"


def test_list_with_an_empty_scope_says_so(lexical_store):
    result = run("--store", str(lexical_store), "list", "--kind", "person")
    assert result.stdout == ""
    assert "no memories in scope (kind=person)" in result.stderr


def test_version_prints_the_program_and_its_version():
    result = run("--version")
    assert result.exit_code == 0
    assert result.stdout.startswith("memsift ")


def test_store_is_accepted_after_the_subcommand(lexical_store):
    result = run("status", "--json", "--store", str(lexical_store))
    assert json.loads(result.stdout)["files"] == 1


def test_store_after_the_subcommand_wins_over_the_one_before(lexical_store, tmp_path):
    result = run("--store", str(tmp_path), "status", "--json", "--store", str(lexical_store))
    assert json.loads(result.stdout)["store"] == str(lexical_store.resolve())


def test_store_is_accepted_after_a_nested_subcommand(lexical_store):
    result = run("state", "prune", "--dry-run", "--store", str(lexical_store))
    assert result.exit_code == 0


def test_index_prints_progress_lines_when_stderr_is_not_a_terminal(lexical_store):
    (lexical_store / "facts" / "more.md").write_text("More.\n")
    result = run("--store", str(lexical_store), "index")
    assert "scanning files: 2/2 (100%)" in result.stderr.splitlines()
    assert "\r" not in result.stderr


def test_periodic_progress_writes_at_phase_start_every_interval_and_at_the_end():
    lines: list[str] = []
    now = [0.0]
    report = periodic_progress(lines.append, interval_s=10, clock=lambda: now[0])
    for done in range(1, 101):
        now[0] = done * 0.5  # 50 s in all
        report("embed", done, 100)
    assert lines == [
        EMBED_START,
        "embedding chunks: 1/100 (1%)",
        "embedding chunks: 21/100 (21%), 2.0 chunks/s, about 40 s left",
        "embedding chunks: 41/100 (41%), 2.0 chunks/s, about 30 s left",
        "embedding chunks: 61/100 (61%), 2.0 chunks/s, about 20 s left",
        "embedding chunks: 81/100 (81%), 2.0 chunks/s, about 10 s left",
        "embedding chunks: 100/100 (100%)",
    ]


def test_a_resumed_run_says_how_far_the_interrupted_one_got_before_its_embedding_lines():
    lines: list[str] = []
    report = periodic_progress(lines.append, interval_s=10, clock=lambda: 0.0)
    report("resume", 1200, 4800)
    report("embed", 0, 3600)
    assert lines == [
        "resuming an interrupted run: 1,200 of 4,800 chunks already have vectors; "
        "embedding the rest",
        EMBED_START,
        "embedding chunks: 0/3600 (0%)",
    ]


def test_the_time_left_follows_the_measured_rate():
    lines: list[str] = []
    now = [0.0]
    report = periodic_progress(lines.append, interval_s=60, clock=lambda: now[0])
    report("scan", 0, 10_000)
    now[0] = 120.0
    report("scan", 600, 10_000)  # 5 files a second: 9,400 to go take about 31 min
    assert lines[-1] == "scanning files: 600/10000 (6%), 5.0 files/s, about 31 min left"


def test_the_champion_lists_say_their_passes_and_the_time_left_without_a_rate():
    lines: list[str] = []
    now = [0.0]
    report = periodic_progress(lines.append, interval_s=10, clock=lambda: now[0])
    report("champions", 0, 2)
    now[0] = 300.0
    report("champions", 1, 2)
    now[0] = 600.0
    report("champions", 2, 2)
    label = "champion lists for the full-text arm (passes over every posting)"
    assert lines == [
        f"{label}: 0/2 (0%)",
        f"{label}: 1/2 (50%), about 5 min left",
        f"{label}: 2/2 (100%)",
    ]


@pytest.mark.parametrize(
    ("seconds", "text"), [(0.2, "1 s"), (40, "40 s"), (200, "3 min"), (4800, "1 h 20 min")]
)
def test_durations_read_as_a_person_plans(seconds, text):
    assert duration(seconds) == text


def test_serve_on_a_missing_store_is_a_one_line_error(tmp_path):
    result = run("--store", str(tmp_path / "missing"), "serve")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert "no such folder" in result.stderr


def test_remember_with_the_index_locked_prints_the_path_and_warns_without_failing(
    lexical_store, index_locked
):
    """The file is the memory: reporting a failure would have the caller write it again."""
    result = run("--store", str(lexical_store), "remember", "--title", "Pager", "--body", "Ana.")
    assert result.exit_code == 0
    assert result.stdout == "facts/pager.md\n"
    assert result.stderr.startswith("memsift: warning: facts/pager.md was written, but the")
    assert "index.db" in result.stderr
    assert sorted(p.name for p in (lexical_store / "facts").iterdir()) == ["pager.md", "port.md"]


def test_remember_json_says_when_the_memory_is_not_indexed(lexical_store, index_locked):
    result = run("--store", str(lexical_store), "remember", "--title", "T", "--body", "B", "--json")
    assert json.loads(result.stdout) == {"path": "facts/t.md", "indexed": False}


def test_forget_with_the_index_locked_says_the_file_was_archived(lexical_store, index_locked):
    result = run("--store", str(lexical_store), "forget", "facts/port.md")
    assert result.exit_code == 0
    assert result.stdout == "archived facts/port.md\n"
    assert "was archived, but the index has not taken it yet" in result.stderr


def test_list_escapes_control_characters_in_titles(lexical_store):
    store = str(lexical_store)
    run("--store", store, "remember", "--title", "x\x1b[31mred", "--body", "B")
    listed = run("--store", store, "list").stdout
    assert "x\\x1b[31mred" in listed
    assert "\x1b" not in listed
