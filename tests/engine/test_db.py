"""Connections: every one loads sqlite-vec and registers ``nearest_chunks``, and none loads numpy
for it (a process that never searches by meaning, like the docs build preparing statements,
must not pay for numpy)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import sqlite_vec

from engine.sqlite.db import vector_extension

SRC = Path(__file__).resolve().parents[2] / "src"

CONNECT = """
import sys
from engine.sqlite.db import connect
conn = connect(":memory:")
print(conn.execute("SELECT vec_version()").fetchone()[0])
print("numpy" in sys.modules, "sqlite_vec" in sys.modules)
"""


def test_connections_load_the_library_the_sqlite_vec_package_names():
    assert vector_extension() == sqlite_vec.loadable_path()


def test_a_connection_has_sqlite_vec_without_importing_numpy_or_the_package():
    done = subprocess.run([sys.executable, "-c", CONNECT], capture_output=True, text=True)

    assert done.returncode == 0, done.stderr
    version, modules = done.stdout.splitlines()
    assert version.startswith("v")
    assert modules == "False False"
