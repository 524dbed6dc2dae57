"""The command line as a user drives it: output shapes, exit codes, one-line errors."""

from __future__ import annotations

import errno
import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import apsw
import pytest
from click.testing import CliRunner

import engine.cli
from engine.arms import ARMS, Arm
from engine.cli import cli
from engine.search import CANDIDATE_LIMIT

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CLI_MAIN = "from engine.cli import main; main()"


def run(*args: str, store: Path | None = None):  # type: ignore[no-untyped-def]
    prefix = ["--store", str(store)] if store else []
    return CliRunner().invoke(cli, [*prefix, *args], catch_exceptions=False)


@pytest.fixture(scope="module")
def first_index(tmp_path_factory) -> tuple[Path, str]:  # type: ignore[no-untyped-def]
    """The bundled example store, copied and indexed with the real embedder, and what that
    first `memsift index` printed."""
    root = tmp_path_factory.mktemp("cli") / "examples"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".memsift"))
    result = run("index", store=root)
    assert result.exit_code == 0
    return root, result.stdout


@pytest.fixture(scope="module")
def example_store(first_index) -> Path:  # type: ignore[no-untyped-def]
    return first_index[0]


@pytest.mark.parametrize("page", ["getting-started.md", "index.md"])
def test_the_docs_show_what_index_prints_on_the_examples(first_index, page):
    root, first = first_index
    text = (EXAMPLES.parent / "docs" / page).read_text(encoding="utf-8")
    assert f"$ memsift --store examples index\n{first}" in text
    if page == "getting-started.md":  # the second run, nothing changed
        again = run("index", store=root).stdout
        assert f"$ memsift --store examples index\n{again}" in text


def test_index_json_prints_the_summary_shape(example_store):
    result = run("index", "--json", store=example_store)
    summary = json.loads(result.stdout)
    assert set(summary) >= {"indexed", "unchanged", "removed", "skipped"}
    assert summary["indexed"] == 0 and summary["unchanged"] >= 25


def test_status_reports_full_vector_coverage_on_the_examples(example_store):
    info = json.loads(run("status", "--json", store=example_store).stdout)
    assert info["vector_coverage"] == 1.0
    assert info["dimension"] == 384
    assert info["changed_since_index"] is False


def test_search_json_has_the_documented_shape(example_store):
    result = run("search", "rotate the staging database credentials", "--json", store=example_store)
    data = json.loads(result.stdout)
    assert result.exit_code == 0
    assert set(data) >= {"query", "hits", "arms_fired", "arms_dropped", "fts_form", "degraded"}
    hit = data["hits"][0]
    assert set(hit) >= {"path", "title", "kind", "event_at", "score", "snippet", "arms"}
    top3 = [h["path"] for h in data["hits"][:3]]
    assert "procedures/rotate-staging-db-credentials.md" in top3
    assert all(set(arm) == {"rank", "contribution"} for arm in hit["arms"].values())


def test_search_sql_json_shows_sql_and_replayable_params(example_store):
    data = json.loads(
        run(
            "search",
            "flaky tests",
            "--json",
            "--sql",
            "--kind",
            "episodic",
            store=example_store,
        ).stdout
    )
    assert data["sql"].startswith("WITH")
    assert data["params"][3].startswith("<float32[384]")
    assert data["params"][6] == '["episodic"]'


def test_search_explain_json_adds_no_sql(example_store):
    result = run("search", "flaky tests", "--json", "--explain", store=example_store)
    data = json.loads(result.stdout)
    assert "sql" not in data and "params" not in data
    assert all(hit["arms"] for hit in data["hits"])


def test_search_explain_shows_each_hits_arm_ranks_and_no_sql(example_store):
    result = run("search", "flaky tests", "--limit", "2", "--explain", store=example_store)
    scores = [line for line in result.stdout.splitlines() if line.startswith("    score ")]
    assert len(scores) == 2
    assert "fts #" in scores[0] and " = " in scores[0]
    assert "SQL" not in result.stdout and "WITH" not in result.stdout


