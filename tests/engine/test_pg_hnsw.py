"""A team store's optional HNSW index: built and dropped by the index run as config.toml asks,
really used by the vector arm's statement, and never approximate without saying so."""

from __future__ import annotations

import numpy as np
import psycopg
import pytest
from pgvector.psycopg import register_vector

from engine.files.config import ConfigError, load_config
from engine.indexing.indexer import index_store
from engine.pg.driver import connect
from engine.pg.schema import HNSW_INDEX, apply_vector_index
from engine.pg.target import DatabaseTarget
from engine.search import search
from engine.status import store_status

MEMORIES = {
    "infra/staging-db.md": """
        ---
        title: Staging database credentials rotate monthly
        tags: [infra]
        ---
        The staging database password rotates on the first Monday of each month.
        """,
    "episodes/deploy.md": """
        ---
        title: Release rolled back after errors
        ---
        The deploy broke checkout; we rolled the release back within ten minutes.
        """,
    "notes/lunch.md": """
        ---
        title: Lunch options near the office
        ---
        The noodle bar on the corner closes at three; the bakery has soup on Fridays.
        """,
    "notes/printer.md": """
        ---
        title: The third floor printer jams
        ---
        Load paper face down or the third floor printer jams on duplex jobs.
        """,
}


def configure(store, **database: object) -> None:
    lines = ["[database]"] + [
        f'{key} = "{value}"' if isinstance(value, str) else f"{key} = {value}"
        for key, value in database.items()
    ]
    (store.root / ".memsift" / "config.toml").write_text("\n".join(lines) + "\n")


def schema_indexes(pg_url: str) -> set[str]:
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname = 'memsift'")
        return {name for (name,) in rows}


@pytest.fixture
def team_store(make_store, pg_url, monkeypatch, hash_embedder):
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    store = make_store(MEMORIES)
    (store.root / ".memsift").mkdir(exist_ok=True)
    return store


