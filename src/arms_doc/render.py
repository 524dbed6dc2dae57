"""Render the generated pages: the arms page from a plain context with the Jinja2 template in
the package (the Measured page is written by :mod:`arms_doc.measured_markdown`); and the
filters both use to print figures and text.

``StrictUndefined`` turns a name the template uses but the context lacks into an error at build
time, instead of an empty spot on the page.

Compiling the arms page's template costs a build more than rendering it, so the compiled code
is kept in Jinja's own bytecode cache (a folder of the user's own in the temporary directory,
which Jinja makes private and checks; each entry is checked against its template's source and
Jinja's version). A cache that cannot be made, read or written is no cache: the template is
compiled, the build goes on. The Measured page was a template too, until compiling it proved
to be most of what a first build (nothing cached: a fresh checkout's, or CI's) paid for it.
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Mapping
from contextlib import suppress
from functools import cache

from jinja2 import Environment, FileSystemBytecodeCache, PackageLoader, StrictUndefined
from jinja2.bccache import Bucket
from markdown.extensions.toc import slugify

TEMPLATE = "rrf-arms.md.j2"


def blockquote(text: str) -> str:
    """Quote Markdown text: every line behind ``>``, blank lines kept inside the quote."""
    return "\n".join(f"> {line}" if line.strip() else ">" for line in text.splitlines())


def yes_no(flag: bool) -> str:
    return "yes" if flag else "no"


def fence(text: str, language: str = "") -> str:
    """A fenced code block that no run of backticks inside ``text`` can close early."""
    runs = (line.strip() for line in text.split("\n"))
    longest = max((len(run) for run in runs if set(run) == {"`"}), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{language}\n{text}\n{ticks}"


def escape_html(text: object) -> str:
    """Text that Markdown shows as written: ``<``, ``>`` and ``&`` as entities.

    For names and numbers the page prints (arm names, weights, result labels). An arm's prose
    is Markdown written in trusted code and goes to the page as it is, HTML included.
    """
    return html.escape(str(text), quote=False)


def cell(text: object) -> str:
    """Text safe inside a Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def slug(text: str) -> str:
    """The anchor Python-Markdown's toc extension gives a heading with this text."""
    return slugify(text, "-")


# Figures: every number the pages print goes through one of these, so a value the results do
# not have (None) prints as NOT_MEASURED wherever it appears.

#: Shown for a figure the results do not have.
NOT_MEASURED = "–"


def score(value: float | None) -> str:
    """A quality figure (nDCG, MRR, recall) to four decimals."""
    return NOT_MEASURED if value is None else f"{value:.4f}"


def delta(value: float | None) -> str:
    """A signed difference of scores; exactly 0 (after rounding) carries no sign."""
    if value is None:
        return NOT_MEASURED
    text = f"{value:+.4f}"
    return "0.0000" if text in ("+0.0000", "-0.0000") else text


def ms(value: float | None) -> str:
    """Milliseconds with about three significant digits."""
    if value is None:
        return NOT_MEASURED
    for limit, digits in ((1, 3), (10, 2), (100, 1)):
        if value < limit:
            return f"{value:.{digits}f}"
    return f"{value:.0f}"


def ratio(value: float | None) -> str:
    return NOT_MEASURED if value is None else f"{value:.1f}×"


def mib(value: float | None) -> str:
    return NOT_MEASURED if value is None else f"{value:,.0f}"


def percent(value: float | None) -> str:
    """A signed change as a percentage: 0.0744 -> "+7.4 %"."""
    return NOT_MEASURED if value is None else f"{value * 100:+.1f} %"


def share(value: float | None) -> str:
    """A share of queries as a percentage: 0.125 -> "12.5 %"."""
    return NOT_MEASURED if value is None else f"{value * 100:.1f} %"


def thousands(value: int | None) -> str:
    return NOT_MEASURED if value is None else f"{value:,}"


def number(value: float | None) -> str:
    """A plain number as Python's shortest form prints it (weights, floors, targets)."""
    return NOT_MEASURED if value is None else f"{value:g}"


def when(text: str) -> str:
    """An ISO 8601 time as "2026-06-01 12:34 UTC"; the text itself if it does not parse."""
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return text
    if moment.tzinfo is None:
        return moment.strftime("%Y-%m-%d %H:%M")
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


FIGURES = (score, delta, ms, ratio, mib, percent, share, thousands, number, when)


class TemplateCache(FileSystemBytecodeCache):
    """Jinja's file cache of compiled templates, where a failure to read or write an entry
    only means compiling the template again."""

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # an unreadable or foreign entry: compile instead
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        # A full disk, a folder removed meanwhile: the next build compiles again.
        with suppress(OSError):
            super().dump_bytecode(bucket)


def template_cache() -> TemplateCache | None:
    """The cache in Jinja's default folder, or None when Jinja finds no safe one (the folder
    is not a private directory of this user's, or cannot be made)."""
    try:
        return TemplateCache()
    except (OSError, RuntimeError):
        return None


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("arms_doc", "templates"),
        bytecode_cache=template_cache(),
        undefined=StrictUndefined,
        autoescape=False,  # the output is Markdown, not HTML
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["blockquote"] = blockquote
    env.filters["yes_no"] = yes_no
    env.filters["fence"] = fence
    env.filters["cell"] = cell
    env.filters["html"] = escape_html
    env.filters["slug"] = slug
    env.filters.update({figure.__name__: figure for figure in FIGURES})
    return env


def render(template: str, context: Mapping[str, object]) -> str:
    text = environment().get_template(template).render(**context)
    return text.rstrip("\n") + "\n"


def render_page(context: Mapping[str, object]) -> str:
    """The arms page's Markdown for ``context`` (see :func:`arms_doc.page.page_context`)."""
    return render(TEMPLATE, context)
