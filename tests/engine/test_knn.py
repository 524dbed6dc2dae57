"""nearest_chunks and nearest_files: the vector arm's exact k-NN, and the cached matrix it must
never serve stale."""

from __future__ import annotations

import itertools
import os
import select
import signal
import subprocess
import sys
import threading

import apsw
import numpy as np
import pytest

from conftest import touch_later
from engine.indexing.indexer import index_store
from engine.sqlite import knn
from engine.sqlite.db import open_index, open_index_reader

NOTES = {
    f"n{i:02d}.md": f"# Note {i}\n\n{' '.join(f'word{(i * j) % 23}' for j in range(1, 9))}\n"
    for i in range(30)
}


def query_blob(embedder, text: str) -> bytes:  # type: ignore[no-untyped-def]
    return np.asarray(embedder.embed([text])[0], dtype="<f4").tobytes()


def vec0_nearest(conn: apsw.Connection, query: bytes, k: int) -> list[int]:
    """The reference: sqlite-vec's own exact k-NN over the same vectors."""
    rows = conn.execute(
        "SELECT chunk_id, distance FROM vec_chunks WHERE embedding MATCH ? AND k = ?", (query, k)
    ).fetchall()
    return [chunk_id for chunk_id, _ in sorted(rows, key=lambda row: (round(row[1], 5), row[0]))]


def table_nearest(conn: apsw.Connection, query: bytes, k: int) -> list[tuple[int, float]]:
    return conn.execute(
        "SELECT j.value ->> 0, j.value ->> 1 FROM json_each(nearest_chunks(?, ?)) AS j", (query, k)
    ).fetchall()


@pytest.fixture
def indexed(make_store, hash_embedder):  # type: ignore[no-untyped-def]
    store = make_store(NOTES)
    index_store(store, embedder=hash_embedder)
    return store


def test_nearest_chunks_agrees_with_sqlite_vec(indexed, hash_embedder):  # type: ignore[no-untyped-def]
    conn = open_index_reader(indexed.index_path)
    try:
        for text in ("word3 word7", "word11 word12 word1", "nothing shared"):
            query = query_blob(hash_embedder, text)
            ours = table_nearest(conn, query, 12)
            ordered = sorted(ours, key=lambda row: (round(row[1], 5), row[0]))
            ranked = [chunk_id for chunk_id, _ in ordered]
            assert ranked == vec0_nearest(conn, query, 12)
            assert [d for _, d in ours] == sorted(d for _, d in ours)
    finally:
        conn.close()


def test_nearest_chunks_returns_every_chunk_when_k_exceeds_them(indexed, hash_embedder):  # type: ignore[no-untyped-def]
    conn = open_index_reader(indexed.index_path)
    try:
        (chunks,) = conn.execute("SELECT count(*) FROM vec_chunks").fetchone()
        assert len(table_nearest(conn, query_blob(hash_embedder, "word5"), 10_000)) == chunks
        assert table_nearest(conn, query_blob(hash_embedder, "word5"), 0) == []
    finally:
        conn.close()


def table_files(conn: apsw.Connection, query: bytes, k: int) -> dict[int, int]:
    rows = conn.execute(
        "SELECT CAST(j.key AS integer), j.value FROM json_each(nearest_files(?, ?)) AS j",
        (query, k),
    ).fetchall()
    return dict(rows)


def nearest_files_reference(conn: apsw.Connection, query: bytes, k: int) -> dict[int, float]:
    """The reference: every chunk's distance from the one-by-one k-NN, each file placed by its
    nearest chunk, and the files strictly nearer than the k-th file (all of them when k
    reaches their number)."""
    chunks = knn.nearest(conn, query, 10_000)
    file_of = dict(conn.execute("SELECT id, file_id FROM chunks").fetchall())
    best: dict[int, float] = {}
    for chunk_id, distance in chunks:
        file_id = file_of[chunk_id]
        best[file_id] = min(best.get(file_id, distance), distance)
    if k >= len(best):
        return best
    farthest = sorted(best.values())[k - 1]
    return {file_id: distance for file_id, distance in best.items() if distance < farthest}


