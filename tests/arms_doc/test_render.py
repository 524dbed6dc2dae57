"""Rendering: the arms page written from its context, its filters, and the page made from a
registry file."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest
from arms_doc_testing import SNAPSHOT_REGISTRY

from arms_doc.arms_markdown import render_arms
from arms_doc.page import generate_page
from arms_doc.render import blockquote, fence
from arms_doc.verdicts import cache_folder


def test_blockquote_quotes_every_line_and_keeps_paragraphs_inside():
    assert blockquote("One.\n\nTwo,\nthree.") == "> One.\n>\n> Two,\n> three."


def test_fence_is_three_backticks_with_a_language():
    assert fence("SELECT 1", "sql") == "```sql\nSELECT 1\n```"


def test_fence_outgrows_a_backtick_run_inside_the_text():
    assert fence("a\n````\nb") == "`````\na\n````\nb\n`````"


def test_a_name_missing_from_the_context_is_an_error_not_a_blank():
    with pytest.raises(KeyError):
        render_arms({"registry": {"file": "arms.py", "variable": "ARMS", "line": 1}})


@pytest.fixture
def page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    registry = tmp_path / "arms.py"
    shutil.copyfile(SNAPSHOT_REGISTRY, registry)
    return generate_page(
        registry,
        display="src/engine/arms.py",
        link_template="https://example.org/{commit}/{path}#{start}-{end}",
    ).markdown


def test_table_has_a_column_per_input_of_the_contract(page):
    assert (
        "| Arm | Weight | Needs `query_terms` | Needs `query_vector` | Needs `query_time` |"
        " Needs `state_plane` |" in page
    )


def test_table_prints_weights_as_written(page):
    assert "| [fts](#fts) | 1.0 | yes | no | no | no |" in page
    assert "| [recency](#recency) | 0.5 | no | no | no | no |" in page


def test_each_arm_has_a_heading_and_its_quoted_prose(page):
    assert "### vector\n\n> The semantic arm finds memories that mean what the query means" in page


def test_why_the_arms_are_data_is_the_module_docstring(page):
    assert "## Why the arms are data\n\nThe ranking arms of a memsift search, as data." in page


def test_line_ranges_link_through_the_template_to_head_outside_git(page):
    assert "[lines 51–95](https://example.org/HEAD/src/engine/arms.py#51-95)" in page


def test_a_registry_without_docstring_has_no_why_section(tmp_path: Path):
    text = SNAPSHOT_REGISTRY.read_text(encoding="utf-8").split('"""\n', 1)[1]
    registry = tmp_path / "arms.py"
    registry.write_text(text, encoding="utf-8")

    generated = generate_page(registry, display="arms.py")

    assert "Why the arms are data" not in generated.markdown
    assert [finding.line for finding in generated.findings] == [1]


HOSTILE_NAME = "<img src=x onerror=alert(1)>"


def test_arm_names_and_weights_are_escaped_wherever_the_page_prints_them():
    from arms_doc.measured import buys_context
    from arms_doc.page import page_context
    from arms_doc.reader import read_registry
    from arms_doc.statements import assemble_statements

    registry = read_registry(SNAPSHOT_REGISTRY)
    context = page_context(registry, assemble_statements(registry), None, None)
    context["buys"] = buys_context(None, [arm.name for arm in registry.arms], None)
    context["arms"][0].update(name=HOSTILE_NAME, weight="<b>1.0</b>")
    context["full"]["fired"] = [HOSTILE_NAME]
    context["full"]["dropped"] = {HOSTILE_NAME: "<i>why</i>"}

    page = render_arms(context)

    assert ("<img" in page, "<b>" in page, "<i>" in page) == (False, False, False)
    assert page.count("&lt;img src=x onerror=alert(1)&gt;") == 5
    assert "| &lt;b&gt;1.0&lt;/b&gt; |" in page


