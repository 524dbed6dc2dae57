"""The project's own site: built strictly, with the arms page and the Measured page really in it.

Other engines that read mkdocs.yml skip unknown plugins without a word, so the test looks for
the page in the built site rather than trusting that the build passed.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from arms_doc_testing import ENGINE_REGISTRY, REPO
from mkdocs.commands.build import build
from mkdocs.config import load_config

from arms_doc.plugin import ArmsDocConfig
from arms_doc.reader import read_registry

PLUGIN_SOURCE = REPO / "src" / "arms_doc" / "plugin.py"
USAGE_PAGE = REPO / "docs" / "arms-doc.md"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site_dir = tmp_path_factory.mktemp("site")
    config = load_config(config_file=str(REPO / "mkdocs.yml"), strict=True, site_dir=str(site_dir))
    build(config)
    return site_dir


def test_site_has_the_arms_page_with_every_arm_heading_and_weight(site: Path):
    html = (site / "reference" / "rrf-arms" / "index.html").read_text(encoding="utf-8")

    for arm in read_registry(ENGINE_REGISTRY).arms:
        assert f'<h3 id="{arm.name}">{arm.name}<a class="headerlink"' in html
        assert f'<td><a href="#{arm.name}">{arm.name}</a></td>\n<td>{arm.weight_text}</td>' in html


def test_site_has_the_measured_page(site: Path):
    html = (site / "reference" / "measured" / "index.html").read_text(encoding="utf-8")

    assert '<h1 id="measured">Measured<a class="headerlink"' in html
    assert '<h2 id="quality">Quality<a class="headerlink"' in html
    assert '<h2 id="latency">Latency<a class="headerlink"' in html
    assert '<h2 id="agents-the-mcp-server">Agents: the MCP server<a class="headerlink"' in html


def test_site_has_the_generated_cli_reference(site: Path):
    html = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")

    for command in ("index", "search", "read", "reinforce", "status"):
        assert f'id="memsift-{command}"' in html


def test_usage_page_documents_every_option():
    text = USAGE_PAGE.read_text(encoding="utf-8")

    for name in dict(ArmsDocConfig._schema):
        assert f"\n`{name}`\n:   " in text


def test_every_option_has_a_docstring_where_it_is_declared():
    module = ast.parse(PLUGIN_SOURCE.read_text(encoding="utf-8"))
    (config_class,) = [
        node
        for node in module.body
        if isinstance(node, ast.ClassDef) and node.name == "ArmsDocConfig"
    ]
    body = config_class.body
    options = [
        (index, node.targets[0].id)
        for index, node in enumerate(body)
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
    ]

    assert [name for _, name in options] == [name for name, _ in ArmsDocConfig._schema]
    for index, name in options:
        following = body[index + 1] if index + 1 < len(body) else None
        assert isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant), name
