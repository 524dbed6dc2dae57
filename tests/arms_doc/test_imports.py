"""What rendering the pages loads: the ranking's pure modules, the results schema and the SQLite
schema to prepare statements on, never numpy or the engine's indexer and search, so a site pays
for the pages and not for a search engine it never runs (issue 23: the plugin's cost on a
build)."""

from __future__ import annotations

import json
import subprocess
import sys

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


@pytest.fixture(scope="module")
def loaded() -> set[str]:
    done = subprocess.run([sys.executable, "-c", RENDER], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    modules = set(json.loads(done.stdout))
    # The statements were prepared in that process: the check ran, on a real SQLite.
    assert {"engine.sqlite.prepare", "apsw"} <= modules
    return modules


def test_rendering_the_pages_loads_no_numpy(loaded: set[str]):
    assert "numpy" not in loaded


@pytest.mark.parametrize(
    "module", ["engine.search", "engine.indexing.indexer", "engine.files.store", "sqlite_vec"]
)
def test_rendering_the_pages_loads_no_search_no_indexer_and_no_vector_package(
    loaded: set[str], module: str
):
    assert module not in loaded