def test_search_sql_prints_the_statement_and_its_values_after_the_hits(example_store):
    result = run("search", "flaky tests", "--limit", "2", "--sql", store=example_store)
    lines = result.stdout.splitlines()
    assert lines[0].startswith(" 1. ")
    assert "-- SQL (bind these values in order: ?1, ?2, ...)" in lines
    assert lines[-1].startswith(
        f'-- values: ["\\"flaky\\" AND \\"tests\\"", {CANDIDATE_LIMIT}, {2 * CANDIDATE_LIMIT}, '
        '"<float32[384]'
    )
    assert len([line for line in lines if line[:4].strip().rstrip(".").isdigit()]) == 2
    assert not any(line.startswith("    score ") for line in lines)


def test_a_sqlite_error_no_boundary_named_is_one_line_asking_for_a_report(
    example_store, monkeypatch
):
    """The command line's last net: a SQLite error the engine let through without naming the
    database is one line and exit 2, with the way to the traceback."""

    def unnamed(_store: object) -> None:
        raise apsw.SQLError("statement aborts at 3: unexpected")

    monkeypatch.setattr(importlib.import_module("engine.cli"), "store_status", unnamed)
    result = run("status", store=example_store)
    assert result.exit_code == 2
    assert result.stderr == (
        "memsift: SQLite: statement aborts at 3: unexpected (rerun with --debug for the traceback, "
        "and please report it)\n"
    )


def test_a_normal_search_prints_nothing_on_stderr(example_store):
    assert run("read", "facts/environments.md", store=example_store).exit_code == 0
    result = run("search", "staging database port", store=example_store)
    assert result.exit_code == 0 and result.stdout
    assert result.stderr == ""


def test_a_lexical_search_asked_for_prints_nothing_on_stderr(example_store):
    assert run("read", "facts/environments.md", store=example_store).exit_code == 0
    result = run("search", "staging database port", "--no-vector", store=example_store)
    assert result.exit_code == 0 and result.stderr == ""


def test_a_ranking_that_cannot_run_is_named_in_plain_words_with_the_reason(example_store):
    result = run("search", "?!", "--no-vector", store=example_store)
    assert result.stderr.startswith("memsift: full-text ranking off: no query terms")
    assert result.stderr.count("\n") == 1


def test_a_new_arm_is_named_on_stderr_by_its_own_label(example_store, monkeypatch):
    # A sixth arm is one registry entry: the CLI knows no arm by name, so it reads the words.
    titles = Arm(
        name="title_words",
        label="title-word ranking",
        weight=0.5,
        needs=("query_terms",),
        prose="Ranks memories whose titles hold the query's words; drops without query words.",
        sql="""
SELECT path, row_number() OVER (ORDER BY path) AS rank
FROM (
    SELECT f.path AS path FROM chunks_fts JOIN chunks AS c ON c.id = chunks_fts.rowid
    JOIN files AS f ON f.id = c.file_id
    WHERE chunks_fts MATCH ?1 AND {scope} GROUP BY f.id LIMIT ?2
)
""",
    )
    # engine.search is also the name of a function the package exports: fetch the module.
    monkeypatch.setattr(importlib.import_module("engine.search"), "ARMS", (*ARMS, titles))

    result = run("search", "?!", "--no-vector", store=example_store)

    assert result.stderr.splitlines()[:2] == [
        "memsift: full-text ranking off: no query terms (nothing searchable in the query text)",
        "memsift: title-word ranking off: no query terms (nothing searchable in the query text)",
    ]


def test_a_degraded_search_says_so_and_why(tmp_path):
    root = tmp_path / "s"
    root.mkdir()
    (root / "a.md").write_text("# Alpha\n\nthe staging port is 6432", encoding="utf-8")
    assert run("index", "--no-embed", store=root).exit_code == 0
    assert run("read", "a.md", store=root).exit_code == 0
    result = run("search", "staging port", store=root)
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [
        "memsift: search degraded: results may be weaker than usual",
        "memsift: semantic ranking off: the index holds no vectors yet; run `memsift index` "
        "to embed with all-MiniLM-L6-v2-int8",
    ]


def test_search_stderr_uses_no_internal_words(example_store):
    for query in ("staging database port", "?!", ""):
        stderr = run("search", query, store=example_store).stderr
        for word in ("fts form", "arms:", "DEGRADED", "dropped", "fts "):
            assert word not in stderr, (query, word)


