"""The tables of a team store: one schema per store, holding its index and its state plane.

The layout follows the SQLite index (``engine.db``) so the arms' two dialects read the same
columns: ``files`` (times as the same UTC text, so both backends compare and order them alike;
tags as ``jsonb``; paths in the "C" collation, so ties break in the same byte order as
SQLite's), ``chunks`` (with a ``tsvector`` of the chunk, its file's title and tags, weighted
A title, B tags, D body, under a GIN index), ``embeddings`` (pgvector ``vector``, any width:
the model and width travel with every row, as in SQLite), ``meta``, and the state plane
``state_access``. Unlike the index, ``state_access`` is never dropped or rebuilt.

Full text uses the text search configuration ``memsift``: English stemming with no stop
words, like SQLite's Porter tokenizer; the query side (``engine.pg.search``) leaves out the
same stop words as on SQLite, so a negation or a qualifier still counts in a document.
"""

from __future__ import annotations

from engine.db import IndexMissing
from engine.pg.driver import PgConnection, guarded, register_vectors

SCHEMA_VERSION = "1"

DDL = """
CREATE TABLE IF NOT EXISTS meta(key text PRIMARY KEY, value text NOT NULL);

CREATE TABLE IF NOT EXISTS files(
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    path         text COLLATE "C" NOT NULL UNIQUE,
    title        text NOT NULL,
    kind         text,
    event_at     text,
    updated_at   text NOT NULL,
    tags         jsonb NOT NULL DEFAULT '[]',
    archived     integer NOT NULL DEFAULT 0,
    content_hash text NOT NULL,
    size         bigint NOT NULL,
    mtime_ns     bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS files_moment ON files((coalesce(event_at, updated_at)));
CREATE INDEX IF NOT EXISTS files_content_hash ON files(content_hash);
CREATE INDEX IF NOT EXISTS files_tags ON files USING gin(tags);

CREATE TABLE IF NOT EXISTS chunks(
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    file_id bigint NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    seq     integer NOT NULL,
    text    text NOT NULL,
    hash    text NOT NULL,
    terms   tsvector NOT NULL,
    UNIQUE(file_id, seq)
);
CREATE INDEX IF NOT EXISTS chunks_hash ON chunks(hash);
CREATE INDEX IF NOT EXISTS chunks_terms ON chunks USING gin(terms);

CREATE TABLE IF NOT EXISTS embeddings(
    hash   text PRIMARY KEY,
    model  text NOT NULL,
    dim    integer NOT NULL,
    vector vector NOT NULL CHECK (vector_dims(vector) = dim),
    added  bigint GENERATED ALWAYS AS IDENTITY
);
"""

#: The state plane: made with the index, or on its own by the first read or outcome counted
#: before any index run (as SQLite's state.db is), without which that read would be lost.
STATE_DDL = """
CREATE TABLE IF NOT EXISTS state_access(
    path             text COLLATE "C" PRIMARY KEY,
    access_count     integer NOT NULL DEFAULT 0 CHECK (access_count >= 0),
    last_accessed_at text,
    outcome_score    double precision NOT NULL DEFAULT 0
                     CHECK (outcome_score BETWEEN -1 AND 1),
    content_hash     text
);
"""

#: Held for the transaction that creates a store's tables: an index run and a first read may
#: both find them missing, and two ``CREATE ... IF NOT EXISTS`` racing can still collide.
CREATE_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))"

#: English stemming without a stop list (the snowball dictionary with no StopWords file).
TEXT_SEARCH = """
CREATE TEXT SEARCH DICTIONARY memsift_stem (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION memsift (COPY = english);
ALTER TEXT SEARCH CONFIGURATION memsift ALTER MAPPING REPLACE english_stem WITH memsift_stem;
"""


def ensure_schema(conn: PgConnection) -> None:
    """Create the store's schema and tables if missing (idempotent; concurrent runs of this are
    serialised by the caller's advisory lock), with pgvector installed in ``public``."""
    schema = conn.target.schema
    with guarded(conn.target), conn:
        conn.run(CREATE_LOCK, (f"memsift schema {schema}",))
        if conn.run("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone() is None:
            conn.run("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
        conn.run(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        found = conn.run(
            "SELECT 1 FROM pg_ts_config AS c JOIN pg_namespace AS n ON n.oid = c.cfgnamespace "
            "WHERE c.cfgname = 'memsift' AND n.nspname = %s",
            (schema,),
        ).fetchone()
        if found is None:
            conn.run(TEXT_SEARCH)
        conn.run(DDL)
        conn.run(STATE_DDL)
        conn.run(
            "INSERT INTO meta(key, value) VALUES ('schema_version', %s) "
            "ON CONFLICT (key) DO NOTHING",
            (SCHEMA_VERSION,),
        )
    register_vectors(conn.raw, conn.target)


def ensure_state_plane(conn: PgConnection) -> None:
    """Create the store's schema and its state table if missing, and nothing else: the index
    stays absent (a search still says to run `memsift index`) until an index run makes it."""
    schema = conn.target.schema
    with guarded(conn.target), conn:
        conn.run(CREATE_LOCK, (f"memsift schema {schema}",))
        conn.run(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        conn.run(STATE_DDL)


def has_index(conn: PgConnection) -> bool:
    """Whether the store's schema holds an index (a first run made its tables)."""
    row = conn.run("SELECT to_regclass('files') IS NOT NULL").fetchone()
    return bool(row[0])


def require_index(conn: PgConnection) -> None:
    """Refuse to read a schema no index run has made yet, saying what to run (the message a
    SQLite store gives for a missing index.db)."""
    if not has_index(conn):
        raise IndexMissing(
            f"{conn.target.shown()}: no index yet; run `memsift index` in the store first"
        )
