"""One memory file in, one normalised record out.

Parsing is pure (bytes and a path in, a :class:`Memory` or a :class:`Skip` out) so that every
odd file a user can put in a store is a unit test, and the indexer never has to guess why a
file failed: the reason travels with the skip and ends up in the run's summary.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import PurePosixPath
from typing import TypeVar

import yaml

from engine.files.web_charsets import declared_label, web_codec

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "parse_memory",
]

T = TypeVar("T")

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
MEMORY_SUFFIXES = MARKDOWN_SUFFIXES | HTML_SUFFIXES

#: Front matter larger than this is refused before YAML sees it (hostile anchors, pasted logs).
MAX_FRONT_MATTER_BYTES = 64 * 1024
KNOWN_FIELDS = ("title", "kind", "event_at", "tags", "archived")


class _SafeLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` whose impossible scalars (``2026-13-45``) fail with their line."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> object:
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, TypeError, OverflowError) as exc:
            what = f"{node.value[:40]!r} " if isinstance(node.value, str) else ""
            raise yaml.constructor.ConstructorError(
                None, None, f"value {what}cannot be built ({exc})", node.start_mark
            ) from None


@dataclass(frozen=True)
class Memory:
    """What the index stores about one file, before chunking."""

    title: str
    kind: str | None
    event_at: str | None  # "YYYY-MM-DD HH:MM:SS", UTC: sorts as text, julianday() reads it
    tags: tuple[str, ...]
    archived: bool
    body: str
    warnings: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class Skip(Exception):
    """A file the indexer leaves out, with a reason a user can act on."""

    reason: str

    def __str__(self) -> str:
        return self.reason


def parse_memory(path: str, data: bytes) -> Memory:
    """Parse one memory file's bytes; raise :class:`Skip` with a reason when it cannot be used."""
    text, _ = decode_memory(path, data)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    suffix = PurePosixPath(path).suffix.lower()
    fields, body, _ = split_front_matter(text)
    if suffix in HTML_SUFFIXES:
        page = extract_html(body)
        html_fields = {k: v for k, v in page.meta.items() if k in KNOWN_FIELDS}
        if page.title and "title" not in html_fields:
            html_fields["title"] = page.title
        fields = {**html_fields, **fields}
        body = page.text
        heading = page.first_heading
    else:
        heading = first_markdown_heading(body)
    return normalise(path, fields, body, heading, text)


#: ISO-2022-JP's codec: its text is all 7-bit bytes, so only the declaration sets it apart
#: from UTF-8 (its escapes switch to Japanese).
SEVEN_BIT_JAPANESE = "iso2022_jp_ext"


def declared_codec(data: bytes) -> str | None:
    """The codec of the charset an HTML page declares in its first kilobyte, if browsers know
    the label (pure)."""
    label = declared_label(data)
    return web_codec(label) if label else None


def is_utf16(data: bytes) -> bool:
    """Whether ``data`` decodes as UTF-16 by its byte order mark (pure)."""
    try:
        data.decode("utf-16")
    except UnicodeDecodeError:
        return False
    return True


