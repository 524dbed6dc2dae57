"""Snippets bold the words of a memory that look like a query word: same start, any case,
only at the start of a word, and trim around the first of them."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

import pytest

from engine.ranking.query import sanitize
from engine.search import (
    WordPattern,
    first_word,
    highlight,
    plain,
    snippet_for,
    trim,
    word_pattern,
)


def words_of(query: str) -> WordPattern:
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


def random_queries_and_texts(
    seed: int, ascii_letters: str, longest: int
) -> Iterator[tuple[str, WordPattern, str]]:
    """Queries of a few stems and texts of those letters, a third of them also holding letters
    that fold to ASCII ones (the Kelvin sign, the long s) or none at all."""
    rnd = random.Random(seed)
    letters = ascii_letters + "\u00e9\u017f\u212a"
    for _ in range(3000):
        query = " ".join(
            "".join(rnd.choice("abks0_K") for _ in range(rnd.randint(1, 5)))
            for _ in range(rnd.randint(1, 3))
        )
        words = word_pattern(sanitize(query))
        if words is None:
            continue
        pool = letters if rnd.random() < 0.3 else ascii_letters
        yield query, words, "".join(rnd.choice(pool) for _ in range(rnd.randint(0, longest)))


def test_the_first_query_word_is_found_where_the_pattern_would_find_it():
    # trim looks for it with str.find when text and stems are ASCII; case, word boundaries
    # ("_" is part of a word) and letters that fold to ASCII ones (the Kelvin sign, the long
    # s) must come out as the pattern's own search has them.
    for query, words, text in random_queries_and_texts(7, "abkKs0_ .,-'\n", 50):
        found = words.search(text)
        assert first_word(text, words) == (found.start() if found else None), (query, text)


def test_words_are_bolded_where_the_pattern_would_bold_them():
    # highlight finds the words with str.find when text and stems are ASCII, the way
    # first_word finds the first: the same cases, boundaries and folded letters as above,
    # and the ellipsis trim puts where it cut read as the pattern reads it.
    for query, words, text in random_queries_and_texts(11, "abkKs0_ .,-'\n*\u2026", 60):
        expected = re.compile(words.pattern, re.IGNORECASE).sub(lambda m: f"**{m[0]}**", text)
        assert highlight(text, words) == expected, (query, text)


def test_a_query_pattern_is_compiled_only_when_a_text_needs_it():
    words = words_of("rotate")
    assert highlight("We rotated it", words) == "We **rotated** it"
    assert words._compiled is None  # type: ignore[attr-defined]
    assert highlight("rotation \u00fcber", words) == "**rotation** \u00fcber"
    assert words._compiled is not None  # type: ignore[attr-defined]


def test_a_trimmed_ascii_snippet_is_bolded_without_compiling_the_pattern():
    words = words_of("lighthouse keeper")
    text = "filler " * 200 + "the lighthouse keeper " + "tail " * 200

    snippet = snippet_for([(text, None)], words, None)

    assert snippet.startswith("\u2026") and snippet.endswith("\u2026")
    assert "**lighthouse** **keeper**" in snippet
    assert words._compiled is None  # type: ignore[attr-defined]


# --- the file's own markup is gone before query words are bolded ----------------------------


def test_bold_in_the_file_never_nests_with_the_highlight():
    words = words_of("port")
    chunks = [("Connect through **PgBouncer on port 6432** only.", None)]
    assert snippet_for(chunks, words, None) == "Connect through PgBouncer on **port** 6432 only."


@pytest.mark.parametrize(
    ("markdown", "text"),
    [
        ("*emphasis* and _this_ and __that__", "emphasis and this and that"),
        ("run `memsift index` first", "run memsift index first"),
        ("see [the runbook](https://example.org/runbook) now", "see the runbook now"),
        ("![a diagram](d.png) shows it", "a diagram shows it"),
        ("## Rotation\nMonthly.", "Rotation\nMonthly."),
        ("> quoted advice", "quoted advice"),
        ("a <b>bold</b> word", "a  bold  word"),
    ],
)
def test_markdown_markup_is_stripped_and_its_words_kept(markdown, text):
    assert plain(markdown) == text


@pytest.mark.parametrize("text", ["snake_case_name", "2*3*4 = 24", "a < b and c > d", "x_1"])
def test_identifiers_and_arithmetic_are_left_alone(text):
    assert plain(text) == text


# --- the fast path strips exactly what the plain patterns strip -----------------------------

#: Markdown's markup as one pattern per kind, each run over the whole text: what ``plain``
#: must give, however it skips work (a pattern not run on a text without its marks, emphasis
#: matched mark by mark).
REFERENCE = (
    (r"!\[([^\]]*)\]\([^)]*\)", r"\1", 0),
    (r"\[([^\]]+)\]\([^)]*\)", r"\1", 0),
    (r"\[([^\]]+)\]\[[^\]]*\]", r"\1", 0),
    (r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>", " ", 0),
    (r"^\s{0,3}(?:#{1,6}|>+)\s*", "", re.MULTILINE),
    (r"^\s*(?:[-*_]\s*){3,}$", " ", re.MULTILINE),
    (r"`+", "", 0),
    (r"(?<![\w*])(\*{1,3}|_{1,3})(?=\S)|(?<=\S)(\*{1,3}|_{1,3})(?![\w*])", "", 0),
)


def reference_plain(text: str) -> str:
    for pattern, replacement, flags in REFERENCE:
        text = re.sub(pattern, replacement, text, flags=flags)
    return text


def test_plain_strips_what_every_pattern_run_on_the_whole_text_strips():
    rng = random.Random(22)
    # Every mark the patterns look for, words, spaces and line ends, in short texts where
    # marks meet each other (a run of four stars, a tag between a bracket and a parenthesis).
    pieces = [*"*_`#>-[]()!a7 \n", "<b>", "</i>", "  "]
    texts = ["".join(rng.choices(pieces, k=rng.randint(0, 14))) for _ in range(30_000)]
    texts += ["[x]<b>(y)", "`*`x*", "****a****", "__ a __", "_a_b_", "* * *\n- - -", "a*b*"]

    differing = [text for text in texts if plain(text) != reference_plain(text)]

    assert differing == []
