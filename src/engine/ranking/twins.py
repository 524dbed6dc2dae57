"""Near-twins that deny each other: the memory that asserts a fact ranks above its twin that
negates it or marks it as past.

Two memories can say nearly the same thing and mean the opposite: "the warehouse is hosted in
eu-west-1" and "the warehouse is not hosted in eu-west-1", "deploys go through Argo CD" and
"deploys used to go through Argo CD, before Flux replaced it", "the user wants a weekly
summary" and "the user no longer wants a weekly summary". Every arm ranks them side by side:
they share the words and nearly the meaning (the embedding of a sentence barely moves for a
"not"), so either may come first, and a question that asks for the fact ("which region hosts
the warehouse") then gets its denial as the answer.

The rule, applied to the hits after fusion: when two hits are twins (:func:`twins`: their best
chunks are at least :data:`TWIN_SIMILARITY` alike, by their vectors, or by their words in a
store without vectors; or :func:`restates`: under the same title, the denying one says again
what the other says) and one carries denial markers (negations, "used to", "no longer",
"replaced", ...; :func:`denials`) while the other carries none, and the query itself carries
none, the one that asserts moves up to just above the one that denies. Of two hits that both
deny, neither asserts the fact, so their order stands (moving the one that denies less
would tell the reader it asserts what the other denies). A query that negates ("which jobs are not
preempted") asks for the denial, and the fused order stands. A hit whose own tags trust it less
than its twin (its authority, :mod:`engine.ranking.authority`: ``superseded``,
``do-not-answer-from``, or a twin that is ``canonical``) does not move above it either: the
words only guess which of the two is current, the tags say it.

Similarity alone misses a twin that adds a clause of its own: "the user no longer wants a
weekly summary of open incidents on Monday mornings; nothing more is needed there" sits at
0.69 from "the user wants a weekly summary of open incidents every Monday morning, grouped by
service and sorted by age", far below what unrelated abstracts of one topic reach. What makes
it a twin is what it shares beyond its cue: leave out the denial words and the clauses that
only deny ("nothing more is needed there"), and every word it has left is the other's.
:func:`restates` asks exactly that, and only of memories under one title (an edited memory
keeps its title; two papers or two chat messages rarely share one). On the shared benchmark
sets it moves no hit: their titles differ, or (MADial's "Activity") the texts do.

It is a reorder among the hits, not a score: the statement's scores and each arm's rank stay
what they were (``--explain`` shows them), and the hit that moved says above which twin.
This module is pure: texts and vectors in, an order out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.ranking.coverage import FUNCTION_WORDS
from engine.ranking.query import STOP_WORDS

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "TWIN_SIMILARITY",
    "Candidate",
    "denials",
    "order_twins",
    "restates",
]

#: How alike two best chunks must be to count as twins, by their vectors: with this project's
#: model the discrimination gate's one-fact twins sit at 0.82 to 0.999 from their true
#: memories; a superseded twin that adds a clause ("..., before Flux replaced it") drops to
#: 0.7, which the words still catch (below).
TWIN_SIMILARITY = 0.95
#: Below this, shared words do not make twins either: on SciFact, abstracts of one topic
#: share most of their words at lower similarity, and with 0.8 / 0.65 reordering them by
#: their negations cost 0.0046 nDCG@10 (0.95 / 0.8: 0.0009).
TWIN_MIN_SIMILARITY = 0.8
#: Or by their words: the share of the smaller chunk's distinct content words the other
#: holds too (what a store without vectors goes by alone), for chunks of comparable length
#: (neither more than twice the other's words: a short note inside a long page is no twin).
TWIN_WORD_OVERLAP = 0.6
TWIN_LENGTH_RATIO = 0.5

#: :func:`restates`: the share of the denying memory's words (its cue and its deny-only clauses
#: left out) that the asserting one must hold, and the share of the asserting one's words the
#: denying one must hold (a one-line "no staging deploys" under a long page's title restates
#: a sliver of it, not the page). The gate's twins that only this test catches (at
#: similarity 0.69 to 0.84) reach 0.78 to 1.0 and 0.40 to 0.79.
RESTATED_SHARE = 0.75
RESTATING_SHARE = 0.4
#: Below this similarity of their best chunks (when both have vectors), not even a memory
#: under the same title restates another: the words agree by chance.
RESTATE_MIN_SIMILARITY = 0.6

#: Only the first this many hits are compared (pairwise, so the cost grows with the square):
#: a twin that matters is one an agent or a person reads, near the top.
TWIN_WINDOW = 50

#: Words and phrases that deny or retire what a sentence says (a phrase before the word it
#: starts with, so "no longer" is matched whole: counted once, and left out whole by stems).
_DENIAL = re.compile(
    r"\b(?:no\s+longer|not|no|never|none|nothing|nobody|neither|nor|cannot|any\s?more|"
    r"used\s+to|formerly|previously|replaced|retired|deprecated|superseded|obsolete|"
    r"\w+n['\u2019]t)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"\w+")
#: Where a clause ends: punctuation, or a conjunction that starts a clause of its own ("not a
#: cron job but a queue worker", "was kept in Prometheus, before Thanos replaced it").
_CLAUSE = re.compile(
    r"[.;:!?,()\[\]\n]+|\s(?:but|before|until|and|since|because|while|though|although)\s",
    re.IGNORECASE,
)


def denials(text: str) -> int:
    """How many denial markers ``text`` holds ("no longer" once, not as "no" and "longer")."""
    return len(_DENIAL.findall(text))


@dataclass(frozen=True)
class Candidate:
    """A hit as the rule sees it: its best chunk's text and vector (None without one), its
    memory's title and its authority multiplier (1 without tags that scale it)."""

    text: str
    vector: np.ndarray | None = None
    title: str = ""
    authority: float = 1.0


