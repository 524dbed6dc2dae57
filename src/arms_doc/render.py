"""Render the arms page from a plain context with the Jinja2 template shipped in the package.

``StrictUndefined`` turns a name the template uses but the context lacks into an error at build
time, instead of an empty spot on the page.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from jinja2 import Environment, PackageLoader, StrictUndefined

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
    return env


def render_page(context: Mapping[str, object]) -> str:
    """The page's Markdown for ``context`` (see :func:`arms_doc.page.page_context`)."""
    text = environment().get_template(TEMPLATE).render(**context)
    return text.rstrip("\n") + "\n"
