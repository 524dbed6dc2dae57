"""A time window compares moments, not texts, even before the year 1000: event times are kept
with a four-digit year, so year 5 sorts before year 1000 on both backends (they were written
``5-01-01 …``, after ``1000-…`` as text, and ``--since 0005-01-01`` matched nothing)."""

from __future__ import annotations

import pytest

from engine.ranking.scope import ScopeSpec
from engine.search import search

FILES = {
    "ancient.md": "---\ntitle: Ancient\nevent_at: 0005-03-01\n---\ncommon word\n",
    "medieval.md": "---\ntitle: Medieval\nevent_at: 0999-12-31\n---\ncommon word\n",
    "modern.md": "---\ntitle: Modern\nevent_at: 2026-10-03\n---\ncommon word\n",
}


@pytest.fixture
def store(indexed):  # type: ignore[no-untyped-def]
    return indexed(FILES)


def hits(store, hash_embedder, since=None, until=None) -> set[str]:  # type: ignore[no-untyped-def]
    scope = ScopeSpec(since=since, until=until)
    result = search(store, "common", scope=scope, embedder=hash_embedder, min_similarity=0)
    return {hit.path for hit in result.hits}


def test_since_year_1000_leaves_out_the_memories_before_it(store, hash_embedder):
    assert hits(store, hash_embedder, since="1000-01-01") == {"modern.md"}


def test_since_year_5_takes_every_memory_from_then_on(store, hash_embedder):
    assert hits(store, hash_embedder, since="0005-01-01") == set(FILES)


def test_until_year_999_takes_only_the_memories_up_to_its_end(store, hash_embedder):
    assert hits(store, hash_embedder, until="0999-12-31") == {"ancient.md", "medieval.md"}