def twins(a: Candidate, b: Candidate, words: tuple[set[str], set[str]] | None = None) -> bool:
    """Whether two hits' best chunks say nearly the same thing: close in meaning, or in
    meaning and words together (``words``: their :func:`content_words`, when the caller has
    them already). Without vectors, the words alone decide."""
    close = similarity(a, b)
    if close is not None:
        if close >= TWIN_SIMILARITY:
            return True
        if close < TWIN_MIN_SIMILARITY:
            return False
    words_a, words_b = words or (content_words(a.text), content_words(b.text))
    small, large = sorted((len(words_a), len(words_b)))
    if not small or small < large * TWIN_LENGTH_RATIO:
        return False
    return len(words_a & words_b) / small >= TWIN_WORD_OVERLAP


def similarity(a: Candidate, b: Candidate) -> float | None:
    """The cosine of two hits' best chunks (their vectors are unit length), or None when one
    has no vector or the two come from different models."""
    if a.vector is None or b.vector is None or a.vector.shape != b.vector.shape:
        return None
    return float(a.vector @ b.vector)


def restates(asserting: Candidate, denying: Candidate) -> bool:
    """Whether ``denying``, a memory under the same title as ``asserting``, says again what
    ``asserting`` says, with a denial or a retirement added: at least :data:`RESTATED_SHARE`
    of its stemmed words, its denial words and its deny-only clauses left out, are
    ``asserting``'s, and those cover at least :data:`RESTATING_SHARE` of ``asserting``'s own.
    A clause is deny-only when it holds a denial and under half its words are ``asserting``'s
    ("; nothing more is needed there", "until Flux replaced it")."""
    title = title_key(asserting.title)
    if not title or title != title_key(denying.title):
        return False
    close = similarity(asserting, denying)
    if close is not None and close < RESTATE_MIN_SIMILARITY:
        return False
    held = stems(asserting.text)
    said: set[str] = set()
    for clause in _CLAUSE.split(denying.text):
        words = stems(clause)
        if _DENIAL.search(clause) and len(words & held) * 2 < len(words):
            continue
        said |= words
    if not said or not held:
        return False
    shared = len(said & held)
    return shared >= RESTATED_SHARE * len(said) and shared >= RESTATING_SHARE * len(held)


def title_key(title: str) -> str:
    """A title as :func:`restates` compares it: case and spacing do not count."""
    return " ".join(title.lower().split())


def stems(text: str) -> set[str]:
    """:func:`content_words` without the denials' words ("no longer", "used to", "doesn't"),
    cut to a rough stem ("mornings" and "morning", "paging" and "pages" agree): a restatement
    seldom keeps every word's form."""
    return {stem(word) for word in content_words(_DENIAL.sub(" ", text))}


