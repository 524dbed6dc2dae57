"""Scopes: a ScopeSpec in, one SQL condition over ``f`` with values bound from ?7 out."""

from __future__ import annotations

import json
import re

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.ranking.contract import bind, bound_prefix
from engine.ranking.scope import FIRST_SCOPE_PARAM, Scope, ScopeError, ScopeSpec, build_scope
from engine.sqlite.db import INDEX_SCHEMA, connect


def placeholders(sql: str) -> list[int]:
    return [int(n) for n in re.findall(r"\?(\d+)", sql)]


# --- the SQL and its values ----------------------------------------------------------------


def test_first_scope_placeholder_follows_the_six_fixed_ones():
    assert FIRST_SCOPE_PARAM == 7


def test_default_scope_excludes_archived_and_tasks_as_literals():
    assert build_scope(ScopeSpec()) == Scope("(f.archived = 0 AND f.kind IS NOT 'task')", ())


def test_include_archived_drops_the_archived_literal():
    assert build_scope(ScopeSpec(include_archived=True)) == Scope("(f.kind IS NOT 'task')", ())


def test_kinds_are_bound_at_the_first_scope_placeholder_as_one_json_array():
    scope = build_scope(ScopeSpec(kinds=("episodic", "semantic")))
    assert scope == Scope(
        "(f.archived = 0 AND f.kind IN (SELECT value FROM json_each(?7)))",
        ('["episodic", "semantic"]',),
    )


def test_kinds_are_lower_cased_stripped_and_deduplicated():
    assert build_scope(ScopeSpec(kinds=(" Task", "task", "TASK "))).values == ('["task"]',)


def test_naming_kinds_replaces_the_task_exclusion():
    assert "'task'" not in build_scope(ScopeSpec(kinds=("task",))).sql


def test_tags_are_bound_at_one_placeholder_as_one_json_array():
    scope = build_scope(ScopeSpec(tags=("Infra", "staging")))
    assert (placeholders(scope.sql), scope.values) == ([7, 7], ('["infra", "staging"]',))


def test_tags_bound_as_json_keep_non_ascii_text_as_written():
    assert build_scope(ScopeSpec(tags=("Café",))).values == ('["café"]',)


@pytest.mark.parametrize("count", [1, 2, 107, 10_000])
def test_the_sql_of_a_scope_does_not_grow_with_the_number_of_values(count):
    many = ScopeSpec(
        kinds=tuple(f"k{i}" for i in range(count)), tags=tuple(f"t{i}" for i in range(count))
    )
    assert build_scope(many).sql == build_scope(ScopeSpec(kinds=("k",), tags=("t",))).sql


def test_path_prefix_is_one_value_used_twice():
    scope = build_scope(ScopeSpec(path_prefix="people/"))
    assert "substr(f.path, 1, length(?7)) = ?7" in scope.sql
    assert scope.values == ("people/",)


def test_empty_path_prefix_adds_no_condition():
    assert build_scope(ScopeSpec(path_prefix="")) == build_scope(ScopeSpec())


def test_placeholders_are_numbered_in_order_kinds_tags_prefix_since_until():
    scope = build_scope(
        ScopeSpec(
            kinds=("episodic",),
            tags=("infra", "db"),
            path_prefix="work/",
            since="2026-01-01",
            until="2026-01-31",
        )
    )
    assert placeholders(scope.sql) == [7, 8, 8, 9, 9, 10, 11]
    assert scope.values == (
        '["episodic"]',
        '["infra", "db"]',
        "work/",
        "2026-01-01 00:00:00",
        "2026-01-31 23:59:59",
    )


def test_first_placeholder_can_be_moved():
    scope = build_scope(ScopeSpec(kinds=("a",), tags=("b",)), first=9)
    assert placeholders(scope.sql) == [9, 10, 10]


HOSTILE_VALUES = [
    "it's",
    'say "hi"',
    "100%",
    "a_b",
    "back\\slash",
    "x') OR 1=1 --",
    "'; DROP TABLE files; --",
    "?1",
    "\x00nul",
]


