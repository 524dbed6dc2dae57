"""Real MkDocs builds into tmp_path, strict: the page, and every way the build must refuse."""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from arms_doc_testing import SITE_CONFIG, Site
from mkdocs.exceptions import Abort

from arms_doc.plugin import ArmsDocPlugin

GOLDEN = Path(__file__).parent / "golden" / "rrf-arms.md"


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Site:
    # No git repository above tmp_path: the page names no commit and links to HEAD.
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    return Site(tmp_path / "project")


def mask_commit(markdown: str) -> str:
    """Replace whatever commit the build saw by a fixed mark."""
    markdown = re.sub(r"^- Commit: .*$", "- Commit: <commit>", markdown, flags=re.MULTILINE)
    return re.sub(r"/blob/[0-9a-f]{4,40}/", "/blob/HEAD/", markdown)


def test_normal_page_matches_the_golden_file(tmp_path: Path, monkeypatch):
    """Regenerate with ARMS_DOC_UPDATE_GOLDEN=1 after a deliberate change, then review the diff."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    site = Site(tmp_path / "project")
    site.configure(
        """
        site_name: arms-doc test site
        repo_url: https://github.com/example/memsift
        theme: mkdocs
        plugins:
          - arms-doc
        markdown_extensions:
          - pymdownx.superfences
          - pymdownx.tabbed:
              alternate_style: true
        nav:
          - Home: index.md
          - Ranking arms: reference/rrf-arms.md
        """
    )

    page = mask_commit(site.markdown(site.build()))

    if os.environ.get("ARMS_DOC_UPDATE_GOLDEN"):
        GOLDEN.write_text(page, encoding="utf-8")
    assert page == GOLDEN.read_text(encoding="utf-8")


def test_built_page_has_every_arm_heading_and_weight(site: Site):
    site.build()
    html = site.page_html()

    for name, weight in [("fts", "1.0"), ("vector", "1.0"), ("recency", "0.5")]:
        assert f'<h3 id="{name}">{name}</h3>' in html
        assert f'<a href="#{name}">{name}</a></td>\n<td>{weight}</td>' in html


def test_edit_link_points_at_the_registry(site: Site):
    site.configure(
        """
        site_name: t
        repo_url: https://github.com/example/memsift
        edit_uri: edit/main/docs/
        theme: mkdocs
        plugins:
          - arms-doc
        """
    )

    site.build()

    assert 'href="https://github.com/example/memsift/edit/main/src/engine/arms.py"' in (
        site.page_html()
    )


def test_source_link_template_links_each_arm(site: Site):
    site.configure(
        """
        site_name: t
        theme: mkdocs
        plugins:
          - arms-doc:
              source_link: https://code.example.org/{path}?at={commit}#L{start}-{end}
        """
    )

    markdown = site.markdown(site.build())

    assert re.search(
        r"\]\(https://code\.example\.org/src/engine/arms\.py\?at=HEAD#L\d+-\d+\)", markdown
    )


def test_changing_a_weight_in_the_registry_changes_table_and_sql(site: Site):
    before = site.markdown(site.build())
    text = site.registry.read_text(encoding="utf-8")
    site.registry.write_text(text.replace("weight=0.5,", "weight=0.75,", 1), encoding="utf-8")

    after = site.markdown(site.build())

    assert "| [recency](#recency) | 0.5 |" in before
    row = "SELECT id, {} / (20 + rank) AS contribution, 'recency' AS arm, rank FROM arm_recency"
    assert row.format("0.5") in before
    assert "| [recency](#recency) | 0.75 |" in after
    assert row.format("0.75") in after
    assert "0.5 / (20 + rank)" not in after


def test_a_real_file_at_the_page_path_is_refused(site: Site, caplog):
    real = site.root / "docs" / "reference" / "rrf-arms.md"
    real.parent.mkdir()
    real.write_text("# Hand-written arms\n", encoding="utf-8")

    with pytest.raises(Abort, match="BuildError"):
        site.build()

    assert (
        "arms-doc: a real file already sits at the generated page's path reference/rrf-arms.md"
        in caplog.text
    )
    assert "Delete that file, or set `page:` under arms-doc to another path." in caplog.text


def test_a_page_docs_write_wrote_gives_way_to_the_generated_one(site: Site, caplog):
    written = site.root / "docs" / "reference" / "rrf-arms.md"
    written.parent.mkdir()
    text = "# Ranking arms\n\n<!-- Written by memsift docs write from x (ARMS). -->\n\nOld page.\n"
    written.write_text(text, encoding="utf-8")

    with caplog.at_level(logging.INFO):
        site.build()

    html = site.page_html()
    assert "Old page." not in html and '<h3 id="recency">recency</h3>' in html
    assert written.read_text(encoding="utf-8") == text
    assert "reference/rrf-arms.md was written by memsift docs write; this build uses" in caplog.text


def test_a_broken_registry_stops_the_build_naming_file_and_line(site: Site, caplog):
    text = site.registry.read_text(encoding="utf-8")
    site.registry.write_text(text.replace("weight=0.5,", "weight=HALF,", 1), encoding="utf-8")
    line = text[: text.index("weight=0.5,")].count("\n") + 1

    with pytest.raises(Abort, match="BuildError"):
        site.build()

    assert f"arms-doc: src/engine/arms.py:{line}: field 'weight' is `HALF`" in caplog.text
    assert not (site.root / "site" / "reference" / "rrf-arms" / "index.html").exists()


RECENCY_FILTER = "WHERE {scope} AND f.id IN (SELECT id FROM candidates)\n)"
RECENCY_HEAD = "SELECT id, rank() OVER (ORDER BY moment DESC) AS rank\nFROM ("

#: name: (text in the snapshot registry, its hostile replacement, the text on the line the
#: error must name, how the error must start after "arms-doc: src/engine/arms.py:LINE: ").
HOSTILE_REGISTRIES = {
    "a misspelt keyword": (
        RECENCY_HEAD,
        RECENCY_HEAD.replace("SELECT", "SELEKT"),
        "SELEKT",
        """arm 'recency' makes SQL that SQLite refuses: near "SELEKT": syntax error""",
    ),
    "a bare placeholder": (
        RECENCY_FILTER,
        RECENCY_FILTER.replace("candidates)", "candidates) AND f.size > ?"),
        "f.size > ?",
        "arm 'recency' uses a bare `?`, which the engine never binds",
    ),
    "a named placeholder": (
        RECENCY_FILTER,
        RECENCY_FILTER.replace("candidates)", "candidates) AND f.size > :evil"),
        ":evil",
        "arm 'recency' uses the named placeholder `:evil`, which the engine never binds",
    ),
    "an injected DROP TABLE": (
        RECENCY_FILTER,
        RECENCY_FILTER.replace("candidates)", "candidates))); DROP TABLE files; --"),
        "))); DROP TABLE",
        """arm 'recency' makes SQL that SQLite refuses: near ";": syntax error""",
    ),
    "a DROP TABLE after a complete statement": (
        RECENCY_HEAD,
        "SELECT id, 1 AS rank FROM candidates) SELECT 1; DROP TABLE files; --\nFROM (",
        "SELECT 1; DROP TABLE",
        "arm 'recency' ends the statement early: a `;` leaves `DROP TABLE files; --",
    ),
    "a 401-digit weight": (
        "weight=0.5,",
        f"weight=1{'0' * 400},",
        "weight=1000",
        "arm 'recency' has weight 10000000000000000000000… (401 characters), which is too "
        "large for a number; a weight is a finite number >= 0",
    ),
    "a name with a leading underscore": (
        'name="recency"',
        'name="_recency"',
        'name="_recency"',
        "arm name '_recency' cannot be part of a SQL identifier",
    ),
}


@pytest.mark.parametrize("hostile", list(HOSTILE_REGISTRIES))
def test_a_hostile_registry_fails_the_strict_build_naming_the_arm_and_its_line(
    site: Site, caplog, hostile
):
    old, new, on_line, message = HOSTILE_REGISTRIES[hostile]
    text = site.registry.read_text(encoding="utf-8")
    assert text.count(old) == 1
    text = text.replace(old, new)
    site.registry.write_text(text, encoding="utf-8")
    line = text[: text.index(on_line)].count("\n") + 1

    with pytest.raises(Abort, match="BuildError"):
        site.build()

    assert f"arms-doc: src/engine/arms.py:{line}: {message}" in caplog.text
    assert "Traceback" not in caplog.text
    assert not (site.root / "site" / "reference" / "rrf-arms" / "index.html").exists()


def test_a_duplicate_arm_stops_the_build(site: Site, caplog):
    text = site.registry.read_text(encoding="utf-8")
    site.registry.write_text(text.replace('name="vector"', 'name="fts"'), encoding="utf-8")

    with pytest.raises(Abort, match="BuildError"):
        site.build()

    assert "duplicate arm name 'fts' (first defined on line" in caplog.text


def test_a_quality_warning_fails_the_strict_build(site: Site, caplog):
    text = site.registry.read_text(encoding="utf-8")
    site.registry.write_text(text.replace("weight=0.4,", "weight=0,", 1), encoding="utf-8")
    line = text[: text.index("weight=0.4,")].count("\n") + 1

    with caplog.at_level(logging.WARNING), pytest.raises(Abort, match="1 warnings in strict mode"):
        site.build()

    assert (
        f"arms-doc: src/engine/arms.py:{line}: arm 'salience' has weight 0, so every search "
        "drops it" in caplog.text
    )


def test_a_page_path_that_is_not_markdown_is_refused(site: Site):
    site.configure(
        """
        site_name: t
        theme: mkdocs
        plugins:
          - arms-doc:
              page: reference/arms.html
        """
    )

    with pytest.raises(Abort, match="BuildError"):
        site.build()


def test_an_unknown_link_placeholder_is_refused(site: Site, caplog):
    site.configure(
        """
        site_name: t
        theme: mkdocs
        plugins:
          - arms-doc:
              source_link: https://x/{branch}/{path}
        """
    )

    with pytest.raises(Abort, match="BuildError"):
        site.build()

    assert "unknown placeholder {branch}" in caplog.text


def test_a_missing_registry_names_the_option_to_set(site: Site, caplog):
    site.configure(
        """
        site_name: t
        theme: mkdocs
        plugins:
          - arms-doc:
              registry: src/nowhere.py
        """
    )

    with pytest.raises(Abort, match="BuildError"):
        site.build()

    assert "arms-doc: src/nowhere.py: no such file" in caplog.text


class RecordingServer:
    def __init__(self) -> None:
        self.watched: list[str] = []

    def watch(self, path: str) -> None:
        self.watched.append(path)


def test_serve_watches_the_registry(site: Site):
    config = site.build()
    plugin = config.plugins["arms-doc"]
    assert isinstance(plugin, ArmsDocPlugin)
    server = RecordingServer()

    assert plugin.on_serve(server, config=config, builder=None) is server
    assert server.watched == [str(site.registry.resolve())]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_page_names_the_commit_it_was_built_from(site: Site):
    def git(*args: str) -> str:
        command = ["git", "-C", str(site.root), "-c", "user.name=t", "-c", "user.email=t@e.org"]
        command += ["-c", "commit.gpgsign=false", *args]
        return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()

    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "site")
    commit = git("rev-parse", "--short", "HEAD")
    site.configure(SITE_CONFIG.replace("theme: mkdocs", "theme: mkdocs\nrepo_url: https://x.org/r"))

    markdown = site.markdown(site.build())

    assert f"- Commit: `{commit}`.\n" in markdown
    assert f"(https://x.org/r/blob/{commit}/src/engine/arms.py#L51-L95)" in markdown


def test_a_site_with_content_tabs_gets_a_tab_per_dialect(site: Site):
    site.configure(
        SITE_CONFIG
        + "markdown_extensions:\n  - pymdownx.superfences\n  - pymdownx.tabbed:\n"
        "      alternate_style: true\n"
    )

    site.build()
    html = site.page_html()

    # Four arms, the default scope and two statements: seven tab sets of two.
    assert html.count('class="tabbed-set') == 7
    assert html.count(">SQLite</label>") == html.count(">PostgreSQL</label>") == 7


def test_a_site_without_content_tabs_shows_each_dialect_under_a_heading(site: Site):
    config = site.build()
    markdown, html = site.markdown(config), site.page_html()

    assert '=== "' not in markdown and "===" not in html
    assert html.count("<strong>PostgreSQL</strong>") == 7
