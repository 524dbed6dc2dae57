"""The one filter every arm shares.

A scope is built once per search and pasted into every arm's ``{scope}`` slot, so no arm can
return a memory the others hide. The default exclusions (archived memories, tasks) are literals
in the SQL; everything a caller supplies is bound from ``FIRST_SCOPE_PARAM`` on (after the
statement's fixed placeholders, :mod:`engine.ranking.contract`), never interpolated, so a value with
quotes, ``%``, ``_`` or SQL in it matches only itself.

A list of values (kinds, tags) is bound as ONE value, a JSON array, and read back with
``json_each``. The SQL therefore has the same shape and depth for one tag as for ten thousand:
a condition per value would nest one subquery per tag into every arm, and SQLite refuses such
a statement long before the list gets long (about a hundred tags).

On PostgreSQL (team stores) the same conditions are written in its SQL: the JSON array is read
with ``jsonb_array_elements_text``, tags (a ``jsonb`` column there) are matched by containment,
and every bound value is cast, since PostgreSQL must know a parameter's type to plan.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from engine.files.memory import format_utc, parse_iso
from engine.ranking.contract import FIRST_SCOPE_PARAM

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "ScopeSpec",
    "build_scope",
]


class ScopeError(ValueError):
    """A scope value that cannot be used (e.g. a date that is not a date).

    The message names the values as :class:`ScopeSpec` does (``since``, ``until``), which are
    also the MCP tools' argument names; :meth:`worded` says it with a surface's own names, such
    as the command line's ``--since``, so no caller is told to change an option it does not
    have."""

    def __init__(self, say: Callable[[Callable[[str], str]], str]) -> None:
        super().__init__(say(str))
        self._say = say

    def worded(self, name: Callable[[str], str]) -> str:
        """The message with each value's name as ``name`` spells it."""
        return self._say(name)


@dataclass(frozen=True)
class ScopeSpec:
    """What a caller may narrow a search to.

    ``kinds``: any of these kinds (naming ``task`` is how tasks come back into scope).
    ``tags``: every one of these tags. ``path_prefix``: keys starting with this text, literally.
    ``since``/``until``: the memory's moment (event_at, else modification time) inside the
    window, both ends included; a bare date in ``until`` includes that whole day. A ``since``
    after ``until`` is a :class:`ScopeError`, not an empty search.
    """

    kinds: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    path_prefix: str | None = None
    since: str | None = None
    until: str | None = None
    include_archived: bool = False

    def describe(self) -> str:
        """One short line for people: long lists and long values are cut (a scope may hold
        ten thousand tags or a 100 kB prefix, and this line ends up in notes and errors)."""
        parts = [f"kind={','.join(shown_list(self.kinds, 'kinds'))}"] if self.kinds else []
        parts += [f"tag={t}" for t in shown_list(self.tags, "tags")]
        if self.path_prefix:
            parts.append(f"path-prefix={shown(self.path_prefix)}")
        if self.since:
            parts.append(f"since={self.since}")
        if self.until:
            parts.append(f"until={self.until}")
        if self.include_archived:
            parts.append("include-archived")
        return " ".join(parts) or "default (no archived memories, no tasks)"


#: How many values of a list, and how many characters of a value, ``describe`` shows.
SHOWN_VALUES = 5
SHOWN_CHARS = 60


def shown(value: str) -> str:
    return value if len(value) <= SHOWN_CHARS else value[: SHOWN_CHARS - 1] + "…"


def shown_list(values: tuple[str, ...], noun: str) -> list[str]:
    """The first few values, then how many more there are (as the last item)."""
    out = [shown(value) for value in values[:SHOWN_VALUES]]
    if len(values) > SHOWN_VALUES:
        out[-1] += f" (+{len(values) - SHOWN_VALUES:,} more {noun})"
    return out


@dataclass(frozen=True)
class Scope:
    """The SQL condition over alias ``f`` and the values its placeholders take, in order."""

    sql: str
    values: tuple[object, ...]


def window_moment(text: str, *, end_of_day: bool, name: str) -> dt.datetime:
    """A ``since``/``until`` value as a moment in UTC (naive, as the index keeps time)."""
    shown = repr(text[:40])
    moment = parse_iso(text)
    if moment is None:
        raise ScopeError(
            lambda called: f"{called(name)} {shown} is not an ISO 8601 date; use e.g. 2026-10-03"
        )
    if end_of_day and re.fullmatch(r"\d{4}-?\d{2}-?\d{2}", text.strip()):
        moment += dt.timedelta(days=1) - dt.timedelta(seconds=1)
    if moment.tzinfo is None:
        return moment
    try:
        return moment.astimezone(dt.UTC).replace(tzinfo=None)
    except OverflowError:
        raise ScopeError(lambda called: f"{called(name)} {shown} is out of range in UTC") from None


