"""Every promise on the Reliability page is kept by a test that exists.

A promise names the test files that check it (``test_keys.py``, ``contract/test_x.py`` or
``tests/arms_doc/test_y.py``). A promise naming none is a claim nobody checks, and a name whose
file was renamed or deleted points a reader at nothing; either fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "reliability.md"
TESTS = REPO / "tests"
TEST_FILE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*test_\w+\.py)\b")


def promises(text: str) -> list[str]:
    """Each top-level bullet of the page, its indented continuation lines joined to it."""
    found: list[str] = []
    open_bullet = False
    for line in text.splitlines():
        if line.startswith("- "):
            found.append(line[2:].strip())
            open_bullet = True
        elif open_bullet and line.startswith("  ") and line.strip():
            found[-1] += " " + line.strip()
        else:
            open_bullet = False
    return found


def named_test_files(promise: str) -> list[str]:
    return TEST_FILE.findall(promise)


def title(promise: str) -> str:
    bold = re.match(r"\*\*(.+?)\*\*", promise)
    return bold.group(1) if bold else promise[:60]


def resolves(name: str) -> bool:
    """Whether a named file exists: as a path from the repository's root, or as the tail of a
    path under tests/ (a bare ``test_keys.py`` is found wherever it lives)."""
    if (REPO / name).is_file():
        return True
    candidates = TESTS.rglob(name.split("/")[-1])
    return any(path.relative_to(REPO).as_posix().endswith("/" + name) for path in candidates)


PROMISES = promises(PAGE.read_text(encoding="utf-8"))
NAMED = sorted({name for promise in PROMISES for name in named_test_files(promise)})


def test_the_page_holds_promises():
    assert len(PROMISES) >= 10


@pytest.mark.parametrize("promise", PROMISES, ids=title)
def test_every_promise_names_a_test_file(promise):
    assert named_test_files(promise), f"{title(promise)!r} names no test_*.py file"


@pytest.mark.parametrize("name", NAMED)
def test_every_named_test_file_exists(name):
    assert resolves(name), f"docs/reliability.md names {name}, which is not under tests/"


def test_a_promise_without_a_test_file_is_found():
    page = "- **Checked.** By a test (`test_keys.py`).\n- **Unchecked.** Trust us.\n"

    assert [named_test_files(p) for p in promises(page)] == [["test_keys.py"], []]


def test_a_missing_file_does_not_resolve_and_a_nested_one_does():
    assert resolves("contract/test_contract_state.py")
    assert resolves("tests/engine/test_keys.py")
    assert not resolves("test_no_such_promise_checker.py")
    assert not resolves("arms_doc/test_keys.py")
