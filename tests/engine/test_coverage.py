"""The coverage test as a rule: which words of a query count, which are names, and when the
store's never having seen them makes the query uncovered."""

from __future__ import annotations

import pytest

from engine.ranking.coverage import (
    MAX_QUESTION_WORDS,
    MIN_CHUNKS,
    UNSEEN_SHARE,
    QueryWord,
    carries,
    coverage,
    lookups,
    query_words,
    without,
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


def test_an_unseen_name_of_little_weight_is_for_the_names_rule_alone():
    words = query_words("How do I write a Flask route that returns a template?")
    seen = {"write": 30, "route": 6, "returns": 40, "template": 25}
    result = coverage(words, counts_for(seen), 645)
    assert (result.names_uncovered, result.words_uncovered) == (True, False)


def test_the_seen_content_words_are_counted():
    words = query_words("what breed is kate's dog")
    assert coverage(words, counts_for({"kate": 57}), 2000).seen == 1


def test_years_and_the_names_of_months_and_days_are_dates_not_words():
    text = "Which country did Elise visit in winter 2021 - 2022 and on Monday in January?"
    words = query_words(text)
    assert [w.text for w in words] == ["country", "elise", "visit", "winter"]


def test_a_query_of_more_words_than_a_question_is_a_passage_and_not_judged():
    text = " ".join(f"word{i}" for i in range(MAX_QUESTION_WORDS + 1))
    result = coverage(query_words(text), counts_for({}), 2000)
    assert (result.judged, result.covered) == (False, True)


def test_a_question_of_the_most_words_allowed_is_judged():
    text = " ".join(f"word{i}" for i in range(MAX_QUESTION_WORDS))
    result = coverage(query_words(text), counts_for({}), 2000)
    assert (result.judged, result.words_uncovered) == (True, True)


def test_without_takes_the_words_out_and_keeps_the_rest_as_written():
    text = "Which sushi restaurant in Tokyo did Elise's friend recommend?"
    assert without(text, ["sushi", "tokyo"]) == "Which restaurant in did Elise's friend recommend?"


def test_without_every_word_leaves_nothing():
    assert without("zib, zab zob", ["zib", "zab", "zob"]) == ","


def test_a_memory_no_nearer_without_the_words_carries_them():
    assert carries(0.47, 0.31) and carries(0.47, 0.47)


def test_a_memory_nearer_without_the_words_does_not_carry_them():
    assert not carries(0.45, 0.56)


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


@pytest.mark.parametrize(
    "text",
    [
        "what didn't the mice develop",  # was judged on 'didn', a word no formal store writes
        "why won't the mice develop",
        "why doesn’t the mice develop",  # a typographic apostrophe
        "we'd say they've seen you'll see I'm sure we're told the mice develop",
    ],
)
def test_the_parts_of_a_contraction_are_no_content_words(text):
    words = [w.text for w in query_words(text)]
    assert [w for w in words if w not in ("say", "seen", "see", "sure", "told")] == [
        "mice",
        "develop",
    ]


def test_a_word_before_an_apostrophe_that_starts_no_contraction_is_kept():
    words = [w.text for w in query_words("Kate's garden and the workers' union")]
    assert words == ["kate", "garden", "workers", "union"]


def test_a_letter_elided_before_a_name_is_no_word():
    words = {w.text: w.named for w in query_words("Did O'Brien meet d'Artagnan?")}
    assert words == {"brien": True, "meet": False, "artagnan": True}


@pytest.mark.parametrize("word", ["PBA", "Rpl23", "cRCT", "BlaER1", "TV", "S3"])
def test_an_acronym_or_a_code_is_no_name(word):
    words = {w.text: w.named for w in query_words(f"Does the study of {word} hold?")}
    assert words[word.lower()] is False


@pytest.mark.parametrize("word", ["Flask", "MongoDB", "MySQL", "Tomas", "Zoë"])
def test_a_word_written_as_a_name_is_one(word):
    words = {w.text: w.named for w in query_words(f"How do I use {word} here?")}
    assert words[word.lower()] is True


@pytest.mark.parametrize(
    "text", ["pairs provided by Xrl-sizzled", "the Feuerstein-Mims syndrome", "VgrG (Tssl) tube"]
)
def test_a_part_of_a_hyphened_term_or_an_alias_in_parentheses_is_no_name(text):
    assert not any(w.named for w in query_words(text))


def test_a_name_beside_a_hyphen_with_spaces_is_one():
    words = {w.text: w.named for w in query_words("drivers - Selenium - and more")}
    assert words["selenium"] is True
