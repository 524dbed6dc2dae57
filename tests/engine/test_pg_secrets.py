"""A team store's database password is never printed: not in an error, not in status.

The URL usually carries the password (`postgresql://user:secret@host/db`), and error lines end
up in terminals, CI logs and agents' transcripts. Each command is run as a user runs it, and
its whole output is searched for the secret, raw and percent-decoded.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from engine.cli import cli
from engine.service import MemoryService
from engine.store import open_store

SECRET = "Hunter2Secret"


def memsift(store, url, *args):  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(
        cli, ["--store", str(store.root), *args], env={"MEMSIFT_DATABASE_URL": url}
    )
    return result


@pytest.fixture
def store(make_store):  # type: ignore[no-untyped-def]
    return make_store({"a.md": "---\ntitle: Port\n---\nStaging listens on 6432.\n"})


@pytest.mark.parametrize(
    "url",
    [
        # libpq quotes a bad percent escape, i.e. the password, in its message
        f"postgresql://memsift:{SECRET}%zz@127.0.0.1:1/team",
        f"postgresql://memsift:%{SECRET}@127.0.0.1:1/team",
        f"postgresql://memsift@127.0.0.1:1/team?password=%{SECRET}",
        f"postgresql://memsift:{SECRET}@127.0.0.1:notaport/team",
        f"postgresql://memsift:{SECRET}@[::1/team",
    ],
)
@pytest.mark.parametrize("command", [["index"], ["search", "port"], ["status", "--json"]])
def test_a_url_the_driver_cannot_use_is_one_line_without_the_password(store, url, command):
    result = memsift(store, url, *command)
    assert result.exit_code == 2, result.output
    assert SECRET not in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert "Traceback" not in result.output and "unexpected" not in result.output


def with_password(url: str) -> str:
    scheme, rest = url.split("://", 1)
    user = rest.split("@", 1)[0].split(":", 1)[0]
    return f"{scheme}://{user}:{SECRET}@{rest.split('@', 1)[1]}"


def test_status_and_searches_of_a_team_store_never_show_the_password(store, pg_url):
    url = with_password(pg_url)
    outputs = [
        memsift(store, url, "index", "--no-embed", "--json"),
        memsift(store, url, "status", "--json"),
        memsift(store, url, "status"),
        memsift(store, url, "search", "port", "--explain", "--sql"),
        memsift(store, url, "list", "--json"),
    ]
    for result in outputs:
        assert result.exit_code == 0, result.output
        assert SECRET not in result.output
    assert "schema memsift" in json.loads(outputs[1].stdout)["index_db"]


def test_a_missing_database_is_named_without_the_password(store, pg_url):
    url = with_password(pg_url).replace("/memsift_test_", "/missing_", 1)
    result = memsift(store, url, "status")
    assert result.exit_code == 2
    assert "missing_" in result.output and SECRET not in result.output


def test_the_servers_status_tool_never_shows_the_password(store, pg_url, monkeypatch):
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", with_password(pg_url))
    assert memsift(store, with_password(pg_url), "index", "--no-embed").exit_code == 0
    status = MemoryService(open_store(store.root)).status()
    assert SECRET not in json.dumps(status)


@pytest.mark.parametrize("bad", ["127.0.0.1:notaport", "[::1"])
def test_a_url_with_an_unreadable_host_or_port_names_the_variable(store, bad):
    result = memsift(store, f"postgresql://memsift:{SECRET}@{bad}/team", "status")
    assert result.exit_code == 2
    assert result.output.startswith("memsift: MEMSIFT_DATABASE_URL "), result.output
    assert SECRET not in result.output


@pytest.mark.parametrize(
    "url",
    [
        f"mysql://memsift:{SECRET}@db.example/team",
        f"postgresql://memsift:{SECRET}@db.example:port/team",
        f"mysql://db.example/team?password={SECRET}",
    ],
)
def test_a_bad_url_in_config_toml_is_quoted_without_its_password(make_store, url):
    store = make_store({"a.md": "A.\n"})
    store.state_dir.mkdir()
    store.config_path.write_text(f'[database]\nurl = "{url}"\n')
    result = CliRunner().invoke(cli, ["--store", str(store.root), "status"], env={})
    assert result.exit_code == 2
    assert "[database] url = " in result.output and "***" in result.output
    assert SECRET not in result.output