def decode_memory(path: str, data: bytes) -> tuple[str, str]:
    """A memory's text and the codec that gave it (pure; :class:`Skip` when it is not text).

    Memories are UTF-8. An HTML page that is not may say what it is, as pages saved from the
    web often do (``<meta charset="iso-8859-1">``); that declaration is honoured, as a browser
    would honour it (:mod:`engine.files.web_charsets`), so such a page is indexed instead of
    skipped. Nothing is guessed: a file that is neither UTF-8 nor declares a charset browsers know
    is skipped with the reason.
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) and is_utf16(data):
        raise Skip("UTF-16 text (it starts with a UTF-16 byte order mark); re-save it as UTF-8")
    if b"\x00" in data:
        raise Skip("binary file (contains NUL bytes); memories are UTF-8 text")
    is_html = PurePosixPath(path).suffix.lower() in HTML_SUFFIXES
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        problem = f"not valid UTF-8 at line {line} (byte {exc.start})"
    else:
        if is_html and b"\x1b" in data and declared_codec(data) == SEVEN_BIT_JAPANESE:
            with suppress(UnicodeDecodeError):  # ISO-2022-JP is 7-bit, so valid UTF-8 too
                return data.decode(SEVEN_BIT_JAPANESE), SEVEN_BIT_JAPANESE
        return text, "utf-8"
    if not is_html:
        raise Skip(f"{problem}; re-save the file as UTF-8")
    label = declared_label(data)
    if label is None:
        raise Skip(
            f"{problem} and no <meta charset> declares another encoding; "
            "re-save the page as UTF-8 or declare its charset"
        )
    codec = web_codec(label)
    if codec is None:
        raise Skip(
            f"{problem}; its declared charset {label!r} is not one browsers read; "
            "re-save the page as UTF-8"
        )
    probe = '<meta charset="x">\n'
    if codec == "utf-8" or probe.encode(codec, "replace") != probe.encode():
        raise Skip(f"{problem} (the page declares {label!r}); re-save the file as UTF-8")
    try:
        return data.decode(codec), codec
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise Skip(
            f"not valid {label!r} (its declared charset) at line {line} (byte {exc.start}); "
            "re-save the page as UTF-8"
        ) from None


def memory_text(path: str, data: bytes) -> str:
    """A memory's text for showing it whole (``read``): decoded as the indexer decodes it, and
    when that fails as UTF-8 with the bad bytes replaced, so the file can still be seen."""
    try:
        return decode_memory(path, data)[0]
    except Skip:
        return data.decode("utf-8", errors="replace")


#: The line that opens front matter: three dashes, then only the spaces or tabs an editor may
#: leave behind (MkDocs and python-frontmatter read such a line as a fence too; reading it as
#: body would put the fields in the text and lose the title and kind without a word). The
#: closing line allows the same. ``forget`` finds the front matter it edits with this pattern.
FRONT_MATTER_OPENING = re.compile(r"---[ \t]*\r?\n")
FRONT_MATTER_CLOSING = re.compile(r"^(---|\.\.\.)[ \t]*$", flags=re.MULTILINE)


def split_front_matter(text: str) -> tuple[dict[str, object], str, int]:
    """Split ``---`` YAML front matter from the body; return (fields, body, body's first line)."""
    opening = FRONT_MATTER_OPENING.match(text)
    if opening is None and text.rstrip(" \t\n") != "---":
        return {}, text, 1
    start = opening.end() if opening else len(text)
    end = FRONT_MATTER_CLOSING.search(text, start)
    if end is None:
        raise Skip("front matter opened with '---' on line 1 is never closed; add a '---' line")
    raw = text[start : end.start()]
    if len(raw.encode("utf-8")) > MAX_FRONT_MATTER_BYTES:
        raise Skip(f"front matter is over {MAX_FRONT_MATTER_BYTES // 1024} KiB; keep it to fields")
    body = text[end.end() :].lstrip("\n")
    body_line = text[: end.end()].count("\n") + 2
    try:
        loaded = yaml.load(raw, Loader=_SafeLoader) if raw.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 2}" if mark is not None else "front matter"
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise Skip(f"front matter is not valid YAML at {where}: {problem}") from None
    except RecursionError:
        raise Skip("front matter nests too deeply to be metadata") from None
    except (ValueError, TypeError, OverflowError) as exc:
        # PyYAML raises these for well-formed but impossible scalars, e.g. 2026-13-45.
        raise Skip(f"front matter holds a value YAML cannot build: {exc}") from None
    if loaded is None:
        loaded = {}
    if not isinstance(loaded, dict):
        raise Skip(f"front matter must be a mapping of fields, got a YAML {type(loaded).__name__}")
    return {str(k): v for k, v in loaded.items()}, body, body_line


def normalise(
    path: str, fields: dict[str, object], body: str, heading: str | None, text: str
) -> Memory:
    """Check and normalise the known fields; unknown fields are kept out of the index."""
    title = fields.get("title")
    if title is not None and not isinstance(title, str | int | float | dt.date):
        raise Skip(f"title{field_line(text, 'title')} must be text, got a {type(title).__name__}")
    title_text = str(title).strip() if title is not None else ""
    if not title_text:
        title_text = heading or PurePosixPath(path).stem
    kind = fields.get("kind")
    if kind is not None and not isinstance(kind, str):
        raise Skip(f"kind{field_line(text, 'kind')} must be text, got a {type(kind).__name__}")
    kind_text = kind.strip().lower() or None if isinstance(kind, str) else None
    return Memory(
        title=" ".join(title_text.split())[:500],
        kind=kind_text,
        event_at=with_line(parse_event_at, fields.get("event_at"), text, "event_at"),
        tags=with_line(parse_tags, fields.get("tags"), text, "tags"),
        archived=with_line(parse_bool, fields.get("archived"), text, "archived"),
        body=body.strip(),
    )


def with_line(parse: Callable[[object, str], T], value: object, text: str, name: str) -> T:
    """``parse(value)``; when it refuses the value, again with the field's line in the reason.
    Finding the line scans the whole file, which for a large page cost more than a tenth of a
    second on every parse, for a line shown only when something is wrong."""
    try:
        return parse(value, "")
    except Skip:
        return parse(value, field_line(text, name))


def field_line(text: str, name: str) -> str:
    """' (line N)' for a front matter field, so a skip reason points at the line to fix."""
    match = re.search(rf"^{re.escape(name)}\s*:", text, flags=re.MULTILINE)
    return f" (line {text[: match.start()].count(chr(10)) + 1})" if match else ""


