"""Whether the store has ever seen what a query is about: its words, against the store's text.

The similarity floor (:mod:`engine.ranking.floor`) tells nonsense from a question: a string of
made-up words lands below it. It cannot tell a question the store answers from a question in
the store's own domain about something it never mentions ("how do I write a Flask route" on
a store of Python package docs without Flask; "what is the name of Elise's parrot" on a chat
where Elise never speaks of one): the semantic arm finds the topic, and the topic is close.
What such a question lacks is in its words. The store has never written the thing the
question is about, so no memory can hold its answer:

- a **name** the query gives (a word past its first written as people write names, a
  capital then a small letter and letters only: ``Flask``, ``MongoDB``, ``Tomas``; not an
  acronym or a code, ``PBA``, ``Rpl23``, ``cRCT``, which a scientific or technical text
  writes out otherwise or defines on the spot) that no chunk holds, or
- words no chunk holds that carry at least half of the query's information (each word
  weighed by its inverse chunk frequency, an unseen word the most).

Two rules judge this, and a store applies both unless told otherwise:

- **names**: a name the query gives that no chunk holds makes it uncovered, whatever its
  weight. Names are what a store of documents lacks when a question is about a neighbouring
  tool ("How do I write a Flask route?" asked of Python package docs without Flask). People
  spell people otherwise than a chat does ("Muhammad" asked of a chat whose speaker types
  "Muhhamed"): a name the store writes spelt alike counts as written
  (:mod:`engine.ranking.names`);
- **words**: words no chunk holds carry at least half of the query's information. A name
  counts here like any word, by its weight. Such a query is *uncovered* unless the memory
  nearest in meaning says the unseen words in other words: the search compares that
  memory's similarity to the query with its similarity to the query without them
  (:func:`without`); when taking them out makes it no closer, the memory carried their
  meaning ("What kind of housework did Paola do?" asked of a chat that speaks of cleaning and
  laundry), and it answers.

``[limits] withhold_unseen = "words"`` keeps the words rule alone (for a store asked about
things by names it writes otherwise), ``false`` neither.

An uncovered query is answered only from a memory that is near in meaning as well
(:data:`NEAR`), not from one above the store's floor alone. A near spelling counts as seen (a
word the store holds that starts with the query word cut by one or two letters, kept to five,
as the full-text index stems that cut: "Japanese" is covered by "Japan", whose stem "japane"
gives; not "practising" by "practice", whose stems differ). Years and the names of months
and days are not judged: they are dates, which a memory's date holds and its text need not. A
query of more than :data:`MAX_QUESTION_WORDS` content words is a passage (a dialogue, a
document used as a query), not a question about one thing, and is not judged.

Measured on the three corpora of ``benchmarks/abstention.py`` (questions nobody on this
project tuned the floor on) and on every evaluation set; the Measured page has the figures.
This module is pure: the counts come from the backend (``chunk_counts`` of the search
session), the similarities from the search.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from engine.ranking.query import MAX_TERMS, STOP_WORDS
from engine.ranking.words import is_word_char

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "MAX_QUESTION_WORDS",
    "MIN_CHUNKS",
    "NEAR",
    "UNSEEN_SHARE",
    "WORDS_RULE",
    "Coverage",
    "QueryWord",
    "carries",
    "coverage",
    "lookups",
    "query_words",
    "without",
]

#: ``[limits] withhold_unseen = "words"``: the words rule alone, without the names rule.
WORDS_RULE = "words"
#: The similarity at which a memory answers even an uncovered query: a near paraphrase with
#: this project's model (answerable questions' best chunks sit at 0.5 to 0.85 on the three
#: corpora; near misses about an unseen thing reached 0.53).
NEAR = 0.6
#: How much nearer the nearest memory must be to the query than to the query without its
#: unseen words for it to carry their meaning (:func:`carries`): no nearer without them.
#: Measured on the REALTALK chats: a memory that says the words otherwise loses 0.004 to 0.33
#: of similarity when they are taken out; a near miss about a thing the chat never mentions
#: gains up to 0.1 (what remains of the question is what the chat does talk about).
CARRIED = 0.0
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
#: A query of more content words than this is a passage, not a question about one thing: a
#: dialogue used as a query (madial-en's, 12 to 60 content words, whose turns' chatter no
#: memory says) or a document; the coverage test does not judge it. The abstention
#: benchmark's questions hold at most 11, the shared sets' chat questions at most 12.
MAX_QUESTION_WORDS = 12
#: Words that are dates, not topics: a memory's date holds them, its text need not.
DATE_WORDS = frozenset(
    """
    january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday
    """.split()
)
#: Words that name no topic, left out besides the search's stop words (which keep negations
#: and a few qualifiers, because a memory and its wrong-fact twin can differ by exactly one).
FUNCTION_WORDS = frozenset(
    """
    on off up down out over under not no nor never can cannot could get got make made
    like one two many much more most other others same own only well way ever
    """.split()
)


#: Apostrophes a contraction is written with: typed and typographic.
APOSTROPHES = frozenset("'\u2019")
#: What follows the apostrophe of a contraction ("didn't", "we'd", "they've", "I'm"): no topic.
CLITICS = frozenset(("t", "s", "d", "ll", "ve", "re", "m"))


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
    many as the search binds), marking names: a word written as one (:func:`written_as_name`)
    that does not start a sentence. Words inside the ``skip`` spans (the dates it names, which
    the time arm reads and no memory's text needs to hold) are left out."""
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
            named = (
                not sentence_start
                and written_as_name(raw)
                and not in_compound(text, start, position)
            )
            inside = any(a <= start < b for a, b in skip)
            stop = (
                word in STOP_WORDS
                or word in FUNCTION_WORDS
                or is_date_word(word)
                or in_contraction(text, start, position)
            )
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


