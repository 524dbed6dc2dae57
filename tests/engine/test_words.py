"""The word rule (engine.ranking.words): where text splits into the words full text matches.

One rule for the query's terms and for a PostgreSQL store's index text, and it is FTS5's: the
tests hold it to the tokenizer the SQLite index uses (``unicode61 remove_diacritics 2``, in the
SQLite apsw bundles), so both backends index and query the same words.
"""

from __future__ import annotations

import unicodedata

import apsw
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.ranking.words import DIACRITICS, fold, split_run, token_text, words_of


def fts5_words(text: str) -> list[str]:
    """The tokens FTS5 makes of ``text`` with the SQLite index's tokenizer (before stemming)."""
    conn = apsw.Connection(":memory:")
    tokenizer = conn.fts5_tokenizer("unicode61", ["remove_diacritics", "2"])
    return [token[2] for token in tokenizer(text.encode(), apsw.FTS5_TOKENIZE_DOCUMENT, None)]


COMPOUNDS = [
    ("after the 2.4 release", "after the 2 4 release"),
    ("3.14159 and -0.5", "3 14159 and 0 5"),
    ("upgraded to v2.4.1 (was 10.0.0-rc1)", "upgraded to v2 4 1 was 10 0 0 rc1"),
    ("/var/lib/memsift/index.conf", "var lib memsift index conf"),
    (r"C:\Users\ana\notes.md", "c users ana notes md"),
    ("https://db-01.example.com:5432/x?y=1", "https db 01 example com 5432 x y 1"),
    ("mail ana.lopez@example.org", "mail ana lopez example org"),
    ("a state-of-the-art e-mail", "a state of the art e mail"),
    ("snake_case and CamelCase", "snake case and camelcase"),
    ("don't, don’t — stop…", "don t don t stop"),
]


@pytest.mark.parametrize(("text", "words"), COMPOUNDS, ids=[t for t, _ in COMPOUNDS])
def test_compound_tokens_split_into_their_words(text, words):
    assert token_text(text) == words


@pytest.mark.parametrize(("text", "_"), COMPOUNDS, ids=[t for t, _ in COMPOUNDS])
def test_compound_tokens_split_as_fts5_splits_them(text, _):
    assert token_text(text).split() == fts5_words(text)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Café Müller, naïve façade", "cafe muller naive facade"),
        ("cafe\u0301 (decomposed)", "cafe decomposed"),
        ("Ελληνικά Привет", "ελληνικά привет"),  # only Latin letters lose their marks
        ("東京の天気", "東京の天気"),
        ("हिन्दी भाषा", "हिन्दी भाषा"),
        ("Straße ØRESUND łódź", "straße øresund łodz"),
        ("x² ½ Ⅻ ١٢٣", "x² ½ ⅻ ١٢٣"),  # digits and numerals of any kind are word characters
    ],
)
def test_letters_of_any_script_are_words_lower_cased_latin_diacritics_folded(text, words):
    assert token_text(text) == words


@pytest.mark.parametrize(
    "text",
    [
        "Café Müller, naïve façade",
        "cafe\u0301 (decomposed)",
        "Ελληνικά Привет",
        "Straße ØRESUND łódź",
        "Ǖber ǘ Ḉ ḝ ắ",  # letters of two diacritics
    ],
)
def test_letters_fold_as_fts5_folds_them(text):
    assert token_text(text).split() == fts5_words(text)


def test_the_diacritics_are_those_fts5_removes_inside_a_word():
    marks = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)).startswith("M")]
    removed = {mark for mark in marks if fts5_words(f"e{mark}x") == ["ex"]}
    assert removed == DIACRITICS


def test_folding_never_changes_what_fts5_makes_of_a_word():
    # The rule folds only what FTS5 folds the same way, so a folded query word is a word the
    # SQLite index holds (a letter FTS5 folds and the rule keeps is FTS5's to fold there).
    changed = [
        char
        for c in range(0x80, 0x110000)
        if not 0xD800 <= c <= 0xDFFF and fold((char := chr(c)).lower()) != char.lower()
    ]
    assert changed  # the Latin letters with diacritics, and the diacritics themselves
    assert [c for c in changed if fts5_words(f"x{fold(c.lower())}x") != fts5_words(f"x{c}x")] == []


def test_a_word_of_marks_alone_is_no_word():
    assert words_of("\u0301\u0308 \u094d ok") == ["ok"]


def test_the_ascii_path_cuts_as_the_character_rule_does():
    assert words_of("Port 5432, v2.4!") == split_run("Port 5432, v2.4!") == [
        "port",
        "5432",
        "v2",
        "4",
    ]


@given(st.text(max_size=80))
def test_words_of_any_text_are_the_character_rules_words(text):
    assert words_of(text) == split_run(text)


#: Characters FTS5 and the rule classify alike (the rule's Unicode tables are Python's, FTS5's
#: its own; they differ on private-use characters, on marks that are not Latin diacritics and
#: on characters newer than FTS5's tables, which the module's docstring names).
ALIKE = (
    "abcxyzABCXYZ0123456789 .,;:!?-_/\\@#$%^&*()[]{}<>'\"`~|+=\t\n"
    "éèêëàâäôöüçñÉÀÇÜ\u0301\u0308ßøł"
    "αβγάέΩ жзиЖ 東京の 한국 ١٢ ²"
    "\u00a0\u2014\u2013\u2019\u201c\u201d\u2026\u00b7\u2022"
)


@given(st.text(alphabet=ALIKE, max_size=60))
def test_any_text_of_common_characters_splits_and_folds_as_fts5_does(text):
    assert token_text(text).split() == fts5_words(text)


@given(st.text(max_size=80))
def test_the_index_text_holds_only_word_characters_and_single_spaces(text):
    made = token_text(text)
    assert made == " ".join(made.split())
    assert all(unicodedata.category(c)[0] in "LMN" for c in made.replace(" ", ""))
