"""Connections and schemas of the two databases.

``index.db`` is derived from the files and may be deleted at any time; ``state.db`` holds what
the files cannot tell (how often a memory was read, whether it helped) and is never rebuilt.
Both run in WAL mode with a busy timeout, so searches in other processes keep working while an
index run writes. apsw is used rather than the standard ``sqlite3`` because it bundles a current
SQLite that can load sqlite-vec on every platform.
"""

from __future__ import annotations

from pathlib import Path

import apsw
import sqlite_vec

INDEX_SCHEMA_VERSION = "2"
BUSY_TIMEOUT_MS = 10_000

INDEX_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE IF NOT EXISTS files(
    id           INTEGER PRIMARY KEY,
    path         TEXT NOT NULL UNIQUE,
    title        TEXT NOT NULL,
    kind         TEXT,
    event_at     TEXT,
    updated_at   TEXT NOT NULL,
    tags         TEXT NOT NULL DEFAULT '[]',
    archived     INTEGER NOT NULL DEFAULT 0,
    content_hash TEXT NOT NULL,
    size         INTEGER NOT NULL,
    mtime_ns     INTEGER NOT NULL,
    body         TEXT NOT NULL
);
-- The recency arm orders by this expression; the index serves it without a sort.
CREATE INDEX IF NOT EXISTS files_moment ON files(coalesce(event_at, updated_at));
CREATE INDEX IF NOT EXISTS files_content_hash ON files(content_hash);

CREATE TABLE IF NOT EXISTS chunks(
    id      INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    text    TEXT NOT NULL,
    hash    TEXT NOT NULL,
    UNIQUE(file_id, seq)
);
CREATE INDEX IF NOT EXISTS chunks_hash ON chunks(hash);

-- One vector per distinct embedded text, keyed by its hash: a chunk whose text did not change
-- (or moved to another file) keeps its vector. Model and width travel with every row.
CREATE TABLE IF NOT EXISTS embeddings(
    hash   TEXT PRIMARY KEY,
    model  TEXT NOT NULL,
    dim    INTEGER NOT NULL,
    vector BLOB NOT NULL CHECK (length(vector) = 4 * dim)
);

CREATE VIRTUAL TABLE IF NOT EXISTS files_fts USING fts5(
    title, body, tags,
    content='files', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER IF NOT EXISTS files_fts_insert AFTER INSERT ON files BEGIN
    INSERT INTO files_fts(rowid, title, body, tags) VALUES (new.id, new.title, new.body, new.tags);
END;
CREATE TRIGGER IF NOT EXISTS files_fts_delete AFTER DELETE ON files BEGIN
    INSERT INTO files_fts(files_fts, rowid, title, body, tags)
    VALUES ('delete', old.id, old.title, old.body, old.tags);
END;
-- Only changes to indexed columns touch FTS (a touched file updates mtime alone).
CREATE TRIGGER IF NOT EXISTS files_fts_update AFTER UPDATE OF title, body, tags ON files BEGIN
    INSERT INTO files_fts(files_fts, rowid, title, body, tags)
    VALUES ('delete', old.id, old.title, old.body, old.tags);
    INSERT INTO files_fts(rowid, title, body, tags) VALUES (new.id, new.title, new.body, new.tags);
END;
"""

STATE_SCHEMA = """
CREATE TABLE IF NOT EXISTS access(
    path             TEXT PRIMARY KEY,
    access_count     INTEGER NOT NULL DEFAULT 0 CHECK (access_count >= 0),
    last_accessed_at TEXT,
    outcome_score    REAL NOT NULL DEFAULT 0 CHECK (outcome_score BETWEEN -1 AND 1),
    content_hash     TEXT
);
"""


class IndexMissing(FileNotFoundError):
    """The store has not been indexed yet."""


def connect(path: Path | str, *, readonly: bool = False) -> apsw.Connection:
    """An apsw connection with sqlite-vec loaded, WAL, a busy timeout and foreign keys on."""
    flags = apsw.SQLITE_OPEN_URI
    flags |= (
        apsw.SQLITE_OPEN_READONLY
        if readonly
        else (apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE)
    )
    conn = apsw.Connection(str(path), flags=flags)
    conn.set_busy_timeout(BUSY_TIMEOUT_MS)
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    conn.enable_load_extension(False)
    if not readonly:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


def open_index(path: Path, *, create: bool = False) -> apsw.Connection:
    """Open ``index.db``; with ``create`` make it (and rebuild it if its schema is outdated)."""
    if not path.exists():
        if not create:
            raise IndexMissing(f"{path}: no index yet; run `memsift index` in the store first")
        path.parent.mkdir(parents=True, exist_ok=True)
    conn = connect(path)
    if create:
        version = read_meta(conn, "schema_version")
        if version not in (None, INDEX_SCHEMA_VERSION):
            # The index is derived: an old layout is dropped and rebuilt, never migrated.
            conn.close()
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            conn = connect(path)
        with conn:
            conn.execute(INDEX_SCHEMA)
            write_meta(conn, "schema_version", INDEX_SCHEMA_VERSION)
    return conn


def vector_table_dim(conn: apsw.Connection) -> int | None:
    """The width of ``vec_chunks`` (from meta), or None when the table does not exist."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vec_chunks'"
    ).fetchone()
    value = read_meta(conn, "vec_dim") if exists else None
    return int(value) if value else None


