"""No query string and no scope value can make a search raise.

Generated inputs mix arbitrary Unicode (NUL and control characters included) with FTS5 syntax,
quotes, right-to-left and CJK text and very long strings. The seed is fixed (derandomize), so a
failure reproduces; the query property runs 10,000 examples per test run.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import HashEmbedder
from engine.indexer import index_store
from engine.query import MAX_TERMS
from engine.scope import ScopeSpec
from engine.search import search
from engine.store import open_store

FTS5_SYNTAX = [
    "AND",
    "OR",
    "NOT",
    "NEAR",
    "NEAR(a b, 2)",
    "*",
    "^",
    ":",
    "title:",
    "{title body}:",
    "(",
    ")",
    '"',
    '""',
    "'",
    "-",
    "+",
    "\\",
    "%",
    "_",
    "\x00",
    "\u202e",
    "\u200f",
    "数据库",
    "قاعدة البيانات",
    "база данных",
    "हिन्दी",
    "🙂",
    "a" * 300,
]

query_text = st.one_of(
    st.text(),
    st.lists(st.one_of(st.sampled_from(FTS5_SYNTAX), st.text(max_size=8)), max_size=12).map(
        " ".join
    ),
    st.lists(st.sampled_from(FTS5_SYNTAX), max_size=30).map("".join),
)


@pytest.fixture(scope="module")
def store(tmp_path_factory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("props")
    bodies = {
        "a.md": "---\ntitle: Database port\nkind: semantic\ntags: [infra]\n---\nPort 6432.",
        "b.md": "---\ntitle: 数据库\nkind: episodic\nevent_at: 2026-10-03\n---\n数据库 迁移",
        "c.md": "---\ntitle: Notes %_\\\ntags: ['50%', a_b]\n---\nقاعدة البيانات NEAR AND OR",
    }
    for name, text in bodies.items():
        (root / name).write_text(text, encoding="utf-8")
    opened = open_store(root)
    index_store(opened, embedder=HashEmbedder())
    return opened


@settings(
    max_examples=10_000,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(query=query_text)
def test_any_query_returns_normally(store, query):
    result = search(store, query, embedder=HashEmbedder())
    assert isinstance(result.hits, list)
    assert set(result.arms_fired).isdisjoint(result.arms_dropped)


@settings(
    max_examples=1_500,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    kinds=st.lists(st.text(max_size=12), max_size=3),
    tags=st.lists(st.text(max_size=12), max_size=3),
    prefix=st.one_of(st.none(), st.text(max_size=12)),
    archived=st.booleans(),
)
def test_any_scope_value_is_bound_and_never_raises(store, kinds, tags, prefix, archived):
    spec = ScopeSpec(tuple(kinds), tuple(tags), prefix, include_archived=archived)
    result = search(store, "database", scope=spec, embedder=HashEmbedder())
    assert isinstance(result.hits, list)


@pytest.mark.parametrize("value", ["%", "_", "a_b", "50%", "' OR 1=1 --", "\\", '"'])
def test_scope_values_with_sql_and_like_characters_match_only_literally(store, value):
    by_prefix = search(store, "notes", scope=ScopeSpec(path_prefix=value), use_vector=False)
    assert by_prefix.hits == []
    by_tag = search(store, "notes", scope=ScopeSpec(tags=(value,)), use_vector=False)
    assert [h.path for h in by_tag.hits] == (["c.md"] if value in ("50%", "a_b") else [])


def test_a_100_kilobyte_query_is_cut_with_a_note(store):
    query = "database " + " ".join(f"word{i}" for i in range(12_000))
    result = search(store, query, embedder=HashEmbedder())
    assert len(query) > 100_000
    assert [h.path for h in result.hits][:1] == ["a.md"]
    assert any(f"first {MAX_TERMS} terms" in note for note in result.notes)


def test_lone_surrogates_in_query_and_scope_are_searched_not_raised(store):
    # A command-line argument that is not valid UTF-8 reaches Python as lone surrogates.
    spec = ScopeSpec(tags=("\udcff",), path_prefix="a\ud800")
    result = search(store, "caf\udce9 database", embedder=HashEmbedder(), scope=spec)
    assert result.hits == []
    assert [h.path for h in search(store, "\ud800 database", embedder=HashEmbedder()).hits][:1] == [
        "a.md"
    ]
