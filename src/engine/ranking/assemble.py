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

import re
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
from engine.ranking.authority import (
    CEILING,
    AuthorityLike,
    authority_problems,
    authority_sql,
    number,
)
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
    key = target.key
    ctes = [cte(arm, scope_sql, target) for arm in finders]
    if len(fired) == 1 and not finders and LISTING.search(dialect_sql(fired[0][0], target)):
        ctes.extend(listed(fired[0][0], fired[0][1], scope_sql, target, factor))
    elif priors:
        pool = "\n    UNION\n".join(f"    SELECT {key} FROM arm_{arm.name}" for arm in finders)
        if not finders:
            pool = f"    SELECT f.{key} AS {key} FROM files AS f WHERE {scope_sql}"
        ctes.append(f"candidates AS (\n{pool}\n)")
        ctes.append(f"listing AS (\n    {NO_LISTING}\n)")
        ctes.extend(cte(arm, scope_sql, target) for arm in priors)
    names = [arm.name for arm, _ in fired]
    # Each row carries its arm's name and rank, so ``fused`` keeps every arm's rank beside the
    # score and the final SELECT needs no join back to each arm by path: at 2,000 memories
    # those joins (an automatic index apiece) were a sixth of the statement's time.
    contributions = "\n    UNION ALL\n".join(
        f"    SELECT {key}, {literal} / ({RRF_K} + rank) AS contribution, "
        f"'{arm.name}' AS arm, rank FROM arm_{arm.name}"
        for arm, literal in fired
    )
    carried = "".join(
        f",\n           max(CASE arm WHEN '{name}' THEN rank END) AS {name}_rank" for name in names
    )
    ctes.append(
        f"fused AS (\n    SELECT {key}, sum(contribution) AS score{carried}\n    FROM (\n"
        f"{indent(contributions)}\n    )\n    GROUP BY {key}\n)"
    )
    # Equal fused scores go to the memory the first surviving arm in registry order ranks
    # higher (fts when it runs: an exact word is harder evidence than a near neighbour).
    lead = names[0]
    ranks = "".join(f",\n           fused.{name}_rank AS {name}_rank" for name in names)
    # Authority scales the fused score after fusion; without signals the score is the sum.
    # Each hit's row of ``files`` and its multiplier are read once, into ``weighed``: written
    # as a join in the final SELECT, SQLite evaluated the multiplier's tag lookups three times
    # per memory and built an automatic index on ``fused`` to join it back (a tenth of a
    # search at 2,000 memories).
    multiplier = indent(factor, 11).strip() if factor else number(1.0, target.name)
    # The sign decides (the seed's adjust_rank): a positive score is multiplied, a negative
    # one divided, so a larger multiplier always moves a memory toward the better end.
    score = (
        "CASE WHEN fused_score >= 0 THEN fused_score * authority ELSE fused_score / authority END"
        if factor
        else "fused_score"
    )
    columns = "".join(f", {name}_rank" for name in names)
    if target.name == "sqlite":
        sql = ordered_then_shown(ctes, multiplier, ranks, score, columns, lead)
        return Assembly(sql, tuple(arm for arm, _ in fired), dropped, tuple(routine))
    tags = "f.tags::text"
    ctes.append(
        "weighed AS MATERIALIZED (\n"
        "    SELECT f.path AS path, f.title AS title, f.kind AS kind, f.event_at AS event_at,\n"
        f"           f.id AS file_id, fused.score AS fused_score,\n"
        f"           {multiplier} AS authority,\n"
        f"           {tags} AS tags{ranks}\n"
        f"    FROM fused\n    JOIN files AS f ON f.{key} = fused.{key}\n)"
    )
    sql = (
        "WITH\n" + ",\n".join(ctes) + "\n"
        "SELECT path, title, kind, event_at, file_id,\n"
        f"       {score} AS score,\n"
        f"       authority, tags{columns}\n"
        "FROM weighed\n"
        f"ORDER BY score DESC, {lead}_rank IS NULL, {lead}_rank, path\n"
        "LIMIT ?3"
    )
    return Assembly(sql, tuple(arm for arm, _ in fired), dropped, tuple(routine))


def ordered_then_shown(
    ctes: list[str], multiplier: str, ranks: str, score: str, columns: str, lead: str
) -> str:
    """The end of the SQLite statement: order the fused memories, then read what a hit shows.

    ``weighed`` holds what the order needs (the path breaks ties) and ``ranked`` orders it;
    the title, kind, date and tags are read from ``files`` by row id only for the rows a
    search actually reads (it stops after the hits and the semantic arm's first: about a
    dozen of some 150), instead of being copied for every memory into ``weighed`` and the
    sort. The final ORDER BY repeats ``ranked``'s, so the order is the statement's own
    whatever the join; SQLite keeps ``ranked``'s order and only settles equal scores."""
    ctes.append(
        "weighed AS MATERIALIZED (\n"
        "    SELECT f.id AS file_id, f.path AS path, fused.score AS fused_score,\n"
        f"           {multiplier} AS authority{ranks}\n"
        "    FROM fused\n    JOIN files AS f ON f.id = fused.id\n)"
    )
    ctes.append(
        "ranked AS (\n"
        f"    SELECT file_id, path,\n           {score} AS score,\n"
        f"           authority{columns}\n"
        "    FROM weighed\n"
        f"    ORDER BY score DESC, {lead}_rank IS NULL, {lead}_rank, path\n"
        "    LIMIT ?3\n)"
    )
    shown = "".join(f", r.{name} AS {name}" for name in columns.split(", ") if name)
    return (
        "WITH\n" + ",\n".join(ctes) + "\n"
        "SELECT r.path AS path, f.title AS title, f.kind AS kind, f.event_at AS event_at,\n"
        "       r.file_id AS file_id, r.score AS score, r.authority AS authority,\n"
        f"       f.tags AS tags{shown}\n"
        "FROM ranked AS r\n"
        "CROSS JOIN files AS f ON f.id = r.file_id\n"
        f"ORDER BY r.score DESC, r.{lead}_rank IS NULL, r.{lead}_rank, r.path\n"
        "LIMIT ?3"
    )


