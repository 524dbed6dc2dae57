"""Page authority: what a memory says about itself, as a bounded multiplier of its fused score.

The arms rank memories by evidence about the query; a memory's own front matter can say how
far it should be trusted whatever the query: ``tags: [canonical]`` or ``[pinned]`` (raise it),
``[superseded]`` or ``[historical]`` (hold it down), ``[do-not-answer-from]`` (hold it down
hard). The signals are data the registry declares (:data:`engine.arms.AUTHORITY`), folded into
the fused statement by :mod:`engine.ranking.assemble` and shown on the arms page like the arms.

The rule, stated once here for the SQL and for ``--explain`` alike:

- a memory carrying none of the tags keeps its score (multiplier 1);
- each ``raise`` signal it carries multiplies the multiplier by its factor; the product is
  bounded by :data:`CEILING`, so stacking every raise cannot bury the other evidence;
- a ``cap`` signal it carries sets the multiplier to at most its factor, whatever raises it
  (a superseded memory stays down even when pinned); the lowest cap wins.

The multiplier is applied the way the seed system applies its authority (``adjust_rank``):
scores on either side of zero keep their meaning, a positive score is multiplied and a
negative one divided, so a trusted memory always moves toward the better end. Fused RRF scores
are positive, so today this is a multiplication; the form keeps it right for any arm set.

This module is pure: it checks entries, writes the SQL expression in each dialect and
evaluates the same rule in Python for a hit's explanation.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "CEILING",
    "EFFECTS",
    "AuthorityLike",
    "Verdict",
    "authority_problems",
    "authority_sql",
    "judge",
]

#: The largest multiplier raises can reach together: one raise is a nudge past a near-twin,
#: several cannot lift a memory over much stronger evidence (a first place in two arms scores
#: about 1.6 times a tenth place in both at k = 20).
CEILING = 1.5
#: What a signal does: multiply (``raise``, factor above 1) or bound (``cap``, factor below 1).
EFFECTS = ("raise", "cap")
#: Tags are inlined into the SQL as string literals, so they must be plain words.
TAG_PATTERN = re.compile(r"[a-z0-9][a-z0-9_.-]*")
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_-]*")


class AuthorityLike(Protocol):
    """What an authority signal carries (``engine.arms.Authority`` and the docs plugin's
    statically read entries)."""

    @property
    def name(self) -> str: ...
    @property
    def tags(self) -> tuple[str, ...]: ...
    @property
    def effect(self) -> str: ...
    @property
    def factor(self) -> float: ...


def authority_problems(signals: Sequence[AuthorityLike]) -> list[tuple[str, str, str]]:
    """What is wrong with the signals, as ``(signal, field, message)``; empty when nothing is.
    The assembler refuses a registry with any, the docs build names the registry line."""
    problems: list[tuple[str, str, str]] = []
    seen_names: set[str] = set()
    seen_tags: dict[str, str] = {}
    for signal in signals:
        name = signal.name
        if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
            problems.append(
                (str(name), "name", f"authority name {name!r} must be a lower-case word")
            )
        elif name in seen_names:
            problems.append((name, "name", f"authority {name!r} is declared twice; keep one"))
        seen_names.add(str(name))
        if signal.effect not in EFFECTS:
            problems.append(
                (
                    name,
                    "effect",
                    f"authority {name!r} has effect {signal.effect!r}; "
                    f"the effects are {', '.join(EFFECTS)}",
                )
            )
        factor = signal.factor
        if (
            isinstance(factor, bool)
            or not isinstance(factor, int | float)
            or not math.isfinite(factor)
        ):
            problems.append((name, "factor", f"authority {name!r} needs a finite number factor"))
        elif signal.effect == "raise" and not 1 < factor <= CEILING:
            problems.append(
                (
                    name,
                    "factor",
                    f"authority {name!r} raises by {factor}; a raise is a factor "
                    f"above 1 and at most the ceiling {CEILING}",
                )
            )
        elif signal.effect == "cap" and not 0 < factor < 1:
            problems.append(
                (
                    name,
                    "factor",
                    f"authority {name!r} caps at {factor}; a cap is a factor above 0 and below 1",
                )
            )
        if not signal.tags:
            problems.append((name, "tags", f"authority {name!r} names no tag; name one"))
        for tag in signal.tags:
            if not isinstance(tag, str) or not TAG_PATTERN.fullmatch(tag):
                problems.append(
                    (
                        name,
                        "tags",
                        f"authority {name!r} names tag {tag!r}; a tag here is "
                        "lower-case letters, digits, '-', '_' or '.' (tags are indexed lower-case)",
                    )
                )
            elif tag in seen_tags:
                problems.append(
                    (
                        name,
                        "tags",
                        f"tag {tag!r} is claimed by {seen_tags[tag]!r} and "
                        f"{name!r}; give each tag one signal",
                    )
                )
            else:
                seen_tags[tag] = name
    return problems


@dataclass(frozen=True)
class Verdict:
    """A memory's multiplier and the signals that made it, for ``--explain``."""

    factor: float
    signals: tuple[str, ...]


