"""Real strict builds with benchmark results: the Measured page, what each arm buys, staleness."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from arms_doc_testing import SNAPSHOT_REGISTRY, Site, ranking_of
from mkdocs.exceptions import Abort

from arms_doc.plugin import ArmsDocPlugin


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Site:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    return Site(tmp_path / "project")


def section(markdown: str, heading: str) -> str:
    """The text of the ``## heading`` section."""
    start = markdown.index(f"## {heading}\n")
    end = markdown.find("\n## ", start + 1)
    return markdown[start : end if end != -1 else None]


def test_measured_page_is_built_from_the_results(site: Site):
    site.write_result("quality.json")
    site.write_result("latency.json")

    site.build()
    html = site.page_html("reference/measured")

    assert '<h1 id="measured">Measured</h1>' in html
    assert '<h3 id="tiny-a">tiny-a</h3>' in html
    for block in ("How the weights were chosen", "Levers tried", "Abstention calibration"):
        assert f">{block}</h3>" in html
    assert "<svg" not in html


def test_the_mcp_servers_figures_are_built_into_the_page(site: Site):
    site.write_result("mcp.json")

    site.build()
    html = site.page_html("reference/measured")

    assert '<h2 id="agents-the-mcp-server">Agents: the MCP server</h2>' in html
    assert '<h3 id="2000-memories">2,000 memories</h3>' in html
    assert "<td>Warm search through MCP (<code>memory_search</code>)</td>" in html


def test_both_backends_quality_sits_side_by_side_per_set(site: Site):
    site.write_result("quality.json")
    site.write_result("quality_pg.json")

    measured = section(site.measured_markdown(site.build()), "Quality on PostgreSQL")

    assert "server: PostgreSQL 18.1, pgvector 0.8.1" in measured
    assert (
        "| Set | Queries | Fusion, SQLite | Fusion, PostgreSQL | fts alone, SQLite | "
        "fts alone, PostgreSQL | vector alone, SQLite | vector alone, PostgreSQL |" in measured
    )
    assert "| tiny-a | 12 | 0.6000 | 0.6100 | 0.4510 | 0.5200 | 0.5530 | 0.5800 |" in measured
    # A set SQLite did not measure, and an arm PostgreSQL did not measure alone: dashes.
    assert "| tiny-pg-only | 5 | – | 0.4000 | – | 0.3000 | – | – |" in measured


def test_without_postgresql_results_the_page_says_how_to_make_them(site: Site):
    site.write_result("quality.json")

    measured = site.measured_markdown(site.build())

    assert (
        "No PostgreSQL quality results are recorded: `benchmarks/results/quality_pg.json` "
        "does not exist; run `python benchmarks/quality.py --database-url URL` to make it."
        in measured
    )


def test_postgresql_figures_go_stale_when_an_arms_postgresql_sql_changes(site: Site, caplog):
    site.write_result("quality.json")
    current = ranking_of(SNAPSHOT_REGISTRY)
    arms = tuple(
        replace(arm, pg_sql_sha256="0" * 64) if arm.name == "fts" else arm for arm in current.arms
    )
    site.write_result("quality_pg.json", ranking=replace(current, arms=arms))

    with caplog.at_level(logging.WARNING), pytest.raises(Abort, match="1 warnings in strict mode"):
        site.build()

    assert (
        "arms-doc: benchmarks/results/quality_pg.json was measured with another ranking than "
        "src/engine/arms.py now describes" in caplog.text
    )
    assert "refresh them with `python benchmarks/quality.py --database-url URL`" in caplog.text


def buys_tables(markdown: str) -> dict[str, dict[str, list[float]]]:
    """Set name -> arm -> [nDCG@10 without it, what it buys, nDCG@10 alone], as printed."""
    tables: dict[str, dict[str, list[float]]] = {}
    rows: dict[str, list[float]] = {}
    for line in section(markdown, "What each arm buys").splitlines():
        if heading := re.match(r"^\*\*(.+)\*\*, ", line):
            rows = tables.setdefault(heading[1], {})
        elif row := re.match(r"^\| (\w+) \| ([-+.\d]+) \| ([-+.\d]+) \| ([-+.\d]+) \|$", line):
            rows[row[1]] = [float(row[2]), float(row[3]), float(row[4])]
    return tables


