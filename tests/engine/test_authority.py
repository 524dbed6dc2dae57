"""Page authority as a rule: which tags raise a memory, which cap it, how they combine, and the
SQL expression that applies the same rule inside the fused statement."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass

import apsw
import pytest

from engine.arms import AUTHORITY
from engine.ranking.authority import CEILING, authority_problems, authority_sql, judge


@dataclass(frozen=True)
class Signal:
    name: str
    tags: tuple[str, ...]
    effect: str
    factor: float


RAISE = Signal("pinned", ("pinned",), "raise", 1.2)
ALSO = Signal("canonical", ("canonical", "source-of-truth"), "raise", 1.4)
PAST = Signal("superseded", ("superseded",), "cap", 0.5)
HARD = Signal("never", ("do-not-answer-from",), "cap", 0.05)
SIGNALS = (RAISE, ALSO, PAST, HARD)


def test_a_memory_without_signal_tags_keeps_its_score():
    assert judge(["ops", "staging"], SIGNALS).factor == 1.0
    assert judge([], SIGNALS).signals == ()


def test_a_raise_multiplies_by_its_factor():
    assert judge(["pinned"], SIGNALS).factor == pytest.approx(1.2)


def test_any_tag_of_a_signal_carries_it_once():
    verdict = judge(["canonical", "source-of-truth"], SIGNALS)
    assert verdict.factor == pytest.approx(1.4)
    assert verdict.signals == ("canonical",)


def test_raises_combine_by_product_up_to_the_ceiling():
    assert judge(["pinned", "canonical"], SIGNALS).factor == pytest.approx(CEILING)
    small = (Signal("a", ("a",), "raise", 1.1), Signal("b", ("b",), "raise", 1.1))
    assert judge(["a", "b"], small).factor == pytest.approx(1.21)


def test_a_cap_holds_the_memory_down_whatever_raises_it():
    verdict = judge(["pinned", "superseded"], SIGNALS)
    assert verdict.factor == 0.5
    assert verdict.signals == ("pinned", "superseded")


def test_the_lowest_cap_wins():
    assert judge(["superseded", "do-not-answer-from"], SIGNALS).factor == 0.05


def test_tags_match_whatever_their_case():
    assert judge(["Pinned"], SIGNALS).factor == pytest.approx(1.2)


def test_the_registry_signals_break_no_rule():
    assert authority_problems(AUTHORITY) == []


@pytest.mark.parametrize(
    ("signal", "field"),
    [
        (Signal("up", ("x",), "raise", 0.9), "factor"),
        (Signal("up", ("x",), "raise", CEILING + 0.1), "factor"),
        (Signal("down", ("x",), "cap", 1.0), "factor"),
        (Signal("down", ("x",), "lower", 0.5), "effect"),
        (Signal("bad", ("it's",), "cap", 0.5), "tags"),
        (Signal("bad", (), "cap", 0.5), "tags"),
        (Signal("Bad Name", ("x",), "cap", 0.5), "name"),
        (Signal("nan", ("x",), "cap", float("nan")), "factor"),
    ],
)
def test_a_signal_breaking_a_rule_is_named_with_its_field(signal, field):
    problems = authority_problems([signal])
    assert [f for _, f, _ in problems] == [field]


def test_two_signals_claiming_one_tag_is_a_problem():
    problems = authority_problems([RAISE, Signal("again", ("pinned",), "cap", 0.5)])
    assert any("claimed by" in message for _, _, message in problems)


def test_no_signals_make_no_expression():
    assert authority_sql([], "sqlite") == ""


def test_the_postgresql_expression_stays_in_floating_point():
    sql = authority_sql(SIGNALS, "postgresql")
    assert "CAST(1.2 AS double precision)" in sql and "least(" in sql
    assert "jsonb_array_elements_text(f.tags)" in sql


def every_tag_set() -> list[list[str]]:
    tags = ["pinned", "canonical", "source-of-truth", "superseded", "do-not-answer-from", "ops"]
    return [list(c) for n in range(len(tags) + 1) for c in itertools.combinations(tags, n)]


def test_the_sqlite_expression_gives_the_multiplier_the_rule_gives_for_every_tag_set():
    db = apsw.Connection(":memory:")
    db.execute("CREATE TABLE files(id INTEGER PRIMARY KEY, tags TEXT)")
    sets = every_tag_set()
    for i, tags in enumerate(sets):
        db.execute("INSERT INTO files VALUES (?, ?)", (i, json.dumps(tags)))
    rows = db.execute(
        f"SELECT id, {authority_sql(SIGNALS, 'sqlite')} FROM files AS f ORDER BY id"
    ).fetchall()
    assert [pytest.approx(value) for _, value in rows] == [
        judge(tags, SIGNALS).factor for tags in sets
    ]
