"""The generated pages as the site's search plugin reads them: the same text, without the
syntax highlighter's markup in the code blocks and without the tables' tags.

The arms page holds about a thousand lines of SQL. Highlighted by Pygments (the Material
theme's ``pymdownx.highlight``), that is some 10,000 ``<span>`` tags and a line anchor per line,
and Material's search plugin parses each tag in Python to index the page: about 110 ms of a
build, more than rendering the page's Markdown. Its index keeps a code block's text and drops
every ``span`` and ``a`` tag, so the plugin hands it the page with those tags taken out of the
code blocks, and puts the highlighted page back before the theme renders it: the index is the
same, byte for byte, at a twentieth of the parsing (see
``tests/arms_doc/test_search_view.py``). The Measured page's 260 table rows are some 2,000
tags that the index keeps none of, only their cells' text, parted by the line breaks between
the tags (which it reads as a space): the plugin hands it the cells' text with those line
breaks, which it parses in a seventh of the time, to the same index.

Only for Material's search plugin, whose index joins a block's text pieces as they are; MkDocs'
own search joins them with spaces, so its index would differ (a page built with it is left as
it is). A page holding ``data-search-*`` attributes is left as it is too: Material's plugin
removes those from the page after indexing it, which the page put back would undo.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: The search plugins whose index is the same for a page with and without the markup taken
#: out: their classes' modules.
SAME_INDEX = frozenset({"material.plugins.search.plugin"})
#: What Material's search plugin removes from a page after indexing it.
SEARCH_ATTRIBUTES = "data-search-"

_PRE = re.compile(r"<pre\b[^>]*>.*?</pre>", re.DOTALL)
#: A highlighter's markup inside a code block: its spans (which hold the text, kept) and its
#: empty line anchors.
_MARKUP = re.compile(r"</?span\b[^>]*>|<a\b[^>]*></a>")
#: A run of a table's tags (which the search plugin keeps none of) and the space around them.
_TABLE = re.compile(r"(?:\s*</?(?:table|thead|tbody|tr|th|td)>)+\s*")
_SPACE = re.compile(r"\s")


def plain_code(html: str) -> str:
    """``html`` with the spans and empty anchors taken out of every ``<pre>`` block, and the
    tags of every table taken out (its cells' text kept apart by a line break, as the tags
    kept it)."""
    html = _PRE.sub(lambda block: _MARKUP.sub("", block.group(0)), html)
    return _TABLE.sub(lambda tags: "\n" if _SPACE.search(tags.group(0)) else "", html)


def indexes_the_same(plugins: Iterable[object]) -> bool:
    """Whether a site with these plugins searches a page the same without the markup."""
    return any(type(plugin).__module__ in SAME_INDEX for plugin in plugins)


def can_swap(html: str) -> bool:
    """Whether the search plugin may be handed the plain page: it holds nothing that plugin
    would take out of it."""
    return SEARCH_ATTRIBUTES not in html