def written_as_name(raw: str) -> bool:
    """Whether a word is written as a name: a capital, a small letter, and letters only.

    Scientific claims are full of acronyms and codes the abstracts that answer them never
    write (``4-PBA``, ``MSM``, ``Rpl23``, ``BlaER1``, ``cRCT``): as names, 29 of SciFact's 809
    answerable claims were withheld (nDCG@10 -0.020). Written as names are the neighbouring
    tools and people a store never mentions (Flask, MongoDB, MySQL, Marguerite)."""
    return len(raw) > 1 and raw[0].isupper() and raw[1].islower() and raw.isalpha()


def in_compound(text: str, start: int, end: int) -> bool:
    """Whether the word ``text[start:end]`` is part of a term rather than a name: joined to
    another word by a hyphen ("Xrl-sizzled", "Schimmelpenning-Feuerstein-Mims syndrome"), or
    an alias the query gives in parentheses ("VgrG (Tssl)"). Such terms are defined or
    spelt out on the spot and their parts need not be written by the memory that answers:
    as names, they withheld three of SciFact's answerable claims (nDCG@10 -0.003)."""
    before, after = text[max(start - 2, 0) : start], text[end : end + 2]
    hyphened = (len(before) == 2 and before[1] == "-" and is_word_char(before[0])) or (
        len(after) == 2 and after[0] == "-" and is_word_char(after[1])
    )
    return hyphened or (before[-1:] == "(" and after[:1] == ")")


def in_contraction(text: str, start: int, end: int) -> bool:
    """Whether the word ``text[start:end]`` is a part of a contraction that names no topic:
    what follows its apostrophe ("we'd", "I'm"), a letter elided before one ("O'Brien"), or
    a verb negated by "n't" ("didn't", "won't"), which is "did not". The words split at the
    apostrophe, and a store written without contractions (documentation, papers) never holds
    "didn" or "won": counted as words, they carried half of "what didn't the mice develop"
    and withheld its answer."""
    after_word = start >= 2 and text[start - 1] in APOSTROPHES and is_word_char(text[start - 2])
    if after_word and text[start:end].lower() in CLITICS:
        return True
    if end - start == 1 and text[end : end + 1] in APOSTROPHES and is_word_char(
        text[end + 1 : end + 2] or " "
    ):
        return True  # a letter elided before a word: "O'Brien", "d'Artagnan", "l'eau"
    negated = (
        text[end : end + 1] in APOSTROPHES
        and text[end + 1 : end + 2] in ("t", "T")
        and not is_word_char(text[end + 2 : end + 3] or " ")
    )
    return negated and text[end - 1] in "nN"


