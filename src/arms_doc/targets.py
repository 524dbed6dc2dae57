"""Where a Sphinx role's dotted target is in the registry's source tree: a module's file, or the
lines of a class, function or variable in it.

The tree is the folder that holds the registry's top package (``src/`` for
``src/engine/arms.py``: the first folder above it without an ``__init__.py``). A target is
looked up the way Python would import it: the longest leading part that is a module
(``engine/ranking/contract.py`` or ``engine/ranking/__init__.py``), then each remaining name
among that module's definitions (a class's body for the next one), following a
``from x import name`` to where the name is defined. A name without a module is looked up in
the registry's own module, as Sphinx does. Modules are parsed with Python's ``ast``, never
imported.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

#: How many ``from x import name`` hops a lookup follows.
MAX_HOPS = 4


@dataclass(frozen=True)
class Location:
    """A module's file, and for a name in it, the lines of its definition."""

    file: Path
    start: int | None = None
    end: int | None = None


def source_root(registry: Path) -> Path:
    """The folder that holds the registry's top-level package (or the registry's folder, for a
    registry outside any package)."""
    folder = registry.resolve().parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        folder = folder.parent
    return folder


class SourceTree:
    """The modules under one root, each parsed at most once."""

    def __init__(self, root: Path, registry: Path) -> None:
        self.root = root
        self.registry = registry.resolve()
        self._parsed: dict[Path, ast.Module | None] = {}

    @property
    def registry_module(self) -> str:
        """The registry's dotted module name (``engine.arms``)."""
        return ".".join(self.registry.relative_to(self.root).with_suffix("").parts)

    def find(self, dotted: str) -> Location | None:
        """Where ``dotted`` is defined, or None; a bare name is looked up in the registry's
        module first."""
        if not dotted or any(not part.isidentifier() for part in dotted.split(".")):
            return None
        tried = [f"{self.registry_module}.{dotted}", dotted] if "." not in dotted else [dotted]
        for name in tried:
            found = self._find(name, MAX_HOPS)
            if found is not None:
                return found
        return None

    def _find(self, dotted: str, hops: int) -> Location | None:
        parts = dotted.split(".")
        for split in range(len(parts), 0, -1):
            module = self.module_file(parts[:split])
            if module is None:
                continue
            rest = parts[split:]
            if not rest:
                return Location(module)
            return self._in_module(module, ".".join(parts[:split]), rest, hops)
        return None

    def module_file(self, parts: list[str]) -> Path | None:
        """The file of the module named by ``parts`` under the root, or None."""
        base = self.root.joinpath(*parts)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
        return None

    def _in_module(self, file: Path, module: str, names: list[str], hops: int) -> Location | None:
        tree = self.parse(file)
        if tree is None:
            return None
        body: list[ast.stmt] = tree.body
        for depth, name in enumerate(names):
            node = definition(body, name)
            if node is None:
                if depth == 0 and hops > 0:
                    return self._imported(tree, file, module, names, hops)
                return None
            if depth == len(names) - 1:
                return Location(file, node.lineno, node.end_lineno or node.lineno)
            if not isinstance(node, ast.ClassDef):
                return None
            body = node.body
        return None

    def _imported(
        self, tree: ast.Module, file: Path, module: str, names: list[str], hops: int
    ) -> Location | None:
        """``names`` in the module that ``module`` imports its first name from."""
        for node in tree.body:
            if not isinstance(node, ast.ImportFrom):
                continue
            for alias in node.names:
                if (alias.asname or alias.name) != names[0]:
                    continue
                source = absolute(node, module, file.name == "__init__.py")
                if source is None:
                    return None
                return self._find(".".join([source, alias.name, *names[1:]]), hops - 1)
        return None

    def parse(self, file: Path) -> ast.Module | None:
        if file not in self._parsed:
            try:
                self._parsed[file] = ast.parse(file.read_text(encoding="utf-8"), str(file))
            except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
                self._parsed[file] = None
        return self._parsed[file]


def definition(body: list[ast.stmt], name: str) -> ast.stmt | None:
    """The statement in ``body`` that defines ``name`` (a def, a class, an assignment)."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names = [node.name]
        elif isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names = [node.target.id]
        else:
            continue
        if name in names:
            return node
    return None


def absolute(node: ast.ImportFrom, module: str, package: bool) -> str | None:
    """The module a ``from ... import`` in ``module`` reads from, made absolute."""
    if not node.level:
        return node.module
    parts = module.split(".")
    # A package's __init__ is the package itself: level 1 is the package, not its parent.
    keep = len(parts) - node.level + (1 if package else 0)
    if keep < 1:
        return None
    return ".".join(parts[:keep] + ([node.module] if node.module else []))
