"""Quality checks on a registry that reads fine but would make a poor page or a leaky arm.

These are warnings, not errors: the page can still be built. The plugin logs them through
MkDocs' plugin logger, so ``mkdocs build --strict`` fails on them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from arms_doc.reader import ArmEntry, Registry

#: Prose shorter than this cannot say what an arm ranks by, what it needs and when it drops.
MIN_PROSE_WORDS = 20
#: Placeholders an arm may use: ?1 FTS query text, ?2 candidate limit, ?4 query vector.
ARM_PLACEHOLDERS = frozenset({1, 2, 4})

_PLACEHOLDER = re.compile(r"\?(\d+)")
_STATE_SCHEMA = re.compile(r"\bstate\.", re.IGNORECASE)
_CANDIDATES = re.compile(r"\bcandidates\b", re.IGNORECASE)


@dataclass(frozen=True)
class Finding:
    """One quality problem: where it is and what to do about it."""

    line: int
    message: str


def quality_findings(registry: Registry) -> list[Finding]:
    """Every quality problem in ``registry``, in source order."""
    findings: list[Finding] = []
    if not (registry.docstring or "").strip():
        findings.append(
            Finding(
                1,
                "the registry module has no docstring, so the page cannot say why the arms are "
                "data; add a module docstring",
            )
        )
    for arm in registry.arms:
        findings.extend(arm_findings(arm))
    return findings


def reads_query(arm: ArmEntry) -> bool:
    """Arms that read the query find candidates; the others are priors that rank those."""
    return arm.needs_query_terms or arm.needs_query_vector


def arm_findings(arm: ArmEntry) -> list[Finding]:
    """Quality problems of one arm."""
    found: list[Finding] = []
    prose_line = arm.field_lines.get("prose", arm.start_line)
    sql_line = arm.field_lines.get("sql", arm.start_line)
    words = len(arm.prose.split())
    if words < MIN_PROSE_WORDS:
        found.append(
            Finding(
                prose_line,
                f"arm {arm.name!r} has {words} words of prose; say what it ranks by, what it "
                f"needs and when it drops out (at least {MIN_PROSE_WORDS} words)",
            )
        )
    if arm.weight == 0:
        found.append(
            Finding(
                arm.field_lines.get("weight", arm.start_line),
                f"arm {arm.name!r} has weight {arm.weight_text}, so every search drops it; "
                "give it a weight or remove the entry",
            )
        )
    if "{scope}" not in arm.sql:
        found.append(
            Finding(
                sql_line,
                f"arm {arm.name!r} never applies the shared {{scope}}, so it can return memories "
                "the other arms hide; filter with `WHERE {scope}`",
            )
        )
    used = {int(number) for number in _PLACEHOLDER.findall(arm.sql)}
    if reads_query(arm) and 2 not in used:
        found.append(
            Finding(
                sql_line,
                f"arm {arm.name!r} reads the query but does not cut its candidates at ?2; end "
                "its inner SELECT with `LIMIT ?2`",
            )
        )
    if not reads_query(arm) and not _CANDIDATES.search(arm.sql):
        found.append(
            Finding(
                sql_line,
                f"arm {arm.name!r} is a prior (it needs neither query terms nor a query vector) "
                "but does not rank only the `candidates`, so it can bring in memories the query "
                "did not ask for; add `AND f.path IN (SELECT path FROM candidates)`",
            )
        )
    for number in sorted(used - ARM_PLACEHOLDERS):
        found.append(
            Finding(
                sql_line,
                f"arm {arm.name!r} uses ?{number}; an arm may use only ?1 (FTS query text), "
                "?2 (candidate limit) and ?4 (query vector)",
            )
        )
    if 1 in used and not arm.needs_query_terms:
        found.append(
            Finding(
                sql_line,
                f"arm {arm.name!r} uses ?1 (FTS query text) but does not declare "
                "needs_query_terms=True; a search without terms would bind NULL",
            )
        )
    if 4 in used and not arm.needs_query_vector:
        found.append(
            Finding(
                sql_line,
                f"arm {arm.name!r} uses ?4 (query vector) but does not declare "
                "needs_query_vector=True; a search without a vector would bind NULL",
            )
        )
    if _STATE_SCHEMA.search(arm.sql) and not arm.needs_state_plane:
        found.append(
            Finding(
                sql_line,
                f"arm {arm.name!r} reads the state plane but does not declare "
                "needs_state_plane=True; a store without state.db would fail",
            )
        )
    return found