def test_what_each_arm_buys_equals_the_deltas_in_the_results_file(site: Site):
    document = site.write_result("quality.json")

    tables = buys_tables(site.markdown(site.build()))

    assert list(tables) == [result["name"] for result in document["sets"]]
    for result in document["sets"]:
        fused = result["fused"]["ndcg@10"]
        assert tables[result["name"]] == {
            entry["arm"]: [
                entry["without"]["ndcg@10"],
                round(fused - entry["without"]["ndcg@10"], 4),
                entry["alone"]["ndcg@10"],
            ]
            for entry in result["ablation"]
        }


def test_the_arms_page_links_to_the_measured_page(site: Site):
    site.write_result("quality.json")

    site.build()

    assert '<a href="../measured/">Measured</a>' in site.page_html()


def test_missing_results_still_build_both_pages_with_a_note(site: Site, caplog):
    site.results.mkdir(parents=True)  # the folder is there, its files are not yet
    with caplog.at_level(logging.INFO):
        config = site.build()

    measured = site.measured_markdown(config)
    for kind in ("quality", "latency"):
        assert (
            f"No {kind} results are recorded: `benchmarks/results/{kind}.json` does not exist; "
            f"run `python benchmarks/{kind}.py` to make it." in measured
        )
    buys = section(site.markdown(config), "What each arm buys").splitlines()
    assert [line for line in buys if line] == [
        "## What each arm buys",
        "No quality results are recorded yet (`benchmarks/results/quality.json` does not "
        "exist), so this page cannot say what each arm buys; `python benchmarks/quality.py` "
        "measures it.",
    ]
    assert (site.root / "site" / "reference" / "measured" / "index.html").exists()
    assert (
        "No MCP server results are recorded: `benchmarks/results/mcp.json` does not exist; run "
        "`python benchmarks/mcp_latency.py --large` to make it." in measured
    )
    assert "benchmarks/results/latency.json does not exist" in caplog.text
    assert "benchmarks/results/mcp.json does not exist" in caplog.text
    assert not [record for record in caplog.records if record.levelno >= logging.WARNING]


def test_a_missing_latency_file_leaves_the_quality_figures(site: Site):
    site.write_result("quality.json")

    measured = site.measured_markdown(site.build())

    assert "### tiny-a" in measured
    assert "No latency results are recorded" in measured


def test_a_stale_results_file_fails_the_strict_build(site: Site, caplog):
    current = ranking_of(SNAPSHOT_REGISTRY)
    site.write_result("latency.json", ranking=replace(current, rrf_k=current.rrf_k + 1))

    with caplog.at_level(logging.WARNING), pytest.raises(Abort, match="1 warnings in strict mode"):
        site.build()

    assert (
        "arms-doc: benchmarks/results/latency.json was measured with another ranking than "
        "src/engine/arms.py now describes (fusion constant k 21 -> 20)" in caplog.text
    )
    assert "refresh them with `python benchmarks/latency.py`" in caplog.text


def test_a_stale_mcp_file_fails_the_strict_build(site: Site, caplog):
    site.write_result("quality.json")
    site.write_result("latency.json")
    current = ranking_of(SNAPSHOT_REGISTRY)
    site.write_result("mcp.json", ranking=replace(current, embedder_model="another-model"))

    with caplog.at_level(logging.WARNING), pytest.raises(Abort, match="1 warnings in strict mode"):
        site.build()

    assert (
        "arms-doc: benchmarks/results/mcp.json was measured with another ranking than "
        "src/engine/arms.py now describes" in caplog.text
    )
    assert "refresh them with `python benchmarks/mcp_latency.py --large`" in caplog.text


