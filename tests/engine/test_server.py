"""`memsift serve` as an agent meets it: a subprocess driven over stdio by the MCP SDK's own
client. One server serves most tests (starting one loads the embedding model); the tests that
need their own processes say why."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from mcp_harness import SRC, ServerSession
from raw_wire import INITIALIZE, RawWire, lexical_store, request, tool_call, wait_until

from engine.agents.stdio_pipes import MAX_LINE_BYTES
from engine.files.memory import parse_memory
from engine.files.store import open_store
from engine.indexing.indexer import index_store

CLI = [sys.executable, "-c", "from engine.cli import main; main()"]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TOOLS = {
    "memory_search",
    "memory_read",
    "memory_remember",
    "memory_reinforce",
    "memory_forget",
    "memory_status",
}
WRITTEN_WHILE_DOWN = """---
title: Llama feeding schedule
kind: semantic
---
The office llama is fed at 07:30 and 16:00; never after dark.
"""


def lexical_server(root: Path, *extra: str, stderr: int) -> subprocess.Popen[str]:
    """``memsift serve`` on a one-memory store without an embedder (it starts at once), its
    stdin and stdout pipes for the test to speak the wire itself."""
    import os

    (root / ".memsift").mkdir()
    (root / ".memsift" / "config.toml").write_text('[embedder]\nmodel = "none"\n')
    (root / "a.md").write_text("Alpha.\n")
    return subprocess.Popen(
        [*CLI, "--store", str(root), "serve", *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    """The example store, indexed lexically before the server starts; then one file is added
    while no server runs, which the server must catch up with."""
    root = tmp_path_factory.mktemp("serve") / "examples"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".memsift"))
    index_store(open_store(root), embed=False)
    (root / "facts" / "llama.md").write_text(WRITTEN_WHILE_DOWN)
    return root


@pytest.fixture(scope="module")
def server(store_dir):  # type: ignore[no-untyped-def]
    session = ServerSession(store_dir)
    session.wait_until_fresh()
    yield session
    session.close()


def test_the_server_lists_the_six_tools_with_schemas_and_descriptions(server):
    tools = server.run(lambda client: client.list_tools()).tools
    assert {tool.name for tool in tools} == TOOLS
    for tool in tools:
        assert len(tool.description) > 100, tool.name
        assert "Use " in tool.description, tool.name  # says when to use it
        assert tool.output_schema is not None, tool.name
    search = next(tool for tool in tools if tool.name == "memory_search")
    assert search.input_schema["properties"]["limit"]["maximum"] == 50
    assert search.input_schema["properties"]["limit"]["minimum"] == 1
    assert search.input_schema["required"] == ["query"]


def test_the_server_caught_up_with_a_file_written_while_it_was_down(server):
    hits = server.ok("memory_search", {"query": "when is the llama fed"})["hits"]
    assert hits[0]["path"] == "facts/llama.md"


def test_search_returns_bounded_hits_with_ranks_and_flags(server):
    data = server.ok("memory_search", {"query": "rotate the staging database credentials"})
    assert [h["path"] for h in data["hits"][:3]].count(
        "procedures/rotate-staging-db-credentials.md"
    ) == 1
    assert data["degraded"] is False
    assert data["abstained"] is False
    assert set(data["arms_fired"]) >= {"fts", "vector"}
    hit = data["hits"][0]
    assert set(hit) == {
        "path", "title", "kind", "event_at", "score", "snippet", "ranks", "copies", "authority",
        "above_twin",
    }  # fmt: skip
    assert all(len(h["snippet"]) <= 310 for h in data["hits"])


def test_a_search_answer_stays_under_8_kb_even_at_the_largest_limit(server):
    result = server.call("memory_search", {"query": "staging database deploy release", "limit": 50})
    text = result.content[0].text
    assert len(text.encode("utf-8")) <= 8000
    data = json.loads(text)
    assert data["truncated"] is not None
    assert len(data["hits"]) + data["truncated"]["hits_dropped"] >= 20


def test_remember_then_search_finds_it_first_then_read_then_forget_hides_it(server, store_dir):
    written = server.ok(
        "memory_remember",
        {
            "title": "Quokka deploy freeze",
            "body": "Deploys freeze every Friday after 15:00 because the quokka team is off.",
            "kind": "procedural",
            "tags": ["deploy", "policy"],
        },
    )
    path = written["path"]
    assert path == "procedures/quokka-deploy-freeze.md"
    assert written["embedded"] is True
    assert (store_dir / path).is_file()

    found = server.ok("memory_search", {"query": "when are deploys frozen"})
    assert found["hits"][0]["path"] == path
    assert "vector" in found["hits"][0]["ranks"]

    read = server.ok("memory_read", {"path": path})
    assert read["front_matter"]["title"] == "Quokka deploy freeze"
    assert read["front_matter"]["tags"] == ["deploy", "policy"]
    assert "quokka team is off" in read["text"]
    assert read["access_count"] == 1

    assert server.ok("memory_forget", {"path": path}) == {
        "path": path,
        "archived": True,
        "changed": True,
        "notes": [],
    }
    after = server.ok("memory_search", {"query": "when are deploys frozen"})
    assert path not in [h["path"] for h in after["hits"]]
    archived = server.ok(
        "memory_search", {"query": "when are deploys frozen", "include_archived": True}
    )
    assert archived["hits"][0]["path"] == path


def test_a_file_written_behind_the_servers_back_is_found_within_seconds(server, store_dir):
    (store_dir / "facts" / "capybara.md").write_text(
        "---\ntitle: Capybara parking\n---\nThe capybara parks in bay 12.\n"
    )

    def found() -> bool:
        hits = server.ok("memory_search", {"query": "where does the capybara park"})["hits"]
        return bool(hits) and hits[0]["path"] == "facts/capybara.md"

    assert server.wait_for(found)


def test_a_file_deleted_behind_the_servers_back_leaves_the_results(server, store_dir):
    target = store_dir / "facts" / "wombat.md"
    target.write_text("---\ntitle: Wombat rota\n---\nThe wombat rota changes monthly.\n")

    def searchable(expected: bool) -> bool:
        hits = server.ok("memory_search", {"query": "wombat rota"})["hits"]
        return ("facts/wombat.md" in [h["path"] for h in hits]) is expected

    assert server.wait_for(lambda: searchable(True))
    target.unlink()
    assert server.wait_for(lambda: searchable(False))


def test_read_pages_a_long_memory_and_counts_one_access(server):
    first = server.ok("memory_read", {"path": "facts/service-map.md", "max_chars": 100})
    assert len(first["text"]) == 100
    assert first["next_offset"] == 100
    rest = server.ok(
        "memory_read", {"path": "facts/service-map.md", "offset": 100, "max_chars": 100_000}
    )
    assert rest["next_offset"] is None
    assert first["text"] + rest["text"] == (EXAMPLES / "facts/service-map.md").read_text()
    assert rest["access_count"] is None


def test_reinforce_moves_the_outcome_score(server):
    up = server.ok("memory_reinforce", {"path": "people/priya-raman.md", "outcome": 1})
    assert up["outcome_score"] > 0
    down = server.ok("memory_reinforce", {"path": "people/priya-raman.md", "outcome": -1})
    assert down["outcome_score"] < up["outcome_score"]


def test_status_reports_the_index_and_the_watcher(server):
    """The files the tests above wrote behind the server's back get their vectors in the
    background, as late as a busy machine makes them: wait for full coverage (status is read
    on each try) instead of racing the filler."""
    status = server.wait_until_fresh()
    assert status["files"] >= 36
    assert status["vector_coverage"] == 1.0
    assert status["freshness"]["watching"] is True
    assert status["freshness"]["last_error"] is None


def test_a_memory_file_is_readable_as_a_resource(server):
    result = server.run(
        lambda client: client.read_resource("memsift://memory/people/priya-raman.md")
    )
    assert result.contents[0].text == (EXAMPLES / "people/priya-raman.md").read_text()
    assert result.contents[0].mime_type == "text/markdown"


def test_an_html_memory_is_a_resource_labelled_text_html(server):
    result = server.run(
        lambda client: client.read_resource("memsift://memory/facts/feature-flags.html")
    )
    assert result.contents[0].text == (EXAMPLES / "facts/feature-flags.html").read_text()
    assert result.contents[0].mime_type == "text/html"


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("memory_search", {"query": "x", "limit": 0}, "greater than or equal to 1"),
        ("memory_search", {"query": "x", "limit": 51}, "less than or equal to 50"),
        ("memory_search", {"query": "x", "since": "last week"}, "not an ISO 8601 date"),
        ("memory_read", {"path": "../../etc/passwd"}, "not inside the store"),
        ("memory_read", {"path": "/etc/passwd"}, "not inside the store"),
        ("memory_read", {"path": ".memsift/index.db"}, "not a memory"),
        ("memory_read", {"path": "facts/missing.md"}, "no such memory"),
        ("memory_remember", {"title": "T", "body": "B", "kind": "Bad Kind!"}, "kind"),
        ("memory_remember", {"title": "T", "body": "B", "event_at": "soon"}, "ISO 8601"),
        ("memory_remember", {"title": "T"}, "body"),
        ("memory_reinforce", {"path": "people/priya-raman.md", "outcome": 0}, "outcome"),
        ("memory_forget", {"path": "../outside.md"}, "not inside the store"),
    ],
)
def test_bad_arguments_are_tool_errors_and_the_next_call_works(server, tool, arguments, message):
    assert message in server.error(tool, arguments)
    assert server.ok("memory_search", {"query": "staging database"})["hits"]


def test_nothing_is_written_by_a_refused_remember(server, store_dir):
    server.error("memory_remember", {"title": "T", "body": "B", "kind": "Bad Kind!"})
    assert not any(p.name.startswith("Bad") or p.name == "bad" for p in store_dir.iterdir())


def test_two_clients_searching_while_a_third_remembers_lose_nothing(tmp_path):
    """Three servers on one store (stdio: one client each). Two search without pause while the
    third remembers 20 memories: every search answers, every memory is a whole file, indexed
    once, and found by the searchers."""
    root = tmp_path / "examples"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".memsift"))
    index_store(open_store(root))
    sessions = [ServerSession(root) for _ in range(3)]
    try:
        searchers, writer = sessions[:2], sessions[2]
        stop = threading.Event()
        failures: list[str] = []
        counts = [0, 0]

        def search_loop(number: int, session: ServerSession) -> None:
            while not stop.is_set():
                result = session.call("memory_search", {"query": "staging database", "limit": 5})
                if result.is_error:
                    failures.append(result.content[0].text)
                counts[number] += 1

        threads = [
            threading.Thread(target=search_loop, args=(n, s)) for n, s in enumerate(searchers)
        ]
        for thread in threads:
            thread.start()
        paths = []
        try:
            for n in range(20):
                paths.append(
                    writer.ok(
                        "memory_remember",
                        {"title": f"Concurrent note {n}", "body": f"Marker okapi{n} is here."},
                    )["path"]
                )
        finally:
            stop.set()
            for thread in threads:
                thread.join(60)
        assert failures == []
        assert min(counts) > 0
        assert len(set(paths)) == 20
        for n, path in enumerate(paths):
            memory = parse_memory(path, (root / path).read_bytes())
            assert memory.body == f"Marker okapi{n} is here."
            hits = searchers[n % 2].ok("memory_search", {"query": f"okapi{n}"})["hits"]
            assert hits[0]["path"] == path
    finally:
        for session in sessions:
            session.close()


def test_a_plain_search_does_not_import_the_mcp_sdk_or_the_watcher(tmp_path):
    (tmp_path / "a.md").write_text("Alpha.\n")
    index_store(open_store(tmp_path), embed=False)
    probe = (
        "import sys\n"
        "from engine.cli import main\n"
        f"sys.argv = ['memsift', '--store', {str(tmp_path)!r}, 'search', 'alpha', '--no-vector']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "loaded = sorted({m.split('.')[0] for m in sys.modules} & "
        "{'mcp', 'mcp_types', 'watchfiles', 'pydantic', 'anyio'})\n"
        "print('LOADED', loaded)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC)},
        check=True,
    ).stdout
    assert "LOADED []" in out


def test_ctrl_c_stops_the_server_at_once_without_a_traceback(tmp_path):
    """The stdio transport reads stdin on a thread no cancellation reaches: without care,
    Ctrl-C would leave the server hanging until the next line of input."""
    import signal

    with lexical_server(tmp_path, stderr=subprocess.PIPE) as child:
        assert child.stderr is not None
        assert "caught up" in child.stderr.readline()
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=30)
    assert child.returncode == 130
    assert "interrupted" in stderr
    assert "Traceback" not in stderr


def test_a_line_that_is_not_json_rpc_gets_an_error_answer_and_the_server_serves_on(tmp_path):
    """The SDK drops such a line with no answer, so a client that sent it would wait forever;
    JSON-RPC 2.0 asks for a parse error (or an invalid-request error) with a null id."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    wire = "not json at all\n\n" + '{"id": 3, "hello": 1}\n' + json.dumps(initialize) + "\n"
    with lexical_server(tmp_path, "--no-watch", stderr=subprocess.DEVNULL) as child:
        out, _ = child.communicate(wire, timeout=120)  # EOF ends the server after its answers
    answers = [json.loads(line) for line in out.splitlines()]

    assert len(answers) == 3, answers
    assert answers[0] == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32700,
            "message": "Parse error: the line is not JSON (Expecting value at character 0)",
        },
    }
    assert (answers[1]["id"], answers[1]["error"]["code"]) == (3, -32600)
    assert answers[2]["id"] == 7 and answers[2]["result"]["serverInfo"]["name"]


