"""The statements that read and write ``index.db``'s rows: files, chunks and vectors.

:mod:`engine.sqlite.db` opens the databases and owns their schemas (with the ``meta`` table and the
``vec_chunks`` k-NN table they include); this module owns what the rest of the engine asks of
the index's rows, each statement in one named function, so the indexer, ``status`` and the
CLI share one wording of each question (above all the vector coverage a search trusts) instead
of each writing its own SQL. The fused search statement and the queries that serve it live with
the search (:mod:`engine.ranking.assemble`, :mod:`engine.search`).

Functions run statements and never open transactions: the caller groups them (the indexer
commits in small batches so a killed run leaves a consistent index).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import apsw

from engine.errors import DatabaseError, IndexMissing
from engine.indexing.budget import (
    BUDGET_KEY,
    RULE,
    RULE_KEY,
    budget_join,
    covered_among_sql,
    embeddable_sql,
    rule_changed,
    uncovered_vectors_sql,
)
from engine.indexing.pipeline import FileRow, KnownFile, Touch
from engine.ranking.contract import bind, bound_prefix
from engine.sqlite.db import ensure_vector_table, open_index_reader, write_meta

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "record_coverage",
]

# --- files -------------------------------------------------------------------------------------


def known_files(conn: apsw.Connection, paths: list[str] | None = None) -> dict[str, KnownFile]:
    """path -> what the index holds of it (of every file, or of ``paths`` only; the list is
    bound as one JSON array, so its length does not matter)."""
    sql = "SELECT path, id, content_hash, size, mtime_ns FROM files"
    params: tuple[object, ...] = ()
    if paths is not None:
        sql += " WHERE path IN (SELECT value FROM json_each(?))"
        params = (json.dumps(paths, ensure_ascii=False),)
    return {
        path: KnownFile(file_id, content_hash, size, mtime_ns)
        for path, file_id, content_hash, size, mtime_ns in conn.execute(sql, params)
    }


def paths_under(conn: apsw.Connection, folder: str) -> set[str]:
    """Indexed paths inside ``folder`` (a key prefix ending in "/"), matched literally."""
    return {
        path
        for (path,) in conn.execute(
            "SELECT path FROM files WHERE substr(path, 1, length(?1)) = ?1", (folder,)
        )
    }


def recent_files(
    conn: apsw.Connection, scope_sql: str, scope_values: tuple[object, ...], limit: int
) -> list[tuple[object, ...]]:
    """Files in scope, newest moment first: (path, title, kind, event_at, updated_at, tags,
    archived). The scope binds its values from the contract's first scope placeholder."""
    sql = (
        "SELECT path, title, kind, event_at, updated_at, tags, archived FROM files AS f "
        f"WHERE {scope_sql} ORDER BY coalesce(f.event_at, f.updated_at) DESC, f.path "
        f"LIMIT {int(limit)}"
    )
    return conn.execute(sql, bound_prefix(sql, bind({}, scope_values))).fetchall()


def file_fingerprints(conn: apsw.Connection) -> dict[str, tuple[int, int]]:
    """path -> (size, mtime_ns) as indexed (the size as recorded:
    :func:`engine.indexing.pipeline.stat_size` reads it), to tell cheaply whether files
    changed since."""
    return {
        path: (size, mtime_ns)
        for path, size, mtime_ns in conn.execute("SELECT path, size, mtime_ns FROM files")
    }


def indexed_paths(conn: apsw.Connection) -> set[str]:
    return {path for (path,) in conn.execute("SELECT path FROM files")}


def indexed_among(conn: apsw.Connection, paths: list[str]) -> set[str]:
    """Which of ``paths`` the index holds."""
    found = conn.execute(
        "SELECT path FROM files WHERE path IN (SELECT value FROM json_each(?))",
        (json.dumps(paths),),
    )
    return {path for (path,) in found}


def file_count(conn: apsw.Connection) -> int:
    (count,) = conn.execute("SELECT count(*) FROM files").fetchone()
    return int(count)


def write_file(conn: apsw.Connection, row: FileRow) -> int:
    """Insert or update ``row`` by path and replace its chunks; returns the file's id.

    FTS5 follows by trigger; the chunks' vectors (keyed by text hash) stay where the text did
    not change, and ``vec_chunks`` follows the chunks by trigger."""
    (file_id,) = conn.execute(
        """
        INSERT INTO files(path, title, kind, event_at, updated_at, tags, archived,
                          content_hash, size, mtime_ns)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(path) DO UPDATE SET
            title = excluded.title, kind = excluded.kind, event_at = excluded.event_at,
            updated_at = excluded.updated_at, tags = excluded.tags,
            archived = excluded.archived, content_hash = excluded.content_hash,
            size = excluded.size, mtime_ns = excluded.mtime_ns
        RETURNING id
        """,
        (
            row.path,
            row.title,
            row.kind,
            row.event_at,
            row.updated_at,
            row.tags_json,
            int(row.archived),
            row.content_hash,
            row.size,
            row.mtime_ns,
        ),
    ).fetchone()
    conn.execute("DELETE FROM chunks WHERE file_id = ?", (file_id,))
    conn.executemany(
        "INSERT INTO chunks(file_id, seq, text, hash) VALUES (?, ?, ?, ?)",
        [(file_id, seq, text, digest) for seq, (text, digest) in enumerate(row.chunks)],
    )
    return int(file_id)


