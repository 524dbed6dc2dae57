"""Provenance: source links and what git can tell, failing soft."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from arms_doc.provenance import check_link_template, git_info, line_link, link_template


def test_source_link_option_wins_over_repo_url():
    assert link_template("https://x/{path}", "https://github.com/o/r") == "https://x/{path}"


def test_repo_url_gives_github_style_links():
    template = link_template(None, "https://github.com/o/r/")

    assert template == "https://github.com/o/r/blob/{commit}/{path}#L{start}-L{end}"


def test_no_template_without_source_link_or_repo_url():
    assert link_template(None, None) is None


def test_unknown_commit_links_to_head():
    link = line_link("{commit}:{path}:{start}-{end}", commit=None, path="a.py", start=3, end=9)

    assert link == "HEAD:a.py:3-9"


def test_no_template_means_no_link():
    assert line_link(None, commit="abc", path="a.py", start=1, end=2) == ""


def test_template_with_an_unknown_placeholder_is_refused():
    assert check_link_template("https://x/{branch}/{path}") == (
        "unknown placeholder {branch}; use {commit}, {path}, {start}, {end}"
    )


def test_template_with_positional_fields_is_refused():
    assert "not a valid format string" in check_link_template("https://x/{}")


def test_outside_a_work_tree_git_tells_nothing(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    (tmp_path / "arms.py").write_text("ARMS = ()\n", encoding="utf-8")

    assert git_info(tmp_path / "arms.py") is None


def test_without_git_installed_git_tells_nothing(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))

    assert git_info(tmp_path / "arms.py") is None


needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(folder: Path, *args: str) -> str:
    command = ["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    command += ["-c", "commit.gpgsign=false", *args]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "arms.py").write_text("ARMS = ()\n", encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "registry")
    return root


@needs_git
def test_in_a_work_tree_git_names_the_commit_and_the_path(repo: Path):
    info = git_info(repo / "src" / "arms.py")

    assert info is not None
    assert info.commit == git(repo, "rev-parse", "--short", "HEAD")
    assert (info.path, info.dirty) == ("src/arms.py", False)


@needs_git
def test_an_edited_registry_is_dirty(repo: Path):
    (repo / "src" / "arms.py").write_text("ARMS = ()  # edited\n", encoding="utf-8")

    info = git_info(repo / "src" / "arms.py")

    assert info is not None and info.dirty
