"""From whatever a user typed to FTS5 query text that cannot fail.

User input never reaches ``MATCH`` raw: FTS5 has its own syntax (AND, OR, NOT, NEAR, column
filters, ``*``, ``^``, parentheses) and raises on most malformed strings. The query is reduced
to word tokens — runs of letters, marks and digits in any script — lower-cased, cut where
FTS5's tokenizer cuts the memories' text (:mod:`engine.ranking.words`, the one rule both
backends' indexes follow); a balanced double-quoted span is kept together as a phrase. Every
token is then written as a quoted FTS5 string, so no operator character or keyword survives.

Two forms are built: every content term required (AND) and any content word (OR). Stop words
are left out of both unless nothing else is left: a question's "how do I" must not be required
words, or a natural question would almost never find a memory holding all of them. The search
asks a one-row probe which form to bind. The stop list is kept to
words that carry no fact: negations (not, never, no), "can"/"cannot", "before"/"after" and
other qualifiers stay, because a memory and its wrong-fact twin often differ by exactly one.

A term may name the column it must occur in, as a search box lets one: ``title:cadence``,
``tags:deploy`` (or ``tag:``), ``body:"connection pool"``. The prefix is a filter, never a
query word, and becomes an FTS5 column filter (``title : "cadence"``); a colon anywhere else is
a separator like any other punctuation. PostgreSQL writes the same terms, with the same
columns, as ``to_tsquery`` text (:mod:`engine.pg.tsquery`), from :meth:`QueryTerms.all_terms`
and :meth:`QueryTerms.any_terms`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.ranking.words import words_of

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "quote",
    "sanitize",
]

#: A query longer than this is cut; the result says so.
MAX_TERMS = 64

STOP_WORDS = frozenset(
    """
    a an the and or of to in into at by for from with as is are was were be been being am
    it its this that these those there here he him his she her hers they them their theirs we us
    our ours you your yours i me my myself what which who whom whose how why where when
    do does did doing have has had having will would shall should may might must
    some any each such so than then too very just also about s t
    """.split()
)


#: The FTS5 columns a query term may be limited to, by the prefix a user types.
COLUMNS = {"title": "title", "body": "body", "tags": "tags", "tag": "tags"}
#: A column prefix at the start of a whitespace-separated token: ``title:`` or ``title:word``.
PREFIX = re.compile(r"^(" + "|".join(COLUMNS) + r"):", re.IGNORECASE)


@dataclass(frozen=True)
class QueryTerms:
    """The query's terms: each a tuple of words (more than one word: a phrase), with the
    column each is limited to (None: any), in the same order."""

    terms: tuple[tuple[str, ...], ...]
    truncated: bool = False
    columns: tuple[str | None, ...] = ()

    def column_of(self, index: int) -> str | None:
        return self.columns[index] if index < len(self.columns) else None

    @property
    def filtered(self) -> bool:
        """Whether some term is limited to a column."""
        return any(c is not None for c in self.columns)

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(word for term in self.terms for word in term)

    def all_terms(self) -> list[tuple[tuple[str, ...], str | None]]:
        """(term, column) of every term the all-terms form requires: single stop words out
        (phrases and column-filtered terms stay), unless stop words are all there is."""
        pairs = [(t, self.column_of(i)) for i, t in enumerate(self.terms)]
        kept = [(t, c) for t, c in pairs if len(t) > 1 or c is not None or t[0] not in STOP_WORDS]
        return kept or pairs

    def any_terms(self) -> list[tuple[tuple[str, ...], str | None]]:
        """(word, column) of the words the any-word form accepts, each a one-word term; stop
        words are dropped unless they are all there is.

        Phrases are opened into their words here: this is the lenient form, bound only when
        no memory holds every term, and a quoted span in natural text (a line of dialogue, a
        quoted error message) rarely occurs verbatim, while its words still carry the topic.
        A filtered phrase's words keep its column.
        """
        pairs = list(
            dict.fromkeys(((w,), self.column_of(i)) for i, t in enumerate(self.terms) for w in t)
        )
        kept = [(w, c) for w, c in pairs if c is not None or w[0] not in STOP_WORDS]
        return kept or pairs

    def all_form(self) -> str | None:
        """Every content term required, as FTS5 text; None when there are no terms."""
        return " AND ".join(filtered(quote(t), c) for t, c in self.all_terms()) or None

    def any_form(self) -> str | None:
        """Any content word suffices, as FTS5 text (see :meth:`any_terms`)."""
        return " OR ".join(filtered(quote(w), c) for w, c in self.any_terms()) or None


def filtered(term: str, column: str | None) -> str:
    """An FTS5 string limited to ``column`` (a name from :data:`COLUMNS`) when one is given."""
    return f"{column} : {term}" if column else term


def quote(term: tuple[str, ...]) -> str:
    """An FTS5 string (a phrase when several words). Words never hold quotes (they are letters,
    marks and digits: :func:`engine.ranking.words.words_of`)."""
    return '"' + " ".join(term) + '"'


def sanitize(text: str, max_terms: int = MAX_TERMS) -> QueryTerms:
    """Reduce free text to terms. Quoted spans are phrases only when their quote is closed; a
    column prefix (``title:``) limits the word or quoted span right after it."""
    parts = text.split('"')
    if len(parts) % 2 == 0:  # an odd number of quotes: the last one is unbalanced, ignore it
        parts[-2:] = [parts[-2] + " " + parts[-1]]
    found: list[tuple[tuple[str, ...], str | None]] = []
    cut = False
    pending: str | None = None  # a prefix typed just before a quoted span or a word
    for index, part in enumerate(parts):
        if index % 2 == 1:  # inside quotes
            words = words_of(part)
            if len(words) > 1:
                cut = cut or len(words) > max_terms
                found.append((tuple(words[:max_terms]), pending))
            else:
                found.extend(((word,), pending) for word in words)
            pending = None
            continue
        for token in part.split():
            column = pending
            pending = None
            if match := PREFIX.match(token):
                column = COLUMNS[match.group(1).lower()]
                token = token[match.end() :]
                if not token:  # "title: cadence": the filter is for what comes next
                    pending = column
                    continue
            found.extend(((word,), column) for word in words_of(token))
    unique = list(dict.fromkeys(found))
    kept = unique[:max_terms]
    columns = tuple(c for _, c in kept)
    return QueryTerms(
        tuple(t for t, _ in kept),
        truncated=cut or len(unique) > max_terms,
        columns=columns if any(columns) else (),
    )


def bare_prefix(text: str) -> str | None:
    """The first column prefix (as typed, ``title:``) of a query that holds no word at all, else
    None. Such a query names a column and nothing to look for in it: searched, it would rank
    memories by the embedding of the text "title:" and say no memory holds its words, so the
    command line and the MCP tool refuse it instead (:func:`bare_prefix_problem`)."""
    if sanitize(text).terms:
        return None
    for token in text.replace('"', " ").split():
        if match := PREFIX.match(token):
            return match.group(0)
    return None


def bare_prefix_problem(text: str) -> str | None:
    """What to tell whoever typed a query of column prefixes and no word; None otherwise."""
    prefix = bare_prefix(text)
    if prefix is None:
        return None
    return (
        f"`{prefix}` limits the word after it to a column, and the query has no word to look "
        "for; write one after it, e.g. title:release or tags:deploy"
    )
