"""Quality checks on a registry that reads fine but would make a poor page or a leaky arm.

The rules are the engine's (:func:`engine.ranking.arm_rules.arm_problems`), the same the assembler
applies, so the page and the search cannot disagree about an entry. Here each problem is placed
on the line of the field it concerns, and reported as a warning: the page can still be built,
but the plugin logs it through MkDocs' plugin logger, so ``mkdocs build --strict`` fails.
"""

from __future__ import annotations

from dataclasses import dataclass

from arms_doc.reader import ArmEntry, Registry
from engine.ranking.arm_rules import arm_problems


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


def arm_findings(arm: ArmEntry) -> list[Finding]:
    """Quality problems of one arm, each on the line of its field."""
    return [
        Finding(arm.field_lines.get(problem.field, arm.start_line), problem.message)
        for problem in arm_problems(arm)
    ]
