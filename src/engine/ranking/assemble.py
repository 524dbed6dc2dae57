"""Fold the arm registry into one SQL statement.

The statement has one CTE per surviving arm, a ``fused`` CTE that sums ``weight / (k + rank)``
per path, and a final SELECT that returns each hit with every arm's rank beside it (so
``--explain`` needs no second query). Arms that read the query come first; a ``candidates``
CTE unites what they found, and the prior arms (recency, salience) rank only those. Equal
scores are ordered by the first surviving arm's rank (registry order), then by path.

Weights are trusted configuration and are inlined as numeric literals; everything else is bound
through the numbered placeholders of :mod:`engine.ranking.contract`, which also says which inputs a
search may lack. The assembler alone decides which arms drop, from the reasons the search gives
in :class:`~engine.ranking.contract.Available`. Dropping an arm never renumbers the others.

The final SELECT names its columns (:data:`RESULT_COLUMNS`, then ``<arm>_rank`` per arm that
fired), so the search reads them by name.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from engine.arms import ARMS, AUTHORITY, Arm
from engine.ranking.arm_rules import (
    WEIGHT_RULE,
    RegistryRuleError,
    dialect_sql,
    reads_query,
    validate,
    weight_problem,
)
from engine.ranking.authority import AuthorityLike, authority_problems, authority_sql, number
from engine.ranking.contract import INPUTS, Available, Dialect, dialect

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "RRF_K",
    "AssemblyError",
    "assemble",
]

INPUT_BY_NAME = {i.name: i for i in INPUTS}

#: The fusion constant k in ``weight / (k + rank)``. Smaller k lets a first place count for
#: more against a fifth; 20 was chosen with the weights, leave one set out, over every
#: evaluation set (benchmarks/results/tuning.json; it was 60, the constant of the RRF paper).
RRF_K = 20
#: The columns of every hit the statement returns, before one ``<arm>_rank`` per fired arm.
RESULT_COLUMNS = ("path", "title", "kind", "event_at", "file_id", "score", "authority", "tags")


@dataclass(frozen=True)
class Assembly:
    """The statement (empty when no arm survived), the arms in it and the arms dropped."""

    sql: str
    fired: tuple[Arm, ...]
    dropped: dict[str, str] = field(default_factory=dict)
    #: Arms dropped in the normal course of things (an input whose absence is routine, such as
    #: a query naming no time): reported in the result, not worth a warning.
    routine: tuple[str, ...] = ()


class AssemblyError(ValueError):
    """A registry or weight that cannot make a valid statement."""


def resolve_weights(
    arms: Sequence[Arm], configured: Mapping[str, float], override: Mapping[str, float] | None
) -> dict[str, float]:
    """Every arm's weight for one search: the caller's override when given (even an empty one,
    which means the registry's weights), else the store's configuration, else the registry.
    Resolved once, so the statement's literals and ``--explain``'s contributions agree."""
    chosen = configured if override is None else override
    unknown = sorted(set(chosen) - {arm.name for arm in arms})
    if unknown:
        raise AssemblyError(
            f"weights name unknown arm(s) {', '.join(unknown)}; known: "
            + ", ".join(arm.name for arm in arms)
        )
    return {arm.name: chosen.get(arm.name, arm.weight) for arm in arms}


def weight_literal(name: str, weight: float, dialect_name: str = "sqlite") -> str:
    """A weight as a SQL numeric literal; only finite, non-negative numbers are accepted.

    PostgreSQL reads ``1.0`` as an exact numeric, which would make every score a Decimal; the
    cast keeps the fusion in floating point there, as it is in SQLite."""
    if problem := weight_problem(weight):
        raise AssemblyError(f"arm {name!r}: weight {shown(weight)} is {problem}; {WEIGHT_RULE}")
    literal = repr(float(weight))
    return literal if dialect_name == "sqlite" else f"CAST({literal} AS double precision)"


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
    dialect_name: str = "sqlite",
    authority: Sequence[AuthorityLike] = AUTHORITY,
) -> Assembly:
    """Build the fused statement for the arms whose inputs are available, in the SQL dialect
    ``dialect_name`` (each arm's fragment for it; the fold itself is the same on both).

    ``weights`` overrides registry weights by arm name (trusted configuration only, resolved by
    :func:`resolve_weights`); an arm weighted 0 is dropped, since it could only add rows that
    score nothing. ``authority`` are the signals that scale a memory's fused score
    (:mod:`engine.ranking.authority`); the statement returns each hit's multiplier.
    """
    checked(tuple(arms))
    try:
        target = dialect(dialect_name)
    except ValueError as exc:
        raise AssemblyError(str(exc)) from None
    factor = authority_factor(tuple(authority), target.name)
    weights = resolve_weights(arms, {}, weights or {})
    fired: list[tuple[Arm, str]] = []
    dropped: dict[str, str] = {}
    routine: list[str] = []
    for arm in arms:
        need = available.lacking(arm.needs)
        reason = available.reason(arm.needs)
        weight = weights[arm.name]
        literal = weight_literal(arm.name, weight, target.name)
        if reason is None and weight == 0:
            reason = "weight 0 in configuration"
        if reason:
            dropped[arm.name] = reason
            if need is not None and INPUT_BY_NAME[need].routine:
                routine.append(arm.name)
        else:
            fired.append((arm, literal))
    if not fired:
        return Assembly("", (), dropped, tuple(routine))
    finders = [arm for arm, _ in fired if reads_query(arm.needs)]
    priors = [arm for arm, _ in fired if not reads_query(arm.needs)]
    ctes = [cte(arm, scope_sql, target) for arm in finders]
    if priors:
        pool = "\n    UNION\n".join(f"    SELECT path FROM arm_{arm.name}" for arm in finders)
        if not finders:
            pool = f"    SELECT f.path AS path FROM files AS f WHERE {scope_sql}"
        ctes.append(f"candidates AS (\n{pool}\n)")
        ctes.extend(cte(arm, scope_sql, target) for arm in priors)
    names = [arm.name for arm, _ in fired]
    # Each row carries its arm's name and rank, so ``fused`` keeps every arm's rank beside the
    # score and the final SELECT needs no join back to each arm by path: at 2,000 memories
    # those joins (an automatic index apiece) were a sixth of the statement's time.
    contributions = "\n    UNION ALL\n".join(
        f"    SELECT path, {literal} / ({RRF_K} + rank) AS contribution, "
        f"'{arm.name}' AS arm, rank FROM arm_{arm.name}"
        for arm, literal in fired
    )
    carried = "".join(
        f",\n           max(CASE arm WHEN '{name}' THEN rank END) AS {name}_rank" for name in names
    )
    ctes.append(
        f"fused AS (\n    SELECT path, sum(contribution) AS score{carried}\n    FROM (\n"
        f"{indent(contributions)}\n    )\n    GROUP BY path\n)"
    )
    # Equal fused scores go to the memory the first surviving arm in registry order ranks
    # higher (fts when it runs: an exact word is harder evidence than a near neighbour).
    lead = names[0]
    ranks = "".join(f",\n       fused.{name}_rank AS {name}_rank" for name in names)
    # Authority scales the fused score after fusion; without signals the score is the sum.
    if factor:
        ctes.append(
            f"weighed AS (\n    SELECT fused.path AS path,\n{indent(factor, 7)} AS authority\n"
            "    FROM fused\n    JOIN files AS f ON f.path = fused.path\n)"
        )
        # The sign decides (the seed's adjust_rank): a positive score is multiplied, a negative
        # one divided, so a larger multiplier always moves a memory toward the better end.
        score = (
            "CASE WHEN fused.score >= 0 THEN fused.score * weighed.authority "
            "ELSE fused.score / weighed.authority END"
        )
        joined = "JOIN weighed ON weighed.path = fused.path\n"
        multiplier = "weighed.authority"
    else:
        score, joined, multiplier = "fused.score", "", number(1.0, target.name)
    tags = "f.tags" if target.name == "sqlite" else "f.tags::text"
    sql = (
        "WITH\n" + ",\n".join(ctes) + "\n"
        "SELECT f.path AS path, f.title AS title, f.kind AS kind, f.event_at AS event_at,\n"
        f"       f.id AS file_id, {score} AS score,\n"
        f"       {multiplier} AS authority, {tags} AS tags{ranks}\n"
        f"FROM fused\nJOIN files AS f ON f.path = fused.path\n{joined}"
        f"ORDER BY score DESC, fused.{lead}_rank IS NULL, fused.{lead}_rank, fused.path\n"
        "LIMIT ?3"
    )
    return Assembly(sql, tuple(arm for arm, _ in fired), dropped, tuple(routine))


#: Registries already validated in this process: a search is assembled on every call, and the
#: rules (which parse each arm's SQL) need not run again for entries that cannot change.
_valid: set[tuple[Arm, ...]] = set()


def checked(arms: tuple[Arm, ...]) -> None:
    """Validate ``arms`` once per process; raise :class:`AssemblyError` if it breaks a rule."""
    if arms in _valid:
        return
    try:
        validate(arms)
    except RegistryRuleError as exc:
        raise AssemblyError(str(exc)) from None
    _valid.add(arms)


#: The multiplier's SQL per set of authority signals and dialect, checked and written once:
#: a search assembles its statement on every call, and the signals cannot change.
_factors: dict[tuple[tuple[AuthorityLike, ...], str], str] = {}


def authority_factor(signals: tuple[AuthorityLike, ...], dialect_name: str) -> str:
    """The authority multiplier's SQL for ``signals`` (:func:`authority_sql`), refused with
    :class:`AssemblyError` when a signal breaks a rule."""
    key = (signals, dialect_name)
    if key not in _factors:
        if problems := authority_problems(signals):
            raise AssemblyError("; ".join(message for _, _, message in problems))
        _factors[key] = authority_sql(signals, dialect_name)
    return _factors[key]


def cte(arm: Arm, scope_sql: str, target: Dialect | None = None) -> str:
    """The arm's CTE: its fragment in ``target`` (SQLite by default) with the scope pasted in."""
    target = target or dialect("sqlite")
    sql = dialect_sql(arm, target)
    if not sql.strip():
        raise AssemblyError(f"arm {arm.name!r} has no {target.label} SQL (its `{target.field}`)")
    return f"arm_{arm.name} AS (\n{indent(sql.strip().replace('{scope}', scope_sql))}\n)"


def indent(text: str, spaces: int = 4) -> str:
    return textwrap.indent(text, " " * spaces)
