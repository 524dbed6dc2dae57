"""Imports run one way: the pure parts of the engine (ranking, the memory file format, the
pipeline's records and rules, the status report) reach no database driver, so both backends
can build on them and neither reaches the other through them; each driver is imported only
inside its own backend's package, so no surface or plugin loads one by itself; and measurement
(``engine.measure``: eval and the benchmark results files) sits above the product, so
indexing, searching and serving never load the lab's records."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections import deque
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
DRIVERS = {"apsw", "psycopg", "sqlite_vec", "pgvector"}
#: Packages that are pure throughout (every module in them, now and later) and the pure
#: modules elsewhere.
PURE_PACKAGES = ("ranking", "files")
PURE_MODULES = [
    "engine.arms",
    "engine.indexing.pipeline",
    "engine.indexing.index_run",
    "engine.status_report",
]
PURE = PURE_MODULES + sorted(
    f"engine.{package}.{path.stem}" if path.stem != "__init__" else f"engine.{package}"
    for package in PURE_PACKAGES
    for path in (SRC / "engine" / package).glob("*.py")
)


def module_file(name: str, root: Path = SRC) -> Path | None:
    base = root.joinpath(*name.split("."))
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


def engine_modules(root: Path = SRC) -> list[str]:
    names = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
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


# --------------------------------------------------------------------------- measurement

MEASURE = "engine.measure"
#: Who may import measurement, and where: the command line inside ``memsift eval`` only, and
#: the docs plugin (its Measured page reads the results files through the results schema).
MEASURE_USERS = {"engine.cli": {"eval_command"}}
MEASURE_READERS = ("arms_doc",)
#: What a search, an index run or a server loads; none of it may reach measurement.
PRODUCT_ROOTS = (
    "engine", "engine.cli", "engine.search", "engine.agents.service", "engine.agents.mcp_server"
)


def is_measure(name: str) -> bool:
    return name == MEASURE or name.startswith(MEASURE + ".")


def import_names(node: ast.AST, package: str) -> set[str]:
    """The modules one import statement names, a relative one resolved against ``package``."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names}
    if not isinstance(node, ast.ImportFrom):
        return set()
    if node.level:
        base = package.split(".")[: len(package.split(".")) - node.level + 1]
        module = ".".join(base + ([node.module] if node.module else []))
    else:
        module = node.module or ""
    return {module} | {f"{module}.{alias.name}" for alias in node.names}


def package_of(name: str, root: Path = SRC) -> str:
    path = module_file(name, root)
    return name if path is not None and path.name == "__init__.py" else name.rpartition(".")[0]


def imports_by_function(name: str, root: Path = SRC) -> dict[str | None, set[str]]:
    """The modules ``name`` imports, keyed by the outermost function holding the import
    (``None``: run when the module is imported, class bodies and ``if`` blocks included)."""
    path = module_file(name, root)
    assert path is not None, name
    package = package_of(name, root)
    found: dict[str | None, set[str]] = {}

    def visit(node: ast.AST, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            inside = function
            if function is None and isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
            ):
                inside = getattr(child, "name", "<lambda>")
            names = import_names(child, package)
            if names:
                found.setdefault(inside, set()).update(names)
            visit(child, inside)

    visit(ast.parse(path.read_text(encoding="utf-8")), None)
    return found


def loaded_with(name: str, root: Path = SRC) -> dict[str, str]:
    """Every module importing ``name`` loads (module-level imports, followed through every
    chain, each module's parent packages included) -> the module that imports it."""
    todo: deque[tuple[str, str]] = deque([(name, name)])
    loaded: dict[str, str] = {}
    while todo:  # breadth first, so each module is named by the nearest importer
        current, by = todo.popleft()
        if current in loaded or module_file(current, root) is None:
            continue
        loaded[current] = by
        parts = current.split(".")
        direct = sorted(imports_by_function(current, root).get(None, ()))
        todo.extend((other, current) for other in direct)
        todo.extend((".".join(parts[:i]), current) for i in range(1, len(parts)))
    return loaded


def measurement_reached(name: str, root: Path = SRC) -> dict[str, str]:
    """measurement module -> the module whose module-level import loads it."""
    return {m: by for m, by in loaded_with(name, root).items() if is_measure(m)}


def misplaced_measure_imports(root: Path = SRC) -> list[tuple[str, str | None, str]]:
    """(module, function or None, measurement module) for every import of measurement
    outside it but the allowed ones."""
    found = []
    for name in engine_modules(root):
        if is_measure(name) or name.startswith(MEASURE_READERS):
            continue
        for function, names in imports_by_function(name, root).items():
            if function in MEASURE_USERS.get(name, ()):
                continue
            found += [(name, function, other) for other in sorted(names) if is_measure(other)]
    return found


