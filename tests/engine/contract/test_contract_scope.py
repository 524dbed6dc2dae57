"""Scopes through a real search, on SQLite and on PostgreSQL: kinds, tags, path prefix, the time
window and archived memories select exactly the same memories on both backends.

tests/engine/test_scope.py checks the SQLite condition itself against a bare files table; here a
whole store is indexed once per backend and every memory holds the query word, so a search's
hits are exactly the memories its scope lets through. Values that mean something to SQL or to
LIKE (quotes, ``%``, ``_``, backslashes) must match only themselves.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backends import BACKENDS, backend_named
from engine.indexing.indexer import index_store
from engine.pg.target import URL_VARIABLE
from engine.ranking.scope import ScopeError, ScopeSpec
from engine.search import search

#: path -> (kind, tags, archived, event_at); every memory's body holds the word "common".
MEMORIES: dict[str, tuple[str | None, tuple[str, ...], bool, str | None]] = {
    "a%_b.md": ("semantic", (), False, None),
    "a%_/deep.md": ("semantic", (), False, None),
    "abc.md": ("semantic", (), False, None),
    "a_x.md": ("semantic", (), False, None),
    "aXY.md": ("semantic", (), False, None),
    "A%_upper.md": ("semantic", (), False, None),
    "back\\slash.md": ("semantic", (), False, None),
    "backslash.md": ("semantic", (), False, None),
    "it's.md": ("semantic", (), False, None),
    "infra-staging.md": ("semantic", ("infra", "staging"), False, None),
    "infra-only.md": ("semantic", ("infra",), False, None),
    "quoted-tag.md": ("semantic", ("it's", "100%"), False, None),
    "task.md": ("task", (), False, None),
    "no-kind.md": (None, (), False, None),
    "person.md": ("person", (), False, None),
    "archived.md": ("semantic", (), True, None),
    "archived-task.md": ("task", (), True, None),
    "oct-2.md": ("semantic", (), False, "2026-10-02 23:59:59"),
    "oct-3-morning.md": ("semantic", (), False, "2026-10-03 00:00:00"),
    "oct-3-night.md": ("semantic", (), False, "2026-10-03 23:59:59"),
    "oct-4.md": ("semantic", (), False, "2026-10-04 00:00:00"),
    "mtime-oct-3.md": ("semantic", (), False, None),
    "nul.md": ("odd\x00kind", ("a\x00b",), False, None),
}
#: Every memory but one was last modified on 1 June; that one on 3 October, 10:00 UTC.
JUNE = datetime(2026, 6, 1, 12, tzinfo=UTC).timestamp()
OCTOBER_3 = datetime(2026, 10, 3, 10, tzinfo=UTC).timestamp()


def text_of(path: str, kind: str | None, tags: tuple[str, ...], archived: bool, event_at):  # type: ignore[no-untyped-def]
    lines = [f"title: {json.dumps(path)}"]
    if kind:
        lines.append(f"kind: {json.dumps(kind)}")
    if tags:
        lines.append(f"tags: {json.dumps(list(tags))}")
    if archived:
        lines.append("archived: true")
    if event_at:
        lines.append(f"event_at: {event_at.replace(' ', 'T')}")
    return "---\n" + "\n".join(lines) + "\n---\ncommon words\n"


@pytest.fixture(scope="module", params=BACKENDS)
def scoped(request, tmp_path_factory):  # type: ignore[no-untyped-def]
    """The scope store, indexed once per backend (lexically: scopes do not need vectors)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(URL_VARIABLE, raising=False)
        backend = backend_named(request.param, request)
        root = tmp_path_factory.mktemp(f"scope-{request.param}")
        files = {path: text_of(path, *fields) for path, fields in MEMORIES.items()}
        store = backend.write(root, files)
        for path in MEMORIES:
            moment = OCTOBER_3 if path == "mtime-oct-3.md" else JUNE
            os.utime(root / path, (moment, moment))
        index_store(store, embed=False)
        yield store


@pytest.fixture
def in_scope(scoped, monkeypatch):  # type: ignore[no-untyped-def]
    """The paths a search for the word every memory holds returns in ``spec``, sorted."""
    monkeypatch.delenv(URL_VARIABLE, raising=False)

    def paths(spec: ScopeSpec) -> list[str]:
        result = search(scoped, "common", scope=spec, use_vector=False, limit=100)
        return sorted(hit.path for hit in result.hits)

    return paths


def test_every_memory_was_indexed(in_scope):
    assert len(in_scope(ScopeSpec(include_archived=True, kinds=("semantic",)))) == 18


def test_default_scope_hides_archived_memories_and_tasks(in_scope):
    paths = in_scope(ScopeSpec())
    assert {"archived.md", "archived-task.md", "task.md"} & set(paths) == set()


def test_default_scope_keeps_memories_without_a_kind(in_scope):
    assert "no-kind.md" in in_scope(ScopeSpec())


def test_include_archived_brings_archived_memories_back_but_not_tasks(in_scope):
    paths = set(in_scope(ScopeSpec(include_archived=True)))
    assert ("archived.md" in paths, "archived-task.md" in paths) == (True, False)


def test_kind_filter_returns_only_that_kind(in_scope):
    assert in_scope(ScopeSpec(kinds=("person",))) == ["person.md"]


