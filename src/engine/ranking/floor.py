"""The abstention floor calibrated on the store itself: probes, the rule, the cached record.

A search answers nothing when no memory holds every query word and no hit is as similar to
the query as a floor (:func:`engine.search.abstain`). How similar a query nothing answers gets
depends on the store: a large store has more chances of a near chunk, a store of short chat
messages sits closer to everyday questions than one of manuals, and a language model puts
some topics nearer each other than others. On one user's 845 documents a string of made-up
words reached 0.34 while the fixed floor was 0.25; on the evaluation sets the same floor caught
from 58 % to 90 % of foreign queries. So the floor is measured on each store: a fixed list of
queries that no store of memories should answer (:data:`PROBES`: made-up words, everyday
questions and questions about people and places nobody has heard of) is embedded once and
compared with every chunk of the store; the best similarity each probe reaches is what "no
answer here" looks like in this store, and the floor sits above most of them
(:func:`floor_from`).

This module is pure: the similarities come from the backend (``engine.sqlite.floor``,
``engine.pg.floor``), the vectors from the embedder, the record lives in the index's ``meta``
table under :data:`META_KEY` (see :mod:`engine.floor` for the glue).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace

#: The queries whose best similarity in a store says what a foreign query reaches there. Kept
#: apart from the benchmark's questions (benchmarks/abstention/*.json), which they must not
#: repeat: the benchmark measures the floor on questions it was not made from. Many topics, so
#: a store about any one of them (a cookbook answers the cooking probe) moves the quantile
#: little.
PROBES: tuple[str, ...] = (
    # made-up words: what a typo storm or a string of nonsense reaches
    "vorple trandish ekkomb salivane",
    "quist morbidane flurrow topple grenn",
    "zanthic umbrolo pessik varnay",
    "blorvish nekkatine oomstrel",
    "frundle kavish sprome tellivax",
    "glomberish yottan wrezzik plume",
    "ostrivane kelp dunnigrath sorrow",
    "mimbrel task vochette arrunt",
    "trellopine zug haskeroon viddle",
    "pernicule saffwick droom obberly",
    "wuzzic lantrope ickenby foam",
    "sprackle ummitor zoven glastery",
    "hobbleshank tirrivee quonset murr",
    "drovish pallingrade fenk oyster",
    "clumberane yiss tokkle parvendry",
    "arbolith nuzzery grimpet swale",
    # everyday questions on many topics
    "how do I get candle wax out of a tablecloth",
    "what is a good warm up before running",
    "how many eggs go into a sponge cake",
    "why does my cat knock things off the table",
    "what is the best time of year to plant tulip bulbs",
    "how do I fix a squeaky door hinge",
    "which wine goes well with grilled fish",
    "how long does it take to walk ten kilometres",
    "what should I wear to a summer wedding",
    "how can I stop snoring at night",
    "how do I teach a child to ride a bike",
    "what is the rule for offside in football",
    "how much should I tip a taxi driver",
    "why do my houseplants have yellow leaves",
    "how do I iron a shirt without creases",
    "what is a healthy breakfast before an exam",
    # people, places and events nobody has heard of
    "what did Oswin Farrowby say at his retirement party",
    "when did Lucinda Parmentier move to Crossway Hollow",
    "who won the Brackenfield village pie contest",
    "how tall is the clock tower in Nether Wallop Minor",
    "what is the name of Rosalind Quayle's sailing boat",
    "where did Bartholomew Ink spend his summer holiday",
    "which band played at the Thornbury harvest dance",
    "what colour is the front door of number 12 Pelham Close",
    "why did Esme Whitlock leave the chess club",
    "what did the Greyhaven parish council decide about the bridge",
    "how old is Cornelius Ashdown's tortoise",
    "who painted the mural at Fennimore station",
    "what did Delphine Okafor cook for the neighbours",
    "when is the Larkspur Cove regatta this year",
    "which school did Ignatius Pemberton attend",
    "what did Hattie Marchbank find in her attic",
)

#: Names the probe list, so a record made from another list is recomputed.
PROBE_SET = hashlib.sha256("\n".join(PROBES).encode("utf-8")).hexdigest()[:12]

#: Where the record lives in the index's meta table.
META_KEY = "store_floor"

#: The floor is the QUANTILE of the probes' best similarities plus MARGIN: most foreign
#: queries sit below what most probes reach; the margin covers the spread between two foreign
#: queries' best similarities (benchmarks/abstention.py chose both on its three corpora).
QUANTILE = 0.9
MARGIN = 0.05
#: Bounds: below the lower one a floor silences nothing a fixed floor would not, on no store
#: measured; above the upper one it would begin to silence questions that are answered (their
#: best similarities on every corpus measured start near it).
MIN_FLOOR = 0.25
MAX_FLOOR = 0.55

#: A record is recomputed once the chunks embedded since it was made, plus the change in the
#: number of chunks, reach this share of the chunks it was made from (and at least
#: REFRESH_MIN_CHUNKS): a store that grew or changed by a tenth may have a new floor; one new
#: memory in a thousand does not need one.
REFRESH_SHARE = 0.1
REFRESH_MIN_CHUNKS = 5


def floor_from(best: Sequence[float]) -> float | None:
    """The floor for a store whose probes reached ``best`` (each probe's best similarity to
    any chunk); None when there is nothing to calibrate on (no chunk vectors)."""
    values = sorted(float(b) for b in best if math.isfinite(b))
    if not values:
        return None
    position = QUANTILE * (len(values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(values) - 1)
    quantile = values[low] + (values[high] - values[low]) * (position - low)
    return round(min(MAX_FLOOR, max(MIN_FLOOR, quantile + MARGIN)), 4)


@dataclass(frozen=True)
class StoreFloor:
    """The floor measured on a store, as its index records it."""

    value: float
    #: How many probes it was measured with, and which list (:data:`PROBE_SET`).
    probes: int
    probe_set: str
    #: The embedding model whose vectors it was measured on.
    model: str
    #: Chunks with a vector when it was measured.
    chunks: int
    #: Chunks embedded since (new or changed content).
    changed: int = 0

    def describe(self) -> str:
        return f"store floor {self.value:.2f} from {self.probes} probes"

    def to_meta(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    def with_changes(self, embedded: int) -> StoreFloor:
        return replace(self, changed=self.changed + max(0, embedded))

    def fits(self, model: str) -> bool:
        """Whether it was measured on vectors of ``model`` with today's probes."""
        return self.model == model and self.probe_set == PROBE_SET

    def stale(self, model: str, chunks: int, embedded: int = 0) -> bool:
        """Whether the store has changed enough since (``chunks`` with a vector now,
        ``embedded`` more just written) that the floor must be measured again."""
        if not self.fits(model):
            return True
        moved = abs(chunks - self.chunks) + self.changed + max(0, embedded)
        return moved >= max(REFRESH_MIN_CHUNKS, REFRESH_SHARE * self.chunks)