@pytest.mark.parametrize("value", HOSTILE_VALUES)
@pytest.mark.parametrize("field", ["kinds", "tags", "path_prefix"])
def test_caller_values_are_bound_never_interpolated(field, value):
    spec = ScopeSpec(**{field: value if field == "path_prefix" else (value,)})
    scope = build_scope(spec)
    bound = value if field == "path_prefix" else json.dumps([value.lower()], ensure_ascii=False)
    assert (bound in scope.values, value in scope.sql) == (True, False)


def test_sql_of_a_scope_does_not_depend_on_its_values():
    one = build_scope(ScopeSpec(kinds=("a",), tags=("b",), path_prefix="c"))
    other = build_scope(ScopeSpec(kinds=("'x",), tags=("%",), path_prefix="\\"))
    assert one.sql == other.sql


# --- the event-time window -----------------------------------------------------------------


def test_since_bare_date_starts_at_midnight():
    scope = build_scope(ScopeSpec(since="2026-10-03"))
    assert "coalesce(f.event_at, f.updated_at) >= ?7" in scope.sql
    assert scope.values == ("2026-10-03 00:00:00",)


def test_until_bare_date_includes_the_whole_day():
    scope = build_scope(ScopeSpec(until="2026-10-03"))
    assert "coalesce(f.event_at, f.updated_at) <= ?7" in scope.sql
    assert scope.values == ("2026-10-03 23:59:59",)


def test_until_datetime_is_exact():
    assert build_scope(ScopeSpec(until="2026-10-03T14:20:00")).values == ("2026-10-03 14:20:00",)


def test_window_bounds_with_offset_are_converted_to_utc():
    scope = build_scope(ScopeSpec(since="2026-10-03T01:00:00+02:00", until="2026-10-03T12:00Z"))
    assert scope.values == ("2026-10-02 23:00:00", "2026-10-03 12:00:00")


@pytest.mark.parametrize(
    "value",
    ["yesterday", "2026-13-45", "2026-02-30", "03/10/2026", " ", "0001-01-01T00:00:00+01:00"],
)
@pytest.mark.parametrize("name", ["since", "until"])
def test_bad_date_raises_scope_error_naming_the_field(name, value):
    with pytest.raises(ScopeError) as error:
        build_scope(ScopeSpec(**{name: value}))
    assert str(error.value).startswith(f"{name} {value[:40]!r} is ")
    assert error.value.worded(lambda field: f"--{field}").startswith(f"--{name} {value!r} is ")


def test_since_after_until_is_refused_naming_both_values():
    with pytest.raises(ScopeError) as error:
        build_scope(ScopeSpec(since="2026-05-01", until="2026-04-01"))
    assert str(error.value).startswith("since 2026-05-01 is after until 2026-04-01; ")
    assert error.value.worded(lambda name: f"--{name}").startswith(
        "--since 2026-05-01 is after --until 2026-04-01; "
    )


def test_since_after_until_is_judged_in_utc():
    with pytest.raises(ScopeError, match="is after"):
        build_scope(ScopeSpec(since="2026-05-01T10:00Z", until="2026-05-01T11:00+02:00"))
    scope = build_scope(ScopeSpec(since="2026-05-01T10:00+02:00", until="2026-05-01T09:00Z"))
    assert scope.values == ("2026-05-01 08:00:00", "2026-05-01 09:00:00")


@pytest.mark.parametrize(
    ("since", "until"),
    [
        ("2026-05-01", "2026-05-01"),  # the whole day
        ("2026-05-01T18:30", "2026-05-01"),  # a bare until ends with its day
        ("2026-05-01T12:00:00Z", "2026-05-01T12:00:00Z"),  # one instant, both ends inclusive
    ],
)
def test_a_window_whose_ends_meet_is_a_window(since, until):
    assert len(build_scope(ScopeSpec(since=since, until=until)).values) == 2


def test_empty_bound_means_no_bound():
    assert build_scope(ScopeSpec(since="", until="")) == build_scope(ScopeSpec())


# --- describe ------------------------------------------------------------------------------