def test_nearest_files_places_each_file_by_its_nearest_chunk_in_distance_order(
    make_store, hash_embedder
):  # type: ignore[no-untyped-def]
    # Long notes make several chunks each, so a file is often fetched through two of them.
    store = make_store(
        {
            f"n{i:02d}.md": f"# Note {i}\n\n"
            + "\n\n".join(
                " ".join(f"word{(i * j + p) % 29}" for j in range(1, 120)) for p in range(4)
            )
            for i in range(30)
        }
    )
    index_store(store, embedder=hash_embedder)
    conn = open_index_reader(store.index_path)
    try:
        assert conn.execute("SELECT count(*) FROM chunks").fetchone()[0] > 30
        for text, k in (("word3 word7", 12), ("word11 word12", 40), ("nothing", 7)):
            query = query_blob(hash_embedder, text)
            places = table_files(conn, query, k)
            reference = nearest_files_reference(conn, query, k)
            assert set(places) == set(reference)
            # The places order the files as their distances do, equal distances one place.
            for a, b in itertools.product(places, places):
                assert (reference[a] < reference[b]) == (places[a] < places[b])
                assert (reference[a] == reference[b]) == (places[a] == places[b])
            used = sorted(set(places.values()))
            assert used == list(range(1, len(used) + 1))
    finally:
        conn.close()


def test_files_with_the_same_text_share_a_place_and_the_farthest_distance_is_left_out(
    make_store, hash_embedder
):  # type: ignore[no-untyped-def]
    twins = {"a.md": "# Tea\n\ngreen tea leaves\n", "b.md": "# Tea\n\ngreen tea leaves\n"}
    others = {f"o{i}.md": f"# Other {i}\n\nword{i} word{i + 1}\n" for i in range(6)}
    store = make_store({**twins, **others})
    index_store(store, embedder=hash_embedder)
    conn = open_index_reader(store.index_path)
    try:
        ids = dict(conn.execute("SELECT path, id FROM files").fetchall())
        query = query_blob(hash_embedder, "green tea leaves")
        places = table_files(conn, query, 4)
        assert places[ids["a.md"]] == places[ids["b.md"]] == 1
        # With k = 2 the twins are both the nearest and the farthest fetched: neither lies
        # strictly inside, so neither is given (a third copy could tie them unseen).
        assert table_files(conn, query, 2) == {}
        assert table_files(conn, query, 0) == {}
    finally:
        conn.close()


def test_a_rewritten_file_is_seen_by_a_connection_that_searched_before(indexed, hash_embedder):  # type: ignore[no-untyped-def]
    # Rewriting the last file gives its new chunks the ids the old ones had (SQLite reuses the
    # largest rowid), so only a version that follows every change can tell the matrix is stale.
    conn = open_index_reader(indexed.index_path)
    try:
        query = query_blob(hash_embedder, "zebra quagga")
        before = table_nearest(conn, query, 1)
        (last_id,) = conn.execute("SELECT max(id) FROM chunks").fetchone()
        last = conn.execute(
            "SELECT f.path FROM chunks AS c JOIN files AS f ON f.id = c.file_id WHERE c.id = ?",
            (last_id,),
        ).fetchone()[0]
        path = indexed.root / last
        path.write_text("# Zebra\n\nzebra quagga\n", encoding="utf-8")
        touch_later(path)
        index_store(indexed, embedder=hash_embedder)
        after = table_nearest(conn, query, 1)
        assert after[0][0] == last_id  # the same id, a new vector
        assert after[0][1] < before[0][1]
        assert [c for c, _ in table_nearest(conn, query, 5)] == vec0_nearest(conn, query, 5)
    finally:
        conn.close()


def test_an_index_deleted_and_rebuilt_starts_a_new_version(indexed, hash_embedder):  # type: ignore[no-untyped-def]
    conn = open_index(indexed.index_path)
    first = knn.read_version(conn)
    conn.close()
    for suffix in ("", "-wal", "-shm"):
        indexed.index_path.with_name(indexed.index_path.name + suffix).unlink(missing_ok=True)
    index_store(indexed, embedder=hash_embedder)
    conn = open_index(indexed.index_path)
    try:
        assert knn.read_version(conn) not in (None, first)
    finally:
        conn.close()


def test_an_index_without_a_version_is_read_afresh_each_time(indexed, hash_embedder):  # type: ignore[no-untyped-def]
    conn = open_index(indexed.index_path)
    try:
        query = query_blob(hash_embedder, "word3")
        reference = vec0_nearest(conn, query, 3)
        assert [c for c, _ in table_nearest(conn, query, 3)] == reference  # now cached
        with conn:  # an older memsift: no version, and a writer that does not bump one
            conn.execute("DELETE FROM meta WHERE key = ?", (knn.VERSION_KEY,))
            conn.execute("DROP TRIGGER chunks_vec_delete")
            conn.execute("DELETE FROM chunks WHERE id = ?", (reference[0],))
            conn.execute("DELETE FROM vec_chunks WHERE chunk_id = ?", (reference[0],))
        assert reference[0] not in [c for c, _ in table_nearest(conn, query, 3)]
    finally:
        conn.close()


