"""The ranking fingerprint: what changes a ranking changes it; prose does not."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from engine.arms import ARMS
from engine.indexing.embedder import DEFAULT_MODEL, MINILM_DIM
from engine.measure.fingerprint import ranking
from engine.ranking.assemble import RRF_K


@dataclass(frozen=True)
class Entry:
    """An arm as the docs plugin's reader hands it over: the same fields as engine.arms.Arm."""

    name: str
    label: str
    weight: float
    needs: tuple[str, ...]
    prose: str
    sql: str
    pg_sql: str = ""


ENTRIES = [
    Entry(arm.name, arm.label, arm.weight, arm.needs, arm.prose, arm.sql, arm.pg_sql)
    for arm in ARMS
]
BASE = ranking(ENTRIES)


def with_entry(index: int, **changes: object):
    entries = list(ENTRIES)
    entries[index] = replace(entries[index], **changes)
    return ranking(entries)


def test_the_default_ranking_names_the_engines_constant_and_embedder():
    assert (BASE.rrf_k, BASE.embedder_model, BASE.embedder_dim) == (
        RRF_K,
        DEFAULT_MODEL,
        MINILM_DIM,
    )
    assert [arm.name for arm in BASE.arms] == [arm.name for arm in ARMS]


def test_the_registrys_arms_and_other_records_of_the_same_fields_rank_alike():
    assert ranking(ARMS) == BASE


def test_needs_are_a_set_their_order_does_not_matter():
    assert with_entry(0, needs=("state_plane", "query_terms")) == with_entry(
        0, needs=("query_terms", "state_plane")
    )


def test_an_arms_prose_is_not_part_of_the_ranking():
    changed = with_entry(0, prose=ENTRIES[0].prose.replace("the", "teh", 1))

    assert changed == BASE
    assert changed.sha256 == BASE.sha256
    assert changed.changes_since(BASE) == []


def test_an_arms_label_is_not_part_of_the_ranking():
    changed = with_entry(0, label="word-for-word ranking")

    assert changed == BASE
    assert changed.sha256 == BASE.sha256
    assert changed.changes_since(BASE) == []


def test_an_integer_weight_ranks_like_the_same_float():
    assert with_entry(0, weight=1) == with_entry(0, weight=1.0)


def changed_recency(weight: float, **changes: object) -> list[Entry]:
    return [replace(e, weight=weight, **changes) if e.name == "recency" else e for e in ENTRIES]


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"weight": 0.123}, "weight of recency 0.2 -> 0.123"),
        ({"sql": "SELECT 1"}, "SQL of recency"),
        ({"needs": ("state_plane",)}, "needs of recency"),
    ],
)
def test_a_change_to_an_arms_ranking_fields_is_named(changes, said):
    before = ranking(changed_recency(0.2))
    changed = ranking(changed_recency(**{"weight": 0.2, **changes}))

    assert changed != before and changed.sha256 != before.sha256
    assert changed.changes_since(before) == [said]


def test_a_new_arm_a_removed_arm_and_a_new_order_are_named():
    added = ranking([*ENTRIES, replace(ENTRIES[0], name="graph")])
    removed = ranking(ENTRIES[:-1])
    reordered = ranking([ENTRIES[1], ENTRIES[0], *ENTRIES[2:]])

    assert added.changes_since(BASE) == ["arm graph added"]
    assert removed.changes_since(BASE) == [f"arm {ENTRIES[-1].name} removed"]
    assert reordered.changes_since(BASE) == ["order of the arms"]


def test_the_fusion_constant_and_the_embedder_are_part_of_the_ranking():
    assert ranking(ENTRIES, rrf_k=RRF_K + 1).changes_since(BASE) == [
        f"fusion constant k {RRF_K} -> {RRF_K + 1}"
    ]
    assert ranking(ENTRIES, embedder_model="other", embedder_dim=768).changes_since(BASE) == [
        f"embedder {DEFAULT_MODEL} ({MINILM_DIM}-d) -> other (768-d)"
    ]


def test_a_postgresql_sql_edit_leaves_figures_measured_on_sqlite_fresh():
    before = ranking(changed_recency(0.2))
    changed = ranking(changed_recency(0.2, pg_sql="SELECT 1"))

    assert changed.changes_since(before) == []


def test_a_postgresql_sql_edit_makes_figures_measured_on_postgresql_stale():
    before = ranking(changed_recency(0.2))
    changed = ranking(changed_recency(0.2, pg_sql="SELECT 1"))

    assert changed.changes_since(before, ("postgresql",)) == ["PostgreSQL SQL of recency"]


def test_a_sqlite_sql_edit_leaves_figures_measured_on_postgresql_fresh():
    before = ranking(changed_recency(0.2))
    changed = ranking(changed_recency(0.2, sql="SELECT 1"))

    assert changed.changes_since(before, ("postgresql",)) == []


def test_figures_measured_on_both_backends_go_stale_with_either_dialects_sql():
    before = ranking(changed_recency(0.2))
    changed = ranking(changed_recency(0.2, sql="SELECT 1", pg_sql="SELECT 2"))

    assert changed.changes_since(before, ("sqlite", "postgresql")) == [
        "SQL of recency",
        "PostgreSQL SQL of recency",
    ]


def test_figures_stamped_before_the_postgresql_dialect_stay_fresh_for_sqlite():
    """A stamp without PostgreSQL digests measured no PostgreSQL SQL: adding that dialect to
    the registry changes nothing it measured."""
    old = ranking([replace(e, pg_sql="") for e in ENTRIES])

    assert all(arm.pg_sql_sha256 is None for arm in old.arms)
    assert BASE.changes_since(old) == []


def test_every_arm_of_the_registry_has_its_postgresql_sql_in_the_stamp():
    assert all(arm.pg_sql_sha256 for arm in ranking(ARMS).arms)