def product_modules(root: Path = SRC) -> list[str]:
    backends = [
        n for n in engine_modules(root) if n.startswith(("engine.sqlite", "engine.pg"))
    ]
    return [*PRODUCT_ROOTS, *backends]


def test_only_memsift_eval_and_the_docs_plugin_import_measurement():
    assert misplaced_measure_imports() == []


def test_the_eval_command_imports_measurement_where_the_rule_expects_it():
    """The allowance above names a real function: renaming ``eval_command`` must move it."""
    assert any(is_measure(n) for n in imports_by_function("engine.cli")["eval_command"])


@pytest.mark.parametrize("name", product_modules())
def test_search_serving_and_the_backends_never_reach_measurement(name):
    assert measurement_reached(name) == {}


def write_tree(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


MEASURE_TREE = {
    "engine/__init__.py": "",
    "engine/measure/__init__.py": "",
    "engine/measure/results_schema.py": "",
    "engine/cli.py": (
        "import click\n\ndef eval_command():\n"
        "    from engine.measure.results_schema import X\n"
    ),
    "engine/helper.py": "from engine.measure import results_schema\n",
    "engine/search.py": "import engine.helper\n",
    "engine/agents/__init__.py": "",
    "engine/agents/service.py": "def later():\n    from engine.measure import results_schema\n",
    "engine/sqlite/__init__.py": "",
    "engine/sqlite/state.py": "from .. import measure\n",
    "arms_doc/measured.py": "from engine.measure.results_schema import X\n",
}


def test_the_measurement_rules_catch_a_chain_a_lazy_import_and_a_relative_one(tmp_path):
    """The rules themselves, on a made-up tree: if they stopped following chains, function
    bodies or relative imports, the tests above would pass on a leak."""
    write_tree(tmp_path, MEASURE_TREE)
    assert measurement_reached("engine.search", tmp_path) == {
        "engine.measure": "engine.helper",
        "engine.measure.results_schema": "engine.helper",
    }
    assert measurement_reached("engine.sqlite.state", tmp_path) == {
        "engine.measure": "engine.sqlite.state"
    }
    assert measurement_reached("engine.agents.service", tmp_path) == {}  # only when later() runs
    assert measurement_reached("engine.cli", tmp_path) == {}
    assert misplaced_measure_imports(tmp_path) == [
        ("engine.agents.service", "later", "engine.measure"),
        ("engine.agents.service", "later", "engine.measure.results_schema"),
        ("engine.helper", None, "engine.measure"),
        ("engine.helper", None, "engine.measure.results_schema"),
        ("engine.sqlite.state", None, "engine.measure"),
    ]


def run_child(code: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """A fresh interpreter on this checkout's ``src``, so nothing this test process already
    imported counts."""
    path = [str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


LOADED = "sorted(m for m in sys.modules if m.split('.')[:2] == ['engine', 'measure'])"


def test_importing_the_search_the_service_and_the_server_loads_no_measurement():
    done = run_child(
        "import sys\nimport engine.search, engine.agents.service, engine.agents.mcp_server\n"
        "import engine.cli\n"
        f"print({LOADED})"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


#: Print what was loaded once the command has run (click's main ends in sys.exit).
CLI_LOADED = (
    "import atexit, sys\n"
    f"atexit.register(lambda: print('measure loaded:', {LOADED}, file=sys.stderr))\n"
    "from engine.cli import main; main()"
)


@pytest.mark.parametrize(
    "command", [("index", "--no-embed"), ("search", "alpha"), ("serve",)], ids=lambda c: c[0]
)
def test_memsift_index_search_and_serve_load_no_measurement(tmp_path, command):
    (tmp_path / "a.md").write_text("# Alpha\n\nalpha beta\n", encoding="utf-8")
    if command[0] == "search":
        indexed = run_child(CLI_LOADED, "--store", str(tmp_path), "index", "--no-embed")
        assert indexed.returncode == 0, indexed.stderr
    done = run_child(CLI_LOADED, "--store", str(tmp_path), *command)  # serve: stdin at its end
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == "measure loaded: []"


BACKENDS = ("engine.sqlite", "engine.pg")


def backend_of(name: str) -> str | None:
    return next((b for b in BACKENDS if name == b or name.startswith(b + ".")), None)


def test_neither_backend_imports_the_other():
    """What both backends share lives outside them (pipeline, index_run, state_rules, errors),
    so a change inside one backend can never break the other."""
    crossings = [
        f"{name} imports {other}"
        for name in engine_modules()
        if (home := backend_of(name)) is not None
        for other in imported(name)
        if backend_of(other) not in (None, home)
    ]
    assert crossings == []
