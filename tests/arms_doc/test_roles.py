"""Sphinx roles in a registry's docstring and prose reach the page as code, never as raw role
text; one the page cannot render is a finding at its line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from arms_doc_testing import SNAPSHOT_REGISTRY

from arms_doc.page import generate_page
from arms_doc.roles import roles_to_code


def no_unknown(line: int, role: str) -> None:
    raise AssertionError(f"unexpected unknown role {role} on line {line}")


@pytest.mark.parametrize(
    ("text", "page"),
    [
        ("see :mod:`engine.ranking.assemble`", "see `engine.ranking.assemble`"),
        (":data:`engine.ranking.contract.INPUTS`", "`engine.ranking.contract.INPUTS`"),
        (":py:func:`engine.ranking.arm_rules.validate`", "`engine.ranking.arm_rules.validate`"),
        (":func:`~engine.ranking.arm_rules.validate`", "`validate`"),
        (":class:`the arm <engine.arms.Arm>`", "`the arm`"),
        ("``{scope}`` and `code` stay", "``{scope}`` and `code` stay"),
    ],
)
def test_known_roles_become_code_spans(text, page):
    assert roles_to_code(text, no_unknown) == page


def test_an_unknown_role_is_code_and_reported_with_its_line():
    seen: list[tuple[int, str]] = []
    text = "first line\nsecond :issue:`42` here"
    assert roles_to_code(text, lambda line, role: seen.append((line, role))) == (
        "first line\nsecond `42` here"
    )
    assert seen == [(1, ":issue:`42`")]


def registry_with(tmp_path: Path, old: str, new: str) -> Path:
    registry = tmp_path / "arms.py"
    shutil.copyfile(SNAPSHOT_REGISTRY, registry)
    text = registry.read_text(encoding="utf-8")
    assert old in text
    registry.write_text(text.replace(old, new, 1), encoding="utf-8")
    return registry


def test_the_page_shows_no_role_text_and_names_an_unknown_role_at_its_line(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    registry = registry_with(
        tmp_path,
        "The semantic arm finds memories",
        "The :mod:`engine.knn` and :gh:`7` semantic arm finds memories",
    )
    page = generate_page(registry, display="arms.py")
    assert ":mod:" not in page.markdown and ":gh:" not in page.markdown
    assert "The `engine.knn` and `7` semantic arm finds memories" in page.markdown
    line = next(
        n
        for n, text in enumerate(registry.read_text(encoding="utf-8").splitlines(), 1)
        if ":gh:" in text
    )
    reported = [f for f in page.findings if ":gh:" in f.message]
    assert [(f.line, f.message.split(" is not")[0]) for f in reported] == [
        (line, "the role :gh:`7`")
    ]
