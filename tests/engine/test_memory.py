"""Parsing one memory file: bytes and a path in, a Memory (or a Skip with its reason) out."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine.files.memory import MAX_FRONT_MATTER_BYTES, Memory, Skip, parse_memory


def parse(text: str, path: str = "notes/note.md") -> Memory:
    return parse_memory(path, textwrap.dedent(text).lstrip("\n").encode("utf-8"))


def skip_reason(text: str | bytes, path: str = "notes/note.md") -> str:
    data = text if isinstance(text, bytes) else textwrap.dedent(text).lstrip("\n").encode()
    with pytest.raises(Skip) as caught:
        parse_memory(path, data)
    assert caught.value.reason, "a skip must say why"
    return caught.value.reason


# --- Markdown front matter -------------------------------------------------------------------


def test_front_matter_fields_are_read():
    memory = parse(
        """
        ---
        title: Staging database credentials rotate monthly
        kind: semantic
        event_at: 2026-10-03
        tags: [infra, staging]
        archived: false
        ---
        The staging password changes on the first of each month.
        """
    )
    assert memory == Memory(
        title="Staging database credentials rotate monthly",
        kind="semantic",
        event_at="2026-10-03 00:00:00",
        tags=("infra", "staging"),
        archived=False,
        body="The staging password changes on the first of each month.",
    )


def test_file_without_front_matter_is_all_body():
    memory = parse("Just a note.\n\nWith two paragraphs.\n")
    assert (memory.body, memory.kind, memory.event_at, memory.tags, memory.archived) == (
        "Just a note.\n\nWith two paragraphs.",
        None,
        None,
        (),
        False,
    )


def test_front_matter_may_close_with_three_dots():
    memory = parse(
        """
        ---
        kind: procedure
        ...
        Body.
        """
    )
    assert (memory.kind, memory.body) == ("procedure", "Body.")


@pytest.mark.parametrize("blank", [" ", "  ", "\t", " \t"])
def test_front_matter_fences_may_end_in_spaces_or_tabs(blank):
    # An editor leaves trailing blanks on the fence lines; MkDocs and python-frontmatter read
    # such a fence as one, and a user expects the same here, not the fields in the body.
    memory = parse(f"---{blank}\ntitle: T\nkind: semantic\n---{blank}\nBody.\n")
    assert (memory.title, memory.kind, memory.body) == ("T", "semantic", "Body.")


def test_empty_front_matter_is_allowed():
    memory = parse(
        """
        ---
        ---
        Body only.
        """
    )
    assert (memory.title, memory.body) == ("note", "Body only.")


def test_unknown_fields_are_ignored():
    memory = parse(
        """
        ---
        title: T
        source: chat
        ---
        Body.
        """
    )
    assert memory.title == "T"


def test_horizontal_rule_later_in_body_is_not_front_matter():
    memory = parse(
        """
        Intro.

        ---

        After the rule.
        """
    )
    assert memory.body == "Intro.\n\n---\n\nAfter the rule."


# --- title ---------------------------------------------------------------------------------


def test_title_falls_back_to_first_heading():
    memory = parse(
        """
        ---
        kind: semantic
        ---
        Some preamble.

        ## Deploy checklist ##

        # Later heading
        """
    )
    assert memory.title == "Deploy checklist"


def test_title_falls_back_to_file_stem_without_heading():
    memory = parse("No heading here.", path="people/ana.lopez.md")
    assert memory.title == "ana.lopez"


def test_blank_title_falls_back_to_heading():
    memory = parse(
        """
        ---
        title: "   "
        ---
        # Real title
        """
    )
    assert memory.title == "Real title"


def test_title_whitespace_is_collapsed():
    memory = parse(
        """
        ---
        title: "  Two   spaced\\twords  "
        ---
        """
    )
    assert memory.title == "Two spaced words"


def test_numeric_title_becomes_text():
    memory = parse(
        """
        ---
        title: 2026
        ---
        """
    )
    assert memory.title == "2026"


def test_title_is_capped_at_500_characters():
    memory = parse(f"---\ntitle: {'x' * 600}\n---\n")
    assert memory.title == "x" * 500


# --- kind ----------------------------------------------------------------------------------


def test_kind_is_lower_cased_and_stripped():
    memory = parse(
        """
        ---
        kind: "  Episodic "
        ---
        """
    )
    assert memory.kind == "episodic"


def test_blank_kind_is_none():
    memory = parse(
        """
        ---
        kind: ""
        ---
        """
    )
    assert memory.kind is None


# --- event_at ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-10-03", "2026-10-03 00:00:00"),
        ("'2026-10-03'", "2026-10-03 00:00:00"),
        ("2026-10-03 14:20:05", "2026-10-03 14:20:05"),
        ("2026-10-03T14:20:05", "2026-10-03 14:20:05"),
        ("2026-10-03T14:20:05Z", "2026-10-03 14:20:05"),
        ("'2026-10-03T14:20:05Z'", "2026-10-03 14:20:05"),
        ("2026-10-03T14:20:05+02:00", "2026-10-03 12:20:05"),
        ("'2026-10-03T14:20:05+02:00'", "2026-10-03 12:20:05"),
        ("2026-10-03T14:20:05.250-05:30", "2026-10-03 19:50:05"),
    ],
    ids=lambda v: v,
)
def test_event_at_is_normalised_to_utc_text(value, expected):
    memory = parse(f"---\nevent_at: {value}\n---\n")
    assert memory.event_at == expected


def test_event_at_offset_can_move_the_day():
    memory = parse("---\nevent_at: 2026-10-03T01:00:00+03:00\n---\n")
    assert memory.event_at == "2026-10-02 22:00:00"


def test_empty_event_at_is_none():
    memory = parse("---\nevent_at:\n---\n")
    assert memory.event_at is None


# --- tags ----------------------------------------------------------------------------------


def test_tags_as_a_list():
    memory = parse("---\ntags: [infra, staging]\n---\n")
    assert memory.tags == ("infra", "staging")


def test_tags_as_a_comma_separated_string():
    memory = parse("---\ntags: infra, staging ,db\n---\n")
    assert memory.tags == ("infra", "staging", "db")


def test_tags_are_lower_cased_and_deduplicated_in_order():
    memory = parse("---\ntags: [Infra, staging, INFRA, '', Staging]\n---\n")
    assert memory.tags == ("infra", "staging")


def test_numeric_tags_become_text():
    memory = parse("---\ntags: [2026, q4]\n---\n")
    assert memory.tags == ("2026", "q4")


# --- archived ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("yes", True),
        ("no", False),
        ("true", True),
        ("false", False),
        ("True", True),
        ("'yes'", True),
        ("'NO'", False),
        ("1", True),
        ("0", False),
    ],
)
def test_archived_accepts_yes_no_true_false(value, expected):
    memory = parse(f"---\narchived: {value}\n---\n")
    assert memory.archived is expected


def test_archived_defaults_to_false():
    assert parse("---\ntitle: T\n---\n").archived is False


# --- malformed front matter ----------------------------------------------------------------


def test_unclosed_front_matter_is_skipped():
    reason = skip_reason("---\ntitle: T\nkind: semantic\n\nBody without a closing line.\n")
    assert "never closed" in reason
    assert "line 1" in reason


def test_unclosed_front_matter_opened_with_trailing_blanks_is_skipped():
    reason = skip_reason("--- \ntitle: T\n\nBody without a closing line.\n")
    assert "never closed" in reason


def test_invalid_yaml_is_skipped_naming_the_line():
    reason = skip_reason("---\ntitle: ok\nkind: a: b\n---\nBody.\n")
    assert "not valid YAML" in reason
    assert "line 3" in reason


def test_unclosed_yaml_bracket_is_skipped():
    reason = skip_reason("---\ntags: [a, b\n---\nBody.\n")
    assert "not valid YAML" in reason


@pytest.mark.parametrize(
    ("front", "got"),
    [("- a\n- b", "list"), ("just text", "str"), ("42", "int")],
)
def test_front_matter_that_is_not_a_mapping_is_skipped(front, got):
    reason = skip_reason(f"---\n{front}\n---\nBody.\n")
    assert "must be a mapping" in reason
    assert got in reason


def test_python_yaml_tag_is_refused_without_running_it(tmp_path: Path):
    marker = tmp_path / "pwned"
    reason = skip_reason(
        f'---\ntitle: !!python/object/apply:os.system ["touch {marker}"]\n---\nBody.\n'
    )
    assert "line 2" in reason
    assert "python/object" in reason
    assert not marker.exists()


def test_python_object_tag_is_refused():
    reason = skip_reason("---\nkind: semantic\nx: !!python/object:os.system {}\n---\n")
    assert "line 3" in reason


BILLION_LAUGHS = """\
---
a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
{field}: *i
---
Body.
"""


BOMB_FIELDS = ("title", "kind", "event_at", "tags", "archived", "other")

BOUNDED_PARSE = """
import json, resource, sys, time
from engine.files.memory import Skip, parse_memory
outcomes = {}
for field, text in json.load(sys.stdin).items():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.process_time()  # CPU time: a loaded machine's waits are not the parser's
    try:
        outcome = {"body": parse_memory("bomb.md", text.encode()).body}
    except Skip as skip:
        outcome = {"skip": skip.reason}
    outcome["seconds"] = time.process_time() - started
    outcome["grew_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    outcomes[field] = outcome
print(json.dumps(outcomes))
"""


@pytest.fixture(scope="module")
def bomb_outcomes() -> dict[str, dict[str, object]]:
    """Parse the bomb under every field in a child process killed after 30 s, so a bomb that
    goes off fails these tests instead of taking the machine down."""
    bombs = {field: BILLION_LAUGHS.format(field=field) for field in BOMB_FIELDS}
    try:
        child = subprocess.run(
            [sys.executable, "-c", BOUNDED_PARSE],
            input=json.dumps(bombs).encode(),
            capture_output=True,
            timeout=30,
            check=True,
        )
    except subprocess.TimeoutExpired:
        return {field: {"seconds": 30.0, "grew_kb": math.inf} for field in BOMB_FIELDS}
    return json.loads(child.stdout)


@pytest.mark.parametrize("field", BOMB_FIELDS)
def test_anchor_bomb_parses_in_under_two_seconds(bomb_outcomes, field):
    assert bomb_outcomes[field]["seconds"] < 2.0


@pytest.mark.parametrize("field", BOMB_FIELDS)
def test_anchor_bomb_parses_in_under_50_mb(bomb_outcomes, field):
    assert bomb_outcomes[field]["grew_kb"] < 50_000


@pytest.mark.parametrize("field", BOMB_FIELDS[:-1])
def test_anchor_bomb_in_a_known_field_is_skipped_naming_it(bomb_outcomes, field):
    assert str(bomb_outcomes[field].get("skip")).startswith(f"{field} (line 11)")


def test_anchor_bomb_in_an_unknown_field_parses_safely(bomb_outcomes):
    assert bomb_outcomes["other"] == {**bomb_outcomes["other"], "body": "Body."}


def test_deeply_nested_front_matter_is_skipped():
    reason = skip_reason("---\nx: " + "[" * 20_000 + "]" * 20_000 + "\n---\n")
    assert "front matter" in reason


def test_oversized_front_matter_is_skipped():
    filler = "".join(f"k{i}: {'v' * 60}\n" for i in range(MAX_FRONT_MATTER_BYTES // 60))
    reason = skip_reason(f"---\n{filler}---\nBody.\n")
    assert "KiB" in reason


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("title: {a: 1}", "title (line 3) must be text, got a dict"),
        ("kind: [semantic]", "kind (line 3) must be text, got a list"),
        ("event_at: 2026", "event_at (line 3) must be a date, got a int"),
        ("event_at: [2026-10-03]", "event_at (line 3) must be a date, got a list"),
        ("tags: {a: 1}", "tags (line 3) must be a list or comma-separated text"),
        ("tags: 7", "tags (line 3) must be a list or comma-separated text"),
        ("tags: [[a]]", "tags (line 3) must hold text, got a list"),
        ("tags: [true]", "tags (line 3) must hold text, got a bool"),
        ("archived: maybe", "archived (line 3) must be true or false, got 'maybe'"),
        ("archived: 2", "archived (line 3) must be true or false, got 2"),
        ("archived: [yes]", "archived (line 3) must be true or false, got a list"),
    ],
)
def test_wrong_field_type_is_skipped_naming_field_and_line(line, expected):
    reason = skip_reason(f"---\ntitle_note: fine\n{line}\n---\nBody.\n")
    assert reason == expected


def test_impossible_yaml_date_is_skipped_naming_the_line():
    reason = skip_reason("---\ntitle: T\nevent_at: 2026-13-45\n---\nBody.\n")
    assert "line 3" in reason
    assert "2026-13-45" in reason


def test_impossible_quoted_date_is_skipped_naming_the_field():
    reason = skip_reason("---\ntitle: T\nevent_at: '2026-02-30'\n---\nBody.\n")
    assert reason.startswith("event_at (line 3) '2026-02-30' is not an ISO 8601 date")


def test_text_event_at_is_skipped_with_an_example_of_the_format():
    reason = skip_reason("---\nevent_at: last tuesday\n---\n")
    assert "write it like 2026-10-03" in reason


@pytest.mark.parametrize(
    "value", ["0001-01-01T00:00:00+01:00", "'0001-01-01T00:00:00+01:00'", "9999-12-31T23:00-05:00"]
)
def test_event_at_out_of_range_in_utc_is_skipped(value):
    reason = skip_reason(f"---\nevent_at: {value}\n---\n")
    assert reason.startswith("event_at (line 2)")


# --- encodings and bytes -------------------------------------------------------------------


def test_invalid_utf8_is_skipped_naming_the_line():
    reason = skip_reason(b"line one\nline two \xff\xfe here\n")
    assert "not valid UTF-8 at line 2" in reason


def test_latin1_file_is_skipped():
    reason = skip_reason("caf\u00e9 au lait\n".encode("latin-1"))
    assert "UTF-8" in reason


def test_html_page_declaring_latin1_is_read_as_browsers_read_it():
    page = '<html><head><meta charset="iso-8859-1"><title>Caf\u00e9</title></head>'
    page += "<body><p>Cr\u00e8me br\u00fbl\u00e9e \u2013 \u20ac5</p></body></html>"
    memory = parse_memory("menu.html", page.encode("cp1252"))
    assert memory.title == "Caf\u00e9"
    assert memory.body == "Cr\u00e8me br\u00fbl\u00e9e \u2013 \u20ac5"


def test_html_page_declaring_charset_the_http_equiv_way_is_read():
    page = '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">'
    page += "<p>\u041f\u0440\u0438\u0432\u0435\u0442</p>"
    assert (
        parse_memory("hi.htm", page.encode("cp1251")).body == "\u041f\u0440\u0438\u0432\u0435\u0442"
    )


def test_html_page_not_utf8_and_declaring_nothing_is_skipped_saying_so():
    reason = skip_reason("<p>caf\u00e9</p>".encode("latin-1"), path="menu.html")
    assert "no <meta charset>" in reason


def test_html_page_declaring_a_charset_python_does_not_know_is_skipped_naming_it():
    reason = skip_reason(b'<meta charset="klingon-8"><p>caf\xe9</p>', path="menu.html")
    assert "'klingon-8'" in reason


def test_html_page_declaring_utf8_but_not_utf8_is_skipped():
    reason = skip_reason(b'<meta charset="utf-8"><p>caf\xe9</p>', path="menu.html")
    assert "not valid UTF-8" in reason


def test_charset_declared_past_the_first_kilobyte_is_not_read():
    page = b"<!-- " + b"x" * 1100 + b' --><meta charset="latin1"><p>caf\xe9</p>'
    assert "no <meta charset>" in skip_reason(page, path="menu.html")


def test_markdown_file_declaring_a_charset_is_still_utf8_only():
    reason = skip_reason(b'<meta charset="latin1">\ncaf\xe9\n', path="notes/menu.md")
    assert "re-save the file as UTF-8" in reason


def test_nul_byte_is_skipped_as_binary():
    reason = skip_reason(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert "NUL" in reason


def test_nul_byte_far_into_the_file_is_skipped():
    reason = skip_reason(b"text " * 5000 + b"\x00 tail")
    assert "NUL" in reason


def test_byte_order_mark_before_front_matter_is_ignored():
    data = b"\xef\xbb\xbf---\ntitle: With BOM\n---\nBody.\n"
    memory = parse_memory("bom.md", data)
    assert (memory.title, memory.body) == ("With BOM", "Body.")


def test_crlf_line_endings_are_read_like_lf():
    data = b"---\r\ntitle: Windows\r\ntags: [a, b]\r\n---\r\nLine one.\r\n\r\nLine two.\r\n"
    memory = parse_memory("win.md", data)
    assert (memory.title, memory.tags, memory.body) == (
        "Windows",
        ("a", "b"),
        "Line one.\n\nLine two.",
    )


def test_crlf_front_matter_error_still_names_the_line():
    reason = skip_reason(b"---\r\ntitle: T\r\nkind: [x]\r\n---\r\n")
    assert reason == "kind (line 3) must be text, got a list"


# --- HTML ----------------------------------------------------------------------------------


def parse_html(markup: str, path: str = "pages/page.html") -> Memory:
    return parse(markup, path=path)


def test_html_title_element_is_the_title():
    memory = parse_html("<html><head><title> Runbook:  restore </title></head><body>x</body>")
    assert memory.title == "Runbook: restore"


def test_html_title_text_is_not_in_the_body():
    memory = parse_html("<html><head><title>Heading</title></head><body><p>Body</p></body>")
    assert memory.body == "Body"


def test_html_meta_fields_are_read():
    memory = parse_html(
        """
        <html><head>
        <meta name="kind" content="Procedural">
        <meta name="event_at" content="2026-10-03T09:00:00+02:00">
        <meta name="tags" content="Infra, backups">
        <meta name="archived" content="yes">
        <meta name="description" content="not a memory field">
        </head><body><p>Steps.</p></body></html>
        """
    )
    assert (memory.kind, memory.event_at, memory.tags, memory.archived) == (
        "procedural",
        "2026-10-03 07:00:00",
        ("infra", "backups"),
        True,
    )


def test_html_meta_name_is_case_insensitive():
    memory = parse_html('<meta name="KIND" content="semantic"><p>x</p>')
    assert memory.kind == "semantic"


def test_html_script_and_style_text_is_excluded():
    memory = parse_html(
        """
        <html><head><style>body { color: red }</style>
        <script>var secret = "hidden";</script></head>
        <body><p>Visible.</p><script>alert("no")</script><noscript>nojs</noscript></body></html>
        """
    )
    assert memory.body == "Visible."


def test_html_paragraphs_are_separated():
    memory = parse_html("<p>First paragraph.</p><p>Second paragraph.</p><div>Third</div>")
    assert memory.body == "First paragraph.\n\nSecond paragraph.\n\nThird"


def test_html_inline_elements_do_not_split_words():
    memory = parse_html("<p>rot<b>ate</b>s <em>monthly</em></p>")
    assert memory.body == "rotates monthly"


def test_html_entities_are_decoded():
    memory = parse_html("<p>R&amp;D &lt;staging&gt; caf&eacute;</p>")
    assert memory.body == "R&D <staging> café"


def test_html_title_falls_back_to_first_h1():
    memory = parse_html("<body><p>intro</p><h1>Backup  <i>policy</i></h1><h1>Other</h1></body>")
    assert memory.title == "Backup policy"


def test_html_empty_title_element_falls_back_to_heading():
    memory = parse_html("<title> </title><h1>From heading</h1>")
    assert memory.title == "From heading"


def test_html_title_falls_back_to_file_stem():
    memory = parse_html("<p>No title anywhere.</p>", path="pages/db-notes.html")
    assert memory.title == "db-notes"


def test_html_front_matter_wins_over_meta():
    memory = parse_html(
        """
        ---
        kind: semantic
        ---
        <meta name="kind" content="episodic"><title>Page</title><p>x</p>
        """
    )
    assert (memory.kind, memory.title) == ("semantic", "Page")


def test_html_bad_meta_value_is_skipped_naming_the_field():
    reason = skip_reason('<meta name="event_at" content="soon"><p>x</p>', path="p.html")
    assert reason.startswith("event_at")


def test_htm_suffix_is_html_too():
    memory = parse("<title>Old style</title><p>x</p>", path="old.HTM")
    assert (memory.title, memory.body) == ("Old style", "x")


def test_a_date_as_title_is_kept_as_its_text():
    memory = parse_memory("d.md", b"---\ntitle: 2026-10-03\n---\nbody")
    assert memory.title == "2026-10-03"


def test_a_fields_line_is_looked_for_only_when_the_field_is_wrong(monkeypatch):
    """Finding it scans the whole file: a large page would pay for that on every parse."""
    import engine.files.memory

    looked: list[str] = []
    real = engine.files.memory.field_line
    monkeypatch.setattr(
        engine.files.memory,
        "field_line",
        lambda text, name: looked.append(name) or real(text, name),
    )
    good = b"---\ntitle: T\nevent_at: 2026-10-03\ntags: [a]\narchived: false\n---\nBody.\n"
    parse_memory("a.md", good)
    assert looked == []
    with pytest.raises(Skip, match=r"^archived \(line 5\) must be true or false"):
        parse_memory("a.md", good.replace(b"archived: false", b"archived: maybe"))
    assert looked == ["archived"]