def stem(word: str) -> str:
    """A plural's, then an -ing's or -ed's ending, then a final e, taken off a word of more
    than three letters: cruder than Porter's stemmer, but only ever compared with itself."""
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        word = word[:-1]
    for ending in ("ing", "ed"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            word = word[: -len(ending)]
            break
    return word.rstrip("e") if len(word) > 3 else word


def content_words(text: str) -> set[str]:
    """A chunk's distinct words without stop words and denials (what twins have in common is
    what they talk about; what tells them apart is the denial)."""
    return {
        w
        for w in (m.lower() for m in _WORD.findall(text))
        if w not in STOP_WORDS and w not in FUNCTION_WORDS and not _DENIAL.fullmatch(w)
    }


def gram_screen(
    vectors: Sequence[np.ndarray | None],
) -> tuple[list[list[float]], list[list[float]]] | None:
    """Every pair's dot product in one matrix product, with how far each can be from the one
    :func:`order_twins` compares (None when a vector is missing or the widths differ).

    The matrix product adds the same terms in another order than a single dot product does,
    so a value can differ in its last bits; each of the two is within ``n * 2**-24 * |a| |b|``
    (n terms in float32) of the exact value. A pair whose product lies further than the
    slack (thrice that) from a floor is on the same side of it either way, and only a pair
    within the slack is computed one by one: the decisions are those of the dot products
    alone. Ten hits make 45 pairs; a Python call apiece was a thirtieth of a search."""
    if len(vectors) < 2 or any(v is None or v.dtype != np.float32 for v in vectors):
        return None
    if len({v.shape for v in vectors if v is not None}) != 1:
        return None
    stack = np.stack(vectors)  # type: ignore[arg-type]
    gram = stack @ stack.T
    norms = np.linalg.norm(stack.astype(np.float64), axis=1)
    slack = 3.0 * stack.shape[1] * 2.0**-24 * np.outer(norms, norms)
    return gram.tolist(), slack.tolist()


def order_twins(query: str, hits: Sequence[Candidate]) -> tuple[list[int], dict[int, int]]:
    """The hits' new order (indexes into ``hits``) and, for each hit that moved, the index of
    the twin it now ranks above. Nothing moves when the query itself denies something.

    Counting a chunk's denials and reading its words cost more than the rest of a search's
    Python (a fifth of a search at 2,000 memories), and most pairs of hits are told apart by
    their vectors alone (:data:`TWIN_MIN_SIMILARITY`): so a pair far apart in meaning is
    skipped first, and a hit's denials and words are read only for a pair that needs them.
    The decisions, and so the order, are those of checking every pair in full."""
    order = list(range(len(hits)))
    moved: dict[int, int] = {}
    if denials(query) or len(hits) < 2:
        return order, moved
    window = order[:TWIN_WINDOW]  # the rest keep their places
    titles = [title_key(hit.title) for hit in hits[:TWIN_WINDOW]]
    screen = gram_screen([hit.vector for hit in hits[:TWIN_WINDOW]])
    counts: dict[int, int] = {}
    words: dict[int, set[str]] = {}

    def count(i: int) -> int:
        if i not in counts:
            counts[i] = denials(hits[i].text)
        return counts[i]

    def content(i: int) -> set[str]:
        if i not in words:
            words[i] = content_words(hits[i].text)
        return words[i]

    def apart(i: int, j: int) -> bool:
        """True when the vectors alone already say the two are no twins: below the twin
        test's floor, or below the restatement's floor for two hits under one title."""
        a, b = hits[i].vector, hits[j].vector
        if a is None or b is None or a.shape != b.shape:
            return False
        floor = RESTATE_MIN_SIMILARITY if titles[i] == titles[j] else TWIN_MIN_SIMILARITY
        if screen is not None:
            gram, slack = screen
            if gram[i][j] < floor - slack[i][j]:
                return True
            if gram[i][j] >= floor + slack[i][j]:
                return False
        return float(a @ b) < floor

    # Each pass moves one asserting hit (no denial) above the first twin that denies; a hit moves
    # at most once (above its highest denying twin), so the passes end.
    changed = True
    while changed:
        changed = False
        for position, upper in enumerate(window):
            for lower_position in range(position + 1, len(window)):
                lower = window[lower_position]
                if (
                    lower in moved
                    or hits[lower].authority < hits[upper].authority
                    or apart(upper, lower)
                    or count(lower) > 0
                    or count(upper) == 0
                ):
                    continue
                if twins(hits[upper], hits[lower], (content(upper), content(lower))) or (
                    titles[lower] == titles[upper] and restates(hits[lower], hits[upper])
                ):
                    window.insert(position, window.pop(lower_position))
                    moved[lower] = upper
                    changed = True
                    break
            if changed:
                break
    return window + order[TWIN_WINDOW:], moved
