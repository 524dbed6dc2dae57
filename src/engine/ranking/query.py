"""From whatever a user typed to FTS5 query text that cannot fail.

User input never reaches ``MATCH`` raw: FTS5 has its own syntax (AND, OR, NOT, NEAR, column
filters, ``*``, ``^``, parentheses) and raises on most malformed strings. The query is reduced
to word tokens — runs of letters, marks and digits in any script — lower-cased; a balanced
double-quoted span is kept together as a phrase. Every token is then written as a quoted FTS5
string, so no operator character or keyword survives.

Two forms are built: every content term required (AND) and any content word (OR). Stop words
are left out of both unless nothing else is left: a question's "how do I" must not be required
words, or a natural question would almost never find a memory holding all of them. The search
asks a one-row probe which form to bind. The stop list is kept to
words that carry no fact: negations (not, never, no), "can"/"cannot", "before"/"after" and
other qualifiers stay, because a memory and its wrong-fact twin often differ by exactly one.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

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


@dataclass(frozen=True)
class QueryTerms:
    """The query's terms: each a tuple of words (more than one word: a phrase)."""

    terms: tuple[tuple[str, ...], ...]
    truncated: bool = False

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(word for term in self.terms for word in term)

    @property
    def content_terms(self) -> tuple[tuple[str, ...], ...]:
        """The terms that carry meaning: single stop words out (phrases stay whole), unless
        stop words are all there is, in which case they are the query."""
        kept = tuple(t for t in self.terms if len(t) > 1 or t[0] not in STOP_WORDS)
        return kept or self.terms

    def all_form(self) -> str | None:
        """Every content term required; None when there are no terms."""
        return " AND ".join(quote(t) for t in self.content_terms) or None

    def any_form(self) -> str | None:
        """Any word suffices; stop words are dropped unless they are all there is.

        Phrases are opened into their words here: this is the lenient form, bound only when
        no memory holds every term, and a quoted span in natural text (a line of dialogue, a
        quoted error message) rarely occurs verbatim, while its words still carry the topic.
        """
        words = list(dict.fromkeys(self.words))
        kept = [w for w in words if w not in STOP_WORDS]
        return " OR ".join(quote((w,)) for w in (kept or words)) or None


def quote(term: tuple[str, ...]) -> str:
    """An FTS5 string (a phrase when several words). Words never hold quotes; see words_of."""
    return '"' + " ".join(term) + '"'


def is_word_char(char: str) -> bool:
    """Letters, combining marks and digits of any script make up words."""
    return unicodedata.category(char)[0] in "LMN"


def words_of(text: str) -> list[str]:
    """Lower-cased word tokens; a token of marks alone (no letter or digit) is dropped."""
    words: list[str] = []
    current: list[str] = []
    for char in text + " ":
        if is_word_char(char):
            current.append(char)
            continue
        if current:
            word = "".join(current).lower()
            if any(unicodedata.category(c)[0] in "LN" for c in word):
                words.append(word)
            current = []
    return words


def sanitize(text: str, max_terms: int = MAX_TERMS) -> QueryTerms:
    """Reduce free text to terms. Quoted spans are phrases only when their quote is closed."""
    parts = text.split('"')
    if len(parts) % 2 == 0:  # an odd number of quotes: the last one is unbalanced, ignore it
        parts[-2:] = [parts[-2] + " " + parts[-1]]
    terms: list[tuple[str, ...]] = []
    cut = False
    for index, part in enumerate(parts):
        words = words_of(part)
        if index % 2 == 1 and len(words) > 1:
            cut = cut or len(words) > max_terms
            terms.append(tuple(words[:max_terms]))
        else:
            terms.extend((word,) for word in words)
    unique = list(dict.fromkeys(terms))
    return QueryTerms(tuple(unique[:max_terms]), truncated=cut or len(unique) > max_terms)
