"""A name a query gives, against the names a store writes (engine.ranking.names)."""

from __future__ import annotations

from collections import Counter

import pytest

from engine.ranking.names import (
    StoreNames,
    alike,
    by_position,
    edits,
    folded,
    spread,
    store_names,
)


def written(counts: dict[str, int], read: int = 100, lower: dict[str, int] | None = None):
    return StoreNames(Counter(counts), read, Counter(lower or {}))


@pytest.mark.parametrize(
    ("word", "expected"),
    [("Muhhamed", "muhamed"), ("Nicolas", "nikolas"), ("Aqib", "akib"), ("Joseph", "josef"),
     ("Zoë", "soe"), ("Elize", "elise")],
)
def test_folding_keeps_what_spellings_of_a_name_share(word, expected):
    assert folded(word) == expected


@pytest.mark.parametrize(
    ("store", "query"), [("Łukasz", "Lukasz"), ("Ørsted", "Orsted"), ("Ærø", "Aero"),
                         ("Đorđe", "Dorde"), ("Strauß", "Strauss")],
)
def test_folding_reads_latin_letters_no_accent_mark_can_be_taken_from(store, query):
    # "Łukasz" decomposes to no "L" and a mark: no accent folding reached it, nor did FTS5
    assert folded(store) == folded(query)


def test_a_vowel_changed_into_another_is_half_an_edit():
    assert (edits("muhamad", "muhamed"), edits("akim", "akib")) == (0.5, 1.0)


def test_two_letters_swapped_are_one_edit():
    assert edits("nerbas", "nebras") == 1.0


def test_a_name_spelt_with_other_vowels_is_the_stores():
    assert alike("mohammed", written({"Muhhamed": 3, "Market": 40})) == "Muhhamed"


def test_a_name_spelt_with_other_letters_for_one_sound_is_the_stores():
    assert alike("aqib", written({"Akib": 2})) == "Akib"


def test_a_name_one_whole_edit_from_one_of_the_stores_own_is_taken_for_it():
    assert alike("akim", written({"Akib": 70})) == "Akib"


def test_a_name_one_whole_edit_from_a_rare_name_is_not():
    assert alike("akim", written({"Akib": 3})) is None


def test_a_short_name_is_not_taken_for_an_own_name_a_whole_edit_away():
    assert alike("bet", written({"Ben": 90})) is None


def test_a_word_written_in_lower_case_as_often_is_no_name():
    assert alike("tomas", written({"Times": 90}, lower={"times": 90})) is None


@pytest.mark.parametrize(
    ("name", "store"),
    [("tomas", "Times"), ("raid", "Read"), ("tokyo", "Take"), ("flask", "False"),
     ("celery", "Clear")],
)
def test_a_foreign_name_is_not_taken_for_a_common_capitalised_word(name, store):
    assert alike(name, written({store: 90}, lower={store.lower(): 95})) is None


def test_a_name_a_chat_types_in_lower_case_in_many_chunks_is_the_stores():
    assert alike("eliza", written({"Elise": 1}, lower={"elise": 40})) == "elise"


def test_a_short_name_is_not_taken_for_a_common_lower_case_word():
    assert alike("thea", written({}, lower={"they": 60, "then": 60})) is None


def test_names_start_alike():
    assert alike("muhammad", written({"Buhammad": 50})) is None


def test_a_chunk_counts_a_name_once():
    names = store_names(["Akib: hi Akib", "Muhhamed: hey", "no names here"])
    assert (names.chunks, names.read) == (Counter({"Akib": 1, "Muhhamed": 1}), 3)


def test_names_past_latin_1_are_read_from_the_store():
    names = store_names(["Łukasz, Žofia and Σωκράτης met Сергей"])
    assert set(names.chunks) == {"Łukasz", "Žofia", "Σωκράτης", "Сергей"}


def test_a_name_the_store_writes_with_a_letter_of_its_own_is_the_stores():
    assert alike("lukasz", store_names(["Łukasz reviewed it"] * 3)) == "Łukasz"


def test_a_capitalised_word_is_counted_in_lower_case_too():
    names = store_names(["Read this.", "read that", "then read"])
    assert (names.chunks["Read"], names.lower["read"], names.name("Read")) == (1, 2, False)


def test_a_sample_spreads_its_ids_over_the_store():
    assert spread(1, 1000, 4) == [1, 251, 501, 751]


def test_a_small_store_is_read_whole():
    assert (spread(5, 8, 10), spread(None, None, 10)) == ([5, 6, 7, 8], [])


def test_a_store_without_freed_ids_is_sampled_by_id():
    assert (by_position(1, 5000, 5000, 1000), by_position(1, 800, 500, 1000)) == (False, False)


def test_a_store_with_freed_ids_is_sampled_by_position():
    assert by_position(1, 9000, 3000, 1000)
