"""Exact nearest chunks by cosine distance, as functions the vector arm's SQL selects from.

``nearest_files(?4, 200)`` compares the query vector with every chunk, places each file by its
nearest chunk and gives the 200 nearest files, each with its place (a JSON object
``{"file_id": place}``, expanded by ``json_each``; see :func:`nearest_files`).
``nearest_chunks(?4, 400)`` gives the 400 nearest chunks themselves, nearest first (a JSON
array of ``[chunk_id, distance]``), with the same distance sqlite-vec reports (one minus the
cosine similarity, in float32). The k-NN replaces
sqlite-vec's ``vec0`` k-NN in the vector arm because that scan selects its top ``k`` in time
proportional to ``k`` for every block of vectors: at 75,000 chunks and ``k = 400`` it took
120-320 ms on this project's 2-core machine, while a matrix product and a partial sort over
the same vectors take about 20 ms. The answer is the same set,
exactly: every vector is compared, nothing is approximate.

A search that knows its query vector before its statement runs hands it to :func:`ahead`:
each file's distance is then computed on a worker thread while the statement's full-text arm
runs (SQLite lets go of Python's lock while it works), and ``nearest_files`` takes the result
when the index's vectors are still those it was computed on. At 2,000 memories that hides
about a tenth of a search; the distances are the same numbers either way.

The product runs on this module's own threads, never on BLAS's: OpenBLAS keeps its workers
spinning for about a tenth of a second after every call, and in a server on two cores that
spinner took the core the client and the rest of the search needed (a whole statement measured
twice its wall time in CPU). One BLAS thread per slice of rows, with a worker that sleeps in
between, is as fast on 75,000 chunks and gives back the core as soon as it is done. Each row's
dot product is the same computation whichever way the rows are sliced, so the distances do not
change.

The vectors are read once per process into one normalised float32 matrix per index and
reused while the index's ``vectors_version`` (in ``meta``, bumped by the triggers that keep
``vec_chunks`` in step with ``chunks`` and ``embeddings``) stays the same. The version is read
in the statement's own snapshot, so a search never pairs the chunk ids of one moment with the
files of another. An index with no version (written by an older memsift) is read afresh for
every search: slower, never stale. The matrix costs 4 bytes per dimension per chunk
(115 MB for 75,000 chunks of 384 dimensions), held as long as the process searches.

numpy and the thread pool are imported by the functions that use them, not with the module:
every connection registers the function (:func:`engine.sqlite.db.connect`), and one that never
searches by meaning (an index run without embeddings, the docs build preparing the statements)
should not load numpy for it.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import chain
from typing import TYPE_CHECKING

import apsw

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    import numpy as np
    from threadpoolctl import ThreadpoolController

TABLE = "nearest_chunks"
FILES = "nearest_files"
#: Files the vector arm asks ``nearest_files`` for, per candidate it offers: its SQL says
#: ``nearest_files(?4, 2 * ?2)`` (a test holds the two together; if they part, the answer
#: made ahead is not used, never wrong).
FILES_PER_CANDIDATE = 2
VERSION_KEY = "vectors_version"
#: Indexes whose matrices one process keeps (an evaluation walks through many stores).
CACHED_INDEXES = 4
#: Rows below which the product runs on the calling thread alone (handing a slice to a
#: worker costs more than it saves on a small store).
ROWS_PER_SLICE = 4096
#: Slices at most (one per core, no more than this).
MAX_SLICES = 4


@dataclass(frozen=True)
class Matrix:
    """Every embedded chunk of the index's vector width: ids and unit rows, in id order; and
    the chunks grouped by file, for :func:`file_distances` (a chunk never moves to another
    file: chunks are only inserted and deleted, and either bumps the version): ``by_file``
    orders the chunks file by file, ``starts`` is where each file's run begins in that order
    and ``owners`` the file of each run."""

    version: str | None
    ids: np.ndarray
    rows: np.ndarray
    by_file: np.ndarray
    starts: np.ndarray
    owners: np.ndarray

    @property
    def dim(self) -> int:
        return int(self.rows.shape[1])


_cache: dict[str, Matrix] = {}
_lock = threading.Lock()
_product_lock = threading.Lock()
#: Per-file distances under way or done (:func:`ahead`), by index and query vector: the
#: version of the matrix they are computed on, and the computation.
_ahead: dict[tuple[str, bytes], tuple[str, Future[Ahead]]] = {}
#: Computations kept for statements yet to ask (one per search under way is enough; a search
#: whose statement never asks leaves one behind until newer ones push it out).
AHEAD_KEPT = 8


def register(conn: apsw.Connection) -> None:
    """Make ``nearest_chunks(query, k)`` available on ``conn``.

    It is a scalar function returning the rows as one JSON array of ``[chunk_id, distance]``
    pairs, which the statement expands with ``json_each``: a table-valued function written in
    Python hands SQLite one row per callback, and at 400 rows those callbacks cost more than
    the matrix product (3 ms against 0.5 ms at 2,000 notes). See :func:`as_json` for how the
    distances are written.
    """

    def nearest_chunks(query: object, k: object) -> str:
        return as_json(nearest(conn, query, k))  # type: ignore[arg-type]

    def nearest_files_json(query: object, k: object) -> str:
        return nearest_files_text(conn, query, k)  # type: ignore[arg-type]

    conn.create_scalar_function(TABLE, nearest_chunks, 2)
    conn.create_scalar_function(FILES, nearest_files_json, 2)


def as_json(pairs: list[tuple[int, float]]) -> str:
    """``pairs`` as a JSON array of ``[chunk_id, distance]``, each distance in 9 significant
    digits: the distances are float32 values (the product runs in float32), and 9 digits name
    a float32 exactly, so distinct distances stay distinct and in the same order, and equal
    ones equal, once SQLite reads them back; that order is all the vector arm uses. The
    shortest text of the float64 each one is (``json.dumps``) takes 17 digits and, at 400
    chunks, a tenth of a search at 2,000 memories."""
    return json_template(len(pairs)) % tuple(chain.from_iterable(pairs))


@lru_cache(maxsize=8)
def json_template(pairs: int) -> str:
    """The array of ``pairs`` pairs as one format string: one ``%`` over every value is about
    a third faster than formatting each pair on its own."""
    return "[" + ",".join(["[%d,%.9g]"] * pairs) + "]"


def places_json(files: np.ndarray, places: np.ndarray) -> str:
    """Each file's place as one JSON object ``{"file_id": place, ...}``: ``json_each`` gives the
    id as the key and the place as the value, with no text to parse per row (an array of pairs
    took a ``->>`` per value, a tenth of the vector arm at 2,000 memories); whole numbers are
    written three times faster than a float32's nine digits, and one ``%`` over every value
    twice as fast as a format per file."""
    import numpy as np
    return object_template(len(files)) % tuple(np.column_stack((files, places)).ravel().tolist())


@lru_cache(maxsize=64)
def object_template(entries: int) -> str:
    return "{" + ",".join(['"%d":%d'] * entries) + "}"


def nearest_files(conn: apsw.Connection, query: bytes, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` files nearest ``query`` (a float32 blob), each placed by its nearest chunk,
    that lie strictly nearer than the ``k``-th of them (every file when ``k`` reaches their
    number), and the place of each: 1 for the nearest distance, 2 for the next distinct one,
    equal distances the same place.

    This is what the vector arm needs of the k-NN, done where it is cheap. A file left out is
    no nearer than any file given. The arm's shortcut is exact when at least ``?2`` files in
    scope are given (it then ranks only those); a file at exactly the ``k``-th distance could
    never be among its first ``?2`` then, so it is not given at all (a file tied with it could
    be left out). The places order the files as their distances do, ties included, so SQL
    that orders by place orders by distance. Grouping the chunks by file here saves the
    statement a join to ``chunks`` and a GROUP BY over hundreds of rows; counting files, not
    chunks, gives the shortcut as many files whether a memory is one chunk or fifty."""
    matrix = current_matrix(conn)
    return files_within(matrix, file_distances(matrix, query, FILES), k)


