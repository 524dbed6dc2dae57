"""Page authority on SQLite and on PostgreSQL: a memory's own tags scale its fused score, as the
seed system's authority does (a pinned memory above its unpinned twin, a superseded one below),
and --explain says by how much and why.

Twins share their text, so every arm ranks them side by side and only authority can part them
in a fixed direction: without it the tie goes to the path.
"""

from __future__ import annotations

import pytest

from backends import memory
from engine.ranking.assemble import assemble
from engine.ranking.contract import Available
from engine.search import search

BODY = "Staging deploys run through the pipeline, then an {} smoke test."
WORDS = {"a.md": "automatic", "b.md": "automated"}


def twins(**tags: str) -> dict[str, str]:
    """Near-twins (one word apart: identical texts would be folded into one hit as copies), with
    the tags given by file stem (``b="pinned"``), and an unrelated memory."""

    def one(path: str) -> str:
        tag = tags.get(path.removesuffix(".md"), "")
        fields = {"tags": f"[{tag}]"} if tag else {}
        return memory("Staging deploy procedure", BODY.format(WORDS[path]), **fields)

    return {path: one(path) for path in WORDS} | {"other.md": memory("Lunch", "Soup today.")}


def order(store, hash_embedder) -> list[str]:  # type: ignore[no-untyped-def]
    result = search(store, "how do staging deploys run", embedder=hash_embedder)
    return [hit.path for hit in result.hits if hit.path in WORDS]


@pytest.fixture
def untagged(indexed, hash_embedder) -> list[str]:  # type: ignore[no-untyped-def]
    """The twins' order on the arms alone: [winner, loser]."""
    ranked = order(indexed(twins()), hash_embedder)
    assert sorted(ranked) == sorted(WORDS)
    return ranked


def stem(path: str) -> str:
    return path.removesuffix(".md")


def test_a_pinned_memory_ranks_above_its_unpinned_twin(untagged, indexed, hash_embedder):
    winner, loser = untagged
    assert order(indexed(twins(**{stem(loser): "pinned"})), hash_embedder) == [loser, winner]


def test_a_canonical_memory_ranks_above_its_twin(untagged, indexed, hash_embedder):
    winner, loser = untagged
    store = indexed(twins(**{stem(loser): "source-of-truth"}))
    assert order(store, hash_embedder) == [loser, winner]


def test_a_superseded_memory_ranks_below_its_twin(untagged, indexed, hash_embedder):
    winner, loser = untagged
    assert order(indexed(twins(**{stem(winner): "historical"})), hash_embedder) == [loser, winner]


def test_a_superseded_memory_stays_down_even_when_pinned(untagged, indexed, hash_embedder):
    winner, loser = untagged
    store = indexed(twins(**{stem(winner): "pinned, superseded"}))
    assert order(store, hash_embedder) == [loser, winner]


def test_do_not_answer_from_sinks_below_an_unrelated_memory(indexed, hash_embedder):
    store = indexed(
        {
            "draft.md": memory(
                "Staging deploy procedure", BODY.format("automatic"), tags="[do-not-answer-from]"
            ),
            "weak.md": memory("Smoke", "The smoke test runs after deploys."),
        }
    )
    result = search(store, "how do staging deploys run", embedder=hash_embedder)
    assert [hit.path for hit in result.hits] == ["weak.md", "draft.md"]


def test_a_hit_carries_its_multiplier_and_the_signals_that_made_it(indexed, hash_embedder):
    store = indexed(twins(a="pinned", b="pinned"))
    hit = search(store, "staging deploys", embedder=hash_embedder).hits[0]
    assert (hit.authority, hit.authority_signals) == (pytest.approx(1.2), ("pinned",))
    summed = sum(arm.contribution for arm in hit.arms.values())
    assert hit.score == pytest.approx(1.2 * summed)


def test_a_hit_without_signals_has_multiplier_one(indexed, hash_embedder):
    store = indexed(twins(a="ops", b="ops"))
    hit = search(store, "staging deploys", embedder=hash_embedder).hits[0]
    assert (hit.authority, hit.authority_signals) == (1.0, ())


def test_json_output_carries_authority(indexed, hash_embedder):
    store = indexed(twins(a="canonical", b="canonical"))
    out = search(store, "staging deploys", embedder=hash_embedder).to_json()
    assert out["hits"][0]["authority"] == {"factor": pytest.approx(1.2), "signals": ["canonical"]}


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_the_sign_of_the_score_decides_multiply_or_divide(dialect):
    sql = assemble(Available(), dialect_name=dialect).sql
    assert (
        "CASE WHEN fused_score >= 0 THEN fused_score * authority "
        "ELSE fused_score / authority END" in sql
    )


ARGO = "Deploys go through Argo CD for every service."
NO_ARGO = "Deploys no longer go through Argo CD for every service."


@pytest.mark.parametrize("tag", ["superseded", "do-not-answer-from"])
def test_a_retired_memory_stays_below_its_twin_that_denies_it(indexed, hash_embedder, tag):
    # The asserting twin would move above the denying one by the twin rule; its own tags say
    # it is retired, and the tags win: it is not lifted above its twin, nor above others.
    store = indexed(
        {
            "old.md": memory("Deploy tool", ARGO, tags=f"[{tag}]"),
            "new.md": memory("Deploy tool", NO_ARGO),
        }
    )
    result = search(store, "what do deploys go through", embedder=hash_embedder)
    assert [hit.path for hit in result.hits] == ["new.md", "old.md"]
    assert [hit.above_twin for hit in result.hits] == [None, None]