def test_search_human_output_lists_rank_title_and_path(example_store):
    result = run(
        "search", "what did Priya say about flaky tests", "--limit", "3", store=example_store
    )
    lines = result.stdout.splitlines()
    assert lines[0].startswith(" 1. ")
    assert "[episodes/" in lines[0] or "[people/" in lines[0]


def test_search_without_hits_exits_1(example_store):
    result = run("search", "zzzqqq", "--no-vector", store=example_store)
    assert result.exit_code == 1


def test_bad_date_exits_2_with_one_line(example_store):
    result = CliRunner().invoke(
        cli, ["--store", str(example_store), "search", "x", "--since", "last tuesday"]
    )
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "ISO 8601" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("option", ["--since", "--until"])
def test_a_bad_date_is_named_as_the_option_given(example_store, option):
    result = CliRunner().invoke(
        cli, ["--store", str(example_store), "search", "x", option, "last tuesday"]
    )
    assert result.output == (
        f"memsift: {option} 'last tuesday' is not an ISO 8601 date; use e.g. 2026-10-03\n"
    )


def test_a_min_similarity_of_nan_is_refused_naming_the_option(example_store):
    # click's range lets nan through (it compares false with both ends)
    result = run("search", "x", "--min-similarity", "nan", store=example_store)
    assert result.exit_code == 2
    assert result.output == (
        "memsift: --min-similarity nan: must be between 0 and 1 (0 never abstains)\n"
    )


def test_missing_store_exits_2(tmp_path):
    result = CliRunner().invoke(cli, ["--store", str(tmp_path / "nope"), "status"])
    assert result.exit_code == 2
    assert "no such folder" in result.output


@pytest.mark.parametrize("command", [["index"], ["search", "x"], ["status"], ["list"]])
def test_a_file_named_memsift_in_the_store_is_named_with_the_fix(tmp_path, command):
    # where the index and state plane go: each command failed its own way, with an OS error
    # ("[Errno 17] File exists") or advice to run the index that could not run
    (tmp_path / "a.md").write_text("# A\n\nalpha", encoding="utf-8")
    (tmp_path / ".memsift").write_text("someone else's file", encoding="utf-8")
    result = run(*command, store=tmp_path)
    assert result.exit_code == 2
    assert result.output == (
        f"memsift: {tmp_path / '.memsift'}: a file, where memsift keeps its index in a folder "
        "of this name; move the file away\n"
    )
    assert (tmp_path / ".memsift").read_text(encoding="utf-8") == "someone else's file"


def test_unindexed_store_says_to_run_index(tmp_path):
    result = CliRunner().invoke(cli, ["--store", str(tmp_path), "search", "x"])
    assert result.exit_code == 2
    assert "memsift index" in result.output


def test_read_prints_the_memory_and_counts_the_access(example_store):
    path = "people/priya-raman.md"
    first = run("read", path, store=example_store)
    assert "Priya" in first.output
    data = json.loads(run("read", path, "--json", store=example_store).stdout)
    assert data["access_count"] >= 2


def test_reinforce_folds_the_outcome(example_store):
    path = "facts/ci-pipeline.md"
    data = json.loads(
        run("reinforce", path, "--outcome", "1", "--json", store=example_store).stdout
    )
    assert data["outcome_score"] == pytest.approx(0.3)


def test_read_refuses_paths_outside_the_store(example_store):
    result = CliRunner().invoke(cli, ["--store", str(example_store), "read", "../../etc/passwd"])
    assert result.exit_code == 2
    assert "not inside the store" in result.output


def test_state_plane_brings_in_salience(example_store):
    run("read", "facts/environments.md", store=example_store)
    data = json.loads(run("search", "environments", "--json", store=example_store).stdout)
    assert "salience" in data["arms_fired"]


def test_debug_flag_shows_the_traceback(example_store):
    result = CliRunner().invoke(
        cli, ["--store", str(example_store), "--debug", "search", "x", "--since", "soon"]
    )
    assert result.exit_code == 2
    assert "Traceback" in result.output


def test_state_prune_dry_run_lists_and_keeps(tmp_path):
    root = tmp_path / "s"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nalpha", encoding="utf-8")
    assert run("read", "a.md", store=root).exit_code == 0
    (root / "a.md").unlink()
    dry = json.loads(run("state", "prune", "--dry-run", "--json", store=root).stdout)
    assert dry == {"stale": ["a.md"], "removed": 0, "dry_run": True}
    done = json.loads(run("state", "prune", "--json", store=root).stdout)
    assert done["removed"] == 1


