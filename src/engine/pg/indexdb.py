"""The statements that read and write a team store's index rows (PostgreSQL).

The counterpart of :mod:`engine.sqlite.indexdb` for a store in PostgreSQL, function for
function where the indexer needs one, so :mod:`engine.pg.indexer` runs the same passes as the
SQLite indexer.
Full text is computed when a chunk is written (its ``terms``: the file's title and tags with the
chunk's text, cut into words where FTS5 cuts them, :mod:`engine.ranking.words`); there are no
triggers to keep in step. Functions never open transactions: the
caller groups them in ``with conn:`` blocks, as on SQLite.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

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
from engine.indexing.pipeline import FileRow, KnownFile, Progress, Touch
from engine.pg.driver import PgConnection
from engine.ranking.contract import bind
from engine.ranking.words import token_text


def terms_expression(title: str, tags: str, body: str) -> str:
    """A chunk's full text from the SQL expressions of its three texts, each already cut into
    words by the rule (:func:`term_texts`): title (weight A), tags (B) and body (D), in the
    store's ``memsift`` configuration. The fts arm's BM25 counts a match 4 : 2 : 1 by those
    labels, as SQLite's bm25(4.0, 1.0, 2.0) weighs its title, body and tags columns.
    (``chunks.length`` and the store's ``fts_totals`` follow from ``terms``; see
    :mod:`engine.pg.schema`.)"""
    return f"""
    setweight(to_tsvector('memsift', {title}), 'A')
    || setweight(to_tsvector('memsift', {tags}), 'B')
    || setweight(to_tsvector('memsift', {body}), 'D')
"""


#: A chunk's ``terms`` from the bound values of :func:`term_texts`; every writer of ``terms``
#: (a run, a remember, the layout upgrade, the scale benchmark's writer) goes through these two.
TERMS = terms_expression("%(title)s", "%(tags)s", "%(body)s")


def term_texts(title: str, tags: Iterable[str], text: str) -> dict[str, str]:
    """The texts a chunk's ``terms`` are made of, as :func:`engine.ranking.words.token_text`
    cuts them (where FTS5 cuts the same texts on SQLite), under :data:`TERMS`' names."""
    return {
        "title": token_text(title),
        "tags": token_text(" ".join(tags)),
        "body": token_text(text),
    }


