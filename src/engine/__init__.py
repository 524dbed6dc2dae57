"""memsift's search engine: index a folder of memory files into SQLite and search it with one
fused statement. The public API is re-exported here.

Each name is imported when it is first asked for (``from engine import search``), not with the
package: every module of the engine runs this file first, and a caller that needs only a few
of them (the docs plugin reads the ranking's pure modules and prepares statements on an empty
index) would otherwise load the indexer, the search and numpy with it.
"""

from __future__ import annotations

import sys
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.files.store import Store, open_store
    from engine.indexing.indexer import index_store
    from engine.indexing.pipeline import IndexReport
    from engine.ranking.scope import ScopeSpec
    from engine.search import Hit, Searcher, SearchResult, search

__all__ = [
    "Hit",
    "IndexReport",
    "ScopeSpec",
    "SearchResult",
    "Searcher",
    "Store",
    "index_store",
    "open_store",
    "search",
]

#: Each public name -> the module that defines it.
HOMES = {
    "Hit": "engine.search",
    "IndexReport": "engine.indexing.pipeline",
    "ScopeSpec": "engine.ranking.scope",
    "SearchResult": "engine.search",
    "Searcher": "engine.search",
    "Store": "engine.files.store",
    "index_store": "engine.indexing.indexer",
    "open_store": "engine.files.store",
    "search": "engine.search",
}


def __getattr__(name: str) -> object:
    """A public name, imported from its module the first time it is asked for."""
    home = HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _Package(ModuleType):
    """This package, keeping ``engine.search`` the function it exports.

    The import system sets each submodule on its package when it first imports it, and
    ``engine.search`` is also the module the function lives in. Imported with the package, as
    the names were, the function came after the module and stayed; imported later, the module
    would replace it, and ``from engine import search`` would then give the module to whoever
    imported ``engine.search`` (or ``engine.cli``) first.
    """

    def __setattr__(self, name: str, value: object) -> None:
        if name in HOMES and isinstance(value, ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
