"""The generated pages' tables and SQL as HTML made here, which the site's Markdown never parses.

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

The arms page's SQL (some 800 lines in 16 fenced blocks) is the other half of what Markdown
spends on the pages: Pygments' SQL lexer tries its rules one by one in Python for each of some
12,000 tokens, and the fences go through ``pymdownx.superfences``. The plugin writes those
blocks' HTML too, as the site's highlighter would (:func:`code_style`): with Pygments'
classes, from a tokenizer that tries the same rules as Pygments' ``SqlLexer`` (its own
patterns, in its order) in one regular expression, and lays the tokens out as Pygments'
formatter does, with ``pymdownx.highlight``'s wrapper and line anchors; or, on a site without a
highlighter, as Python-Markdown's ``fenced_code`` writes a block. A page with a fence of
another language (an example in an arm's quoted prose too), or SQL the tokenizer does not
take (a ``/* */`` comment, a character no rule matches), keeps all its fences for Markdown,
which numbers their line anchors; and so does a site whose highlighter is set up otherwise.

The pages' Markdown is unchanged: ``memsift docs write`` writes it, and the plugin keeps it
for the next build and for tests; only what Markdown is handed in a build differs.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

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
#: A pipe that separates cells: escaped by no backslash (one escaped itself does not count).
_SEPARATOR = re.compile(r"(?:\\.|[^\\|])*\|")
#: Python-Markdown's inline pieces this module writes, in the order they are tried.
_INLINE = re.compile(
    r"(?P<code>(?P<ticks>`+)(?P<source>.+?)(?<!`)(?P=ticks)(?!`))"
    r"|(?P<link>\[(?P<label>[^\[\]]+)\]\((?P<href>[^()\s\"'<>]+)\))"
    r"|(?P<strong>\*\*(?P<strong_text>[^*\s](?:[^*]*[^*\s])?)\*\*)"
    r"|(?P<em>\*(?P<em_text>[^*\s](?:[^*]*[^*\s])?)\*)"
    r"|(?P<escape>\\(?P<escaped>[\\`*_{}\[\]()>#+\-.!|]))"
    r"|(?P<entity>&(?:#[0-9]+|#x[0-9a-fA-F]+|[a-zA-Z0-9]+);)"
)
#: Plain text that holds none of these is shown as written (a numeric character reference
#: without its semicolon is one: Python-Markdown completes it, ``&#65`` as ``&#65;``).
_REFERENCE = re.compile(r"&#(?:[0-9]|[xX][0-9a-fA-F])")
_MARKUP = re.compile(r"[*`\[\]<\\{}]|(?<!\w)_|_(?!\w)|" + _REFERENCE.pattern)
#: A link this module writes as it is: to an anchor of the page, or an absolute web address
#: (MkDocs rewrites a link to another page, which HTML made here would skip).
_OWN_LINK = re.compile(r"#[\w.-]*|https?://\S+")


def names(extensions: Iterable[object]) -> list[str] | None:
    """The Markdown extensions' names, ``markdown.extensions.`` left out; None when one is
    given as an instance, not by name."""
    found = []
    for extension in extensions:
        if not isinstance(extension, str):
            return None
        found.append(extension.removeprefix(_PREFIX))
    return found


@dataclass(frozen=True)
class CodeStyle:
    """How the site's Markdown writes a fenced SQL block: highlighted by ``pymdownx.highlight``
    (with a line anchor per line when ``anchors``), or plain, as ``fenced_code`` writes it."""

    highlight: bool
    anchors: bool = False


#: The ``pymdownx.highlight`` and ``pymdownx.superfences`` options whose blocks this module
#: writes as they do (their defaults otherwise).
_HIGHLIGHT_OPTIONS = frozenset({"anchor_linenums"})
_SUPERFENCES_OPTIONS = frozenset({"custom_fences"})


def code_style(extensions: Iterable[object], configs: Mapping[str, Any]) -> CodeStyle | None:
    """How the site writes a fenced SQL block, or None when this module cannot write it the
    same (another highlighter, or options that change the block)."""
    found = names(extensions)
    if found is None or "codehilite" in found:
        return None
    if "pymdownx.superfences" in found:
        highlight = dict(configs.get("pymdownx.highlight") or {})
        fences = dict(configs.get("pymdownx.superfences") or {})
        custom = fences.get("custom_fences") or []
        if set(highlight) - _HIGHLIGHT_OPTIONS or set(fences) - _SUPERFENCES_OPTIONS:
            return None
        if any(isinstance(f, Mapping) and f.get("name") in ("sql", "*") for f in custom):
            return None
        return CodeStyle(highlight=True, anchors=bool(highlight.get("anchor_linenums")))
    if "pymdownx.highlight" in found:
        return None  # it highlights fenced_code's blocks otherwise
    if "fenced_code" in found and not configs.get("fenced_code"):
        return CodeStyle(highlight=False)
    return None


def known_extensions(extensions: Iterable[object]) -> bool:
    """Whether every Markdown extension of a site is one :data:`KNOWN_EXTENSIONS` names (an
    extension given as an instance, not by name, is not)."""
    found = names(extensions)
    return found is not None and all(name in KNOWN_EXTENSIONS for name in found)


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


def set_aside(markdown: str, code: CodeStyle | None = None) -> SetAside:
    """``markdown`` with every table :func:`table_html` can write, and (with ``code``) every
    fenced SQL block, swapped for a placeholder paragraph; the others left as they are."""
    # A word the page does not hold: from the page's own digest, numbered.
    stem = "armsdocready" + hashlib.sha256(markdown.encode("utf-8")).hexdigest()[:12]
    markdown = as_markdown_reads(markdown)
    lines = markdown.split("\n")
    fenced = fences(lines)
    code_html = None
    if code is not None and not unfound_fences(lines, fenced):
        code_html = fences_html(lines, fenced, code)
    out: list[str] = []
    blocks: dict[str, Block] = {}

    def swap(start: int, end: int, made: str) -> None:
        token = f"{stem}n{len(blocks)}"
        out.append(lines[start][: len(lines[start]) - len(lines[start].lstrip(" "))] + token)
        blocks[token] = Block("\n".join(lines[start:end]), made)

    i = 0
    while i < len(lines):
        if i in fenced:
            end = fenced[i][0]
            if code_html is not None:
                swap(i, end, code_html[i])
            else:
                out.extend(lines[i:end])
            i = end
            continue
        end = table_end(lines, i)
        if end is not None:
            made = table_html([line.strip() for line in lines[i:end]])
            if made is not None:
                swap(i, end, made)
            else:
                out.extend(lines[i:end])
            i = end
            continue
        out.append(lines[i])
        i += 1
    return SetAside("\n".join(out), blocks)


#: What Python-Markdown takes out of a page before reading it (its placeholders' markers).
_DROPPED = str.maketrans("", "", "\x02\x03")
#: Markdown's tab width (MkDocs leaves Python-Markdown's default).
TAB_LENGTH = 4


def as_markdown_reads(markdown: str) -> str:
    """``markdown`` as Python-Markdown reads it before anything else (its NormalizeWhitespace
    step): STX and ETX dropped, line ends made ``\n``, tabs expanded, lines of spaces
    emptied. A block is written from that text, so a registry's SQL indented with tabs, or
    with a line of spaces, shows as Markdown shows it; Markdown does the same again to the
    rest, which changes nothing."""
    text = markdown.translate(_DROPPED).replace("\r\n", "\n").replace("\r", "\n")
    return re.sub(r"(?<=\n) +\n", "\n", text.expandtabs(TAB_LENGTH))


#: A fence's opening line: its indent, its backticks, its language.
_FENCE = re.compile(r"( *)(`{3,})([\w-]*)")


def fences(lines: Sequence[str]) -> dict[int, tuple[int, str, str]]:
    """Every fenced block, by the index of its opening line: the index past its closing line,
    its language and its code (the indent taken off)."""
    found: dict[int, tuple[int, str, str]] = {}
    i = 0
    while i < len(lines):
        opening = _FENCE.fullmatch(lines[i])
        if opening is None:
            i += 1
            continue
        indent, ticks, language = opening.groups()
        closing = indent + ticks
        end = i + 1
        while end < len(lines) and lines[end] != closing:
            end += 1
        if end == len(lines):
            break  # never closed: Markdown decides what it is
        body = lines[i + 1 : end]
        if all(line.startswith(indent) or not line for line in body):
            code = "\n".join(line[len(indent) :] for line in body)
            found[i] = (end + 1, language, code)
        i = end + 1
    return found


def unfound_fences(lines: Sequence[str], fenced: Mapping[int, tuple[int, str, str]]) -> bool:
    """Whether the page holds a fence :func:`fences` did not find: in a quote (an arm's prose
    is quoted, and may show an example), or of tildes. The highlighter numbers every fenced
    block of a page, and names its line anchors by that number: SQL blocks numbered without
    it would repeat another block's anchors."""
    found = {i for start, (end, _, _) in fenced.items() for i in range(start, end)}
    return any(
        i not in found and line.lstrip(" >").startswith(("```", "~~~"))
        for i, line in enumerate(lines)
    )


