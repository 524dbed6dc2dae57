"""What an arm's name and weight must be, stated once.

The assembler checks the arms it folds and the docs plugin checks the registry it reads
statically; both call these functions, so they cannot disagree about an entry (they once did:
the plugin let ``_recency`` through and the assembler refused it, blaming the wrong line).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from engine.ranking.contract import (
    DIALECTS,
    INPUT_NAMES,
    INPUTS,
    PARAMS,
    Dialect,
    arm_params,
    described,
    placeholders,
)

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "LABEL_RULE",
    "WEIGHT_RULE",
    "arm_problems",
    "dialect_sql",
    "label_problem",
    "name_problem",
    "reads_query",
    "registry_problems",
    "weight_problem",
]

#: An arm's name becomes part of SQL identifiers (``arm_<name>``, ``<name>_rank``), a key of
#: ``config.toml``'s ``[weights]`` and of ``--json`` output: a lower-case word, no quoting.
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]*")
NAME_RULE = "a name starts with a lower-case letter and holds only lower-case letters, digits and _"

#: Weights are inlined into the SQL as numeric literals, so they must print as plain numbers.
WEIGHT_RULE = "a weight is a finite number >= 0"


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot name an arm (a sentence ending in the rule), or None if it can."""
    if isinstance(name, str) and NAME_PATTERN.fullmatch(name):
        return None
    return f"arm name {name!r} cannot be part of a SQL identifier; {NAME_RULE}"


def weight_problem(weight: object) -> str | None:
    """What ``weight`` is instead of a finite number >= 0 ("negative", "not finite", ...), or
    None when it is one.

    ``True`` is not a number here, and an integer too large for a float (a 401-digit literal)
    is refused instead of raising OverflowError where it is used.
    """
    if isinstance(weight, bool) or not isinstance(weight, int | float):
        return f"not a number but a {type(weight).__name__}"
    try:
        value = float(weight)
    except OverflowError:
        return "too large for a number"
    if math.isnan(value) or math.isinf(value):
        return "not finite"
    if value < 0:
        return "negative"
    return None


#: A label is printed inside a one-line account on stderr ("full-text ranking off: ...").
LABEL_RULE = 'a label is a few plain words on one line, e.g. "full-text ranking"'


def label_problem(label: object) -> str | None:
    """Why ``label`` cannot name an arm to a user, or None if it can."""
    if not isinstance(label, str) or not label.strip():
        return "empty"
    if not label.isprintable():
        return "not on one line (it holds a line break or a control character)"
    return None


# --------------------------------------------------------------------------- whole entries

_CANDIDATES = re.compile(r"\bcandidates\b", re.IGNORECASE)
#: Prose shorter than this cannot say what an arm ranks by, what it needs and when it drops.
MIN_PROSE_WORDS = 20


class ArmLike(Protocol):
    name: str
    label: str
    weight: float
    needs: tuple[str, ...]
    prose: str
    sql: str