def checked_window(spec: ScopeSpec) -> tuple[dt.datetime | None, dt.datetime | None]:
    """The spec's window as UTC moments; a window that ends before it starts is refused.

    Both ends are inclusive (``until`` a bare date meaning the end of that day), so equal
    moments are a window of one instant. A ``since`` after ``until`` holds no moment at all:
    searching it would only answer "no memory is in scope", hiding a slip such as swapped
    dates."""
    since = window_moment(spec.since, end_of_day=False, name="since") if spec.since else None
    until = window_moment(spec.until, end_of_day=True, name="until") if spec.until else None
    if since is not None and until is not None and since > until:
        start, end = (value.strip()[:40] for value in (spec.since or "", spec.until or ""))
        raise ScopeError(
            lambda called: f"{called('since')} {start} is after {called('until')} {end}; "
            "no moment is in that window (swap them?)"
        )
    return since, until


@dataclass(frozen=True)
class Wanted:
    """A spec's values as both dialects bind them: kinds and tags lower-cased and distinct,
    the window as UTC moments (``until`` a bare date meaning the end of that day)."""

    kinds: list[str]
    tags: list[str]
    since: str | None
    until: str | None


def wanted(spec: ScopeSpec) -> Wanted:
    since, until = checked_window(spec)
    return Wanted(
        kinds=list(dict.fromkeys(k.strip().lower() for k in spec.kinds)),
        tags=list(dict.fromkeys(t.strip().lower() for t in spec.tags)),
        since=format_utc(since) if since is not None else None,
        until=format_utc(until) if until is not None else None,
    )


def build_scope(
    spec: ScopeSpec, first: int = FIRST_SCOPE_PARAM, dialect: str = "sqlite"
) -> Scope:
    """Translate a spec into one SQL condition with numbered placeholders from ``first``, in
    the SQL ``dialect`` of the store ("sqlite" or "postgresql")."""
    if dialect == "postgresql":
        return build_pg_scope(spec, first)
    want = wanted(spec)
    clauses: list[str] = []
    values: list[object] = []

    def slot(value: object) -> str:
        values.append(value)
        return f"?{first + len(values) - 1}"

    if not spec.include_archived:
        clauses.append("f.archived = 0")
    if want.kinds:
        clauses.append(f"f.kind IN (SELECT value FROM json_each({slot(json_list(want.kinds))}))")
    else:
        clauses.append("f.kind IS NOT 'task'")
    if want.tags:
        # Every wanted tag is among the memory's: as many of its distinct tags are wanted as
        # there are (distinct) wanted tags. The wanted set does not depend on the row, so
        # SQLite builds its lookup once per statement and each row costs only its own tags;
        # asking "is each wanted tag among this row's?" instead would cost wanted x own tags
        # per row (minutes for ten thousand tags).
        tags = slot(json_list(want.tags))
        clauses.append(
            "(SELECT count(DISTINCT t.value) FROM json_each(f.tags) AS t "
            f"WHERE t.value IN (SELECT value FROM json_each({tags}))) "
            f"= json_array_length({tags})"
        )
    if spec.path_prefix:
        prefix = slot(spec.path_prefix)
        clauses.append(f"substr(f.path, 1, length({prefix})) = {prefix}")
    if want.since:
        clauses.append(f"coalesce(f.event_at, f.updated_at) >= {slot(want.since)}")
    if want.until:
        clauses.append(f"coalesce(f.event_at, f.updated_at) <= {slot(want.until)}")
    return Scope("(" + " AND ".join(clauses) + ")", tuple(values))


def build_pg_scope(spec: ScopeSpec, first: int = FIRST_SCOPE_PARAM) -> Scope:
    """:func:`build_scope` in PostgreSQL: the same conditions, values and placeholders."""
    want = wanted(spec)
    clauses: list[str] = []
    values: list[object] = []

    def slot(value: object, cast: str = "text") -> str:
        values.append(value)
        return f"CAST(?{first + len(values) - 1} AS {cast})"

    if not spec.include_archived:
        clauses.append("f.archived = 0")
    if want.kinds:
        kinds = slot(json_list(no_nul(want.kinds)), "jsonb")
        clauses.append(f"f.kind IN (SELECT jsonb_array_elements_text({kinds}))")
    else:
        clauses.append("f.kind IS DISTINCT FROM 'task'")
    if want.tags:
        # Containment: the memory's tags hold every wanted one (a GIN index can serve it).
        clauses.append(f"f.tags @> {slot(json_list(no_nul(want.tags)), 'jsonb')}")
    if spec.path_prefix:
        clauses.append(f"starts_with(f.path, {slot(spec.path_prefix)})")
    if want.since:
        clauses.append(f"coalesce(f.event_at, f.updated_at) >= {slot(want.since)}")
    if want.until:
        clauses.append(f"coalesce(f.event_at, f.updated_at) <= {slot(want.until)}")
    return Scope("(" + " AND ".join(clauses) + ")", tuple(values))


def no_nul(values: list[str]) -> list[str]:
    """Values as a team store holds them: PostgreSQL text and ``jsonb`` cannot hold a NUL, so
    the indexer stores one as U+FFFD (engine.pg.indexdb.clean) and a scope value is matched the
    same way, instead of the server refusing the whole search."""
    return [value.replace("\x00", "\ufffd") for value in values]


def json_list(values: list[str]) -> str:
    """Values as a JSON array for ``json_each``: one bound value whatever their number.

    ``ensure_ascii=False`` writes text as it is, the way the indexer writes ``files.tags``, so
    both sides of a comparison are decoded by the same ``json_each``.
    """
    return json.dumps(values, ensure_ascii=False)
