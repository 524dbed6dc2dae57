"""The Python examples of README.md and the getting-started page, run as a reader would run
them (on a copy of the bundled example store): each prints the memory it is meant to find."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXPECTED = "episodes/2026-07-14-weekly-release-cadence-decision.md"


def first_python_block(page: Path) -> str:
    found = re.search(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.DOTALL)
    assert found, f"{page.name} has no python block"
    return found.group(1)


@pytest.mark.parametrize("page", ["README.md", "docs/getting-started.md"])
def test_the_python_example_prints_the_memory_it_searches_for(page, tmp_path, monkeypatch):
    shutil.copytree(
        REPO / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns(".memsift")
    )
    monkeypatch.chdir(tmp_path)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(first_python_block(REPO / page), page, "exec"), {})
    first_line = printed.getvalue().splitlines()[0]
    assert first_line.startswith(EXPECTED + " ")