def parse_event_at(value: object, where: str = "") -> str | None:
    """Normalise a date or datetime (YAML-typed or ISO 8601 text) to UTC 'YYYY-MM-DD HH:MM:SS'."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, dt.date):
        moment = dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        moment = parse_iso(value)
        if moment is None:
            raise Skip(
                f"event_at{where} {value[:40]!r} is not an ISO 8601 date; "
                "write it like 2026-10-03 or 2026-10-03T14:20:00Z"
            )
    else:
        raise Skip(f"event_at{where} must be a date, got a {type(value).__name__}")
    try:
        return format_utc(moment)
    except OverflowError:
        raise Skip(f"event_at{where} {str(value)[:40]!r} is out of range in UTC") from None


def parse_iso(text: str) -> dt.datetime | None:
    """Parse ISO 8601 text (date, or datetime with optional Z/offset); None if it is not one."""
    text = text.strip()
    try:
        if len(text) == 10:
            day = dt.date.fromisoformat(text)
            return dt.datetime(day.year, day.month, day.day)
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None


def format_utc(moment: dt.datetime) -> str:
    """The one text form of a moment in the index: naive datetimes are taken as UTC. The year
    always has four digits (``strftime("%Y")`` writes year 5 as ``5``, and then ``0005-01-01``
    sorted after ``1000-01-01`` as text), so comparing the texts compares the moments."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC).replace(tzinfo=None)
    return moment.isoformat(sep=" ", timespec="seconds")


def parse_tags(value: object, where: str = "") -> tuple[str, ...]:
    """Tags as a YAML list or a comma-separated string; lower-cased, de-duplicated, in order."""
    if value is None:
        return ()
    if isinstance(value, str):
        items: list[object] = list(value.split(","))
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        raise Skip(f"tags{where} must be a list or comma-separated text")
    tags: list[str] = []
    for item in items:
        if not isinstance(item, str | int | float) or isinstance(item, bool):
            raise Skip(f"tags{where} must hold text, got a {type(item).__name__}")
        tag = str(item).strip().lower()
        if tag and tag not in tags:
            tags.append(tag)
    return tuple(tags)


def parse_bool(value: object, where: str = "") -> bool:
    """``archived`` as a YAML boolean or yes/no/true/false text."""
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "yes", "1", "false", "no", "0"}:
        return value.strip().lower() in {"true", "yes", "1"}
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    # Never str() a container: an anchor bomb would expand to gigabytes here.
    if isinstance(value, str):
        shown = repr(value[:20])
    elif isinstance(value, int | float):
        shown = repr(value)
    else:
        shown = f"a {type(value).__name__}"
    raise Skip(f"archived{where} must be true or false, got {shown}")


def first_markdown_heading(body: str) -> str | None:
    """The text of the first ATX heading ('# Title'), the usual title of a note without one."""
    match = re.search(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", body, flags=re.MULTILINE)
    return match.group(1).strip() if match else None


@dataclass
class HtmlPage:
    """Text and metadata pulled out of an HTML memory."""

    text: str
    title: str | None
    first_heading: str | None
    meta: dict[str, str]


BLOCK_TAGS = frozenset(
    "p div br li ul ol h1 h2 h3 h4 h5 h6 pre table tr section article header footer "
    "blockquote hr dt dd".split()
)
HIDDEN_TAGS = frozenset({"script", "style", "template", "noscript", "head"})


class _TextExtractor(HTMLParser):
    """Collect visible text, the <title>, the first heading and <meta name content> pairs."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0
        self.in_title = False
        self.title: list[str] = []
        self.heading: list[str] | None = None
        self.heading_done = False
        self.meta: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "meta":
            found = dict(attrs)
            name, content = found.get("name"), found.get("content")
            if name and content is not None:
                self.meta[name.strip().lower()] = content
            return
        if tag == "title":
            self.in_title = True
        elif tag in HIDDEN_TAGS:
            self.hidden += 1
        elif tag in {"h1", "h2"} and not self.heading_done and self.heading is None:
            self.heading = []
        if tag in BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        elif tag in HIDDEN_TAGS:
            self.hidden = max(0, self.hidden - 1)
        elif tag in {"h1", "h2"} and self.heading is not None and not self.heading_done:
            self.heading_done = True
        if tag in BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
            return
        if self.hidden:
            return
        if self.heading is not None and not self.heading_done:
            self.heading.append(data)
        self.parts.append(data)


def extract_html(markup: str) -> HtmlPage:
    """Visible text of an HTML document, paragraphs kept apart, scripts and styles dropped."""
    parser = _TextExtractor()
    parser.feed(markup)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).split("\n"))
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    title = " ".join("".join(parser.title).split()) or None
    heading = " ".join("".join(parser.heading or []).split()) or None
    return HtmlPage(text=text, title=title, first_heading=heading, meta=parser.meta)
