"""Fixtures shared by the plugin's tests."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from arms_doc import remembered, verdicts
from arms_doc.render import environment


@pytest.fixture
def temp_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The test's own temporary directory (so the plugin's private cache folder is in it),
    Jinja's environment made afresh there, nothing remembered in this process, and no git
    repository above it."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))

    def forget() -> None:
        environment.cache_clear()
        remembered.forget_all()
        verdicts.forget_all()

    forget()
    yield tmp_path
    forget()
