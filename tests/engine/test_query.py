"""The FTS5 query sanitizer: whatever a user typed in, terms and two safe MATCH forms out."""

from __future__ import annotations

import re

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.ranking.query import MAX_TERMS, STOP_WORDS, QueryTerms, bare_prefix, sanitize
from engine.sqlite.db import connect

# --- tokens --------------------------------------------------------------------------------


def test_words_are_lower_cased():
    assert sanitize("Staging DATABASE Credentials").words == ("staging", "database", "credentials")


def test_digits_are_words():
    assert sanitize("port 5432 on v2").words == ("port", "5432", "on", "v2")


def test_punctuation_separates_words():
    assert sanitize("e-mail, ana.lopez@example.org!").words == (
        "e",
        "mail",
        "ana",
        "lopez",
        "example",
        "org",
    )


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("東京の天気", ("東京の天気",)),
        ("مرحبا بالعالم", ("مرحبا", "بالعالم")),
        ("Привет Мир", ("привет", "мир")),
        ("हिन्दी भाषा", ("हिन्दी", "भाषा")),
        ("Ελληνικά", ("ελληνικά",)),
        ("café naïve", ("café", "naïve")),
    ],
    ids=["cjk", "arabic", "cyrillic", "devanagari", "greek", "latin-accents"],
)
def test_words_of_any_script_are_tokens(text, words):
    assert sanitize(text).words == words


def test_combining_marks_stay_inside_their_word():
    assert sanitize("cafe\u0301 ok").words == ("cafe\u0301", "ok")


def test_combining_marks_alone_are_not_a_word():
    assert sanitize("\u0301\u0308 \u094d").terms == ()


def test_emoji_and_symbols_are_not_words():
    assert sanitize("deploy 🚀 → ✓ done").words == ("deploy", "done")


def test_control_characters_and_nul_separate_words():
    assert sanitize("alpha\x00beta\x1fgamma\u200bdelta").words == (
        "alpha",
        "beta",
        "gamma",
        "delta",
    )


# --- FTS5 syntax is dropped ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("title:staging", ("staging",)),  # a column filter, not a word (see below)
        ("staging*", ("staging",)),
        ("^staging", ("staging",)),
        ("(staging OR db)", ("staging", "or", "db")),
        ("-staging +db", ("staging", "db")),
        ("{title body}: staging", ("title", "body", "staging")),
        ("staging; DROP TABLE files; --", ("staging", "drop", "table", "files")),
        ("'staging'", ("staging",)),
    ],
)
def test_fts5_operator_characters_are_dropped(text, words):
    assert sanitize(text).words == words


def test_fts5_keywords_become_quoted_words():
    assert sanitize("alpha NOT delta NEAR epsilon").all_form() == (
        '"alpha" AND "not" AND "delta" AND "near" AND "epsilon"'
    )
    assert sanitize("AND OR").all_form() == '"and" AND "or"'


def test_near_group_is_reduced_to_words():
    assert sanitize("NEAR(alpha beta, 5)").words == ("near", "alpha", "beta", "5")


def outside_quotes(form: str) -> set[str]:
    """The text of a MATCH form that is not inside an FTS5 string."""
    return set(form.split('"')[0::2])


def test_only_and_joins_terms_outside_quotes_in_the_all_form():
    form = sanitize('x* AND (y OR "z w") NOT ^q:r -s').all_form()
    assert outside_quotes(form) == {"", " AND "}


def test_only_or_joins_terms_outside_quotes_in_the_any_form():
    form = sanitize('x* AND (y OR "z w") NOT ^q:r -s').any_form()
    assert outside_quotes(form) == {"", " OR "}


# --- quotes --------------------------------------------------------------------------------


def test_balanced_quotes_make_a_phrase():
    assert sanitize('"rotate monthly" staging').terms == (("rotate", "monthly"), ("staging",))


def test_phrase_is_one_fts5_string_in_the_all_form():
    assert sanitize('"Rotate  monthly" staging').all_form() == '"rotate monthly" AND "staging"'


def test_phrase_punctuation_is_dropped_inside_the_phrase():
    assert sanitize('"rotate: (monthly)*"').terms == (("rotate", "monthly"),)


def test_quoted_single_word_is_a_plain_term():
    assert sanitize('"staging" db').terms == (("staging",), ("db",))


def test_unbalanced_quote_is_ignored():
    assert sanitize('rotate "monthly staging').terms == (("rotate",), ("monthly",), ("staging",))


def test_balanced_phrase_survives_a_trailing_unbalanced_quote():
    assert sanitize('"rotate monthly" staging "db host').terms == (
        ("rotate", "monthly"),
        ("staging",),
        ("db",),
        ("host",),
    )


def test_two_phrases_stay_apart():
    assert sanitize('"a b" and "c d"').terms == (("a", "b"), ("and",), ("c", "d"))


def test_empty_quotes_add_nothing():
    assert sanitize('"" staging " "').terms == (("staging",),)


# --- the two forms -------------------------------------------------------------------------


def test_all_form_requires_every_term():
    assert sanitize("staging db").all_form() == '"staging" AND "db"'


