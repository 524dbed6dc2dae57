"""Connections and schemas of the two databases (the statements on their rows are in
:mod:`engine.sqlite.indexdb` and :mod:`engine.state`).

``index.db`` is derived from the files and may be deleted at any time; ``state.db`` holds what
the files cannot tell (how often a memory was read, whether it helped) and is never rebuilt.
Both run in WAL mode with a busy timeout, so searches in other processes keep working while an
index run writes. apsw is used rather than the standard ``sqlite3`` because it bundles a current
SQLite that can load sqlite-vec on every platform.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from time import sleep

import apsw

from engine.errors import Database, DatabaseError, IndexMissing, Problem
from engine.sqlite import knn
from engine.sqlite.errors import classify, from_exception

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "connect",
    "ensure_vector_table",
    "open_index",
    "open_index_reader",
    "open_state",
    "write_meta",
]

INDEX_SCHEMA_VERSION = "4"
BUSY_TIMEOUT_MS = 10_000
#: Page cache of a reading connection (a search, status), in KiB.
READER_CACHE_KIB = 32_768
#: The file an index run holds an exclusive flock on (see ``engine.sqlite.indexer.run_lock``).
LOCK_NAME = "index.lock"
#: The meta key naming one ``index.db``: random, written when the file is made (or first
#: upgraded), so one made again after a deletion, or moved in from another store, is told
#: from the one a watcher kept (its inode number may be the same: file systems reuse them).
INDEX_ID = "index_id"
#: How long a reader waits for a first index run to create the schema, and how often it looks.
SCHEMA_WAIT_SECONDS = BUSY_TIMEOUT_MS / 1000
SCHEMA_POLL_SECONDS = 0.05

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
    mtime_ns     INTEGER NOT NULL
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

-- Full text per chunk, so the lexical arm can rank a file by its best passage the way the
-- vector arm does (a huge file that mentions everything no longer matches everything). The
-- file's title and tags are indexed with each of its chunks. Contentless: the text lives in
-- ``chunks`` already, and contentless_delete lets a chunk's row go by its id alone. Chunks are
-- rewritten whenever their file is, so insert and delete are the only triggers needed.
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    title, body, tags,
    content='', contentless_delete=1,
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS chunks_fts_insert AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, title, body, tags)
    SELECT new.id, f.title, new.text, f.tags FROM files AS f WHERE f.id = new.file_id;
END;
CREATE TRIGGER IF NOT EXISTS chunks_fts_delete AFTER DELETE ON chunks BEGIN
    DELETE FROM chunks_fts WHERE rowid = old.id;
END;
"""

#: Layout 2 indexed whole files (``files_fts``); layout 3 indexes chunks. Moving from 2 to 3
#: rebuilds only the full-text index from the chunks already stored, so no vector is lost
#: (embedding a large store again takes hours; reindexing its text takes seconds).
UPGRADE_2_TO_3 = """
DROP TRIGGER IF EXISTS files_fts_insert;
DROP TRIGGER IF EXISTS files_fts_delete;
DROP TRIGGER IF EXISTS files_fts_update;
DROP TABLE IF EXISTS files_fts;
"""
FILL_CHUNKS_FTS = """
INSERT INTO chunks_fts(rowid, title, body, tags)
SELECT c.id, f.title, c.text, f.tags FROM chunks AS c JOIN files AS f ON f.id = c.file_id
"""

#: Layout 3 kept each file's whole text in ``files.body``, which nothing read (the text lives in
#: ``chunks``); inline, it made every scan of ``files`` (scopes, priors) read the whole store's
#: text. Moving to 4 drops the column in place: ids, chunks and vectors stay.
UPGRADE_3_TO_4 = "ALTER TABLE files DROP COLUMN body"

