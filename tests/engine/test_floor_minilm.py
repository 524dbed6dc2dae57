"""The store floor with the real model (all-MiniLM-L6-v2, int8, as shipped): measured at index
time within its bounds, it withholds made-up words and still answers a paraphrased question
whose words are not all in any one memory."""

from __future__ import annotations

import pytest

from backends import memory
from engine.indexing.embedder import default_embedder
from engine.indexing.indexer import index_store
from engine.ranking.floor import MAX_FLOOR, META_KEY, MIN_FLOOR, read_record
from engine.search import search
from engine.sqlite.db import open_index_reader, read_meta

NOTES = {
    "backups.md": (
        "Nightly backups",
        "The database is dumped every night at 02:00 and kept for 30 days.",
    ),
    "deploy.md": ("Deploying", "Releases go out on Tuesdays after the staging checks pass."),
    "oncall.md": ("On-call rota", "Priya covers on-call in odd weeks, Marcus in even weeks."),
    "vpn.md": (
        "VPN access",
        "New laptops need the VPN profile from the IT portal before first login.",
    ),
    "coffee.md": ("Office coffee", "The espresso machine on floor three is descaled every Friday."),
    "budget.md": (
        "Cloud budget",
        "The monthly cloud budget is 4,000 euros; alerts fire at 80 percent.",
    ),
}


@pytest.fixture(scope="module")
def minilm():  # type: ignore[no-untyped-def]
    return default_embedder()


def test_the_real_model_s_store_floor_withholds_nonsense_and_answers_a_paraphrase(
    make_store, minilm
):
    store = make_store({key: memory(title, body) for key, (title, body) in NOTES.items()})
    index_store(store, embedder=minilm)
    conn = open_index_reader(store.index_path)
    try:
        record = read_record(read_meta(conn, META_KEY))
    finally:
        conn.close()
    assert record is not None and MIN_FLOOR <= record.value <= MAX_FLOOR

    nonsense = search(store, "grobbish tendralope wuxie", embedder=minilm)
    assert nonsense.abstained is True
    assert nonsense.floor == record.describe()

    question = search(store, "how long do we keep the nightly database dumps?", embedder=minilm)
    assert question.fts_form == "any"
    assert question.abstained is False
    assert question.hits[0].path == "backups.md"
