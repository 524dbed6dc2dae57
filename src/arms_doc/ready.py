"""The generated pages' tables as HTML made here, which the site's Markdown never parses.

The Measured page holds some 260 table rows, and Python-Markdown spends about 30 ms of a build
splitting them into cells and running its inline patterns over every cell: more than the
rest of both pages together. The plugin wrote those tables itself, in a small part of Markdown
(code spans, bold, emphasis, links to an anchor or a URL, entities, escaped characters), so
it can write their HTML as Python-Markdown would, for a fraction of the time.

In a build, :func:`set_aside` swaps each table of a generated page for a placeholder paragraph
(a word of letters and digits that no Markdown extension changes) and makes its HTML;
Markdown renders the rest of the page; :func:`put_back` puts each table's HTML where its
placeholder's paragraph is, before any other plugin sees the page. A table with anything
outside that part of Markdown (an image, raw HTML, a link to another page that MkDocs would
rewrite, a cell count that differs from the head's) is left to Markdown, as is every table
of a site with a Markdown extension this module does not know (:func:`known_extensions`): one
could render a cell differently (smart quotes, abbreviations, magic links).
``tests/arms_doc/test_ready.py`` holds every table of both pages against Python-Markdown's
own HTML for it, character for character.

The pages' Markdown is unchanged: ``memsift docs write`` writes it, and the plugin keeps it
for the next build and for tests; only what Markdown is handed in a build differs.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

#: Markdown extensions that render a table cell of this module's kind as Python-Markdown's
#: own tables do (or never touch one): MkDocs' defaults, the Python-Markdown extensions that
#: act on blocks, and the pymdownx ones that act on fences, tabs and details.
#: ``pymdownx.inlinehilite`` reads a code span starting with ``#!`` or ``:::``; such a cell is
#: left to Markdown.
KNOWN_EXTENSIONS = frozenset(
    {
        "toc",
        "tables",
        "fenced_code",
        "codehilite",
        "admonition",
        "attr_list",
        "def_list",
        "md_in_html",
        "meta",
        "sane_lists",
        "footnotes",
        "pymdownx.details",
        "pymdownx.highlight",
        "pymdownx.inlinehilite",
        "pymdownx.superfences",
        "pymdownx.tabbed",
        "pymdownx.snippets",
        "mkdocs-click",
        "mkdocs_click",
    }
)

_PREFIX = "markdown.extensions."
#: A table's rule line: every column ``---`` (no alignment, which would add a style).
_RULE = re.compile(r"\|(?: *-{3,} *\|)+")
#: A pipe that separates cells: not escaped.
_SEPARATOR = re.compile(r"(?<!\\)\|")
#: Python-Markdown's inline pieces this module writes, in the order they are tried.
_INLINE = re.compile(
    r"(?P<code>(?P<ticks>`+)(?P<source>.+?)(?<!`)(?P=ticks)(?!`))"
    r"|(?P<link>\[(?P<label>[^\[\]]+)\]\((?P<href>[^()\s\"'<>]+)\))"
    r"|(?P<strong>\*\*(?P<strong_text>[^*\s](?:[^*]*[^*\s])?)\*\*)"
    r"|(?P<em>\*(?P<em_text>[^*\s](?:[^*]*[^*\s])?)\*)"
    r"|(?P<escape>\\(?P<escaped>[\\`*_{}\[\]()>#+\-.!|]))"
    r"|(?P<entity>&(?:#[0-9]+|#x[0-9a-fA-F]+|[a-zA-Z0-9]+);)"
)
#: Plain text that holds none of these is shown as written.
_MARKUP = re.compile(r"[*`\[\]<\\{}]|(?<!\w)_|_(?!\w)")
#: A link this module writes as it is: to an anchor of the page, or an absolute web address
#: (MkDocs rewrites a link to another page, which HTML made here would skip).
_OWN_LINK = re.compile(r"#[\w.-]*|https?://\S+")


def known_extensions(extensions: Iterable[object]) -> bool:
    """Whether every Markdown extension of a site is one :data:`KNOWN_EXTENSIONS` names (an
    extension given as an instance, not by name, is not)."""
    for extension in extensions:
        if not isinstance(extension, str):
            return False
        name = extension.removeprefix(_PREFIX)
        if name not in KNOWN_EXTENSIONS:
            return False
    return True


@dataclass(frozen=True)
class Block:
    """A table set aside: its Markdown as the page had it, and its HTML."""

    markdown: str
    html: str


@dataclass
class SetAside:
    """A page's Markdown with its tables swapped for placeholders, and the tables by
    placeholder."""

    markdown: str
    blocks: dict[str, Block] = field(default_factory=dict)


def set_aside(markdown: str) -> SetAside:
    """``markdown`` with every table :func:`table_html` can write swapped for a placeholder
    paragraph; the others left as they are."""
    # A word the page does not hold: from the page's own digest, numbered.
    stem = "armsdocready" + hashlib.sha256(markdown.encode("utf-8")).hexdigest()[:12]
    lines = markdown.split("\n")
    out: list[str] = []
    blocks: dict[str, Block] = {}
    i = 0
    while i < len(lines):
        end = table_end(lines, i)
        if end is not None:
            made = table_html([line.strip() for line in lines[i:end]])
            if made is not None:
                token = f"{stem}n{len(blocks)}"
                indent = lines[i][: len(lines[i]) - len(lines[i].lstrip(" "))]
                out.append(indent + token)
                blocks[token] = Block("\n".join(lines[i:end]), made)
                i = end
                continue
            out.extend(lines[i:end])
            i = end
            continue
        out.append(lines[i])
        i += 1
    return SetAside("\n".join(out), blocks)


def table_end(lines: Sequence[str], start: int) -> int | None:
    """The index past the table starting at ``start`` (a head, its rule, rows: one indent,
    a blank line or the page's edge before and after), or None if no table starts there."""
    if start + 1 >= len(lines) or (start > 0 and lines[start - 1].strip()):
        return None
    head = lines[start]
    indent = len(head) - len(head.lstrip(" "))
    if not head.lstrip(" ").startswith("|") or not _RULE.fullmatch(lines[start + 1].strip()):
        return None
    end = start + 2
    while end < len(lines) and lines[end].strip():
        line = lines[end]
        if len(line) - len(line.lstrip(" ")) != indent or not line.lstrip(" ").startswith("|"):
            return None  # something else follows the rows without a blank line: leave it
        end += 1
    return end


def table_html(rows: Sequence[str]) -> str | None:
    """The HTML Python-Markdown's tables extension makes of a table's lines (its head, its
    rule, its rows), or None when a cell holds more than :func:`inline_html` writes."""
    head = cells(rows[0])
    if head is None:
        return None
    body: list[list[str]] = []
    for row in rows[2:]:
        found = cells(row)
        if found is None or len(found) != len(head):
            return None
        body.append(found)
    parts = ["<table>", "<thead>", "<tr>"]
    for text in head:
        made = inline_html(text)
        if made is None:
            return None
        parts.append(f"<th>{made}</th>")
    parts += ["</tr>", "</thead>", "<tbody>"]
    for found in body:
        parts.append("<tr>")
        for text in found:
            made = inline_html(text)
            if made is None:
                return None
            parts.append(f"<td>{made}</td>")
        parts.append("</tr>")
    parts += ["</tbody>", "</table>"]
    return "\n".join(parts)


def cells(row: str) -> list[str] | None:
    """A row's cells, stripped; None for a row that does not start and end with a pipe."""
    if not (row.startswith("|") and row.endswith("|") and not row.endswith("\\|")):
        return None
    return [text.strip() for text in _SEPARATOR.split(row[1:-1])]


def inline_html(text: str) -> str | None:
    """A cell's Markdown as Python-Markdown renders it, or None when it holds anything this
    module does not write (see the module's docstring)."""
    # One ``*`` between spaces, with no other in the cell, pairs with nothing: it is text.
    star = text.count("*") == 1 and " * " in text
    out: list[str] = []
    at = 0
    for found in _INLINE.finditer(text):
        plain = plain_html(text[at : found.start()], star)
        if plain is None:
            return None
        out.append(plain)
        at = found.end()
        if found.group("code") is not None:
            source = found.group("source").strip()
            if source.startswith(("#!", ":::")):  # pymdownx.inlinehilite's
                return None
            out.append(f"<code>{html.escape(source, quote=False)}</code>")
        elif found.group("link") is not None:
            href = found.group("href")
            label = inline_html(found.group("label"))
            if label is None or not _OWN_LINK.fullmatch(href):
                return None
            out.append(f'<a href="{html.escape(href)}">{label}</a>')
        elif found.group("strong") is not None:
            inner = inline_html(found.group("strong_text"))
            if inner is None:
                return None
            out.append(f"<strong>{inner}</strong>")
        elif found.group("em") is not None:
            inner = inline_html(found.group("em_text"))
            if inner is None:
                return None
            out.append(f"<em>{inner}</em>")
        elif found.group("escape") is not None:
            out.append(html.escape(found.group("escaped"), quote=False))
        else:
            out.append(found.group("entity"))
    plain = plain_html(text[at:], star)
    if plain is None:
        return None
    out.append(plain)
    return "".join(out)


def plain_html(text: str, star: bool = False) -> str | None:
    """Text with no markup, escaped as Python-Markdown's serializer escapes it; None if it
    holds a character that would be markup (but a lone `` * `` when ``star``)."""
    if _MARKUP.search(text.replace(" * ", "  ") if star else text):
        return None
    return html.escape(text, quote=False)


def put_back(page_html: str, blocks: dict[str, Block]) -> str | None:
    """``page_html`` with each placeholder's paragraph replaced by its table's HTML; None if
    one is not there as Markdown left it (a plugin or an extension changed it)."""
    for token, block in blocks.items():
        paragraph = f"<p>{token}</p>"
        if paragraph not in page_html:
            return None
        page_html = page_html.replace(paragraph, block.html, 1)
    return page_html
