"""The fused statements the page shows, built by the engine's own assembler.

The arms handed to the assembler are made from the values read statically from the registry
file, not taken from the imported ``engine.arms`` module. So the page and its SQL always come
from the same file in the same build, even when the plugin is pointed at a modified copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from arms_doc.reader import Registry, RegistryError

if TYPE_CHECKING:
    from engine.arms import Arm


@dataclass(frozen=True)
class Statement:
    """One assembled statement and the arms it fired and dropped."""

    key: str
    title: str
    sql: str
    fired: tuple[str, ...]
    dropped: dict[str, str]


@dataclass(frozen=True)
class Statements:
    """What the page needs from the engine: the statements, the fusion constant, the scope."""

    rrf_k: int
    scope_sql: str
    full: Statement
    lexical_floor: Statement

    @property
    def all(self) -> tuple[Statement, ...]:
        return (self.full, self.lexical_floor)


def assemble_statements(registry: Registry) -> Statements:
    """The statement for every input present, and for the lexical floor (no vector, no state).

    Both use the default scope (no archived memories, no tasks), as a search without scope
    options does.
    """
    from engine.assemble import RRF_K, AssemblyError, assemble
    from engine.contract import Available
    from engine.scope import ScopeSpec, build_scope

    arms = engine_arms(registry)
    scope_sql = build_scope(ScopeSpec()).sql
    variants = {
        "full": ("Every input present", Available()),
        "lexical-floor": (
            "The lexical floor: no query vector, no state plane, no time named",
            Available(
                {need: "absent" for need in ("query_vector", "state_plane", "query_time")}
            ),
        ),
    }
    built: dict[str, Statement] = {}
    for key, (title, available) in variants.items():
        try:
            assembly = assemble(available, scope_sql, arms=arms)
        except AssemblyError as exc:
            raise RegistryError(registry.file, registry.line, f"cannot assemble: {exc}") from None
        built[key] = Statement(
            key=key,
            title=title,
            sql=assembly.sql,
            fired=tuple(arm.name for arm in assembly.fired),
            dropped=dict(assembly.dropped),
        )
    return Statements(
        rrf_k=RRF_K,
        scope_sql=scope_sql,
        full=built["full"],
        lexical_floor=built["lexical-floor"],
    )


def engine_arms(registry: Registry) -> list[Arm]:
    """The engine's ``Arm`` records for the entries read from the registry file."""
    from engine.arms import Arm

    return [
        Arm(
            name=entry.name,
            label=entry.label,
            weight=entry.weight,
            needs=entry.needs,
            prose=entry.raw_prose,
            sql=entry.sql,
        )
        for entry in registry.arms
    ]
