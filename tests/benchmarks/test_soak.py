"""What soak.py calls a lost outcome: the answered reinforcements of a memory must fold, each
once, from 0 to the score state.db holds (answers arrive in any order, the server's rounded)."""

from __future__ import annotations

import random

from soak import Call, outcome_chain, step


def answered(outcomes: list[int], *, rounded: bool = False) -> tuple[list[Call], float]:
    """The calls of ``outcomes`` applied in this order, each answering its score after its own
    step, shuffled as concurrent answers arrive; and the final score."""
    calls, score = [], 0.0
    for outcome in outcomes:
        score = step(score, outcome)
        shown = round(score, 4) if rounded else score
        calls.append(Call("test", "reinforce", "a.md", outcome, None, {"outcome_score": shown}))
        calls[-1].rounded = rounded
    random.Random(3).shuffle(calls)
    return calls, score


OUTCOMES = [random.Random(19).choice((1, -1)) for _ in range(60)]


def test_answers_of_every_outcome_chain_to_the_final_score():
    calls, final = answered(OUTCOMES)
    assert outcome_chain(calls, final)


def test_rounded_answers_of_every_outcome_chain_to_the_final_score():
    calls, final = answered(OUTCOMES, rounded=True)
    assert outcome_chain(calls, final)


def test_an_answered_outcome_the_score_does_not_hold_breaks_the_chain():
    calls, _ = answered(OUTCOMES)
    _, without_the_last = answered(OUTCOMES[:-1])
    assert not outcome_chain(calls, without_the_last)


def test_two_answers_from_one_earlier_score_break_the_chain():
    # A lost update: the second writer read the score before the first one's step landed.
    calls, final = answered([1, -1])
    lost = Call("test", "reinforce", "a.md", 1, None, {"outcome_score": step(0.0, 1)})
    assert not outcome_chain([*calls, lost], final)
