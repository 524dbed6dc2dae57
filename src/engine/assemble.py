"""Fold the arm registry into one SQL statement.

The statement has one CTE per surviving arm, a ``fused`` CTE that sums ``weight / (60 + rank)``
per path, and a final SELECT that returns each hit with every arm's rank beside it (so
``--explain`` needs no second query). Arms that read the query come first; a ``candidates``
CTE unites what they found, and the prior arms (recency, salience) rank only those. Equal
scores are ordered by the first surviving arm's rank (registry order), then by path.

Weights are trusted configuration and are inlined as numeric literals; everything else is bound
through the numbered placeholders:

    ?1 FTS5 query text   ?2 per-arm candidate limit   ?3 final limit   ?4 query vector
    ?5 and up: scope values

Dropping an arm never renumbers the others. SQLite refuses a binding for an index no
placeholder names, so the caller binds the prefix of the full tuple up to the highest ``?N``
present (:func:`bound_prefix`).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from engine.arm_rules import WEIGHT_RULE, name_problem, weight_problem
from engine.arms import ARMS, Arm

RRF_K = 60
_PLACEHOLDER = re.compile(r"\?(\d+)")


@dataclass(frozen=True)
class Available:
    """Which inputs this search has; an arm needing a missing one is dropped."""

    query_vector: bool = True
    state_plane: bool = True
    query_terms: bool = True


@dataclass(frozen=True)
class Assembly:
    """The statement (empty when no arm survived), the arms in it and the arms dropped."""

    sql: str
    fired: tuple[Arm, ...]
    dropped: dict[str, str] = field(default_factory=dict)


class AssemblyError(ValueError):
    """A registry or weight that cannot make a valid statement."""


def missing_input(arm: Arm, available: Available) -> str | None:
    """The first precondition of ``arm`` that this search does not meet, as a reason."""
    if arm.needs_query_terms and not available.query_terms:
        return "no query terms"
    if arm.needs_query_vector and not available.query_vector:
        return "no query vector"
    if arm.needs_state_plane and not available.state_plane:
        return "no state plane"
    return None


def weight_literal(name: str, weight: float) -> str:
    """A weight as a SQL numeric literal; only finite, non-negative numbers are accepted."""
    if problem := weight_problem(weight):
        raise AssemblyError(f"arm {name!r}: weight {shown(weight)} is {problem}; {WEIGHT_RULE}")
    return repr(float(weight))


def shown(value: object, limit: int = 24) -> str:
    """A value as it can appear in a one-line message (an integer of more than 4,300 digits
    cannot even be printed by default)."""
    try:
        text = repr(value)
    except ValueError:
        return "an integer of thousands of digits"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def assemble(
    available: Available,
    scope_sql: str = "1",
    *,
    arms: Sequence[Arm] = ARMS,
    weights: Mapping[str, float] | None = None,
) -> Assembly:
    """Build the fused statement for the arms whose inputs are available.

    ``weights`` overrides registry weights by arm name (trusted configuration only); an arm
    weighted 0 is dropped, since it could only add rows that score nothing.
    """
    names = [arm.name for arm in arms]
    for name in names:
        if problem := name_problem(name):
            raise AssemblyError(problem)
    if len(set(names)) != len(names):
        raise AssemblyError(f"arm names must be unique, got {', '.join(names)}")
    weights = dict(weights or {})
    unknown = sorted(set(weights) - {arm.name for arm in arms})
    if unknown:
        raise AssemblyError(
            f"weights name unknown arm(s) {', '.join(unknown)}; known: "
            + ", ".join(arm.name for arm in arms)
        )
    fired: list[tuple[Arm, str]] = []
    dropped: dict[str, str] = {}
    for arm in arms:
        reason = missing_input(arm, available)
        weight = weights.get(arm.name, arm.weight)
        literal = weight_literal(arm.name, weight)
        if reason is None and weight == 0:
            reason = "weight 0 in configuration"
        if reason:
            dropped[arm.name] = reason
        else:
            fired.append((arm, literal))
    if not fired:
        return Assembly("", (), dropped)
    finders = [arm for arm, _ in fired if reads_query(arm)]
    priors = [arm for arm, _ in fired if not reads_query(arm)]
    ctes = [cte(arm, scope_sql) for arm in finders]
    if priors:
        pool = "\n    UNION\n".join(f"    SELECT path FROM arm_{arm.name}" for arm in finders)
        if not finders:
            pool = f"    SELECT f.path AS path FROM files AS f WHERE {scope_sql}"
        ctes.append(f"candidates AS (\n{pool}\n)")
        ctes.extend(cte(arm, scope_sql) for arm in priors)
    contributions = "\n    UNION ALL\n".join(
        f"    SELECT path, {literal} / ({RRF_K} + rank) AS contribution FROM arm_{arm.name}"
        for arm, literal in fired
    )
    ctes.append(
        "fused AS (\n    SELECT path, sum(contribution) AS score FROM (\n"
        f"{indent(contributions)}\n    )\n    GROUP BY path\n)"
    )
    # Equal fused scores go to the memory the first surviving arm in registry order ranks
    # higher (fts when it runs: an exact word is harder evidence than a near neighbour).
    lead = fired[0][0].name
    ranks = "".join(f",\n       arm_{arm.name}.rank AS {arm.name}_rank" for arm, _ in fired)
    joins = "".join(
        f"\nLEFT JOIN arm_{arm.name} ON arm_{arm.name}.path = fused.path" for arm, _ in fired
    )
    sql = (
        "WITH\n" + ",\n".join(ctes) + "\n"
        "SELECT f.path, f.title, f.kind, f.event_at, f.updated_at, f.tags, f.id, "
        f"fused.score{ranks}\n"
        "FROM fused\nJOIN files AS f ON f.path = fused.path"
        f"{joins}\n"
        f"ORDER BY fused.score DESC, arm_{lead}.rank IS NULL, arm_{lead}.rank, fused.path\n"
        "LIMIT ?3"
    )
    return Assembly(sql, tuple(arm for arm, _ in fired), dropped)


def reads_query(arm: Arm) -> bool:
    """Arms that read the query find candidates; the others (priors) only rank those."""
    return arm.needs_query_terms or arm.needs_query_vector


def cte(arm: Arm, scope_sql: str) -> str:
    return f"arm_{arm.name} AS (\n{indent(arm.sql.strip().replace('{scope}', scope_sql))}\n)"


def indent(text: str) -> str:
    return textwrap.indent(text, "    ")


def highest_placeholder(sql: str) -> int:
    """The highest ``?N`` in ``sql`` (0 when there is none)."""
    return max((int(n) for n in _PLACEHOLDER.findall(sql)), default=0)


def bound_prefix(sql: str, params: Sequence[object]) -> tuple[object, ...]:
    """The bindings for ``sql``: the prefix of the full tuple up to its highest ``?N``."""
    return tuple(params[: highest_placeholder(sql)])
