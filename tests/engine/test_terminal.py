"""No control character from a store reaches the terminal; ``--json`` stays exact.

Memory files are written by anyone, so titles, bodies, file names, scope values and the errors
quoting them may hold terminal escapes (``ESC ]0;…BEL`` retitles the window, ``ESC [31m``
repaints, a bidi override reverses text, a newline in a name fakes a line of output). Every
human output path of every command is tried with such text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.cli import cli
from engine.terminal import printable

TITLE_ATTACK = "\x1b]0;pwned\x07"
COLOUR = "\x1b[31m"
EVIL_NAME = f"evil{TITLE_ATTACK}.md"
NEWLINE_NAME = "line\nbreak.md"
RAW = (TITLE_ATTACK, COLOUR, "\u202e", "\x9b")


def run(root: Path, *args: str, **kwargs):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["--store", str(root), *args], catch_exceptions=False, **kwargs)


def assert_clean(text: str) -> None:
    for raw in RAW:
        assert raw not in text, f"{raw!r} reached the terminal"


# --- the helper -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain text, ünïcode, 日本語", "plain text, ünïcode, 日本語"),
        (f"a{TITLE_ATTACK}b", "a\\x1b]0;pwned\\x07b"),
        (f"{COLOUR}red", "\\x1b[31mred"),
        ("two\nlines\tand a tab\r", "two\\nlines\\tand a tab\\r"),
        ("nul\x00 del\x7f csi\x9b", "nul\\x00 del\\x7f csi\\x9b"),
        ("exe.\u202etxt", "exe.\\u202etxt"),
        ("isolate\u2066x\u2069 mark\u200f", "isolate\\u2066x\\u2069 mark\\u200f"),
        ("line\u2028separator", "line\\u2028separator"),
        ("bad\udcff.md", "bad\\xff.md"),
    ],
)
def test_printable_escapes_controls_bidi_and_undecodable_bytes(text, shown):
    assert printable(text) == shown


def test_printable_multiline_keeps_line_ends_and_tabs_only():
    text = f"# Title\r\n\tindented\nbare\rreturn {COLOUR}x\n"
    assert printable(text, multiline=True) == ("# Title\r\n\tindented\nbare\\rreturn \\x1b[31mx\n")


# --- every command's human output -------------------------------------------------------------


@pytest.fixture
def hostile(make_store):  # type: ignore[no-untyped-def]
    """A lexical store whose titles, bodies and file names carry terminal escapes."""
    store = make_store(
        {
            ".memsift/config.toml": '[embedder]\nmodel = "none"\n',
            "facts/deploy.md": (
                '---\ntitle: "Deploy \\e]0;pwned\\a now"\n---\n'
                f"deploy with {COLOUR}make deploy\x1b[0m and exe.\u202etxt\x9b\n"
            ),
            EVIL_NAME: "# Evil name\n\nzebra crossing\n",
            NEWLINE_NAME: "---\ntitle: [unclosed\n---\nbroken front matter\n",
        }
    )
    assert run(store.root, "index").exit_code == 0
    return store.root


def test_search_escapes_titles_paths_and_snippets(hostile):
    deploy = run(hostile, "search", "deploy")
    zebra = run(hostile, "search", "zebra")
    assert_clean(deploy.stdout + zebra.stdout)
    assert "Deploy \\x1b]0;pwned\\x07 now" in deploy.stdout
    assert "\\x1b[31m" in deploy.stdout and "exe.\\u202etxt\\x9b" in deploy.stdout
    assert "[evil\\x1b]0;pwned\\x07.md]" in zebra.stdout


def test_search_escapes_its_stderr_notes_and_sql_values(hostile):
    result = run(hostile, "search", "deploy", "--tag", f"{TITLE_ATTACK}\u202e", "--sql")
    assert result.exit_code == 1
    assert_clean(result.stdout + result.stderr)
    assert "\\x1b]0;pwned\\x07\\u202e" in result.stderr  # the empty-scope note quotes the tag
    [values] = [line for line in result.stdout.splitlines() if line.startswith("-- values: ")]
    # The tags are bound as one JSON array: its escapes, the outer JSON's, then ours.
    assert values.endswith(r'"[\"\\u001b]0;pwned\\u0007\u202e\"]"]')


def test_search_json_keeps_the_exact_text(hostile):
    data = json.loads(run(hostile, "search", "deploy", "--json").stdout)
    assert data["hits"][0]["title"] == f"Deploy {TITLE_ATTACK} now"
    zebra = json.loads(run(hostile, "search", "zebra", "--json").stdout)
    assert zebra["hits"][0]["path"] == EVIL_NAME


def test_read_escapes_the_body_but_keeps_its_lines(hostile):
    result = run(hostile, "read", "facts/deploy.md")
    assert_clean(result.stdout)
    assert result.stdout.splitlines()[1] == 'title: "Deploy \\e]0;pwned\\a now"'
    assert "\\x1b[31mmake deploy\\x1b[0m and exe.\\u202etxt\\x9b" in result.stdout
    text = json.loads(run(hostile, "read", "facts/deploy.md", "--json").stdout)["text"]
    assert COLOUR in text


def test_reinforce_escapes_the_path_it_echoes(hostile):
    result = run(hostile, "reinforce", EVIL_NAME, "--outcome", "1")
    assert result.exit_code == 0
    assert result.stdout == "evil\\x1b]0;pwned\\x07.md: outcome score +0.300\n"


def test_index_escapes_skipped_paths_and_reasons(hostile):
    (hostile / NEWLINE_NAME).write_text(f"---\ntitle: [{COLOUR}\n---\nx\n", encoding="utf-8")
    result = run(hostile, "index")
    assert_clean(result.stdout)
    [skipped] = [line for line in result.stdout.splitlines() if line.startswith("  skipped ")]
    assert skipped.startswith("  skipped line\\nbreak.md: ")


def test_status_escapes_its_values(make_store):
    store = make_store({".memsift/config.toml": '[embedder]\nmodel = "none"\n', "a.md": "# A"})
    root = store.root.rename(store.root.with_name(f"store{TITLE_ATTACK}"))
    assert run(root, "index").exit_code == 0
    result = run(root, "status")
    assert_clean(result.stdout)
    assert "store\\x1b]0;pwned\\x07" in result.stdout


def test_state_prune_escapes_the_paths_it_lists(hostile):
    assert run(hostile, "read", EVIL_NAME).exit_code == 0
    (hostile / EVIL_NAME).unlink()
    result = run(hostile, "state", "prune", "--dry-run")
    assert result.stdout.startswith("would remove evil\\x1b]0;pwned\\x07.md\n")


def test_errors_escape_the_names_they_quote(hostile):
    result = run(hostile, "read", f"missing{TITLE_ATTACK}.md")
    assert result.exit_code == 2
    assert_clean(result.stderr)
    assert result.stderr.startswith("memsift: 'missing\\x1b]0;pwned\\x07.md': ")


def test_eval_escapes_set_names_categories_and_skip_reasons(tmp_path, monkeypatch):
    import engine.measure.evaluate

    figures = {"queries": 1, "ndcg@10": 1.0, "mrr@10": 1.0, "recall@5": 1.0, "recall@10": 1.0}
    report = {
        "sets": [f"set{TITLE_ATTACK}"],
        "variant": "fused",
        "overall": figures,
        "by_category": {f"cat{COLOUR}": figures},
        "skipped": {f"set{TITLE_ATTACK}": [{"id": "d\n1", "reason": f"bad {COLOUR}"}]},
    }
    monkeypatch.setattr(engine.measure.evaluate, "evaluate", lambda *a, **k: report)
    result = CliRunner().invoke(cli, ["eval", str(tmp_path)], catch_exceptions=False)
    assert result.exit_code == 0
    assert_clean(result.stdout + result.stderr)
    assert "set\\x1b]0;pwned\\x07" in result.stdout and "cat\\x1b[31m" in result.stdout
    assert "d\\n1: bad \\x1b[31m" in result.stderr
