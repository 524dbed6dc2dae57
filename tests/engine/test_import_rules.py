"""Imports run one way: the pure parts of the engine (ranking, the memory file format, the
pipeline's records and rules, the status report) reach no database driver, so both backends
can build on them and neither reaches the other through them; and each driver is imported only
inside its own backend's package, so no surface or plugin loads one by itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
DRIVERS = {"apsw", "psycopg", "sqlite_vec", "pgvector"}
PURE = [
    "engine.arms", "engine.arm_rules", "engine.assemble", "engine.contract", "engine.scope",
    "engine.query", "engine.when", "engine.memory", "engine.web_charsets", "engine.splice",
    "engine.chunking", "engine.keys", "engine.reading", "engine.store", "engine.config",
    "engine.pipeline", "engine.status_report", "engine.index_run",
]


def module_file(name: str) -> Path | None:
    base = SRC.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imported(name: str) -> set[str]:
    """Every module ``name`` imports, at module level or inside a function."""
    path = module_file(name)
    assert path is not None, name
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def drivers_reached(name: str) -> dict[str, str]:
    """driver -> the engine module that imports it, over everything ``name`` reaches."""
    seen, todo, reached = set(), [name], {}
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        for other in imported(current):
            if other.split(".")[0] in DRIVERS:
                reached.setdefault(other.split(".")[0], current)
            elif other.startswith(("engine.", "arms_doc.")) and module_file(other):
                todo.append(other)
    return reached


@pytest.mark.parametrize("name", PURE)
def test_a_pure_module_reaches_no_database_driver(name):
    assert drivers_reached(name) == {}


def engine_modules() -> list[str]:
    names = []
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_no_two_modules_import_each_other_through_any_chain():
    graph = {
        name: {
            other
            for other in imported(name)
            if module_file(other) and other != name and not other.startswith(name + ".")
            and not name.startswith(other + ".")
        }
        for name in engine_modules()
    }
    cycles = []
    for start, targets in graph.items():
        for first in targets:
            seen, todo = set(), [first]
            while todo:
                current = todo.pop()
                if current == start:
                    cycles.append((start, first))
                    break
                if current not in seen:
                    seen.add(current)
                    todo.extend(graph.get(current, ()))
    assert cycles == []


def test_only_the_backend_module_reads_which_database_a_store_uses():
    readers = [
        name
        for name in engine_modules()
        if "database_target(" in module_file(name).read_text(encoding="utf-8")  # type: ignore[union-attr]
        and name not in ("engine.backend", "engine.pg.target")
    ]
    assert readers == []


#: The one package each driver may be imported from: a backend's driver stays inside that
#: backend, so a surface, a pure module or the plugin never loads it by itself and the other
#: backend never reaches it.
DRIVER_HOMES = {
    "apsw": "engine.sqlite",
    "sqlite_vec": "engine.sqlite",
    "psycopg": "engine.pg",
    "pgvector": "engine.pg",
}
def driver_imports(name: str) -> list[tuple[str, int]]:
    """(driver, line) of every import of a driver in ``name``, at module level or inside a
    function (``import apsw.ext`` and ``from pgvector.psycopg import ...`` count)."""
    path = module_file(name)
    assert path is not None, name
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules = [node.module]
        else:
            continue
        found += [(m.split(".")[0], node.lineno) for m in modules if m.split(".")[0] in DRIVERS]
    return found


def at_home(name: str, driver: str) -> bool:
    home = DRIVER_HOMES[driver]
    return name == home or name.startswith(home + ".")


def test_each_driver_is_imported_only_inside_its_backends_package():
    strays = [
        f"{module_file(name).relative_to(SRC)}:{line} imports {driver}"  # type: ignore[union-attr]
        for name in engine_modules()
        for driver, line in driver_imports(name)
        if not at_home(name, driver)
    ]
    assert strays == [], "give the import to the backend that owns the driver"
