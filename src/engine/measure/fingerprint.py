"""What a ranking depends on, as one value: the stamp that tells fresh figures from stale ones.

Benchmark results hold for the ranking they were measured with. That ranking is decided by each
arm's name, weight, declared needs and SQL (in each dialect), by the fusion constant and by the
embedder (model and width): nothing else. An arm's prose and the registry's comments change
what a reader learns, not what a search returns, so they are left out; fixing a typo in the
prose keeps the figures fresh, while changing a weight makes them stale.

:func:`ranking` is the one place this is decided. The benchmarks call it with the imported
registry (``engine.arms.ARMS``) when they stamp a results file; the docs plugin calls it with
the entries it read statically from the registry file, so it never runs project code to know
whether the committed figures still hold. Both pass arms that merely carry the fields below.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Protocol

from engine.ranking.authority import AuthorityLike

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "AuthorityPrint",
    "Ranking",
    "ranking",
]


class RankingArm(Protocol):
    """What an arm must carry to be fingerprinted: ``engine.arms.Arm`` and the docs plugin's
    statically read entries both do."""

    @property
    def name(self) -> str: ...
    @property
    def weight(self) -> float: ...
    @property
    def needs(self) -> tuple[str, ...]: ...
    @property
    def sql(self) -> str: ...

    # ``pg_sql`` (the arm's PostgreSQL SQL) is read when present; a record without it (an
    # entry of a registry that predates the dialect) has none.


@dataclass(frozen=True)
class ArmPrint:
    """One arm as far as ranking goes; its SQL by digest, byte for byte as the registry has it."""

    name: str
    weight: float
    #: The inputs it needs, by name, sorted (they are a set).
    needs: tuple[str, ...]
    sql_sha256: str
    #: Its PostgreSQL SQL by digest; None when the arm had none (figures stamped before the
    #: registry had a second dialect carry none, and measured none).
    pg_sql_sha256: str | None = None


@dataclass(frozen=True)
class AuthorityPrint:
    """One authority signal as far as ranking goes (its prose and label are left out)."""

    name: str
    #: Its tags, sorted (they are a set).
    tags: tuple[str, ...]
    effect: str
    factor: float


@dataclass(frozen=True)
class Ranking:
    """Everything a ranking depends on, in registry order (the order breaks ties)."""

    arms: tuple[ArmPrint, ...]
    rrf_k: int
    embedder_model: str
    embedder_dim: int
    #: The authority signals scaling fused scores; figures stamped before the registry had
    #: any carry none (and were measured without).
    authority: tuple[AuthorityPrint, ...] = ()
    #: The bound on what raises reach together (engine.ranking.authority.CEILING); None in
    #: figures stamped before authority existed.
    authority_ceiling: float | None = None

    @property
    def sha256(self) -> str:
        """A digest of the whole value, for a short mention in pages and messages."""
        canonical = json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def changes_since(self, old: Ranking, dialects: tuple[str, ...] = ("sqlite",)) -> list[str]:
        """What differs from ``old``, in words ("weight of recency 0.2 -> 0.3"); empty when
        nothing does.

        SQL counts in the ``dialects`` the figures were measured on (a results file's kind
        says which): an edit to an arm's PostgreSQL fragment leaves figures measured on SQLite
        fresh, and the other way round.
        """
        changes = []
        before = {arm.name: arm for arm in old.arms}
        now = {arm.name: arm for arm in self.arms}
        changes += [f"arm {name} added" for name in now if name not in before]
        changes += [f"arm {name} removed" for name in before if name not in now]
        common = [name for name in now if name in before]
        for name in common:
            if now[name].weight != before[name].weight:
                changes.append(f"weight of {name} {before[name].weight:g} -> {now[name].weight:g}")
            if "sqlite" in dialects and now[name].sql_sha256 != before[name].sql_sha256:
                changes.append(f"SQL of {name}")
            if "postgresql" in dialects and now[name].pg_sql_sha256 != before[name].pg_sql_sha256:
                changes.append(f"PostgreSQL SQL of {name}")
            if now[name].needs != before[name].needs:
                changes.append(f"needs of {name}")
        if common != [name for name in before if name in now]:
            changes.append("order of the arms")
        if self.authority != old.authority:
            changes += authority_changes(old.authority, self.authority)
        if self.authority_ceiling != old.authority_ceiling and self.authority and old.authority:
            changes.append(
                f"authority ceiling {old.authority_ceiling} -> {self.authority_ceiling}"
            )
        if self.rrf_k != old.rrf_k:
            changes.append(f"fusion constant k {old.rrf_k} -> {self.rrf_k}")
        if (self.embedder_model, self.embedder_dim) != (old.embedder_model, old.embedder_dim):
            changes.append(
                f"embedder {old.embedder_model} ({old.embedder_dim}-d) -> "
                f"{self.embedder_model} ({self.embedder_dim}-d)"
            )
        return changes


def authority_changes(
    old: tuple[AuthorityPrint, ...], new: tuple[AuthorityPrint, ...]
) -> list[str]:
    """What differs between two sets of authority signals, in words."""
    before = {s.name: s for s in old}
    now = {s.name: s for s in new}
    changes = [f"authority {name} added" for name in now if name not in before]
    changes += [f"authority {name} removed" for name in before if name not in now]
    for name in (n for n in now if n in before):
        if now[name] != before[name]:
            was, is_ = before[name], now[name]
            changes.append(
                f"authority {name}: {was.effect} {was.factor:g} on {', '.join(was.tags)} -> "
                f"{is_.effect} {is_.factor:g} on {', '.join(is_.tags)}"
            )
    if not changes:
        changes.append("order of the authority signals")
    return changes


def ranking(
    arms: Iterable[RankingArm],
    *,
    authority: Iterable[AuthorityLike] = (),
    rrf_k: int | None = None,
    embedder_model: str | None = None,
    embedder_dim: int | None = None,
) -> Ranking:
    """The ranking made by ``arms`` and the ``authority`` signals, with the engine's fusion
    constant and default embedder.

    The keywords override those for a ranking measured with others (a converted old results
    file names the constant and the model of its own commit).
    """
    from engine.indexing.default_model import DEFAULT_MODEL, MINILM_DIM
    from engine.ranking.assemble import RRF_K
    from engine.ranking.authority import CEILING

    signals = tuple(
        AuthorityPrint(s.name, tuple(sorted(s.tags)), s.effect, float(s.factor)) for s in authority
    )
    return Ranking(
        arms=tuple(
            ArmPrint(
                name=arm.name,
                weight=float(arm.weight),
                needs=tuple(sorted(arm.needs)),
                sql_sha256=digest(arm.sql),
                pg_sql_sha256=digest(getattr(arm, "pg_sql", "")) or None,
            )
            for arm in arms
        ),
        rrf_k=RRF_K if rrf_k is None else rrf_k,
        embedder_model=DEFAULT_MODEL if embedder_model is None else embedder_model,
        embedder_dim=MINILM_DIM if embedder_dim is None else embedder_dim,
        authority=signals,
        authority_ceiling=CEILING if signals else None,
    )


def digest(sql: str) -> str:
    """The SHA-256 of an arm's SQL, byte for byte; "" for no SQL."""
    return hashlib.sha256(sql.encode("utf-8")).hexdigest() if sql else ""
