"""Read the arm registry statically: parse the module with Python's own :mod:`ast`, never
import or run it.

The registry is a module-level assignment of a tuple (or list) literal of ``Arm(...)`` calls
whose keyword arguments are literals. Reading it from source rather than importing it means
the documentation quotes exactly what is written (``1.0`` stays ``1.0``), gives each entry its
line numbers, and cannot be fooled by code that computes a value at import time.

Anything that is not such a literal is a :class:`RegistryError` naming the file, the line and
the fix.
"""

from __future__ import annotations

import ast
import inspect
import re
from dataclasses import dataclass, field
from pathlib import Path

from engine.ranking.arm_rules import (
    LABEL_RULE,
    WEIGHT_RULE,
    label_problem,
    name_problem,
    weight_problem,
)
from engine.ranking.contract import INPUT_NAMES

#: The fields of an arm, in the order the registry writes them (``engine.arms.Arm``).
FIELDS = ("name", "label", "weight", "needs", "prose", "sql", "pg_sql")
#: Fields an entry may leave out: an arm's PostgreSQL SQL (a registry may predate the dialect).
OPTIONAL_FIELDS = frozenset({"pg_sql"})
STRING_FIELDS = frozenset({"name", "label", "prose", "sql", "pg_sql", "effect"})
#: Fields holding a tuple of string literals.
NAMES_FIELDS = frozenset({"needs", "tags"})
#: The fields of an authority signal (``engine.arms.Authority``), all required.
AUTHORITY_FIELDS = ("name", "label", "tags", "effect", "factor", "prose")
#: The variable holding the authority signals, read when the module assigns it.
AUTHORITY_VARIABLE = "AUTHORITY"


class RegistryError(Exception):
    """A registry the plugin cannot read; ``str()`` is ``file:line: message``."""

    def __init__(self, file: str, line: int | None, message: str) -> None:
        super().__init__(file, line, message)
        self.file = file
        self.line = line
        self.message = message

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class ArmEntry:
    """One ``Arm(...)`` entry as written in the registry."""

    name: str
    #: The arm's name in a user's words, as written.
    label: str
    weight: float
    #: The weight's source text, printed as written ("1.0" stays "1.0").
    weight_text: str
    #: The inputs the arm needs (engine.ranking.contract.INPUTS), as written.
    needs: tuple[str, ...]
    #: The prose string exactly as the registry holds it (what ``engine.arms`` sees at runtime).
    raw_prose: str
    #: The SQL string exactly as the registry holds it.
    sql: str
    #: First and last line of the ``Arm(...)`` call.
    start_line: int
    end_line: int
    #: The line each field's value starts on.
    field_lines: dict[str, int] = field(default_factory=dict, compare=False)
    #: The line each field's value ends on (the closing quotes of a multi-line string).
    field_end_lines: dict[str, int] = field(default_factory=dict, compare=False)
    #: True when the SQL literal holds its text as written (one string, no escapes), so an
    #: offset into ``sql`` maps to a line of the file (:meth:`sql_line`).
    sql_verbatim: bool = field(default=False, compare=False)
    #: The arm's PostgreSQL SQL exactly as the registry holds it ("" when it has none).
    pg_sql: str = ""

    def sql_line(self, offset: int | None = None) -> int:
        """The file's line of character ``offset`` in ``sql``; the line the SQL starts on when
        the offset is unknown or the literal does not map onto the file line for line."""
        start = self.field_lines.get("sql", self.start_line)
        if offset is None or not self.sql_verbatim:
            return start
        return start + self.sql[:offset].count("\n")

    def field_span(self, key: str) -> tuple[int, int] | None:
        """First and last line of field ``key``'s value; None when the entry leaves it out."""
        if key not in self.field_lines:
            return None
        start = self.field_lines[key]
        return start, self.field_end_lines.get(key, start)

    @property
    def prose(self) -> str:
        """The prose with common indentation and surrounding blank lines removed."""
        return inspect.cleandoc(self.raw_prose)