@pytest.mark.parametrize("path", [".memsift/index.db", "notes.txt"])
def test_read_refuses_files_that_are_not_memories(tmp_path, path):
    root = tmp_path / "s"
    (root / ".memsift").mkdir(parents=True)
    (root / path).write_text("not a memory", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--store", str(root), "read", path])
    assert result.exit_code == 2
    assert "not a memory" in result.output
    assert not (root / ".memsift" / "state.db").exists()


def test_index_reports_each_state_row_that_follows_a_rename(tmp_path):
    root = tmp_path / "s"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nalpha", encoding="utf-8")
    assert run("index", "--no-embed", store=root).exit_code == 0
    assert run("read", "a.md", store=root).exit_code == 0
    (root / "a.md").rename(root / "b.md")
    (root / "c.md").write_text("# C\n\ngamma", encoding="utf-8")
    human = run("index", "--no-embed", store=root)
    assert "  moved state of a.md to b.md (renamed, same content)" in human.output.splitlines()
    (root / "b.md").rename(root / "d.md")
    summary = json.loads(run("index", "--no-embed", "--json", store=root).stdout)
    assert summary["moved"] == [{"from": "b.md", "to": "d.md"}]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_read_refuses_a_named_pipe_without_opening_it(tmp_path):
    root = tmp_path / "s"
    root.mkdir()
    os.mkfifo(root / "pipe.md")
    done = subprocess.run(  # a child with a timeout: a regression fails instead of hanging
        [sys.executable, "-c", CLI_MAIN, "--store", str(root), "read", "pipe.md"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "pipe.md: a named pipe" in done.stderr
    assert not (root / ".memsift" / "state.db").exists()


def test_read_refuses_a_file_over_the_size_limit(tmp_path):
    root = tmp_path / "s"
    (root / ".memsift").mkdir(parents=True)
    (root / ".memsift" / "config.toml").write_text("[limits]\nmax_file_bytes = 100\n")
    (root / "big.md").write_text("# Big\n\n" + "word " * 100, encoding="utf-8")
    result = CliRunner().invoke(cli, ["--store", str(root), "read", "big.md"])
    assert result.exit_code == 2
    assert "big.md: 507 bytes is over the 100-byte limit" in result.output
    assert not (root / ".memsift" / "state.db").exists()


def test_read_shows_a_latin1_html_page_in_the_charset_it_declares(tmp_path):
    root = tmp_path / "s"
    root.mkdir()
    page = '<meta charset="iso-8859-1"><p>Cr\u00e8me br\u00fbl\u00e9e</p>\n'
    (root / "menu.html").write_bytes(page.encode("latin-1"))
    result = CliRunner().invoke(cli, ["--store", str(root), "read", "menu.html", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["text"] == page


def test_read_of_a_memory_the_index_skips_says_why(tmp_path):
    # as the MCP tool's `problem` does: the file is printed, and the reader learns that no
    # search will find it, and why
    root = tmp_path / "s"
    root.mkdir()
    (root / "odd.md").write_text("---\nkind: 7\n---\nbody\n", encoding="utf-8")
    result = run("read", "odd.md", store=root)
    assert result.exit_code == 0
    assert "body" in result.stdout
    assert result.stderr == (
        "memsift: warning: odd.md: the index skips this file: kind (line 2) must be text, "
        "got a int\n"
    )
    data = json.loads(run("read", "odd.md", "--json", store=root).stdout)
    assert data["problem"] == "the index skips this file: kind (line 2) must be text, got a int"


def test_read_of_a_usable_memory_has_no_problem(example_store):
    result = run("read", "people/priya-raman.md", store=example_store)
    assert result.stderr == ""
    data = json.loads(run("read", "people/priya-raman.md", "--json", store=example_store).stdout)
    assert data["problem"] is None


def test_read_of_a_name_that_is_not_utf8_says_so_in_one_line(tmp_path):
    root = tmp_path / "s"
    root.mkdir()
    with open(os.path.join(os.fsencode(root), b"bad\xff.md"), "wb") as handle:
        handle.write(b"# Bad name\n\nbody")
    result = CliRunner().invoke(cli, ["--store", str(root), "read", os.fsdecode(b"bad\xff.md")])
    assert result.exit_code == 2
    assert result.output == (
        "memsift: bad\\xff.md: the file name is not valid UTF-8, so it cannot be a memory; "
        "rename it\n"
    )


def test_eval_keep_refuses_a_store_in_one_line_and_deletes_nothing(tmp_path):
    data = tmp_path / "set"
    (data / "qrels").mkdir(parents=True)
    (data / "corpus.jsonl").write_text('{"_id": "d1", "title": "T", "text": "x"}\n')
    (data / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n')
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    store = tmp_path / "memories"
    (store / "set").mkdir(parents=True)
    (store / "set" / "note.md").write_text("# Note\n\nthe only copy", encoding="utf-8")
    result = CliRunner().invoke(cli, ["eval", str(data), "--keep", str(store)])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "not made by memsift eval" in result.output
    assert (store / "set" / "note.md").read_text(encoding="utf-8") == "# Note\n\nthe only copy"


def test_a_search_that_answers_nothing_says_which_option_shows_the_withheld_hits():
    from engine.cli import search_account
    from engine.search import SearchResult

    note = "no answer: ... (3 weaker hit(s) withheld)"
    result = SearchResult("q", [], ["fts"], {}, "any", False, "", notes=[note], abstained=True)
    assert search_account(result, asked_off=set())[-2:] == [
        note,
        "--min-similarity 0 shows the withheld hits",
    ]


@pytest.mark.parametrize("command", [["search", "x"], ["list"]])
def test_since_after_until_exits_2_naming_both_values(example_store, command):
    result = CliRunner().invoke(
        cli,
        ["--store", str(example_store), *command, "--since", "2026-05-01", "--until", "2026-04-01"],
    )
    assert result.exit_code == 2
    assert result.output.startswith("memsift: --since 2026-05-01 is after --until 2026-04-01; ")
    assert result.output.count("\n") == 1


@pytest.mark.parametrize("command", [[], ["search"]], ids=["memsift", "search"])
def test_help_names_every_arm_of_the_registry(command):
    from engine.arms import ARMS

    result = CliRunner().invoke(cli, [*command, "--help"], terminal_width=1000)

    said = " ".join(result.output.split())
    labels = [arm.label.removesuffix(" ranking") for arm in ARMS]
    assert ", ".join(labels[:-1]) + f" and {labels[-1]} rankings" in said


def lexical_store(root: Path, files: dict[str, str]) -> Path:
    """A store without an embedding model holding ``files``, indexed."""
    (root / ".memsift").mkdir(parents=True)
    (root / ".memsift" / "config.toml").write_text('[embedder]\nmodel = "none"\n')
    for name, text in files.items():
        (root / name).write_text(text)
    assert run("index", store=root).exit_code == 0
    return root


def test_search_explain_names_the_authority_that_scaled_a_hit(tmp_path):
    root = lexical_store(
        tmp_path / "store",
        {
            "new.md": "---\ntitle: Deploys\ntags: [pinned]\n---\n"
            "Deploys run through the pipeline.\n",
            "old.md": "---\ntitle: Deploys\ntags: [superseded]\n---\n"
            "Deploys run through the old script.\n",
        },
    )
    result = run("search", "deploys run", "--explain", store=root)
    scores = [line for line in result.stdout.splitlines() if line.startswith("    score ")]
    assert scores[0].endswith(") x 1.2 authority (pinned)")
    assert scores[1].endswith(") x 0.5 authority (superseded)")


def test_search_explain_says_which_twin_a_hit_moved_above(tmp_path):
    # The denying twin is the shorter text, so BM25 puts it first before the twin rule.
    root = lexical_store(
        tmp_path / "store",
        {
            "not.md": "---\ntitle: Warehouse\n---\nThe warehouse is not hosted in eu-west-1.\n",
            "is.md": "---\ntitle: Warehouse\n---\n"
            "The warehouse is hosted in eu-west-1, by the ingest.\n",
        },
    )
    result = run("search", "where is the warehouse hosted", "--explain", store=root)
    lines = result.stdout.splitlines()
    assert lines[0].endswith("[is.md]")
    assert "    ranked above its near-twin not.md, which denies or retires what this one says" in (
        lines
    )
    data = json.loads(run("search", "where is the warehouse hosted", "--json", store=root).stdout)
    assert [(h["path"], h["above_twin"]) for h in data["hits"]] == [
        ("is.md", "not.md"),
        ("not.md", None),
    ]


@pytest.mark.parametrize(
    ("flags", "expected"),
    [((), None), (("--withhold-unseen",), True), (("--answer-unseen",), False)],
)
def test_search_passes_the_coverage_test_choice_to_the_engine(
    example_store, monkeypatch, flags, expected
):
    seen = {}
    real = engine.cli.search

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        seen.update(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(engine.cli, "search", spy)
    run("search", "staging database port", *flags, store=example_store)
    assert seen["withhold_unseen"] is expected


# --------------------------------------------------------------------------- a reader gone


def memsift_into_closed_pipe(stream: str, *args: str) -> subprocess.CompletedProcess[str]:
    """memsift with its ``stream`` ("stdout" or "stderr") a pipe whose reader has already
    gone, as after `| head -1` has read its line: every write there fails with EPIPE."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    other = "stderr" if stream == "stdout" else "stdout"
    try:
        return subprocess.run(  # a child with a timeout: a regression fails instead of hanging
            [sys.executable, "-c", CLI_MAIN, *args],
            **{stream: write_end, other: subprocess.PIPE},  # type: ignore[call-overload]
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "command",
    [
        ("search", "staging database port"),
        ("search", "staging database port", "--json"),
        ("list",),
        ("list", "--json"),
        ("--help",),
    ],
)
def test_a_reader_closing_stdout_early_ends_the_command_quietly_as_sigpipe_would(
    example_store, command
):
    """`memsift search x | head -1`: no traceback, no 'Broken pipe' line, and the status a
    shell reports for a tool SIGPIPE ended (128 + 13), never 1, which means 'no result'."""
    done = memsift_into_closed_pipe("stdout", "--store", str(example_store), *command)
    assert (done.returncode, done.stderr) == (141, "")


def test_an_error_whose_reader_closed_stderr_ends_with_the_sigpipe_status(tmp_path):
    """The one line saying what is wrong cannot be written: memsift ends as a Unix tool
    would, not with a Python exception it cannot show either."""
    done = memsift_into_closed_pipe("stderr", "--store", str(tmp_path / "missing"), "status")
    assert (done.returncode, done.stdout) == (141, "")


def test_a_broken_pipe_inside_a_command_is_not_reported_as_a_fault_of_the_store():
    """A progress line to a stderr nobody reads fails inside the command's error handling; it
    must end the command as a gone reader does, not as 'memsift: [Errno 32] Broken pipe'."""
    with pytest.raises(BrokenPipeError), engine.cli.user_errors(debug=False):
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")


# --------------------------------------------------------------------------- index's counts


def test_index_does_not_call_a_chunk_full_text_only_that_shares_a_vector_from_an_earlier_run(
    tmp_path,
):
    """A run that rewrites a file over the budget counts the chunks the budget leaves out of
    it; one of them holds the same text as a chunk b.md embedded in the first run, so it has a
    vector. The line must not claim the whole figure is found by full text only: `status`
    counts those, 7 here."""
    root = tmp_path / "s"
    (root / ".memsift").mkdir(parents=True)
    (root / ".memsift" / "config.toml").write_text("[limits]\nembed_chunks_per_file = 2\n")

    def paragraph(n: int) -> str:  # one chunk each: no sentence end inside, over 1,000 chars
        clauses = (f"paragraph {n} clause {k} says something about item {n}-{k}" for k in range(20))
        return " ".join(clauses)

    def log(count: int) -> str:
        return "---\ntitle: Log\n---\n" + "\n\n".join(paragraph(n) for n in range(count)) + "\n"

    (root / "a.md").write_text(log(10), encoding="utf-8")  # chunks 0 and 8 embedded
    (root / "b.md").write_text(log(2), encoding="utf-8")  # both embedded, a.md's chunk 1 too
    assert run("index", store=root).exit_code == 0
    (root / "a.md").write_text(log(10).replace("paragraph 9 clause 0", "paragraph 9 clause zero"))
    line = run("index", store=root).stdout.splitlines()[0]
    status = json.loads(run("status", "--json", store=root).stdout)
    assert status["full_text_only_chunks"] == 7
    assert line.endswith(", 8 past the per-file embedding budget")
