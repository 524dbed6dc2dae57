"""The two backends a store can keep its index in, as one fixture for the contract suite.

``backend`` is parametrised ``sqlite`` / ``postgresql``; ``make_store`` (which tests already use)
then writes a store whose index and state plane live in that backend, so one test states one
behaviour and runs on both. A store is put on PostgreSQL the way a user does it in a store's
own configuration, ``[database] url`` in ``.memsift/config.toml``, with a schema of its own in
one database shared by the whole run (several stores sharing a database is itself a promise
of the team store, and a schema is far cheaper to make than a database). Because the
configuration travels with the folder, a subprocess that opens the store reaches the same
backend without any environment of the test's. ``MEMSIFT_DATABASE_URL`` is unset for these
tests, so a developer's own team database can never be written by them.
"""

from __future__ import annotations

import itertools
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from engine.files.store import Store, open_store
from engine.indexing.indexer import index_store
from engine.pg.target import URL_VARIABLE

BACKENDS = ("sqlite", "postgresql")
CONFIG = ".memsift/config.toml"

_schemas = itertools.count(1)


class Backend:
    """Where a test's stores keep their index: SQLite files under ``.memsift/``, or a schema of
    their own in a PostgreSQL database."""

    def __init__(self, name: str, url: str | None = None) -> None:
        self.name = name
        self.url = url

    def __repr__(self) -> str:
        return self.name

    @property
    def is_pg(self) -> bool:
        return self.url is not None

    def config(self, text: str = "") -> str:
        """``text`` (a store's own config.toml) with this backend's ``[database]`` table added:
        a fresh schema each time, so no two stores of a run share an index."""
        if self.url is None:
            return text
        section = f'[database]\nurl = "{self.url}"\nschema = "contract_{next(_schemas)}"\n'
        return f"{text.rstrip()}\n\n{section}" if text.strip() else section

    def write(self, root: Path, files: dict[str, str]) -> Store:
        """Write {relative path: dedented text} under ``root`` (made if missing), open it as a
        store on this backend."""
        root.mkdir(parents=True, exist_ok=True)
        texts = {key: textwrap.dedent(text).lstrip("\n") for key, text in files.items()}
        texts[CONFIG] = self.config(texts.get(CONFIG, ""))
        for key, text in texts.items():
            if key == CONFIG and not text:
                continue
            path = root / key
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return open_store(root)

    def configure(self, store: Store, text: str) -> None:
        """Replace the store's configuration with ``text``, keeping it on this backend (and in
        the same schema)."""
        path = store.root / CONFIG
        kept = ""
        if self.url is not None:
            current = path.read_text(encoding="utf-8")
            kept = current[current.index("[database]") :]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{text.rstrip()}\n\n{kept}" if kept else text, encoding="utf-8")

    def chunk_vectors(self, store: Store) -> list[tuple[str, np.ndarray]]:
        """Every (path, stored vector) of the store's chunks, for brute-force references."""
        sql = (
            "SELECT f.path, e.vector FROM chunks c JOIN embeddings e ON e.hash = c.hash "
            "JOIN files f ON f.id = c.file_id"
        )
        rows = self.rows(store, sql)
        return [(path, as_array(vector)) for path, vector in rows]

    def rows(self, store: Store, sql: str) -> list[tuple[object, ...]]:
        """``sql`` (no parameters) run on the store's index, for a test's own reference."""
        if self.url is None:
            from engine.sqlite.db import open_index

            conn = open_index(store.index_path)
            try:
                return [tuple(row) for row in conn.execute(sql).fetchall()]
            finally:
                conn.close()
        from engine.pg.driver import connect
        from engine.pg.target import database_target

        target = database_target(store.config())
        assert target is not None
        pg = connect(target, readonly=True)
        try:
            return [tuple(row) for row in pg.run(sql).fetchall()]
        finally:
            pg.close()


def memory(title: str, body: str, **fields: str) -> str:
    """A memory file's text: front matter with the title and ``fields``, then the body."""
    extra = "".join(f"{k}: {v}\n" for k, v in fields.items())
    return f"---\ntitle: {title}\n{extra}---\n{body}\n"


def as_array(vector: object) -> np.ndarray:
    """A stored vector (sqlite-vec's float32 blob, or a pgvector value) as a float32 array."""
    if isinstance(vector, bytes):
        return np.frombuffer(vector, dtype="<f4")
    values = vector.to_numpy() if hasattr(vector, "to_numpy") else vector
    return np.asarray(values, dtype="<f4")


@pytest.fixture(scope="session")
def contract_database(pg_server) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """One database for every PostgreSQL store of the contract suite (a schema each)."""
    with pg_server.database() as url:
        yield url


def backend_named(name: str, request: pytest.FixtureRequest) -> Backend:
    if name == "sqlite":
        return Backend("sqlite")
    return Backend("postgresql", request.getfixturevalue("contract_database"))


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Backend:
    """Each backend in turn; the environment names no database, the store's config does."""
    monkeypatch.delenv(URL_VARIABLE, raising=False)
    return backend_named(request.param, request)


@pytest.fixture
def backend_store(backend: Backend, tmp_path: Path) -> Callable[[dict[str, str]], Store]:
    """Like ``make_store``, on the test's backend."""
    return lambda files: backend.write(tmp_path / "store", files)


@pytest.fixture
def indexed(backend_store, hash_embedder):  # type: ignore[no-untyped-def]
    """A builder: write the files on the test's backend and index them with the test embedder."""

    def build(files: dict[str, str]) -> Store:
        store = backend_store(files)
        index_store(store, embedder=hash_embedder)
        return store

    return build


LEXICAL_CONFIG = '[embedder]\nmodel = "none"\n'


def named_store(tmp_path: Path, name: str, schema: str | None = None) -> Store:
    """A lexical store in ``tmp_path/name`` holding one memory that names the store, with
    ``[database] schema`` set when given (the database itself comes from the environment)."""
    root = tmp_path / name
    (root / ".memsift").mkdir(parents=True)
    config = LEXICAL_CONFIG + (f'[database]\nschema = "{schema}"\n' if schema else "")
    (root / CONFIG).write_text(config)
    (root / f"{name}.md").write_text(f"# Memory of {name}\n\nOnly the {name} store holds this.\n")
    return open_store(root)
