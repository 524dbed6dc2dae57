"""Which abstention floor a search applies, and keeping the store floor's record current.

The rule and the probes are pure (:mod:`engine.ranking.floor`); this module joins them to the
embedder and to a backend. Two moments need the floor:

- an index run, full or of a few keys, or a background fill of vectors, ends with
  :func:`refresh` on the connection it wrote with: when the store changed materially since the
  record was made (or there is none), the probes are compared with every chunk vector again
  and the record is rewritten; otherwise only the count of chunks embedded since is added;
- a search that needs the floor (no memory holds every query word) takes it from
  :func:`choose`: a floor given for the search or set in ``config.toml`` wins; else the store
  floor from the index's record, or, for an index that holds none (made by an older memsift, or
  still being embedded), one measured in this process and kept for its next searches.

The probes are embedded once per process and model.
"""

from __future__ import annotations

import threading
from typing import Protocol
from weakref import WeakKeyDictionary

import numpy as np

from engine.indexing.embedder import Embedder
from engine.ranking.floor import (
    PROBE_SET,
    PROBES,
    Floor,
    StoreFloor,
    floor_from,
    read_record,
)

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "refresh",
]

#: What ``[limits] min_similarity`` meant before stores measured their own floor, and what a
#: store with no chunk vector to measure on still gets.
DEFAULT_FLOOR = 0.25


class FloorPlace(Protocol):
    """Where a backend keeps the record and how it compares the probes with its chunks."""

    def floor_record(self) -> str | None:
        """The record's text in the index's meta table, or None."""

    def embedded_chunks(self) -> tuple[str | None, int]:
        """The index's model and its chunks with a vector, as its meta table counts them."""

    def probe_best(self, probes: np.ndarray) -> np.ndarray:
        """For each probe row, its best similarity to any chunk vector of the index's width
        (an empty array when there is none)."""


class WritableFloorPlace(FloorPlace, Protocol):
    def write_floor_record(self, text: str) -> None: ...


_probe_vectors: dict[tuple[str, int], np.ndarray] = {}
_probe_lock = threading.Lock()


def probe_vectors(embedder: Embedder) -> np.ndarray:
    """The probes embedded by ``embedder`` (once per process and model)."""
    key = (embedder.name, embedder.dim)
    with _probe_lock:
        cached = _probe_vectors.get(key)
    if cached is None:
        cached = np.asarray(embedder.embed(list(PROBES)), dtype=np.float32)
        with _probe_lock:
            _probe_vectors[key] = cached
    return cached


def measure(place: FloorPlace, embedder: Embedder, chunks: int) -> StoreFloor | None:
    """The store floor measured now on ``place``'s vectors; None when it holds none."""
    best = place.probe_best(probe_vectors(embedder))
    value = floor_from(best.tolist())
    if value is None:
        return None
    return StoreFloor(value, int(best.size), PROBE_SET, embedder.name, chunks)


def refresh(place: WritableFloorPlace, embedder: Embedder | None, embedded: int) -> None:
    """After an index write that embedded ``embedded`` chunks: measure the store floor again
    when the store changed materially since its record was made (or it has none), else count
    the change into the record. Nothing without an embedder, or when the index's vectors are
    another model's (the next full run switches models and measures)."""
    if embedder is None:
        return
    model, chunks = place.embedded_chunks()
    if model != embedder.name or chunks == 0:
        return
    record = read_record(place.floor_record())
    if record is not None and not record.stale(embedder.name, chunks, embedded):
        if embedded:
            place.write_floor_record(record.with_changes(embedded).to_meta())
        return
    fresh = measure(place, embedder, chunks)
    if fresh is not None:
        place.write_floor_record(fresh.to_meta())


#: Store floors measured by searches of an index without a record, per search session.
_measured: WeakKeyDictionary[object, tuple[tuple[str, int], StoreFloor]] = WeakKeyDictionary()


def choose(
    given: float | None,
    configured: float | None,
    place: FloorPlace,
    embedder: Embedder | None,
) -> Floor:
    """The floor a search applies: ``given`` for this search, else ``configured`` in
    ``config.toml``, else the store's own."""
    if given is not None:
        return Floor(given, "search")
    if configured is not None:
        return Floor(configured, "config")
    if embedder is None:
        return Floor(DEFAULT_FLOOR, "default")
    record = read_record(place.floor_record())
    if record is not None and record.fits(embedder.name):
        return Floor(record.value, "store", record)
    _, chunks = place.embedded_chunks()
    key = (embedder.name, chunks)
    kept = _measured.get(place)
    if kept is not None and kept[0] == key:
        return Floor(kept[1].value, "store", kept[1], measured_now=True)
    fresh = measure(place, embedder, chunks)
    if fresh is None:
        return Floor(DEFAULT_FLOOR, "default")
    _measured[place] = (key, fresh)
    return Floor(fresh.value, "store", fresh, measured_now=True)