def test_an_sql_edit_makes_the_mcp_figures_stale_too(site: Site, caplog):
    site.write_result("mcp.json")
    site.build()
    edit_registry(site, "ORDER BY moment DESC", "ORDER BY moment DESC ")

    with caplog.at_level(logging.WARNING), pytest.raises(Abort, match="1 warnings in strict mode"):
        site.build()

    assert "benchmarks/results/mcp.json was measured with another ranking" in caplog.text
    assert "(SQL of recency)" in caplog.text


def test_an_mcp_file_of_the_first_layout_stops_the_build_with_the_fix(site: Site, caplog):
    site.results.mkdir(parents=True)
    (site.results / "mcp.json").write_text(
        '{"benchmark": "mcp", "format": 1, "registry_sha256": "00"}', encoding="utf-8"
    )

    with pytest.raises(Abort, match="BuildError"):
        site.build()

    assert (
        "arms-doc: benchmarks/results/mcp.json: written in the layout before format 2"
        in caplog.text
    )
    assert "python benchmarks/mcp_latency.py" in caplog.text


def edit_registry(site: Site, old: str, new: str) -> None:
    text = site.registry.read_text(encoding="utf-8")
    assert old in text
    site.registry.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_weight_edit_makes_the_results_stale(site: Site, caplog):
    site.write_result("latency.json")
    site.build()
    edit_registry(site, "weight=0.5,", "weight=0.6,")

    with caplog.at_level(logging.WARNING), pytest.raises(Abort, match="1 warnings in strict mode"):
        site.build()

    assert "(weight of recency 0.5 -> 0.6)" in caplog.text
    assert "refresh them with `python benchmarks/latency.py`" in caplog.text


def test_an_sql_edit_makes_the_results_stale(site: Site, caplog):
    site.write_result("latency.json")
    edit_registry(site, "ORDER BY moment DESC", "ORDER BY moment DESC ")

    with caplog.at_level(logging.WARNING), pytest.raises(Abort, match="1 warnings in strict mode"):
        site.build()

    assert "(SQL of recency)" in caplog.text


