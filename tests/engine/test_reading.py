"""Reading one memory file: only a regular file, never past the size limit, never blocking."""

from __future__ import annotations

import os
import threading

import pytest

from engine.files.reading import Unreadable, read_regular


def test_a_regular_file_is_read_with_its_stat(tmp_path):
    path = tmp_path / "a.md"
    path.write_bytes(b"# A\n\nalpha")
    data, info = read_regular(path, 100)
    assert data == b"# A\n\nalpha" and info.st_size == len(data)


def test_a_file_at_the_limit_is_read_and_one_byte_more_is_refused(tmp_path):
    path = tmp_path / "a.md"
    path.write_bytes(b"x" * 10)
    assert read_regular(path, 10)[0] == b"x" * 10
    with pytest.raises(Unreadable, match="10 bytes is over the 9-byte limit"):
        read_regular(path, 9)


def test_a_symlink_put_in_place_after_the_walk_is_not_followed(tmp_path):
    (tmp_path / "target.md").write_bytes(b"# T\n\nsecret")
    (tmp_path / "a.md").symlink_to(tmp_path / "target.md")
    with pytest.raises(Unreadable, match="symlink"):
        read_regular(tmp_path / "a.md", 100)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_pipe_put_in_place_after_the_walk_is_refused_without_blocking(tmp_path):
    path = tmp_path / "a.md"
    os.mkfifo(path)
    outcome: list[object] = []

    def attempt() -> None:
        try:
            outcome.append(read_regular(path, 100))
        except Unreadable as exc:
            outcome.append(exc.reason)

    reader = threading.Thread(target=attempt, daemon=True)
    reader.start()
    reader.join(timeout=60)
    blocked = reader.is_alive()
    if blocked:  # stuck in open(): let it go so the suite goes on, then fail
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        reader.join()
    assert not blocked
    assert outcome == ["a named pipe, not a regular file (only regular files are memories)"]
