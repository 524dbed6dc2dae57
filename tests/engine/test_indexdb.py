"""The index's statements have one home: what each returns, and that nobody else writes SQL."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from engine.indexing.indexer import index_store
from engine.sqlite import indexdb
from engine.sqlite.db import open_index

ENGINE = Path(__file__).resolve().parents[2] / "src" / "engine"
#: Only the backends run statements: the databases' own layers (db, indexdb, state, knn, the
#: state queue, a search's session) live in ``engine/sqlite/`` and ``engine/pg/``; everything
#: else asks them (the search builds its fused statement from the registry and hands it over).
BACKENDS = ("sqlite", "pg")


def runs_sql(path: Path) -> list[int]:
    """Lines of ``path`` that call ``.execute`` or ``.executemany``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("execute", "executemany")
    ]


@pytest.mark.parametrize(
    "module",
    sorted(
        str(p.relative_to(ENGINE))
        for p in ENGINE.rglob("*.py")
        if p.relative_to(ENGINE).parts[0] not in BACKENDS
    ),
)
def test_no_module_outside_the_database_layers_runs_sql(module):
    assert runs_sql(ENGINE / module) == [], f"{module} runs SQL; give the statement a home"


def test_vector_coverage_counts_only_vectors_of_the_given_model(make_store, hash_embedder):
    store = make_store({"a.md": "# A\n\nalpha words", "b.md": "# B\n\nbeta words"})
    index_store(store, embedder=hash_embedder)
    conn = open_index(store.index_path)
    try:
        assert indexdb.vector_coverage(conn, hash_embedder.name, 64) == (2, 2)
        assert indexdb.vector_coverage(conn, "another-model", 64) == (2, 0)
        assert indexdb.vector_coverage(conn, None, 64) == (2, 0)
    finally:
        conn.close()


def test_unique_content_paths_leave_out_contents_two_files_share(make_store, hash_embedder):
    store = make_store({"one.md": "# Same\n\ntext", "two.md": "# Same\n\ntext", "x.md": "# X"})
    index_store(store, embedder=hash_embedder)
    conn = open_index(store.index_path)
    try:
        unique = indexdb.unique_content_paths(conn)
    finally:
        conn.close()
    assert list(unique.values()) == ["x.md"]


def test_indexed_content_hash_is_the_files_hash_or_none(make_store, hash_embedder):
    store = make_store({"a.md": "# A\n\nalpha"})
    assert indexdb.indexed_content_hash(store.index_path, "a.md") is None  # no index yet
    index_store(store, embedder=hash_embedder)
    known = indexdb.indexed_content_hash(store.index_path, "a.md")
    assert known is not None and len(known) == 64
    assert indexdb.indexed_content_hash(store.index_path, "missing.md") is None


def test_indexed_content_hash_is_none_over_a_damaged_index(make_store, hash_embedder):
    store = make_store({"a.md": "# A\n\nalpha"})
    index_store(store, embedder=hash_embedder)
    store.index_path.write_bytes(b"not a database at all" * 100)
    assert indexdb.indexed_content_hash(store.index_path, "a.md") is None
