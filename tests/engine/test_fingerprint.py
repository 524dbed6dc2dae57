"""The ranking fingerprint: what changes a ranking changes it; prose does not."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine.arms import ARMS
from engine.assemble import RRF_K
from engine.embedder import DEFAULT_MODEL, MINILM_DIM
from engine.fingerprint import ranking

BASE = ranking(ARMS)


def with_arm(index: int, **changes: object):
    arms = list(ARMS)
    arms[index] = replace(arms[index], **changes)
    return ranking(arms)


def test_the_default_ranking_names_the_engines_constant_and_embedder():
    assert (BASE.rrf_k, BASE.embedder_model, BASE.embedder_dim) == (
        RRF_K,
        DEFAULT_MODEL,
        MINILM_DIM,
    )
    assert [arm.name for arm in BASE.arms] == [arm.name for arm in ARMS]


def test_an_arms_prose_is_not_part_of_the_ranking():
    changed = with_arm(0, prose=ARMS[0].prose.replace("the", "teh", 1))

    assert changed == BASE
    assert changed.sha256 == BASE.sha256
    assert changed.changes_since(BASE) == []


def test_an_integer_weight_ranks_like_the_same_float():
    assert with_arm(0, weight=int(ARMS[0].weight)) == with_arm(0, weight=float(ARMS[0].weight))


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"weight": 0.123}, "weight of {name} {old:g} -> 0.123"),
        ({"sql": ARMS[2].sql + "\n"}, "SQL of {name}"),
        ({"needs_state_plane": not ARMS[2].needs_state_plane}, "needs of {name}"),
        ({"needs_query_terms": not ARMS[2].needs_query_terms}, "needs of {name}"),
        ({"needs_query_vector": not ARMS[2].needs_query_vector}, "needs of {name}"),
    ],
)
def test_a_change_to_an_arms_ranking_fields_is_named(changes, said):
    arm = ARMS[2]
    changed = with_arm(2, **changes)

    assert changed != BASE and changed.sha256 != BASE.sha256
    assert changed.changes_since(BASE) == [said.format(name=arm.name, old=arm.weight)]


def test_a_new_arm_a_removed_arm_and_a_new_order_are_named():
    added = ranking([*ARMS, replace(ARMS[0], name="graph")])
    removed = ranking(ARMS[:-1])
    reordered = ranking([ARMS[1], ARMS[0], *ARMS[2:]])

    assert added.changes_since(BASE) == ["arm graph added"]
    assert removed.changes_since(BASE) == [f"arm {ARMS[-1].name} removed"]
    assert reordered.changes_since(BASE) == ["order of the arms"]


def test_the_fusion_constant_and_the_embedder_are_part_of_the_ranking():
    assert ranking(ARMS, rrf_k=RRF_K + 1).changes_since(BASE) == [
        f"fusion constant k {RRF_K} -> {RRF_K + 1}"
    ]
    assert ranking(ARMS, embedder_model="other", embedder_dim=768).changes_since(BASE) == [
        f"embedder {DEFAULT_MODEL} ({MINILM_DIM}-d) -> other (768-d)"
    ]
