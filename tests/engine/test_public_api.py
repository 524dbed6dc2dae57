"""What other packages may rely on is declared: the docs plugin and the benchmarks import from
the engine only names a module lists in its ``__all__`` (or whole modules), so renaming an
internal helper can never break the docs build or a benchmark unseen, and renaming a public
name is a visible change of that list."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
CONSUMERS = [SRC / "arms_doc", REPO / "benchmarks"]


def module_path(name: str) -> Path | None:
    base = SRC.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def declared(name: str) -> set[str] | None:
    """The names in ``name``'s ``__all__``, read from its source; None when it has none."""
    path = module_path(name)
    assert path is not None, name
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return set(ast.literal_eval(node.value))
    return None


def engine_imports(root: Path) -> list[tuple[str, int, str, str]]:
    """(file, line, module, name) of every ``from engine... import name`` under ``root``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.ImportFrom)
                and not node.level
                and node.module
                and node.module.split(".")[0] == "engine"
            ):
                where = f"{root.name}/{path.relative_to(root)}"
                found += [(where, node.lineno, node.module, a.name) for a in node.names]
    return found


def private_uses(roots: list[Path]) -> list[str]:
    strays = []
    for root in roots:
        for where, line, module, name in engine_imports(root):
            if module_path(f"{module}.{name}") is not None:
                continue  # a whole module
            public = declared(module)
            if public is None or name not in public:
                strays.append(f"{where}:{line} imports {name} from {module}")
    return strays


def test_the_plugin_and_the_benchmarks_import_only_declared_names():
    assert private_uses(CONSUMERS) == [], "add the name to the module's __all__, or stop using it"


def test_an_undeclared_import_is_caught(tmp_path):
    (tmp_path / "probe.py").write_text(
        "from engine.ranking.assemble import assemble\n"
        "from engine.ranking.assemble import resolve_weights\n"  # internal
        "from engine.files import memory\n"  # a whole module
        "from engine.agents.write import remember\n"  # a module without __all__
    )
    assert private_uses([tmp_path]) == [
        f"{tmp_path.name}/probe.py:2 imports resolve_weights from engine.ranking.assemble",
        f"{tmp_path.name}/probe.py:4 imports remember from engine.agents.write",
    ]


def declaring_modules() -> list[str]:
    names = []
    for path in sorted((SRC / "engine").rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if declared(name) is not None:
            names.append(name)
    return names


@pytest.mark.parametrize("name", declaring_modules())
def test_every_declared_name_exists(name):
    module = importlib.import_module(name)
    missing = sorted(n for n in declared(name) or () if not hasattr(module, n))
    assert missing == []


# --- the package's own names ------------------------------------------------------------------


def child(code: str) -> str:
    """What ``code`` prints in a fresh interpreter, where nothing of the engine is loaded yet."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_importing_a_part_of_the_engine_loads_none_of_the_public_names_modules():
    """Every module of the engine runs the package first; it must not bring the indexer, the
    search and numpy to a caller that wanted the ranking's contract (the docs plugin)."""
    loaded = child(
        "import sys, engine.ranking.contract\n"
        "print(sorted({'engine.search', 'engine.files.store', 'engine.indexing.indexer',"
        " 'numpy'} & set(sys.modules)))"
    )
    assert loaded == "[]"


def test_a_public_name_is_imported_from_its_module_when_asked_for():
    assert child(
        "import engine\nfrom engine import open_store\nfrom engine.files import store\n"
        "print(open_store is store.open_store)"
    ) == "True"


@pytest.mark.parametrize("first", ["import engine.search", "import engine.cli", "pass"])
def test_engine_search_is_the_search_function_whatever_was_imported_first(first):
    """``engine.search`` is also the module the function lives in: importing that module (or
    the command line, which does) before asking for the function must not hand out the module."""
    assert child(
        f"{first}\nimport engine\nfrom engine import search\nfrom engine.search import run_search\n"
        "print(callable(search), search is engine.search, search.__module__)"
    ) == "True True engine.search"