def test_any_form_accepts_any_term():
    assert sanitize("staging db").any_form() == '"staging" OR "db"'


def test_stop_words_are_dropped_from_the_any_form():
    assert sanitize("the password of the staging db").any_form() == (
        '"password" OR "staging" OR "db"'
    )


def test_stop_words_are_dropped_from_the_all_form():
    assert sanitize("how do I publish a package to the registry").all_form() == (
        '"publish" AND "package" AND "registry"'
    )


def test_only_stop_words_are_kept_in_the_all_form():
    assert sanitize("what is this").all_form() == '"what" AND "is" AND "this"'


def test_phrases_keep_their_stop_words_in_the_all_form():
    assert sanitize('"to be or not" staging').all_form() == '"to be or not" AND "staging"'


def test_only_stop_words_are_kept_in_the_any_form():
    assert sanitize("what is this").any_form() == '"what" OR "is" OR "this"'


def test_any_form_opens_phrases_into_words():
    assert sanitize('"rotate monthly" staging').any_form() == '"rotate" OR "monthly" OR "staging"'


def test_any_form_drops_stop_words_inside_phrases():
    assert sanitize('"to the db" staging').any_form() == '"db" OR "staging"'


def test_any_form_lists_each_word_once():
    assert sanitize('"staging db" staging "db host"').any_form() == '"staging" OR "db" OR "host"'


def test_negations_are_not_stop_words():
    assert sanitize("the port is not open").any_form() == '"port" OR "not" OR "open"'


def test_stop_word_list_is_lower_case_words():
    assert all(word == word.lower() and word.isalpha() for word in STOP_WORDS)


@pytest.mark.parametrize("text", ["", "   ", "*** () : ^ -+", '"', '""', "🚀 ✓"])
def test_no_words_give_no_forms(text):
    terms = sanitize(text)
    assert (terms.terms, terms.all_form(), terms.any_form()) == ((), None, None)


# --- de-duplication and truncation ---------------------------------------------------------


def test_duplicate_terms_are_removed_keeping_first_order():
    assert sanitize("Deploy staging deploy DEPLOY staging prod").terms == (
        ("deploy",),
        ("staging",),
        ("prod",),
    )


def test_phrase_and_its_words_are_different_terms():
    assert sanitize('"staging db" staging').terms == (("staging", "db"), ("staging",))


def test_repeated_phrase_is_kept_once():
    assert sanitize('"staging db" "Staging DB"').terms == (("staging", "db"),)


def test_query_over_max_terms_is_truncated_and_flagged():
    terms = sanitize(" ".join(f"w{i}" for i in range(MAX_TERMS + 8)))
    assert (len(terms.terms), terms.terms[-1], terms.truncated) == (
        MAX_TERMS,
        (f"w{MAX_TERMS - 1}",),
        True,
    )


def test_query_of_exactly_max_terms_is_not_flagged():
    terms = sanitize(" ".join(f"w{i}" for i in range(MAX_TERMS)))
    assert (len(terms.terms), terms.truncated) == (MAX_TERMS, False)


def test_duplicates_do_not_count_towards_max_terms():
    terms = sanitize(" ".join(["same"] * (MAX_TERMS * 3)))
    assert (terms.terms, terms.truncated) == ((("same",),), False)


def test_over_long_phrase_is_truncated_and_flagged():
    terms = sanitize('"' + " ".join(f"w{i}" for i in range(MAX_TERMS + 5)) + '"')
    assert (len(terms.terms[0]), terms.truncated) == (MAX_TERMS, True)


def test_custom_max_terms_is_honoured():
    assert sanitize("a b c d", max_terms=2) == QueryTerms((("a",), ("b",)), truncated=True)


# --- against a real FTS5 table -------------------------------------------------------------

ROWS = (
    "Staging database credentials rotate monthly",
    "東京の天気",
    "Привет мир",
    "हिन्दी भाषा",
    "مرحبا بالعالم",
    "café crème",
    "and or not near",
)


@pytest.fixture(scope="module")
def fts() -> apsw.Connection:
    conn = connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE t USING fts5(title, body, tags, "
        "tokenize='porter unicode61 remove_diacritics 2')"
    )
    for body in ROWS:
        conn.execute("INSERT INTO t(body) VALUES (?)", (body,))
    return conn


def match(conn: apsw.Connection, form: str | None) -> list[int]:
    if form is None:
        return []
    return [rowid for (rowid,) in conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (form,))]


@pytest.mark.parametrize(
    ("query", "rowid"),
    [
        ("ROTATING Credentials!", 1),
        ('"database credentials"', 1),
        ("東京の天気", 2),
        ("ПРИВЕТ", 3),
        ("हिन्दी", 4),
        ("مرحبا", 5),
        ("cafe", 6),
        ("cafe\u0301", 6),
        ("NOT NEAR", 7),
    ],
    ids=lambda v: str(v),
)
def test_all_form_matches_its_memory(fts, query, rowid):
    assert match(fts, sanitize(query).all_form()) == [rowid]


def test_phrase_requires_adjacent_words(fts):
    assert match(fts, sanitize('"credentials database"').all_form()) == []


