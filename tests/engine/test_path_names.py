"""Paths an agent or a user may type for a memory that the file system itself refuses to look
up: a name longer than a folder entry can be, a path that goes through a file. Each is the same
one-line answer as any other missing memory, never the system's errno."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from engine.agents.service import MemoryService
from engine.cli import cli
from engine.files.keys import PathRefused

TOO_LONG = "notes/" + "a" * 300 + ".md"  # one entry over the 255 bytes file systems allow
THROUGH_A_FILE = "notes/a.md/b.md"


@pytest.fixture
def store(make_store):  # type: ignore[no-untyped-def]
    return make_store({"notes/a.md": "# A\n\nAlpha.\n"})


@pytest.mark.parametrize("path", [TOO_LONG, THROUGH_A_FILE], ids=["too-long", "through-a-file"])
@pytest.mark.parametrize(
    "command", [["read"], ["forget"], ["reinforce", "--outcome", "1"]], ids=lambda c: c[0]
)
def test_the_cli_answers_an_impossible_path_in_one_line(store, command, path):
    result = CliRunner().invoke(
        cli, ["--store", str(store.root), command[0], path, *command[1:]], catch_exceptions=False
    )

    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert "Errno" not in result.output and "unexpected" not in result.output
    assert path in result.output


@pytest.mark.parametrize("path", [TOO_LONG, THROUGH_A_FILE], ids=["too-long", "through-a-file"])
@pytest.mark.parametrize("operation", ["read", "forget"])
def test_the_server_answers_an_impossible_path_naming_it(store, operation, path):
    service = MemoryService(store)
    try:
        with pytest.raises(PathRefused) as refused:
            getattr(service, operation)(path)
    finally:
        service.close()

    assert "Errno" not in str(refused.value) and str(refused.value).startswith(path)


def test_a_name_too_long_says_so(store):
    result = CliRunner().invoke(cli, ["--store", str(store.root), "forget", TOO_LONG])

    assert "too long" in result.output
