"""A listing, on SQLite and on PostgreSQL: no query arm runs and recency ranks alone ("what is
recent"). The statement reads only recency's first candidates, newest first, from the index on
the moment instead of ranking every memory in scope; these tests hold it to the order of ranking
every memory: ties share a rank and go by path, and authority tags still count, including a
raise that lifts a memory from past those first candidates (the statement then ranks them all).
"""

from __future__ import annotations

import pytest

from backends import memory
from engine.arms import ARMS, AUTHORITY
from engine.ranking.assemble import RRF_K
from engine.ranking.authority import judge
from engine.search import search

RECENCY_ALONE = {"fts": 0, "vector": 0, "salience": 0}
WEIGHT = next(arm.weight for arm in ARMS if arm.name == "recency")


def store_of(moments: dict[str, tuple[str, str]]) -> dict[str, str]:
    """Memories named by path, each with its event time and its tags."""
    return {
        path: memory(f"Note {path}", "words", event_at=moment, tags=tags)
        for path, (moment, tags) in moments.items()
    }


def full_ranking(moments: dict[str, tuple[str, str]], limit: int) -> list[tuple[str, int]]:
    """What ranking every memory gives: rank() by moment (ties share a rank), the score scaled by
    the memory's authority, ties in score by rank then path."""
    rank = {p: 1 + sum(m > moments[p][0] for m, _ in moments.values()) for p in moments}

    def score(path: str) -> float:
        tags = moments[path][1].strip("[]").split(", ") if moments[path][1] != "[]" else []
        return WEIGHT / (RRF_K + rank[path]) * judge(tags, AUTHORITY).factor

    order = sorted(moments, key=lambda p: (-score(p), rank[p], p))
    return [(p, rank[p]) for p in order[:limit]]


def listing(store, limit: int, candidates: int) -> list[tuple[str, int]]:  # type: ignore[no-untyped-def]
    result = search(store, "", weights=RECENCY_ALONE, limit=limit, candidate_limit=candidates)
    assert result.arms_fired == ["recency"]
    return [(h.path, h.arms["recency"].rank) for h in result.hits]


TIED = {
    "e.md": ("2026-03-05", "[]"),
    "c.md": ("2026-03-04", "[]"),
    "a.md": ("2026-03-04", "[]"),
    "d.md": ("2026-03-04", "[]"),
    "b.md": ("2026-03-03", "[]"),
    "f.md": ("2026-03-01", "[]"),
    "g.md": ("2026-02-01", "[]"),
}


@pytest.mark.parametrize(
    ("limit", "candidates"), [(1, 1), (2, 2), (3, 3), (2, 4), (7, 7), (3, 100)]
)
def test_a_listing_ranks_ties_together_and_orders_them_by_path(indexed, limit, candidates):
    store = indexed(store_of(TIED))
    assert listing(store, limit, candidates) == full_ranking(TIED, limit)


def test_a_listing_cut_inside_a_tie_keeps_the_ties_shared_rank(indexed):
    store = indexed(store_of(TIED))
    assert listing(store, 3, 3) == [("e.md", 1), ("a.md", 2), ("c.md", 2)]


CAPPED = {
    "new1.md": ("2026-05-05", "[do-not-answer-from]"),
    "new2.md": ("2026-05-04", "[do-not-answer-from]"),
    "new3.md": ("2026-05-03", "[superseded]"),
    "old1.md": ("2026-05-02", "[]"),
    "old2.md": ("2026-05-01", "[]"),
    "old3.md": ("2026-04-30", "[]"),
}


def test_capped_recent_memories_give_way_to_older_ones_past_the_first_candidates(indexed):
    store = indexed(store_of(CAPPED))
    assert listing(store, 2, 3) == full_ranking(CAPPED, 2) == [("old1.md", 4), ("old2.md", 5)]


PINNED = {
    "a.md": ("2026-06-04", "[]"),
    "b.md": ("2026-06-03", "[]"),
    "c.md": ("2026-06-02", "[]"),
    "pinned.md": ("2026-06-01", "[pinned]"),
    "e.md": ("2026-05-01", "[]"),
}


def test_a_pinned_memory_past_the_first_candidates_still_rises(indexed):
    # Rank 4 pinned: 1.2 * 0.02 / 24 beats rank 1's 0.02 / 21.
    store = indexed(store_of(PINNED))
    assert listing(store, 2, 3) == full_ranking(PINNED, 2) == [("pinned.md", 4), ("a.md", 1)]