def read_record(text: str | None) -> StoreFloor | None:
    """The record in the meta table, or None when there is none or it cannot be read (an
    older or damaged record is measured again, never trusted)."""
    if not text:
        return None
    try:
        data = json.loads(text)
        record = StoreFloor(
            value=float(data["value"]),
            probes=int(data["probes"]),
            probe_set=str(data["probe_set"]),
            model=str(data["model"]),
            chunks=int(data["chunks"]),
            changed=int(data.get("changed", 0)),
        )
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    return record if math.isfinite(record.value) and 0 <= record.value <= 1 else None


@dataclass(frozen=True)
class Floor:
    """The floor one search applies, and where it came from (said in the no-answer note and
    ``--explain``)."""

    value: float
    #: "store": measured on this store; "config": ``[limits] min_similarity``; "search": given
    #: for this search alone; "default": the store has nothing to measure it on.
    source: str
    #: For a store floor: its record (how many probes, computed now or cached).
    record: StoreFloor | None = None
    #: True when the store floor was measured for this search (the index holds none yet).
    measured_now: bool = False

    def describe(self) -> str:
        if self.source == "store" and self.record is not None:
            text = self.record.describe()
            return text + (
                " (measured for this search: `memsift index` records it)"
                if self.measured_now
                else ""
            )
        return {
            "config": f"floor {self.value:.2f} from [limits] min_similarity",
            "search": f"floor {self.value:.2f} set for this search",
        }.get(self.source, f"default floor {self.value:.2f} (nothing to measure a store floor on)")
