"""engine.indexing.budget: which chunks of a file the embedding budget embeds (the SQL form is
checked against this one on both backends in contract/test_contract_budget.py)."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from engine.indexing.budget import BUDGET_KEY, RULE, RULE_KEY, embeddable, rule_changed, stride

chunk_counts = st.integers(min_value=1, max_value=5000)
budgets = st.integers(min_value=1, max_value=200)


def chosen(chunks: int, budget: int) -> list[int]:
    return [seq for seq in range(chunks) if embeddable(seq, chunks, budget)]


@given(chunk_counts, budgets)
def test_a_file_within_the_budget_embeds_every_chunk(chunks, budget):
    if chunks <= budget:
        assert chosen(chunks, budget) == list(range(chunks))


@given(chunk_counts, budgets)
def test_a_file_over_the_budget_embeds_more_than_half_the_budget_and_never_more(chunks, budget):
    if chunks > budget:
        assert budget / 2 < len(chosen(chunks, budget)) <= budget


@given(chunk_counts, budgets)
def test_the_chosen_chunks_start_at_the_first_and_reach_the_last_stride(chunks, budget):
    picked = chosen(chunks, budget)
    step = stride(chunks, budget)
    assert picked[0] == 0 and chunks - 1 - picked[-1] < step
    assert all(b - a == step for a, b in pairwise(picked))


@given(chunk_counts, budgets, st.integers(min_value=1, max_value=5000))
def test_a_file_that_grows_keeps_every_chunk_it_still_chooses_embedded(chunks, budget, more):
    """Appending chunks never asks for a vector of a chunk that was there and not chosen: the
    stride only doubles, so what it chooses now among the old chunks it chose before."""
    before, after = set(chosen(chunks, budget)), set(chosen(chunks + more, budget))
    assert {seq for seq in after if seq < chunks} <= before


def test_the_shared_sets_documents_of_at_most_9_chunks_embed_whole_under_any_budget_of_9():
    assert all(chosen(chunks, 9) == list(range(chunks)) for chunks in range(1, 10))


def test_a_huge_budget_embeds_everything_without_overflow():
    assert chosen(50, 2**63 - 1) == list(range(50))


def test_an_index_chosen_under_another_rule_or_budget_is_seen_to_have_changed():
    assert not rule_changed({RULE_KEY: RULE, BUDGET_KEY: "40"}, 40)
    assert rule_changed({RULE_KEY: RULE, BUDGET_KEY: "32"}, 40)
    assert rule_changed({BUDGET_KEY: "40"}, 40)  # written before the rule was recorded
    assert rule_changed({}, 40)