def judge(tags: Sequence[str], signals: Sequence[AuthorityLike]) -> Verdict:
    """The multiplier the statement gives a memory carrying ``tags`` (the same rule as
    :func:`authority_sql`, which a test holds them to)."""
    own = {t.lower() for t in tags}
    carried = [s for s in signals if own.intersection(s.tags)]
    caps = [s for s in carried if s.effect == "cap"]
    if caps:
        lowest = min(caps, key=lambda s: s.factor)
        return Verdict(float(lowest.factor), tuple(s.name for s in carried))
    product = 1.0
    for signal in carried:
        product *= float(signal.factor)
    return Verdict(min(product, CEILING), tuple(s.name for s in carried))


def authority_sql(signals: Sequence[AuthorityLike], dialect_name: str = "sqlite") -> str:
    """The multiplier of the memory ``f`` (the ``files`` row) as one SQL expression over a few
    lines, or "" when there are no signals (the statement then leaves the score alone)."""
    if not signals:
        return ""
    one = number(1.0, dialect_name)
    raises = [s for s in signals if s.effect == "raise"]
    caps = sorted((s for s in signals if s.effect == "cap"), key=lambda s: s.factor)
    smaller = "min" if dialect_name == "sqlite" else "least"
    factors = "\n    * ".join(
        f"CASE WHEN {carries(s.tags, dialect_name)} THEN {number(s.factor, dialect_name)} "
        f"ELSE {one} END"
        for s in raises
    )
    lifted = f"{smaller}({number(CEILING, dialect_name)},\n    {factors})" if raises else one
    if not caps:
        return unless_unmentioned(lifted, signals, dialect_name)
    bounds = "".join(
        f"    WHEN {carries(s.tags, dialect_name)} THEN {number(s.factor, dialect_name)}\n"
        for s in caps
    )
    lifted = lifted.replace("\n", "\n    ")
    return unless_unmentioned(f"CASE\n{bounds}    ELSE {lifted}\nEND", signals, dialect_name)


def unless_unmentioned(rule: str, signals: Sequence[AuthorityLike], dialect_name: str) -> str:
    """``rule``, preceded on SQLite by a test that gives a memory whose tags cannot hold any of
    the signals' tags its multiplier 1 at once.

    Every memory the fused statement ranks has its multiplier worked out (about 150 at 2,000
    memories), and each ``EXISTS`` over ``json_each`` parses its tags again: a tenth of the
    statement. The test reads the JSON text as it is. A tag the array holds is in that text
    letter for letter unless it is written with an escape, and every escape holds a backslash;
    so a text holding neither any signal's tag nor a backslash holds none of the tags (and
    ``rule`` would give it 1 too), while any other text is judged by ``rule`` itself.
    PostgreSQL keeps the rule alone (its tags are ``jsonb``, already parsed)."""
    if dialect_name != "sqlite":
        return rule
    words = [tag for signal in signals for tag in signal.tags] + ["\\"]
    mentioned = " OR ".join(f"instr(f.tags, '{word}')" for word in words)
    body = rule.replace("\n", "\n    ")
    one = number(1.0, dialect_name)
    return f"CASE\n    WHEN NOT ({mentioned}) THEN {one}\n    ELSE {body}\nEND"


def carries(tags: Sequence[str], dialect_name: str) -> str:
    """Whether the memory ``f`` carries any of ``tags`` (checked plain words: inlined)."""
    listed = ", ".join(f"'{t}'" for t in tags)
    if dialect_name == "sqlite":
        return f"EXISTS (SELECT 1 FROM json_each(f.tags) AS t WHERE t.value IN ({listed}))"
    return (
        "EXISTS (SELECT 1 FROM jsonb_array_elements_text(f.tags) AS t(value) "
        f"WHERE t.value IN ({listed}))"
    )


def number(value: float, dialect_name: str) -> str:
    """A factor as a literal that stays floating point in both dialects (PostgreSQL reads
    ``1.5`` as an exact numeric)."""
    literal = repr(float(value))
    return literal if dialect_name == "sqlite" else f"CAST({literal} AS double precision)"
