"""Material's search plugin reads the generated pages without the highlighter's markup in their
code blocks: its index is the same, and the page a reader gets is still highlighted."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from arms_doc_testing import Site

from arms_doc import plugin
from arms_doc.search_view import plain_code

MATERIAL_SITE = """\
site_name: arms-doc test site
theme:
  name: material
plugins:
  - search
  - arms-doc
markdown_extensions:
  - pymdownx.highlight:
      anchor_linenums: true
  - pymdownx.superfences
nav:
  - Home: index.md
  - Ranking arms: reference/rrf-arms.md
"""

HIGHLIGHTED = (
    '<p>A <span class="x">span</span> outside</p>\n'
    '<div class="highlight"><pre><span></span><code>'
    '<a id="__codelineno-0-1" name="__codelineno-0-1" href="#__codelineno-0-1"></a>'
    '<span class="k">SELECT</span><span class="w"> </span><span class="n">path</span>'
    '<span class="w">\n</span><a id="__codelineno-0-2" href="#__codelineno-0-2"></a>'
    '<span class="k">FROM</span><span class="w"> </span><span class="n">files</span> &amp; x'
    "</code></pre></div>"
)


def test_plain_code_keeps_a_code_blocks_text_and_drops_its_spans_and_line_anchors():
    assert plain_code(HIGHLIGHTED) == (
        '<p>A <span class="x">span</span> outside</p>\n'
        '<div class="highlight"><pre><code>SELECT path\nFROM files &amp; x</code></pre></div>'
    )


def test_plain_code_keeps_a_tables_cells_apart_by_a_line_break_and_drops_its_tags():
    table = (
        "<p>Before</p>\n<table>\n<thead>\n<tr>\n<th>Arm</th>\n<th>Weight</th>\n</tr>\n</thead>\n"
        "<tbody>\n<tr>\n<td><code>fts</code></td>\n<td></td>\n</tr>\n</tbody>\n</table>\n<p>After</p>"
    )

    assert plain_code(table) == "<p>Before</p>\nArm\nWeight\n<code>fts</code>\n<p>After</p>"


def test_plain_code_leaves_a_page_without_code_blocks_as_it_is():
    html = '<p><span class="x">text</span> <a href="#a"></a></p>'

    assert plain_code(html) == html


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Site:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    built = Site(tmp_path / "project")
    built.configure(MATERIAL_SITE)
    return built


def built(site: Site) -> tuple[str, str]:
    """The site's search index and the arms page's HTML."""
    site.build()
    index = (site.root / "site" / "search" / "search_index.json").read_text(encoding="utf-8")
    return index, site.page_html()


def read_by_search(monkeypatch: pytest.MonkeyPatch, page_path: str) -> list[str]:
    """The HTML Material's search plugin is handed for the page at ``page_path``, build by
    build."""
    from material.plugins.search.plugin import SearchIndex

    seen: list[str] = []
    add_entry = SearchIndex.add_entry_from_context

    def reading(self: SearchIndex, page):  # type: ignore[no-untyped-def]
        if page.file.src_uri == page_path:
            seen.append(page.content)
        return add_entry(self, page)

    monkeypatch.setattr(SearchIndex, "add_entry_from_context", reading)
    return seen


def test_the_search_index_and_the_page_are_the_same_as_without_the_plain_view(
    site: Site, monkeypatch: pytest.MonkeyPatch
):
    seen = read_by_search(monkeypatch, "reference/rrf-arms.md")
    plain_index, plain_page = built(site)
    monkeypatch.setattr(plugin, "indexes_the_same", lambda plugins: False)
    highlighted_index, highlighted_page = built(site)

    assert plain_index == highlighted_index
    assert plain_page == highlighted_page
    assert '<span class="k">SELECT</span>' in plain_page
    # The search plugin read the plain page first, the highlighted one second.
    assert len(seen) == 2
    assert not re.search(r"<pre[^>]*>(?:(?!</pre>).)*<span", seen[0], re.DOTALL)
    assert '<span class="k">SELECT</span>' in seen[1]


def test_the_measured_pages_index_is_the_same_without_its_tables_tags(
    site: Site, monkeypatch: pytest.MonkeyPatch
):
    site.write_result("quality.json")
    site.write_result("latency.json")
    site.configure(MATERIAL_SITE + "  - Measured: reference/measured.md\n")
    seen = read_by_search(monkeypatch, "reference/measured.md")
    plain_index, _ = built(site)
    monkeypatch.setattr(plugin, "indexes_the_same", lambda plugins: False)
    tagged_index, _ = built(site)

    assert plain_index == tagged_index
    assert "<td>" not in seen[0] and "<td>" in seen[1]
    assert "<td>" in site.page_html("reference/measured")


def test_mkdocs_own_search_reads_the_page_as_it_is(site: Site, monkeypatch: pytest.MonkeyPatch):
    site.configure(MATERIAL_SITE.replace("name: material", "name: mkdocs"))
    swaps: list[str] = []
    monkeypatch.setattr(plugin, "plain_code", lambda html: swaps.append(html) or html)

    site.build()

    assert swaps == []
