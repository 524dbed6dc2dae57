"""The discrimination gate, on SQLite and on PostgreSQL: every probe must rank its true memory
above its wrong-fact twins, and the two backends must agree on what matters.

Each group in fixtures/discrimination.yaml is a probe, the memory it is about, and two or three
twins that differ from it by one fact (a number, a negation, a name, a qualifier). All groups
share one store, searched through the real statement with the real embedder. File names are
content hashes and all files share one mtime, so neither path order nor recency can favour the
true memory.

On each backend no true memory may have a twin above it (zero inversions), its MRR over the
true memories must be at least 0.85, and the backends' top-1 answers must agree on at least
80 % of the probes (issue 13). Both rank full text by BM25 over the same words (one rule cuts
them, engine.ranking.words) but stem them differently (Porter on SQLite, Snowball on
PostgreSQL), so their rankings are not expected to be identical.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from backends import BACKENDS, backend_named
from engine.indexing.indexer import index_store
from engine.pg.target import URL_VARIABLE
from engine.search import Searcher

GROUPS = yaml.safe_load(
    (Path(__file__).parents[1] / "fixtures" / "discrimination.yaml").read_text(encoding="utf-8")
)
FIXED_MTIME_NS = 1_790_000_000 * 1_000_000_000

Ranked = dict[str, list[str]]


def memory_file(group: str, title: str, body: str) -> tuple[str, str]:
    """(key, text) of one memory: named by its content's hash, so order favours no one."""
    name = hashlib.sha1(f"{title}\n{body}".encode()).hexdigest()[:12]
    return f"{group}/{name}.md", f"---\ntitle: {title!r}\n---\n{body}\n"


def gate_files() -> tuple[dict[str, str], dict[str, tuple[str, list[str]]]]:
    files: dict[str, str] = {}
    truth: dict[str, tuple[str, list[str]]] = {}
    for group in GROUPS:
        true, text = memory_file(group["id"], group["true"]["title"], group["true"]["body"])
        files[true] = text
        twins = []
        for twin in group["twins"]:
            key, text = memory_file(group["id"], twin["title"], twin["body"])
            files[key] = text
            twins.append(key)
        truth[group["id"]] = (true, twins)
    return files, truth


TRUTH = gate_files()[1]


@pytest.fixture(scope="module")
def ranked_on(request, tmp_path_factory) -> Callable[[str], Ranked]:  # type: ignore[no-untyped-def]
    """Each probe's top 20 paths on a backend, computed once per backend for the module."""
    files, _ = gate_files()
    cache: dict[str, Ranked] = {}

    def ranked(name: str) -> Ranked:
        if name not in cache:
            with pytest.MonkeyPatch.context() as patch:
                patch.delenv(URL_VARIABLE, raising=False)
                root = tmp_path_factory.mktemp(f"gate-{name}")
                store = backend_named(name, request).write(root, files)
                for key in files:
                    os.utime(root / key, ns=(FIXED_MTIME_NS, FIXED_MTIME_NS))
                index_store(store)
                with Searcher(store) as searcher:
                    cache[name] = {
                        g["id"]: [h.path for h in searcher.search(g["query"], limit=20).hits]
                        for g in GROUPS
                    }
        return cache[name]

    return ranked


def reciprocal_ranks(ranked: Ranked) -> list[float]:
    return [
        1 / (ranked[g["id"]].index(TRUTH[g["id"]][0]) + 1)
        if TRUTH[g["id"]][0] in ranked[g["id"]]
        else 0.0
        for g in GROUPS
    ]


def test_fixture_has_enough_groups_with_twins():
    assert len(GROUPS) >= 30
    assert all(len(group["twins"]) >= 2 for group in GROUPS)


@pytest.mark.parametrize("name", BACKENDS)
def test_every_true_memory_outranks_all_its_twins(ranked_on, name):
    ranked = ranked_on(name)
    inversions = []
    for group in GROUPS:
        true, twins = TRUTH[group["id"]]
        paths = ranked[group["id"]]
        true_rank = paths.index(true) + 1 if true in paths else None
        beaten = [
            t for t in twins if t in paths and (true_rank is None or paths.index(t) + 1 < true_rank)
        ]
        if true_rank is None or beaten:
            inversions.append((group["id"], true_rank, beaten))
    assert inversions == []


@pytest.mark.parametrize("name", BACKENDS)
def test_the_true_memories_mrr_is_at_least_085(ranked_on, name):
    reciprocal = reciprocal_ranks(ranked_on(name))
    mrr = sum(reciprocal) / len(reciprocal)
    print(f"\ndiscrimination gate on {name}: {len(GROUPS)} probes, MRR {mrr:.3f}")
    assert mrr >= 0.85


def test_the_backends_agree_on_the_top_answer_of_at_least_80_percent_of_probes(ranked_on):
    sqlite, postgresql = ranked_on("sqlite"), ranked_on("postgresql")
    agree = sum(
        bool(sqlite[g["id"]]) and sqlite[g["id"]][:1] == postgresql[g["id"]][:1] for g in GROUPS
    )
    print(f"\ntop-1 agreement {agree}/{len(GROUPS)}")
    assert agree / len(GROUPS) >= 0.8
