"""Whether a name a query gives is one the store writes, spelt otherwise.

The coverage test's names rule (:mod:`engine.ranking.coverage`) withholds an answer when a
query gives a name no chunk holds: "How do I write a Flask route?" asked of Python package
docs that never mention Flask. But people spell people differently: a chat whose speaker
types "Muhhamed" is asked about "Muhammad" and "Mohammed", "Aqib" about "Akib", "Nikolas"
about "Nicolas". Such a name is the store's own, and its memories answer the question.

A query's name counts as written when the store writes a name (a word it capitalises more
often than not, so not "Read" or "Times", which start sentences) spelt alike
(:func:`alike`): the same after folding what spelling varies on (case, accents, a doubled
letter, ``c``/``k``/``q``, ``ph``/``f``, ``z``/``s``), or apart by at most
:data:`CLOSE` edits where changing one vowel into another is half an edit ("Mohammed" and
"Muhhamed": one vowel). A name the store writes in at least :data:`OWN_SHARE` of its chunks
is one of its own (a chat's speakers), and a name of at least :data:`OWN_MIN_LETTERS` letters
one whole edit from it is taken for it as well ("Akim" for "Akib", "Nerbaas" for
"Nebraas"). A chat may type its speakers in lower case ("elise: ..."): a name of five letters
or more a vowel from a word in lower case in that share of the chunks is taken for it
("Eliza" for "elise"). Both sides keep their first letter.

Measured on the REALTALK chats (49 questions with a name the chat never wrote; all but three
are its speakers spelt otherwise) and the foreign questions of the abstention benchmark (its
lists and the held-out ones: 39 questions giving 49 names the store never wrote): the rule
takes 47 of the 49 chat questions' names for the chat's (not "TV" or "Fortress", which
the chat calls "tf2"), and of the foreign names one
("Theo" for a "Thea" of the Python docs, beside a "Vandersloot" they never wrote, so the
question is still withheld). Looser rules took foreign names for the store's words: a
vowel-less key (consonants only) took "Tomas" for "Times", "Raid" for "Road" and "Tokyo"
for "Take"; a whole edit against any capitalised word took "Raid" for "Read", "Tomas" for
"Times" and "S3" for "See".

The names come from the chunks' text, not the full-text index (which keeps words folded and
stemmed, "Muhhamed" as ``muhham``): a sample of the store's chunks, evenly spread, and the
chunks the search found. Pure: the texts come from the search session.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

#: How many of the store's chunks are read for its names (evenly spread over the store): a
#: store's own names (its speakers) are in a fifth to two thirds of a chat's chunks, so a
#: sample finds them; rarer names are found in the chunks the search returned.
SAMPLE = 1000
#: A name spelt within this many edits of one the store writes is that name.
CLOSE = 0.5
#: A name in this share of the sampled chunks is one of the store's own (a chat's speakers
#: are in 20 to 70 % of its chunks; the most frequent name of a store of package docs,
#: "Python", in 29 %, and no foreign name the benchmark asks about is one edit from it).
OWN_SHARE = 0.1
#: ... and a query's name this long or longer within one edit of it is taken for it.
OWN_MIN_LETTERS = 4
#: A vowel changed into another costs this much of an edit.
VOWEL_CHANGE = 0.5

VOWELS = frozenset("aeiouy")
#: A word of two letters or more (a capitalised one is a name, :class:`StoreNames`), in any
#: script: a store writes "Łukasz", "Žofia" or "Сергей" as it writes "Lukas".
WORD = re.compile(r"\b[^\W\d_]{2,}")
#: Letters spelling varies on, folded to one.
FOLDS = str.maketrans({"c": "k", "q": "k", "z": "s"})
#: Latin letters written with a stroke or joined, which no accent folding takes apart (they do
#: not decompose, and FTS5 keeps them): a query types "Lukasz" for "Łukasz", "Aero" for "Ærø".
PLAIN = str.maketrans(
    {"ł": "l", "ø": "o", "æ": "ae", "œ": "oe", "ß": "ss", "đ": "d", "ð": "d", "þ": "th",
     "ı": "i", "ħ": "h", "ŧ": "t"}
)


def folded(word: str) -> str:
    """``word`` as spelling variants of a name share it: lower case, no accents (nor strokes:
    ``ł`` as ``l``, ``æ`` as ``ae``), ``ph`` as ``f``, ``c``/``q`` as ``k``, ``z`` as ``s``, and
    no letter doubled."""
    plain = unicodedata.normalize("NFKD", word.lower()).translate(PLAIN)
    plain = "".join(c for c in plain if not unicodedata.combining(c)).replace("ph", "f")
    plain = plain.translate(FOLDS)
    return "".join(c for i, c in enumerate(plain) if i == 0 or plain[i - 1] != c)


def edits(a: str, b: str) -> float:
    """The edits between ``a`` and ``b``: a letter added, dropped, changed or two swapped
    costs one, a vowel changed into another :data:`VOWEL_CHANGE`."""
    before = [float(j) for j in range(len(b) + 1)]
    earlier: list[float] = []
    for i in range(1, len(a) + 1):
        row = [float(i)]
        for j in range(1, len(b) + 1):
            if a[i - 1] == b[j - 1]:
                change = 0.0
            elif a[i - 1] in VOWELS and b[j - 1] in VOWELS:
                change = VOWEL_CHANGE
            else:
                change = 1.0
            cost = min(before[j] + 1, row[j - 1] + 1, before[j - 1] + change)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cost = min(cost, earlier[j - 2] + 1)
            row.append(cost)
        earlier, before = before, row
    return before[-1]


@dataclass(frozen=True)
class StoreNames:
    """The capitalised words of some of a store's chunks, and in how many of them."""

    chunks: Counter[str]
    #: How many of the store's chunks were read for them.
    read: int
    #: In how many of those chunks each of them is written in lower case.
    lower: Counter[str] = field(default_factory=Counter)

    def name(self, word: str) -> bool:
        """Whether the capitalised ``word`` is a name: capitalised more often than not. A word
        that starts sentences ("Read", "Times", "Clear") is written in lower case as well."""
        return self.chunks[word] > self.lower[word.lower()]

    def plus(self, other: StoreNames) -> StoreNames:
        """These names and ``other``'s, as if read together (a lower-case count is kept only
        where either side kept it: for its own names and its frequent words)."""
        return StoreNames(
            self.chunks + other.chunks, self.read + other.read, self.lower + other.lower
        )

    @cached_property
    def typed_lower(self) -> list[tuple[str, str]]:
        """The words in lower case in :data:`OWN_SHARE` of the chunks, each with its folded
        spelling: names a chat types in lower case (a speaker "elise"), and the store's
        commonest words, which no name of five letters or more is a vowel away from."""
        least = OWN_SHARE * self.read
        return [(word, folded(word)) for word, count in self.lower.items() if count >= least]

    @cached_property
    def spellings(self) -> dict[str, list[tuple[str, str]]]:
        """The names (:meth:`name`) by the first letter of their folded spelling, each with
        that spelling, in the order they were read: folded once for every name a query asks
        about (a store of 4,000 abstracts writes 4,500 capitalised words, and folding them
        all again took 40 ms per name)."""
        by_letter: dict[str, list[tuple[str, str]]] = {}
        for written in self.chunks:
            if (theirs := folded(written)) and self.name(written):
                by_letter.setdefault(theirs[0], []).append((written, theirs))
        return by_letter

    def own(self, word: str) -> bool:
        """Whether the name ``word`` is one of the store's own: in :data:`OWN_SHARE` of its
        chunks."""
        return self.read > 0 and self.chunks[word] >= OWN_SHARE * self.read


