"""Time windows read from query text: written dates, months, years, relative and open sides."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.ranking.when import query_window

NOW = dt.datetime(2024, 2, 1, 15, 30)


def bounds(text: str) -> tuple[str, str] | None:
    window = query_window(text, NOW)
    return window.bounds() if window else None


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("What did Elise buy on 7 Jan 2024?", "2024-01-07"),
        ("what happened on the 17th of January, 2024", "2024-01-17"),
        ("naps on January 6 2024", "2024-01-06"),
        ("the game on December 28th, 2023", "2023-12-28"),
        ("deploy of 2024-03-05 failed", "2024-03-05"),
        ("Paola's plan on 10.01.2024", "2024-01-10"),
        ("the invoice of 01/25/2024", "2024-01-25"),
        ("on 25.01.2024 in the evening", "2024-01-25"),
        ("Sept 3 2024 outage", "2024-09-03"),
    ],
)
def test_a_written_date_is_that_whole_day(text, day):
    assert bounds(text) == (f"{day} 00:00:00", f"{day} 23:59:59")


def test_slashes_with_both_parts_twelve_or_less_read_month_first():
    assert bounds("on 03/04/2024") == ("2024-03-04 00:00:00", "2024-03-04 23:59:59")


def test_dots_with_both_parts_twelve_or_less_read_day_first():
    assert bounds("on 03.04.2024") == ("2024-04-03 00:00:00", "2024-04-03 23:59:59")


def test_a_month_and_year_is_the_whole_month():
    assert bounds("hikes in February 2024") == ("2024-02-01 00:00:00", "2024-02-29 23:59:59")


def test_a_year_after_a_preposition_is_the_whole_year():
    assert bounds("the match Kevin watched in 2017") == (
        "2017-01-01 00:00:00",
        "2017-12-31 23:59:59",
    )


@pytest.mark.parametrize(
    "text",
    ["the book 2666 by Bolano", "call 555 2024 now", "a 1999 port", "version 2.0.24"],
)
def test_a_bare_number_is_not_a_year(text):
    assert bounds(text) is None


def test_an_impossible_date_is_no_window():
    assert bounds("on 31 Feb 2024") is None


def test_before_a_date_looks_back_from_it():
    assert bounds("what did she watch before 7 Jan 2024") == (
        "2023-12-08 00:00:00",
        "2024-01-06 23:59:59",
    )


def test_after_a_date_looks_forward_from_its_end():
    start, _ = bounds("what changed after 7 Jan 2024")
    assert start == "2024-01-08 00:00:00"


def test_yesterday_is_the_day_before_now():
    assert bounds("what did I decide yesterday") == ("2024-01-31 00:00:00", "2024-01-31 23:59:59")


def test_some_days_ago_centres_on_that_day():
    start, end = bounds("the incident three days ago")
    assert start <= "2024-01-29 00:00:00" and end >= "2024-01-29 23:59:59"


def test_last_week_reaches_back_two_weeks_to_now():
    assert bounds("the deploy last week") == ("2024-01-18 00:00:00", "2024-02-01 23:59:59")


def test_the_first_expression_in_the_text_wins():
    assert bounds("on 5 Jan 2024, not in 2017")[0] == "2024-01-05 00:00:00"


@pytest.mark.parametrize(
    ("text", "window"),
    [
        ("what happened on 9999-12-31", ("9999-12-31 00:00:00", "9999-12-31 23:59:59")),
        ("what changed after 9999-12-30", ("9999-12-31 00:00:00", "9999-12-31 23:59:59")),
        ("what was done until 0001-01-10", ("0001-01-01 00:00:00", "0001-01-09 23:59:59")),
    ],
)
def test_a_date_at_the_ends_of_the_calendar_reaches_the_end_not_past_it(text, window):
    # the day after 9999-12-31 or a month before 0001-01-10 is past what a datetime holds: the
    # search failed with an OverflowError for any query naming such a date
    assert bounds(text) == window


@pytest.mark.parametrize(
    "text", ["before 0001-01-01", "since 9999-12-31", "the incident 99999999999 days ago"]
)
def test_a_window_wholly_outside_the_calendar_is_none(text):
    assert bounds(text) is None


def test_a_query_without_time_has_no_window():
    assert bounds("staging database port") is None


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_any_text_gives_a_window_or_none(text):
    window = query_window(text, NOW)
    assert window is None or window.start < window.end
