"""Where text splits into words, on SQLite and on PostgreSQL: one rule for both indexes and the
query (engine.ranking.words, FTS5's own), so a query that writes a number, a version, a host,
a path, an email, a hyphenated or an accented word as a memory writes it finds that memory by
full text on both backends, and not its twin that writes another.

PostgreSQL's parser alone kept such tokens whole ("2.4" one number) while the query asked for
their words ("2" and "4"), which matched nothing.
"""

from __future__ import annotations

import pytest

from backends import memory
from engine.search import search

#: (query, the memory that writes it, its twin that writes something else), each a memory.
CASES = [
    (
        "2.4",
        "The cache was rewritten after the 2.4 release.",
        "The cache was rewritten after the 2.5 release.",
    ),
    (
        "v2.4.1",
        "Production was rolled back to v2.4.1 on Tuesday.",
        "Production was rolled back to v2.3.1 on Tuesday.",
    ),
    (
        "db-01.example.com",
        "Nightly backups go to db-01.example.com now.",
        "Nightly backups go to db-02.example.com now.",
    ),
    (
        "/var/lib/memsift/index.conf",
        "The settings live in /var/lib/memsift/index.conf.",
        "The settings live in /etc/memsift/site.toml.",
    ),
    (
        "ana.lopez@example.org",
        "Badge requests go to ana.lopez@example.org.",
        "Badge requests go to ben.okafor@example.org.",
    ),
    (
        # An ISO date written in text: PostgreSQL's parser made "2026", "-10", "-21" of it.
        "2026-10-21",
        "The staging certificate was rotated on 2026-10-21.",
        "The staging certificate was rotated on 2026-11-20.",
    ),
    (
        "state-of-the-art",
        "The lab bought a state-of-the-art cooling unit.",
        "The lab bought a second-hand cooling unit.",
    ),
    (
        "cafe muller",
        "The team lunch is at Café Müller on Fridays.",
        "The team lunch is at the canteen on Fridays.",
    ),
    (
        "Café Müller",
        "The team lunch is at the cafe muller on Fridays.",
        "The team lunch is at the canteen on Fridays.",
    ),
]

FTS_ONLY = {"vector": 0.0, "recency": 0.0, "salience": 0.0, "time": 0.0}


@pytest.mark.parametrize(("query", "says", "twin"), CASES, ids=[c[0] for c in CASES])
def test_a_query_finds_by_full_text_the_memory_that_writes_it_as_typed(
    indexed, hash_embedder, query, says, twin
):
    store = indexed(
        {
            "says.md": memory("Note", says),
            "twin.md": memory("Note", twin),
            "other.md": memory("Lunch rota", "Someone else orders on Mondays."),
        }
    )

    result = search(store, query, embedder=hash_embedder, weights=FTS_ONLY)

    assert [hit.path for hit in result.hits][:1] == ["says.md"]
    assert result.fts_form == "all"  # a memory holds every word of the query
    assert "twin.md" not in [hit.path for hit in result.hits]


def test_a_version_number_is_found_among_its_neighbours(indexed, hash_embedder):
    # The gate's case (recsys-latency): "2.4" beside "2.5" and "2.4.1" releases.
    store = indexed(
        {
            "a.md": memory("Latency", "Latency doubled after the 2.4 release."),
            "b.md": memory("Latency", "Latency doubled after the 2.5 release."),
            "c.md": memory("Latency", "Latency doubled after the 3.4 release."),
        }
    )

    hits = search(store, "latency after 2.4", embedder=hash_embedder, weights=FTS_ONLY).hits

    assert [hit.path for hit in hits] == ["a.md"]
