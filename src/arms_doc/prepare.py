"""Ask SQLite whether every statement a search can assemble from the registry will run.

Reading the registry proves that its values are literals; only SQLite can tell whether the SQL
in them compiles. So the build makes an empty index with the engine's own DDL (``index.db``'s
schema, the sqlite-vec table, ``state.db`` attached as ``state`` the way a search attaches it)
and PREPARES, never runs, the statements that cover every combination of arms a search can
fire (a store's configuration may drop any arm by weighting it 0): each arm alone, and all
together, with the default scope and with a scope that uses every option. Only when one
of them is refused are the other combinations prepared too, to name the arm that breaks. A
statement SQLite refuses, a second statement after a ``;``, a statement that writes, or a
placeholder no search binds (a bare ``?``, a named ``:evil``, a number past the scope's)
stops the build, naming the arm and its line.

Only the first statement of a string is ever prepared, and nothing is ever stepped; the
engine's SQLite backend does the preparing (:mod:`engine.sqlite.prepare`), so the plugin never
imports the driver and only judges what SQLite answered. A registry whose statements all
prepared on the same SQLite and schema before is not prepared again (:mod:`arms_doc.verdicts`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from arms_doc.reader import ArmEntry, Registry, RegistryError
from arms_doc.statements import engine_arms
from engine.ranking.contract import FIRST_SCOPE_PARAM, PARAMS, described

if TYPE_CHECKING:
    from engine.arms import Arm
    from engine.sqlite.prepare import EmptyIndex

#: Up to this many arms, a registry with a refused statement has every combination prepared,
#: to name the smallest company an arm breaks in (2^8 - 1 = 255 statements per scope).
EXHAUSTIVE_ARMS = 8
#: The placeholders a search binds besides the scope's (the contract's fixed ones).
ENGINE_PLACEHOLDERS = FIRST_SCOPE_PARAM - 1
#: What an arm may use, for messages: the contract's placeholders open to arms.
ARM_PLACEHOLDERS = described({p.number for p in PARAMS if p.for_arms})
#: A placeholder number put in front of the statement: SQLite numbers a bare ``?`` one past
#: the highest number seen so far, so after this one a bare ``?`` can never hide in a gap.
PROBE = 1000
#: The width of the empty vector table; the SQL does not depend on it.
PROBE_DIM = 8

_WITH = re.compile(r"\s*WITH\s", re.IGNORECASE)


@dataclass(frozen=True)
class Problem:
    """Why SQLite (or the engine's binding) would refuse a statement.

    ``message`` follows "arm 'x' ..." ; ``where`` finds the spot in the arm's SQL, when it
    occurs there exactly once, or at its first occurrence when ``first`` (a ``;`` ends the
    statement where it first appears).
    """

    message: str
    where: re.Pattern[str] | None = None
    first: bool = False


def check_statements(registry: Registry) -> None:
    """Prepare the statements that cover every combination of the registry's arms
    (:func:`covering`); RegistryError on the first one SQLite or the engine's binding would
    refuse, at the line of the arm that breaks it.

    When one of them is refused, every combination is prepared, smallest first
    (:func:`combinations`), so the error names the smallest company the arm breaks in, as
    the arm to blame. A registry whose statements all prepared before, on the same SQLite and
    schema, is not prepared again (:mod:`arms_doc.verdicts`)."""
    from arms_doc.verdicts import passed_before, remember_passed, verdict_key

    rule_errors(registry)
    arms = engine_arms(registry)
    planned = planned_statements(registry, covering(arms))
    with empty_index() as index:
        key = verdict_key(verdict_parts(index, planned))
        if passed_before(key):
            return
        if any(statement_problem(index, sql, bound) for _, _, sql, bound in planned):
            blame_smallest(registry, index, planned_statements(registry, combinations(arms)))
    remember_passed(key)


def blame_smallest(registry: Registry, index: EmptyIndex, planned: Sequence[Planned]) -> None:
    """RegistryError for the first of ``planned`` (smallest combinations first) that has a
    problem: smaller combinations passed, so the last arm added is the one that breaks."""
    entries = {entry.name: entry for entry in registry.arms}
    for combination, label, sql, bound in planned:
        problem = statement_problem(index, sql, bound)
        if problem is not None:
            culprit = entries[combination[-1].name]
            others = [arm.name for arm in combination[:-1]]
            raise RegistryError(
                registry.file,
                problem_line(culprit, problem),
                blame(culprit.name, others, label, problem),
            )


#: A statement to prepare: the arms it was assembled from, which search it is, its SQL, and
#: the highest placeholder number that search binds.
Planned = tuple[list["Arm"], str, str, int]


def planned_statements(registry: Registry, chosen: Iterable[list[Arm]]) -> list[Planned]:
    """The statement a search assembles from each of the ``chosen`` combinations of the
    registry's arms, in their order, each with the default scope and with every scope
    option."""
    from engine.ranking.assemble import AssemblyError, assemble
    from engine.ranking.contract import Available
    from engine.ranking.scope import ScopeSpec, build_scope

    every_option = ScopeSpec(
        kinds=("semantic", "episodic"),
        tags=("infra",),
        path_prefix="people/",
        since="2026-01-01",
        until="2026-12-31",
    )
    scopes = (
        ("a search without scope options", build_scope(ScopeSpec())),
        ("a search with every scope option", build_scope(every_option)),
    )
    planned: list[Planned] = []
    for combination in chosen:
        # An arm weighted 0 in the registry can be weighted back in by a store's config.
        weights = {arm.name: 1.0 for arm in combination if arm.weight == 0}
        for label, scope in scopes:
            try:
                sql = assemble(Available(), scope.sql, arms=combination, weights=weights).sql
            except AssemblyError as exc:
                raise RegistryError(
                    registry.file, registry.line, f"cannot assemble: {exc}"
                ) from None
            planned.append((combination, label, sql, ENGINE_PLACEHOLDERS + len(scope.values)))
    return planned


def verdict_parts(index: EmptyIndex, planned: Sequence[Planned]) -> Iterator[str]:
    """Everything the verdict on ``planned`` depends on: the rules that judge SQLite's answer
    (this module's and the engine's preparing code), the index's SQLite and schema, and each
    statement with the placeholders its search binds."""
    import engine.sqlite.prepare

    for module in (__file__, engine.sqlite.prepare.__file__):
        yield Path(module).read_text(encoding="utf-8")
    yield index.identity()
    for _, _, sql, bound in planned:
        yield f"{bound}\n{sql}"


def rule_errors(registry: Registry) -> None:
    """The engine's registry rules (the assembler's own), each error at its field's line: for
    a placeholder an arm may not use, the line where the SQL uses it."""
    from engine.ranking.arm_rules import registry_problems

    entries = {entry.name: entry for entry in registry.arms}
    for problem in registry_problems(registry.arms):
        if not problem.error:
            continue
        entry = entries[problem.arm]
        line = entry.field_lines.get(problem.field, entry.start_line)
        used = re.match(r"arm '[^']*' uses \?(\d+)", problem.message)
        if used and problem.field == "sql":
            line = problem_line(entry, Problem("", re.compile(rf"\?{used.group(1)}(?!\d)"), True))
        raise RegistryError(registry.file, line, problem.message)


def blame(name: str, others: Sequence[str], label: str, problem: Problem) -> str:
    company = f" (assembled with {', '.join(others)})" if others else ""
    return (
        f"arm {name!r}{company} {problem.message} (the statement of {label}, prepared "
        "against an empty index, never run)"
    )


def problem_line(arm: ArmEntry, problem: Problem) -> int:
    """The line of the problem's spot in the arm's SQL, else the line its SQL starts on."""
    if problem.where is not None:
        found = list(problem.where.finditer(arm.sql))
        if len(found) == 1 or (found and problem.first):
            return arm.sql_line(found[0].start())
    return arm.sql_line()


def combinations(arms: Sequence[Arm]) -> Iterator[list[Arm]]:
    """Every non-empty combination of arms, smallest first, each in registry order; with more
    than EXHAUSTIVE_ARMS arms, each alone, all but one, and all."""
    count = len(arms)
    if count > EXHAUSTIVE_ARMS:
        sizes = itertools.chain(
            ((i,) for i in range(count)),
            itertools.combinations(range(count), count - 1),
            [tuple(range(count))],
        )
        for chosen in sizes:
            yield [arms[i] for i in chosen]
        return
    for size in range(1, count + 1):
        for chosen in itertools.combinations(range(count), size):
            yield [arms[i] for i in chosen]


def covering(arms: Sequence[Arm]) -> Iterator[list[Arm]]:
    """Each arm alone, then all together: the combinations a build prepares, in that order.

    An arm's SQL is the same in every company, a CTE of its own beside the others' CTEs, and
    the assembler (the engine's code, tested on its own) writes the rest, so what breaks an
    arm in some company shows in one of these: alone when it leans on another arm's CTE (a
    name only that arm brings), beside all the others when it clashes with one of them. A
    five-arm registry has 6 of them instead of 31 combinations: 12 statements to prepare
    instead of 62, on every first build."""
    count = len(arms)
    yield from ([arm] for arm in arms)
    if count > 1:
        yield list(arms)


def statement_problem(index: EmptyIndex, sql: str, bound: int) -> Problem | None:
    """What is wrong with ``sql`` when a search binds ``?1`` to ``?bound``, or None.

    The statement is prepared, never stepped, and only its first statement is prepared. It is
    prepared once, with the probe in front (the probe changes neither what follows the first
    statement nor whether it writes); only a statement SQLite refuses is prepared again as it
    is, so the reason given is SQLite's for the statement a search runs.
    """
    from engine.sqlite.prepare import Refused

    try:
        info = index.prepare(probed(sql))
    except Refused as probe_refused:
        try:
            index.prepare(sql)
        except Refused as exc:
            return refused(exc)
        raise probe_refused
    rest = info.remaining.strip()
    if rest:
        shown = " ".join(rest.split())
        shown = shown if len(shown) <= 40 else shown[:39] + "…"
        return Problem(
            f"ends the statement early: a `;` leaves `{shown}` as a second statement (never "
            "run here); an arm's SQL is one SELECT without `;`",
            re.compile(";"),
            first=True,
        )
    if not info.readonly:
        return Problem("makes a statement that writes; an arm's SQL only reads")
    for number, name in enumerate(info.bindings, start=1):
        if number == PROBE or (name is None and number < PROBE):
            continue  # the probe itself, or a number no placeholder uses
        if name is None:
            return Problem(
                f"uses a bare `?`, which the engine never binds; use {ARM_PLACEHOLDERS}",
                re.compile(r"\?(?!\d)"),
            )
        if not name.isdigit():
            where = re.compile(rf"[:@$]{re.escape(name)}(?!\w)")
            written = where.search(sql)
            return Problem(
                f"uses the named placeholder `{written.group(0) if written else name}`, which "
                f"the engine never binds (it binds numbered ones only); use {ARM_PLACEHOLDERS}",
                where,
            )
        if int(name) > bound:
            return Problem(
                f"uses ?{name}, which this search never binds; use {ARM_PLACEHOLDERS}",
                re.compile(rf"\?{name}(?!\d)"),
            )
    return None


def refused(exc: Exception) -> Problem:
    """SQLite's own reason, and the token it names, to find in the arm's SQL."""
    reason = str(exc)
    token = re.search(r'near "(.+?)": syntax error|no such \w+: (\S+)', reason)
    where = None
    if token:
        text = token.group(1) or token.group(2)
        # A word must be a whole word ("files" is not in "filesystem"); punctuation is itself.
        before = r"(?<!\w)" if re.match(r"\w", text) else ""
        after = r"(?!\w)" if re.search(r"\w$", text) else ""
        where = re.compile(before + re.escape(text) + after)
    return Problem(
        f"makes SQL that SQLite refuses: {reason}", where, first=reason.startswith('near ";"')
    )


def probed(sql: str) -> str:
    """``sql`` with an unused CTE naming ?PROBE in front, so a bare ``?`` is numbered past it."""
    probe = f"memsift_placeholder_probe AS (SELECT ?{PROBE})"
    head = _WITH.match(sql)
    if head:
        return f"{head.group(0)}{probe},\n{sql[head.end() :]}"
    return f"WITH {probe}\n{sql}"


def empty_index() -> AbstractContextManager[EmptyIndex]:
    """An empty index made by the engine's own DDL, the state plane attached the way a search
    attaches it; in a temporary folder that is removed afterwards."""
    from engine.sqlite.prepare import empty_index as engine_empty_index

    return engine_empty_index(PROBE_DIM)
