"""Near-twins that deny each other, as a rule: texts in, an order out."""

from __future__ import annotations

import numpy as np

from engine.ranking.twins import (
    TWIN_WINDOW,
    Candidate,
    denials,
    order_twins,
    restates,
    stem,
    twins,
)

HOSTED = "The analytics warehouse is hosted in eu-west-1, next to the ingestion cluster."
NOT_HOSTED = "The analytics warehouse is not hosted in eu-west-1, next to the ingestion cluster."
USED_TO = "The analytics warehouse used to be hosted in eu-west-1, next to the ingestion cluster."
OTHER = "Lunch on Fridays is pizza from the place around the corner, paid by the team budget."


def test_denials_count_negations_and_retirements_once_each():
    assert denials(HOSTED) == 0
    assert denials(NOT_HOSTED) == 1
    assert denials("It no longer runs; it was replaced and isn't coming back.") == 3


def test_texts_one_denial_apart_are_twins_by_their_words():
    assert twins(Candidate(HOSTED), Candidate(NOT_HOSTED))
    assert not twins(Candidate(HOSTED), Candidate(OTHER))


def test_a_short_note_inside_a_long_text_is_no_twin():
    long = HOSTED + " " + " ".join(f"word{i}" for i in range(40))
    assert not twins(Candidate(HOSTED), Candidate(long))


def test_close_vectors_make_twins_whatever_the_words():
    vector = np.array([1.0, 0.0], dtype=np.float32)
    assert twins(Candidate("alpha", vector), Candidate("omega", vector))


def test_the_asserting_twin_moves_above_the_denying_one():
    order, moved = order_twins(
        "which region hosts the warehouse", [Candidate(NOT_HOSTED), Candidate(HOSTED)]
    )
    assert (order, moved) == ([1, 0], {1: 0})


def test_it_moves_above_every_denying_twin_but_no_further():
    hits = [Candidate(OTHER), Candidate(USED_TO), Candidate(NOT_HOSTED), Candidate(HOSTED)]
    order, moved = order_twins("which region hosts the warehouse", hits)
    assert order == [0, 3, 1, 2]
    assert moved == {3: 1}


def test_of_two_twins_that_both_deny_neither_moves():
    no_longer = "The analytics warehouse is no longer hosted in eu-west-1, not since the move."
    order, moved = order_twins(
        "which region hosts the warehouse", [Candidate(no_longer), Candidate(NOT_HOSTED)]
    )
    assert (order, moved) == ([0, 1], {})


def test_a_query_that_negates_keeps_the_fused_order():
    hits = [Candidate(NOT_HOSTED), Candidate(HOSTED)]
    assert order_twins("where is the warehouse not hosted", hits) == ([0, 1], {})


def test_an_asserting_hit_already_above_stays():
    hits = [Candidate(HOSTED), Candidate(NOT_HOSTED)]
    assert order_twins("which region hosts the warehouse", hits) == ([0, 1], {})


def test_unrelated_hits_are_not_reordered_by_their_negations():
    hits = [Candidate("The cache is not warmed at boot."), Candidate(OTHER)]
    assert order_twins("cache", hits) == ([0, 1], {})


def test_a_twin_its_tags_trust_less_stays_below_the_one_that_denies():
    # superseded (0.5) or do-not-answer-from (0.05): the memory's own tags retired it, so the
    # denial of it ranks first whatever their words
    for authority in (0.5, 0.05):
        hits = [Candidate(NOT_HOSTED), Candidate(HOSTED, authority=authority)]
        assert order_twins("which region hosts the warehouse", hits) == ([0, 1], {})


def test_a_denying_twin_its_tags_trust_more_keeps_its_place():
    hits = [Candidate(NOT_HOSTED, authority=1.2), Candidate(HOSTED)]
    assert order_twins("which region hosts the warehouse", hits) == ([0, 1], {})


def test_twins_of_equal_authority_follow_their_words():
    hits = [Candidate(NOT_HOSTED, authority=0.5), Candidate(HOSTED, authority=0.5)]
    assert order_twins("which region hosts the warehouse", hits) == ([1, 0], {1: 0})


def test_only_the_first_hits_are_compared():
    filler = [Candidate(f"unrelated note number {i}") for i in range(TWIN_WINDOW)]
    hits = [Candidate(NOT_HOSTED), *filler, Candidate(HOSTED)]
    order, moved = order_twins("which region hosts the warehouse", hits)
    assert (order, moved) == (list(range(len(hits))), {})