STATE_SCHEMA = """
CREATE TABLE IF NOT EXISTS access(
    path             TEXT PRIMARY KEY,
    access_count     INTEGER NOT NULL DEFAULT 0 CHECK (access_count >= 0),
    last_accessed_at TEXT,
    outcome_score    REAL NOT NULL DEFAULT 0 CHECK (outcome_score BETWEEN -1 AND 1),
    content_hash     TEXT
);
"""


def connect(
    path: Path | str, *, readonly: bool = False, immutable: bool = False, create: bool = True
) -> apsw.Connection:
    """An apsw connection with sqlite-vec loaded, WAL, a busy timeout and foreign keys on.

    ``immutable`` (read-only too) tells SQLite the file cannot change, so it needs no lock and
    no ``-shm`` beside it: the only way to read a WAL-mode database in a folder nobody may
    write to. ``create=False`` opens an existing file to write, and fails (CantOpenError) if
    it is gone rather than make a new, empty one.
    """
    flags = apsw.SQLITE_OPEN_URI
    if readonly or immutable:
        flags |= apsw.SQLITE_OPEN_READONLY
    else:
        flags |= apsw.SQLITE_OPEN_READWRITE | (apsw.SQLITE_OPEN_CREATE if create else 0)
    name = Path(path).absolute().as_uri() + "?mode=ro&immutable=1" if immutable else str(path)
    conn = apsw.Connection(name, flags=flags)
    conn.set_busy_timeout(BUSY_TIMEOUT_MS)
    conn.enable_load_extension(True)
    conn.load_extension(vector_extension())
    conn.enable_load_extension(False)
    knn.register(conn)
    if readonly or immutable:
        # A reader never checkpoints, not even on close: that write could fail (a full disk)
        # and fail a command that only meant to read.
        conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
        # SQLite's default page cache (2 MB) is smaller than the full-text index of a few
        # thousand notes, so a long-lived searcher re-read it from the OS on every search.
        # Pages are only allocated as they are read, so a small store costs no more.
        conn.execute(f"PRAGMA cache_size=-{READER_CACHE_KIB}")
    else:
        use_wal(conn)
        conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


@cache
def vector_extension() -> str:
    """The file SQLite loads sqlite-vec from, without its suffix (SQLite adds the platform's).

    Found beside the sqlite_vec package rather than asked of it: importing that package
    imports numpy when numpy is installed (for a helper memsift never calls), and a connection
    that touches no vector (an index run without embeddings, the docs build preparing
    statements on an empty index) should not load numpy for it. The package's own answer is
    the fallback, should a release keep the library elsewhere.
    """
    spec = find_spec("sqlite_vec")
    if spec is not None and spec.origin is not None:
        folder = Path(spec.origin).parent
        if any(folder.glob("vec0.*")):
            return os.path.normpath(folder / "vec0")
    import sqlite_vec

    return str(sqlite_vec.loadable_path())


@contextmanager
def guarded(database: Database, path: Path) -> Iterator[None]:
    """Turn SQLite's errors (and the OS's full-disk and read-only errors) raised inside into a
    :class:`DatabaseError` that names ``database`` at ``path`` and says what to do."""
    try:
        yield
    except (DatabaseError, IndexMissing):
        raise
    except apsw.Error as exc:
        culprit = read_only_part(path) if classify(exc) is Problem.READ_ONLY else None
        raise from_exception(
            database, str(path), exc, culprit=str(culprit) if culprit else None
        ) from exc
    except OSError as exc:
        if classify(exc) not in (Problem.FULL, Problem.READ_ONLY):
            raise
        raise from_exception(database, str(path), exc) from exc


def read_only_part(path: Path) -> Path | None:
    """The folder or file that stops SQLite writing the database at ``path``, or None.

    A write needs the file itself and its folder (for the ``-wal`` and ``-shm`` files, and for
    the file when it does not exist yet); a folder that does not exist yet needs its nearest
    existing ancestor. ``os.access`` also sees read-only mounts and immutable files.
    """
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not os.access(folder, os.W_OK):
        return folder
    for candidate in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        if all(refused(candidate) for _ in range(READ_ONLY_CHECKS)):
            return candidate
    return None


