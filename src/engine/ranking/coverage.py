"""Whether the store has ever seen what a query is about: its words, against the store's text.

The similarity floor (:mod:`engine.ranking.floor`) tells nonsense from a question: a string of
made-up words lands below it. It cannot tell a question the store answers from a question in
the store's own domain about something it never mentions ("how do I write a Flask route" on
a store of Python package docs without Flask; "what is the name of Elise's parrot" on a chat
where Elise never speaks of one): the semantic arm finds the topic, and the topic is close.
What such a question lacks is in its words. The store has never written the thing the
question is about, so no memory can hold its answer:

- a **name** the query gives (a word it capitalises past its first, as people write names:
  ``Flask``, ``MongoDB``, ``Tomas``) that no chunk holds, or
- words no chunk holds that carry at least half of the query's information (each word
  weighed by its inverse chunk frequency, an unseen word the most).

Either makes the query *uncovered*: the search then answers only from a memory that is near
in meaning as well (:data:`NEAR`), not from one above the store's floor alone. A near
spelling counts as seen (a word the store holds that starts with the query word cut by one or
two letters, kept to five: "Japanese" is covered by "Japan", "practising" by "practice").

Measured on the three corpora of ``benchmarks/abstention.py`` (questions nobody on this
project tuned the floor on): it withholds most near misses and no answerable question; the
Measured page has the figures. This module is pure: the counts come from the backend
(``chunk_counts`` of the search session).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engine.ranking.query import MAX_TERMS, STOP_WORDS
from engine.ranking.words import is_word_char

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "MIN_CHUNKS",
    "NEAR",
    "UNSEEN_SHARE",
    "Coverage",
    "QueryWord",
    "coverage",
    "lookups",
    "query_words",
]

#: The similarity at which a memory answers even an uncovered query: a near paraphrase with
#: this project's model (answerable questions' best chunks sit at 0.5 to 0.85 on the three
#: corpora; near misses about an unseen thing reached 0.53).
NEAR = 0.6
#: The share of a query's information in unseen words that makes it uncovered: half.
UNSEEN_SHARE = 0.5
#: Near spellings: the query word cut by up to this many letters...
CUT = 2
#: ... never below this many (shorter stems match unrelated words: "chem" finds "chemical").
MIN_STEM = 5
#: Counting stops here: past it, a word is common and its weight barely changes.
COUNT_CAP = 1000
#: A store of fewer chunks has too few words of its own to tell "never mentioned" from "not
#: said yet" (two notes about pasta have never written "make"): the test does not apply.
MIN_CHUNKS = 100
#: Words that name no topic, left out besides the search's stop words (which keep negations
#: and a few qualifiers, because a memory and its wrong-fact twin can differ by exactly one).
FUNCTION_WORDS = frozenset(
    """
    on off up down out over under not no nor never can cannot could get got make made
    like one two many much more most other others same own only well way ever
    """.split()
)


@dataclass(frozen=True)
class QueryWord:
    """A content word of the query, lower-cased, and whether the query wrote it as a name."""

    text: str
    named: bool


#: Characters after which the next word starts a sentence, so its capital names nothing: the
#: end of a sentence, a line break, a colon, and an opening quote (a quoted turn of a
#: dialogue, ``<Bart>: "Oh, I see"``, starts with a capital as a sentence does). A plain
#: double quote opens when it is the first, third, ... of the query.
SENTENCE_OPENERS = frozenset(".!?:;\n\u201c")


def query_words(
    text: str, skip: Sequence[tuple[int, int]] = (), limit: int = MAX_TERMS
) -> list[QueryWord]:
    """The query's content words (stop words out), each once and at most ``limit`` of them (as
    many as the search binds), marking names: a word holding a capital letter that does not
    start a sentence. Words inside the ``skip`` spans (the dates it names, which the time arm
    reads and no memory's text needs to hold) are left out."""
    found: dict[str, bool] = {}
    current: list[str] = []
    sentence_start = True
    quotes = 0
    for position, char in enumerate(text + " "):
        if is_word_char(char):
            current.append(char)
            continue
        if current:
            raw = "".join(current)
            start = position - len(raw)
            word = raw.lower()
            named = not sentence_start and len(raw) > 1 and any(c.isupper() for c in raw)
            inside = any(a <= start < b for a, b in skip)
            stop = word in STOP_WORDS or word in FUNCTION_WORDS
            if not inside and not stop and any(c.isalnum() for c in word):
                found[word] = found.get(word, False) or named
                if len(found) >= limit:
                    break
            sentence_start = False
            current = []
        if char == '"':
            quotes += 1
            sentence_start = sentence_start or quotes % 2 == 1
        elif char in SENTENCE_OPENERS:
            sentence_start = True
    return [QueryWord(word, named) for word, named in found.items()]


def lookups(words: Sequence[QueryWord]) -> list[tuple[str, bool]]:
    """What to count for ``words``: each word exactly, and each near-spelling prefix
    (``(text, True)``) of the words long enough to have one."""
    wanted: list[tuple[str, bool]] = [(w.text, False) for w in words]
    for word in words:
        for cut in range(1, CUT + 1):
            if len(word.text) - cut >= MIN_STEM:
                wanted.append((word.text[:-cut], True))
    return list(dict.fromkeys(wanted))


@dataclass(frozen=True)
class Coverage:
    """What of the query the store has seen."""

    #: The content words no chunk holds (not even as a near spelling).
    unseen: tuple[str, ...]
    #: Those of them the query wrote as names.
    unseen_names: tuple[str, ...]
    #: The share of the query's information (inverse chunk frequency) in unseen words.
    unseen_share: float

    #: False when the store is too small to judge (:data:`MIN_CHUNKS`): covered then.
    judged: bool = True

    @property
    def covered(self) -> bool:
        if not self.judged:
            return True
        return not self.unseen_names and self.unseen_share < UNSEEN_SHARE

    def describe(self) -> str:
        """Why the query is uncovered, in words for a note."""
        if self.unseen_names:
            return "the store never mentions " + ", ".join(repr(w) for w in self.unseen_names)
        share = f"{self.unseen_share:.0%}"
        return f"the words {', '.join(repr(w) for w in self.unseen)} ({share} of the query) " + (
            "appear nowhere in the store"
        )


def coverage(
    words: Sequence[QueryWord], counts: Mapping[tuple[str, bool], int], chunks: int
) -> Coverage:
    """How much of the query the store has seen, from the chunk ``counts`` of
    :func:`lookups` (capped at :data:`COUNT_CAP`) and the store's number of ``chunks``."""
    if chunks < MIN_CHUNKS:
        return Coverage((), (), 0.0, judged=False)
    unseen: list[QueryWord] = []
    weights: dict[str, float] = {}
    for word in words:
        count = counts.get((word.text, False), 0)
        weights[word.text] = math.log((chunks + 1) / (count + 0.5))
        near = any(
            counts.get((word.text[:-cut], True), 0) > 0
            for cut in range(1, CUT + 1)
            if len(word.text) - cut >= MIN_STEM
        )
        if count == 0 and not near:
            unseen.append(word)
    total = sum(max(w, 0.0) for w in weights.values())
    missing = sum(max(weights[w.text], 0.0) for w in unseen)
    return Coverage(
        unseen=tuple(w.text for w in unseen),
        unseen_names=tuple(w.text for w in unseen if w.named),
        unseen_share=missing / total if total > 0 else 0.0,
    )