def test_default_scope_describes_itself_as_default():
    assert ScopeSpec().describe() == "default (no archived memories, no tasks)"


def test_scope_describes_every_filter():
    spec = ScopeSpec(
        kinds=("task", "episodic"),
        tags=("infra",),
        path_prefix="work/",
        since="2026-01-01",
        until="2026-02-01",
        include_archived=True,
    )
    assert spec.describe() == (
        "kind=task,episodic tag=infra path-prefix=work/ since=2026-01-01 until=2026-02-01 "
        "include-archived"
    )


# --- executed against a real files table ---------------------------------------------------


def add_file(
    conn: apsw.Connection,
    path: str,
    *,
    kind: str | None = "semantic",
    tags: tuple[str, ...] = (),
    archived: bool = False,
    event_at: str | None = None,
    updated_at: str = "2026-06-01 12:00:00",
) -> None:
    conn.execute(
        "INSERT INTO files(path, title, kind, event_at, updated_at, tags, archived, "
        "content_hash, size, mtime_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 0)",
        (path, path, kind, event_at, updated_at, json.dumps(list(tags)), int(archived), path),
    )


@pytest.fixture(scope="module")
def index() -> apsw.Connection:
    conn = connect(":memory:")
    conn.execute(INDEX_SCHEMA)
    add_file(conn, "a%_b.md")
    add_file(conn, "a%_/deep.md")
    add_file(conn, "abc.md")
    add_file(conn, "a_x.md")
    add_file(conn, "aXY.md")
    add_file(conn, "A%_upper.md")
    add_file(conn, "back\\slash.md")
    add_file(conn, "backslash.md")
    add_file(conn, "it's.md")
    add_file(conn, "infra-staging.md", tags=("infra", "staging"))
    add_file(conn, "infra-only.md", tags=("infra",))
    add_file(conn, "quoted-tag.md", tags=("it's", "100%"))
    add_file(conn, "task.md", kind="task")
    add_file(conn, "no-kind.md", kind=None)
    add_file(conn, "person.md", kind="person")
    add_file(conn, "archived.md", archived=True)
    add_file(conn, "archived-task.md", kind="task", archived=True)
    add_file(conn, "oct-2.md", event_at="2026-10-02 23:59:59")
    add_file(conn, "oct-3-morning.md", event_at="2026-10-03 00:00:00")
    add_file(conn, "oct-3-night.md", event_at="2026-10-03 23:59:59")
    add_file(conn, "oct-4.md", event_at="2026-10-04 00:00:00")
    add_file(conn, "mtime-oct-3.md", updated_at="2026-10-03 10:00:00")
    return conn


def in_scope(conn: apsw.Connection, spec: ScopeSpec) -> list[str]:
    """Paths the scope lets through, bound as a search binds: the fixed values first."""
    scope = build_scope(spec)
    sql = f"SELECT f.path FROM files AS f WHERE {scope.sql} ORDER BY f.path"
    params = bound_prefix(sql, bind({}, scope.values))
    return [path for (path,) in conn.execute(sql, params)]


def test_default_scope_hides_archived_memories_and_tasks(index):
    paths = in_scope(index, ScopeSpec())
    assert {"archived.md", "archived-task.md", "task.md"} & set(paths) == set()


def test_default_scope_keeps_memories_without_a_kind(index):
    assert "no-kind.md" in in_scope(index, ScopeSpec())


def test_include_archived_brings_archived_memories_back_but_not_tasks(index):
    paths = set(in_scope(index, ScopeSpec(include_archived=True)))
    assert ("archived.md" in paths, "archived-task.md" in paths) == (True, False)


def test_kind_filter_returns_only_that_kind(index):
    assert in_scope(index, ScopeSpec(kinds=("person",))) == ["person.md"]


def test_naming_task_brings_tasks_into_scope(index):
    assert in_scope(index, ScopeSpec(kinds=("Task",))) == ["task.md"]


def test_several_kinds_are_any_of(index):
    assert in_scope(index, ScopeSpec(kinds=("task", "person"))) == ["person.md", "task.md"]


