"""Snippets bold the words of a memory that look like a query word: same start, any case,
only at the start of a word, and trim around the first of them."""

from __future__ import annotations

import re

from engine.ranking.query import sanitize
from engine.search import highlight, trim, word_pattern


def words_of(query: str) -> re.Pattern[str]:
    words = word_pattern(sanitize(query))
    assert words is not None
    return words


def test_words_are_bolded_in_any_case_and_with_any_ending():
    words = words_of("rotate credentials")

    text = "We Rotated the CREDENTIALS monthly; rotation is scripted."

    assert highlight(text, words) == (
        "We **Rotated** the **CREDENTIALS** monthly; **rotation** is scripted."
    )


def test_a_stem_inside_a_word_is_not_a_match():
    words = words_of("port")

    assert highlight("the airport and the port", words) == "the airport and the **port**"


def test_a_query_without_words_bolds_nothing():
    assert word_pattern(sanitize("!!! ???")) is None
    assert highlight("anything at all", None) == "anything at all"


def test_a_long_text_is_trimmed_around_the_first_query_word():
    words = words_of("lighthouse")
    text = "filler " * 200 + "the lighthouse keeper " + "tail " * 200

    snippet = trim(text, words)

    assert "lighthouse" in snippet
    assert snippet.startswith("…") and snippet.endswith("…")
    assert len(snippet) < 400
