"""Sphinx cross-reference roles in the registry's prose, rendered as code on the page.

A registry written for Python readers uses Sphinx roles in its docstrings
(``:mod:`engine.ranking.assemble```, ``:data:`engine.ranking.contract.INPUTS```). MkDocs
renders no reST, so a role would show as raw text. Each role of the Python domain becomes a
code span of its target (``~a.b.c`` shows ``c``, ``title <target>`` shows ``title``); a role
the plugin does not know is rendered the same way and reported, file and line, so a
``--strict`` build names what to fix.
"""

from __future__ import annotations

import re
from collections.abc import Callable

#: A role: ``:name:`target```, optionally with a domain (``:py:func:``).
ROLE = re.compile(r":(?:py:)?(?P<role>[a-z][a-z0-9-]*):`(?P<target>[^`\n]+)`")
#: The Python domain's roles and the generic ones, rendered as code.
KNOWN = frozenset(
    {"mod", "func", "data", "class", "meth", "attr", "obj", "exc", "const", "term", "ref"}
)


def shown(target: str) -> str:
    """What a reader sees of a role's target."""
    if target.endswith(">") and "<" in target:  # an explicit title: "the title <target>"
        return target[: target.rindex("<")].strip()
    target = target.lstrip("!")
    if target.startswith("~"):  # only the last component
        return target[1:].rsplit(".", 1)[-1]
    return target


def roles_to_code(text: str, unknown: Callable[[int, str], None]) -> str:
    """``text`` with every role as a code span; ``unknown(offset line, role)`` is called for
    each role not in :data:`KNOWN` (the line counted from 0 within ``text``)."""

    def code(match: re.Match[str]) -> str:
        if match["role"] not in KNOWN:
            unknown(text.count("\n", 0, match.start()), match.group(0))
        return f"`{shown(match['target'])}`"

    return ROLE.sub(code, text)
