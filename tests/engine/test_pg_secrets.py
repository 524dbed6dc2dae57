"""A team store's database password is never printed: not in an error, not in status.

The URL usually carries the password (`postgresql://user:secret@host/db`), and error lines end
up in terminals, CI logs and agents' transcripts. Each command is run as a user runs it, and
its whole output is searched for the secret, raw and percent-decoded.
"""

from __future__ import annotations

import io
import json
import logging
import threading

import pytest
from click.testing import CliRunner

from engine.agents.service import MemoryService
from engine.cli import cli
from engine.files.store import open_store

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


# ---------------------------------------------------------------- every form of connection string


def configured(make_store, url):  # type: ignore[no-untyped-def]
    """A store whose config.toml names ``url`` (written as a TOML basic string)."""
    store = make_store({"a.md": "A.\n"})
    store.state_dir.mkdir()
    store.config_path.write_text(f"[database]\nurl = {json.dumps(url)}\n")
    return store


def shown_anywhere(output: str) -> bool:
    """Whether the secret, or a readable piece of it, reached the output."""
    return any(piece in output for piece in (SECRET, SECRET[:7], SECRET[7:]))


KEYWORD_STRINGS = [
    f"password={SECRET} host=127.0.0.1 dbname=team",
    f"host=db password = '{SECRET[:7]} {SECRET[7:]}' dbname=team",
    f"host=db password='it\\'s {SECRET}' dbname=team",
    f"host=db password='{SECRET[:7]} {SECRET[7:]} dbname=team",  # a quote never closed
]


@pytest.mark.parametrize("url", KEYWORD_STRINGS)
@pytest.mark.parametrize("debug", [[], ["--debug"]])
def test_a_keyword_connection_string_in_config_toml_is_refused_without_its_password(
    make_store, url, debug
):
    store = configured(make_store, url)
    result = CliRunner().invoke(cli, [*debug, "--store", str(store.root), "status"], env={})
    assert result.exit_code == 2
    assert "keyword connection string" in result.output
    assert not shown_anywhere(result.output), result.output


@pytest.mark.parametrize("url", KEYWORD_STRINGS[:2])
def test_a_keyword_connection_string_in_the_variable_is_refused_without_its_password(store, url):
    result = memsift(store, url, "--debug", "status")
    assert result.exit_code == 2
    assert "MEMSIFT_DATABASE_URL is a keyword connection string" in result.output
    assert not shown_anywhere(result.output), result.output


@pytest.mark.parametrize(
    "url", [f"postgresql://memsift:{SECRET}/team", f"postgres://memsift:{SECRET}"]
)
def test_a_url_without_at_host_in_config_toml_is_quoted_without_its_password(make_store, url):
    store = configured(make_store, url)
    result = CliRunner().invoke(cli, ["--debug", "--store", str(store.root), "status"], env={})
    assert result.exit_code == 2
    assert "memsift:***" in result.output and "no @host" in result.output
    assert SECRET not in result.output


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://memsift:{SECRET}%zz@127.0.0.1:1/team",
        f"postgresql://memsift:%{SECRET}@127.0.0.1:1/team",
        f"postgresql://memsift@127.0.0.1:1/team?password=%{SECRET}",
        f"postgresql://memsift@127.0.0.1:1/team?sslmode=require&password={SECRET}%2",
        f"postgresql://memsift:a%20{SECRET}%zz@127.0.0.1:1/team",
    ],
)
def test_the_debug_traceback_of_the_drivers_error_never_shows_the_password(store, url):
    """psycopg's own message, chained under memsift's, quotes the token it cannot decode."""
    result = memsift(store, url, "--debug", "status")
    assert result.exit_code == 2
    assert "Traceback" in result.output and "psycopg" in result.output
    assert SECRET not in result.output, result.output


def test_the_debug_traceback_of_a_password_in_config_toml_never_shows_it(make_store):
    store = configured(make_store, f"postgresql://memsift:{SECRET}%zz@127.0.0.1:1/team")
    result = CliRunner().invoke(cli, ["--debug", "--store", str(store.root), "status"], env={})
    assert result.exit_code == 2 and "Traceback" in result.output
    assert SECRET not in result.output, result.output