def touch_files(conn: apsw.Connection, touched: Iterable[Touch]) -> None:
    """Record the new size and mtime of files whose bytes did not change, on rows that still
    hold those bytes (another writer may have indexed newer ones since they were read); full
    text is not touched (its triggers watch chunks, which stay as they are)."""
    conn.executemany(
        "UPDATE files SET size = ?, mtime_ns = ?, updated_at = ? "
        "WHERE path = ? AND content_hash = ?",
        touched,
    )


def delete_files(conn: apsw.Connection, paths: Iterable[str]) -> None:
    """Remove files by path; their chunks cascade and FTS5 follows by trigger."""
    conn.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in paths])


def unique_content_paths(conn: apsw.Connection) -> dict[str, str]:
    """content hash -> path, for contents exactly one indexed file holds (where a state row may
    follow a rename without doubt)."""
    return dict(
        conn.execute(
            "SELECT content_hash, min(path) FROM files GROUP BY content_hash HAVING count(*) = 1"
        ).fetchall()
    )


def content_hash_of(conn: apsw.Connection, path: str) -> str | None:
    row = conn.execute("SELECT content_hash FROM files WHERE path = ?", (path,)).fetchone()
    return row[0] if row else None


def indexed_content_hash(index_path: Path, path: str) -> str | None:
    """The indexed content hash of ``path``, or None; best effort (a missing, damaged or busy
    index gives None), since it only lets a state row follow a later rename and must never stop
    a memory being read or reinforced."""
    try:
        conn = open_index_reader(index_path)
    except (IndexMissing, DatabaseError):
        return None
    try:
        return content_hash_of(conn, path)
    except apsw.Error:
        return None
    finally:
        conn.close()


# --- vectors -----------------------------------------------------------------------------------


def vector_coverage(conn: apsw.Connection, model: str | None, budget: int) -> tuple[int, int]:
    """(chunks that get a vector, those of them with a vector of ``model``): the figure a search
    trusts the vector arm by, counted the one way ``index``, ``status`` and a search after an
    interrupted run share. A chunk the embedding ``budget`` leaves out of its file is full-text
    only and not counted (:func:`engine.indexing.budget.embeddable`), so such a store is not
    degraded."""
    chunks, embedded = conn.execute(
        f"SELECT count(*), count(e.hash) FROM chunks AS c {budget_join(budget)} "
        "LEFT JOIN embeddings AS e ON e.hash = c.hash AND e.model = ? "
        f"WHERE {embeddable_sql(budget)}",
        (model or "",),
    ).fetchone()
    return int(chunks), int(embedded)


def chunk_totals(conn: apsw.Connection, model: str | None, budget: int) -> tuple[int, int]:
    """(every chunk, chunks the embedding ``budget`` leaves out with no vector: no chunk within
    it embeds their text), for ``status``."""
    total, text_only = conn.execute(
        f"SELECT count(*), coalesce(sum(CASE WHEN NOT {embeddable_sql(budget)} "
        f"AND e.hash IS NULL THEN 1 ELSE 0 END), 0) FROM chunks AS c {budget_join(budget)} "
        "LEFT JOIN embeddings AS e ON e.hash = c.hash AND e.model = ?",
        (model or "",),
    ).fetchone()
    return int(total), int(text_only)


def record_coverage(conn: apsw.Connection, model: str | None, dim: int | None, budget: int) -> None:
    """Store chunk and vector counts so a search can judge the vector plane without counting."""
    chunks, embedded = vector_coverage(conn, model, budget)
    write_meta(conn, "chunks", chunks)
    write_meta(conn, "embedded_chunks", embedded)
    write_meta(conn, BUDGET_KEY, budget)
    write_meta(conn, RULE_KEY, RULE)
    if model:
        write_meta(conn, "model", model)
    if dim:
        write_meta(conn, "dim", dim)
        ensure_vector_table(conn, dim)


def vector_dim_of(conn: apsw.Connection, model: str | None) -> int | None:
    """The width of the stored vectors of ``model``, or None when it has none."""
    row = conn.execute(
        "SELECT dim FROM embeddings WHERE model = ? LIMIT 1", (model or "",)
    ).fetchone()
    return int(row[0]) if row else None


def drop_other_vectors(conn: apsw.Connection, model: str, dim: int) -> None:
    """Delete vectors of any other model or width: two models' vectors never mix."""
    conn.execute("DELETE FROM embeddings WHERE model != ? OR dim != ?", (model, dim))


def chunk_hashes_of(conn: apsw.Connection, paths: list[str]) -> list[str]:
    """The text hashes of the chunks the index holds for the files at ``paths``: read before a
    writer replaces or deletes them, so that a vector one of them held within the budget, and
    a chunk the budget leaves out elsewhere shares, goes with it
    (:func:`drop_left_out_vectors`)."""
    return [
        digest
        for (digest,) in conn.execute(
            "SELECT DISTINCT c.hash FROM chunks AS c JOIN files AS f ON f.id = c.file_id "
            "WHERE f.path IN (SELECT value FROM json_each(?))",
            (json.dumps(paths, ensure_ascii=False),),
        )
    ]


