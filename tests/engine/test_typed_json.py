"""JSON to frozen dataclasses and back: the type hints are the schema, errors name the field."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from engine.measure.typed_json import ShapeError, dump, dumps, json_key, load


@dataclass(frozen=True)
class Point:
    x: float
    label: str | None = None


@dataclass(frozen=True)
class Shape:
    name: str
    points: tuple[Point, ...]
    tags: dict[str, int] = field(default_factory=dict)
    closed: bool = False
    score: float = field(default=0.0, metadata=json_key("score@10"))

    def __post_init__(self) -> None:
        if not self.points:
            raise ValueError("a shape has at least one point")


def error(value: object) -> ShapeError:
    with pytest.raises(ShapeError) as caught:
        load(Shape, value)
    return caught.value


def test_a_value_loads_into_the_dataclasses_and_dumps_back_unchanged():
    value = {
        "name": "tri",
        "points": [{"x": 1}, {"x": 2.5, "label": "b"}],
        "tags": {"a": 1},
        "closed": True,
        "score@10": 0.5,
    }

    shape = load(Shape, value)

    assert shape == Shape("tri", (Point(1.0), Point(2.5, "b")), {"a": 1}, True, 0.5)
    assert dump(shape) == {**value, "points": [{"x": 1.0}, {"x": 2.5, "label": "b"}]}


def test_fields_with_defaults_may_be_absent():
    assert load(Shape, {"name": "p", "points": [{"x": 0}]}) == Shape("p", (Point(0.0),))


def test_a_none_that_is_the_default_is_left_out_of_the_json():
    assert dump(Point(1.0)) == {"x": 1.0}


def test_a_missing_required_field_is_named_at_its_object():
    problem = error({"name": "p", "points": [{"label": "a"}]})

    assert (problem.pointer, problem.problem) == ("/points/0", "missing 'x'")


def test_an_unknown_field_is_refused_and_the_known_ones_listed():
    problem = error({"name": "p", "points": [{"x": 1, "y": 2}]})

    assert problem.pointer == "/points/0"
    assert problem.problem == "unknown field 'y' (the fields here are 'x', 'label')"


@pytest.mark.parametrize(
    ("value", "pointer", "problem"),
    [
        ({"name": 3, "points": []}, "/name", "expected a string, found 3"),
        ({"name": "p", "points": {}}, "/points", "expected a list, found an object"),
        ({"name": "p", "points": [{"x": "1"}]}, "/points/0/x", 'expected a number, found "1"'),
        ({"name": "p", "points": [{"x": True}]}, "/points/0/x", "expected a number, found true"),
        ({"name": "p", "points": [], "tags": {"a": 1.5}}, "/tags/a", "expected a whole number"),
        ({"name": "p", "points": [], "closed": 1}, "/closed", "expected true or false, found 1"),
        ({"name": "p", "points": [], "score@10": None}, "/score@10", "expected a number"),
        (["p"], "/", "expected an object, found a list"),
    ],
)
def test_a_value_of_the_wrong_type_is_named_by_its_pointer(value, pointer, problem):
    found = error(value)

    assert found.pointer == pointer
    assert found.problem.startswith(problem)


def test_a_non_finite_number_is_refused():
    problem = error(json.loads('{"name": "p", "points": [{"x": NaN}]}'))

    assert str(problem) == "/points/0/x: expected a finite number, found nan"


def test_a_key_with_a_slash_is_escaped_in_the_pointer():
    problem = error({"name": "p", "points": [{"x": 1}], "tags": {"a/b~c": "x"}})

    assert problem.pointer == "/tags/a~1b~0c"


def test_a_check_of_the_dataclass_itself_is_reported_at_its_object():
    problem = error({"name": "p", "points": []})

    assert (problem.pointer, problem.problem) == ("/", "a shape has at least one point")


def test_dumps_refuses_a_non_finite_number_rather_than_writing_invalid_json():
    with pytest.raises(ValueError):
        dumps(Point(float("inf")))


@dataclass(frozen=True)
class Tree:
    name: str
    children: tuple[Tree, ...] = ()
    parent: Tree | None = None


def test_a_dataclass_that_holds_itself_loads_at_every_depth():
    value = {"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]}

    tree = load(Tree, value)

    assert tree == Tree("a", (Tree("b", (Tree("c"),)),))


def test_an_error_deep_in_a_type_read_before_is_named_by_its_own_pointer():
    load(Tree, {"name": "a", "children": [{"name": "b"}]})

    with pytest.raises(ShapeError) as caught:
        load(Tree, {"name": "a", "children": [{"name": "b"}, {"name": "c", "parent": {"name": 3}}]})

    assert caught.value.pointer == "/children/1/parent/name"
