"""The store floor on SQLite: its record in ``index.db``'s meta table, and the probes compared
with every chunk vector (see :mod:`engine.floor`).

The comparison streams the vectors a block at a time rather than loading the vector arm's
matrix (:mod:`engine.sqlite.knn`): an index run that measures the floor then holds no copy of
every vector after it, and a search process measures it at most once per index.
"""

from __future__ import annotations

import apsw
import numpy as np

from engine.ranking.floor import META_KEY
from engine.sqlite.db import immediate, read_meta, write_meta

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "SqliteFloorPlace",
]

#: Vectors compared per block (about 6 MB of 384-wide rows).
BLOCK_ROWS = 4096


class SqliteFloorPlace:
    """:class:`engine.floor.WritableFloorPlace` on one connection to ``index.db`` (writing
    only when the connection may write)."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn

    def floor_record(self) -> str | None:
        return read_meta(self.conn, META_KEY)

    def embedded_chunks(self) -> tuple[str | None, int]:
        return read_meta(self.conn, "model"), int(read_meta(self.conn, "embedded_chunks") or 0)

    def probe_best(self, probes: np.ndarray) -> np.ndarray:
        return probe_best(self.conn, probes)

    def write_floor_record(self, text: str) -> None:
        with immediate(self.conn):
            write_meta(self.conn, META_KEY, text)


def probe_best(conn: apsw.Connection, probes: np.ndarray) -> np.ndarray:
    """Each probe's best similarity (dot product: vectors are unit length, as the search's
    similarities assume) to the chunk vectors of the width the vector arm searches."""
    dim = read_meta(conn, "vec_dim")
    if dim is None or probes.size == 0 or probes.shape[1] != int(dim):
        return np.zeros(0, dtype=np.float32)
    best = np.full(probes.shape[0], -np.inf, dtype=np.float32)
    cursor = conn.execute(
        "SELECT e.vector FROM chunks AS c JOIN embeddings AS e ON e.hash = c.hash WHERE e.dim = ?",
        (int(dim),),
    )
    block: list[bytes] = []
    seen = False
    for (blob,) in cursor:
        block.append(blob)
        if len(block) == BLOCK_ROWS:
            best = np.maximum(best, block_best(block, probes))
            block, seen = [], True
    if block:
        best, seen = np.maximum(best, block_best(block, probes)), True
    return best if seen else np.zeros(0, dtype=np.float32)


def block_best(block: list[bytes], probes: np.ndarray) -> np.ndarray:
    rows = np.frombuffer(b"".join(block), dtype="<f4").reshape(len(block), -1)
    return (rows @ probes.T).max(axis=0)
