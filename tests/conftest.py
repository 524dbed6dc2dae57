"""Shared fixtures: small stores written into tmp_path, and a fast deterministic embedder."""

from __future__ import annotations

import hashlib
import os
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from backends import backend, backend_store, contract_database, indexed  # noqa: F401  (both backends)
from engine.files.store import Store, open_store
from engine.redact import forget_passwords
from pg_server import pg_server, pg_url  # noqa: F401  (fixtures: a real PostgreSQL per run)

#: The benchmarks are scripts that import each other by bare name (``from stamp import ...``),
#: as they do when run from their folder; tests/benchmarks imports them the same way.
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.append(str(BENCHMARKS))


@pytest.fixture(autouse=True)
def fresh_password_memory():  # type: ignore[no-untyped-def]
    """The passwords a process has seen are redacted from all its output; a test run is one
    process, so each test starts with none remembered."""
    forget_passwords()
    yield
    forget_passwords()


class HashEmbedder:
    """A stand-in embedder: a bag of hashed words, L2-normalised. Fast and deterministic, and
    texts sharing words get similar vectors, which is all the indexer tests need."""

    def __init__(self, name: str = "test-hash", dim: int = 16) -> None:
        self.name = name
        self.dim = dim
        self.calls: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.extend(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
                out[row, int.from_bytes(digest, "little") % self.dim] += 1.0
            out[row, 0] += 1e-3
        return out / np.linalg.norm(out, axis=1, keepdims=True)


@pytest.fixture
def hash_embedder() -> HashEmbedder:
    return HashEmbedder()


WriteFiles = Callable[[dict[str, str]], Store]


@pytest.fixture
def make_store(tmp_path: Path) -> WriteFiles:
    """Write {relative path: dedented text} into a fresh store folder and open it."""
    root = tmp_path / "store"
    root.mkdir()

    def write(files: dict[str, str]) -> Store:
        for key, text in files.items():
            path = root / key
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return open_store(root)

    return write


def touch_later(path: Path, seconds: int = 5) -> None:
    """Move a file's mtime forward so a rewrite within the same clock tick is still seen."""
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + seconds * 1_000_000_000))


@pytest.fixture
def index_locked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every index write of the write path fails as it does while another process holds the
    index's write lock (SQLite's "database is locked", after the busy timeout)."""
    import apsw

    import engine.agents.write

    def locked(*_args: object, **_kwargs: object) -> None:
        raise apsw.BusyError("database is locked")

    monkeypatch.setattr(engine.agents.write, "index_paths", locked)


@pytest.fixture
def temp_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """For the docs plugin's tests: the test's own temporary directory (so the plugin's private
    cache folder is in it), nothing remembered in this process, and no git repository above
    it."""
    import tempfile

    from arms_doc import remembered, verdicts

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))

    def forget() -> None:
        remembered.forget_all()
        verdicts.forget_all()

    forget()
    yield tmp_path
    forget()
