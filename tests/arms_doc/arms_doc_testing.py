"""Helpers for the arms_doc tests: dedented sources, result files and real MkDocs sites.

Not a conftest.py: the engine tests import names from tests/conftest.py as ``conftest``, and a
second conftest module here would shadow it.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.config.defaults import MkDocsConfig

from arms_doc.reader import read_registry
from engine.measure.fingerprint import Ranking, ranking
from engine.measure.typed_json import dump

REPO = Path(__file__).resolve().parents[2]
ENGINE_REGISTRY = REPO / "src" / "engine" / "arms.py"
FIXTURES = Path(__file__).parent / "fixtures"
SNAPSHOT_REGISTRY = FIXTURES / "registry_snapshot.py"
#: Hand-made results files in the layout of engine.measure.results_schema (quality.json with a lab
#: record: tuning, levers, calibration; mcp.json with its stores out of size order).
QUALITY_FIXTURE = FIXTURES / "quality.json"
LATENCY_FIXTURE = FIXTURES / "latency.json"
MCP_FIXTURE = FIXTURES / "mcp.json"

#: A minimal site: the default theme (fast), the plugin with its defaults, the page in nav.
SITE_CONFIG = """\
site_name: arms-doc test site
theme: mkdocs
plugins:
  - arms-doc
nav:
  - Home: index.md
  - Ranking arms: reference/rrf-arms.md
"""


class _Tables(HTMLParser):
    """Every table of an HTML page as rows of cell texts (header rows included)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None and self.tables:
            self.tables[-1][-1].append("".join(self.cell).strip())
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def arms_table(html: str) -> list[list[str]]:
    """The rows (Arm, Weight, then the needs) of the arms table in a built page's HTML; an
    AssertionError when the page has no such table."""
    parser = _Tables()
    parser.feed(html)
    for table in parser.tables:
        if table and table[0][:2] == ["Arm", "Weight"]:
            return table[1:]
    raise AssertionError("the page has no table headed Arm | Weight")


def src(text: str) -> str:
    """Dedent a test's source text, dropping the newline after the opening quotes."""
    return textwrap.dedent(text).lstrip("\n")


def fixture_document(name: str) -> dict[str, Any]:
    """A fresh copy of the results fixture ``quality.json``, ``latency.json`` or ``mcp.json``."""
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def ranking_of(registry: Path) -> Ranking:
    """The ranking of a registry file, as the plugin computes it."""
    return ranking(read_registry(registry).arms)


class Site:
    """A folder with mkdocs.yml, docs/ and src/engine/arms.py, built for real, strictly.

    The registry is a copy of the snapshot in fixtures/, so these tests do not move when the
    engine's registry is edited; test_runtime_registry and test_project_site cover the real one.
    """

    def __init__(self, root: Path, registry: Path = SNAPSHOT_REGISTRY) -> None:
        self.root = root
        self.registry = root / "src" / "engine" / "arms.py"
        self.registry.parent.mkdir(parents=True)
        shutil.copyfile(registry, self.registry)
        (root / "docs").mkdir()
        (root / "docs" / "index.md").write_text("# Home\n", encoding="utf-8")
        self.config_text = SITE_CONFIG
        self.results = root / "benchmarks" / "results"

    def configure(self, text: str) -> None:
        """Replace mkdocs.yml (dedented)."""
        self.config_text = src(text)

    def build(self) -> MkDocsConfig:
        (self.root / "mkdocs.yml").write_text(self.config_text, encoding="utf-8")
        config = load_config(
            config_file=str(self.root / "mkdocs.yml"),
            strict=True,
            site_dir=str(self.root / "site"),
        )
        build(config)
        return config

    def write_result(
        self,
        name: str,
        document: dict[str, Any] | None = None,
        *,
        ranking: Ranking | None = None,
    ) -> dict[str, Any]:
        """Write ``name`` (the fixture unless ``document`` is given) into the results folder,
        stamped with the registry's current ranking unless ``ranking`` is given."""
        document = fixture_document(name) if document is None else document
        document["stamp"]["ranking"] = dump(ranking or ranking_of(self.registry))
        self.results.mkdir(parents=True, exist_ok=True)
        (self.results / name).write_text(json.dumps(document, indent=2), encoding="utf-8")
        return document

    def page_html(self, page: str = "reference/rrf-arms") -> str:
        return (self.root / "site" / page / "index.html").read_text(encoding="utf-8")

    def markdown(self, config: MkDocsConfig) -> str:
        """The Markdown the plugin generated in the build of ``config``."""
        markdown = config.plugins["arms-doc"].markdown
        assert markdown is not None
        return markdown

    def measured_markdown(self, config: MkDocsConfig) -> str:
        """The Markdown of the Measured page generated in the build of ``config``."""
        markdown = config.plugins["arms-doc"].measured_markdown
        assert markdown is not None
        return markdown
