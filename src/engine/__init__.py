"""memsift's search engine: index a folder of memory files into SQLite and search it with one
fused statement. The public API is re-exported here."""

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
