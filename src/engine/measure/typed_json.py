"""JSON to frozen dataclasses and back, checked against the dataclasses' own type hints.

The benchmark results are defined once, as dataclasses (:mod:`engine.measure.results_schema`); the
writers serialise them with :func:`dump` and the docs build reads them back with :func:`load`.
There is no second description of the files to keep in step: the type hints are the schema.

:func:`load` accepts exactly what the hints say (a float field takes a finite number, an
``X | None`` field takes null, a field without a default must be present, an unknown key is
refused) and names the first thing that is wrong by its JSON pointer, so an error can say
which field of which file. A dataclass may check more in ``__post_init__`` by raising
ValueError; the message is reported at that object's pointer.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from collections.abc import Callable
from functools import cache
from typing import Any, TypeVar

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "ShapeError",
    "dump",
    "load",
]

T = TypeVar("T")

#: Field metadata naming the JSON key of a field whose key is not a Python name ("ndcg@10").
JSON_KEY = "json_key"


class ShapeError(ValueError):
    """A JSON value that does not fit the type; ``pointer`` says where (RFC 6901)."""

    def __init__(self, pointer: str, problem: str) -> None:
        super().__init__(f"{pointer or '/'}: {problem}")
        self.pointer = pointer or "/"
        self.problem = problem


def json_key(key: str) -> dict[str, str]:
    """Metadata for ``dataclasses.field`` giving the field another key in JSON."""
    return {JSON_KEY: key}


def key_of(field: dataclasses.Field[Any]) -> str:
    return field.metadata.get(JSON_KEY, field.name)


@cache
def hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def load(cls: type[T], value: object) -> T:
    """``value`` (parsed JSON) as an instance of ``cls``, or a :class:`ShapeError`."""
    return _convert(cls, value, "")


def dump(value: object) -> object:
    """A dataclass (or a structure of them) as plain JSON values, keys as :func:`load` reads.

    A field that is None and defaults to None is left out, as :func:`load` reads its absence.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            key_of(f): dump(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not (getattr(value, f.name) is None and f.default is None)
        }
    if isinstance(value, list | tuple):
        return [dump(item) for item in value]
    if isinstance(value, dict):
        return {str(key): dump(item) for key, item in value.items()}
    return value


def dumps(value: object) -> str:
    """The JSON text the benchmarks write: indented, finite numbers only, newline-terminated."""
    return json.dumps(dump(value), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _token(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _describe(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + '..."'


#: Reads a parsed JSON value at a pointer as one type.
Reader = Callable[[object, str], Any]


def _convert(tp: Any, value: object, at: str) -> Any:
    return _reader(tp)(value, at)


@cache
def _reader(tp: Any) -> Reader:
    """The reader of values of type ``tp``, made once per type: the results files hold
    thousands of values of a few dozen types, and working out what a type asks for (its
    origin, its arguments, a dataclass's fields and hints) costs more than checking a value."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        optional = type(None) in args
        inner = [arg for arg in args if arg is not type(None)]
        if len(inner) != 1:  # only X | None is supported
            return _unsupported(tp)
        read_inner = _reader(inner[0])

        def read_union(value: object, at: str) -> Any:
            if value is None and optional:
                return None
            return read_inner(value, at)

        return read_union
    if dataclasses.is_dataclass(tp):
        cls: type = tp  # type: ignore[assignment]
        return lambda value, at: _object(cls, value, at)
    if origin in (list, tuple):
        as_tuple = origin is tuple
        read_item = _reader(args[0]) if args else _unsupported(tp)

        def read_sequence(value: object, at: str) -> Any:
            if not isinstance(value, list):
                raise ShapeError(at, f"expected a list, found {_describe(value)}")
            items = [read_item(item, f"{at}/{i}") for i, item in enumerate(value)]
            return tuple(items) if as_tuple else items

        return read_sequence
    if origin is dict:
        read_value = _reader(args[1]) if len(args) == 2 else _unsupported(tp)

        def read_dict(value: object, at: str) -> Any:
            if not isinstance(value, dict):
                raise ShapeError(at, f"expected an object, found {_describe(value)}")
            return {key: read_value(item, f"{at}/{_token(key)}") for key, item in value.items()}

        return read_dict
    if tp in _SCALARS:
        return _SCALARS[tp]
    return _unsupported(tp)


def _unsupported(tp: Any) -> Reader:
    def read(value: object, at: str) -> Any:
        raise TypeError(f"typed_json cannot read the type {tp!r}")  # a schema bug, not a file's

    return read


def _bool(value: object, at: str) -> bool:
    if not isinstance(value, bool):
        raise ShapeError(at, f"expected true or false, found {_describe(value)}")
    return value


def _int(value: object, at: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ShapeError(at, f"expected a whole number, found {_describe(value)}")
    return value


def _float(value: object, at: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ShapeError(at, f"expected a number, found {_describe(value)}")
    if not math.isfinite(value):
        raise ShapeError(at, f"expected a finite number, found {value}")
    return float(value)


def _str(value: object, at: str) -> str:
    if not isinstance(value, str):
        raise ShapeError(at, f"expected a string, found {_describe(value)}")
    return value


_SCALARS: dict[Any, Reader] = {bool: _bool, int: _int, float: _float, str: _str}


@dataclasses.dataclass(frozen=True)
class _Field:
    key: str
    name: str
    read: Reader
    required: bool


@cache
def _fields(cls: type) -> tuple[dict[str, _Field], str]:
    """A dataclass's fields by JSON key, and their keys listed for a message."""
    fields = {
        key_of(f): _Field(
            key_of(f),
            f.name,
            _reader(hints(cls)[f.name]),
            f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
        )
        for f in dataclasses.fields(cls)
    }
    return fields, ", ".join(repr(name) for name in fields)


def _object(cls: type, value: object, at: str) -> Any:
    if not isinstance(value, dict):
        raise ShapeError(at, f"expected an object, found {_describe(value)}")
    fields, known = _fields(cls)
    for key in value:
        if key not in fields:
            raise ShapeError(at, f"unknown field {key!r} (the fields here are {known})")
    kwargs = {}
    for key, field in fields.items():
        if key in value:
            kwargs[field.name] = field.read(value[key], f"{at}/{_token(key)}")
        elif field.required:
            raise ShapeError(at, f"missing {key!r}")
    try:
        return cls(**kwargs)
    except ValueError as exc:
        raise ShapeError(at, str(exc)) from None
