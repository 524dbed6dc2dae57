"""No query string and no scope value can make a search raise, on SQLite or on PostgreSQL.

Generated inputs mix arbitrary Unicode (NUL and control characters included) with the syntax of
both full-text engines (FTS5's operators, ``websearch_to_tsquery``'s and ``tsquery``'s), quotes,
right-to-left and CJK text and very long strings. The seed is fixed (derandomize), so a failure
reproduces. The query property runs 10,000 examples on SQLite and fewer on PostgreSQL, where
each search is a round trip to the server; the statement and the sanitiser in front of it are
the same on both, so what the server adds is its own parsing of the bound text, which the
explicit list below and a few hundred generated strings cover.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backends import BACKENDS, backend_named
from conftest import HashEmbedder
from engine.indexing.indexer import index_store
from engine.pg.target import URL_VARIABLE
from engine.ranking.query import MAX_TERMS
from engine.ranking.scope import ScopeSpec
from engine.search import Searcher, search

SYNTAX = [
    "AND",
    "OR",
    "NOT",
    "NEAR",
    "NEAR(a b, 2)",
    "*",
    "^",
    ":",
    ":*",
    "title:",
    "{title body}:",
    "(",
    ")",
    '"',
    '""',
    "'",
    "-",
    "+",
    "!",
    "&",
    "|",
    "<->",
    "<2>",
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
    st.lists(st.one_of(st.sampled_from(SYNTAX), st.text(max_size=8)), max_size=12).map(" ".join),
    st.lists(st.sampled_from(SYNTAX), max_size=30).map("".join),
)

#: Examples of the query property per backend.
EXAMPLES = {"sqlite": 10_000, "postgresql": 300}

HOSTILE = [
    "",
    "   ",
    '"unbalanced',
    "NEAR(a b) OR -x * ^title:",
    "a\x00b database",
    "\u202eevil\u202c database",
    "数据库 端口",
    "o'brien & | ! <-> :* (database)",
    "'' & !!",
    "x" * 100_000,
    "or and not",
    "database:* & port:A",
]

BODIES = {
    "a.md": "---\ntitle: Database port\nkind: semantic\ntags: [infra]\n---\nPort 6432.",
    "b.md": "---\ntitle: 数据库\nkind: episodic\nevent_at: 2026-10-03\n---\n数据库 迁移",
    "c.md": "---\ntitle: Notes %_\\\ntags: ['50%', a_b]\n---\nقاعدة البيانات NEAR AND OR",
}


@pytest.fixture(scope="module", params=BACKENDS)
def hostile_store(request, tmp_path_factory):  # type: ignore[no-untyped-def]
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(URL_VARIABLE, raising=False)
        backend = backend_named(request.param, request)
        store = backend.write(tmp_path_factory.mktemp(f"hostile-{request.param}"), BODIES)
        index_store(store, embedder=HashEmbedder())
        yield backend, store


@pytest.fixture
def store(hostile_store, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.delenv(URL_VARIABLE, raising=False)
    return hostile_store[1]


def test_any_query_returns_normally(hostile_store, monkeypatch):
    monkeypatch.delenv(URL_VARIABLE, raising=False)
    backend, store = hostile_store
    with Searcher(store, embedder=HashEmbedder()) as searcher:

        @settings(
            max_examples=EXAMPLES[backend.name],
            derandomize=True,
            database=None,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        )
        @given(query=query_text)
        def check(query: str) -> None:
            result = searcher.search(query)
            assert isinstance(result.hits, list)
            assert set(result.arms_fired).isdisjoint(result.arms_dropped)

        check()


@pytest.mark.parametrize("query", HOSTILE, ids=range(len(HOSTILE)))
def test_each_hostile_query_returns_normally(store, query):
    result = search(store, query, embedder=HashEmbedder())
    assert isinstance(result.hits, list)


@settings(
    max_examples=100,
    derandomize=True,
    database=None,
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
    result = search(store, "database", scope=spec, use_vector=False)
    assert isinstance(result.hits, list)


@pytest.mark.parametrize("value", ["%", "_", "a_b", "50%", "' OR 1=1 --", "\\", '"'])
def test_scope_values_with_sql_and_like_characters_match_only_literally(store, value):
    by_prefix = search(store, "notes", scope=ScopeSpec(path_prefix=value), use_vector=False)
    assert by_prefix.hits == []
    by_tag = search(store, "notes", scope=ScopeSpec(tags=(value,)), use_vector=False)
    assert [h.path for h in by_tag.hits] == (["c.md"] if value in ("50%", "a_b") else [])


def test_a_hostile_scope_leaves_the_index_whole(store):
    hostile = ScopeSpec(tags=("infra'; DROP TABLE files; --",), path_prefix="%")
    result = search(store, "database", scope=hostile, use_vector=False)
    assert result.hits == [] and result.empty_scope
    assert search(store, "database", use_vector=False).hits


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
    found = search(store, "\ud800 database", embedder=HashEmbedder()).hits
    assert [h.path for h in found][:1] == ["a.md"]
