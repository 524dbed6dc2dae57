"""The fused statements the page shows, built by the engine's own assembler, in every dialect.

The arms handed to the assembler are made from the values read statically from the registry
file, not taken from the imported ``engine.arms`` module. So the page and its SQL always come
from the same file in the same build, even when the plugin is pointed at a modified copy.

The dialects are the engine's (:data:`engine.ranking.contract.DIALECTS`); the first, SQLite, is the
one every store can use, so a registry it cannot assemble stops the build. Another dialect's
statement that cannot be assembled (an arm without a fragment for it) is not an error: the
page says why, as the engine would refuse that search on such a store.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from arms_doc.reader import Registry, RegistryError

if TYPE_CHECKING:
    from engine.arms import Arm


@dataclass(frozen=True)
class InDialect:
    """A piece of SQL in one dialect, or why it cannot be written in it."""

    #: The dialect's name and how people call it (engine.ranking.contract.Dialect).
    dialect: str
    label: str
    sql: str
    #: Why the assembler refused this dialect ("" when it did not).
    refused: str = ""


@dataclass(frozen=True)
class Statement:
    """One assembled statement in every dialect, and the arms it fired and dropped (which
    arms fire does not depend on the dialect)."""

    key: str
    title: str
    dialects: tuple[InDialect, ...]
    fired: tuple[str, ...]
    dropped: dict[str, str]

    @property
    def sql(self) -> str:
        """The statement in the first dialect (SQLite), the one the build prepares."""
        return self.dialects[0].sql


@dataclass(frozen=True)
class Statements:
    """What the page needs from the engine: the statements, the fusion constant, the scope."""

    rrf_k: int
    #: The default scope's filter in every dialect.
    scopes: tuple[InDialect, ...]
    full: Statement
    lexical_floor: Statement

    @property
    def scope_sql(self) -> str:
        """The default scope in the first dialect (SQLite)."""
        return self.scopes[0].sql

    @property
    def all(self) -> tuple[Statement, ...]:
        return (self.full, self.lexical_floor)


def assemble_statements(registry: Registry) -> Statements:
    """The statement for every input present, and for the lexical floor (no vector, no state),
    each in every dialect.

    Both use the default scope (no archived memories, no tasks), as a search without scope
    options does.
    """
    from engine.ranking.assemble import RRF_K, AssemblyError, assemble
    from engine.ranking.contract import DIALECTS, Available
    from engine.ranking.scope import ScopeSpec, build_scope

    arms = engine_arms(registry)
    scopes = tuple(
        InDialect(d.name, d.label, build_scope(ScopeSpec(), dialect=d.name).sql) for d in DIALECTS
    )
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
        versions: list[InDialect] = []
        fired: tuple[str, ...] = ()
        dropped: dict[str, str] = {}
        for position, (target, scope) in enumerate(zip(DIALECTS, scopes, strict=True)):
            try:
                assembly = assemble(
                    available,
                    scope.sql,
                    arms=arms,
                    dialect_name=target.name,
                    authority=registry.authority,
                )
            except AssemblyError as exc:
                if position == 0:
                    raise RegistryError(
                        registry.file, registry.line, f"cannot assemble: {exc}"
                    ) from None
                versions.append(InDialect(target.name, target.label, "", refused=str(exc)))
                continue
            if position == 0:
                fired = tuple(arm.name for arm in assembly.fired)
                dropped = dict(assembly.dropped)
            versions.append(InDialect(target.name, target.label, assembly.sql))
        built[key] = Statement(
            key=key, title=title, dialects=tuple(versions), fired=fired, dropped=dropped
        )
    return Statements(
        rrf_k=RRF_K,
        scopes=scopes,
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
            pg_sql=entry.pg_sql,
        )
        for entry in registry.arms
    ]