#: An arm whose SQL reads ``listing`` can list: see :func:`listed`.
LISTING = re.compile(r"\blisting\b")
#: ``listing`` when the arm ranks every candidate: no row.
NO_LISTING = "SELECT 1 AS alone LIMIT 0"
#: ``candidates`` of an arm's first rows in a listing: none (those rows never read them); by
#: the type of each dialect's key.
NO_CANDIDATES = {
    "path": "SELECT CAST(NULL AS text) AS path LIMIT 0",
    "id": "SELECT CAST(NULL AS integer) AS id LIMIT 0",
}
#: Slack on the bound :func:`listed` checks, so a rounding of the last bit can never let a
#: memory past the first rows tie the last hit unseen.
BOUND_SLACK = 1 + 1e-9


def listed(arm: Arm, literal: str, scope_sql: str, target: Dialect, factor: str) -> list[str]:
    """The CTEs of a listing: no query arm runs and ``arm``, a prior, ranks alone, so the
    candidates are every memory in scope (a search with no words and no vector: "what is
    recent"). Ranking all of them to keep ten costs a sort of the whole scope (149 ms at
    50,000 memories for recency, against 8 ms for the full-text arm).

    The arm reads the one-row CTE ``listing`` and gives only its first ``?2`` rows in its
    order, ties by path (recency reads them from the index on the moment); their ranks are
    exact, since every memory ranked above one of them is among them. Fused alone, a memory's
    score is ``weight / (k + rank)`` times its authority, so a memory past those rows scores at
    most :data:`~engine.ranking.authority.CEILING` times the score of the last row's rank.
    ``listed_enough`` checks that the ``?3``-th best of the first rows beats that bound (or
    that the first rows were all there is); when it does not (a store where most recent
    memories are capped, or the moments tie past ``?2``), the same statement ranks every
    candidate as before. Either way ``arm_<name>`` holds the rows the hits need, with the
    ranks of a full ranking, and the fold below is unchanged."""
    name, key = arm.name, target.key
    own = with_ctes(
        dialect_sql(arm, target).strip().replace("{scope}", scope_sql),
        ["listing AS (SELECT 1 AS alone)", f"candidates AS ({NO_CANDIDATES[key]})"],
    )
    first = f"arm_{name}_first AS (\n{indent(own)}\n)"
    ceiling = CEILING if factor else 1.0
    bound = number(ceiling * float(literal_value(literal)) * BOUND_SLACK, target.name)
    adjusted = f"{literal} / ({RRF_K} + a.rank)"
    if factor:
        adjusted = f"{adjusted} * ({indent(factor, 12).strip()})"
    enough = (
        f"listed_enough AS (\n"
        f"    SELECT (SELECT count(*) FROM arm_{name}_first) < ?2\n"
        f"           OR coalesce((\n"
        f"               SELECT {adjusted} AS adjusted\n"
        f"               FROM arm_{name}_first AS a\n"
        f"               JOIN files AS f ON f.{key} = a.{key}\n"
        f"               ORDER BY adjusted DESC\n"
        f"               LIMIT 1 OFFSET ?3 - 1\n"
        f"           ), 0) > {bound} / ({RRF_K} + (SELECT max(rank) FROM arm_{name}_first))"
        " AS ok\n)"
    )
    every = "-1" if target.name == "sqlite" else "NULL"
    pool = (
        f"candidates AS (\n    SELECT f.{key} AS {key} FROM files AS f WHERE {scope_sql}\n"
        f"    LIMIT CASE WHEN (SELECT ok FROM listed_enough) THEN 0 ELSE {every} END\n)"
    )
    whole = cte(arm, scope_sql, target, name=f"{name}_every")
    chosen = (
        f"arm_{name} AS (\n"
        f"    SELECT {key}, rank FROM arm_{name}_first WHERE (SELECT ok FROM listed_enough)\n"
        f"    UNION ALL\n"
        f"    SELECT {key}, rank FROM arm_{name}_every\n)"
    )
    return [first, enough, pool, f"listing AS (\n    {NO_LISTING}\n)", whole, chosen]


def literal_value(literal: str) -> float:
    """The number a weight literal of :func:`weight_literal` spells, in either dialect."""
    return float(re.sub(r"^CAST\((.*) AS double precision\)$", r"\1", literal))


def with_ctes(sql: str, definitions: list[str]) -> str:
    """``sql`` with ``definitions`` as its first CTEs (merged into its own WITH if it has one)."""
    head = "WITH " + ",\n     ".join(definitions)
    if re.match(r"WITH\b", sql, re.IGNORECASE):
        return f"{head},\n{sql[4:].lstrip()}"
    return f"{head}\n{sql}"


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


def cte(arm: Arm, scope_sql: str, target: Dialect | None = None, name: str = "") -> str:
    """The arm's CTE (``arm_<name>``, the arm's name by default): its fragment in ``target``
    (SQLite by default) with the scope pasted in."""
    target = target or dialect("sqlite")
    sql = dialect_sql(arm, target)
    if not sql.strip():
        raise AssemblyError(f"arm {arm.name!r} has no {target.label} SQL (its `{target.field}`)")
    return f"arm_{name or arm.name} AS (\n{indent(sql.strip().replace('{scope}', scope_sql))}\n)"


def indent(text: str, spaces: int = 4) -> str:
    return textwrap.indent(text, " " * spaces)