def test_prose_is_trusted_markdown_and_keeps_its_html(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    registry = tmp_path / "arms.py"
    text = SNAPSHOT_REGISTRY.read_text(encoding="utf-8")
    registry.write_text(text.replace("The lexical arm", "The <em>lexical</em> arm", 1), "utf-8")

    page = generate_page(registry, display="src/engine/arms.py").markdown

    assert "> The <em>lexical</em> arm" in page


def arm_section(page: str, name: str) -> str:
    start = page.index(f"### {name}\n")
    return page[start : page.index("\n### ", start + 1)]


def in_tab(label: str, body: str) -> str:
    """How a content tab holding ``body`` reads in the page's Markdown."""
    indented = "\n".join(f"    {line}" if line else "" for line in body.splitlines())
    return f'=== "{label}"\n\n{indented}\n'


def test_each_arm_shows_its_sql_in_every_dialect_as_tabs(page):
    from arms_doc.page import fragment
    from arms_doc.reader import read_registry

    for arm in read_registry(SNAPSHOT_REGISTRY).arms:
        section = arm_section(page, arm.name)
        assert in_tab("SQLite", f"```sql\n{fragment(arm.sql)}\n```") in section
        if arm.pg_sql:
            assert in_tab("PostgreSQL", f"```sql\n{fragment(arm.pg_sql)}\n```") in section


def test_an_arm_without_postgresql_sql_says_so_in_its_postgresql_tab(page):
    assert in_tab(
        "PostgreSQL",
        "This arm has no PostgreSQL SQL yet (its entry sets no `pg_sql`), so the engine cannot "
        "assemble a PostgreSQL statement in which it fires.",
    ) in arm_section(page, "vector")


def field_lines(text: str, arm: str, field: str) -> tuple[int, int]:
    """First and last line of the triple-quoted ``field`` of arm ``arm`` in registry ``text``."""
    opening = text.index(f'        {field}="""', text.index(f'name="{arm}"'))
    closing = text.index('""",', opening + len(field) + 12)
    first = text[:opening].count("\n") + 1
    return first, first + text[opening:closing].count("\n")


def test_an_arms_provenance_names_the_lines_of_both_its_fragments(page):
    text = SNAPSHOT_REGISTRY.read_text(encoding="utf-8")
    (a, b), (c, d) = field_lines(text, "fts", "sql"), field_lines(text, "fts", "pg_sql")
    link = "https://example.org/HEAD/src/engine/arms.py#{}-{}"

    assert c == b + 1
    assert (
        f"; its SQLite SQL on [lines {a}–{b}]({link.format(a, b)}); its PostgreSQL SQL on "
        f"[lines {c}–{d}]({link.format(c, d)})." in arm_section(page, "fts")
    )
    assert f"| [{a}–{b}]({link.format(a, b)}) | [{c}–{d}]({link.format(c, d)}) |" in page


def test_an_arm_without_postgresql_sql_has_none_in_the_provenance(page):
    text = SNAPSHOT_REGISTRY.read_text(encoding="utf-8")
    a, b = field_lines(text, "vector", "sql")

    assert f"its SQLite SQL on [lines {a}–{b}]" in arm_section(page, "vector")
    assert "; no PostgreSQL SQL yet." in arm_section(page, "vector")
    assert page.count(" | none |\n") == 2  # vector and salience, in the provenance table


def test_the_assembled_statements_are_shown_in_both_dialects(page):
    floor = page[page.index("### The lexical floor") :]

    assert in_tab("SQLite", "```sql\nWITH\narm_fts AS (") in floor
    assert in_tab("PostgreSQL", "```sql\nWITH\narm_fts AS (") in floor
    assert "CAST(0.5 AS double precision) / (20 + rank)" in floor


def test_a_postgresql_statement_the_assembler_refuses_is_explained_not_shown(page):
    full = page[page.index("### Every input present") : page.index("### The lexical floor")]

    assert (
        in_tab(
            "PostgreSQL",
            "The engine cannot assemble this statement for PostgreSQL: arm 'vector' has no "
            "PostgreSQL SQL (its `pg_sql`).",
        )
        in full
    )


def test_the_page_says_the_postgresql_statements_are_not_prepared_at_build_time(page):
    assert (
        "the PostgreSQL statements are not prepared there, as that needs a running server" in page
    )


def test_without_tabs_each_dialect_has_a_bold_heading_instead(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    registry = tmp_path / "arms.py"
    shutil.copyfile(SNAPSHOT_REGISTRY, registry)

    page = generate_page(registry, display="src/engine/arms.py", tabs=False).markdown

    assert "=== " not in page
    assert "**SQLite**\n\n```sql\nSELECT id, row_number()" in arm_section(page, "fts")
    assert "**PostgreSQL**\n\nThis arm has no PostgreSQL SQL yet" in arm_section(page, "vector")


def test_the_cache_folder_is_a_private_folder_in_the_temporary_directory(temp_folder: Path):
    folder = cache_folder()

    assert folder is not None and folder.parent == temp_folder
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_a_place_that_is_no_private_folder_means_no_cache(temp_folder: Path):
    (temp_folder / f"_jinja2-cache-{os.getuid()}").write_text("not a folder", encoding="utf-8")

    assert cache_folder() is None
