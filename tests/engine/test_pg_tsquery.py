"""A query's terms as ``to_tsquery`` text: quoted values, a column's weight label, ``&``/``|``.

Pure: no server. Whether PostgreSQL reads the text as meant (phrases, labels, any input) is the
contract suite's concern (``tests/engine/contract``), on a real server.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.pg.tsquery import all_text, any_text, value
from engine.ranking.query import sanitize


@pytest.mark.parametrize(
    ("text", "every", "some"),
    [
        ("release cadence", "'release' & 'cadence'", "'release' | 'cadence'"),
        ("title:release cadence", "'release':A & 'cadence'", "'release':A | 'cadence'"),
        ("tags:deploy body:notes", "'deploy':B & 'notes':D", "'deploy':B | 'notes':D"),
        (
            'body:"connection pool" size',
            "'connection pool':D & 'size'",
            "'connection':D | 'pool':D | 'size'",
        ),
        ("how do I rotate", "'rotate'", "'rotate'"),  # stop words out of both forms
    ],
)
def test_the_forms_as_users_type_them(text, every, some):
    terms = sanitize(text)
    assert (all_text(terms), any_text(terms)) == (every, some)


def test_no_terms_no_text():
    assert (all_text(sanitize("?! --")), any_text(sanitize("?! --"))) == (None, None)


def test_a_value_holds_the_words_the_index_holds_and_nothing_else():
    # A quote or a backslash separates words, as it does in a memory's text: it never
    # reaches to_tsquery, whatever a caller passes.
    assert value(("it's", "a\\b"), "title") == "'it s a b':A"


@pytest.mark.parametrize(
    ("words", "text"),
    [
        (("2.4",), "'2 4'"),
        (("Café",), "'cafe'"),
        (("db-01.example.com",), "'db 01 example com'"),
    ],
)
def test_a_value_is_cut_and_folded_as_the_index_text_is(words, text):
    assert value(words, None) == text


#: One quoted value (no quote or backslash inside) with an optional weight label.
VALUE = r"'[^'\\]+'(:[ABD])?"


@given(st.text(max_size=60))
def test_any_input_makes_quoted_values_joined_by_one_operator(text):
    terms = sanitize(text)
    for form, operator in ((all_text(terms), "&"), (any_text(terms), "|")):
        assert form is None or re.fullmatch(f"{VALUE}( \\{operator} {VALUE})*", form)