def test_unknown_kind_gives_an_empty_scope_not_a_wider_one(index):
    assert in_scope(index, ScopeSpec(kinds=("nope",))) == []


def test_tag_filter_requires_all_tags(index):
    assert in_scope(index, ScopeSpec(tags=("infra", "staging"))) == ["infra-staging.md"]


def test_single_tag_matches_every_memory_holding_it(index):
    assert in_scope(index, ScopeSpec(tags=("INFRA",))) == ["infra-only.md", "infra-staging.md"]


@pytest.mark.parametrize("tag", ["it's", "100%"])
def test_tag_with_quote_or_percent_matches_literally(index, tag):
    assert in_scope(index, ScopeSpec(tags=(tag,))) == ["quoted-tag.md"]


def test_tag_wildcard_is_not_a_wildcard(index):
    assert in_scope(index, ScopeSpec(tags=("%",))) == []


def test_path_prefix_wildcards_match_only_themselves(index):
    assert in_scope(index, ScopeSpec(path_prefix="a%_")) == ["a%_/deep.md", "a%_b.md"]


def test_path_prefix_underscore_is_not_a_single_character_wildcard(index):
    assert in_scope(index, ScopeSpec(path_prefix="a_")) == ["a_x.md"]


def test_path_prefix_is_case_sensitive(index):
    assert in_scope(index, ScopeSpec(path_prefix="A%")) == ["A%_upper.md"]


def test_path_prefix_backslash_matches_literally(index):
    assert in_scope(index, ScopeSpec(path_prefix="back\\")) == ["back\\slash.md"]


def test_path_prefix_quote_matches_literally(index):
    assert in_scope(index, ScopeSpec(path_prefix="it'")) == ["it's.md"]


def test_path_prefix_sql_fragment_matches_nothing(index):
    assert in_scope(index, ScopeSpec(path_prefix="x' OR '1'='1")) == []


def test_until_bare_date_includes_memories_late_that_day(index):
    paths = in_scope(index, ScopeSpec(since="2026-10-03", until="2026-10-03"))
    assert paths == ["mtime-oct-3.md", "oct-3-morning.md", "oct-3-night.md"]


def test_window_uses_modification_time_when_there_is_no_event_time(index):
    paths = in_scope(index, ScopeSpec(since="2026-10-03T09:00", until="2026-10-03T11:00"))
    assert paths == ["mtime-oct-3.md"]


def test_since_excludes_earlier_moments(index):
    assert in_scope(index, ScopeSpec(since="2026-10-04")) == ["oct-4.md"]


def test_filters_combine_with_and(index):
    spec = ScopeSpec(kinds=("semantic",), tags=("infra",), path_prefix="infra-s")
    assert in_scope(index, spec) == ["infra-staging.md"]


# --- properties ----------------------------------------------------------------------------

VALUE = st.text(max_size=30) | st.sampled_from(HOSTILE_VALUES)


@settings(max_examples=800, derandomize=True, database=None, deadline=None)
@given(
    kinds=st.lists(VALUE, max_size=3),
    tags=st.lists(VALUE, max_size=3),
    path_prefix=st.none() | VALUE,
    include_archived=st.booleans(),
)
def test_arbitrary_scope_values_never_make_the_query_raise(
    index, kinds, tags, path_prefix, include_archived
):
    spec = ScopeSpec(tuple(kinds), tuple(tags), path_prefix, include_archived=include_archived)
    in_scope(index, spec)


@settings(max_examples=400, derandomize=True, database=None, deadline=None)
@given(prefix=st.text(min_size=1, max_size=12))
def test_path_prefix_matches_exactly_the_paths_starting_with_it(index, prefix):
    every = in_scope(index, ScopeSpec())
    expected = [path for path in every if path.startswith(prefix)]
    assert in_scope(index, ScopeSpec(path_prefix=prefix)) == expected


