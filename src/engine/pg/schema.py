"""The tables of a team store: one schema per store, holding its index and its state plane.

The layout follows the SQLite index (``engine.sqlite.db``) so the arms' two dialects read the same
columns: ``files`` (times as the same UTC text, so both backends compare and order them alike;
tags as ``jsonb``; paths in the "C" collation, so ties break in the same byte order as
SQLite's), ``chunks`` (with a ``tsvector`` of the chunk, its file's title and tags, weighted
A title, B tags, D body, under a GIN index), ``embeddings`` (pgvector ``vector``, any width:
the model and width travel with every row, as in SQLite), ``meta``, and the state plane
``state_access``. Unlike the index, ``state_access`` is never dropped or rebuilt.

The fts arm ranks by Okapi BM25 as FTS5 does, computed in SQL from what the index holds: each
chunk's ``tsvector`` is its posting list (every lexeme with its positions, each labelled with
the column it came from, so a term's frequency per column is read off it), ``chunks.length``
its length in tokens, and ``fts_totals`` the store's number of chunks and of tokens (for the
average length). ``length`` is generated from ``terms``, so no writer can forget it; the totals
are kept by a trigger deferred to commit, so a transaction takes the totals row last and never
waits on another lock while holding it (a full run and a ``remember`` writing the same file
cannot deadlock on it).

On a large store the fts arm scores a pre-selection of chunks (:mod:`engine.pg.champions`):
``fts_champions`` holds, for each word held by many chunks, its best chunks and its count of
chunks when the lists were made, ``meta.fts_champions_through`` the highest chunk id they were
made from, and ``fts_gone`` (filled by a row trigger on every chunk deleted) the words of the
chunks deleted since, so a search counts a listed word's chunks exactly without reading them.

Full text uses the text search configuration ``memsift``: English stemming with no stop
words, like SQLite's Porter tokenizer; the query side (``engine.pg.search``) leaves out the
same stop words as on SQLite, so a negation or a qualifier still counts in a document. Its
parser is given text already cut into words where FTS5 cuts it (:mod:`engine.ranking.words`),
on the index's side and the query's alike.
"""

from __future__ import annotations

from engine.errors import IndexMissing
from engine.indexing.pipeline import Progress
from engine.pg.driver import PgConnection, PgError, guarded, register_vectors
from engine.pg.indexdb import rederive_terms

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "HNSW_INDEX",
    "build_hnsw",
    "ensure_schema",
]

#: 2: ``chunks.length`` and ``fts_totals`` (BM25). 3: ``chunks.terms`` made of the text as
#: FTS5 cuts it into words (:mod:`engine.ranking.words`), not as PostgreSQL's parser cuts it
#: alone (which kept "2.4", hosts, paths and emails whole, and folded no diacritics). An
#: older index is upgraded in place by the next index run: lengths and totals are added to a
#: layout-1 index, then every chunk's ``terms`` is made anew (:func:`upgrade_terms`).
#: 4: ``fts_champions``, the full-text arm's pre-selection for common words
#: (:mod:`engine.pg.champions`): added empty, so the arm scans exactly until the run that
#: upgraded the index makes the lists at its end.
SCHEMA_VERSION = "4"
#: What each layout brought, for the message that refuses to search an older one.
LAYOUTS = {
    "2": "full text ranked by BM25",
    "3": "full text cut into words as on SQLite",
    "4": "full text pre-selected by champion lists on large stores",
}

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
    length  integer GENERATED ALWAYS AS (memsift_tokens(terms)) STORED,
    UNIQUE(file_id, seq)
);
CREATE INDEX IF NOT EXISTS chunks_hash ON chunks(hash);
CREATE INDEX IF NOT EXISTS chunks_terms ON chunks USING gin(terms);

CREATE TABLE IF NOT EXISTS fts_champions(
    lexeme text PRIMARY KEY,
    hits   bigint NOT NULL,
    chunks bigint[] NOT NULL
);
CREATE TABLE IF NOT EXISTS fts_gone(
    id    bigint PRIMARY KEY,
    terms tsvector NOT NULL
);
CREATE INDEX IF NOT EXISTS fts_gone_terms ON fts_gone USING gin(terms);

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

#: A chunk's length for BM25: its tokens in every column (title, tags, body), which are its
#: tsvector's positions (the configuration keeps every word, so each token has one).
TOKENS = """
CREATE OR REPLACE FUNCTION memsift_tokens(tsvector) RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT coalesce(sum(coalesce(cardinality(positions), 1)), 0)::integer FROM unnest($1) $$;
"""

#: Layout 1 had no lengths; adding the generated column computes every chunk's.
UPGRADE_1_TO_2 = (
    "ALTER TABLE chunks ADD COLUMN length integer GENERATED ALWAYS AS "
    "(memsift_tokens(terms)) STORED"
)