def test_any_form_matches_when_all_form_does_not(fts):
    terms = sanitize("rotate the café")
    assert (match(fts, terms.all_form()), sorted(match(fts, terms.any_form()))) == ([], [1, 6])


TERM = r'(?:(?:title|body|tags) : )?"[^"]+"'
FORM = re.compile(f"{TERM}(?: (AND|OR) {TERM})*")

HOSTILE = st.lists(
    st.sampled_from(
        [
            "AND", "OR", "NOT", "NEAR", "NEAR(", "*", "^", ":", "(", ")", "-", "+", '"', "'",
            "{", "}", ",", "title:", "body:", "\x00", "\\", "%", "_", "[", "]", ";", "--", " ",
            "staging", "东京", "é", "\u0301", "\u094d", "ﷺ", "\u202e", "\ufeff", "1e9", "0x",
        ]
    ),
    max_size=40,
).map("".join)  # fmt: skip


def assert_forms_run(conn: apsw.Connection, text: str) -> None:
    terms = sanitize(text)
    for form in (terms.all_form(), terms.any_form()):
        if form is not None:
            assert FORM.fullmatch(form), form
            match(conn, form)


@settings(max_examples=2500, derandomize=True, database=None, deadline=None)
@given(st.text())
def test_any_unicode_text_gives_forms_fts5_accepts(fts, text):
    assert_forms_run(fts, text)


@settings(max_examples=2000, derandomize=True, database=None, deadline=None)
@given(HOSTILE)
def test_any_fts5_syntax_soup_gives_forms_fts5_accepts(fts, text):
    assert_forms_run(fts, text)


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(st.text(min_size=200, max_size=3000))
def test_long_text_gives_forms_fts5_accepts(fts, text):
    assert_forms_run(fts, text)


@settings(max_examples=1000, derandomize=True, database=None, deadline=None)
@given(st.text())
def test_any_text_gives_at_most_max_terms(text):
    terms = sanitize(text)
    assert len(terms.terms) <= MAX_TERMS
    assert all(0 < len(term) <= MAX_TERMS for term in terms.terms)


def test_hundred_kilobyte_query_gives_forms_fts5_accepts(fts):
    text = ('NEAR("staging" db* OR ^x) -- ' * 4000)[:100_000]
    terms = sanitize(text)
    assert (terms.truncated, match(fts, terms.any_form())) == (False, [1, 7])


def test_words_of_every_term_are_non_empty_and_quote_free():
    terms = sanitize('a"b" "c""d" e\'f "')
    assert all(word and '"' not in word for word in terms.words)


# --- column prefixes -----------------------------------------------------------------------


def test_a_column_prefix_limits_the_next_word_and_is_no_word_itself():
    terms = sanitize("title:release cadence")
    assert (terms.words, terms.all_form(), terms.any_form()) == (
        ("release", "cadence"),
        'title : "release" AND "cadence"',
        'title : "release" OR "cadence"',
    )


@pytest.mark.parametrize(
    ("text", "form"),
    [
        ("Title:Release", 'title : "release"'),
        ("tag:deploy", 'tags : "deploy"'),
        ("tags:deploy", 'tags : "deploy"'),
        ("title: cadence", 'title : "cadence"'),  # the prefix then a space: the next word
        ('body:"connection pool" size', 'body : "connection pool" AND "size"'),
        ("title:the", 'title : "the"'),  # a filtered stop word is what was asked for
    ],
)
def test_column_prefixes_as_users_type_them(text, form):
    assert sanitize(text).all_form() == form


def test_a_filtered_phrase_keeps_its_column_word_by_word_in_the_any_form():
    assert sanitize('body:"connection pool"').any_form() == 'body : "connection" OR body : "pool"'


@pytest.mark.parametrize("text", ["http://example.org: what", "a:b", "ratio 3:2", "title:"])
def test_any_other_colon_is_a_separator_and_never_a_filter(text):
    terms = sanitize(text)
    assert not terms.filtered and ":" not in "".join(terms.words)


@pytest.mark.parametrize(
    ("text", "prefix"),
    [
        ("title:", "title:"),
        ("  Tags: ?!", "Tags:"),
        ('body:"" tag:', "body:"),
        ("title::*", "title:"),
    ],
)
def test_a_query_of_column_prefixes_and_no_word_names_its_first_prefix(text, prefix):
    assert bare_prefix(text) == prefix


@pytest.mark.parametrize("text", ["", "?!", "title:release", "release title:", "a:b", "x title:"])
def test_a_query_with_a_word_or_without_a_prefix_has_no_bare_prefix(text):
    assert bare_prefix(text) is None


def test_a_column_filter_matches_only_that_column(fts):
    conn = fts
    conn.execute("INSERT INTO t(rowid, title, body) VALUES (100, 'release cadence', 'weekly')")
    conn.execute("INSERT INTO t(rowid, title, body) VALUES (101, 'weekly', 'release cadence')")
    assert (
        match(conn, sanitize("title:release cadence").all_form()),
        sorted(match(conn, sanitize("release cadence").all_form())),
    ) == ([100], [100, 101])
