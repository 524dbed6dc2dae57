"""Chunking: a body in, sentence-packed chunks out, every word kept whole and in order."""

from __future__ import annotations

import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.files.chunking import MAX_CHARS, MIN_CHARS, chunk_text, split_sentences


def long_body(seed: int = 7, sentences: int = 300) -> str:
    """A deterministic body of sentences 20-300 characters long, in paragraphs, with quotes."""
    rng = random.Random(seed)
    vocabulary = [
        "staging", "database", "credentials", "rotate", "monthly", "Ana", "deploy", "rollback",
        "port", "5432", "backup", "nightly", "café", "über", "naïve", "e.g.", "v1.2.3", "(see",
        "notes)", "'quoted'", "ticket-42", "x", "restore", "procedure", "alerts", "on-call",
    ]  # fmt: skip
    parts = []
    for index in range(sentences):
        words = [rng.choice(vocabulary) for _ in range(rng.randint(3, 40))]
        end = rng.choice([".", "!", "?", '."', ".)", "?'"])
        parts.append(" ".join(words) + end)
        parts.append("\n\n" if index % 7 == 6 else " ")
    return "".join(parts)


BODY = long_body()


# --- small bodies --------------------------------------------------------------------------


def test_empty_body_yields_no_chunks():
    assert chunk_text("") == []


def test_whitespace_only_body_yields_no_chunks():
    assert chunk_text(" \n\n\t ") == []


def test_short_body_is_one_chunk():
    assert chunk_text("Staging credentials rotate monthly. Ask Ana for access.") == [
        "Staging credentials rotate monthly. Ask Ana for access."
    ]


def test_short_multi_paragraph_body_is_one_chunk():
    assert chunk_text("First paragraph.\n\nSecond paragraph") == [
        "First paragraph. Second paragraph"
    ]


# --- sentences -----------------------------------------------------------------------------


def test_sentences_end_at_terminal_punctuation():
    assert split_sentences("One. Two! Three? Four") == ["One.", "Two!", "Three?", "Four"]


def test_blank_line_ends_a_sentence_without_punctuation():
    assert split_sentences("# Heading\n\n- item one\n- item two") == [
        "# Heading",
        "- item one\n- item two",
    ]


def test_closing_quote_stays_with_its_sentence():
    assert split_sentences('He said "stop." Then he left.') == ['He said "stop."', "Then he left."]


def test_closing_brackets_stay_with_their_sentence():
    assert split_sentences("Done (really.) Next [maybe?]) End") == [
        "Done (really.)",
        "Next [maybe?])",
        "End",
    ]


def test_dot_inside_a_word_does_not_end_a_sentence():
    assert split_sentences("Upgrade to v1.2.3 now. Then e.g.restart.") == [
        "Upgrade to v1.2.3 now.",
        "Then e.g.restart.",
    ]


# --- long bodies ---------------------------------------------------------------------------


def test_long_body_is_split_into_several_chunks():
    assert len(chunk_text(BODY)) > len(BODY) // MAX_CHARS


def test_long_body_chunks_stay_within_the_maximum():
    assert max(len(chunk) for chunk in chunk_text(BODY)) <= MAX_CHARS


def test_long_body_chunks_reach_the_minimum_except_the_last():
    chunks = chunk_text(BODY)
    assert [len(chunk) >= MIN_CHARS for chunk in chunks[:-1]] == [True] * (len(chunks) - 1)


def test_no_chunk_splits_a_word():
    source_words = set(BODY.split())
    chunk_words = {word for chunk in chunk_text(BODY) for word in chunk.split()}
    assert chunk_words <= source_words


def test_chunks_keep_every_word_in_order():
    words = [word for chunk in chunk_text(BODY) for word in chunk.split()]
    assert words == BODY.split()


def test_chunks_are_whole_sentences_joined_by_spaces():
    sentences = iter(split_sentences(BODY))
    packed = []
    for chunk in chunk_text(BODY):
        text = next(sentences)
        while len(text) < len(chunk):
            text += " " + next(sentences)
        packed.append(text)
    assert (packed, next(sentences, None)) == (chunk_text(BODY), None)


def test_short_tail_is_folded_into_the_previous_chunk():
    sentence = "word " * 99 + "end."  # 499 characters
    chunks = chunk_text(" ".join([sentence] * 4) + " Tail.")
    assert chunks[-1].endswith("end. Tail.")


def test_custom_maximum_is_respected():
    assert max(len(chunk) for chunk in chunk_text(BODY, min_chars=200, max_chars=400)) <= 400


def test_chunk_closes_below_the_minimum_only_when_the_next_sentence_would_overflow():
    chunks = chunk_text(BODY, min_chars=200, max_chars=400)
    short = [
        (len(chunk), len(split_sentences(after)[0]))
        for chunk, after in itertools.pairwise(chunks)
        if len(chunk) < 200
    ]
    assert short, "the fixture should produce some short chunks"
    assert all(size + 1 + following > 400 for size, following in short)


# --- degenerate input ----------------------------------------------------------------------


def test_single_huge_sentence_is_split_at_spaces_within_the_maximum():
    sentence = " ".join(f"word{i}" for i in range(3000))  # ~26,000 characters, no full stop
    chunks = chunk_text(sentence)
    assert max(map(len, chunks)) <= MAX_CHARS
    assert [w for chunk in chunks for w in chunk.split()] == sentence.split()


def test_single_huge_sentence_chunks_reach_the_minimum_except_the_last():
    chunks = chunk_text(" ".join(f"word{i}" for i in range(3000)))
    assert min(len(chunk) for chunk in chunks[:-1]) >= MIN_CHARS


def test_over_long_word_is_cut_into_pieces_within_the_maximum():
    word = "x" * (2 * MAX_CHARS + 500)
    chunks = chunk_text(word)
    assert [len(chunk) for chunk in chunks] == [MAX_CHARS, MAX_CHARS, 500]


def test_over_long_word_pieces_rejoin_to_the_word():
    word = "".join(chr(ord("a") + i % 26) for i in range(5000))
    assert "".join(chunk_text(word)) == word


def test_over_long_word_leaves_its_neighbours_whole():
    chunks = chunk_text("alpha beta " + "x" * 4500 + " gamma delta.")
    words = {w for chunk in chunks for w in chunk.split()}
    assert {"alpha", "beta", "gamma", "delta."} <= words


# --- properties ----------------------------------------------------------------------------

WORD = st.text(alphabet="abcdefé.!?\"')", min_size=1, max_size=12)
GAP = st.sampled_from([" ", "  ", "\n", "\n\n", " \n \n", "\t"])
TEXT = st.lists(st.tuples(WORD, GAP), max_size=120).map(
    lambda pairs: "".join(w + g for w, g in pairs)
)


@settings(max_examples=500, derandomize=True, database=None, deadline=None)
@given(TEXT)
def test_any_text_keeps_its_words_in_order(text):
    chunks = chunk_text(text, min_chars=40, max_chars=80)
    assert [w for chunk in chunks for w in chunk.split()] == text.split()


@settings(max_examples=500, derandomize=True, database=None, deadline=None)
@given(TEXT)
def test_any_text_chunks_stay_within_the_maximum(text):
    assert all(0 < len(chunk) <= 80 for chunk in chunk_text(text, min_chars=40, max_chars=80))