#: The store's totals for BM25 (N and the average length), counted once from the chunks when
#: the layout is made or upgraded (in the transaction that made or altered ``chunks``, which
#: holds it locked), then kept in step by a row trigger deferred to commit.
TOTALS = """
CREATE TABLE fts_totals(
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    chunks   bigint NOT NULL,
    tokens   bigint NOT NULL
);
INSERT INTO fts_totals(chunks, tokens) SELECT count(*), coalesce(sum(length), 0) FROM chunks;

CREATE FUNCTION memsift_count_chunk() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT
AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE fts_totals SET chunks = chunks + 1, tokens = tokens + NEW.length;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE fts_totals SET chunks = chunks - 1, tokens = tokens - OLD.length;
    ELSE
        UPDATE fts_totals SET tokens = tokens - OLD.length + NEW.length;
    END IF;
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER chunks_count AFTER INSERT OR DELETE OR UPDATE OF terms ON chunks
DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION memsift_count_chunk();
"""
#: Every chunk deleted (a file written again, or removed) leaves its words in ``fts_gone`` until
#: the champion lists are next made, so a search subtracts the chunks of a listed word that
#: are gone from the count the list recorded (:mod:`engine.pg.champions`).
GONE = """
CREATE OR REPLACE FUNCTION memsift_chunk_gone() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT
AS $$
BEGIN
    INSERT INTO fts_gone(id, terms) VALUES (OLD.id, OLD.terms) ON CONFLICT (id) DO NOTHING;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER chunks_gone AFTER DELETE ON chunks
FOR EACH ROW EXECUTE FUNCTION memsift_chunk_gone();
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


def ensure_schema(conn: PgConnection, progress: Progress | None = None) -> None:
    """Create the store's schema and tables if missing (idempotent; concurrent runs of this are
    serialised by the caller's advisory lock), with pgvector installed in ``public``; upgrade
    an index of an older layout in place, in the same transaction (``progress`` hears of the
    chunks whose full text is made anew)."""
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
        made = layout(conn)
        if made is not None and made > int(SCHEMA_VERSION):
            raise PgError(newer_layout(conn, made))
        if made is None:
            refuse_foreign_tables(conn)
        conn.run(TOKENS)
        conn.run(DDL)
        if made == 1:
            conn.run(UPGRADE_1_TO_2)
        if made is None or made < 2:
            conn.run(TOTALS)
        conn.run(GONE)
        if made is not None and made < 3:
            upgrade_terms(conn, progress)
        conn.run(STATE_DDL)
        conn.run(
            "INSERT INTO meta(key, value) VALUES ('schema_version', %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (SCHEMA_VERSION,),
        )
    register_vectors(conn.raw, conn.target)


def upgrade_terms(conn: PgConnection, progress: Progress | None) -> None:
    """Layout 2 to 3: every chunk's ``terms`` made anew by the rule both backends cut words by
    (:func:`engine.pg.indexdb.rederive_terms`). Derived index rows only: the files, their
    vectors and the state plane stay as they are, so nothing is embedded again and no read or
    outcome is lost. The tokens of a chunk change with its ``terms`` ("2.4" is two), so its
    ``length`` (generated) and the store's totals (the row trigger) follow."""
    rederive_terms(conn, progress)


def qualified(conn: PgConnection, name: str) -> str:
    """``name`` in the store's own schema, for ``to_regclass`` (schema names are checked to be
    plain lower-case words when the configuration is read, so quoting them is enough)."""
    return f'"{conn.target.schema}".{name}'


def own_relation(conn: PgConnection, name: str) -> bool:
    """Whether the store's schema itself holds the table or index ``name``.

    Connections search ``public`` after the store's schema (pgvector's type lives there), so
    an unqualified lookup would take another application's ``public.files``, or the tables of
    a store that chose ``schema = "public"``, for this store's own before its first run."""
    row = conn.run("SELECT to_regclass(%s) IS NOT NULL", (qualified(conn, name),)).fetchone()
    return bool(row[0])


#: The tables an index run makes; ``meta`` (with the layout) is made in the same transaction.
INDEX_TABLES = (
    "meta",
    "files",
    "chunks",
    "embeddings",
    "fts_totals",
    "fts_champions",
    "fts_gone",
)


def refuse_foreign_tables(conn: PgConnection) -> None:
    """Refuse a schema that holds tables of the index's names no index run made (no layout
    recorded): another application's ``files`` would otherwise fail the run with a column
    error from deep in the DDL, or worse, be written to."""
    foreign = [name for name in INDEX_TABLES if own_relation(conn, name)]
    if foreign:
        names = ", ".join(repr(name) for name in foreign)
        raise PgError(
            f"{conn.target.shown()}: already holds {names}, which no memsift index run made "
            "(another application's tables?); set [database] schema in .memsift/config.toml "
            "to a schema of memsift's own"
        )


