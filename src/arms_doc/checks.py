"""Quality findings on a registry that reads fine but would make a poor page or a leaky arm.

The rules are the engine's (``engine.arm_rules.registry_problems``, the same function the
assembler validates with); its warnings become findings here, placed at the line of the field
they are about. They are warnings, not errors: the page can still be built. The plugin logs
them through MkDocs' plugin logger, so ``mkdocs build --strict`` fails on them.
"""

from __future__ import annotations

from dataclasses import dataclass

from arms_doc.reader import Registry
from engine.arm_rules import registry_problems


@dataclass(frozen=True)
class Finding:
    """One quality problem: where it is and what to do about it."""

    line: int
    message: str


def quality_findings(registry: Registry) -> list[Finding]:
    """Every quality problem in ``registry``: the module's docstring, then each arm's."""
    findings: list[Finding] = []
    if not (registry.docstring or "").strip():
        findings.append(
            Finding(
                1,
                "the registry module has no docstring, so the page cannot say why the arms are "
                "data; add a module docstring",
            )
        )
    entries = {arm.name: arm for arm in registry.arms}
    for problem in registry_problems(registry.arms):
        if not problem.error:  # errors already stopped the reader
            entry = entries[problem.arm]
            findings.append(
                Finding(entry.field_lines.get(problem.field, entry.start_line), problem.message)
            )
    return findings