#: How many times in a row a file must refuse writing to be called read-only (see ``refused``).
READ_ONLY_CHECKS = 3


def refused(candidate: Path) -> bool:
    """Whether ``candidate`` exists and may not be written. Other connections delete and make
    the -wal and -shm again at any moment (the last one to close deletes them), so one check
    can see a file vanish between its two questions; a file that is really read-only refuses
    every time. A file missed here still fails its write, with SQLite's own read-only error:
    the check only words the message, and a read lost to a false alarm is worse."""
    return not os.access(candidate, os.W_OK) and candidate.exists()


def require_writable(database: Database, path: Path) -> None:
    """Refuse, naming the read-only folder or file, before a write that could not succeed."""
    culprit = read_only_part(path)
    if culprit is not None:
        raise DatabaseError(database, str(path), Problem.READ_ONLY, culprit=str(culprit))


def open_reader(database: Database, path: Path) -> apsw.Connection:
    """Open an existing database to read it only: a search, ``status`` or a lookup can never
    write, never checkpoint on close (which could fail on a full disk), and works in a
    read-only store.

    In a folder nobody may write to, SQLite cannot create the ``-shm`` a WAL database needs,
    so the file is opened immutable; that is only safe when no ``-wal`` holds changes that are
    not in the file yet, and then the error says so.
    """
    with guarded(database, path):
        try:
            return checked(connect(path, readonly=True))
        except (apsw.CantOpenError, apsw.ReadOnlyError):
            if Path(f"{path}-wal").exists():
                raise DatabaseError(
                    database,
                    str(path),
                    Problem.CANT_OPEN,
                    "its folder is read-only and a -wal file beside it holds changes SQLite "
                    "cannot read without writing; open the store once where it is writable",
                ) from None
        return checked(connect(path, immutable=True))


def checked(conn: apsw.Connection) -> apsw.Connection:
    """``conn`` once SQLite has read its header and schema (where a damaged, foreign or
    unreachable file shows); closed if that fails."""
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
    except apsw.Error:
        conn.close()
        raise
    return conn


def attach(conn: apsw.Connection, uri: str) -> None:
    """ATTACH ``uri`` as ``state`` and read its schema (where a damaged file shows): the way a
    search attaches the state plane (:func:`engine.sqlite.search.attach_state`), and the docs
    plugin's empty index attaches its own (:mod:`engine.sqlite.prepare`)."""
    conn.execute("ATTACH DATABASE ? AS state", (uri,))
    try:
        conn.execute("SELECT count(*) FROM state.sqlite_master").fetchall()
    except apsw.Error:
        conn.execute("DETACH DATABASE state")
        raise


def has_table(conn: apsw.Connection, name: str) -> bool:
    query = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
    return conn.execute(query, (name,)).fetchone() is not None


