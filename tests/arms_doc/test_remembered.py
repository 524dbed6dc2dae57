"""Both pages are rendered once for the same sources, and again whenever the registry, a results
file, the code or the commit changes."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from arms_doc_testing import LATENCY_FIXTURE, QUALITY_FIXTURE, SNAPSHOT_REGISTRY

from arms_doc import loaded, pages, provenance, remembered
from arms_doc.pages import Sources, render_pages
from arms_doc.reader import RegistryError


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The registry of every page rendered afresh from here on."""
    seen: list[str] = []
    fresh = pages.fresh_pages

    def counting(sources, registry, git):  # type: ignore[no-untyped-def]
        seen.append(sources.registry.name)
        return fresh(sources, registry, git)

    monkeypatch.setattr(pages, "fresh_pages", counting)
    return seen


@pytest.fixture
def sources(temp_folder: Path) -> Sources:
    """src/engine/arms.py (the snapshot) in a package, and a results folder with quality.json."""
    root = temp_folder / "project"
    package = root / "src" / "engine"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    shutil.copyfile(SNAPSHOT_REGISTRY, package / "arms.py")
    (root / "results").mkdir()
    shutil.copyfile(QUALITY_FIXTURE, root / "results" / "quality.json")
    return Sources(root=root, registry=package / "arms.py", results=root / "results").check()


def test_the_same_sources_render_once_in_a_process(sources: Sources, renders: list[str]):
    first = render_pages(sources)
    again = render_pages(sources)

    assert renders == ["arms.py"]
    assert (again.arms, again.measured, again.warnings, again.notes) == (
        first.arms,
        first.measured,
        first.warnings,
        first.notes,
    )
    assert again.registry == first.registry


def test_a_new_process_finds_the_pages_in_the_private_cache_folder(
    sources: Sources, renders: list[str], temp_folder: Path
):
    first = render_pages(sources)
    remembered.forget_all()  # as a new process starts

    again = render_pages(sources)

    assert renders == ["arms.py"]
    assert (again.arms, again.measured, again.notes) == (first.arms, first.measured, first.notes)
    (stored,) = temp_folder.glob(f"_jinja2-cache-{os.getuid()}/{remembered.PREFIX}*")
    assert stored.suffix == ".json"


def test_warnings_and_notes_are_told_again_by_a_build_that_remembers(
    sources: Sources, renders: list[str]
):
    first = render_pages(sources)
    remembered.forget_all()

    again = render_pages(sources)

    assert first.notes  # latency.json and the others do not exist
    assert (again.warnings, again.notes) == (first.warnings, first.notes)


def test_an_edited_registry_renders_again(sources: Sources, renders: list[str]):
    render_pages(sources)
    text = sources.registry.read_text(encoding="utf-8")
    sources.registry.write_text(text.replace("weight=1.0", "weight=2.0", 1), encoding="utf-8")

    render_pages(sources)

    assert len(renders) == 2


def test_an_edited_or_new_results_file_renders_again(sources: Sources, renders: list[str]):
    render_pages(sources)
    quality = sources.results / "quality.json"
    quality.write_text(quality.read_text(encoding="utf-8") + " ", encoding="utf-8")
    render_pages(sources)
    shutil.copyfile(LATENCY_FIXTURE, sources.results / "latency.json")
    render_pages(sources)

    assert len(renders) == 3


def test_a_changed_module_in_the_source_tree_renders_again(sources: Sources, renders: list[str]):
    render_pages(sources)
    module = sources.registry.parent / "rules.py"
    module.write_text("def validate():\n    pass\n", encoding="utf-8")

    render_pages(sources)

    assert len(renders) == 2


def test_another_commit_renders_again(
    sources: Sources, renders: list[str], monkeypatch: pytest.MonkeyPatch
):
    render_pages(sources)
    monkeypatch.setattr(
        provenance, "git_info", lambda file: provenance.GitInfo("abc1234", "arms.py", False)
    )

    render_pages(sources)

    assert len(renders) == 2