def test_naming_task_brings_tasks_into_scope(in_scope):
    assert in_scope(ScopeSpec(kinds=("Task",))) == ["task.md"]


def test_several_kinds_are_any_of(in_scope):
    assert in_scope(ScopeSpec(kinds=("task", "person"))) == ["person.md", "task.md"]


def test_unknown_kind_gives_an_empty_scope_not_a_wider_one(in_scope):
    assert in_scope(ScopeSpec(kinds=("nope",))) == []


def test_tag_filter_requires_all_tags(in_scope):
    assert in_scope(ScopeSpec(tags=("infra", "staging"))) == ["infra-staging.md"]


def test_single_tag_matches_every_memory_holding_it(in_scope):
    assert in_scope(ScopeSpec(tags=("INFRA",))) == ["infra-only.md", "infra-staging.md"]


@pytest.mark.parametrize("tag", ["it's", "100%"])
def test_tag_with_quote_or_percent_matches_literally(in_scope, tag):
    assert in_scope(ScopeSpec(tags=(tag,))) == ["quoted-tag.md"]


@pytest.mark.parametrize("tag", ["%", "_", "infra'; DROP TABLE files; --", '"', "\\"])
def test_tag_wildcards_and_sql_match_nothing(in_scope, tag):
    assert in_scope(ScopeSpec(tags=(tag,))) == []


def test_a_tag_and_a_kind_holding_a_nul_match_themselves(in_scope):
    # PostgreSQL text cannot hold a NUL: the team store keeps U+FFFD in its place, and matches
    # a scope's values the same way, rather than failing the index run or the search.
    assert in_scope(ScopeSpec(tags=("a\x00b",))) == ["nul.md"]
    assert in_scope(ScopeSpec(kinds=("odd\x00kind",))) == ["nul.md"]


def test_path_prefix_wildcards_match_only_themselves(in_scope):
    assert in_scope(ScopeSpec(path_prefix="a%_")) == ["a%_/deep.md", "a%_b.md"]


def test_path_prefix_underscore_is_not_a_single_character_wildcard(in_scope):
    assert in_scope(ScopeSpec(path_prefix="a_")) == ["a_x.md"]


def test_path_prefix_is_case_sensitive(in_scope):
    assert in_scope(ScopeSpec(path_prefix="A%")) == ["A%_upper.md"]


def test_path_prefix_backslash_matches_literally(in_scope):
    assert in_scope(ScopeSpec(path_prefix="back\\")) == ["back\\slash.md"]


def test_path_prefix_quote_matches_literally(in_scope):
    assert in_scope(ScopeSpec(path_prefix="it'")) == ["it's.md"]


@pytest.mark.parametrize("prefix", ["x' OR '1'='1", "%", "_"])
def test_path_prefix_sql_or_like_syntax_matches_nothing(in_scope, prefix):
    assert in_scope(ScopeSpec(path_prefix=prefix)) == []


def test_until_bare_date_includes_memories_late_that_day(in_scope):
    paths = in_scope(ScopeSpec(since="2026-10-03", until="2026-10-03"))
    assert paths == ["mtime-oct-3.md", "oct-3-morning.md", "oct-3-night.md"]


def test_window_uses_modification_time_when_there_is_no_event_time(in_scope):
    paths = in_scope(ScopeSpec(since="2026-10-03T09:00", until="2026-10-03T11:00"))
    assert paths == ["mtime-oct-3.md"]


def test_since_excludes_earlier_moments(in_scope):
    assert in_scope(ScopeSpec(since="2026-10-04")) == ["oct-4.md"]


def test_a_window_with_an_offset_is_compared_in_utc(in_scope):
    paths = in_scope(ScopeSpec(since="2026-10-03T11:30+02:00", until="2026-10-03T12:30+02:00"))
    assert paths == ["mtime-oct-3.md"]


def test_filters_combine_with_and(in_scope):
    spec = ScopeSpec(kinds=("semantic",), tags=("infra",), path_prefix="infra-s")
    assert in_scope(spec) == ["infra-staging.md"]


def test_ten_thousand_kinds_match_any_of_them(in_scope):
    kinds = (*(f"kind-{i}" for i in range(9_999)), "person")
    assert in_scope(ScopeSpec(kinds=kinds)) == ["person.md"]


def test_ten_thousand_tags_nobody_holds_give_an_empty_scope(in_scope):
    assert in_scope(ScopeSpec(tags=tuple(f"tag-{i}" for i in range(10_000)))) == []


@settings(
    max_examples=25,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(prefix=st.text(min_size=1, max_size=6))
def test_path_prefix_matches_exactly_the_paths_starting_with_it(in_scope, prefix):
    every = in_scope(ScopeSpec())
    assert in_scope(ScopeSpec(path_prefix=prefix)) == [p for p in every if p.startswith(prefix)]


@settings(
    max_examples=25,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(since=st.text(max_size=20), until=st.text(max_size=20))
def test_arbitrary_window_text_is_a_scope_error_or_a_valid_search(in_scope, since, until):
    try:
        in_scope(ScopeSpec(since=since, until=until))
    except ScopeError as error:
        assert str(error).startswith(("since ", "until "))