def nearest_files_text(conn: apsw.Connection, query: bytes, k: int) -> str:
    """:func:`nearest_files` as the JSON object the statement expands (:func:`places_json`),
    ready-made when :func:`ahead` made it for these vectors and this ``k``."""
    matrix = current_matrix(conn)
    done = computed_ahead(conn, matrix, query)
    if done is not None and done.k == int(k):
        return done.text
    distance = done.distance if done is not None else file_distances(matrix, query, FILES)
    return places_json(*files_within(matrix, distance, k))


def files_within(
    matrix: Matrix, distance: np.ndarray | None, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """The files and places :func:`nearest_files` gives, from each file's distance."""
    import numpy as np
    none = np.zeros(0, np.int64)
    if distance is None:
        return none, none
    k = max(0, min(int(k), distance.shape[0]))
    if k == 0:
        return none, none
    if k < distance.shape[0]:
        farthest = np.partition(distance, k - 1)[k - 1]
        inside = np.flatnonzero(distance < farthest)
    else:
        inside = np.arange(distance.shape[0])
    _, places = np.unique(distance[inside], return_inverse=True)
    return matrix.owners[inside], places + 1


def file_distances(matrix: Matrix, query: bytes, function: str) -> np.ndarray | None:
    """Each file's distance to ``query`` (a float32 blob): its nearest chunk's, in the order
    of ``matrix.owners``; None when the index holds no vector. A minimum rounds nothing, so
    a file's distance is exactly its nearest chunk's."""
    import numpy as np
    distance = chunk_distances(matrix, query, function)
    if distance is None:
        return None
    return np.minimum.reduceat(distance[matrix.by_file], matrix.starts)


@dataclass(frozen=True)
class Ahead:
    """What :func:`ahead` computed: each file's distance, and the statement's JSON object for
    ``k`` files (``k`` None: not made)."""

    distance: np.ndarray | None
    k: int | None
    text: str


def compute_ahead(matrix: Matrix, query: bytes, k: int | None) -> Ahead:
    distance = file_distances(matrix, query, FILES)
    text = places_json(*files_within(matrix, distance, k)) if k is not None else ""
    return Ahead(distance, k, text)


def ahead(key: str, query: bytes, k: int | None = None) -> None:
    """Start computing each file's distance to ``query`` on a worker, for the statement
    about to ask ``nearest_files(query, k)`` on a connection to the index ``key`` (its
    ``db_filename("main")``; given ``k``, the answer itself is made). Only a matrix already
    in memory is used (the worker never touches the connection, which the statement holds);
    when there is none, or the vectors change before the statement reads them, the statement
    computes its own. Nothing here calls SQLite, which would let the worker take Python's
    lock from the caller before the caller is inside its statement."""
    with _lock:
        matrix = _cache.get(key)
    if matrix is None or matrix.version is None or matrix.rows.shape[0] == 0:
        return
    if not isinstance(query, bytes) or len(query) != 4 * matrix.dim:
        return  # the statement gives the error, naming its function
    try:
        future = ahead_worker().submit(compute_ahead, matrix, query, k)
    except RuntimeError:
        # No worker to be had: the interpreter is shutting down (a thread that searches
        # after the main one returned) or no thread can start. Nothing is lost: the
        # statement computes its own, as it does without a matrix in memory.
        return
    with _lock:
        replaced = _ahead.pop((key, query), None)
        _ahead[(key, query)] = (matrix.version, future)
        dropped = [] if replaced is None else [replaced[1]]
        while len(_ahead) > AHEAD_KEPT:  # the oldest first
            dropped.append(_ahead.pop(next(iter(_ahead)))[1])
    for pending in dropped:
        pending.cancel()  # no statement will take it: not computed when not started yet


def computed_ahead(conn: apsw.Connection, matrix: Matrix, query: bytes) -> Ahead | None:
    """What :func:`ahead` computed for ``query`` on ``matrix``'s vectors (waiting for it if
    need be); None when nothing was started on these vectors or the computation failed (the
    caller then computes it, and meets the error itself)."""
    with _lock:
        pending = _ahead.pop((conn.db_filename("main"), query), None)
    if pending is None or pending[0] != matrix.version or matrix.version is None:
        return None
    try:
        return pending[1].result()
    except Exception:  # computed again on this thread, where it raises
        return None


def distances(
    conn: apsw.Connection, query: bytes, function: str
) -> tuple[Matrix, np.ndarray] | None:
    """The matrix of ``conn``'s index and each chunk's cosine distance to ``query`` (a float32
    blob), in float32; None when the index holds no vector. ``function`` names the SQL
    function asked, for the errors."""
    matrix = current_matrix(conn)
    distance = chunk_distances(matrix, query, function)
    return None if distance is None else (matrix, distance)


def chunk_distances(matrix: Matrix, query: bytes, function: str) -> np.ndarray | None:
    """Each chunk's cosine distance to ``query`` (a float32 blob), in float32, in id order;
    None when ``matrix`` holds no vector."""
    if not isinstance(query, bytes) or len(query) % 4:
        raise ValueError(f"{function}: the query vector must be a float32 blob, got {type(query)}")
    import numpy as np
    q = np.frombuffer(query, dtype="<f4")
    if matrix.rows.shape[0] == 0:
        return None
    if q.shape[0] != matrix.dim:
        raise ValueError(
            f"{function}: the query vector has {q.shape[0]} dimensions, the index's vectors "
            f"{matrix.dim}"
        )
    norm = float(np.linalg.norm(q))
    rows = matrix.rows
    similarity = similarities(rows, q / norm) if norm > 0 else np.zeros(rows.shape[0], "<f4")
    return 1.0 - similarity


def nearest(conn: apsw.Connection, query: bytes, k: int) -> list[tuple[int, float]]:
    """The ``k`` chunks nearest ``query`` (a float32 blob), nearest first; ties by chunk id."""
    import numpy as np
    found = distances(conn, query, TABLE)
    if found is None:
        return []
    matrix, distance = found
    k = max(0, min(int(k), distance.shape[0]))
    if k == 0:
        return []
    picked = np.argpartition(distance, k - 1)[:k] if k < distance.shape[0] else np.arange(k)
    picked = picked[np.lexsort((matrix.ids[picked], distance[picked]))]
    return list(zip(matrix.ids[picked].tolist(), distance[picked].tolist(), strict=True))


def similarities(rows: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """``rows @ unit``, on one BLAS thread per slice of rows (see the module docstring)."""
    import numpy as np
    out = np.empty(rows.shape[0], dtype=np.float32)
    bounds = slice_bounds(rows.shape[0], slice_count(rows.shape[0]))
    # BLAS's thread count is one setting for the whole process: two searches limiting and
    # restoring it at once could leave it at one for good, so products take turns (each one
    # already uses every core).
    with _product_lock, blas_controller().limit(limits=1):
        pending = []
        mine = [bounds[0]]
        for start, end in bounds[1:]:
            try:
                pending.append(
                    workers().submit(np.matmul, rows[start:end], unit, out=out[start:end])
                )
            except RuntimeError:  # no pool to be had (the interpreter is shutting down)
                mine.append((start, end))
        for start, end in mine:
            np.matmul(rows[start:end], unit, out=out[start:end])
        for future in pending:
            future.result()
    return out


def slice_count(rows: int) -> int:
    return max(1, min(cores(), MAX_SLICES, rows // ROWS_PER_SLICE))


def cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def slice_bounds(rows: int, count: int) -> list[tuple[int, int]]:
    """``count`` contiguous slices covering ``rows``, cut at multiples of 8 rows (the BLAS
    kernels' blocks, so a row meets the same code whichever slice it falls in)."""
    cuts = [0] + [rows * i // count // 8 * 8 for i in range(1, count)] + [rows]
    return [(cuts[i], cuts[i + 1]) for i in range(count)]


@cache
def blas_controller() -> ThreadpoolController:
    """The BLAS libraries NumPy loaded, found once (a scan of the process's libraries);
    imported here, so a process that never searches by meaning does not pay for it."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController().select(user_api="blas")


def after_fork() -> None:
    """A forked child has none of its parent's threads: a pool it inherited would take work
    and never do it, and a lock held by a parent's thread would never be let go. The child
    starts its own, with nothing pending (its matrices are kept: they are only data)."""
    global _lock, _product_lock
    _lock, _product_lock = threading.Lock(), threading.Lock()
    _ahead.clear()
    ahead_worker.cache_clear()
    workers.cache_clear()


@cache
def ahead_worker() -> ThreadPoolExecutor:
    """The thread :func:`ahead` computes on: its own, so a slice of a product it hands to
    :func:`workers` never waits behind the computation that handed it."""
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(1, thread_name_prefix="memsift-ahead")


@cache
def workers() -> ThreadPoolExecutor:
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(MAX_SLICES - 1, thread_name_prefix="memsift-knn")


def current_matrix(conn: apsw.Connection) -> Matrix:
    """The cached matrix of ``conn``'s index while its vectors are unchanged; else read anew."""
    version = read_version(conn)
    key = conn.db_filename("main")
    with _lock:
        cached = _cache.get(key)
        if cached is not None and version is not None and cached.version == version:
            return cached
    matrix = load(conn, version)
    if version is not None:
        with _lock:
            _cache.pop(key, None)
            _cache[key] = matrix
            while len(_cache) > CACHED_INDEXES:  # the least recently loaded goes first
                del _cache[next(iter(_cache))]
    return matrix


def read_version(conn: apsw.Connection) -> str | None:
    row = conn.execute("SELECT value FROM main.meta WHERE key = ?", (VERSION_KEY,)).fetchone()
    return None if row is None else str(row[0])


def load(conn: apsw.Connection, version: str | None) -> Matrix:
    """Every chunk vector of the width ``vec_chunks`` holds (the one the vector arm searches)."""
    import numpy as np
    row = conn.execute("SELECT value FROM main.meta WHERE key = 'vec_dim'").fetchone()
    if row is None:
        empty = np.zeros(0, np.int64)
        return Matrix(version, empty, np.zeros((0, 0), "<f4"), empty, empty, empty)
    dim = int(row[0])
    triples = conn.execute(
        "SELECT c.id, c.file_id, e.vector FROM main.chunks AS c JOIN main.embeddings AS e "
        "ON e.hash = c.hash WHERE e.dim = ? ORDER BY c.id",
        (dim,),
    ).fetchall()
    ids = np.fromiter((chunk_id for chunk_id, _, _ in triples), np.int64, count=len(triples))
    files = np.fromiter((file_id for _, file_id, _ in triples), np.int64, count=len(triples))
    rows = np.frombuffer(b"".join(blob for _, _, blob in triples), dtype="<f4").reshape(-1, dim)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit = np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)
    by_file = np.argsort(files, kind="stable")
    grouped = files[by_file]
    first = np.ones(grouped.size, dtype=bool)
    np.not_equal(grouped[1:], grouped[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    return Matrix(version, ids, unit, by_file, starts, grouped[starts])


def forget(conn: apsw.Connection) -> None:
    """Drop the cached matrix of ``conn``'s index (tests; a process that is done searching)."""
    key = conn.db_filename("main")
    with _lock:
        _cache.pop(key, None)
        dropped = [_ahead.pop(pending)[1] for pending in list(_ahead) if pending[0] == key]
    for future in dropped:
        future.cancel()  # not computed when not started yet


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=after_fork)
