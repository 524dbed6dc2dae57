"""The fused statement's contract, stated once as data: what a search may bind, and when.

Every search is one SQL statement assembled from the arm registry. The arms, the scope
builder, the search, the docs plugin's checks and the reference page all need to agree on the
same few facts: which numbered placeholder holds what, which input makes which placeholders
meaningful, and where the scope's values begin. Those facts live here and nowhere else; the
others read these tables.

Placeholders are numbered, never named, and never renumbered: an arm that drops out leaves a
gap, and the caller binds the prefix of the full tuple up to the highest ``?N`` the statement
holds (SQLite refuses a binding no placeholder names). The scope's values follow the fixed
ones, from :data:`FIRST_SCOPE_PARAM` on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "DIALECTS",
    "FIRST_SCOPE_PARAM",
    "INPUTS",
    "INPUT_NAMES",
    "PARAMS",
    "Available",
    "Dialect",
    "bind",
    "bound_prefix",
    "described",
]


@dataclass(frozen=True)
class Input:
    """Something a search may or may not have; an arm that needs a missing one drops out."""

    name: str
    #: What it is, as the reference page says it.
    doc: str
    #: True when an arm needing it reads the query and so finds candidates of its own; an arm
    #: needing none of these is a prior that ranks only what the query arms found.
    finds: bool
    #: The reason given when it is missing and the search knows no more specific one.
    missing: str
    #: True when its absence is the normal case (most queries name no time; a store has no
    #: state plane until a memory is read): an arm dropped for it is not worth a warning.
    routine: bool = False


INPUTS: tuple[Input, ...] = (
    Input("query_terms", "words of the query, as FTS5 query text", True, "no query terms"),
    Input("query_vector", "the query's embedding", True, "no query vector"),
    Input(
        "query_time",
        "a time the query names (a date, a month, a year)",
        False,
        "the query names no date or period",
        routine=True,
    ),
    Input(
        "state_plane",
        "the state plane (`state.db`, attached as `state`)",
        False,
        "no state plane",
        routine=True,
    ),
)
INPUT_NAMES = tuple(i.name for i in INPUTS)


@dataclass(frozen=True)
class Param:
    """One numbered placeholder of the fused statement."""

    number: int
    name: str
    doc: str
    #: The input that gives it a value; None for the limits, which every search binds.
    input: str | None = None
    #: True when an arm's own SQL may use it (the final limit belongs to the assembler).
    for_arms: bool = True


PARAMS: tuple[Param, ...] = (
    Param(1, "match", "the FTS5 query text", "query_terms"),
    Param(2, "candidate_limit", "how many candidates each query arm offers"),
    Param(
        3,
        "limit",
        "how many places of the fused ranking a search reads: the hits it returns are the "
        "first of them; with a query vector, at least the candidate pool, so that the no-answer "
        "rule finds the vector arm's first among them",
        for_arms=False,
    ),
    Param(4, "query_vector", "the query vector (a float32 blob)", "query_vector"),
    Param(5, "time_from", "start of the time the query names (UTC text)", "query_time"),
    Param(6, "time_to", "end of the time the query names (UTC text)", "query_time"),
)
#: Below this share of the chunks embedded with the configured model, the vector arm drops and
#: the search is marked degraded (both backends count coverage the same way).
MIN_VECTOR_COVERAGE = 0.95

#: The scope's values are bound from here on, as many as the scope needs.
FIRST_SCOPE_PARAM = max(p.number for p in PARAMS) + 1

PLACEHOLDER = re.compile(r"\?(\d+)")


@dataclass(frozen=True)
class Dialect:
    """A SQL dialect the fused statement is written in; each arm carries one fragment per
    dialect, in the registry field named here."""

    name: str
    #: The :class:`engine.arms.Arm` field holding the arm's SQL in this dialect.
    field: str
    #: How people call it (the docs, messages).
    label: str
    #: How an arm's SQL reads the state plane in this dialect (an arm doing so must need it).
    state_reference: re.Pattern[str]
    #: The column of ``files`` that names a memory in the rows of an arm, ``candidates`` and
    #: the fold: each arm yields ``(<key>, rank)``. SQLite uses the row id, so every step that
    #: looks a memory up (the priors' ``IN (SELECT id FROM candidates)``, the fold's GROUP BY,
    #: the join back to ``files``) goes straight to the row instead of through the index on
    #: ``path`` (a fifteenth of a search at 2,000 memories); PostgreSQL keeps ``path``.
    key: str = "path"


DIALECTS: tuple[Dialect, ...] = (
    Dialect("sqlite", "sql", "SQLite", re.compile(r"\bstate\.", re.IGNORECASE), key="id"),
    Dialect("postgresql", "pg_sql", "PostgreSQL", re.compile(r"\bstate_access\b", re.IGNORECASE)),
)
DIALECT_BY_NAME = {d.name: d for d in DIALECTS}


def dialect(name: str) -> Dialect:
    """The dialect called ``name``; a ValueError naming the known ones otherwise."""
    try:
        return DIALECT_BY_NAME[name]
    except KeyError:
        known = ", ".join(DIALECT_BY_NAME)
        raise ValueError(f"no SQL dialect {name!r}; known: {known}") from None


def pyformat(sql: str) -> str:
    """``sql`` for psycopg, the one place numbered placeholders are translated: ``?N`` becomes
    ``%(pN)s`` (psycopg binds a name used twice once, as SQLite binds ``?N``) and a literal
    ``%`` is doubled. Pair it with :func:`named` for the values."""
    return PLACEHOLDER.sub(lambda m: f"%(p{m.group(1)})s", sql.replace("%", "%%"))


def named(sql: str, params: Sequence[object]) -> dict[str, object]:
    """The values of the full numbered tuple ``params`` that ``sql``'s ``?N`` use, by the names
    :func:`pyformat` gives them."""
    return {f"p{n}": params[n - 1] for n in sorted(placeholders(sql))}


def placeholders(sql: str) -> set[int]:
    """The numbers of every ``?N`` in ``sql``."""
    return {int(n) for n in PLACEHOLDER.findall(sql)}


def arm_params(needs: Sequence[str]) -> set[int]:
    """The placeholders an arm needing ``needs`` may use: the candidate limit, and those of
    its inputs (a placeholder of an input the arm does not need could be bound to NULL)."""
    return {p.number for p in PARAMS if p.for_arms and (p.input is None or p.input in needs)}


def param(number: int) -> Param:
    return next(p for p in PARAMS if p.number == number)


def described(numbers: Sequence[int] | set[int]) -> str:
    """ "?1 (the FTS5 query text), ?2 (…)" for messages."""
    return ", ".join(f"?{n} ({param(n).doc})" for n in sorted(numbers))


@dataclass(frozen=True)
class Available:
    """Which inputs this search lacks, each with the reason; the assembler alone decides which
    arms drop from it."""

    missing: Mapping[str, str] = field(default_factory=dict)

    def lacking(self, needs: Sequence[str]) -> str | None:
        """The first input of ``needs`` this search lacks, or None."""
        return next((need for need in needs if need in self.missing), None)

    def reason(self, needs: Sequence[str]) -> str | None:
        """Why an arm needing ``needs`` cannot run (the first missing input), or None."""
        need = self.lacking(needs)
        return None if need is None else self.missing[need]


def bind(values: Mapping[str, object], scope_values: Sequence[object]) -> tuple[object, ...]:
    """The full tuple of bindings in placeholder order: every fixed parameter by name (missing
    ones are NULL), then the scope's values."""
    unknown = set(values) - {p.name for p in PARAMS}
    if unknown:
        raise ValueError(f"no such parameter: {', '.join(sorted(unknown))}")
    fixed = [values.get(p.name) for p in sorted(PARAMS, key=lambda p: p.number)]
    return (*fixed, *scope_values)


def bound_prefix(sql: str, params: Sequence[object]) -> tuple[object, ...]:
    """The bindings for ``sql``: the prefix of the full tuple up to its highest ``?N``."""
    return tuple(params[: max(placeholders(sql), default=0)])
