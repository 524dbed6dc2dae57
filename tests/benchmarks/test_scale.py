"""Which earlier figures a partial scale run may keep: only a backend whose SQL is unchanged."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import replace

import pytest
from scale import still_valid

from engine.arms import ARMS
from engine.measure.fingerprint import ranking

NOW = ranking(ARMS)


def edited(name: str, **changes: str):  # type: ignore[no-untyped-def]
    return ranking([replace(arm, **changes) if arm.name == name else arm for arm in ARMS])


def test_figures_of_both_backends_hold_when_nothing_changed():
    assert still_valid(NOW, NOW) == {"sqlite", "postgresql"}


def test_a_postgresql_sql_edit_drops_only_the_postgresql_figures():
    measured = edited("fts", pg_sql="SELECT 1")

    assert still_valid(measured, NOW) == {"sqlite"}


def test_a_sqlite_sql_edit_drops_only_the_sqlite_figures():
    measured = edited("vector", sql="SELECT 1")

    assert still_valid(measured, NOW) == {"postgresql"}


def test_a_weight_change_drops_both():
    assert still_valid(edited("recency", weight=0.5), NOW) == set()  # type: ignore[arg-type]


def test_a_postgresql_scale_store_holds_the_generators_memories_and_state_rows(pg_url):
    """The rows are written straight into the engine's tables, so nothing but this test
    checks that a scale store is the store the generator describes."""
    import psycopg
    from scale import SEED, batches, build_postgres
    from synthetic import state_rows

    from engine.pg.target import DatabaseTarget

    built = build_postgres(DatabaseTarget(pg_url, "scale"), 300, "64MB")
    paths = [path for rows in batches(300, SEED) for path in rows.paths]
    with psycopg.connect(pg_url) as conn:
        files = [p for (p,) in conn.execute("SELECT path FROM scale.files ORDER BY id")]
        state = conn.execute(
            "SELECT path, access_count, CAST(last_accessed_at AS text), outcome_score "
            "FROM scale.state_access ORDER BY path"
        ).fetchall()

    assert built["files"] == 300 and files == paths
    assert state == sorted(state_rows(paths, SEED))


def test_a_postgresql_scale_stores_full_text_is_what_the_indexer_writes(pg_url):
    """Chunks written straight into the tables still go through the word rule: their terms
    are those :func:`engine.pg.indexdb.write_file` makes of the same title, tags and text."""
    import psycopg
    from scale import build_postgres

    from engine.pg.indexdb import TERMS, term_texts
    from engine.pg.target import DatabaseTarget

    build_postgres(DatabaseTarget(pg_url, "scale"), 50, "64MB")
    with psycopg.connect(pg_url, options="-c search_path=scale") as conn:
        chunks = conn.execute(
            "SELECT f.title, f.tags, c.text, CAST(c.terms AS text) "
            "FROM scale.chunks AS c JOIN scale.files AS f ON f.id = c.file_id"
        ).fetchall()
        remade = [
            conn.execute(f"SELECT CAST({TERMS} AS text)", term_texts(title, tags, text))
            .fetchone()[0]
            for title, tags, text, _ in chunks
        ]

    assert remade == [terms for _, _, _, terms in chunks]


def test_postgresql_figures_searched_with_another_work_mem_are_not_kept(tmp_path):
    import dataclasses
    import shutil
    from pathlib import Path

    from scale import save
    from stamp import make_stamp

    from engine.measure.results_schema import SCALE, read_results

    out = tmp_path / "scale.json"
    shutil.copy(Path(__file__).parents[2] / "benchmarks" / "results" / "scale.json", out)
    earlier = read_results(SCALE, out, str(out))
    other = "256MB" if earlier.settings.search_work_mem == "128MB" else "128MB"
    settings = {**dataclasses.asdict(earlier.settings), "search_work_mem": other}

    save(out, make_stamp("scale"), settings, [])

    after = read_results(SCALE, out, str(out))
    assert {s.backend for s in earlier.stores} == {"sqlite", "postgresql"}
    assert {s.backend for s in after.stores} == {"sqlite"}
    assert after.settings.search_work_mem == other


# The benchmark's query picker keeps its read connection for the whole run and never closes it.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_no_ef_search_values_measure_postgresql_exactly_without_building_hnsw(pg_url, tmp_path):
    from argparse import Namespace

    from scale import postgres_store

    from engine.pg.driver import connect
    from engine.pg.schema import has_hnsw
    from engine.pg.target import DatabaseTarget

    args = Namespace(queries=3, warmup=0, budget=0.0, ef_search=[], maintenance_mem="64MB")
    measured = postgres_store(args, pg_url, 200, lambda _store: None)
    conn = connect(DatabaseTarget(pg_url, "scale"), readonly=True, vectors=False)
    try:
        built = has_hnsw(conn)
    finally:
        conn.close()

    assert [way["vector_index"] for way in measured["searches"]] == ["exact"]
    assert (measured["hnsw_build_s"], measured["hnsw_mib"], built) == (None, None, False)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_postgresql_stores_exact_figures_are_kept_before_its_hnsw_build(pg_url):
    """At a million memories the HNSW build takes about an hour: a run stopped during it
    keeps the exact and pre-selection figures measured before it."""
    from argparse import Namespace

    from scale import postgres_store

    args = Namespace(queries=3, warmup=0, budget=0.0, ef_search=[40], maintenance_mem="64MB")
    kept: list[dict] = []
    measured = postgres_store(args, pg_url, 200, kept.append)

    first, last = kept
    assert [way["vector_index"] for way in first["searches"]] == ["exact"]
    assert (first["hnsw_build_s"], first["hnsw_mib"]) == (None, None)
    assert first["full_text"] is not None
    assert [way["vector_index"] for way in last["searches"]] == ["exact", "hnsw"]
    assert last["hnsw_build_s"] is not None and measured["searches"] == last["searches"]


def test_a_store_saved_again_replaces_its_earlier_figures(tmp_path):
    import shutil
    from pathlib import Path

    from scale import save
    from stamp import make_stamp

    from engine.measure.results_schema import SCALE, read_results

    out = tmp_path / "scale.json"
    shutil.copy(Path(__file__).parents[2] / "benchmarks" / "results" / "scale.json", out)
    earlier = read_results(SCALE, out, str(out))
    store = next(s for s in earlier.stores if s.backend == "postgresql" and s.hnsw_build_s)
    settings = dataclasses.asdict(earlier.settings)
    whole = json.loads(json.dumps(dataclasses.asdict(store)))  # as the run hands it: lists
    partial = {**whole, "hnsw_build_s": None, "hnsw_mib": None, "searches": whole["searches"][:1]}

    save(out, make_stamp("scale"), settings, [partial])
    save(out, make_stamp("scale"), settings, [whole])

    after = read_results(SCALE, out, str(out))
    same = [s for s in after.stores if (s.backend, s.files) == (store.backend, store.files)]
    assert same == [store]