def is_date_word(word: str) -> bool:
    """A month's or day's name, or a year (four digits from 1000 to 2999)."""
    return word in DATE_WORDS or (len(word) == 4 and word.isdigit() and word[0] in "12")


def without(query: str, words: Sequence[str]) -> str:
    """``query`` with ``words`` (lower-cased content words, as :func:`query_words` gives them)
    taken out and the rest kept as written, for comparing how near a memory is to the query
    with and without them."""
    drop = set(words)
    out: list[str] = []
    current: list[str] = []
    for char in query + " ":
        if is_word_char(char):
            current.append(char)
            continue
        if current:
            raw = "".join(current)
            if raw.lower() not in drop:
                out.append(raw)
            current = []
        out.append(char)
    return " ".join("".join(out).split())


def carries(with_words: float, without_words: float) -> bool:
    """Whether a memory ``with_words`` similar to the query and ``without_words`` similar to
    it without its unseen words says them in other words."""
    return with_words - without_words >= CARRIED


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

    #: False when the store is too small to judge (:data:`MIN_CHUNKS`) or the query is a
    #: passage (:data:`MAX_QUESTION_WORDS`): covered then.
    judged: bool = True
    #: How many of the query's content words the store holds (an all-unseen query has no
    #: meaning left to compare without its unseen words).
    seen: int = 0
    #: Names the query spells otherwise than the store, which count as seen: (the query's
    #: word, the store's spelling) (:mod:`engine.ranking.names`).
    respelt: tuple[tuple[str, str], ...] = ()

    @property
    def words_uncovered(self) -> bool:
        """The words rule: unseen words carry at least :data:`UNSEEN_SHARE` of the query."""
        return self.judged and self.unseen_share >= UNSEEN_SHARE

    @property
    def names_uncovered(self) -> bool:
        """The names rule: a name the query gives is in no chunk."""
        return self.judged and bool(self.unseen_names)

    @property
    def covered(self) -> bool:
        """Covered under both rules (the words rule alone is :attr:`words_uncovered`)."""
        return not (self.words_uncovered or self.names_uncovered)

    def describe(self, names: bool = True) -> str:
        """Why the query is uncovered, in words for a note (by its names first, with
        ``names``)."""
        if names and self.unseen_names:
            return "the store never mentions " + ", ".join(repr(w) for w in self.unseen_names)
        share = f"{self.unseen_share:.0%}"
        return f"the words {', '.join(repr(w) for w in self.unseen)} ({share} of the query) " + (
            "appear nowhere in the store"
        )


def coverage(
    words: Sequence[QueryWord],
    counts: Mapping[tuple[str, bool], int],
    chunks: int,
    respell: Callable[[str], str | None] | None = None,
) -> Coverage:
    """How much of the query the store has seen, from the chunk ``counts`` of
    :func:`lookups` (capped at :data:`COUNT_CAP`) and the store's number of ``chunks``.
    ``respell`` gives the name the store writes that an unseen name of the query spells
    otherwise (:func:`engine.ranking.names.alike`), or None; such a name counts as seen."""
    if chunks < MIN_CHUNKS or len(words) > MAX_QUESTION_WORDS:
        return Coverage((), (), 0.0, judged=False)
    unseen: list[QueryWord] = []
    respelt: list[tuple[str, str]] = []
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
            if word.named and respell is not None and (written := respell(word.text)):
                respelt.append((word.text, written))
                continue
            unseen.append(word)
    total = sum(max(w, 0.0) for w in weights.values())
    missing = sum(max(weights[w.text], 0.0) for w in unseen)
    return Coverage(
        unseen=tuple(w.text for w in unseen),
        unseen_names=tuple(w.text for w in unseen if w.named),
        unseen_share=missing / total if total > 0 else 0.0,
        seen=len(words) - len(unseen),
        respelt=tuple(respelt),
    )