def fences_html(
    lines: Sequence[str], fenced: Mapping[int, tuple[int, str, str]], code: CodeStyle
) -> dict[int, str] | None:
    """Each fenced block's HTML as the site writes it, by its opening line; None unless every
    block of the page is SQL this module writes (a highlighter numbers a page's blocks)."""
    made: dict[int, str] = {}
    for number, (start, (_, language, text)) in enumerate(sorted(fenced.items())):
        if language != "sql" or (not code.highlight and lines[start].startswith(" ")):
            return None  # fenced_code takes a fence at the line's start only
        block = sql_html(text, code, number)
        if block is None:
            return None
        made[start] = block
    return made


def sql_html(text: str, code: CodeStyle, number: int) -> str | None:
    """A fenced SQL block's HTML as the site's Markdown writes it (``number``: the block's
    place on the page, which names its line anchors); None for SQL the tokenizer does not
    take."""
    if not code.highlight:
        escaped = html.escape(text, quote=False).replace('"', "&quot;")
        return f'<pre><code class="language-sql">{escaped}\n</code></pre>'
    tokens = sql_tokens(text.strip("\n") + "\n")  # as Pygments' lexer strips and ends it
    if tokens is None:
        return None
    lines = highlighted_lines(tokens)
    if code.anchors:
        lines = [
            f'<a id="__codelineno-{number}-{n}" name="__codelineno-{number}-{n}" '
            f'href="#__codelineno-{number}-{n}"></a>{line}'
            for n, line in enumerate(lines, start=1)
        ]
    return (
        '<div class="highlight"><pre><span></span><code>' + "".join(lines) + "</code></pre></div>"
    )


