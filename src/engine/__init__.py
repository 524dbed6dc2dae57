"""memsift's search engine: index a folder of memory files into SQLite and search it with one
fused statement. The public API is re-exported here."""

from engine.indexer import index_store
from engine.pipeline import IndexReport
from engine.scope import ScopeSpec
from engine.search import Hit, Searcher, SearchResult, search
from engine.store import Store, open_store

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
