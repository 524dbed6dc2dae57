"""Near-twins that deny each other, as a rule: texts in, an order out."""

from __future__ import annotations

import numpy as np

from engine.ranking.twins import TWIN_WINDOW, Candidate, denials, order_twins, twins

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


def test_a_query_that_negates_keeps_the_fused_order():
    hits = [Candidate(NOT_HOSTED), Candidate(HOSTED)]
    assert order_twins("where is the warehouse not hosted", hits) == ([0, 1], {})


def test_an_asserting_hit_already_above_stays():
    hits = [Candidate(HOSTED), Candidate(NOT_HOSTED)]
    assert order_twins("which region hosts the warehouse", hits) == ([0, 1], {})


def test_unrelated_hits_are_not_reordered_by_their_negations():
    hits = [Candidate("The cache is not warmed at boot."), Candidate(OTHER)]
    assert order_twins("cache", hits) == ([0, 1], {})


def test_only_the_first_hits_are_compared():
    filler = [Candidate(f"unrelated note number {i}") for i in range(TWIN_WINDOW)]
    hits = [Candidate(NOT_HOSTED), *filler, Candidate(HOSTED)]
    order, moved = order_twins("which region hosts the warehouse", hits)
    assert (order, moved) == (list(range(len(hits))), {})
