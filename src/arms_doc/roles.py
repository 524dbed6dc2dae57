"""Sphinx cross-reference roles in the registry's prose, rendered as links (or code) on the page.

A registry written for Python readers uses Sphinx roles in its docstrings
(``:mod:`engine.ranking.assemble```, ``:data:`engine.ranking.contract.INPUTS```). MkDocs
renders no reST, so a role would show as raw text. Each role of the Python domain becomes a
code span of its target (``~a.b.c`` shows ``c``, ``title <target>`` shows ``title``), made a
link where the caller resolves the target (an arm's section on the page, a module's file or a
name's lines in the registry's source tree, see :mod:`arms_doc.targets`). A role the plugin
does not know, or whose target does not resolve, is rendered as code and reported, line and
reason, so a ``--strict`` build names what to fix.
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

#: Resolves a role's target (its dotted name, see :func:`target_name`): the URL to link it
#: to; ``""`` where it resolves but there is nowhere to link (a source file, on a site with no
#: source link); None where it does not resolve.
Resolver = Callable[[str], str | None]
#: Told of a role the page cannot resolve: the line, counted from 0 within the text, and why.
Reporter = Callable[[int, str], None]


def shown(target: str) -> str:
    """What a reader sees of a role's target."""
    if target.endswith(">") and "<" in target:  # an explicit title: "the title <target>"
        return target[: target.rindex("<")].strip()
    target = target.lstrip("!")
    if target.startswith("~"):  # only the last component
        return target[1:].rsplit(".", 1)[-1]
    return target


def target_name(target: str) -> str:
    """The name a role's target points at: without a title, ``!``, ``~`` or a call's ``()``."""
    if target.endswith(">") and "<" in target:
        target = target[target.rindex("<") + 1 : -1]
    target = target.strip().lstrip("!~")
    return target.removesuffix("()")


def roles_to_markdown(text: str, resolve: Resolver, report: Reporter) -> str:
    """``text`` with every role as a code span, linked where ``resolve`` finds its target;
    ``report`` is told of each role not in :data:`KNOWN` and each target that does not
    resolve."""

    def replace(match: re.Match[str]) -> str:
        role, target = match.group(0), match["target"]
        code = f"`{shown(target)}`"
        line = text.count("\n", 0, match.start())
        if match["role"] not in KNOWN:
            report(
                line,
                f"the role {role} is not one the page can render (it shows as code); use "
                ":mod:, :func:, :class:, :data:, :attr: or :meth:, or plain `code`",
            )
            return code
        url = resolve(target_name(target))
        if url is None:
            report(
                line,
                f"the role {role} names {target_name(target)}, which is neither an arm or "
                "authority signal on this page nor a module or name in the registry's source "
                "tree (it shows as code, unlinked); write the full dotted path of a module, "
                "class, function or variable there, or plain `code`",
            )
            return code
        return f"[{code}]({url})" if url else code

    return ROLE.sub(replace, text)