def index_run_in_progress(state_dir: Path) -> bool:
    """Whether a ``memsift index`` run holds the store's lock right now (never blocks)."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): runs are not serialised, so none is seen
        return False
    try:
        fd = os.open(state_dir / LOCK_NAME, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def open_index(path: Path, *, create: bool = False) -> apsw.Connection:
    """Open ``index.db`` to write it; with ``create`` make it (and rebuild it if its schema is
    outdated). Searches and other readers use :func:`open_index_reader`."""
    missing = IndexMissing(f"{path}: no index yet; run `memsift index` in the store first")
    if not create and not path.exists():
        raise missing
    require_writable(Database.INDEX, path)
    with guarded(Database.INDEX, path):
        if not create:
            # Nothing made, not even .memsift/: an index deleted since the look above (a store
            # deleted whole, rm -rf) stays gone, and so does the folder being deleted with it.
            try:
                return connect(path, create=False)
            except apsw.CantOpenError:
                if path.exists():
                    raise
                raise missing from None
        # .memsift/ only: a store folder deleted meanwhile (rm -rf) must stay gone, not be
        # made again around a new database by a watcher that was still writing.
        path.parent.mkdir(exist_ok=True)
        conn = connect(path)
        version = read_meta(conn, "schema_version")
        if version not in (None, "2", "3", INDEX_SCHEMA_VERSION):
            # The index is derived: an old layout is dropped and rebuilt, never migrated.
            conn.close()
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            conn = connect(path)
        # Read-then-write beside other writers (a server, another run): take the write lock
        # first, and read the version again under it, since another run may have upgraded the
        # layout meanwhile (filling chunks_fts twice would index every chunk twice).
        with immediate(conn):
            install_index_schema(conn)
    return conn


def install_index_schema(conn: apsw.Connection) -> None:
    """Bring the index in ``conn`` to the current layout: made in an empty database, upgraded
    in place from layout 2 or 3. The caller holds the write lock (or owns the database: the
    docs plugin's empty index in memory, :mod:`engine.sqlite.prepare`)."""
    version = read_meta(conn, "schema_version")
    if version == "2":
        conn.execute(UPGRADE_2_TO_3)
    conn.execute(INDEX_SCHEMA)
    if version == "2":
        conn.execute(FILL_CHUNKS_FTS)
    if "body" in table_columns(conn, "files"):
        conn.execute(UPGRADE_3_TO_4)
    dim = vector_table_dim(conn)
    if dim is not None and read_meta(conn, VECTORS_VERSION) is None:
        install_vector_triggers(conn, dim)
    write_meta(conn, "schema_version", INDEX_SCHEMA_VERSION)
    if read_meta(conn, INDEX_ID) is None:
        write_meta(conn, INDEX_ID, secrets.token_hex(8))


def index_id(path: Path) -> str | None:
    """The name ``index.db`` at ``path`` was given when it was made (:data:`INDEX_ID`), or None
    (no such file, no name yet: being made right now, or made before names were given; or
    unreadable). Never raises: the watcher asks it to tell its index from one made again or
    moved in behind it, and a busy or damaged file is for its next look."""
    return index_meta(path, INDEX_ID)[0]


def index_meta(path: Path, *keys: str) -> tuple[str | None, ...]:
    """The values of ``keys`` in the meta table of ``index.db`` at ``path`` (None for each when
    the file is missing or unreadable). Never raises (see :func:`index_id`)."""
    try:
        conn = connect(path, readonly=True)
    except apsw.Error:
        return (None,) * len(keys)
    try:
        return tuple(read_meta(conn, key) for key in keys)
    except apsw.Error:
        return (None,) * len(keys)
    finally:
        conn.close()


def table_columns(conn: apsw.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def open_index_reader(path: Path) -> apsw.Connection:
    """Open ``index.db`` read-only, once it holds an index.

    A first index run creates the file and its tables a moment apart; a search started in
    between would fail with "no such table". While a run holds the store's lock, the reader
    waits (up to the busy timeout) for the tables; without a run, a missing or empty index is
    reported with the fix.
    """
    for _ in range(round(SCHEMA_WAIT_SECONDS / SCHEMA_POLL_SECONDS)):
        if path.exists():
            conn = open_reader(Database.INDEX, path)
            if has_table(conn, "files"):
                return conn
            conn.close()
        if not index_run_in_progress(path.parent):
            if path.exists():
                raise DatabaseError(
                    Database.INDEX, str(path), Problem.EMPTY, "a first run did not finish"
                )
            raise IndexMissing(f"{path}: no index yet; run `memsift index` in the store first")
        sleep(SCHEMA_POLL_SECONDS)
    raise DatabaseError(Database.INDEX, str(path), Problem.INDEXING)


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
        install_vector_triggers(conn, dim)
        conn.execute(
            "INSERT INTO vec_chunks(chunk_id, embedding) SELECT c.id, e.vector "
            "FROM chunks AS c JOIN embeddings AS e ON e.hash = c.hash WHERE e.dim = ?",
            (dim,),
        )
        write_meta(conn, "vec_dim", dim)
    return True


def install_vector_triggers(conn: apsw.Connection, dim: int) -> None:
    """(Re)create the triggers that keep ``vec_chunks`` in step, and start a fresh
    ``vectors_version``: a random start, so an index deleted and rebuilt never repeats the
    version a searcher cached its matrix under (:mod:`engine.sqlite.knn`)."""
    for name in VECTOR_TRIGGERS:
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
    conn.execute(VECTOR_TRIGGER_SQL.replace("{dim}", str(int(dim))))
    write_meta(conn, VECTORS_VERSION, secrets.randbits(62))


#: Changes whenever a chunk vector of the searched width comes or goes (see engine.sqlite.knn).
VECTORS_VERSION = knn.VERSION_KEY
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
    {bump}
END;
CREATE TRIGGER chunks_vec_delete AFTER DELETE ON chunks BEGIN
    DELETE FROM vec_chunks WHERE chunk_id = old.id;
    {bump}
END;
CREATE TRIGGER embeddings_vec_insert AFTER INSERT ON embeddings WHEN new.dim = {dim} BEGIN
    INSERT INTO vec_chunks(chunk_id, embedding)
    SELECT c.id, new.vector FROM chunks AS c WHERE c.hash = new.hash;
    {bump}
END;
CREATE TRIGGER embeddings_vec_delete AFTER DELETE ON embeddings BEGIN
    DELETE FROM vec_chunks WHERE chunk_id IN (SELECT id FROM chunks WHERE hash = old.hash);
    {bump}
END;
""".replace("{bump}", f"UPDATE meta SET value = value + 1 WHERE key = '{VECTORS_VERSION}';")


def use_wal(conn: apsw.Connection, timeout_ms: int = BUSY_TIMEOUT_MS) -> None:
    """Put the database in write-ahead-log mode, waiting for other connections as a write does.

    The mode is stored in the file (asking again on a database in it changes nothing).
    Switching needs the database to itself, and SQLite answers "database is locked" at once,
    without its busy wait, when several connections switch a new file together (threads
    counting their first reads into a fresh state.db did, one run in five): so it is retried."""
    waited = 0.0
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except apsw.BusyError:
            if waited * 1000 >= timeout_ms:
                raise
            sleep(WAL_RETRY_S)
            waited += WAL_RETRY_S


#: Pause between two tries to switch a database to write-ahead logging.
WAL_RETRY_S = 0.01


def open_state(path: Path) -> apsw.Connection:
    """Open (creating if needed) the durable ``state.db`` to write it; commits are synced
    (FULL), since unlike the index this database cannot be rebuilt."""
    require_writable(Database.STATE, path)
    with guarded(Database.STATE, path):
        # .memsift/ only: a store folder deleted meanwhile (rm -rf) must stay gone, not be
        # made again around a new database by a watcher that was still writing.
        path.parent.mkdir(exist_ok=True)
        conn = connect(path)
        conn.execute("PRAGMA synchronous=FULL")
        with conn:
            conn.execute(STATE_SCHEMA)
    return conn


def open_state_reader(path: Path) -> apsw.Connection:
    """Open an existing ``state.db`` read-only (it works in a read-only store)."""
    return open_reader(Database.STATE, path)


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


@contextmanager
def immediate(conn: apsw.Connection) -> Iterator[None]:
    """A write transaction that takes the write lock before its first read.

    These writes run beside other writers (a full run, another server). A deferred transaction
    that reads first and then writes fails at once with "database is locked" when another
    connection committed in between (SQLite cannot upgrade a stale snapshot, and the busy
    timeout does not apply); BEGIN IMMEDIATE waits its turn instead."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
