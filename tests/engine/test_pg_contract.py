"""Both backends, one contract: the same store and the same questions, on SQLite and on
PostgreSQL, measured by the discrimination gate (tests/engine/test_discrimination.py).

The gate's bar on PostgreSQL is the issue's: its top-1 answers agree with SQLite's on at least
80 % of the probes, and its MRR over the true memories is at least 0.85. The two full-text
rankings differ by design (FTS5's BM25 against ts_rank_cd), so the rankings are not expected
to be identical, only to agree on what matters.
"""

from __future__ import annotations

import pytest
from test_discrimination import GROUPS, write_memory

from engine.indexer import index_store
from engine.search import Searcher
from engine.store import open_store


@pytest.fixture(scope="module")
def gate_root(tmp_path_factory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("gate-both")
    truth: dict[str, str] = {}
    for group in GROUPS:
        truth[group["id"]] = write_memory(
            root, group["id"], group["true"]["title"], group["true"]["body"]
        )
        for twin in group["twins"]:
            write_memory(root, group["id"], twin["title"], twin["body"])
    return root, truth


def ranked(root, monkeypatch, url: str | None) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    if url is None:
        monkeypatch.delenv("MEMSIFT_DATABASE_URL", raising=False)
    else:
        monkeypatch.setenv("MEMSIFT_DATABASE_URL", url)
    store = open_store(root)
    index_store(store)
    with Searcher(store) as searcher:
        return {
            group["id"]: [h.path for h in searcher.search(group["query"], limit=20).hits]
            for group in GROUPS
        }


def test_postgresql_passes_the_gate_and_agrees_with_sqlite_on_top_answers(
    gate_root, monkeypatch, pg_url
):
    root, truth = gate_root
    sqlite = ranked(root, monkeypatch, None)
    postgresql = ranked(root, monkeypatch, pg_url)

    agree = sum(
        bool(sqlite[g["id"]]) and sqlite[g["id"]][:1] == postgresql[g["id"]][:1] for g in GROUPS
    )
    reciprocal = [
        1 / (postgresql[g["id"]].index(truth[g["id"]]) + 1)
        if truth[g["id"]] in postgresql[g["id"]]
        else 0.0
        for g in GROUPS
    ]
    mrr = sum(reciprocal) / len(GROUPS)
    print(f"\ntop-1 agreement {agree}/{len(GROUPS)}, PostgreSQL MRR {mrr:.3f}")
    assert agree / len(GROUPS) >= 0.8
    assert mrr >= 0.85
