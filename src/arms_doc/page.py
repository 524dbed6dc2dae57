"""From a registry file to the arms page: read, check, assemble, render.

Everything here is a plain function of its arguments; the MkDocs plugin only resolves paths,
calls :func:`generate_page`, logs the findings and adds the file.
"""

from __future__ import annotations

import os
import posixpath
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Literal

from arms_doc.arms_markdown import render_arms
from arms_doc.checks import Finding, quality_findings
from arms_doc.prepare import check_statements
from arms_doc.provenance import GitInfo, file_link, git_info, line_link
from arms_doc.reader import ArmEntry, Registry, read_registry
from arms_doc.render import slug
from arms_doc.roles import Reporter, Resolver, roles_to_markdown
from arms_doc.statements import InDialect, Statement, Statements, assemble_statements
from engine.ranking.arm_rules import dialect_sql
from engine.ranking.contract import DIALECTS, FIRST_SCOPE_PARAM, INPUTS, PARAMS, Dialect

if TYPE_CHECKING:
    from arms_doc.measured import Results


@dataclass(frozen=True)
class GeneratedPage:
    """The page's Markdown, the registry it came from and its quality findings."""

    markdown: str
    registry: Registry
    findings: list[Finding]


def generate_page(
    path: Path,
    *,
    display: str,
    variable: str = "ARMS",
    link_template: str | None = None,
    results: Results | None = None,
    measured_link: str | None = None,
    tabs: bool = True,
    written: bool = False,
) -> GeneratedPage:
    """Build the page for the registry at ``path`` (shown to readers as ``display``).

    ``results`` feed the "What each arm buys" section; ``measured_link`` is the Measured
    page's path relative to this page, for a link to it; ``tabs`` puts each dialect's SQL in
    a content tab, for a site with the pymdownx.tabbed extension; ``written`` makes the page
    ``memsift docs write`` puts in a file (:func:`page_from_registry`). Raises
    :class:`arms_doc.reader.RegistryError` for a registry that cannot be read, or whose SQL
    SQLite refuses to prepare.
    """
    registry = read_registry(path, variable, display=display)
    return page_from_registry(
        registry,
        path,
        link_template=link_template,
        results=results,
        measured_link=measured_link,
        tabs=tabs,
        written=written,
    )


def page_from_registry(
    registry: Registry,
    path: Path,
    *,
    link_template: str | None = None,
    results: Results | None = None,
    measured_link: str | None = None,
    tabs: bool = True,
    measuring: bool = True,
    written: bool = False,
    git: GitInfo | Literal["ask"] | None = "ask",
) -> GeneratedPage:
    """The page for a registry already read from ``path`` (see :func:`generate_page`);
    ``measuring`` False (a site without benchmark results) leaves out "What each arm buys";
    ``git`` is what git said of ``path`` when the caller asked it already in this build (a
    git process less), ``"ask"`` to ask it here.

    ``written`` is the page as ``memsift docs write`` puts it in a file, to be committed: the
    same content, but it names no commit (the commit it will be committed in is not known yet,
    and a page naming the commit it was written at would differ from the one ``memsift docs
    check`` renders after every commit), its links lead to the lines at ``HEAD``, and its
    provenance says it was written, not built.
    """
    findings = quality_findings(registry)
    statements = assemble_statements(registry)
    check_statements(registry)
    if git == "ask":
        git = git_info(path)
    context = page_context(registry, statements, git, link_template, tabs=tabs, written=written)
    if measuring:
        # Only a site with benchmark results reads them: the results schema is imported then.
        from arms_doc.measured import buys_context

        context["buys"] = buys_context(results, [arm.name for arm in registry.arms], measured_link)
    else:
        context["buys"] = {"enabled": False}
    resolve = role_resolver(registry, path, git, link_template, written=written)
    findings += render_roles(context, registry, path, resolve)
    return GeneratedPage(render_arms(context), registry, findings)


def render_roles(
    context: dict[str, object], registry: Registry, path: Path, resolve: Resolver
) -> list[Finding]:
    """The docstring's and every arm's and signal's prose's Sphinx roles as code, linked where
    ``resolve`` finds the target (:mod:`arms_doc.roles`); a finding, at its line of the
    registry, for each role the plugin does not know or cannot resolve."""
    found: list[Finding] = []

    def at(first_line: int) -> Reporter:
        def report(offset: int, message: str) -> None:
            found.append(Finding(first_line + offset, message))

        return report

    docstring = str(context["docstring"])
    if docstring:
        context["docstring"] = roles_to_markdown(
            docstring, resolve, at(docstring_line(path, docstring))
        )
    arms: list[dict[str, object]] = context["arms"]  # type: ignore[assignment]
    for entry, arm in zip(arms, registry.arms, strict=True):
        start = arm.field_lines.get("prose", arm.start_line)
        start += len(arm.raw_prose) - len(arm.raw_prose.lstrip("\n")) if arm.raw_prose else 0
        entry["prose"] = roles_to_markdown(str(entry["prose"]), resolve, at(start))
    signals: list[dict[str, object]] = context["authority"]  # type: ignore[assignment]
    for entry, signal in zip(signals, registry.authority, strict=True):
        entry["prose"] = roles_to_markdown(str(entry["prose"]), resolve, at(signal.start_line))
    return found