def spread(low: int | None, high: int | None, count: int) -> list[int]:
    """``count`` chunk ids evenly spread from ``low`` to ``high`` (all of them when there are no
    more): the ids a backend reads for a sample of the store (or the positions, where edits
    freed many ids: :func:`by_position`)."""
    if low is None or high is None or high < low:
        return []
    span = high - low + 1
    if span <= count:
        return list(range(low, high + 1))
    return sorted({low + (span * i) // count for i in range(count)})


def by_position(low: int | None, high: int | None, total: int, count: int) -> bool:
    """Whether a sample of ``count`` of ``total`` chunks with ids ``low`` to ``high`` is read by
    position (the chunks in id order, evenly spread: :func:`spread` from 0 to ``total`` - 1)
    rather than by id: when so many ids were freed (an edited file's chunks get new ids past
    the others) that evenly spread ids would miss chunks of the store. A store without
    freed ids, or one read whole either way, is read by id, which costs no numbering."""
    return low is not None and high is not None and high - low + 1 > max(total, count)


def store_names(texts: Iterable[str]) -> StoreNames:
    """The names the chunk ``texts`` write, each counted once per chunk."""
    counts: Counter[str] = Counter()
    lower: Counter[str] = Counter()
    read = 0
    for text in texts:
        read += 1
        words = set(WORD.findall(text))
        counts.update(w for w in words if w[0].isupper())
        lower.update(w for w in words if w[0].islower())
    wanted = {word.lower() for word in counts}
    kept = {w: n for w, n in lower.items() if w in wanted or n >= OWN_SHARE * read}
    return StoreNames(counts, read, Counter(kept))


def alike(name: str, names: StoreNames) -> str | None:
    """The name the store writes that the query's ``name`` spells otherwise, or None."""
    mine = folded(name)
    if not mine:
        return None
    if len(mine) >= OWN_MIN_LETTERS + 1:
        for word, theirs in names.typed_lower:
            # within half an edit: the same length (a letter added or dropped is a whole one)
            if len(theirs) == len(mine) and edits(mine, theirs) <= CLOSE:
                return word
    found: str | None = None
    for written, theirs in names.spellings.get(mine[0], []):
        if abs(len(theirs) - len(mine)) > 1:
            continue
        apart = edits(mine, theirs)
        if apart <= CLOSE:
            return written
        if found is None and apart <= 1 and len(mine) >= OWN_MIN_LETTERS and names.own(written):
            found = written
    return found