def test_a_bad_vector_index_is_one_line_naming_the_file_and_the_key(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('[database]\nvector_index = "ivfflat"\n')

    with pytest.raises(ConfigError) as caught:
        load_config(path)

    message = str(caught.value)
    assert "\n" not in message
    assert str(path) in message
    assert '[database] vector_index = "ivfflat": must be "exact"' in message


@pytest.mark.parametrize("value", ["0", "1001", "true", '"wide"', "40.5"])
def test_a_bad_ef_search_is_refused_naming_the_key(tmp_path, value):
    path = tmp_path / "config.toml"
    path.write_text(f"[database]\nhnsw_ef_search = {value}\n")

    with pytest.raises(ConfigError, match=r"config\.toml: \[database\] hnsw_ef_search = "):
        load_config(path)


def test_exact_is_the_default(tmp_path):
    config = load_config(tmp_path / "config.toml")

    assert (config.vector_index, config.hnsw_ef_search) == ("exact", 100)


def test_the_index_run_builds_hnsw_when_asked(team_store, pg_url, hash_embedder):
    configure(team_store, vector_index="hnsw")

    index_store(team_store, embedder=hash_embedder)

    assert HNSW_INDEX in schema_indexes(pg_url)


def test_an_exact_store_has_no_hnsw_index(team_store, pg_url, hash_embedder):
    index_store(team_store, embedder=hash_embedder)

    assert HNSW_INDEX not in schema_indexes(pg_url)


def test_switching_back_to_exact_drops_the_index_on_the_next_run(
    team_store, pg_url, hash_embedder
):
    configure(team_store, vector_index="hnsw")
    index_store(team_store, embedder=hash_embedder)
    configure(team_store, vector_index="exact")

    index_store(team_store, embedder=hash_embedder)

    assert HNSW_INDEX not in schema_indexes(pg_url)
    result = search(team_store, "printer jams", embedder=hash_embedder)
    assert result.vector_search == "exact"


def test_a_model_of_another_width_replaces_the_index(
    team_store, pg_url, hash_embedder, monkeypatch
):
    from conftest import HashEmbedder

    configure(team_store, vector_index="hnsw")
    index_store(team_store, embedder=hash_embedder)
    wider = HashEmbedder(name="test-hash-wide", dim=24)

    index_store(team_store, embedder=wider)

    assert HNSW_INDEX in schema_indexes(pg_url)
    result = search(team_store, "printer jams", embedder=wider)
    assert result.hits[0].path == "notes/printer.md"


def test_a_search_through_hnsw_says_it_is_approximate_and_with_which_ef_search(
    team_store, hash_embedder
):
    configure(team_store, vector_index="hnsw", hnsw_ef_search=64)
    index_store(team_store, embedder=hash_embedder)

    result = search(team_store, "printer jams", embedder=hash_embedder)

    assert "vector" in result.arms_fired
    assert result.to_json()["vector_search"] == (
        "approximate (pgvector HNSW index, hnsw.ef_search = 64)"
    )


def test_an_exact_search_says_it_is_exact(team_store, hash_embedder):
    index_store(team_store, embedder=hash_embedder)

    result = search(team_store, "printer jams", embedder=hash_embedder)

    assert result.to_json()["vector_search"] == "exact"


def test_status_says_the_store_searches_approximately(team_store, hash_embedder):
    configure(team_store, vector_index="hnsw")
    index_store(team_store, embedder=hash_embedder)

    info = store_status(team_store)

    assert info["vector_search"] == "approximate (pgvector HNSW index, hnsw.ef_search = 100)"


def test_status_says_a_configured_index_is_not_built_until_the_next_run(
    team_store, hash_embedder
):
    index_store(team_store, embedder=hash_embedder)
    configure(team_store, vector_index="hnsw")

    info = store_status(team_store)

    assert str(info["vector_search"]).startswith("exact; config.toml asks for vector_index")


def test_an_index_left_by_hnsw_is_reported_until_a_run_drops_it(team_store, hash_embedder):
    configure(team_store, vector_index="hnsw")
    index_store(team_store, embedder=hash_embedder)
    configure(team_store, vector_index="exact")

    result = search(team_store, "printer jams", embedder=hash_embedder)

    assert str(result.vector_search).startswith("approximate")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("printer jams duplex", "notes/printer.md"),
        ("staging database password", "infra/staging-db.md"),
        ("release rolled back", "episodes/deploy.md"),
        ("noodle bar soup", "notes/lunch.md"),
    ],
)
def test_hnsw_finds_the_same_top_hit_as_exact(
    team_store, hash_embedder, query, expected
):
    index_store(team_store, embedder=hash_embedder)
    exact = search(team_store, query, embedder=hash_embedder, use_vector=True)
    configure(team_store, vector_index="hnsw")
    index_store(team_store, embedder=hash_embedder)

    approximate = search(team_store, query, embedder=hash_embedder)

    assert approximate.vector_search.startswith("approximate")
    assert approximate.hits[0].path == exact.hits[0].path == expected


