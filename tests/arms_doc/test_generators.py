"""The arms page on three generators, each run as its own command on a tiny site: MkDocs 1.6
and ProperDocs (which keeps the 1.6 plugin API) through the plugin, and Zensical (which reads
mkdocs.yml but skips third-party plugins without a word) from the pages `memsift docs write`
puts in the docs folder. Each built site must hold the arms table, a row per arm."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from arms_doc_testing import Site, arms_table, src

#: The snapshot registry's arms and weights, in registry order.
ARMS = [["fts", "1.0"], ["vector", "1.0"], ["recency", "0.5"], ["salience", "0.4"]]
#: A generator that has not finished a tiny site by then has hung.
BUILD_TIMEOUT = 300


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Site:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    return Site(tmp_path / "project")


def run(site: Site, *command: str) -> subprocess.CompletedProcess[str]:
    """A command run in the site's folder, which must succeed."""
    (site.root / "mkdocs.yml").write_text(site.config_text, encoding="utf-8")
    done = subprocess.run(
        command,
        cwd=site.root,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def table_rows(site: Site) -> list[list[str]]:
    """Arm and weight of each row of the built arms page's table."""
    return [row[:2] for row in arms_table(site.page_html())]


def with_plugin(theme: str) -> str:
    return src(
        f"""
        site_name: generators
        theme: {theme}
        plugins:
          - arms-doc
        nav:
          - Home: index.md
          - Ranking arms: reference/rrf-arms.md
          - Measured: reference/measured.md
        """
    )


def test_mkdocs_builds_the_arms_table_through_the_plugin(site: Site):
    site.write_result("quality.json")
    site.config_text = with_plugin("mkdocs")

    run(site, sys.executable, "-m", "mkdocs", "build", "--strict")

    assert table_rows(site) == ARMS
    assert "Measured" in site.page_html("reference/measured")


def test_properdocs_builds_the_arms_table_through_the_plugin(site: Site):
    pytest.importorskip("properdocs", reason="ProperDocs is not installed (the test extra has it)")
    site.write_result("quality.json")
    # ProperDocs ships no theme of its own; Material registers itself for both.
    site.config_text = with_plugin("material")

    run(site, sys.executable, "-m", "properdocs", "build", "--strict", "-f", "mkdocs.yml")

    assert table_rows(site) == ARMS
    assert "Measured" in site.page_html("reference/measured")


def test_zensical_skips_the_plugin_and_builds_the_pages_docs_write_wrote(site: Site):
    pytest.importorskip("zensical", reason="Zensical is not installed (the test extra has it)")
    site.write_result("quality.json")
    # The same mkdocs.yml as a plugin site's: Zensical reads it, and ignores arms-doc.
    site.config_text = with_plugin("material")
    zensical = (sys.executable, "-m", "zensical", "build", "--strict")
    run(site, *zensical)
    assert not (site.root / "site" / "reference" / "rrf-arms").exists()

    run(site, sys.executable, "-m", "engine.cli", "docs", "write", "docs", "--tabs")
    run(site, *zensical)

    assert table_rows(site) == ARMS
    assert "Measured" in site.page_html("reference/measured")
    # Four arms, the default scope and two statements: seven sets of dialect tabs, no raw marker.
    html = site.page_html()
    assert html.count('class="tabbed-set') == 7 and '=== "' not in html