def role_resolver(
    registry: Registry,
    path: Path,
    git: GitInfo | None,
    link_template: str | None,
    *,
    written: bool = False,
) -> Resolver:
    """Where a role's target leads: an arm's or authority signal's section on this page, else
    its module's file or its definition's lines in the registry's source tree
    (:mod:`arms_doc.targets`), through the same links as the arms' lines (the commit built,
    ``HEAD`` for a written page); ``""`` for a source file on a site with no link template."""
    from arms_doc.targets import SourceTree, source_root

    sections = {arm.name: f"#{slug(arm.name)}" for arm in registry.arms}
    for signal in registry.authority:
        sections.setdefault(signal.name, f"#{slug(signal.label)}")
    tree = SourceTree(source_root(path), path)
    # The registry's path in links, and the folder other files' paths are taken from.
    base = PurePosixPath(git.path if git else registry.file).parent
    commit = git.commit if git and not written else None

    def resolve(target: str) -> str | None:
        if target in sections:
            return sections[target]
        found = tree.find(target)
        if found is None:
            return None
        if not link_template:
            return ""
        relative = Path(os.path.relpath(found.file, path.resolve().parent)).as_posix()
        shown = posixpath.normpath((base / relative).as_posix())
        if found.start is None:
            return file_link(link_template, commit=commit, path=shown)
        end = found.end or found.start
        return line_link(link_template, commit=commit, path=shown, start=found.start, end=end)

    return resolve


def docstring_line(path: Path, docstring: str) -> int:
    """The line of ``path`` the (stripped) module docstring's text starts on; 1 if not found."""
    first = docstring.splitlines()[0].strip()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if first and first in line:
            return number
    return 1


def page_context(
    registry: Registry,
    statements: Statements,
    git: GitInfo | None,
    link_template: str | None,
    *,
    tabs: bool = True,
    written: bool = False,
) -> dict[str, object]:
    """The arms page's whole context, as plain data, for
    :func:`~arms_doc.arms_markdown.render_arms` to write; ``tabs`` shows each dialect's SQL in
    a content tab (pymdownx.tabbed) rather than under a bold heading of its own; ``written``
    leaves the commit out (links then lead to ``HEAD``), for the page ``memsift docs write``
    puts in a file."""
    link_path = git.path if git else registry.file
    commit = git.commit if git and not written else None

    def link(start: int, end: int) -> str:
        return line_link(link_template, commit=commit, path=link_path, start=start, end=end)

    arms = [
        {
            "name": arm.name,
            "label": arm.label,
            "weight": arm.weight_text,
            "needs": list(arm.needs),
            "prose": arm.prose,
            "sql": fragment(arm.sql),
            "fragments": [fragment_context(arm, target, link) for target in DIALECTS],
            "start_line": arm.start_line,
            "end_line": arm.end_line,
            "link": link(arm.start_line, arm.end_line),
        }
        for arm in registry.arms
    ]
    authority = [
        {
            "name": signal.name,
            "label": signal.label,
            "tags": list(signal.tags),
            "effect": signal.effect,
            "factor": signal.factor_text,
            "prose": signal.prose,
            "start_line": signal.start_line,
            "end_line": signal.end_line,
            "link": link(signal.start_line, signal.end_line),
        }
        for signal in registry.authority
    ]
    return {
        "registry": {"file": registry.file, "variable": registry.variable, "line": registry.line},
        "docstring": (registry.docstring or "").strip(),
        "arms": arms,
        "authority": authority,
        "authority_ceiling": authority_ceiling(),
        "rrf_k": statements.rrf_k,
        "inputs": [{"name": i.name, "doc": i.doc, "finds": i.finds} for i in INPUTS],
        "params": [{"number": p.number, "doc": p.doc, "input": p.input} for p in PARAMS],
        "first_scope_param": FIRST_SCOPE_PARAM,
        "scope_sql": statements.scope_sql,
        "scopes": [in_dialect_context(scope) for scope in statements.scopes],
        "dialects": [target.label for target in DIALECTS],
        "keys": ", ".join(f"`({target.key}, rank)` in {target.label}" for target in DIALECTS),
        "tabs": tabs,
        "prepared": DIALECTS[0].label,
        "unprepared": [target.label for target in DIALECTS[1:]],
        "full": statement_context(statements.full),
        "floor": statement_context(statements.lexical_floor),
        "commit": commit,
        "dirty": bool(commit and git and git.dirty),
        "written": written,
    }


def authority_ceiling() -> float:
    """The bound on what raises reach together, from the engine's rule."""
    from engine.ranking.authority import CEILING

    return CEILING


def fragment(sql: str) -> str:
    """An arm's SQL as the page shows it: dedented, without surrounding blank lines."""
    return textwrap.dedent(sql).strip("\n").rstrip()


def fragment_context(
    arm: ArmEntry, target: Dialect, link: Callable[[int, int], str]
) -> dict[str, object]:
    """One arm's fragment in one dialect, with the lines of the registry that hold it; an
    empty ``sql`` (and no lines) for an arm that has no fragment in that dialect."""
    sql = fragment(dialect_sql(arm, target))
    span = arm.field_span(target.field) if sql else None
    return {
        "dialect": target.name,
        "label": target.label,
        "field": target.field,
        "sql": sql,
        "start_line": span[0] if span else None,
        "end_line": span[1] if span else None,
        "link": link(*span) if span else "",
    }


def in_dialect_context(version: InDialect) -> dict[str, object]:
    return {
        "dialect": version.dialect,
        "label": version.label,
        "sql": version.sql,
        "refused": version.refused,
    }


def statement_context(statement: Statement) -> dict[str, object]:
    return {
        "title": statement.title,
        "sql": statement.sql,
        "dialects": [in_dialect_context(version) for version in statement.dialects],
        "fired": list(statement.fired),
        "dropped": dict(statement.dropped),
    }
