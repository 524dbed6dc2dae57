"""The discrimination gate: every probe must rank its true memory above its wrong-fact twins.

Each group in fixtures/discrimination.yaml is a probe, the memory it is about, and two or three
twins that differ from it by one fact (a number, a negation, a name, a qualifier). All groups
share one store, searched through the real statement with the real embedder. File names are
content hashes and all files share one mtime, so neither path order nor recency can favour the
true memory.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
import yaml

from engine.indexer import index_store
from engine.search import search
from engine.store import open_store

GROUPS = yaml.safe_load(
    (Path(__file__).parent / "fixtures" / "discrimination.yaml").read_text(encoding="utf-8")
)
FIXED_MTIME_NS = 1_790_000_000 * 1_000_000_000


def write_memory(root: Path, group: str, title: str, body: str) -> str:
    name = hashlib.sha1(f"{title}\n{body}".encode()).hexdigest()[:12]
    path = root / group / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\ntitle: {title!r}\n---\n{body}\n", encoding="utf-8")
    os.utime(path, ns=(FIXED_MTIME_NS, FIXED_MTIME_NS))
    return f"{group}/{name}.md"


@pytest.fixture(scope="module")
def gate_store(tmp_path_factory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("gate")
    truth: dict[str, tuple[str, list[str]]] = {}
    for group in GROUPS:
        true = write_memory(root, group["id"], group["true"]["title"], group["true"]["body"])
        twins = [write_memory(root, group["id"], t["title"], t["body"]) for t in group["twins"]]
        truth[group["id"]] = (true, twins)
    store = open_store(root)
    index_store(store)
    return store, truth


def test_fixture_has_enough_groups_with_twins():
    assert len(GROUPS) >= 30
    assert all(len(group["twins"]) >= 2 for group in GROUPS)


def test_every_true_memory_outranks_all_its_twins(gate_store):
    store, truth = gate_store
    inversions = []
    reciprocal = []
    for group in GROUPS:
        true, twins = truth[group["id"]]
        ranked = [h.path for h in search(store, group["query"], limit=20).hits]
        true_rank = ranked.index(true) + 1 if true in ranked else None
        reciprocal.append(1 / true_rank if true_rank else 0.0)
        beaten = [
            t
            for t in twins
            if t in ranked and (true_rank is None or ranked.index(t) + 1 < true_rank)
        ]
        if true_rank is None or beaten:
            inversions.append((group["id"], true_rank, beaten))
    mrr = sum(reciprocal) / len(reciprocal)
    print(
        f"\ndiscrimination gate: {len(GROUPS)} probes, corpus-wide MRR {mrr:.3f}, "
        f"{len(inversions)} inversion(s)"
    )
    assert inversions == []
    assert mrr >= 0.85