@settings(max_examples=400, derandomize=True, database=None, deadline=None)
@given(since=st.text(max_size=30), until=st.text(max_size=30))
def test_arbitrary_window_text_is_a_scope_error_or_a_valid_scope(index, since, until):
    try:
        spec = ScopeSpec(since=since, until=until)
        in_scope(index, spec)
    except ScopeError as error:
        assert str(error).startswith(("since ", "until "))


def test_until_a_compact_date_includes_the_whole_day():
    assert build_scope(ScopeSpec(until="20261021")).values == ("2026-10-21 23:59:59",)


# --- any number of values ------------------------------------------------------------------


def fresh_index(*files: tuple[str, str | None, tuple[str, ...]]) -> apsw.Connection:
    """An index holding ``(path, kind, tags)`` rows and nothing else."""
    conn = connect(":memory:")
    conn.execute(INDEX_SCHEMA)
    for path, kind, tags in files:
        add_file(conn, path, kind=kind, tags=tags)
    return conn


MANY = 10_000


def test_ten_thousand_kinds_match_any_of_them(index):
    kinds = (*(f"kind-{i}" for i in range(MANY - 1)), "person")
    assert in_scope(index, ScopeSpec(kinds=kinds)) == ["person.md"]


def test_more_kinds_than_sqlite_has_placeholders_for_still_match(index):
    kinds = (*(f"kind-{i}" for i in range(40_000)), "person")  # SQLite allows 32,766 ?N
    assert in_scope(index, ScopeSpec(kinds=kinds)) == ["person.md"]


def test_ten_thousand_tags_are_all_required():
    wanted = tuple(f"tag-{i}" for i in range(MANY))
    conn = fresh_index(("all.md", "semantic", wanted), ("all-but-one.md", "semantic", wanted[1:]))
    assert in_scope(conn, ScopeSpec(tags=wanted)) == ["all.md"]


def test_ten_thousand_tags_nobody_holds_give_an_empty_scope(index):
    assert in_scope(index, ScopeSpec(tags=tuple(f"tag-{i}" for i in range(MANY)))) == []


def test_a_100_kilobyte_path_prefix_matches_only_the_path_it_starts():
    long_path = "p" * 100_000 + ".md"
    conn = fresh_index((long_path, "semantic", ()), ("p.md", "semantic", ()))
    assert in_scope(conn, ScopeSpec(path_prefix="p" * 100_000)) == [long_path]


def test_describe_shows_the_first_values_of_a_long_list_and_counts_the_rest():
    spec = ScopeSpec(kinds=tuple(f"k{i}" for i in range(MANY)), tags=("a", "b", "c", "d", "e", "f"))
    assert spec.describe() == (
        "kind=k0,k1,k2,k3,k4 (+9,995 more kinds) tag=a tag=b tag=c tag=d tag=e (+1 more tags)"
    )


def test_describe_cuts_a_long_path_prefix():
    assert ScopeSpec(path_prefix="x" * 100_000).describe() == f"path-prefix={'x' * 59}…"


SMALL_TEXT = st.sampled_from(["a", "A", " a ", "b", "%", "_", "'", "\\", "\x00", "é", "task"])
TEXT = SMALL_TEXT | st.text(max_size=4)


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(
    files=st.lists(st.tuples(st.none() | TEXT, st.lists(TEXT, max_size=3)), max_size=6),
    kinds=st.lists(TEXT, max_size=4),
    tags=st.lists(TEXT, max_size=4),
)
def test_kinds_match_any_and_tags_match_all_exactly_as_written(files, kinds, tags):
    stored = [
        (f"{n}.md", kind, tuple(dict.fromkeys(t.strip().lower() for t in file_tags)))
        for n, (kind, file_tags) in enumerate(files)
    ]
    wanted_kinds = {k.strip().lower() for k in kinds}
    wanted_tags = {t.strip().lower() for t in tags}
    expected = sorted(
        path
        for path, kind, file_tags in stored
        if (kind in wanted_kinds if wanted_kinds else kind != "task")
        and wanted_tags <= set(file_tags)
    )
    conn = fresh_index(*stored)
    assert in_scope(conn, ScopeSpec(kinds=tuple(kinds), tags=tuple(tags))) == expected