def test_a_client_that_goes_away_mid_call_ends_the_server_quietly(tmp_path):
    """A client that crashes closes its end of the pipes while calls are in flight: the
    answers have nowhere to go, which is the end of the session, not an error to report."""
    import os

    (tmp_path / ".memsift").mkdir()
    (tmp_path / ".memsift" / "config.toml").write_text('[embedder]\nmodel = "none"\n')
    (tmp_path / "a.md").write_text("Alpha.\n")
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "gone", "version": "0"},
        },
    }
    search = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "memory_search", "arguments": {"query": "alpha"}},
    }
    with subprocess.Popen(
        [*CLI, "--store", str(tmp_path), "serve", "--no-watch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    ) as child:
        assert child.stdin is not None and child.stdout is not None
        child.stdout.close()  # the client is gone before any answer is written
        child.stdin.write(json.dumps(initialize) + "\n" + json.dumps(search) + "\n")
        child.stdin.close()
        child.wait(timeout=120)
        stderr = child.stderr.read() if child.stderr else ""

    assert child.returncode == 0, stderr
    assert "unexpected" not in stderr and "Traceback" not in stderr
    assert "the answers to requests 0, 1 were not delivered" in stderr  # nothing silent


# --------------------------------------------------------------------------- the raw wire


@pytest.fixture(scope="module")
def wire(tmp_path_factory):  # type: ignore[no-untyped-def]
    """One server spoken to in raw lines, initialized, for the tests that only send lines."""
    session = RawWire(lexical_store(tmp_path_factory.mktemp("wire") / "store"))
    try:
        session.initialize()
        yield session
    finally:
        session.close()


UNANSWERED_BEFORE = [  # a line the SDK answered with silence, the id and code it now gets
    (request(1, "ping", "x"), 1, -32600),
    (request(2, "ping", 5), 2, -32600),
    (request(3, "ping", []), 3, -32602),
    (request(True, "ping"), None, -32600),
    (request({"n": 1}, "ping"), None, -32600),
    (request(1.5, "ping"), None, -32600),
    (request(None, "ping"), None, -32600),
    ('{"jsonrpc": "2.0", "id": "a\\ud800", "method": "ping"}', None, -32600),
    (tool_call(4, "memory_search", {"query": "a\ud800"}), 4, -32602),
    ('{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"\\udc00": 1}}', 5, -32602),
    ("[" * 100_000, None, -32700),  # it ended the server
]


@pytest.mark.parametrize(("line", "request_id", "code"), UNANSWERED_BEFORE)
def test_every_request_gets_an_answer_and_the_server_serves_on(wire, line, request_id, code):
    """JSON-RPC 2.0: a request is answered, with id null when its id cannot be read; the
    rules are in docs/agents.md."""
    wire.send(line)
    answer = wire.answer()
    assert (answer["id"], answer["error"]["code"]) == (request_id, code), answer
    assert "\n" not in answer["error"]["message"]
    wire.send(request("next", "ping"))
    assert wire.answer_to("next")["result"] == {}


def test_a_lone_surrogate_is_refused_naming_where_it_is(wire):
    wire.send(tool_call(6, "memory_search", {"query": "x", "tags": ["ok", "b\udfff"]}))
    message = wire.answer_to(6)["error"]["message"]
    assert "params.arguments.tags.1 holds a lone surrogate" in message


def test_a_line_over_the_limit_gets_an_error_answer_and_the_next_request_is_served(wire):
    """The line is dropped as it is read; its id, written before the long params as clients
    do, is kept for the answer."""
    padding = "x" * (MAX_LINE_BYTES + 1)
    wire.send(tool_call("long", "memory_search", {"query": padding}))
    answer = wire.answer_to("long")
    assert answer["error"]["code"] == -32600
    assert f"longer than {MAX_LINE_BYTES} bytes" in answer["error"]["message"]
    wire.send(request("after", "ping"))
    assert wire.answer_to("after")["result"] == {}


def test_a_line_as_long_as_the_limit_is_served(wire):
    line = request("edge", "ping")
    wire.send(line[:-1] + " " * (MAX_LINE_BYTES - len(line)) + "}")
    assert wire.answer_to("edge")["result"] == {}


def test_requests_followed_by_the_end_of_input_are_answered_before_the_server_exits(tmp_path):
    """A client that sends its last requests and closes its input still gets every answer:
    without them, one retrying the remember would write the memory twice."""
    root = lexical_store(tmp_path / "store")
    wire = RawWire(root)
    try:
        wire.wait_for_log("caught up")  # the server's own index run is over
        wire.initialize()
        # A first read makes state.db: a status read while reinforce creates it can find no
        # table yet (a separate race, not this test's subject).
        wire.send(tool_call("first", "memory_read", {"path": "a.md"}))
        assert not wire.answer_to("first")["result"]["isError"]
        wire.send(tool_call(1, "memory_remember", {"title": "Last words", "body": "Said."}))
        wire.send(tool_call(2, "memory_reinforce", {"path": "a.md", "outcome": 1}))
        wire.send(tool_call(3, "memory_status", {}))
        wire.send(tool_call(4, "memory_read", {"path": "a.md"}))
        answers = {answer["id"]: answer for answer in wire.end_input()}
    finally:
        wire.close()
    assert sorted(answers) == [1, 2, 3, 4], answers
    assert all(not answer["result"]["isError"] for answer in answers.values()), answers
    assert answers[1]["result"]["structuredContent"]["path"] == "facts/last-words.md"
    assert sorted(path.name for path in (root / "facts").iterdir()) == ["last-words.md"]


def test_requests_read_from_a_file_are_all_answered(tmp_path):
    """``memsift serve < requests.jsonl``: a regular file is read on a worker thread (the
    event loop cannot watch one), with the same judging of lines and the same drain."""
    import os

    root = lexical_store(tmp_path / "store")
    requests = tmp_path / "requests.jsonl"
    requests.write_text(
        "\n".join(
            [
                json.dumps(INITIALIZE),
                '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
                tool_call(1, "memory_remember", {"title": "From a file", "body": "Filed."}),
                request(True, "ping"),
            ]
        )
        + "\n"
    )
    with requests.open("rb") as stdin, (tmp_path / "answers.jsonl").open("wb") as stdout:
        subprocess.run(
            [*CLI, "--store", str(root), "serve", "--no-watch"],
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(SRC)},
            timeout=120,
            check=True,
        )
    answers = [json.loads(line) for line in (tmp_path / "answers.jsonl").read_text().splitlines()]
    assert sorted(str(answer["id"]) for answer in answers) == ["0", "1", "None"], answers
    assert (root / "facts" / "from-a-file.md").is_file()


def test_a_remember_cancelled_after_it_wrote_its_file_is_logged_with_the_path(tmp_path):
    """The client cancels a remember while it waits for the index's write lock (the test
    holds it): the memory is on disk, the cancelled call is never answered, so the log says
    what it did."""
    import apsw

    root = lexical_store(tmp_path / "store")
    wire = RawWire(root)
    try:
        wire.wait_for_log("caught up")  # the server's own index run is over
        wire.initialize()
        holder = apsw.Connection(str(root / ".memsift" / "index.db"))
        holder.execute("BEGIN IMMEDIATE")
        wire.send(tool_call(1, "memory_remember", {"title": "Held back", "body": "Waits."}))
        assert wait_until((root / "facts" / "held-back.md").is_file)
        wire.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": 1, "reason": "the user gave up"},
                }
            )
        )
        wire.send(request(2, "ping"))
        assert wire.answer_to(2)["result"] == {}  # so the cancel was read
        holder.execute("ROLLBACK")
        log = wire.wait_for_log("cancelled")
        rest = wire.end_input()
    finally:
        wire.close()
    assert "memory_remember was cancelled" in log
    assert "facts/held-back.md" in log
    assert rest == []  # a cancelled request is never answered (MCP)