@cache
def sql_rules() -> tuple[re.Pattern[str], dict[int, str | None], str] | None:
    """Pygments' ``SqlLexer`` rules as one regular expression (its own patterns, in its order,
    with its flags), the CSS class of each rule's token by its group's number (None for a rule
    that enters another state), and the class of a character no rule matches; None if its
    rules are not of that kind."""
    try:
        from pygments.lexers.sql import SqlLexer
        from pygments.token import STANDARD_TYPES, Error, _TokenType

        # An instance makes the class's rules once per process (a site whose other pages hold
        # SQL has made them already); each is (its compiled pattern's match, token, state).
        SqlLexer()
        parts, classes = [], []
        for index, (match, action, state) in enumerate(SqlLexer._tokens["root"]):
            parts.append(f"(?P<r{index}>{match.__self__.pattern})")
            plain = state is None and isinstance(action, _TokenType) and action in STANDARD_TYPES
            classes.append(STANDARD_TYPES[action] if plain else None)
        regex = re.compile("|".join(parts), SqlLexer.flags)
        # Each rule's class by the number of its group (a match's ``lastindex``: the rule's
        # group closes after any group inside its pattern).
        by_group = {regex.groupindex[f"r{i}"]: css for i, css in enumerate(classes)}
        return regex, by_group, STANDARD_TYPES[Error]
    except Exception:  # another Pygments, whose rules are made otherwise: no fast path
        return None


