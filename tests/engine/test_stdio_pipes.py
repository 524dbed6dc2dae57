"""The server's stdin and stdout on the event loop: whole lines in, whole answers out, and a
stray print kept off the wire."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import anyio

from engine.agents.stdio_pipes import HEAD_BYTES, LineReader, LineWriter, OverlongLine

SRC = Path(__file__).resolve().parents[2] / "src"


def read_lines(chunks: list[bytes], limit: int = 1 << 20) -> list[str | OverlongLine]:
    """Every line a LineReader (of lines up to ``limit`` bytes) yields while ``chunks`` are
    written one by one, then EOF."""
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)

    def feed() -> None:
        for chunk in chunks:
            os.write(write_end, chunk)
        os.close(write_end)

    async def collect() -> list[str | OverlongLine]:
        return [line async for line in LineReader(read_end, limit=limit)]

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


def test_undecodable_bytes_are_kept_as_surrogates_for_the_judge_to_refuse():
    """Replaced by U+FFFD they would pass on as different text (a memory's body altered)."""
    assert read_lines([b"\xff ok\n"]) == ["\udcff ok\n"]


def test_a_line_over_the_limit_comes_as_its_head_and_the_next_line_is_read():
    """However the line's bytes arrive (with its newline or before it), it comes once, as
    its head, and reading resumes after it."""
    for chunks in ([b"0123456789A", b"BCDEF\n", b"next\n"], [b"0123456789ABCDEF\nnext\n"]):
        lines = read_lines(chunks, limit=10)
        assert len(lines) == 2, lines
        assert isinstance(lines[0], OverlongLine) and lines[0].limit == 10
        assert lines[0].head.startswith(b"0123456789A")
        assert lines[1] == "next\n"


def test_a_line_as_long_as_the_limit_is_read_whole():
    assert read_lines([b"0123456789", b"\n"], limit=10) == ["0123456789\n"]


def test_an_overlong_line_keeps_only_its_head_however_long_it_grows():
    chunks = [b"{" + b"x" * 99_999] + [b"y" * 100_000] * 30 + [b"\nnext\n"]
    lines = read_lines(chunks, limit=50_000)
    assert isinstance(lines[0], OverlongLine) and lines[0].head == b"{" + b"x" * (HEAD_BYTES - 1)
    assert lines[1:] == ["next\n"]


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
        "from engine.agents.stdio_pipes import claimed\n"
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
