"""The one filter every arm shares.

A scope is built once per search and pasted into every arm's ``{scope}`` slot, so no arm can
return a memory the others hide. The default exclusions (archived memories, tasks) are literals
in the SQL; everything a caller supplies is bound at ``?5`` and up, never interpolated, so a
value with quotes, ``%``, ``_`` or SQL in it matches only itself.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from engine.memory import format_utc, parse_iso

FIRST_SCOPE_PARAM = 5


class ScopeError(ValueError):
    """A scope value that cannot be used (e.g. a date that is not a date)."""


@dataclass(frozen=True)
class ScopeSpec:
    """What a caller may narrow a search to.

    ``kinds``: any of these kinds (naming ``task`` is how tasks come back into scope).
    ``tags``: every one of these tags. ``path_prefix``: keys starting with this text, literally.
    ``since``/``until``: the memory's moment (event_at, else modification time) inside the
    window; a bare date in ``until`` includes that whole day.
    """

    kinds: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    path_prefix: str | None = None
    since: str | None = None
    until: str | None = None
    include_archived: bool = False

    def describe(self) -> str:
        parts = [f"kind={','.join(self.kinds)}"] if self.kinds else []
        parts += [f"tag={t}" for t in self.tags]
        if self.path_prefix:
            parts.append(f"path-prefix={self.path_prefix}")
        if self.since:
            parts.append(f"since={self.since}")
        if self.until:
            parts.append(f"until={self.until}")
        if self.include_archived:
            parts.append("include-archived")
        return " ".join(parts) or "default (no archived memories, no tasks)"


@dataclass(frozen=True)
class Scope:
    """The SQL condition over alias ``f`` and the values its placeholders take, in order."""

    sql: str
    values: tuple[object, ...]


def moment_bound(text: str, *, end_of_day: bool, name: str) -> str:
    """A --since/--until value in the index's time format."""
    moment = parse_iso(text)
    if moment is None:
        raise ScopeError(f"--{name} {text[:40]!r} is not an ISO 8601 date; use e.g. 2026-10-03")
    if end_of_day and re.fullmatch(r"\d{4}-?\d{2}-?\d{2}", text.strip()):
        moment += dt.timedelta(days=1) - dt.timedelta(seconds=1)
    try:
        return format_utc(moment)
    except OverflowError:
        raise ScopeError(f"--{name} {text[:40]!r} is out of range in UTC") from None


def build_scope(spec: ScopeSpec, first: int = FIRST_SCOPE_PARAM) -> Scope:
    """Translate a spec into one SQL condition with numbered placeholders from ``first``."""
    clauses: list[str] = []
    values: list[object] = []

    def slot(value: object) -> str:
        values.append(value)
        return f"?{first + len(values) - 1}"

    if not spec.include_archived:
        clauses.append("f.archived = 0")
    kinds = list(dict.fromkeys(k.strip().lower() for k in spec.kinds))
    if kinds:
        clauses.append(f"f.kind IN ({', '.join(slot(k) for k in kinds)})")
    else:
        clauses.append("f.kind IS NOT 'task'")
    for tag in dict.fromkeys(t.strip().lower() for t in spec.tags):
        clauses.append(f"EXISTS (SELECT 1 FROM json_each(f.tags) AS t WHERE t.value = {slot(tag)})")
    if spec.path_prefix:
        prefix = slot(spec.path_prefix)
        clauses.append(f"substr(f.path, 1, length({prefix})) = {prefix}")
    if spec.since:
        since = moment_bound(spec.since, end_of_day=False, name="since")
        clauses.append(f"coalesce(f.event_at, f.updated_at) >= {slot(since)}")
    if spec.until:
        until = moment_bound(spec.until, end_of_day=True, name="until")
        clauses.append(f"coalesce(f.event_at, f.updated_at) <= {slot(until)}")
    return Scope("(" + " AND ".join(clauses) + ")", tuple(values))
