"""What rendering the pages loads: the ranking's pure modules, the results schema and the SQLite
schema to prepare statements on, never numpy or the engine's indexer and search, so a site pays
for the pages and not for a search engine it never runs (issue 23: the plugin's cost on a
build)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from arms_doc_testing import ENGINE_REGISTRY, REPO

#: Render both pages for this project's registry and results in a fresh interpreter, then list
#: what it loaded.
RENDER = f"""
import json, sys
from pathlib import Path
from arms_doc.pages import Sources, render_pages
root = Path({str(REPO)!r})
pages = render_pages(Sources(root=root, registry=Path({str(ENGINE_REGISTRY)!r}),
                             results=root / "benchmarks" / "results"))
assert pages.arms and pages.measured
print(json.dumps(sorted(sys.modules)))
"""


def render_loads(temp: Path) -> set[str]:
    """What a fresh interpreter loads to render the pages, its temporary directory (and so the
    plugin's cache folder) in ``temp``."""
    env = {**os.environ, "TMPDIR": str(temp)}
    done = subprocess.run([sys.executable, "-c", RENDER], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout))


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tmp")


@pytest.fixture(scope="module")
def loaded(cache: Path) -> set[str]:
    modules = render_loads(cache)  # nothing remembered yet: the pages are rendered
    # The statements were prepared in that process: the check ran, on a real SQLite.
    assert {"engine.sqlite.prepare", "apsw"} <= modules
    return modules


def test_a_build_that_remembers_the_pages_loads_neither_the_results_schema_nor_sqlite(
    loaded: set[str], cache: Path
):
    again = render_loads(cache)

    assert {"engine.measure.results_schema", "engine.sqlite.prepare", "apsw"} & again == set()


def test_rendering_the_pages_loads_no_numpy(loaded: set[str]):
    assert "numpy" not in loaded


@pytest.mark.parametrize(
    "module", ["engine.search", "engine.indexing.indexer", "engine.files.store", "sqlite_vec"]
)
def test_rendering_the_pages_loads_no_search_no_indexer_and_no_vector_package(
    loaded: set[str], module: str
):
    assert module not in loaded
