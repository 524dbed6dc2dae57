"""The arms-doc options as `memsift docs` reads them from mkdocs.yml, and the flags over them."""

from __future__ import annotations

from pathlib import Path

import pytest
from arms_doc_testing import src

from arms_doc.site_options import (
    Flags,
    Site,
    SiteConfigError,
    find_config,
    read_site,
    sources_for,
)


def site_of(tmp_path: Path, text: str) -> Site:
    file = tmp_path / "mkdocs.yml"
    file.write_text(src(text), encoding="utf-8")
    return read_site(file, tmp_path)


def test_the_plugins_entry_gives_the_options_relative_to_the_config_folder(tmp_path: Path):
    site = site_of(
        tmp_path,
        """
        site_name: s
        plugins:
          - search
          - arms-doc:
              registry: lib/ranking.py
              variable: RANKERS
              page: ranking.md
              results: bench
        """,
    )

    sources = sources_for(site, Flags(), tmp_path / "elsewhere")

    assert sources.registry == (tmp_path / "lib" / "ranking.py").resolve()
    assert sources.results == (tmp_path / "bench").resolve()
    assert (sources.variable, sources.page) == ("RANKERS", "ranking.md")
    assert sources.written is True


def test_flags_win_over_the_file_and_are_relative_to_the_current_folder(tmp_path: Path):
    site = site_of(tmp_path, "plugins:\n  - arms-doc:\n      registry: lib/ranking.py\n")
    cwd = tmp_path / "here"

    sources = sources_for(site, Flags(registry=Path("mine.py"), page="arms.md"), cwd)

    assert sources.registry == (cwd / "mine.py").resolve()
    assert sources.page == "arms.md"


def test_a_plugin_listed_without_options_or_not_at_all_gets_the_defaults(tmp_path: Path):
    for text in ("plugins:\n  - arms-doc\n", "site_name: s\n", "plugins:\n  arms-doc:\n"):
        sources = sources_for(site_of(tmp_path, text), Flags(), tmp_path)

        assert sources.registry == (tmp_path / "src" / "engine" / "arms.py").resolve()
        assert (sources.page, sources.measured_page) == (
            "reference/rrf-arms.md",
            "reference/measured.md",
        )


def test_measured_page_null_turns_the_measured_page_off_and_a_flag_back_on(tmp_path: Path):
    site = site_of(tmp_path, "plugins:\n  - arms-doc:\n      measured_page: null\n")

    assert sources_for(site, Flags(), tmp_path).measured_page is None
    assert sources_for(site, Flags(measured_page="m.md"), tmp_path).measured_page == "m.md"


def test_no_measured_turns_the_measured_page_off(tmp_path: Path):
    assert sources_for(Site(tmp_path), Flags(no_measured=True), tmp_path).measured_page is None


def test_line_links_follow_repo_url_unless_a_template_is_given(tmp_path: Path):
    site = site_of(tmp_path, "repo_url: https://github.com/o/r/\nplugins:\n  - arms-doc\n")

    linked = sources_for(site, Flags(), tmp_path).link_template
    given = sources_for(site, Flags(source_link="https://x/{path}"), tmp_path).link_template

    assert linked == "https://github.com/o/r/blob/{commit}/{path}#L{start}-L{end}"
    assert given == "https://x/{path}"


def test_tags_only_mkdocs_resolves_do_not_stop_the_reading(tmp_path: Path):
    site = site_of(
        tmp_path,
        """
        site_name: !ENV [SITE_NAME, "s"]
        markdown_extensions:
          - pymdownx.emoji:
              emoji_index: !!python/name:material.extensions.emoji.twemoji
        plugins:
          - arms-doc:
              page: arms.md
        """,
    )

    assert site.options == {"page": "arms.md"}


def test_an_inherited_file_gives_what_the_child_does_not_set(tmp_path: Path):
    (tmp_path / "base.yml").write_text(
        "repo_url: https://github.com/o/r\nplugins:\n  - arms-doc:\n      page: a.md\n",
        encoding="utf-8",
    )

    site = site_of(tmp_path, "INHERIT: base.yml\nsite_name: child\n")

    assert site.options == {"page": "a.md"} and site.repo_url == "https://github.com/o/r"


def test_an_unknown_option_is_refused_naming_the_options(tmp_path: Path):
    with pytest.raises(SiteConfigError, match=r"arms-doc has no option 'pages'; its options are "):
        site_of(tmp_path, "plugins:\n  - arms-doc:\n      pages: x.md\n")


def test_an_option_that_is_not_a_string_is_refused(tmp_path: Path):
    with pytest.raises(SiteConfigError, match=r"arms-doc option 'page' must be a string$"):
        site_of(tmp_path, "plugins:\n  - arms-doc:\n      page: [a, b]\n")


def test_a_config_file_that_is_not_yaml_names_its_line(tmp_path: Path):
    with pytest.raises(SiteConfigError, match=r"mkdocs.yml:2: mapping values are not allowed"):
        site_of(tmp_path, "site_name: s\nnav: a: b\n")


def test_the_config_is_mkdocs_yml_in_the_current_folder_when_none_is_named(tmp_path: Path):
    assert find_config(None, tmp_path) is None
    (tmp_path / "mkdocs.yml").write_text("site_name: s\n", encoding="utf-8")

    assert find_config(None, tmp_path) == tmp_path / "mkdocs.yml"


def test_a_named_config_file_that_does_not_exist_is_refused(tmp_path: Path):
    with pytest.raises(SiteConfigError, match="no such config file"):
        find_config(tmp_path / "site.yml", tmp_path)
