"""The abstention floor calibrated on the store itself: probes, the rule, the cached record.

A search answers nothing when no memory holds every query word and none is as similar to
the query as a floor (:func:`engine.search.abstain`). How similar a query nothing answers gets
depends on the store: a large store has more chances of a near chunk, a store of short chat
messages sits closer to everyday questions than one of manuals, and a language model puts
some topics nearer each other than others. On one user's 845 documents a string of made-up
words reached 0.34 while the fixed floor was 0.25; on the evaluation sets the same floor caught
from 58 % to 90 % of foreign queries. So the floor is measured on each store: a fixed list of
queries that no store can answer (:data:`PROBES`, strings of made-up words) is embedded once
and compared with every chunk of the store; the best similarity each probe reaches is what a
query with nothing in common with the store reaches there, and the floor sits above most of
them (:func:`floor_from`). It is a floor for nonsense first: a question with real words about
a topic the store lacks can still reach past it (the Measured page counts how often).

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

#: The queries whose best similarity in a store says what a query with no meaning in common
#: with it reaches there: strings of made-up words, two to six long. Only made-up words: any
#: real topic is what some store is about (everyday questions reached 0.36 on a store of
#: everyday memories whose real questions start at 0.28), while no store is about these.
#: Kept apart from the benchmark's questions (benchmarks/abstention/*.json), which they must not
#: repeat: the benchmark measures the floor on questions it was not made from.
PROBES: tuple[str, ...] = (
    "vorple trandish",
    "quist morbidane flurrow",
    "zanthic umbrolo pessik varnay",
    "blorvish nekkatine oomstrel",
    "frundle kavish sprome tellivax",
    "glomberish yottan wrezzik plume",
    "ostrivane dunnigrath",
    "mimbrel vochette arrunt",
    "trellopine zug haskeroon viddle",
    "pernicule saffwick droom obberly",
    "wuzzic lantrope ickenby",
    "sprackle ummitor zoven glastery",
    "hobbleshank tirrivee quonset murr",
    "drovish pallingrade fenk",
    "clumberane yiss tokkle parvendry",
    "arbolith nuzzery grimpet swale",
    "kettiwump orsane",
    "fabberloo gristen moxley drune",
    "umbershay pontriss kolve",
    "snerridge wollapane izzet crom",
    "plovitch aumbery tressik vanderlope hoom",
    "jibbitane squorn",
    "mazzledrop fennigrew otch",
    "yolanthe brisk skammery duvvle",
    "crandelope nippish aurrow teb",
    "gorrimant velliscue pob",
    "thrumbly oskavane rieff",
    "whiskadoon pertle umbriss gant",
    "lorriwick drabbet zennish",
    "quoggery massilane thrip obrun",
    "vindlestraw opperkin",
    "hessimac trollivane purrix dask",
    "nubbleweft cavorane",
    "stroffick yemberlane poddish ulk",
    "brindlemoss quark tavvy",
    "eskerfane mollitrope jib",
    "dimbrelow scuttix parrowane",
    "folliwrack nemmet oustery glade",
    "zibberlock tanquist",
    "ruddlemire axxon pellivore swint",
    "caddowane fribbish olm",
    "tremmeldust yarrowick spink",
    "gobbleswathe innerfrond dalpish",
    "pontivex mirrowane claddish",
    "wendleprawn oskry tumbrel vash",
    "scrivvelane humbery drox",
    "kallimoor sprattish venn",
    "oddlethorpe zanquivel muckery frane skiv",
)

#: Names the probe list, so a record made from another list is recomputed.
PROBE_SET = hashlib.sha256("\n".join(PROBES).encode("utf-8")).hexdigest()[:12]

#: Where the record lives in the index's meta table.
META_KEY = "store_floor"

#: The floor is this quantile of the probes' best similarities: above nine in ten strings of
#: made-up words in this store. Chosen on benchmarks/abstention.py's three corpora and the
#: evaluation sets: a margin above it (0.02 was tried) silenced a real question of madial-en,
#: whose answerable questions reach as little as 0.28.
QUANTILE = 0.9
#: Bounds: the lower one keeps a small store (few chunks, so few near ones) from answering
#: more than the fixed floor before it did; above the upper one half of madial-en's answerable
#: questions would be silenced.
MIN_FLOOR = 0.25
MAX_FLOOR = 0.45

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
    return round(min(MAX_FLOOR, max(MIN_FLOOR, quantile)), 4)


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