WEEKLY = "Weekly incident summary"
WANTS = (
    "The user wants a weekly summary of open incidents every Monday morning, grouped by "
    "service and sorted by age."
)
UNWANTED = (
    "The user no longer wants a weekly summary of open incidents on Monday mornings; "
    "nothing more is needed there."
)


def unit(cosine: float) -> np.ndarray:
    """A 2-d unit vector at ``cosine`` from (1, 0)."""
    return np.array([cosine, np.sqrt(1 - cosine**2)], dtype=np.float32)


def test_a_twin_that_adds_a_clause_which_only_denies_restates_its_memory():
    assert restates(Candidate(WANTS, title=WEEKLY), Candidate(UNWANTED, title=WEEKLY))


def test_clauses_that_only_deny_are_left_out_of_the_comparison():
    unwanted = (
        "The user no longer wants a weekly summary of open incidents. Nothing about incident "
        "reports is needed from the bot any more."
    )
    assert restates(Candidate(WANTS, title=WEEKLY), Candidate(unwanted, title=WEEKLY))


def test_only_a_memory_under_the_same_title_restates():
    assert not restates(Candidate(WANTS, title=WEEKLY), Candidate(UNWANTED, title="Summaries"))
    assert not restates(Candidate(WANTS), Candidate(UNWANTED))


def test_a_memory_under_the_same_title_that_says_something_else_does_not_restate():
    other = "The on-call rota is not published on the wiki; ask the team lead for it."
    assert not restates(Candidate(WANTS, title=WEEKLY), Candidate(other, title=WEEKLY))


def test_a_sliver_of_a_long_memory_is_no_restatement_of_it():
    sliver = "No weekly summary."
    assert not restates(Candidate(WANTS, title=WEEKLY), Candidate(sliver, title=WEEKLY))


def test_far_apart_vectors_veto_a_restatement():
    far = (unit(1.0), unit(0.3))
    assert not restates(Candidate(WANTS, far[0], WEEKLY), Candidate(UNWANTED, far[1], WEEKLY))
    near = (unit(1.0), unit(0.69))
    assert restates(Candidate(WANTS, near[0], WEEKLY), Candidate(UNWANTED, near[1], WEEKLY))


def test_a_restating_twin_below_the_similarity_of_twins_still_yields_to_the_memory():
    hits = [Candidate(UNWANTED, unit(0.69), WEEKLY), Candidate(WANTS, unit(1.0), WEEKLY)]
    assert not twins(*hits)
    assert order_twins("does the user want a weekly summary of open incidents", hits) == (
        [1, 0],
        {1: 0},
    )


def test_word_forms_meet_at_one_stem():
    assert stem("mornings") == stem("morning")
    assert stem("pages") == stem("paging")
    assert stem("incidents") == stem("incident")


def test_the_matrix_screen_decides_every_pair_as_its_own_dot_product_does(monkeypatch):
    # The pairs' dot products come from one matrix product, which may differ from a single
    # dot product in the last bits; pairs around both floors, denials and shared titles make
    # the decisions matter. The order must be the one of dot products computed one by one.
    import engine.ranking.twins as module

    rng = np.random.default_rng(5)
    texts = [HOSTED, NOT_HOSTED, USED_TO, OTHER]
    for _ in range(300):
        base = rng.standard_normal(384).astype(np.float32)
        base /= np.linalg.norm(base)
        hits = []
        for _ in range(rng.integers(2, 9)):
            target = rng.choice([0.6, 0.8, 0.95, 0.3, 0.99]) + rng.normal(0, 1e-6)
            noise = rng.standard_normal(384).astype(np.float32)
            noise -= (noise @ base) * base
            noise /= np.linalg.norm(noise)
            vector = (target * base + np.sqrt(max(0.0, 1 - target**2)) * noise).astype(np.float32)
            title = str(rng.choice(["Warehouse", "Lunch"]))
            hits.append(Candidate(str(rng.choice(texts)), vector, title))
        screened = order_twins("where is the analytics warehouse", hits)
        monkeypatch.setattr(module, "gram_screen", lambda vectors: None)
        assert order_twins("where is the analytics warehouse", hits) == screened
        monkeypatch.undo()
