"""The generated pages' tables written as HTML by the plugin: the same HTML Python-Markdown
makes of them, character for character, and Markdown's own rendering wherever that cannot be
promised."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import markdown
import pytest
from arms_doc_testing import ENGINE_REGISTRY, FIXTURES, REPO, Site

from arms_doc.pages import Sources, render_pages
from arms_doc.ready import (
    CodeStyle,
    code_style,
    inline_html,
    known_extensions,
    put_back,
    set_aside,
    sql_tokens,
    table_html,
)

#: MkDocs' own Markdown extensions, and this project's site's (Material's usual set).
DEFAULTS = ["toc", "tables", "fenced_code"]
PROJECT = [
    *DEFAULTS,
    "admonition",
    "attr_list",
    "def_list",
    "md_in_html",
    "pymdownx.details",
    "pymdownx.highlight",
    "pymdownx.inlinehilite",
    "pymdownx.superfences",
    "pymdownx.tabbed",
]
CONFIGS = {
    "pymdownx.tabbed": {"alternate_style": True},
    "toc": {"permalink": True},
    "pymdownx.highlight": {"anchor_linenums": True},
}


def configs(extensions: list[str]) -> dict[str, dict[str, object]]:
    return {name: CONFIGS[name] for name in extensions if name in CONFIGS}


def rendered(text: str, extensions: list[str]) -> str:
    return markdown.Markdown(extensions=extensions, extension_configs=configs(extensions)).convert(
        text
    )


def blocks(text: str) -> int:
    """How many blocks the Markdown holds to set aside: its tables and its fences."""
    return rules(text) + len(re.findall(r"^ *```sql$", text, flags=re.MULTILINE))


def rules(text: str) -> int:
    """How many tables the Markdown holds: their rule lines."""
    return len(re.findall(r"^ *\| --- \|", text, flags=re.MULTILINE))


def the_projects_pages(tabs: bool) -> list[str]:
    pages = render_pages(
        Sources(
            root=REPO,
            registry=ENGINE_REGISTRY,
            results=REPO / "benchmarks" / "results",
            tabs=tabs,
        ).check()
    )
    assert pages.measured is not None
    return [pages.arms, pages.measured]


def both_pages_site(tmp_path: Path, results: list[str], hook: str | None = None) -> Site:
    """A default-theme site with both pages, these results files, and a hook (its source)."""
    site = Site(tmp_path / "project")
    for name in results:
        site.write_result(name)
    hooks = ""
    if hook is not None:
        (site.root / "hook.py").write_text(hook, encoding="utf-8")
        hooks = "hooks:\n  - hook.py\n"
    site.configure(
        "site_name: t\ntheme: mkdocs\n"
        + hooks
        + "plugins:\n  - arms-doc\n"
        + "nav:\n  - Ranking arms: reference/rrf-arms.md\n  - Measured: reference/measured.md\n"
    )
    return site


def the_fixtures_pages(tmp_path: Path) -> list[str]:
    site = both_pages_site(tmp_path, [fixture.name for fixture in sorted(FIXTURES.glob("*.json"))])
    config = site.build()
    return [site.markdown(config), site.measured_markdown(config)]


#: pymdownx.highlight without line anchors: its defaults.
PYMDOWNX_DEFAULTS = [*DEFAULTS, "pymdownx.superfences", "pymdownx.tabbed"]


@pytest.mark.parametrize(
    ("extensions", "tabs"),
    [
        (DEFAULTS, False),
        (PROJECT, False),
        (PROJECT, True),
        (PYMDOWNX_DEFAULTS, False),
        (PYMDOWNX_DEFAULTS, True),
    ],
    ids=["defaults", "project", "project-tabs", "pymdownx-defaults", "pymdownx-defaults-tabs"],
)
def test_the_projects_pages_are_the_same_html_with_every_table_and_fence_set_aside(
    extensions: list[str], tabs: bool
):
    code = code_style(extensions, configs(extensions))
    assert code is not None
    for page in the_projects_pages(tabs):
        aside = set_aside(page, code)

        assert len(aside.blocks) == blocks(page) > 0
        assert put_back(rendered(aside.markdown, extensions), aside.blocks) == rendered(
            page, extensions
        )


def test_pages_made_from_every_fixture_are_the_same_html_with_every_table_set_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    for page in the_fixtures_pages(tmp_path):
        aside = set_aside(page, code_style(PROJECT, configs(PROJECT)))

        assert len(aside.blocks) == blocks(page) > 0
        assert put_back(rendered(aside.markdown, PROJECT), aside.blocks) == rendered(page, PROJECT)


def test_a_table_in_a_content_tab_keeps_the_tabs_indent():
    page = '=== "One"\n\n    | A |\n    | --- |\n    | `x` |\n\nAfter.\n'
    aside = set_aside(page)

    assert put_back(rendered(aside.markdown, PROJECT), aside.blocks) == rendered(page, PROJECT)


@pytest.mark.parametrize(
    "cell",
    [
        "![a picture](x.png)",
        "[another page](other.md)",
        "<b>raw</b>",
        "a _stressed_ word",
        "two * stars * here",
        "`#!python print()`",
        "{: .note }",
        "&#65 and &#x42 without their semicolons",  # Markdown completes them: "&#65;"
        "`&#65`",
        "*a**b*",  # one emphasis to Markdown, not two
    ],
)
def test_a_cell_with_more_than_the_pages_write_leaves_its_table_to_markdown(cell: str):
    assert inline_html(cell) is None
    assert table_html(["| A |", "| --- |", f"| {cell} |"]) is None
    assert set_aside(f"| A |\n| --- |\n| {cell} |\n").blocks == {}


@pytest.mark.parametrize(
    "cell",
    [
        "`a \\| b` and a \\| c",
        "w/(k+1) * ((k+1)/(k+r))^p",
        "do_not_answer &lt;= 5 & x > 3",
        "**0.25** (chosen), *baseline*, [fts](#fts), [site](https://example.org/a?b=1&c=2)",
        "`` a`b ``",
    ],
)
def test_a_cell_the_pages_write_is_rendered_as_markdown_renders_it(cell: str):
    table = f"| A |\n| --- |\n| {cell} |"

    assert table_html(table.split("\n")) == rendered(table, DEFAULTS)


def test_a_head_of_more_cells_than_its_rule_is_no_table_as_to_markdown():
    table = "| A | B |\n| --- |\n| a | b |"

    assert (table_html(table.split("\n")), "<table>" in rendered(table, DEFAULTS)) == (None, False)


def test_a_pipe_after_an_escaped_backslash_parts_the_cells_as_markdown_parts_them():
    # "\\\\|" is a backslash, then a pipe that separates: it was read as an escaped pipe
    table = "| A | B |\n| --- | --- |\n| a \\\\| b |"

    assert table_html(table.split("\n")) == rendered(table, DEFAULTS)


SQL = "SELECT path, {scope} AS s -- a note\nFROM files WHERE a <> 'it''s' AND \"x\" = ?1;\n"


def test_the_tokenizer_cuts_sql_as_pygments_sql_lexer_does():
    from pygments.lexers.sql import SqlLexer
    from pygments.token import STANDARD_TYPES

    expected = [(STANDARD_TYPES[kind], text) for kind, text in SqlLexer().get_tokens(SQL)]

    assert sql_tokens(SQL) == expected


def test_sql_the_tokenizer_does_not_take_is_left_to_the_lexer():
    assert sql_tokens("SELECT /* a comment */ 1\n") is None


@pytest.mark.parametrize(
    "page",
    [
        "```sql\nSELECT 1\n```\n\n```python\nx = 1\n```\n",
        "```sql\nSELECT 1\n```\n\n```sql\nSELECT /* no */ 1\n```\n",
    ],
    ids=["another language", "sql the tokenizer does not take"],
)
def test_a_page_with_a_fence_the_module_cannot_write_keeps_all_its_fences(page: str):
    aside = set_aside(page, CodeStyle(highlight=True, anchors=True))

    assert aside.blocks == {} and aside.markdown == page


@pytest.mark.parametrize(
    "prose",
    [
        "> An example:\n>\n> ```python\n> search(store, 'port')\n> ```\n",
        "> An example:\n>\n>     search(store, 'port')\n",
        "~~~python\nx = 1\n~~~\n",
    ],
    ids=["a fence in an arm's prose", "indented code in an arm's prose", "a tilde fence"],
)
def test_a_page_with_code_the_module_does_not_find_gets_the_same_html(prose: str):
    # a highlighter numbers every block of a page: SQL blocks numbered without the prose's
    # repeated its line anchors' ids (two "__codelineno-0-1" on the arms page)
    page = f"# Arm\n\n{prose}\n```sql\nSELECT 1\n```\n"
    aside = set_aside(page, code_style(PROJECT, configs(PROJECT)))

    assert put_back(rendered(aside.markdown, PROJECT), aside.blocks) == rendered(page, PROJECT)


@pytest.mark.parametrize("extensions", [DEFAULTS, PROJECT], ids=["fenced_code", "project"])
@pytest.mark.parametrize(
    "sql",
    ["SELECT a,\tb\nFROM t", "SELECT a\n    \nFROM t", "SELECT a\x02\nFROM t"],
    ids=["a tab", "a line of spaces", "a control character Markdown drops"],
)
def test_sql_is_written_from_the_page_as_markdown_reads_it(extensions: list[str], sql: str):
    # Markdown expands tabs, empties lines of spaces and drops STX/ETX before anything else:
    # a registry's SQL indented with tabs showed them in the plugin's HTML
    page = f"# Arm\n\n```sql\n{sql}\n```\n\n| A |\n| --- |\n| a\tb |\n"
    aside = set_aside(page, code_style(extensions, configs(extensions)))

    assert len(aside.blocks) == 2
    assert put_back(rendered(aside.markdown, extensions), aside.blocks) == rendered(
        page, extensions
    )


@pytest.mark.parametrize(
    ("extensions", "options", "style"),
    [
        (DEFAULTS, {}, CodeStyle(highlight=False)),
        (PROJECT, CONFIGS, CodeStyle(highlight=True, anchors=True)),
        (PYMDOWNX_DEFAULTS, {}, CodeStyle(highlight=True)),
        ([*DEFAULTS, "codehilite"], {}, None),
        (PROJECT, {"pymdownx.highlight": {"pygments_lang_class": True}}, None),
        (
            PROJECT,
            {"pymdownx.superfences": {"custom_fences": [{"name": "sql", "class": "x"}]}},
            None,
        ),
        ([*DEFAULTS, "pymdownx.highlight"], {}, None),
    ],
    ids=[
        "fenced_code",
        "anchors",
        "pymdownx",
        "codehilite",
        "an option it does not write",
        "a custom sql fence",
        "highlight without superfences",
    ],
)
def test_the_code_style_follows_the_sites_highlighter(
    extensions: list[str], options: dict[str, dict[str, object]], style: CodeStyle | None
):
    assert code_style(extensions, options) == style


def test_a_row_with_another_count_of_cells_leaves_its_table_to_markdown():
    assert table_html(["| A | B |", "| --- | --- |", "| 1 |"]) is None


def test_only_a_site_whose_markdown_extensions_are_all_known_has_its_tables_set_aside():
    assert known_extensions([*PROJECT, "markdown.extensions.toc", "mkdocs-click"])
    assert not known_extensions([*DEFAULTS, "smarty"])
    assert not known_extensions([*DEFAULTS, "pymdownx.magiclink"])
    assert not known_extensions([*DEFAULTS, markdown.extensions.Extension()])


HOOK = """\
from mkdocs.plugins import event_priority


