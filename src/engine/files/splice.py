"""Changing a few characters of an encoded file without encoding the rest of it again.

``forget`` edits one flag in a file that may be in any encoding a web page can declare. Decoding
the whole file and encoding it again is not a no-op in every one of them: Big5, CP950, Johab and
CP932 each spell some characters two ways, and encoding gives back only one spelling, so the
file would change far from the flag. Here only the bytes of the edited span are written; every
byte before and after it is copied as it was, and the result is decoded once more to check that
it says what was meant (in a stateful encoding such as ISO-2022-JP, ASCII spliced into a run of
other characters would not).
"""

from __future__ import annotations

import codecs


class SpliceError(ValueError):
    """The edit cannot be made without re-encoding bytes outside it."""


def splice(data: bytes, codec: str, start: int, end: int, insert: str) -> bytes:
    """``data`` (which decodes with ``codec`` to some text) with the characters
    ``text[start:end]`` replaced by ``insert`` (pure). Bytes outside the span are kept."""
    text = data.decode(codec)
    head = byte_offset(data, text, codec, start)
    tail = byte_offset(data, text, codec, end)
    try:
        middle = insert.encode(codec)
    except UnicodeEncodeError as exc:
        raise SpliceError(f"{insert!r} cannot be written in {codec}") from exc
    result = data[:head] + middle + data[tail:]
    try:
        ok = result.decode(codec) == text[:start] + insert + text[end:]
    except UnicodeDecodeError:
        ok = False
    if not ok:
        raise SpliceError(f"the edit cannot be spliced into {codec} text at character {start}")
    return result


def byte_offset(data: bytes, text: str, codec: str, chars: int) -> int:
    """Where the first ``chars`` characters of ``text`` (``data`` decoded) end in ``data``.

    Usually the length of those characters encoded again (always so for UTF-8, and for
    encodings whose two spellings of a character have the same length), checked by decoding
    that many bytes; else found by decoding byte by byte."""
    if chars == 0:
        return 0
    guess = len(text[:chars].encode(codec, errors="replace"))
    try:
        if data[:guess].decode(codec) == text[:chars]:
            return guess
    except UnicodeDecodeError:
        pass
    decoder = codecs.getincrementaldecoder(codec)()
    seen = 0
    for index in range(len(data)):
        seen += len(decoder.decode(data[index : index + 1]))
        if seen == chars:
            return index + 1
        if seen > chars:
            break
    raise SpliceError(f"character {chars} does not start on a byte boundary in {codec}")
