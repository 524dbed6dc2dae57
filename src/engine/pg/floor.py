"""The store floor on PostgreSQL: its record in the schema's meta table, and the probes compared
with the chunk vectors (see :mod:`engine.floor`).

Each probe asks for its one nearest vector the way the vector arm asks for its candidates
(``ORDER BY vector <=> probe LIMIT 1``): an exact scan by default, a walk through the HNSW
index when the store has one, so measuring costs what a few searches cost and never pulls
every vector out of the server. Through HNSW the nearest vector may be missed, so the floor can
come out a little low (answering a little more), never high.
"""

from __future__ import annotations

import numpy as np

from engine.pg import indexdb
from engine.pg.driver import PgConnection
from engine.ranking.floor import META_KEY

#: pgvector's cosine distance is one minus the cosine similarity.
NEAREST = (
    "SELECT 1 - (e.vector <=> %s) FROM embeddings AS e "
    "WHERE EXISTS (SELECT 1 FROM chunks AS c WHERE c.hash = e.hash) "
    "ORDER BY e.vector <=> %s LIMIT 1"
)


class PgFloorPlace:
    """:class:`engine.floor.WritableFloorPlace` on one connection to a team schema (with
    pgvector's types registered)."""

    def __init__(self, conn: PgConnection) -> None:
        self.conn = conn

    def floor_record(self) -> str | None:
        return indexdb.read_meta(self.conn, META_KEY)

    def embedded_chunks(self) -> tuple[str | None, int]:
        model = indexdb.read_meta(self.conn, "model")
        return model, int(indexdb.read_meta(self.conn, "embedded_chunks") or 0)

    def probe_best(self, probes: np.ndarray) -> np.ndarray:
        return probe_best(self.conn, probes)

    def write_floor_record(self, text: str) -> None:
        with self.conn:
            indexdb.write_meta(self.conn, META_KEY, text)


def probe_best(conn: PgConnection, probes: np.ndarray) -> np.ndarray:
    """Each probe's best similarity to a chunk vector of the store; empty when it has none or
    its vectors are of another width."""
    dim = indexdb.read_meta(conn, "dim")
    if dim is None or probes.size == 0 or probes.shape[1] != int(dim):
        return np.zeros(0, dtype=np.float32)
    best = []
    for probe in np.asarray(probes, dtype=np.float32):
        row = conn.run(NEAREST, (probe, probe)).fetchone()
        if row is None or row[0] is None:
            return np.zeros(0, dtype=np.float32)
        best.append(float(row[0]))
    return np.asarray(best, dtype=np.float32)