def test_other_options_render_again(sources: Sources, renders: list[str]):
    from dataclasses import replace

    render_pages(sources)
    render_pages(replace(sources, tabs=True))

    assert len(renders) == 2


def test_another_jinja_renders_no_page_again(
    sources: Sources, renders: list[str], monkeypatch: pytest.MonkeyPatch
):
    """Both pages are written in plain Python: Jinja, whose folder the cache borrows, makes no
    part of them, so upgrading it is no reason to render them afresh."""
    import jinja2

    render_pages(sources)
    monkeypatch.setattr(jinja2, "__version__", "99.0", raising=False)

    render_pages(sources)

    assert renders == ["arms.py"]


def test_a_registry_that_cannot_be_read_stops_every_build(sources: Sources, renders: list[str]):
    render_pages(sources)
    sources.registry.write_text("ARMS = (\n", encoding="utf-8")

    for _ in range(2):
        with pytest.raises(RegistryError):
            render_pages(sources)


@pytest.fixture
def imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A package standing for the imported arms_doc and engine: code this process has loaded,
    which an edit on disk does not change in memory."""
    package = tmp_path / "imported" / "engine"
    package.mkdir(parents=True)
    (package / "assemble.py").write_text("RRF_K = 60\n", encoding="utf-8")
    folders = remembered.code_folders

    monkeypatch.setattr(loaded, "imported_folders", lambda: [package])
    monkeypatch.setattr(remembered, "code_folders", lambda root: [*folders(root), package])
    return package


def test_pages_rendered_after_the_loaded_code_changed_on_disk_are_not_kept_for_later_builds(
    sources: Sources, renders: list[str], imported: Path
):
    # mkdocs serve: a rebuild after the engine was edited renders with the code it imported at
    # start; stored under the edited code's key, a later `mkdocs build` would show that page.
    render_pages(sources)
    (imported / "assemble.py").write_text("RRF_K = 61\n", encoding="utf-8")
    render_pages(sources)  # the serve process: new key, old code in memory

    remembered.forget_all()  # a new process, which imports the edited code
    render_pages(sources)

    assert len(renders) == 3


def test_a_process_whose_code_is_as_loaded_keeps_its_pages(
    sources: Sources, renders: list[str], imported: Path
):
    render_pages(sources)
    remembered.forget_all()
    render_pages(sources)

    assert len(renders) == 1


def test_pages_render_when_there_is_no_usable_temporary_directory(
    sources: Sources, renders: list[str], temp_folder: Path, monkeypatch: pytest.MonkeyPatch
):
    # Not a folder at all (a read-only one cannot be tested as root): Jinja cannot make its
    # cache folder there, so nothing is remembered across processes, and the build goes on.
    blocker = temp_folder / "not-a-folder"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setattr(tempfile, "tempdir", str(blocker / "tmp"))

    first = render_pages(sources)
    remembered.forget_all()
    again = render_pages(sources)

    assert first.arms == again.arms and len(renders) == 2


def test_a_process_that_recalled_its_first_pages_still_notices_its_code_changed(
    sources: Sources, renders: list[str], imported: Path
):
    render_pages(sources)
    remembered.forget_all()
    render_pages(sources)  # mkdocs serve starts: the pages from the cache folder
    (imported / "assemble.py").write_text("RRF_K = 61\n", encoding="utf-8")
    render_pages(sources)  # a rebuild after the edit, with the code imported at start

    remembered.forget_all()
    render_pages(sources)

    assert len(renders) == 3


def test_pages_rendered_afresh_ask_git_about_the_registry_once(
    sources: Sources, monkeypatch: pytest.MonkeyPatch
):
    from arms_doc import page

    asked: list[str] = []

    def git_info(file: Path) -> provenance.GitInfo:
        asked.append(file.name)
        return provenance.GitInfo("abc1234", "src/engine/arms.py", False)

    monkeypatch.setattr(provenance, "git_info", git_info)
    monkeypatch.setattr(page, "git_info", git_info)

    rendered = render_pages(sources)

    assert asked == ["arms.py"]
    assert "abc1234" in rendered.arms
