"""What both generated pages use to print figures and text (the arms page is written by
:mod:`arms_doc.arms_markdown`, the Measured page by :mod:`arms_doc.measured_markdown`).

Both pages were Jinja templates, until compiling them proved to be most of what a first build
(nothing cached: a fresh checkout's, or CI's) paid for them.
"""

from __future__ import annotations

import datetime as dt
import html

from markdown.extensions.toc import slugify


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