def test_the_distances_sqlite_reads_back_keep_every_float32_order_and_tie():
    # The vector arm only orders and compares the distances; written with fewer digits than
    # a float32 needs, two distances a bit apart would read back equal (or swapped).
    rng = np.random.default_rng(3)
    near_one = np.float32(1) - rng.random(2000, dtype=np.float32) * np.float32(1e-4)
    spread = rng.random(2000, dtype=np.float32) * np.float32(2)
    tiny = np.float32(2) ** -np.arange(1, 60, dtype=np.float32)
    values = np.concatenate([near_one, spread, tiny, -tiny, [np.float32(0)]]).astype("<f4")
    values = np.concatenate([values, np.nextafter(values, np.float32(3)), values[:50]])
    text = knn.as_json([(i, float(v)) for i, v in enumerate(values)])
    conn = apsw.Connection(":memory:")
    read = dict(conn.execute("SELECT j.value ->> 0, j.value ->> 1 FROM json_each(?) AS j", (text,)))
    back = np.array([read[i] for i in range(len(values))])
    order = np.argsort(values, kind="stable")
    # Sorted by the float32 values, each step up stays a step up and each tie a tie.
    assert np.array_equal(
        np.sign(np.diff(values[order].astype(np.float64))), np.sign(np.diff(back[order]))
    )


def test_a_query_vector_of_another_width_is_a_clear_error(indexed):  # type: ignore[no-untyped-def]
    conn = open_index_reader(indexed.index_path)
    try:
        with pytest.raises(ValueError, match="3 dimensions, the index's vectors 16"):
            table_nearest(conn, np.ones(3, dtype="<f4").tobytes(), 5)
    finally:
        conn.close()


def test_a_zero_vector_is_far_from_everything_not_nan(indexed):  # type: ignore[no-untyped-def]
    conn = open_index_reader(indexed.index_path)
    try:
        rows = table_nearest(conn, np.zeros(16, dtype="<f4").tobytes(), 4)
        assert [d for _, d in rows] == [1.0] * 4
    finally:
        conn.close()


def test_an_index_without_vectors_has_no_nearest_chunks(make_store):  # type: ignore[no-untyped-def]
    store = make_store(NOTES)
    index_store(store, embed=False)
    conn = open_index_reader(store.index_path)
    try:
        assert table_nearest(conn, np.ones(16, dtype="<f4").tobytes(), 4) == []
    finally:
        conn.close()


def test_numpy_is_loaded_by_the_first_search_by_meaning_not_by_the_connection(tmp_path):  # type: ignore[no-untyped-def]
    """The function is registered on every connection while numpy waits for its first call."""
    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "from engine.sqlite.db import open_index\n"
        "conn = open_index(Path(sys.argv[1]), create=True)\n"
        "before = 'numpy' in sys.modules\n"
        "sql = 'SELECT count(*) FROM json_each(nearest_chunks(?, 4))'\n"
        "found = conn.execute(sql, (bytes(64),)).fetchone()[0]\n"
        "print(before, found, 'numpy' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "index.db")], capture_output=True, text=True
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "0", "True"]


def test_a_process_keeps_the_matrices_of_a_few_indexes_only(make_store, hash_embedder, tmp_path):  # type: ignore[no-untyped-def]
    from engine.files.store import open_store

    paths = []
    for i in range(knn.CACHED_INDEXES + 2):
        root = tmp_path / f"s{i}"
        root.mkdir()
        (root / "a.md").write_text(f"# A{i}\n\nword{i}\n", encoding="utf-8")
        store = open_store(root)
        index_store(store, embedder=hash_embedder)
        conn = open_index_reader(store.index_path)
        try:
            table_nearest(conn, query_blob(hash_embedder, "word"), 1)
            paths.append(conn.db_filename("main"))
        finally:
            conn.close()
    assert len(knn._cache) <= knn.CACHED_INDEXES
    assert paths[-1] in knn._cache and paths[0] not in knn._cache


def unit_rows(count: int, dim: int = 48) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    rows = rng.standard_normal((count, dim), dtype=np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    query = rng.standard_normal(dim).astype(np.float32)
    return rows, query / np.linalg.norm(query)


def blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in knn.blas_controller().info()]


@pytest.mark.parametrize("count", [1, 7, 4099, 10_003])
def test_the_distances_do_not_depend_on_how_many_slices_compute_them(count, monkeypatch):  # type: ignore[no-untyped-def]
    """A store's ranking must not change with the machine's core count: every slicing gives
    every row the bits one thread gives it (BLAS's own threads did not, near their cuts)."""
    rows, query = unit_rows(count)
    with knn.blas_controller().limit(limits=1):
        reference = rows @ query
    for slices in (1, 2, 3, 4):
        monkeypatch.setattr(knn, "slice_count", lambda _rows, n=slices: n)
        assert np.array_equal(knn.similarities(rows, query), reference)


