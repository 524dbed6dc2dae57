"""Splicing an edit into encoded bytes: only the edited span is written."""

from __future__ import annotations

import pytest

from engine.files.splice import SpliceError, splice


def test_bytes_around_the_edit_keep_their_own_spelling():
    data = b"\x87\x90 " + "\u4f1a".encode("cp932")  # 8790 decodes as 81E0 does (U+2252)
    assert splice(data, "cp932", 2, 2, "x") == data[:3] + b"x" + data[3:]


def test_a_removal_keeps_everything_else():
    data = "caf\u00e9 <b>x</b> \u20ac".encode("cp1252")
    assert splice(data, "cp1252", 5, 8, "") == data[:5] + data[8:]


def test_ascii_spliced_into_a_run_of_a_stateful_encoding_is_refused():
    data = "\u4f1a\u8b70".encode("iso2022_jp")  # ESC $ B, two characters, ESC ( B
    with pytest.raises(SpliceError):
        splice(data, "iso2022_jp", 1, 1, "x")