def test_an_unexpected_error_under_debug_prints_its_traceback_without_the_password(
    monkeypatch, capsys
):
    from engine import cli as cli_module

    url = f"postgresql://memsift:{SECRET}@db.example/team"

    def crash(**_kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError(f"the driver gave up on {url} (password {SECRET})")

    monkeypatch.setenv("MEMSIFT_DATABASE_URL", url)
    monkeypatch.setattr(cli_module, "cli", crash)
    monkeypatch.setattr("sys.argv", ["memsift", "--debug", "status"])
    with pytest.raises(SystemExit) as exit_info:
        cli_module.main()
    assert exit_info.value.code == 2
    stderr = capsys.readouterr().err
    assert "Traceback" in stderr and "RuntimeError" in stderr
    assert SECRET not in stderr, stderr


# ---------------------------------------------------------------- the redactor itself


@pytest.mark.parametrize(
    "text",
    [
        f"postgresql://memsift:{SECRET}@db.example:5432/team",
        f"postgres://memsift:{SECRET}/team",
        f"postgresql://db.example/team?password={SECRET}&sslmode=require",
        f"postgresql://db.example/team?sslmode=require&password={SECRET}",
        f"postgresql://db.example/team?PASSWORD={SECRET}",
        f"host=db password={SECRET} dbname=team",
        f"host=db password = '{SECRET[:7]} {SECRET[7:]}' dbname=team",
        f"host=db password='it\\'s {SECRET}' dbname=team",
        f"host=db password='{SECRET[:7]} {SECRET[7:]} dbname=team",
    ],
)
def test_a_password_written_in_any_connection_string_is_redacted_from_any_text(text):
    from engine.redact import redact

    line = redact(f'cannot connect with "{text}": refused')
    assert not shown_anywhere(line), line
    assert line.startswith("cannot connect with ") and "***" in line


def test_a_remembered_password_is_redacted_as_written_and_percent_decoded():
    from engine.redact import hide_passwords_of, redact

    hide_passwords_of(f"postgresql://memsift:{SECRET}%21%20x@db.example/team")
    assert redact(f"auth failed for {SECRET}%21%20x") == "auth failed for ***"
    assert redact(f"auth failed for {SECRET}! x") == "auth failed for ***"


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://memsift:{SECRET}%zz@127.0.0.1:1/team",
        f"postgresql://memsift@127.0.0.1:1/team?password=%{SECRET}",
        f"postgresql://memsift:a%20{SECRET}%zz@127.0.0.1:1/team",
    ],
)
def test_psycopgs_own_message_about_a_remembered_url_is_redacted(url):
    import psycopg

    from engine.redact import hide_passwords_of, redact

    with pytest.raises(psycopg.Error) as error:
        psycopg.connect(url, connect_timeout=5).close()
    assert SECRET in str(error.value)  # the driver does quote it
    hide_passwords_of(url)
    assert SECRET not in redact(str(error.value))


@pytest.mark.parametrize(
    "text",
    [
        "PostgreSQL 127.0.0.1:5432/team, schema memsift: connection refused",
        "postgresql://memsift@db.example:5432/team?sslmode=require",
        "index.db: database is locked; retry",
    ],
)
def test_text_without_a_password_is_left_as_it_is(text):
    from engine.redact import redact

    assert redact(text) == text


# ---------------------------------------------------------------- log lines


def test_the_watchers_log_lines_and_last_error_never_show_the_password(make_store, monkeypatch):
    from engine.indexing.freshness import Freshness

    store = make_store({".memsift/config.toml": '[embedder]\nmodel = "none"\n', "a.md": "A.\n"})
    url = f"postgresql://memsift:{SECRET}@db.example/team"

    def unreachable(*_args, **_kwargs):  # type: ignore[no-untyped-def]
        raise ConnectionError(f'connection to "{url}" failed')

    monkeypatch.setattr("engine.indexing.freshness.index_store", unreachable)
    lines: list[str] = []
    got_error = threading.Event()

    def log(line: str) -> None:
        lines.append(line)
        if "error while catching up" in line:
            got_error.set()

    freshness = Freshness(store, watch=False, log=log)
    freshness.start()
    try:
        assert got_error.wait(60), lines
    finally:
        freshness.stop()
    assert not any(SECRET in line for line in lines), lines
    assert freshness.last_error is not None and SECRET not in freshness.last_error


def test_a_tool_error_of_the_server_never_shows_the_password(monkeypatch):
    from mcp.server.mcpserver.exceptions import ToolError

    from engine.agents.mcp_server import call

    monkeypatch.setenv("MEMSIFT_DATABASE_URL", f"postgresql://memsift:{SECRET}@db.example/team")

    def refused() -> dict[str, object]:
        raise ValueError(f'authentication failed: "{SECRET}" rejected')

    with pytest.raises(ToolError) as error:
        call(refused)
    assert SECRET not in str(error.value) and "authentication failed" in str(error.value)


def test_the_servers_log_lines_never_show_the_password(monkeypatch, capsys):
    from engine.agents.mcp_server import log

    monkeypatch.setenv("MEMSIFT_DATABASE_URL", f"postgresql://memsift:{SECRET}@db.example/team")
    log(f"error while catching up: token {SECRET} refused (retrying)")
    stderr = capsys.readouterr().err
    assert stderr.startswith("memsift serve: error while catching up") and SECRET not in stderr


def test_a_traceback_the_sdk_logs_never_shows_the_password(monkeypatch):
    """The MCP SDK logs a tool's crash with its traceback, through the root logger's handlers."""
    from engine.redact import redact_logging

    monkeypatch.setenv("MEMSIFT_DATABASE_URL", f"postgresql://memsift:{SECRET}@db.example/team")
    written = io.StringIO()
    handler = logging.StreamHandler(written)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        redact_logging()
        try:
            raise RuntimeError(f"cannot decode {SECRET}")
        except RuntimeError:
            logging.getLogger("mcp.server").error(
                "Tool %r crashed: %s", "memory_search", SECRET, exc_info=True
            )
    finally:
        root.removeHandler(handler)
    assert "Traceback" in written.getvalue() and "memory_search" in written.getvalue()
    assert SECRET not in written.getvalue(), written.getvalue()