def lock_rows(conn: PgConnection) -> None:
    """Take the index's write lock until the transaction ends: a transaction advisory lock keyed
    by the schema, which every writer of file rows (a full run, an incremental run, a remember
    or forget) takes before it checks its files and writes, as SQLite's ``BEGIN IMMEDIATE``
    serialises them. Its key differs from the run lock's (:func:`engine.pg.driver.run_lock`),
    which a full run holds for minutes: an incremental writer waits only for one batch."""
    key = f"memsift rows {conn.target.schema}"
    conn.run("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (key,))


def read_meta(conn: PgConnection, key: str) -> str | None:
    row = conn.run("SELECT value FROM meta WHERE key = %s", (key,)).fetchone()
    return None if row is None else row[0]


def write_meta(conn: PgConnection, key: str, value: object) -> None:
    conn.run(
        "INSERT INTO meta(key, value) VALUES (%s, %s) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, str(value)),
    )


def known_files(conn: PgConnection, paths: list[str] | None = None) -> dict[str, KnownFile]:
    """path -> what the index holds of it (of every file, or of ``paths`` only)."""
    sql = "SELECT path, id, content_hash, size, mtime_ns FROM files"
    if paths is not None:
        sql += " WHERE path = ANY(%s)"
    return {
        path: KnownFile(file_id, content_hash, size, mtime_ns)
        for path, file_id, content_hash, size, mtime_ns in conn.run(
            sql, None if paths is None else (paths,)
        )
    }


def paths_under(conn: PgConnection, prefixes: list[str]) -> set[str]:
    """Indexed paths starting with any of ``prefixes`` (folder keys ending in "/"), matched
    literally (no LIKE, so ``%`` and ``_`` in a folder name match only themselves)."""
    return {
        path
        for (path,) in conn.run(
            "SELECT f.path FROM files AS f, unnest(CAST(%s AS text[])) AS p "
            "WHERE starts_with(f.path, p)",
            (prefixes,),
        )
    }


def content_hash_of(conn: PgConnection, path: str) -> str | None:
    row = conn.run("SELECT content_hash FROM files WHERE path = %s", (path,)).fetchone()
    return row[0] if row else None


def indexed_paths(conn: PgConnection) -> set[str]:
    return {path for (path,) in conn.run("SELECT path FROM files")}


def indexed_among(conn: PgConnection, paths: list[str]) -> set[str]:
    """Which of ``paths`` the index holds."""
    return {path for (path,) in conn.run("SELECT path FROM files WHERE path = ANY(%s)", (paths,))}


def write_file(conn: PgConnection, row: FileRow) -> int:
    """Insert or update ``row`` by path and replace its chunks (with their full text)."""
    (file_id,) = conn.run(
        """
        INSERT INTO files(path, title, kind, event_at, updated_at, tags, archived,
                          content_hash, size, mtime_ns)
        VALUES (%s, %s, %s, %s, %s, CAST(%s AS jsonb), %s, %s, %s, %s)
        ON CONFLICT (path) DO UPDATE SET
            title = excluded.title, kind = excluded.kind, event_at = excluded.event_at,
            updated_at = excluded.updated_at, tags = excluded.tags,
            archived = excluded.archived, content_hash = excluded.content_hash,
            size = excluded.size, mtime_ns = excluded.mtime_ns
        RETURNING id
        """,
        (
            row.path,
            clean(row.title),
            None if row.kind is None else clean(row.kind),
            row.event_at,
            row.updated_at,
            clean_json(row.tags_json),
            int(row.archived),
            row.content_hash,
            row.size,
            row.mtime_ns,
        ),
    ).fetchone()
    conn.run("DELETE FROM chunks WHERE file_id = %s", (file_id,))
    tags = json.loads(row.tags_json)
    conn.many(
        "INSERT INTO chunks(file_id, seq, text, hash, terms) "
        f"VALUES (%(file)s, %(seq)s, %(text)s, %(hash)s, {TERMS})",
        [
            {"file": file_id, "seq": seq, "text": clean(text), "hash": digest}
            | term_texts(row.title, tags, text)
            for seq, (text, digest) in enumerate(row.chunks)
        ],
    )
    return int(file_id)


#: Chunks re-derived per statement batch when a layout upgrade rewrites every ``terms``.
RETOKENIZE_BATCH = 1000


def rederive_terms(conn: PgConnection, progress: Progress | None = None) -> int:
    """Make every chunk's ``terms`` anew from its text and its file's title and tags (an index
    of an older layout, whose ``terms`` PostgreSQL's parser cut alone); return how many.

    Only ``chunks.terms`` is written (its ``length`` is generated from it, and the store's
    ``fts_totals`` follow by their trigger); files, vectors and the state plane are read or
    left alone. Run inside the caller's transaction, so a store is upgraded whole or not at
    all; reports ``progress("retokenize", done, total)`` after each batch."""
    (total,) = conn.run("SELECT count(*) FROM chunks").fetchone()
    done, last = 0, 0
    if progress and total:
        progress("retokenize", 0, total)
    while rows := conn.run(
        "SELECT c.id, f.title, f.tags, c.text FROM chunks AS c JOIN files AS f "
        "ON f.id = c.file_id WHERE c.id > %s ORDER BY c.id LIMIT %s",
        (last, RETOKENIZE_BATCH),
    ).fetchall():
        conn.many(
            f"UPDATE chunks SET terms = {TERMS} WHERE id = %(id)s",
            [{"id": chunk} | term_texts(title, tags, text) for chunk, title, tags, text in rows],
        )
        last = rows[-1][0]
        done += len(rows)
        if progress:
            progress("retokenize", done, total)
    return done


def clean(text: str) -> str:
    """Text PostgreSQL can store: a NUL (valid in a memory's UTF-8) becomes U+FFFD."""
    return text.replace("\x00", "\ufffd")


def clean_json(text: str) -> str:
    """A JSON array of tags ``jsonb`` can hold: it refuses the escape ``\\u0000`` (the JSON of
    a NUL), so a NUL in a tag becomes U+FFFD, as in plain text (the scope's values alike)."""
    return json.dumps([clean(tag) for tag in json.loads(text)], ensure_ascii=False)


def touch_files(conn: PgConnection, touched: Iterable[Touch]) -> None:
    """Record the new size and mtime of files whose bytes did not change, on rows that still
    hold those bytes (see :func:`engine.sqlite.indexdb.touch_files`)."""
    conn.many(
        "UPDATE files SET size = %s, mtime_ns = %s, updated_at = %s "
        "WHERE path = %s AND content_hash = %s",
        list(touched),
    )


def delete_files(conn: PgConnection, paths: Iterable[str]) -> None:
    conn.many("DELETE FROM files WHERE path = %s", [(p,) for p in paths])


def unique_content_paths(conn: PgConnection) -> dict[str, str]:
    return dict(
        conn.run(
            "SELECT content_hash, min(path) FROM files GROUP BY content_hash HAVING count(*) = 1"
        ).fetchall()
    )


def unique_content_paths_among(conn: PgConnection, hashes: list[str]) -> dict[str, str]:
    """content hash -> path, for those of ``hashes`` that exactly one indexed file holds."""
    if not hashes:
        return {}
    return dict(
        conn.run(
            "SELECT content_hash, min(path) FROM files WHERE content_hash = ANY(%s) "
            "GROUP BY content_hash HAVING count(*) = 1",
            (hashes,),
        ).fetchall()
    )


def vector_coverage(conn: PgConnection, model: str | None, budget: int) -> tuple[int, int]:
    """(chunks that get a vector, those with a vector of ``model``), counted as on SQLite
    (:func:`engine.sqlite.indexdb.vector_coverage`): chunks the ``budget`` leaves out are not
    counted."""
    chunks, embedded = conn.run(
        f"SELECT count(*), count(e.hash) FROM chunks AS c {budget_join(budget)} "
        "LEFT JOIN embeddings AS e ON e.hash = c.hash AND e.model = %s "
        f"WHERE {embeddable_sql(budget)}",
        (model or "",),
    ).fetchone()
    return int(chunks), int(embedded)


def chunk_totals(conn: PgConnection, model: str | None, budget: int) -> tuple[int, int]:
    """(every chunk, chunks the embedding ``budget`` leaves out with no vector: no chunk within
    it embeds their text), for ``status``."""
    total, text_only = conn.run(
        f"SELECT count(*), coalesce(sum(CASE WHEN NOT {embeddable_sql(budget)} "
        f"AND e.hash IS NULL THEN 1 ELSE 0 END), 0) FROM chunks AS c {budget_join(budget)} "
        "LEFT JOIN embeddings AS e ON e.hash = c.hash AND e.model = %s",
        (model or "",),
    ).fetchone()
    return int(total), int(text_only)


def record_coverage(conn: PgConnection, model: str | None, dim: int | None, budget: int) -> None:
    chunks, embedded = vector_coverage(conn, model, budget)
    write_meta(conn, "chunks", chunks)
    write_meta(conn, "embedded_chunks", embedded)
    write_meta(conn, BUDGET_KEY, budget)
    write_meta(conn, RULE_KEY, RULE)
    if model:
        write_meta(conn, "model", model)
    if dim:
        write_meta(conn, "dim", dim)


def drop_other_vectors(conn: PgConnection, model: str, dim: int) -> None:
    conn.run("DELETE FROM embeddings WHERE model <> %s OR dim <> %s", (model, dim))


def chunk_hashes_of(conn: PgConnection, paths: list[str]) -> list[str]:
    """The text hashes of the chunks of the files at ``paths``, read before a writer replaces
    or deletes them, as on SQLite (:func:`engine.sqlite.indexdb.chunk_hashes_of`)."""
    return [
        digest
        for (digest,) in conn.run(
            "SELECT DISTINCT c.hash FROM chunks AS c JOIN files AS f ON f.id = c.file_id "
            "WHERE f.path = ANY(%s)",
            (paths,),
        ).fetchall()
    ]


def drop_left_out_vectors(
    conn: PgConnection, budget: int, left_out: list[str], replaced: Iterable[str] = ()
) -> None:
    """After a writer wrote some files: drop the vectors of their chunks the ``budget`` leaves
    out and of the texts they held before that only chunks left out still hold, or every
    uncovered vector when the rule or budget changed, as on SQLite
    (:func:`engine.sqlite.indexdb.drop_left_out_vectors`)."""
    meta = dict(
        conn.run(
            "SELECT key, value FROM meta WHERE key IN (%s, %s)", (BUDGET_KEY, RULE_KEY)
        ).fetchall()
    )
    among = None if rule_changed(meta, budget) else sorted({*left_out, *replaced})
    drop_uncovered_vectors(conn, budget, among)


def drop_uncovered_vectors(conn: PgConnection, budget: int, among: list[str] | None = None) -> None:
    """Delete the vectors no chunk within the embedding ``budget`` holds: every one, or those
    of the text hashes ``among`` a chunk left out still holds, as on SQLite
    (:func:`engine.sqlite.indexdb.drop_uncovered_vectors`)."""
    if among is None:
        conn.run(uncovered_vectors_sql(budget))
        return
    if not among:
        return
    covered = {
        digest
        for (digest,) in conn.run(
            covered_among_sql(budget, "SELECT unnest(%s::text[])"), (among, among)
        ).fetchall()
    }
    held = {
        digest
        for (digest,) in conn.run(
            "SELECT DISTINCT hash FROM chunks WHERE hash = ANY(%s)", (among,)
        ).fetchall()
    }
    if gone := [digest for digest in among if digest in held and digest not in covered]:
        conn.run("DELETE FROM embeddings WHERE hash = ANY(%s)", (gone,))


def chunks_without_vectors(
    conn: PgConnection, budget: int, paths: list[str] | None = None
) -> list[tuple[str, str, str]]:
    """(text hash, file title, chunk text) of each distinct chunk text with no vector yet,
    within each file's embedding ``budget`` (of every file, or of the files ``paths`` only)."""
    files = None if paths is None else "SELECT id FROM files WHERE path = ANY(%s)"
    where = "" if files is None else f"AND c.file_id IN ({files})"
    return conn.run(
        f"""
        SELECT DISTINCT ON (c.hash) c.hash, f.title, c.text
        FROM chunks AS c JOIN files AS f ON f.id = c.file_id
        {budget_join(budget, file_ids=files)}
        WHERE NOT EXISTS (SELECT 1 FROM embeddings AS e WHERE e.hash = c.hash)
          AND {embeddable_sql(budget)} {where}
        ORDER BY c.hash, c.id
        """,
        () if paths is None else (paths, paths),
    ).fetchall()


def claim_model(conn: PgConnection, model: str, dim: int) -> bool:
    """Whether vectors of ``model`` (``dim`` wide) may be added now, without mixing models;
    records the model when the index has none yet. Call inside the transaction that adds them:
    the ``model`` row is locked (shared) until it ends, so a full run switching models (which
    rewrites that row as it drops the old vectors) waits for it or is seen to have switched.
    Constant time, unlike checking every stored vector."""
    row = conn.run("SELECT value FROM meta WHERE key = 'model' FOR SHARE").fetchone()
    if row is None:
        write_meta(conn, "model", model)
        write_meta(conn, "dim", dim)
        return True
    return row[0] == model and read_meta(conn, "dim") == str(dim)


def add_vectors(
    conn: PgConnection, model: str, dim: int, vectors: Iterable[tuple[str, bytes]]
) -> None:
    """Store ``(text hash, float32 blob)`` pairs; a hash already embedded keeps its vector."""
    import numpy as np

    conn.many(
        "INSERT INTO embeddings(hash, model, dim, vector) VALUES (%s, %s, %s, %s) "
        "ON CONFLICT (hash) DO NOTHING",
        [(digest, model, dim, np.frombuffer(blob, dtype="<f4")) for digest, blob in vectors],
    )


def recent_files(
    conn: PgConnection, scope_sql: str, scope_values: tuple[object, ...], limit: int
) -> list[tuple[object, ...]]:
    """Files in scope, newest moment first, as :func:`engine.sqlite.indexdb.recent_files` returns
    them (tags as JSON text, so both backends hand over the same rows)."""
    sql = (
        "SELECT path, title, kind, event_at, updated_at, tags::text, archived FROM files AS f "
        f"WHERE {scope_sql} ORDER BY coalesce(f.event_at, f.updated_at) DESC, f.path "
        f"LIMIT {int(limit)}"
    )
    return [tuple(row) for row in conn.execute(sql, bind({}, scope_values)).fetchall()]
