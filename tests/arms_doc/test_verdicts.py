"""A registry whose statements all prepared is not prepared again by the next build, in the
same process or a new one; any change to a statement prepares again, and a refusal is never
remembered."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from arms_doc_testing import ENGINE_REGISTRY, src
from test_prepare import REGISTRY

from arms_doc import prepare, verdicts
from arms_doc.reader import RegistryError, parse_registry, read_registry
from engine.arms import ARMS


@pytest.fixture
def prepared(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement SQLite is asked to prepare, from here on."""
    seen: list[str] = []
    judge = prepare.statement_problem

    def counting(index, sql, bound):  # type: ignore[no-untyped-def]
        seen.append(sql)
        return judge(index, sql, bound)

    monkeypatch.setattr(prepare, "statement_problem", counting)
    return seen


def check(text: str) -> None:
    prepare.check_statements(parse_registry(src(text), "arms.py"))


def markers(folder: Path) -> list[Path]:
    return sorted(folder.rglob(f"{verdicts.PREFIX}*"))


def test_a_registry_that_prepared_is_not_prepared_again_in_the_same_process(
    temp_folder: Path, prepared: list[str]
):
    check(REGISTRY)
    first = len(prepared)
    check(REGISTRY)

    assert first == 6  # three combinations of two arms, two scopes each
    assert len(prepared) == first


def test_a_new_process_finds_the_verdict_in_the_private_cache_folder(
    temp_folder: Path, prepared: list[str]
):
    check(REGISTRY)
    verdicts.forget_all()  # as a new process starts
    prepared.clear()

    check(REGISTRY)

    assert prepared == []
    (marker,) = markers(temp_folder)
    assert marker.parent.name == f"_jinja2-cache-{os.getuid()}"


def test_a_changed_statement_is_prepared_again_and_replaces_the_old_verdict(
    temp_folder: Path, prepared: list[str]
):
    check(REGISTRY)
    (old,) = markers(temp_folder)
    prepared.clear()

    check(REGISTRY.replace("LIMIT ?2\n", "LIMIT ?2 + 1\n"))

    assert len(prepared) == 6
    assert [marker.name for marker in markers(temp_folder)] != [old.name]
    assert len(markers(temp_folder)) == 1


def test_a_refused_registry_is_refused_again_on_the_next_build(
    temp_folder: Path, prepared: list[str]
):
    broken = REGISTRY.replace("FROM files AS f\n", "FROM filez AS f\n")
    for _ in range(2):
        with pytest.raises(RegistryError, match="no such table: filez"):
            check(broken)

    assert markers(temp_folder) == []


def test_another_sqlite_or_schema_is_another_verdict(
    temp_folder: Path, prepared: list[str], monkeypatch: pytest.MonkeyPatch
):
    from engine.sqlite.prepare import EmptyIndex

    check(REGISTRY)
    identity = EmptyIndex.identity
    monkeypatch.setattr(EmptyIndex, "identity", lambda self: identity(self) + "\nanother")
    prepared.clear()

    check(REGISTRY)

    assert len(prepared) == 6


def test_without_a_private_folder_every_build_prepares(temp_folder: Path, prepared: list[str]):
    (temp_folder / f"_jinja2-cache-{os.getuid()}").write_text("not a folder", encoding="utf-8")
    check(REGISTRY)
    verdicts.forget_all()
    prepared.clear()

    check(REGISTRY)

    assert len(prepared) == 6


def test_a_verdict_reached_after_the_loaded_code_changed_on_disk_is_not_kept_for_later_builds(
    temp_folder: Path, prepared: list[str], monkeypatch: pytest.MonkeyPatch
):
    # mkdocs serve: the rules in memory are the ones imported at start, the key is made of
    # the files' text now; a pass kept under that key would spare the edited rules' check.
    from arms_doc import loaded, remembered

    package = temp_folder / "imported" / "arms_doc"
    package.mkdir(parents=True)
    (package / "prepare.py").write_text("RULES = 1\n", encoding="utf-8")
    monkeypatch.setattr(loaded, "imported_folders", lambda: [package])
    remembered.forget_all()
    assert loaded.code_as_loaded()  # the process's first build
    (package / "prepare.py").write_text("RULES = 2\n", encoding="utf-8")
    check(REGISTRY)

    verdicts.forget_all()  # a new process, which imports the edited rules
    remembered.forget_all()
    check(REGISTRY)

    assert len(prepared) == 12
    remembered.forget_all()


def test_a_sound_registry_has_only_the_covering_statements_prepared(
    temp_folder: Path, prepared: list[str]
):
    prepare.check_statements(read_registry(ENGINE_REGISTRY, display="src/engine/arms.py"))

    # Each arm alone and all together, two scopes each: 12 for five arms, not 62.
    assert len(prepared) == 2 * len(list(prepare.covering(ARMS)))
