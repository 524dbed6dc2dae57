"""`memsift docs write` and `memsift docs check` as a site's maintainer and its CI drive them:
the pages land where mkdocs.yml says, a committed page out of step with the registry fails the
check naming what changed, and a file someone else wrote is never replaced."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.cli import cli

SNAPSHOT = Path(__file__).resolve().parents[1] / "arms_doc" / "fixtures" / "registry_snapshot.py"
RESULTS = SNAPSHOT.parent
ARMS_PAGE = Path("docs/reference/rrf-arms.md")
MEASURED_PAGE = Path("docs/reference/measured.md")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A site folder with mkdocs.yml, docs/ and the registry snapshot, as the current folder."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    root = tmp_path / "site"
    (root / "src" / "engine").mkdir(parents=True)
    shutil.copyfile(SNAPSHOT, root / "src" / "engine" / "arms.py")
    (root / "docs").mkdir()
    (root / "docs" / "index.md").write_text("# Home\n", encoding="utf-8")
    (root / "mkdocs.yml").write_text("site_name: s\nplugins:\n  - arms-doc\n", encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def docs(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["docs", *args], catch_exceptions=False)


def edit_registry(site: Path, old: str, new: str) -> None:
    registry = site / "src" / "engine" / "arms.py"
    text = registry.read_text(encoding="utf-8")
    assert old in text
    registry.write_text(text.replace(old, new, 1), encoding="utf-8")


def add_results(site: Path) -> None:
    """A results folder with quality.json stamped with the registry's ranking."""
    import json

    from arms_doc.reader import read_registry
    from engine.measure.fingerprint import ranking
    from engine.measure.typed_json import dump

    document = json.loads((RESULTS / "quality.json").read_text(encoding="utf-8"))
    document["stamp"]["ranking"] = dump(ranking(read_registry(site / "src/engine/arms.py").arms))
    (site / "benchmarks" / "results").mkdir(parents=True)
    (site / "benchmarks" / "results" / "quality.json").write_text(json.dumps(document))


# --------------------------------------------------------------------------- write


def test_write_puts_the_arms_page_where_the_plugin_would_serve_it(site: Path):
    result = docs("write", "docs")

    assert result.exit_code == 0, result.output
    assert result.stdout == f"wrote {ARMS_PAGE.as_posix()}\n"
    page = (site / ARMS_PAGE).read_text(encoding="utf-8")
    assert page.startswith("# Ranking arms\n\n<!-- Written by memsift docs write from ")
    assert "| [recency](#recency) | 0.5 |" in page


def test_write_adds_the_measured_page_when_there_are_results(site: Path):
    add_results(site)

    result = docs("write", "docs")

    assert result.stdout.splitlines() == [f"wrote {ARMS_PAGE}", f"wrote {MEASURED_PAGE}"]
    assert (site / MEASURED_PAGE).read_text(encoding="utf-8").startswith("# Measured\n")


def test_writing_again_without_a_change_leaves_the_files_alone(site: Path):
    docs("write", "docs")

    assert docs("write", "docs").stdout == f"unchanged {ARMS_PAGE}\n"


def test_the_pages_paths_come_from_mkdocs_yml(site: Path):
    (site / "mkdocs.yml").write_text(
        "site_name: s\nplugins:\n  - arms-doc:\n      page: ranking/arms.md\n", encoding="utf-8"
    )

    docs("write", "docs")

    assert (site / "docs" / "ranking" / "arms.md").is_file()
    assert not (site / ARMS_PAGE).exists()


def test_plain_pages_have_no_content_tabs_unless_asked(site: Path):
    docs("write", "docs")
    plain = (site / ARMS_PAGE).read_text(encoding="utf-8")
    docs("write", "docs", "--tabs")
    tabbed = (site / ARMS_PAGE).read_text(encoding="utf-8")

    assert '=== "' not in plain and "**PostgreSQL**" in plain
    assert '=== "PostgreSQL"' in tabbed


def test_write_never_replaces_a_page_someone_wrote(site: Path):
    (site / ARMS_PAGE).parent.mkdir()
    (site / ARMS_PAGE).write_text("# My own ranking notes\n", encoding="utf-8")

    result = docs("write", "docs")

    assert result.exit_code == 2
    assert result.stderr == (
        f"memsift: {ARMS_PAGE} exists and was not written by memsift docs write (it has no "
        "'<!-- Written by memsift docs write' comment near its top), so it is left as it is; "
        "move it away, choose another path, or pass --force to replace it\n"
    )
    assert (site / ARMS_PAGE).read_text(encoding="utf-8") == "# My own ranking notes\n"


def test_write_force_replaces_a_page_someone_wrote(site: Path):
    (site / ARMS_PAGE).parent.mkdir()
    (site / ARMS_PAGE).write_text("# My own ranking notes\n", encoding="utf-8")

    assert docs("write", "docs", "--force").exit_code == 0
    assert "<!-- Written by memsift docs write" in (site / ARMS_PAGE).read_text(encoding="utf-8")


def test_a_broken_registry_is_one_line_naming_file_and_line(site: Path):
    edit_registry(site, "weight=0.5", "weight=HALF")

    result = docs("write", "docs")

    assert result.exit_code == 2
    assert re.fullmatch(
        r"memsift: src/engine/arms\.py:\d+: field 'weight' is `HALF`, not a number literal;.*\n",
        result.stderr,
    )
    assert not (site / ARMS_PAGE).exists()