def ensure_vector_table(conn: apsw.Connection, dim: int) -> bool:
    """Make ``vec_chunks`` (sqlite-vec's vec0, cosine) hold every embedded chunk of width ``dim``.

    The vector arm asks this table for the nearest chunks by k-NN instead of computing a
    distance on every chunk row. It is a second copy of the vectors, keyed by chunk id and kept
    in step by triggers inside the same transactions as ``chunks`` and ``embeddings``, so a
    killed run cannot leave it pointing at the wrong chunk. A width change (another model)
    recreates it. Returns True when the table was (re)built.
    """
    dim = int(dim)
    current = vector_table_dim(conn)
    if current == dim:
        return False
    with conn:
        for name in VECTOR_TRIGGERS:
            conn.execute(f"DROP TRIGGER IF EXISTS {name}")
        conn.execute("DROP TABLE IF EXISTS vec_chunks")
        conn.execute(
            "CREATE VIRTUAL TABLE vec_chunks USING vec0("
            f"chunk_id INTEGER PRIMARY KEY, embedding float[{dim}] distance_metric=cosine)"
        )
        conn.execute(VECTOR_TRIGGER_SQL.replace("{dim}", str(dim)))
        conn.execute(
            "INSERT INTO vec_chunks(chunk_id, embedding) SELECT c.id, e.vector "
            "FROM chunks AS c JOIN embeddings AS e ON e.hash = c.hash WHERE e.dim = ?",
            (dim,),
        )
        write_meta(conn, "vec_dim", dim)
    return True


VECTOR_TRIGGERS = (
    "chunks_vec_insert",
    "chunks_vec_delete",
    "embeddings_vec_insert",
    "embeddings_vec_delete",
)
VECTOR_TRIGGER_SQL = """
CREATE TRIGGER chunks_vec_insert AFTER INSERT ON chunks BEGIN
    INSERT INTO vec_chunks(chunk_id, embedding)
    SELECT new.id, e.vector FROM embeddings AS e WHERE e.hash = new.hash AND e.dim = {dim};
END;
CREATE TRIGGER chunks_vec_delete AFTER DELETE ON chunks BEGIN
    DELETE FROM vec_chunks WHERE chunk_id = old.id;
END;
CREATE TRIGGER embeddings_vec_insert AFTER INSERT ON embeddings WHEN new.dim = {dim} BEGIN
    INSERT INTO vec_chunks(chunk_id, embedding)
    SELECT c.id, new.vector FROM chunks AS c WHERE c.hash = new.hash;
END;
CREATE TRIGGER embeddings_vec_delete AFTER DELETE ON embeddings BEGIN
    DELETE FROM vec_chunks WHERE chunk_id IN (SELECT id FROM chunks WHERE hash = old.hash);
END;
"""


def open_state(path: Path) -> apsw.Connection:
    """Open (creating if needed) the durable ``state.db``; commits are synced (FULL), since
    unlike the index this database cannot be rebuilt."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = connect(path)
    conn.execute("PRAGMA synchronous=FULL")
    with conn:
        conn.execute(STATE_SCHEMA)
    return conn


def read_meta(conn: apsw.Connection, key: str) -> str | None:
    """A value from the index's ``meta`` table, or None (also when the table does not exist)."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    ).fetchone()
    if not exists:
        return None
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else row[0]


def write_meta(conn: apsw.Connection, key: str, value: object) -> None:
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, str(value)),
    )
