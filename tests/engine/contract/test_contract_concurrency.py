"""Concurrent use, on SQLite and on PostgreSQL: several processes and threads searching, reading
and reinforcing one store at once, and while an index run writes it, lose no access and no
outcome.

Each outcome moves a memory's score a fixed step towards +1, so after ``n`` helpful outcomes
from anywhere the score is exactly ``1 - 0.7**n``: one lost or overwritten update shows. The
processes open the store from its folder alone; its configuration names the backend, as it
does for every agent sharing a team store.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import pytest

from engine import state
from engine.indexing.indexer import index_store
from engine.search import search
from slow_indexer import finish, start

WORKERS = 4
ROUNDS = 15

#: One agent: search, read what it found, say it helped; ROUNDS times.
AGENT = textwrap.dedent(
    """
    import sys
    from engine import state
    from engine.search import Searcher
    from engine.files.store import open_store

    store = open_store(sys.argv[1])
    with Searcher(store) as searcher:
        for _ in range(int(sys.argv[2])):
            hits = searcher.search("staging database port", use_vector=False).hits
            assert hits[0].path == "db.md", hits
            state.record_access(store, "db.md")
            state.reinforce(store, "db.md", 1)
    """
)

DB = "---\ntitle: Staging database\n---\nThe staging database listens on port 5433.\n"
OTHER = "---\ntitle: Lunch\n---\nThe canteen opens at noon.\n"


def test_agents_in_several_processes_lose_no_read_and_no_outcome(backend_store):
    store = backend_store({"db.md": DB, "other.md": OTHER})
    index_store(store, embed=False)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    agents = [
        subprocess.Popen(
            [sys.executable, "-c", AGENT, str(store.root), str(ROUNDS)],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(WORKERS)
    ]
    errors = [agent.communicate(timeout=180)[1] for agent in agents]
    assert [agent.returncode for agent in agents] == [0] * WORKERS, errors
    access = state.lookup(store, "db.md")
    assert access.access_count == WORKERS * ROUNDS
    assert access.outcome_score == pytest.approx(1 - 0.7 ** (WORKERS * ROUNDS))


def test_threads_reading_and_reinforcing_at_once_lose_nothing(backend_store):
    store = backend_store({"db.md": DB})
    index_store(store, embed=False)

    def work(_: int) -> None:
        for _ in range(5):
            state.record_access(store, "db.md")
            state.reinforce(store, "db.md", 1)

    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(work, range(6)))

    access = state.lookup(store, "db.md")
    assert access.access_count == 30
    assert access.outcome_score == pytest.approx(1 - 0.7**30)


def corpus(rng: random.Random, count: int, folder: str = "") -> dict[str, str]:
    words = "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega".split()
    files = {}
    for number in range(count):
        body = " ".join(
            " ".join(rng.choices(words, k=rng.randint(4, 14))).capitalize() + "."
            for _ in range(rng.randint(1, 60))
        )
        key = f"{folder}dir{number % 5}/note-{number:03d}.md"
        files[key] = f"---\ntitle: Note {number} {rng.choice(words)}\n---\n{body}\n"
    return files


def test_searches_reads_and_outcomes_succeed_while_an_index_run_writes(backend_store):
    rng = random.Random(7)
    store = backend_store(corpus(rng, 60))
    assert finish(start(store.root)) == 0
    for key, text in corpus(rng, 60, "more/").items():
        (store.root / key).parent.mkdir(parents=True, exist_ok=True)
        (store.root / key).write_text(text, encoding="utf-8")
    process = start(store.root)
    searches = reads = 0
    try:
        while process.poll() is None or searches < 5:
            result = search(store, rng.choice(["alpha", "gamma delta", "omega"]), use_vector=False)
            assert result.hits
            searches += 1
            state.record_access(store, "dir0/note-000.md")
            state.reinforce(store, "dir1/note-001.md", 1)
            reads += 1
    finally:
        code = finish(process)
    assert code == 0
    assert searches >= 5
    assert state.lookup(store, "dir0/note-000.md").access_count == reads
    assert state.lookup(store, "dir1/note-001.md").outcome_score == pytest.approx(1 - 0.7**reads)