def test_an_unknown_option_in_mkdocs_yml_is_bad_input(site: Path):
    (site / "mkdocs.yml").write_text("plugins:\n  - arms-doc:\n      pgae: x.md\n")

    result = docs("write", "docs")

    assert result.exit_code == 2
    assert "arms-doc has no option 'pgae'" in result.stderr


def test_a_docs_folder_that_does_not_exist_is_bad_input(site: Path):
    result = docs("write", "site-docs")

    assert result.exit_code == 2 and "'site-docs' does not exist" in result.stderr


def test_docs_commands_work_on_a_site_and_take_no_store():
    assert "--store" not in docs("write", "--help").stdout
    assert "--store" not in docs("check", "--help").stdout


# --------------------------------------------------------------------------- check


def test_check_passes_on_pages_just_written(site: Path):
    add_results(site)
    docs("write", "docs")

    result = docs("check", "docs")

    assert result.exit_code == 0
    assert result.stdout == f"up to date: {ARMS_PAGE}, {MEASURED_PAGE}\n"


def test_check_fails_naming_the_page_and_sections_a_weight_change_touched(site: Path):
    docs("write", "docs")
    edit_registry(site, "weight=0.5", "weight=0.7")

    result = docs("check", "docs")

    assert result.exit_code == 1
    first, advice = result.stderr.splitlines()
    assert first.startswith(
        f"memsift docs check: {ARMS_PAGE} differs from what the registry makes now "
        "(changed: Ranking arms; The assembled statement › "
    )
    assert advice == (
        "memsift docs check: run `memsift docs write docs` with the same options to write the "
        "pages again"
    )
    assert "-| [recency](#recency) | 0.5 | no | no | no | no |" in result.stdout.splitlines()
    assert "+| [recency](#recency) | 0.7 | no | no | no | no |" in result.stdout.splitlines()


def test_check_of_a_page_someone_wrote_advises_the_write_that_replaces_it(site: Path):
    # the advice was the write without --force, which refuses a page it did not write
    (site / ARMS_PAGE).parent.mkdir()
    (site / ARMS_PAGE).write_text("# My own ranking notes\n", encoding="utf-8")

    result = docs("check", "docs")

    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        "memsift docs check: run `memsift docs write docs --force` with the same options to "
        "write the pages again (--force: a page at their path was not written by it)"
    )


def test_check_names_the_arm_whose_sql_changed(site: Path):
    docs("write", "docs")
    edit_registry(site, "ORDER BY score, path", "ORDER BY score DESC, path")

    result = docs("check", "docs")

    assert result.exit_code == 1
    assert "The arms › fts" in result.stderr.splitlines()[0]


def test_check_fails_when_a_page_is_missing(site: Path):
    result = docs("check", "docs")

    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == f"memsift docs check: {ARMS_PAGE} does not exist"


def test_a_prose_typo_fixed_in_the_registry_fails_the_check_too(site: Path):
    docs("write", "docs")
    edit_registry(site, "The recency arm prefers", "The recency arm favours")

    result = docs("check", "docs")

    assert result.exit_code == 1 and "The arms › recency" in result.stderr


def test_a_measured_page_whose_results_are_gone_fails_the_check(site: Path):
    add_results(site)
    docs("write", "docs")
    shutil.rmtree(site / "benchmarks")

    written = docs("write", "docs")
    checked = docs("check", "docs")

    assert "there are no results now, so no Measured page is made; delete it" in written.stderr
    assert checked.exit_code == 1
    assert f"{MEASURED_PAGE} is a written Measured page" in checked.stderr
    assert (site / MEASURED_PAGE).is_file()  # named, never deleted


@pytest.mark.parametrize("off", ["--no-measured", "measured_page: null"])
def test_a_measured_page_turned_off_since_it_was_written_fails_the_check(site: Path, off: str):
    # the results are still there: only the page is turned off, and a written one left behind
    # would be published stale (write and check said nothing of it)
    add_results(site)
    docs("write", "docs")
    flags = [off] if off.startswith("--") else []
    if not flags:
        (site / "mkdocs.yml").write_text(
            "site_name: s\nplugins:\n  - arms-doc:\n      measured_page: null\n",
            encoding="utf-8",
        )

    written = docs("write", "docs", *flags)
    checked = docs("check", "docs", *flags)

    assert (
        "the Measured page is turned off (measured_page: null, or --no-measured), so no Measured "
        "page is made; delete it" in written.stderr
    )
    assert checked.exit_code == 1
    assert f"{MEASURED_PAGE} is a written Measured page" in checked.stderr
    assert (site / MEASURED_PAGE).is_file()  # named, never deleted


def test_warnings_are_printed_and_fail_the_check_only_when_strict(site: Path):
    edit_registry(site, "weight=0.5", "weight=0")
    docs("write", "docs")

    relaxed, strict = docs("check", "docs"), docs("check", "docs", "--strict")

    assert relaxed.exit_code == 0
    assert "memsift: warning: src/engine/arms.py:" in relaxed.stderr
    assert strict.exit_code == 1
    assert strict.stderr.splitlines()[-1] == "memsift docs check: 1 warning(s) in strict mode"