@dataclass(frozen=True)
class AuthorityEntry:
    """One ``Authority(...)`` entry as written in the registry."""

    name: str
    label: str
    tags: tuple[str, ...]
    effect: str
    factor: float
    #: The factor's source text, printed as written.
    factor_text: str
    raw_prose: str
    start_line: int
    end_line: int

    @property
    def prose(self) -> str:
        """The prose with common indentation and surrounding blank lines removed."""
        return inspect.cleandoc(self.raw_prose)


@dataclass(frozen=True)
class Registry:
    """The registry module as read: its docstring, its arms and its authority signals."""

    file: str
    variable: str
    #: Line of the assignment to ``variable``.
    line: int
    docstring: str | None
    arms: tuple[ArmEntry, ...]
    #: The signals of :data:`AUTHORITY_VARIABLE`; none when the module assigns no such name.
    authority: tuple[AuthorityEntry, ...] = ()


def read_registry(path: Path, variable: str = "ARMS", *, display: str | None = None) -> Registry:
    """Read the registry at ``path``; errors name ``display`` (default: the path as given)."""
    shown = display or str(path)
    try:
        source = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RegistryError(
            shown,
            None,
            f"no such file ({path}); point the plugin's `registry` option at the module",
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RegistryError(shown, None, f"cannot read the registry: {exc}") from None
    return parse_registry(source, shown, variable)


def parse_registry(source: str, file: str = "<registry>", variable: str = "ARMS") -> Registry:
    """Parse registry source text; ``file`` is the name errors use."""
    try:
        module = ast.parse(source, filename=file)
    except SyntaxError as exc:
        raise syntax_error(exc, file) from None
    return _Reader(file, variable, source, module).read()


#: Python's own refusal of an integer literal with more digits than it converts.
_TOO_MANY_DIGITS = re.compile(r"Exceeds the limit .* value has (\d+) digits")


def syntax_error(exc: SyntaxError, file: str) -> RegistryError:
    """The RegistryError for source Python cannot parse, at the line Python names."""
    if digits := _TOO_MANY_DIGITS.match(exc.msg or ""):
        # The only numbers an entry holds are weights; Python refuses the literal while parsing.
        return RegistryError(
            file,
            exc.lineno,
            f"a {digits.group(1)}-digit integer is too large for a number (Python itself "
            f"refuses to read it); {WEIGHT_RULE}",
        )
    return RegistryError(file, exc.lineno, f"not valid Python ({exc.msg}); fix the syntax")


#: One line of source and its ending, as Python's tokenizer splits lines.
_LINE = re.compile(r".*?(?:\r\n|\r|\n)|.+\Z", re.DOTALL)

#: Where a call's argument sits in the source, to take positional and keyword ones in order.
Argument = ast.expr | ast.keyword


class _Reader:
    def __init__(self, file: str, variable: str, source: str, module: ast.Module) -> None:
        self.file = file
        self.variable = variable
        self.module = module
        #: The source's lines with their endings; Python ends a line only at \n, \r\n or \r.
        self.lines = _LINE.findall(source)

    @staticmethod
    def line(node: ast.stmt | Argument) -> int:
        return node.lineno

    @staticmethod
    def end_line(node: ast.stmt | Argument) -> int:
        return node.end_lineno or node.lineno

    def span(self, node: ast.expr) -> tuple[int, int]:
        """First and last line of a field's value: of a parenthesized tuple's items, as the
        items are what is written inside the parentheses."""
        if isinstance(node, ast.Tuple) and node.elts and self.text(node).startswith("("):
            return self.line(node.elts[0]), self.end_line(node.elts[-1])
        return self.line(node), self.end_line(node)

    def error(self, node: ast.stmt | Argument | None, message: str) -> RegistryError:
        return RegistryError(self.file, self.line(node) if node is not None else None, message)

    def text(self, node: ast.stmt | Argument) -> str:
        """The node's source, exactly as written (what :func:`ast.get_source_segment` gives,
        with the source split into lines once rather than on every call)."""
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        start, end = node.col_offset, node.end_col_offset
        if end is None:
            return ""
        # Columns are offsets in UTF-8 bytes.
        if first == last:
            return self.lines[first].encode()[start:end].decode()
        head = self.lines[first].encode()[start:].decode()
        tail = self.lines[last].encode()[:end].decode()
        return head + "".join(self.lines[first + 1 : last]) + tail

    def code(self, node: ast.stmt | Argument, limit: int = 60) -> str:
        text = " ".join(self.text(node).split())
        return text if len(text) <= limit else text[: limit - 1] + "…"

    def read(self) -> Registry:
        statement, value = self.find_assignment()
        if not isinstance(value, ast.Tuple | ast.List):
            raise self.error(
                value,
                f"{self.variable} must be a tuple or list literal of Arm(...) entries, "
                f"found `{self.code(value)}`; write the entries out in the registry",
            )
        arms: list[ArmEntry] = []
        seen: dict[str, int] = {}
        for element in value.elts:
            if isinstance(element, ast.Starred):
                raise self.error(
                    element,
                    f"`{self.code(element)}` unpacks entries from elsewhere; "
                    "write each Arm(...) in the registry itself",
                )
            entry = self.read_arm(element)
            if entry.name in seen:
                raise RegistryError(
                    self.file,
                    entry.field_lines["name"],
                    f"duplicate arm name {entry.name!r} (first defined on line "
                    f"{seen[entry.name]}); give each arm a unique name",
                )
            seen[entry.name] = entry.field_lines["name"]
            arms.append(entry)
        if not arms:
            raise self.error(value, f"{self.variable} holds no arms; add at least one Arm(...)")
        return Registry(
            file=self.file,
            variable=self.variable,
            line=self.line(statement),
            docstring=ast.get_docstring(self.module),
            arms=tuple(arms),
            authority=self.read_authority(),
        )

    def read_authority(self) -> tuple[AuthorityEntry, ...]:
        """The module's authority signals (none when it assigns no :data:`AUTHORITY_VARIABLE`),
        checked by the engine's own rule so the page and the assembler accept the same."""
        from engine.ranking.authority import authority_problems

        found = self.assignments(AUTHORITY_VARIABLE)
        if not found:
            return ()
        if len(found) > 1:
            raise self.error(
                found[1][0],
                f"{AUTHORITY_VARIABLE} is assigned again (first on line "
                f"{self.line(found[0][0])}); keep one assignment",
            )
        statement, value = found[0]
        if not isinstance(value, ast.Tuple | ast.List):
            raise self.error(
                value,
                f"{AUTHORITY_VARIABLE} must be a tuple or list literal of Authority(...) "
                f"entries, found `{self.code(value)}`; write the entries out in the registry",
            )
        entries = tuple(self.read_signal(element) for element in value.elts)
        lines = {entry.name: entry.start_line for entry in entries}
        for name, _, message in authority_problems(entries):
            raise RegistryError(self.file, lines.get(name, self.line(statement)), message)
        return entries

    def read_signal(self, node: ast.expr) -> AuthorityEntry:
        if not (isinstance(node, ast.Call) and _callee_name(node.func) == "Authority"):
            raise self.error(
                node,
                f"entry `{self.code(node)}` is not an Authority(...) call; write "
                "Authority(name=..., ...)",
            )
        fields = list(AUTHORITY_FIELDS)
        given = self.keywords(node, "Authority", AUTHORITY_FIELDS, fields, "every signal")
        values = {key: self.literal(key, value) for key, value in given.items()}
        factor_text = self.text(given["factor"]).strip()
        if not str(values["prose"]).strip():
            raise self.error(
                node, f"authority {values['name']!r} has no prose; say what it means and why"
            )
        return AuthorityEntry(
            name=str(values["name"]),
            label=str(values["label"]),
            tags=tuple(values["tags"]),  # type: ignore[arg-type]
            effect=str(values["effect"]),
            factor=values["factor"],  # type: ignore[arg-type]
            factor_text=factor_text,
            raw_prose=str(values["prose"]),
            start_line=self.line(node),
            end_line=self.end_line(node),
        )

    def assignments(self, variable: str) -> list[tuple[ast.stmt, ast.expr]]:
        """Every module-level assignment to ``variable``, with its value."""
        found: list[tuple[ast.stmt, ast.expr]] = []
        for statement in self.module.body:
            if isinstance(statement, ast.AnnAssign) and statement.value is not None:
                if _is_name(statement.target, variable):
                    found.append((statement, statement.value))
            elif isinstance(statement, ast.Assign) and any(
                _is_name(target, variable) for target in statement.targets
            ):
                found.append((statement, statement.value))
        return found

    def find_assignment(self) -> tuple[ast.stmt, ast.expr]:
        found = self.assignments(self.variable)
        if not found:
            raise RegistryError(
                self.file,
                None,
                f"no module-level assignment to {self.variable}; set the plugin's `variable` "
                "option to the name the registry is assigned to",
            )
        if len(found) > 1:
            raise self.error(
                found[1][0],
                f"{self.variable} is assigned again (first on line {self.line(found[0][0])}); "
                "keep one assignment so the page and the runtime agree",
            )
        return found[0]

    def keywords(
        self, node: ast.Call, callee: str, fields: tuple[str, ...], required: list[str], who: str
    ) -> dict[str, ast.expr]:
        """The value node of each field of a ``callee(...)`` entry, every field written once by
        keyword, none unknown, the ``required`` ones present (``who``: "every arm")."""
        given: dict[str, ast.expr] = {}
        arguments: list[Argument] = [*node.args, *node.keywords]
        for arg in sorted(arguments, key=lambda a: (a.lineno, a.col_offset)):
            if isinstance(arg, ast.Starred) or (isinstance(arg, ast.keyword) and arg.arg is None):
                raise self.error(
                    arg, f"`{self.code(arg)}` is not a literal; write each field as field=value"
                )
            if not isinstance(arg, ast.keyword):
                raise self.error(
                    arg,
                    f"positional argument `{self.code(arg)}`; write every field by keyword "
                    f"({', '.join(fields)})",
                )
            key = str(arg.arg)
            if key not in fields:
                raise self.error(
                    arg,
                    f"unknown field {key!r} in {callee}(...); the fields are {', '.join(fields)}",
                )
            if key in given:
                raise self.error(arg, f"field {key!r} is given twice; keep one")
            given[key] = arg.value
        missing = [key for key in required if key not in given]
        if missing:
            raise self.error(
                node,
                f"{callee}(...) is missing {', '.join(missing)}; {who} declares all of "
                f"{', '.join(required)}",
            )
        return given

    def read_arm(self, node: ast.expr) -> ArmEntry:
        if not (isinstance(node, ast.Call) and _callee_name(node.func) == "Arm"):
            raise self.error(
                node, f"entry `{self.code(node)}` is not an Arm(...) call; write Arm(name=..., ...)"
            )
        required = [key for key in FIELDS if key not in OPTIONAL_FIELDS]
        given = self.keywords(node, "Arm", FIELDS, required, "every arm")
        values = {key: self.literal(key, value) for key, value in given.items()}
        lines: dict[str, int] = {}
        end_lines: dict[str, int] = {}
        for key, value in given.items():
            lines[key], end_lines[key] = self.span(value)
        weight_text = self.text(given["weight"]).strip()
        sql_verbatim = _verbatim(self.text(given["sql"]), str(values["sql"]))
        name = str(values["name"])
        # The engine's own rules, so the page and the assembler accept the same entries.
        if problem := name_problem(name):
            raise RegistryError(self.file, lines["name"], problem)
        if problem := label_problem(values["label"]):
            raise RegistryError(
                self.file,
                lines["label"],
                f"arm {name!r} has label {shorten(repr(values['label']))}, which is {problem}; "
                + LABEL_RULE,
            )
        prose = str(values["prose"])
        if not prose.strip():
            raise RegistryError(
                self.file,
                lines["prose"],
                f"arm {name!r} has no prose; say what it ranks by and when it drops out",
            )
        if not str(values["sql"]).strip():
            raise RegistryError(
                self.file, lines["sql"], f"arm {name!r} has no SQL; write its SELECT"
            )
        if problem := weight_problem(values["weight"]):
            raise RegistryError(
                self.file,
                lines["weight"],
                f"arm {name!r} has weight {shorten(weight_text)}, which is {problem}; "
                + WEIGHT_RULE,
            )
        for need in values["needs"]:  # type: ignore[attr-defined]
            if need not in INPUT_NAMES:
                raise RegistryError(
                    self.file,
                    lines["needs"],
                    f"arm {name!r} needs {need!r}, which is not an input; the inputs are "
                    + ", ".join(INPUT_NAMES),
                )
        weight = float(values["weight"])  # type: ignore[arg-type]
        return ArmEntry(
            name=name,
            label=str(values["label"]),
            weight=weight,
            weight_text=weight_text,
            needs=tuple(values["needs"]),  # type: ignore[arg-type]
            raw_prose=prose,
            sql=str(values["sql"]),
            start_line=self.line(node),
            end_line=self.end_line(node),
            field_lines=lines,
            field_end_lines=end_lines,
            sql_verbatim=sql_verbatim,
            pg_sql=str(values.get("pg_sql", "")),
        )

    def literal(self, key: str, node: ast.expr) -> object:
        """The value of a literal of the kind ``key`` needs, or a RegistryError."""
        if key in STRING_FIELDS:
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                return node.value
            expected = "a string literal"
        elif key in NAMES_FIELDS:
            expected = "a tuple of string literals, e.g. (\"query_terms\",)"
            if isinstance(node, ast.Tuple | ast.List):
                names = [
                    item.value
                    for item in node.elts
                    if isinstance(item, ast.Constant) and isinstance(item.value, str)
                ]
                if len(names) == len(node.elts):
                    return tuple(names)
                # At the first item that is not a string: the line to fix.
                stray = next(item for item in node.elts if not _is_string(item))
                raise RegistryError(
                    self.file,
                    self.line(stray),
                    f"field {key!r} is `{self.code(node)}`, not {expected}; the docs plugin "
                    "reads the registry without running it, so write the value out",
                )
        else:
            number = _number(node)
            if number is not None:
                return number
            expected = "a number literal"
        raise self.error(
            node,
            f"field {key!r} is `{self.code(node)}`, not {expected}; the docs plugin reads the "
            "registry without running it, so write the value out",
        )


def _is_string(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _callee_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


#: A string literal's prefix and opening quotes.
_OPENING = re.compile(r"[rRuUbBfF]*('\'\'|\"\"\"|'|\")")


def _verbatim(text: str, value: str) -> bool:
    """Whether the source ``text`` of a string literal holds ``value`` between its quotes
    exactly (one literal, no escapes): then an offset into the value maps to a line."""
    opening = _OPENING.match(text)
    if opening is None:
        return False
    quote = opening.group(1)
    if len(text) < opening.end() + len(quote) or not text.endswith(quote):
        return False
    return text[opening.end() : len(text) - len(quote)] == value


def _number(node: ast.expr) -> int | float | None:
    """An int or float literal, optionally signed, exactly as Python reads it (a huge integer
    stays an int: converting it to float here would raise); None for anything else."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        sign = -1 if isinstance(node.op, ast.USub) else 1
        node = node.operand
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    ):
        return sign * node.value
    return None


def shorten(text: str, limit: int = 24) -> str:
    """A literal as it can appear in a one-line message."""
    return text if len(text) <= limit else f"{text[: limit - 1]}… ({len(text)} characters)"