def test_a_product_is_computed_when_the_slice_workers_take_no_more_work(monkeypatch):  # type: ignore[no-untyped-def]
    """A search in a thread that outlives the main one meets pools that refuse work: the
    product is then computed on the searching thread, with the same bits."""
    from concurrent.futures import ThreadPoolExecutor

    rows, query = unit_rows(10_003)
    with knn.blas_controller().limit(limits=1):
        reference = rows @ query
    closed = ThreadPoolExecutor(1)
    closed.shutdown()
    monkeypatch.setattr(knn, "workers", lambda: closed)
    monkeypatch.setattr(knn, "slice_count", lambda _rows: 3)
    assert np.array_equal(knn.similarities(rows, query), reference)


def test_a_product_leaves_blas_threads_as_it_found_them():  # type: ignore[no-untyped-def]
    before = blas_threads()
    rows, query = unit_rows(20_000)
    knn.similarities(rows, query)
    assert blas_threads() == before


def test_blas_runs_on_one_thread_inside_a_product(monkeypatch):  # type: ignore[no-untyped-def]
    """OpenBLAS's workers spin for a while after each call: the product keeps them out."""
    seen: list[list[int]] = []
    real = np.matmul

    def watched(*args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(blas_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(np, "matmul", watched)
    rows, query = unit_rows(20_000)
    knn.similarities(rows, query)
    assert seen and all(threads == [1] * len(threads) for threads in seen)


def test_distances_computed_ahead_give_the_files_the_statement_computes(indexed, hash_embedder):  # type: ignore[no-untyped-def]
    conn = open_index_reader(indexed.index_path)
    try:
        query = query_blob(hash_embedder, "word3 word7")
        alone = table_files(conn, query, 6)  # also loads the matrix ahead() works on
        for k in (None, 6, 9):  # none made, the one asked for, another
            knn.ahead(conn.db_filename("main"), query, k)
            assert (conn.db_filename("main"), query) in knn._ahead
            assert table_files(conn, query, 6) == alone
            assert (conn.db_filename("main"), query) not in knn._ahead  # the statement took it
    finally:
        conn.close()


def test_distances_computed_ahead_on_vectors_since_changed_are_not_used(indexed, hash_embedder):  # type: ignore[no-untyped-def]
    conn = open_index_reader(indexed.index_path)
    try:
        query = query_blob(hash_embedder, "zebra quagga")
        table_files(conn, query, 3)
        knn.ahead(conn.db_filename("main"), query)  # on the vectors as they are now
        knn._ahead[(conn.db_filename("main"), query)][1].result()
        (indexed.root / "zebra.md").write_text("# Zebra\n\nzebra quagga\n", encoding="utf-8")
        index_store(indexed, embedder=hash_embedder)
        (zebra,) = conn.execute("SELECT id FROM files WHERE path = 'zebra.md'").fetchone()
        places = table_files(conn, query, 3)
        assert places[zebra] == 1  # the new file, which the early distances never saw
    finally:
        conn.close()


def test_nothing_is_computed_ahead_without_a_matrix_in_memory_or_for_a_wrong_width(
    indexed, hash_embedder
):  # type: ignore[no-untyped-def]
    conn = open_index_reader(indexed.index_path)
    try:
        knn.forget(conn)
        query = query_blob(hash_embedder, "word3")
        knn.ahead(conn.db_filename("main"), query)  # the worker never reads the connection
        assert (conn.db_filename("main"), query) not in knn._ahead
        table_files(conn, query, 2)
        wrong = np.ones(3, dtype="<f4").tobytes()
        knn.ahead(conn.db_filename("main"), wrong)
        assert (conn.db_filename("main"), wrong) not in knn._ahead
        with pytest.raises(ValueError, match="3 dimensions, the index's vectors 16"):
            table_files(conn, wrong, 2)
    finally:
        conn.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")
def test_a_process_forked_after_searching_searches_on_its_own_threads(indexed, hash_embedder):  # type: ignore[no-untyped-def]
    """A child inherits the pools' objects but not their threads: work handed to them would
    wait for ever (a server that forks its workers after a first search)."""
    conn = open_index_reader(indexed.index_path)
    query = query_blob(hash_embedder, "word3 word7")
    expected = table_files(conn, query, 6)
    knn.similarities(*unit_rows(20_000))  # the slice workers have started
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the same search, with distances computed ahead
        try:
            knn.ahead(conn.db_filename("main"), query)
            knn.similarities(*unit_rows(20_000))
            ok = table_files(conn, query, 6) == expected
            os.write(write, b"ok" if ok else b"differs")
        finally:
            os._exit(0)
    os.close(write)
    ready: list[int] = []
    try:
        ready, _, _ = select.select([read], [], [], 60)  # a stuck child never answers
        answer = os.read(read, 16) if ready else b"no answer in 60 s"
        assert answer == b"ok"
    finally:
        if not ready:
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(read)
        conn.close()


def test_the_vector_arm_asks_for_as_many_files_as_the_search_finds_ahead():  # type: ignore[no-untyped-def]
    from engine.arms import ARMS

    (vector,) = [arm for arm in ARMS if arm.name == "vector"]
    assert f"nearest_files(?4, {knn.FILES_PER_CANDIDATE} * ?2)" in vector.sql


def test_the_answer_made_ahead_for_the_k_asked_is_not_made_again(  # type: ignore[no-untyped-def]
    indexed, hash_embedder, monkeypatch
):
    conn = open_index_reader(indexed.index_path)
    try:
        query = query_blob(hash_embedder, "word11 word12")
        alone = table_files(conn, query, 6)
        knn.ahead(conn.db_filename("main"), query, 6)
        knn._ahead[(conn.db_filename("main"), query)][1].result()

        def made_again(*args: object) -> str:
            raise AssertionError("the statement made the answer again")

        monkeypatch.setattr(knn, "places_json", made_again)
        assert table_files(conn, query, 6) == alone
    finally:
        conn.close()


def test_a_search_goes_on_when_the_worker_takes_no_more_work(indexed, hash_embedder, monkeypatch):  # type: ignore[no-untyped-def]
    """Computing ahead is optional: when the worker refuses work (a thread that searches while
    the interpreter shuts down, or one that cannot start a thread), the statement computes
    its own and the search answers as it would have."""
    from concurrent.futures import ThreadPoolExecutor

    conn = open_index_reader(indexed.index_path)
    try:
        query = query_blob(hash_embedder, "word3 word7")
        alone = table_files(conn, query, 6)
        closed = ThreadPoolExecutor(1)
        closed.shutdown()
        monkeypatch.setattr(knn, "ahead_worker", lambda: closed)
        knn.ahead(conn.db_filename("main"), query, 6)
        assert (conn.db_filename("main"), query) not in knn._ahead
        assert table_files(conn, query, 6) == alone
    finally:
        conn.close()


def gate_computations(monkeypatch) -> tuple[threading.Event, list[bytes]]:  # type: ignore[no-untyped-def]
    """Hold the worker until the event is set; the queries it then computes, in order."""
    gate, computed = threading.Event(), []
    real = knn.compute_ahead

    def gated(matrix, query, k):  # type: ignore[no-untyped-def]
        gate.wait(60)
        computed.append(query)
        return real(matrix, query, k)

    monkeypatch.setattr(knn, "compute_ahead", gated)
    return gate, computed


def test_a_computation_pushed_out_before_it_starts_is_never_made(  # type: ignore[no-untyped-def]
    indexed, hash_embedder, monkeypatch
):
    """More searches in flight than AHEAD_KEPT: the oldest waiting ones are dropped, and
    their statements compute their own; the worker must not compute them anyway."""
    conn = open_index_reader(indexed.index_path)
    try:
        queries = [query_blob(hash_embedder, f"word{i}") for i in range(knn.AHEAD_KEPT + 2)]
        table_files(conn, queries[0], 3)
        gate, computed = gate_computations(monkeypatch)
        for query in queries:
            knn.ahead(conn.db_filename("main"), query, 3)
        gate.set()
        knn.ahead_worker().submit(int).result()
        assert queries[1] not in computed
    finally:
        conn.close()


def test_forgetting_an_index_drops_the_computations_waiting_for_it(  # type: ignore[no-untyped-def]
    indexed, hash_embedder, monkeypatch
):
    conn = open_index_reader(indexed.index_path)
    try:
        first, second = query_blob(hash_embedder, "word1"), query_blob(hash_embedder, "word2")
        table_files(conn, first, 3)
        gate, computed = gate_computations(monkeypatch)
        knn.ahead(conn.db_filename("main"), first, 3)
        knn.ahead(conn.db_filename("main"), second, 3)
        knn.forget(conn)
        gate.set()
        knn.ahead_worker().submit(int).result()
        assert second not in computed
    finally:
        conn.close()