def meta_is_ours(conn: PgConnection) -> bool:
    """Whether the schema's ``meta`` table has the two columns memsift gives it."""
    row = conn.run(
        "SELECT count(*) FROM pg_attribute WHERE attrelid = to_regclass(%s) "
        "AND attname IN ('key', 'value') AND NOT attisdropped",
        (qualified(conn, "meta"),),
    ).fetchone()
    return row[0] == 2


def layout(conn: PgConnection) -> int | None:
    """The layout version of the schema's index; None before a first run made its tables (or
    when a ``meta`` table of another application's stands where the index's would)."""
    if not own_relation(conn, "meta") or not meta_is_ours(conn):
        return None
    row = conn.run("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return None if row is None else int(row[0])


def newer_layout(conn: PgConnection, made: int) -> str:
    return (
        f"{conn.target.shown()}: the index has layout {made}, made by a newer memsift than "
        f"this one (layout {SCHEMA_VERSION}); upgrade memsift to use it"
    )


def require_layout(conn: PgConnection) -> None:
    """Refuse to rank with an index of another layout: a layout-1 index has no chunk lengths
    or totals, which the fts arm's BM25 reads; a layout-2 index holds words the query's terms
    cannot match ("2.4" whole, where the query asks for "2" and "4"). One line, with the fix;
    never a ranking made from missing figures or mismatched words."""
    made = layout(conn)
    if made is None or made == int(SCHEMA_VERSION):
        return
    if made > int(SCHEMA_VERSION):
        raise PgError(newer_layout(conn, made))
    raise PgError(
        f"{conn.target.shown()}: the index has layout {made}, older than this memsift's "
        f"({SCHEMA_VERSION}: {LAYOUTS[SCHEMA_VERSION]}); run `memsift index` to upgrade it in "
        "place (files, vectors and reads are kept)"
    )


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
    return own_relation(conn, "files")


def require_index(conn: PgConnection) -> None:
    """Refuse to read a schema no index run has made yet, saying what to run (the message a
    SQLite store gives for a missing index.db)."""
    if not has_index(conn):
        raise IndexMissing(
            f"{conn.target.shown()}: no index yet; run `memsift index` in the store first"
        )


#: The pgvector HNSW index over the chunk vectors (cosine), present only while a store sets
#: ``[database] vector_index = "hnsw"``; the vector arm's nearest-chunks step uses it when it
#: exists, so its existence (not the configuration) is what makes a search approximate.
HNSW_INDEX = "embeddings_vector_hnsw"


def vector_width(conn: PgConnection) -> int | None:
    """The width the ``vector`` column is declared with (None: any width, as the table is made).

    An HNSW index needs a declared width, so the column carries one only while it has the
    index; any width again otherwise, so a switch to a model of another width just works."""
    row = conn.run(
        "SELECT a.atttypmod FROM pg_attribute AS a "
        "WHERE a.attrelid = to_regclass(%s) AND a.attname = 'vector'",
        (qualified(conn, "embeddings"),),
    ).fetchone()
    return None if row is None or row[0] < 0 else int(row[0])


def has_hnsw(conn: PgConnection) -> bool:
    """Whether the store's schema holds the HNSW index now (so its searches are approximate)."""
    return own_relation(conn, HNSW_INDEX)


def release_vector_width(conn: PgConnection) -> None:
    """Drop the HNSW index and the column's declared width (before vectors of another width
    are written; also what ``vector_index = "exact"`` asks of the next run)."""
    conn.run(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
    if vector_width(conn) is not None:
        conn.run("ALTER TABLE embeddings ALTER COLUMN vector TYPE vector")


def build_hnsw(conn: PgConnection, dim: int) -> None:
    """Declare the column ``dim`` wide and build the HNSW index on it (cosine distance, the
    arm's ``<=>``), unless it is there already. pgvector indexes at most 2,000 dimensions."""
    if dim > 2000:
        raise PgError(
            f"{conn.target.shown()}: [database] vector_index = \"hnsw\" cannot index {dim}-wide "
            "vectors (pgvector's HNSW takes at most 2000); set it to \"exact\" or use a "
            "smaller model"
        )
    if vector_width(conn) != dim:
        release_vector_width(conn)
        conn.run(f"ALTER TABLE embeddings ALTER COLUMN vector TYPE vector({int(dim)})")
    conn.run(
        f"CREATE INDEX IF NOT EXISTS {HNSW_INDEX} ON embeddings "
        "USING hnsw (vector vector_cosine_ops)"
    )


def apply_vector_index(conn: PgConnection, wanted: str, dim: int | None) -> None:
    """Make the index match ``[database] vector_index``: build HNSW for vectors ``dim`` wide
    (when there are any), or drop it for "exact"; record which in ``meta``."""
    if wanted == "hnsw" and dim:
        build_hnsw(conn, dim)
    elif wanted != "hnsw":
        release_vector_width(conn)
    conn.run(
        "INSERT INTO meta(key, value) VALUES ('vector_index', %s) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        ("hnsw" if has_hnsw(conn) else "exact",),
    )