def drop_left_out_vectors(
    conn: apsw.Connection, budget: int, left_out: list[str], replaced: Iterable[str] = ()
) -> None:
    """After a writer wrote some files: drop the vectors their chunks the ``budget`` leaves
    out (``left_out``) had, and those of the texts the files held before (``replaced``,
    :func:`chunk_hashes_of`) that only chunks left out elsewhere still hold; or every
    uncovered vector when the index's vectors were chosen under another rule or budget
    (:func:`engine.indexing.budget.rule_changed`). Call before :func:`record_coverage`, which
    records this budget."""
    meta = dict(
        conn.execute(
            "SELECT key, value FROM meta WHERE key IN (?, ?)", (BUDGET_KEY, RULE_KEY)
        ).fetchall()
    )
    among = None if rule_changed(meta, budget) else sorted({*left_out, *replaced})
    drop_uncovered_vectors(conn, budget, among)


def drop_uncovered_vectors(
    conn: apsw.Connection, budget: int, among: list[str] | None = None
) -> None:
    """Delete the vectors that no chunk within the embedding ``budget`` holds: every one
    (texts gone from the store, and chunks a lowered budget or a file's moved spread leaves
    out: :func:`engine.indexing.budget.uncovered_vectors_sql`), or those of the text hashes
    ``among`` that a chunk the budget leaves out still holds (the vector arm would read them;
    a text no chunk holds any more keeps its vector until a full run, as a file renamed in two
    steps finds it again)."""
    if among is None:
        conn.execute(uncovered_vectors_sql(budget))
        return
    if not among:
        return
    values = json.dumps(among)
    covered = {
        digest
        for (digest,) in conn.execute(
            covered_among_sql(budget, "SELECT value FROM json_each(?)"), (values, values)
        )
    }
    held = {
        digest
        for (digest,) in conn.execute(
            "SELECT DISTINCT hash FROM chunks WHERE hash IN (SELECT value FROM json_each(?))",
            (values,),
        )
    }
    if gone := [digest for digest in among if digest in held and digest not in covered]:
        conn.execute(
            "DELETE FROM embeddings WHERE hash IN (SELECT value FROM json_each(?))",
            (json.dumps(gone),),
        )


def add_vectors(
    conn: apsw.Connection, model: str, dim: int, vectors: Iterable[tuple[str, bytes]]
) -> None:
    """Store ``(text hash, float32 blob)`` pairs of ``model``; a hash already embedded (by a
    concurrent or earlier run) keeps its vector."""
    conn.executemany(
        "INSERT OR IGNORE INTO embeddings(hash, model, dim, vector) VALUES (?, ?, ?, ?)",
        [(digest, model, dim, blob) for digest, blob in vectors],
    )


def unique_content_paths_among(conn: apsw.Connection, hashes: list[str]) -> dict[str, str]:
    """content hash -> path, for those of ``hashes`` that exactly one indexed file holds."""
    return dict(
        conn.execute(
            "SELECT content_hash, min(path) FROM files "
            "WHERE content_hash IN (SELECT value FROM json_each(?)) "
            "GROUP BY content_hash HAVING count(*) = 1",
            (json.dumps(hashes),),
        ).fetchall()
    )


def vector_ends(conn: apsw.Connection) -> list[tuple[str, int]]:
    """(model, dim) of the oldest and the newest vector: a constant-time check that a store's
    vectors are all one model's, since a model switch rewrites them all."""
    return conn.execute(
        "SELECT model, dim FROM (SELECT model, dim FROM embeddings ORDER BY rowid LIMIT 1) "
        "UNION SELECT model, dim FROM (SELECT model, dim FROM embeddings ORDER BY rowid DESC "
        "LIMIT 1)"
    ).fetchall()


def chunks_missing_vectors(
    conn: apsw.Connection, paths: list[str] | None, budget: int, limit: int | None = None
) -> list[tuple[str, str, str]]:
    """(text hash, file title, chunk text) of each distinct chunk text without a vector, of the
    files at ``paths`` (None: every file), within each file's embedding ``budget``, at most
    ``limit``."""
    files, where, params = None, "", ()
    if paths is not None:
        files = "SELECT id FROM files WHERE path IN (SELECT value FROM json_each(?))"
        where = f"AND c.file_id IN ({files})"
        values = json.dumps(paths, ensure_ascii=False)
        params = (values, values)
    sql = f"""
        SELECT c.hash, f.title, c.text
        FROM chunks AS c JOIN files AS f ON f.id = c.file_id
        {budget_join(budget, file_ids=files)}
        LEFT JOIN embeddings AS e ON e.hash = c.hash
        WHERE e.hash IS NULL AND {embeddable_sql(budget)} {where}
        GROUP BY c.hash
    """
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return conn.execute(sql, params).fetchall()
