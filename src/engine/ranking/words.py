"""Where text splits into the words full text matches: one rule, for the query and the index.

SQLite's full-text index is FTS5's ``unicode61`` tokenizer with ``remove_diacritics 2``: a word
is a run of letters and digits, any other character ends it, so "2.4" is the words "2" and
"4", ``db-01.example.com`` is "db", "01", "example", "com", and an email, a file path, a
hyphenated compound or ``snake_case`` falls apart the same way; case and the diacritics of
Latin letters are folded away ("Café" is "cafe"). The query's terms are cut by the same rule
(:func:`words_of`, which :func:`engine.ranking.query.sanitize` calls), so on SQLite every query
word is a word FTS5 indexed.

PostgreSQL's parser cuts differently: it keeps compound tokens whole ("2.4" a number,
``v2.4.1`` a version, a host, an email, a path, "state-of-the-art" beside its parts) and folds
no diacritics. A team store therefore never shows it raw text: the index gives ``to_tsvector``
each text as this rule cuts it (:func:`token_text`: the words, folded as FTS5 folds them, one
space apart), and the query gives ``to_tsquery`` its terms through the same function. What is
left has nothing to join (no character between two words but a space, so no number, host,
path or email can form), and whatever the parser still does to one word (in some locales it
cuts a word at a superscript digit or a combining mark) it does alike on both sides, since
both hand it the same word.

Where the rule and FTS5 still differ, on characters no memory is likely to hold, FTS5 decides
on SQLite and the rule on PostgreSQL: a private-use character, or one newer than FTS5's
Unicode tables, joins a word in FTS5 and ends it here; a combining mark other than a Latin
diacritic (a Devanagari vowel sign, say) ends a word in FTS5 and stays inside it here. A query
word FTS5 cuts further is matched there as a phrase of its pieces, so both backends still find
it.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "token_text",
    "words_of",
]

#: Runs that may hold words: ASCII letters and digits, and any character past ASCII (which
#: :func:`split_run` looks at one by one). Everything else in ASCII separates words.
RUNS = re.compile("[0-9A-Za-z\u0080-\U0010ffff]+")

#: The combining marks FTS5's ``remove_diacritics 2`` removes (graves, acutes, circumflexes,
#: tildes, macrons, breves, dots, diaereses, rings, carons, cedillas, ogoneks, ...): the marks
#: that decompose Latin letters. tests/engine/test_words.py checks the list against the
#: bundled SQLite, mark by mark.
DIACRITICS = frozenset(
    "\u0300\u0301\u0302\u0303\u0304\u0306\u0307\u0308\u0309\u030a\u030b\u030c\u030f\u0311"
    "\u031b\u0323\u0324\u0325\u0326\u0327\u0328\u032d\u032e\u0330\u0331"
)
#: Latin letters whose marks are all diacritics but which FTS5's own table does not fold.
UNFOLDED = frozenset("\u01e0\u01e1")


def is_word_char(char: str) -> bool:
    """Letters, combining marks and digits of any script make up words."""
    return unicodedata.category(char)[0] in "LMN"


def split_run(run: str) -> list[str]:
    """The lower-cased words of ``run``, character by character; a token of marks alone (no
    letter or digit) is dropped."""
    words: list[str] = []
    current: list[str] = []
    for char in run + " ":
        if is_word_char(char):
            current.append(char)
            continue
        if current:
            word = "".join(current).lower()
            if any(unicodedata.category(c)[0] in "LN" for c in word):
                words.append(word)
            current = []
    return words


def words_of(text: str) -> list[str]:
    """Lower-cased word tokens: runs of letters, marks and digits; a token of marks alone is
    dropped. (ASCII runs need no look at each character: in ASCII the rule is [0-9A-Za-z].)"""
    words: list[str] = []
    for run in RUNS.findall(text):
        if run.isascii():
            words.append(run.lower())
        else:
            words.extend(split_run(run))
    return words


@lru_cache(maxsize=4096)
def fold_char(char: str) -> str:
    """``char`` without its diacritics, as FTS5 folds it: a diacritic alone goes; a Latin
    letter made of an ASCII letter and diacritics only becomes that letter."""
    if char in DIACRITICS:
        return ""
    if char in UNFOLDED:
        return char
    parts = unicodedata.normalize("NFD", char)
    if len(parts) > 1 and parts[0].isascii() and all(m in DIACRITICS for m in parts[1:]):
        return parts[0]
    return char


def fold(word: str) -> str:
    """A lower-cased word with the diacritics FTS5's ``remove_diacritics 2`` removes."""
    if word.isascii():
        return word
    return "".join(fold_char(char) for char in word)


def token_text(text: str) -> str:
    """``text`` as the words FTS5 indexes, one space apart: what a PostgreSQL store gives its
    parser, for a chunk's full text and for a query's terms alike."""
    return " ".join(fold(word) for word in words_of(text))