def test_a_prose_or_label_edit_keeps_the_results_fresh_and_the_build_green(site: Site, caplog):
    site.write_result("quality.json")
    site.write_result("latency.json")
    edit_registry(site, "The lexical arm", "The lexical (word-matching) arm")
    edit_registry(site, 'label="full-text ranking"', 'label="word-for-word ranking"')
    edit_registry(site, '"""The ranking arms', '"""The ranking arms (a reworded docstring)')
    edit_registry(site, "\nARMS", "\n# A comment the ranking ignores.\nARMS")

    with caplog.at_level(logging.WARNING):
        config = site.build()

    assert "word-matching" in site.markdown(config)
    assert "*word-for-word ranking*" in site.markdown(config)
    assert not [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert "**stale**" not in site.measured_markdown(config)


def test_a_tuning_record_the_registry_does_not_hold_fails_the_strict_build(site: Site, caplog):
    document = site.write_result("quality.json")
    document["lab"]["tuning"]["weights"]["recency"] = 0.3
    site.write_result("quality.json", document)

    with caplog.at_level(logging.WARNING), pytest.raises(Abort, match="1 warnings in strict mode"):
        site.build()

    assert (
        "arms-doc: benchmarks/results/quality.json: its tuning record chose another setting "
        "than src/engine/arms.py holds (weight of recency: chosen 0.3, registry 0.5)"
    ) in caplog.text


def test_malformed_results_stop_the_build_naming_file_and_line(site: Site, caplog):
    site.results.mkdir(parents=True)
    (site.results / "latency.json").write_text('{\n  "stores": [\n}\n', encoding="utf-8")

    with pytest.raises(Abort, match="BuildError"):
        site.build()

    assert "arms-doc: benchmarks/results/latency.json:3:1: not valid JSON" in caplog.text
    assert not (site.root / "site" / "reference" / "measured" / "index.html").exists()


def test_a_real_file_at_the_measured_page_path_is_refused(site: Site, caplog):
    site.results.mkdir(parents=True)  # a site that measures: the page is generated
    real = site.root / "docs" / "reference" / "measured.md"
    real.parent.mkdir()
    real.write_text("# Hand-written figures\n", encoding="utf-8")

    with pytest.raises(Abort, match="BuildError"):
        site.build()

    assert (
        "arms-doc: a real file already sits at the generated page's path reference/measured.md"
        in caplog.text
    )
    assert "Delete that file, or set `measured_page:` under arms-doc to another path." in (
        caplog.text
    )


def test_the_options_move_the_results_folder_and_the_page(site: Site):
    site.configure(
        """
        site_name: t
        theme: mkdocs
        plugins:
          - arms-doc:
              results: figures
              measured_page: about/numbers.md
        """
    )
    site.results = site.root / "figures"
    site.write_result("quality.json")

    config = site.build()

    assert "[Measured](../about/numbers.md)" in site.markdown(config)
    assert "`figures/quality.json`" in site.measured_markdown(config)
    assert (site.root / "site" / "about" / "numbers" / "index.html").exists()


def test_the_two_pages_cannot_share_a_path(site: Site, caplog):
    site.configure(
        """
        site_name: t
        theme: mkdocs
        plugins:
          - arms-doc:
              measured_page: reference/rrf-arms.md
        """
    )

    with pytest.raises(Abort):
        site.build()

    assert "page and measured_page are both reference/rrf-arms.md" in caplog.text


class RecordingServer:
    def __init__(self) -> None:
        self.watched: list[str] = []

    def watch(self, path: str) -> None:
        self.watched.append(path)


def test_serve_watches_the_results_folder(site: Site):
    site.write_result("quality.json")
    config = site.build()
    plugin = config.plugins["arms-doc"]
    assert isinstance(plugin, ArmsDocPlugin)
    server = RecordingServer()

    plugin.on_serve(server, config=config, builder=None)

    assert str(site.results.resolve()) in server.watched


# --- a site without benchmarks ---------------------------------------------------------------


def test_a_site_without_a_results_folder_has_no_measured_page_and_no_advice(site: Site, caplog):
    with caplog.at_level(logging.INFO):
        config = site.build()

    assert not (site.root / "site" / "reference" / "measured").exists()
    page = site.markdown(config)
    assert "What each arm buys" not in page and "benchmarks/" not in page
    assert "does not exist" not in caplog.text and "python benchmarks" not in caplog.text


def test_a_site_without_a_results_folder_loads_no_benchmark_code(site: Site):
    (site.root / "mkdocs.yml").write_text(site.config_text, encoding="utf-8")
    probe = (
        "import sys\n"
        "from mkdocs.commands.build import build\n"
        "from mkdocs.config import load_config\n"
        f"build(load_config({str(site.root / 'mkdocs.yml')!r}, strict=True))\n"
        "print(sorted(m for m in sys.modules if m.startswith(('engine.measure', 'arms_doc'))))\n"
    )

    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)

    assert done.returncode == 0, done.stderr
    loaded = done.stdout.strip()
    assert "arms_doc.page" in loaded  # the page was built in that process
    assert "engine.measure.results_schema" not in loaded and "arms_doc.measured" not in loaded


def test_measured_page_null_turns_the_page_off_where_results_exist(site: Site):
    site.write_result("quality.json")
    site.configure(
        """
        site_name: arms-doc test site
        plugins:
          - arms-doc:
              measured_page: null
        nav:
          - Home: index.md
          - Ranking arms: reference/rrf-arms.md
        """
    )

    config = site.build()

    assert not (site.root / "site" / "reference" / "measured").exists()
    assert "[Measured]" not in site.markdown(config)
    assert "## What each arm buys" in site.markdown(config)  # the figures stay on the arms page
