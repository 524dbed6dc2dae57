"""A team store's full text is the word rule's (engine.ranking.words) before PostgreSQL's parser
sees it.

The parser is given words one space apart: it must find nothing to join across them (no number,
version, host, path or email can form).
"""

from __future__ import annotations

import pytest

from engine.pg.driver import connect
from engine.pg.schema import ensure_schema
from engine.pg.target import DatabaseTarget
from engine.ranking.words import token_text

TEXTS = [
    "after the 2.4 release, 3.14159 and -0.5",
    "upgraded to v2.4.1 (was 10.0.0-rc1) and 1e10 2e5x 0x1F",
    "/var/lib/memsift/index.conf and C:\\Users\\ana\\notes.md",
    "https://db-01.example.com:5432/x?y=1 mail ana.lopez@example.org",
    "a state-of-the-art e-mail, snake_case, <b>bold</b> &amp; don't",
    "Café Müller, naïve x²y ½ Ⅻ 東京の天気 हिन्दी Ελληνικά",
]


@pytest.fixture
def schema_conn(pg_url):  # type: ignore[no-untyped-def]
    """A connection in a store schema made by the engine (its ``memsift`` configuration)."""
    conn = connect(DatabaseTarget(pg_url, "memsift"), vectors=False)
    ensure_schema(conn)
    yield conn
    conn.close()


def parsed(conn, text: str) -> tuple[set[str], int]:  # type: ignore[no-untyped-def]
    """(lexemes, tokens) the store's configuration makes of ``text``."""
    lexemes, tokens = conn.run(
        "SELECT tsvector_to_array(v), memsift_tokens(v) "
        "FROM (SELECT to_tsvector('memsift', %s) AS v) AS t",
        (text,),
    ).fetchone()
    return set(lexemes), tokens


@pytest.mark.parametrize("text", TEXTS)
def test_the_parser_makes_of_the_rules_text_what_it_makes_of_each_word_alone(schema_conn, text):
    words = token_text(text).split()
    alone = [parsed(schema_conn, word) for word in words]

    assert parsed(schema_conn, " ".join(words)) == (
        set().union(*(lexemes for lexemes, _ in alone)),
        sum(tokens for _, tokens in alone),
    )


@pytest.mark.parametrize("text", TEXTS)
def test_no_lexeme_of_the_index_holds_a_separator(schema_conn, text):
    lexemes, _ = parsed(schema_conn, token_text(text))

    assert not [lexeme for lexeme in lexemes if set(lexeme) & set(" .-/\\@:_'&<>")]

