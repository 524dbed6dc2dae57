"""Render the generated pages from plain contexts with the Jinja2 templates in the package.

``StrictUndefined`` turns a name the template uses but the context lacks into an error at build
time, instead of an empty spot on the page.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from functools import cache

from jinja2 import Environment, PackageLoader, StrictUndefined
from markdown.extensions.toc import slugify

TEMPLATE = "rrf-arms.md.j2"
MEASURED_TEMPLATE = "measured.md.j2"


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


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("arms_doc", "templates"),
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
    return env


def render(template: str, context: Mapping[str, object]) -> str:
    text = environment().get_template(template).render(**context)
    return text.rstrip("\n") + "\n"


def render_page(context: Mapping[str, object]) -> str:
    """The arms page's Markdown for ``context`` (see :func:`arms_doc.page.page_context`)."""
    return render(TEMPLATE, context)


def render_measured(context: Mapping[str, object]) -> str:
    """The Measured page's Markdown (see :func:`arms_doc.measured.measured_context`)."""
    return render(MEASURED_TEMPLATE, context)
