"""What docs_build.py compares and checks, and how build_site.py leaves the plugin out."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from build_site import overrides, without_pages
from docs_build import compare, environment, runs, targets

from engine.measure.results_schema import BuildRuns, LoadWindow, SiteBuilds


def site(with_s: list[float], without_s: list[float], files_s: list[float]) -> SiteBuilds:
    built = [runs(times, times) for times in (with_s, without_s, files_s)]
    return SiteBuilds(
        name="project",
        description="d",
        pages=20,
        with_plugin=built[0],
        without_plugin=built[1],
        pages_as_files=built[2],
        versus_without=compare(built[0], built[1]),
        versus_files=compare(built[0], built[2]),
        load_average=LoadWindow(before=(0.1,), after=(0.1,)),
    )


def test_the_ratio_is_the_median_of_each_rounds_ratio_not_of_the_medians():
    with_plugin = BuildRuns((2.0, 1.0, 3.3), (2.0, 1.0, 3.3), 2.0, 2.0)
    without = BuildRuns((1.0, 1.0, 3.0), (1.0, 1.0, 3.0), 1.0, 1.0)

    comparison = compare(with_plugin, without)

    assert comparison.wall_ratios == (2.0, 1.0, 1.1)
    assert comparison.wall_ratio == 1.1  # the medians' ratio would be 2.0
    assert comparison.wall_extra_s == 0.3


def test_the_targets_hold_the_project_site_to_115_against_both_other_builds():
    found = targets((site([1.2, 1.2, 1.2], [1.0, 1.0, 1.0], [1.1, 1.1, 1.1]),))

    assert [(t.name.split("÷ ")[1], t.measured, t.met) for t in found] == [
        ("without the plugin, wall", 1.2, False),
        ("without the plugin, CPU", 1.2, False),
        ("with its pages as files, wall", 1.0909, True),
        ("with its pages as files, CPU", 1.0909, True),
    ]
    assert {t.target for t in found} == {"<= 1.15"}


def test_a_build_with_nothing_remembered_is_held_to_115_against_a_build_without():
    project = site([1.2, 1.2, 1.2], [1.0, 1.0, 1.0], [1.1, 1.1, 1.1])
    cold = runs([1.3, 1.3, 1.3], [1.3, 1.3, 1.3])
    project = replace(
        project,
        with_plugin_cold=cold,
        cold_versus_without=compare(cold, project.without_plugin),
    )

    found = targets((project,))

    assert [(t.name, t.measured, t.met) for t in found[4:]] == [
        (
            "project site: with the plugin, nothing remembered ÷ without the plugin, wall",
            1.3,
            False,
        ),
        ("project site: with the plugin, nothing remembered ÷ without the plugin, CPU", 1.3, False),
    ]


def test_builds_write_bytecode_and_a_cold_one_gets_its_own_temporary_directory(
    tmp_path: Path, monkeypatch
):
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")

    warm, cold = environment(None), environment(None, tmp_path)

    assert "PYTHONDONTWRITEBYTECODE" not in warm and "PYTHONDONTWRITEBYTECODE" not in cold
    assert cold["TMPDIR"] == str(tmp_path)


def test_without_the_project_site_there_is_no_target():
    assert targets((replace(site([1.0], [1.0], [1.0]), name="small"),)) == ()


def test_without_the_plugin_the_nav_loses_only_the_generated_pages():
    nav = [
        {"Home": "index.md"},
        {"Reference": [{"Ranking arms": "reference/rrf-arms.md"}, "reference/cli.md"]},
        "reference/measured.md",
    ]

    assert without_pages(nav, {"reference/rrf-arms.md", "reference/measured.md"}) == [
        {"Home": "index.md"},
        {"Reference": ["reference/cli.md"]},
    ]


def test_without_the_plugin_the_other_plugins_stay(tmp_path: Path):
    config = tmp_path / "mkdocs.yml"
    config.write_text(
        "site_name: t\nplugins:\n  - search\n  - arms-doc:\n      page: a.md\n"
        "nav:\n  - a.md\n  - b.md\n",
        encoding="utf-8",
    )

    assert overrides(config, True, {"a.md"}) == {}
    assert overrides(config, False, {"a.md"}) == {"plugins": ["search"], "nav": ["b.md"]}


def test_a_config_that_lists_no_plugins_keeps_mkdocs_default_search(tmp_path: Path):
    config = tmp_path / "mkdocs.yml"
    config.write_text("site_name: t\n", encoding="utf-8")

    assert overrides(config, False, set()) == {"plugins": ["search"]}
