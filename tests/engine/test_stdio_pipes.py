"""The server's stdin and stdout on the event loop: whole lines in, whole answers out, and a
stray print kept off the wire."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import anyio

from engine.stdio_pipes import JsonRpcLines, LineReader, LineWriter, rejection

SRC = Path(__file__).resolve().parents[2] / "src"


def read_lines(chunks: list[bytes]) -> list[str]:
    """Every line a LineReader yields while ``chunks`` are written one by one, then EOF."""
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)

    def feed() -> None:
        for chunk in chunks:
            os.write(write_end, chunk)
        os.close(write_end)

    async def collect() -> list[str]:
        return [line async for line in LineReader(read_end)]

    feeder = threading.Thread(target=feed)
    feeder.start()
    try:
        return anyio.run(collect)
    finally:
        feeder.join()
        os.close(read_end)


def test_a_character_split_across_two_reads_arrives_whole():
    text = '{"q": "café"}\n'.encode()
    cut = text.index("é".encode()) + 1
    assert read_lines([text[:cut], text[cut:]]) == ['{"q": "café"}\n']


def test_lines_arriving_together_come_out_one_by_one():
    assert read_lines([b"one\ntwo\nthr", b"ee\n"]) == ["one\n", "two\n", "three\n"]


def test_a_last_line_without_a_newline_is_not_lost():
    assert read_lines([b"one\n", b"last"]) == ["one\n", "last"]


def test_undecodable_bytes_are_replaced_not_raised():
    assert read_lines([b"\xff ok\n"]) == ["\ufffd ok\n"]


def test_an_answer_larger_than_the_pipe_is_written_whole():
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    answer = "x" * 300_000 + "\n"
    received = bytearray()

    def drain() -> None:
        while chunk := os.read(read_end, 4096):
            received.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()

    async def send() -> None:
        writer = LineWriter(write_end)
        await writer.write(answer)
        await writer.flush()

    try:
        anyio.run(send)
    finally:
        os.close(write_end)
        reader.join()
        os.close(read_end)
    assert received.decode() == answer


def test_an_answer_to_a_client_that_went_away_is_dropped_not_raised():
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    os.close(read_end)
    writer = LineWriter(write_end)

    async def send() -> None:
        await writer.write("first\n")
        await writer.write("second\n")

    try:
        anyio.run(send)
    finally:
        os.close(write_end)
    assert writer.gone


def test_a_stray_print_goes_to_stderr_while_the_wire_is_claimed():
    script = (
        "import os\n"
        "from engine.stdio_pipes import claimed\n"
        "with claimed() as (wire_in, wire_out):\n"
        "    print('stray', flush=True)\n"
        "    os.write(wire_out, b'wire\\n')\n"
        "print('after', flush=True)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        check=True,
    )
    assert done.stdout == "wire\nafter\n"
    assert done.stderr == "stray\n"


def test_a_request_passes_on_to_the_sdk():
    assert rejection('{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n') is None


def test_a_notification_and_a_clients_answer_pass_on():
    assert rejection('{"jsonrpc": "2.0", "method": "notifications/initialized"}') is None
    assert rejection('{"jsonrpc": "2.0", "id": 4, "result": {}}') is None


def test_text_that_is_not_json_is_a_parse_error_with_a_null_id():
    answer = json.loads(rejection("hello\n") or "")
    assert (answer["id"], answer["error"]["code"]) == (None, -32700)


def test_json_that_is_not_a_request_is_invalid_keeping_a_readable_id():
    assert json.loads(rejection('{"id": "a", "x": 1}') or "")["id"] == "a"
    assert json.loads(rejection('{"id": true}') or "")["id"] is None
    assert json.loads(rejection("[1, 2]") or "")["error"]["code"] == -32600


def test_blank_lines_are_dropped_and_rejected_lines_answered_in_order():
    read_end, line_in = os.pipe()
    answers_out, write_end = os.pipe()
    for fd in (read_end, write_end):
        os.set_blocking(fd, False)
    os.write(line_in, b'\n  \nnope\n{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n')
    os.close(line_in)

    async def first() -> str:
        return await JsonRpcLines(LineReader(read_end), LineWriter(write_end)).__anext__()

    try:
        passed = anyio.run(first)
        os.close(write_end)
        answered = os.read(answers_out, 4096).decode()
    finally:
        os.close(read_end)
        os.close(answers_out)
    assert passed == '{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n'
    assert answered.count("\n") == 1 and '"code": -32700' in answered