def sql_tokens(text: str) -> list[tuple[str, str]] | None:
    """``text`` as Pygments' ``SqlLexer`` cuts it, each token with its CSS class (a character
    no rule matches is an error token of its own, as the lexer makes it, such as the ``{`` of
    ``{scope}``); None where it would enter another state."""
    rules = sql_rules()
    if rules is None:
        return None
    regex, classes, error = rules
    tokens: list[tuple[str, str]] = []
    at = 0
    for found in regex.finditer(text):
        if found.start() != at:  # characters no rule matches ("\n" always matches one)
            tokens += [(error, char) for char in text[at : found.start()]]
        css = classes[found.lastindex]  # type: ignore[index]
        if css is None:
            return None
        tokens.append((css, found.group()))
        at = found.end()
    tokens += [(error, char) for char in text[at:]]
    return tokens


def highlighted_lines(tokens: Sequence[tuple[str, str]]) -> list[str]:
    """The tokens as Pygments' HTML formatter lays them out: a span per run of one class,
    closed and reopened at each line's end; each line with its line break."""
    lines: list[str] = []
    line: list[str] = []
    open_span = ""
    for css, value in tokens:
        span = f'<span class="{css}">'
        parts = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").split("\n")
        for part in parts[:-1]:
            if line:
                if open_span != span and part:
                    line += [open_span and "</span>", span, part, "</span>", "\n"]
                else:
                    line += [part, open_span and "</span>", "\n"]
                lines.append("".join(line))
                line = []
            elif part:
                lines.append(f"{span}{part}</span>\n")
            else:
                lines.append("\n")
        last = parts[-1]
        if line and last:
            if open_span != span:
                line += [open_span and "</span>", span, last]
                open_span = span
            else:
                line.append(last)
        elif last:
            line = [span, last]
            open_span = span
    if line:
        line += [open_span and "</span>", "\n"]
        lines.append("".join(line))
    return lines


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
    head, rule = cells(rows[0]), cells(rows[1])
    if head is None or rule is None or len(head) != len(rule):
        return None  # no table to Markdown either: a paragraph
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
    """A row's cells, stripped; None for a row that does not start and end with a pipe. A
    pipe separates cells unless a backslash escapes it, and a backslash escapes the next
    character only when no backslash escapes it (``\\\\|`` is a backslash, then a separator),
    as Python-Markdown's tables read a row."""
    if not row.startswith("|"):
        return None
    found: list[str] = []
    at = 1
    for separator in _SEPARATOR.finditer(row, 1):
        if separator.start() != at:  # an escaped pipe at the row's end, read from its middle
            return None
        found.append(row[at : separator.end() - 1].strip())
        at = separator.end()
    if at != len(row) or not found:  # the row does not end with a separator
        return None
    return found


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
            if source.startswith(("#!", ":::")) or _REFERENCE.search(source):
                return None  # pymdownx.inlinehilite's; a reference Markdown completes
            out.append(f"<code>{html.escape(source, quote=False)}</code>")
        elif found.group("link") is not None:
            href = found.group("href")
            label = inline_html(found.group("label"))
            if label is None or not _OWN_LINK.fullmatch(href):
                return None
            out.append(f'<a href="{html.escape(href)}">{label}</a>')
        elif "*" in (text[found.start() - 1 : found.start()], text[found.end() : found.end() + 1]):
            return None  # emphasis beside another star: Markdown pairs the stars otherwise
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
