"""The coverage test as a rule: which words of a query count, which are names, and when the
store's never having seen them makes the query uncovered."""

from __future__ import annotations

import pytest

from engine.ranking.coverage import (
    MIN_CHUNKS,
    UNSEEN_SHARE,
    QueryWord,
    coverage,
    lookups,
    query_words,
)


def test_content_words_are_kept_once_and_stop_words_left_out():
    words = query_words("How do I rotate the staging credentials and rotate them again?")
    assert [w.text for w in words] == ["rotate", "staging", "credentials", "again"]


def test_a_capitalised_word_past_the_first_is_a_name():
    words = {w.text: w.named for w in query_words("How do I write a Flask route?")}
    assert words == {"write": False, "flask": True, "route": False}


def test_a_capital_that_starts_a_sentence_is_no_name():
    words = {w.text: w.named for w in query_words("Deploys fail. Rollback works?")}
    assert words == {"deploys": False, "fail": False, "rollback": False, "works": False}


def test_words_inside_a_skipped_span_are_left_out():
    text = "what pasta did we eat on 29 Dec 2023"
    start = text.index("29")
    assert [w.text for w in query_words(text, skip=[(start, len(text))])] == ["pasta", "eat"]


def test_no_more_words_than_the_search_binds():
    assert len(query_words(" ".join(f"w{i}" for i in range(500)), limit=64)) == 64


def test_long_words_are_looked_up_also_by_near_spelling_prefixes():
    assert lookups([QueryWord("japanese", True), QueryWord("dog", False)]) == [
        ("japanese", False),
        ("dog", False),
        ("japanes", True),
        ("japane", True),
    ]


def counts_for(seen: dict[str, int], near: dict[str, int] | None = None):  # type: ignore[no-untyped-def]
    found = {(w, False): n for w, n in seen.items()}
    found.update({(w, True): n for w, n in (near or {}).items()})
    return found


def test_a_query_whose_words_the_store_holds_is_covered():
    words = query_words("rotate staging credentials")
    result = coverage(words, counts_for({"rotate": 3, "staging": 40, "credentials": 5}), 500)
    assert result.covered and result.unseen == ()


def test_an_unseen_name_makes_the_query_uncovered_however_little_it_weighs():
    words = query_words("How do I write a Flask route that returns a template?")
    seen = {"write": 30, "route": 6, "returns": 40, "template": 25}
    result = coverage(words, counts_for(seen), 645)
    assert (result.covered, result.unseen_names) == (False, ("flask",))


def test_unseen_words_carrying_half_the_information_make_it_uncovered():
    words = query_words("what breed is kate's dog")
    result = coverage(words, counts_for({"kate": 57}), 2000)
    assert result.unseen == ("breed", "dog") and result.unseen_share >= UNSEEN_SHARE
    assert not result.covered


def test_one_unseen_word_among_rare_seen_ones_stays_covered():
    words = query_words("which football club is elise a fan of")
    result = coverage(words, counts_for({"club": 2, "fan": 11, "elise": 243}), 2000)
    assert result.unseen == ("football",) and result.covered


def test_a_near_spelling_counts_as_seen():
    words = query_words("Which Japanese desserts did Elise eat?")
    counts = counts_for({"desserts": 7, "elise": 243, "eat": 2}, near={"japanes": 1})
    assert coverage(words, counts, 2000).covered


def test_a_store_too_small_is_not_judged():
    words = query_words("How do I write a Flask route?")
    result = coverage(words, counts_for({}), MIN_CHUNKS - 1)
    assert (result.judged, result.covered) == (False, True)


@pytest.mark.parametrize("text", ["", "the and of", "?!"])
def test_a_query_without_content_words_is_covered(text):
    assert coverage(query_words(text), {}, 1000).covered


def test_the_first_word_of_a_quoted_turn_is_no_name():
    text = 'Asked <Bart>: "Oh, magic again" <Ann>: "Yes Kate"'
    words = {w.text: w.named for w in query_words(text)}
    assert words["oh"] is False and words["yes"] is False
    assert words["bart"] is True and words["ann"] is True and words["kate"] is True


def test_a_capital_after_a_line_break_or_a_colon_is_no_name():
    words = {w.text: w.named for w in query_words("Question: Deploys\nRollback")}
    assert words == {"question": False, "deploys": False, "rollback": False}
