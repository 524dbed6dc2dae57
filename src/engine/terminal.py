"""Text from a store made safe to print on a terminal.

Titles, bodies, snippets and even file names come from memory files, which anyone (or any
agent) may have written. A terminal obeys control characters: ``ESC ]0;…BEL`` retitles the
window, colour codes repaint what follows, a carriage return overwrites a line, a bidi override
makes ``txt.exe`` read as ``exe.txt``, and a newline in a file name fakes an extra line of
output. Every human-readable line memsift prints passes through :func:`printable`, which shows
such characters as visible escapes instead; ``--json`` output is left exact (JSON escapes what
it must, and a program reading it wants the real text).
"""

from __future__ import annotations

import re

#: DEL and C1 controls; bidi embeddings, overrides, isolates and marks; the Unicode line and
#: paragraph separators; lone surrogates (an undecodable byte of a file name).
OTHER_UNSAFE = r"\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
#: One-line fields (titles, paths, reasons, messages): every C0 control too.
SINGLE_LINE = re.compile(rf"[\x00-\x1f{OTHER_UNSAFE}]")
#: Running text (a memory printed by ``read``): tab, newline and a CR that ends a line stay.
MULTI_LINE = re.compile(rf"\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f{OTHER_UNSAFE}]")

NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape(char: str) -> str:
    """One unsafe character as a visible escape: ``\\n``, ``\\x1b``, ``\\u202e``; a
    surrogate standing for an undecodable byte shows that byte (``\\xff``)."""
    if char in NAMED:
        return NAMED[char]
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, multiline: bool = False) -> str:
    """``text`` with every control, bidi and separator character escaped; with ``multiline``,
    newlines, tabs and CRLF line ends are kept (for a whole memory printed by ``read``)."""
    pattern = MULTI_LINE if multiline else SINGLE_LINE
    return pattern.sub(lambda m: escape(m.group(0)), text)