def add_unused_vectors(pg_url: str, count: int, dim: int) -> None:
    """Vectors of no chunk, enough that a planner weighs an index scan against a full scan as
    it does on a real store (on a handful of rows it rightly reads them all). The index is
    built again afterwards, as the index run builds it (in bulk: much faster than adding
    10,000 vectors to the graph one by one)."""
    rng = np.random.default_rng(7)
    with psycopg.connect(pg_url, options="-c search_path=memsift,public") as conn:
        register_vector(conn)
        conn.execute(f"DROP INDEX {HNSW_INDEX}")
        with conn.cursor().copy(
            "COPY embeddings(hash, model, dim, vector) FROM STDIN WITH (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["text", "text", "int4", "vector"])
            for number in range(count):
                vector = rng.standard_normal(dim).astype("f4")
                copy.write_row((f"unused-{number}", "test-hash", dim, vector))
        conn.commit()
    target = DatabaseTarget(pg_url, "memsift", "hnsw")
    made = connect(target)
    try:
        apply_vector_index(made, "hnsw", dim)
        made.run("ANALYZE embeddings")
    finally:
        made.close()


def plan_of(pg_url: str, result, ef_search: int = 100) -> str:
    """The plan PostgreSQL chooses for a search's own statement and values."""
    from engine.pg.driver import pg_value
    from engine.ranking.contract import named, pyformat

    values = {key: pg_value(value) for key, value in named(result.sql, result.params).items()}
    with psycopg.connect(pg_url, options="-c search_path=memsift,public") as conn:
        register_vector(conn)
        conn.execute(f"SET hnsw.ef_search = {ef_search}")
        rows = conn.execute("EXPLAIN " + pyformat(result.sql), values).fetchall()
    return "\n".join(row[0] for row in rows)


def test_the_fused_statement_uses_the_hnsw_index(team_store, pg_url, hash_embedder):
    configure(team_store, vector_index="hnsw")
    index_store(team_store, embedder=hash_embedder)
    add_unused_vectors(pg_url, 10_000, hash_embedder.dim)

    result = search(team_store, "printer jams", embedder=hash_embedder)

    plan = plan_of(pg_url, result)
    assert f"Index Scan using {HNSW_INDEX}" in plan


def test_the_fused_statement_uses_the_index_within_a_scope(team_store, pg_url, hash_embedder):
    from engine.ranking.scope import ScopeSpec

    configure(team_store, vector_index="hnsw")
    index_store(team_store, embedder=hash_embedder)
    add_unused_vectors(pg_url, 10_000, hash_embedder.dim)

    result = search(
        team_store, "printer jams", embedder=hash_embedder, scope=ScopeSpec(tags=("infra",))
    )

    plan = plan_of(pg_url, result)
    assert f"Index Scan using {HNSW_INDEX}" in plan


def test_hnsw_returns_every_nearest_chunk_the_arm_asks_for(team_store, pg_url, hash_embedder):
    """pgvector stops an index scan at ef_search rows unless its iterative scan is on; the arm
    asks for four per candidate, far more than a small ef_search."""
    configure(team_store, vector_index="hnsw", hnsw_ef_search=10)
    index_store(team_store, embedder=hash_embedder)
    add_unused_vectors(pg_url, 10_000, hash_embedder.dim)

    from engine.pg.search import PgSearchBackend
    from engine.pg.target import database_target

    backend = PgSearchBackend(database_target(team_store.config()))
    nearest = (
        "SELECT e.hash FROM embeddings AS e ORDER BY e.vector <=> CAST(?1 AS vector) LIMIT ?2"
    )
    query = np.ones(hash_embedder.dim, dtype="<f4").tobytes()
    try:
        plan = backend.conn.execute("EXPLAIN " + nearest, (query, 400)).fetchall()
        rows = backend.conn.execute(nearest, (query, 400)).fetchall()
    finally:
        backend.close()

    assert HNSW_INDEX in str(plan)
    assert len(rows) == 400


def memsift(store, url, *args):  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from engine.cli import cli

    return CliRunner().invoke(
        cli, ["--store", str(store.root), *args], env={"MEMSIFT_DATABASE_URL": url}
    )


def test_search_explain_and_status_say_the_search_is_approximate(team_store, pg_url):
    configure(team_store, vector_index="hnsw")
    assert memsift(team_store, pg_url, "index").exit_code == 0

    explained = memsift(team_store, pg_url, "search", "printer jams", "--explain")
    status = memsift(team_store, pg_url, "status")

    line = "approximate (pgvector HNSW index, hnsw.ef_search = 100)"
    assert f"semantic ranking: {line}" in explained.stdout
    assert f"vector_search: {line}" in status.stdout


def test_a_bad_setting_stops_the_cli_with_one_line_naming_the_file_and_key(team_store, pg_url):
    configure(team_store, vector_index="HNSW")

    result = memsift(team_store, pg_url, "index")

    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert 'config.toml: [database] vector_index = "HNSW": must be "exact"' in lines[0]