@event_priority(-200)  # after the plugin set the tables aside
def on_page_markdown(markdown, page, config, files):
    return markdown.replace("armsdocready", "ArmsDocReady")
"""


def test_a_placeholder_something_changed_gets_the_page_rendered_by_markdown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    site = both_pages_site(tmp_path, ["quality.json"], HOOK)

    with caplog.at_level(logging.INFO, logger="mkdocs.plugins.arms-doc"):
        config = site.build()

    html = site.page_html("reference/measured")
    assert "ArmsDocReady" not in html and "armsdocready" not in html
    assert html.count("<table>") == rules(site.measured_markdown(config)) > 0
    assert "the page is rendered again, its tables and code by Markdown" in caplog.text


SPY = """\
from mkdocs.plugins import event_priority

SEEN = {}


@event_priority(-200)  # what Markdown is handed, after the plugin
def on_page_markdown(markdown, page, config, files):
    SEEN[page.file.src_uri] = markdown
"""


def test_markdown_is_handed_the_generated_pages_without_their_tables_and_sql(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    site = both_pages_site(tmp_path, ["quality.json"], SPY)

    config = site.build()

    seen = config.hooks["hook.py"].SEEN
    for page in ("reference/rrf-arms.md", "reference/measured.md"):
        assert blocks(seen[page]) == 0 and "armsdocready" in seen[page]
    assert site.page_html("reference/measured").count("<table>") == rules(
        site.measured_markdown(config)
    )