def dialect_sql(arm: object, dialect: Dialect) -> str:
    """The arm's SQL in ``dialect`` ("" when the entry has none: a registry written before the
    dialect existed, or an arm not yet translated)."""
    value = getattr(arm, dialect.field, "")
    return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an entry: which arm, which field of it, what to do.

    An error makes a statement that cannot be trusted (the assembler refuses it, the docs build
    stops); a warning makes a poor page or a leaky arm (``mkdocs build --strict`` fails)."""

    arm: str
    field: str
    message: str
    error: bool = True


def reads_query(needs: tuple[str, ...]) -> bool:
    """Arms needing an input that finds (query terms, a query vector) find candidates; the
    others are priors that rank only those."""
    return any(i.finds for i in INPUTS if i.name in needs)


def arm_problems(arm: ArmLike) -> list[Problem]:
    """Every problem of one entry, errors first."""
    name = arm.name if isinstance(arm.name, str) else repr(arm.name)
    found: list[Problem] = []

    def add(field: str, message: str, error: bool = True) -> None:
        found.append(Problem(name, field, message, error))

    if problem := name_problem(arm.name):
        add("name", problem)
    if problem := label_problem(arm.label):
        add("label", f"arm {name!r}: label {arm.label!r} is {problem}; {LABEL_RULE}")
    if problem := weight_problem(arm.weight):
        add("weight", f"arm {name!r}: weight {arm.weight!r} is {problem}; {WEIGHT_RULE}")
    needs = tuple(arm.needs) if isinstance(arm.needs, tuple | list) else ()
    for need in needs:
        if need not in INPUT_NAMES:
            add(
                "needs",
                f"arm {name!r} needs {need!r}, which is not an input; known: "
                + ", ".join(INPUT_NAMES),
            )
    if not isinstance(arm.needs, tuple | list) or len(set(needs)) != len(needs):
        add("needs", f"arm {name!r}: needs must be a tuple of distinct input names")
    for dialect in DIALECTS:
        sql = dialect_sql(arm, dialect)
        if sql.strip() or dialect.field == "sql":
            found.extend(sql_problems(name, needs, sql, dialect))
    words = len(arm.prose.split())
    if words < MIN_PROSE_WORDS:
        add(
            "prose",
            f"arm {name!r} has {words} words of prose; say what it ranks by, what it needs and "
            f"when it drops out (at least {MIN_PROSE_WORDS} words)",
            error=False,
        )
    if weight_problem(arm.weight) is None and float(arm.weight) == 0:
        add(
            "weight",
            f"arm {name!r} has weight 0, so every search drops it; give it a weight or remove "
            "the entry",
            error=False,
        )
    return sorted(found, key=lambda p: not p.error)


def sql_problems(name: str, needs: tuple[str, ...], sql: str, dialect: Dialect) -> list[Problem]:
    """The problems of one arm's SQL in one dialect; the field named is the registry's field
    for that dialect (``sql``, ``pg_sql``), so a message points at the right string."""
    found: list[Problem] = []
    where = "" if dialect.field == "sql" else f" ({dialect.label})"

    def add(message: str, error: bool = True) -> None:
        message = message.replace(f"arm {name!r}", f"arm {name!r}{where}", 1)
        found.append(Problem(name, dialect.field, message, error))

    used = placeholders(sql)
    allowed = arm_params(needs)
    for number in sorted(used - allowed):
        holder = next((p for p in PARAMS if p.number == number), None)
        why = (
            f"?{number} belongs to the input {holder.input!r}, which the arm does not need "
            "(a search without it would bind NULL)"
            if holder is not None and holder.input
            else f"?{number} is not the arm's to use"
        )
        add(f"arm {name!r} uses ?{number}: {why}; it may use {described(allowed)}")
    if dialect.state_reference.search(sql) and "state_plane" not in needs:
        add(
            f"arm {name!r} reads the state plane but does not need 'state_plane'; a store "
            "without a state plane would fail",
        )
    if "{scope}" not in sql:
        add(
            f"arm {name!r} never applies the shared {{scope}}, so it can return memories the "
            "other arms hide; filter with `WHERE {scope}`",
            error=False,
        )
    if reads_query(needs) and 2 not in used:
        add(
            f"arm {name!r} reads the query but does not cut its candidates at ?2; end its inner "
            "SELECT with `LIMIT ?2`",
            error=False,
        )
    if not reads_query(needs) and not _CANDIDATES.search(sql):
        add(
            f"arm {name!r} is a prior (it needs neither query terms nor a query vector) but does "
            "not rank only the `candidates`, so it can bring in memories the query did not ask "
            f"for; add `AND f.{dialect.key} IN (SELECT {dialect.key} FROM candidates)`",
            error=False,
        )
    return found


def registry_problems(arms: Sequence[ArmLike]) -> list[Problem]:
    """Every problem of every entry, and names used twice."""
    found = [problem for arm in arms for problem in arm_problems(arm)]
    seen: set[str] = set()
    for arm in arms:
        if arm.name in seen:
            found.append(
                Problem(arm.name, "name", f"arm name {arm.name!r} is used twice; names are unique")
            )
        seen.add(arm.name)
    return found


class RegistryRuleError(ValueError):
    """A registry that cannot make a trustworthy statement."""


def validate(arms: Sequence[ArmLike]) -> None:
    """Raise on the first error of ``arms`` (warnings are the docs build's business)."""
    for problem in registry_problems(arms):
        if problem.error:
            raise RegistryRuleError(problem.message)
