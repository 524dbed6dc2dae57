"""A query's terms as ``to_tsquery`` text, column prefixes included.

The fts arm's PostgreSQL form binds this text at ``?1`` and reads it with ``to_tsquery`` in
the store's ``memsift`` configuration. ``to_tsquery`` raises on malformed text, so nothing a
user typed reaches it as typed: the terms are those of :func:`engine.ranking.query.sanitize`
(words of letters, marks and digits), each written as a quoted tsquery value (``'release'``),
joined by ``&`` or ``|`` only; a value holds nothing but the rule's words and spaces, so no
quote or backslash can reach ``to_tsquery`` whatever a caller passes. Inside
quotes ``to_tsquery`` runs the configuration's parser and stemmer, and a quoted span of several
words becomes a phrase (``'connect' <-> 'pool'``), as ``websearch_to_tsquery`` made of the
same quoted terms before. The words reach the parser as the index's text reached it
(:func:`engine.ranking.words.token_text`: folded as FTS5 folds them), so the parser makes of
a query word exactly the lexemes it made of that word in a memory.

A term limited to a column carries that column's weight label, which the chunk's ``tsvector``
gives every position (:data:`engine.pg.indexdb.TERMS`: title A, tags B, body D): ``title:release``
is ``'release':A``, which matches only a title's "release", as FTS5's ``title : "release"``
does; the arm's BM25 then counts that term's occurrences in that column only.
"""

from __future__ import annotations

from engine.ranking.query import QueryTerms
from engine.ranking.words import token_text

#: The weight label each column's words carry in a chunk's ``tsvector``.
LABELS = {"title": "A", "tags": "B", "body": "D"}


def value(words: tuple[str, ...], column: str | None) -> str:
    """One quoted tsquery value (a phrase when several words), with its column's label: the
    words as the index holds them (:func:`engine.ranking.words.token_text`)."""
    return f"'{token_text(' '.join(words))}'" + (f":{LABELS[column]}" if column else "")


def all_text(terms: QueryTerms) -> str | None:
    """Every content term required; None when there are no terms."""
    return " & ".join(value(t, c) for t, c in terms.all_terms()) or None


def any_text(terms: QueryTerms) -> str | None:
    """Any content word suffices (phrases opened into their words, as on SQLite)."""
    return " | ".join(value(w, c) for w, c in terms.any_terms()) or None
