"""Bring ``index.db`` in step with the files of a store, doing as little work as possible.

A run has three passes, each committed in small transactions so a killed run leaves a
consistent index that the next run completes:

1. scan: walk the store; a file whose size and mtime match the index is not even read, one
   whose content hash matches is unchanged, anything else is parsed and written with its chunks;
   files gone from the store are removed (their chunks cascade, FTS follows by trigger);
2. embed: every chunk without a vector for the configured model gets one. Vectors are keyed by
   the hash of the embedded text, so an unchanged chunk is never embedded twice, a renamed file
   costs nothing, and switching models re-embeds without ever mixing two models' vectors;
3. tidy: vectors no chunk uses are dropped and the coverage figures are recorded.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

import apsw

from engine import indexdb
from engine import state as state_plane
from engine.chunking import chunk_text
from engine.db import (
    LOCK_NAME,
    ensure_vector_table,
    guarded,
    immediate,
    open_index,
    read_meta,
    require_writable,
    write_meta,
)
from engine.embedder import Embedder, make_embedder, to_blob
from engine.errors import Database
from engine.indexdb import FileRow, KnownFile, record_coverage
from engine.memory import Memory, Skip, format_utc, parse_memory
from engine.pg.target import database_target
from engine.reading import Unreadable, over_limit, read_regular
from engine.store import Candidate, Store, open_store, walk

#: ``progress(phase, done, total)``; phase is "scan" or "embed".
Progress = Callable[[str, int, int], None]

WRITE_BATCH = 64
EMBED_BATCH = 128

#: Memories a caller has just parsed, by key: the sha256 of the bytes it parsed and the result.
#: A scan that reads exactly those bytes uses the result instead of parsing the file again
#: (``forget`` parses the file it writes to check the edit; a large HTML page takes seconds).
Preparsed = Mapping[str, tuple[str, Memory]]


@dataclass
class IndexReport:
    """What a run did, in the shape ``memsift index --json`` prints."""

    indexed: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    embedded: int = 0
    #: State rows moved to a new path holding their memory's content: (old, new).
    renamed: list[tuple[str, str]] = field(default_factory=list)
    #: path -> content hash of each file this run wrote (what the index now knows of it).
    written: dict[str, str] = field(default_factory=dict)

    def took(self, batch: list[Parsed]) -> None:
        """Record a batch of files as written to the index."""
        self.indexed.extend(item.key for item in batch)
        self.written.update((item.key, item.content_hash) for item in batch)

    def move_lines(self) -> list[str]:
        """One line per state row moved, as every surface reports it (index, watch, serve)."""
        return [
            f"moved state of {old} to {new} (renamed, same content)" for old, new in self.renamed
        ]

    def summary(self) -> dict[str, object]:
        return {
            "indexed": len(self.indexed),
            "unchanged": self.unchanged,
            "removed": len(self.removed),
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
            "embedded": self.embedded,
            "moved": [{"from": old, "to": new} for old, new in self.renamed],
        }


@dataclass(frozen=True)
class Parsed:
    key: str
    memory: Memory
    content_hash: str
    size: int
    mtime_ns: int


def content_digest(data: bytes) -> str:
    """A file's content hash as the index keeps it (sha256 of its bytes, hex)."""
    return hashlib.sha256(data).hexdigest()


def parsed_now(key: str, data: bytes, memory: Memory) -> Preparsed:
    """``memory``, just parsed from ``data``, offered to the next scan of ``key``."""
    return {key: (content_digest(data), memory)}


def utc_from_ns(mtime_ns: int) -> str:
    return format_utc(dt.datetime.fromtimestamp(mtime_ns / 1e9, tz=dt.UTC))


def embed_text(title: str, chunk: str) -> str:
    """What the model reads for a chunk: the title gives a fragment its subject."""
    return f"{title}\n{chunk}" if title else chunk


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def batched(items: Iterable[Parsed], size: int) -> Iterator[list[Parsed]]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def index_store(
    store: Store | str | os.PathLike[str],
    *,
    embed: bool = True,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
) -> IndexReport:
    """Index ``store`` incrementally and return what changed.

    ``embedder`` overrides the configured model (tests, other backends); ``embed=False`` indexes
    lexically only and leaves existing vectors alone.
    """
    if not isinstance(store, Store):
        store = open_store(store)
    config = store.config()
    target = database_target(config)
    if target is None:
        require_writable(Database.INDEX, store.index_path)  # before loading a model for nothing
    if embed and embedder is None:
        embedder = make_embedder(config.model)
    if not embed:
        embedder = None
    report = IndexReport()
    if target is not None:  # a team store: the index lives in PostgreSQL
        from engine.pg.indexer import index_to_database

        return index_to_database(store, target, config.max_file_bytes, embedder, progress, report)
    with guarded(Database.INDEX, store.index_path):
        store.state_dir.mkdir(parents=True, exist_ok=True)
        with run_lock(store.state_dir / LOCK_NAME):
            return run_index(store, config.max_file_bytes, embedder, progress, report)


@contextmanager
def run_lock(path: Path) -> Iterator[None]:
    """One index run per store at a time: a second run waits for the first, then finds its work
    done, instead of embedding the same chunks twice. The OS drops the lock if a run dies."""
    with path.open("a") as handle:
        try:
            import fcntl
        except ImportError:  # no flock (Windows): runs stay correct, only not serialised
            yield
            return
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def run_index(
    store: Store,
    max_file_bytes: int,
    embedder: Embedder | None,
    progress: Progress | None,
    report: IndexReport,
) -> IndexReport:
    conn = open_index(store.index_path, create=True)
    try:
        with conn:
            write_meta(conn, "complete", 0)
        known = indexdb.known_files(conn)
        seen: set[str] = set()
        touched: list[tuple[int, str, str]] = []
        candidates = list(walk(store))
        changed = scan(candidates, max_file_bytes, known, seen, report, touched, progress)
        for batch in batched(changed, WRITE_BATCH):
            write_files(conn, batch)
            report.took(batch)
        if touched:
            with conn:
                indexdb.touch_files(conn, touched)
        gone = sorted(set(known) - seen)
        if gone:
            with conn:
                indexdb.delete_files(conn, gone)
            report.removed = gone
        if store.state_path.exists():
            # Every path still in the store counts, a skipped one too: a memory that is briefly
            # unparsable has not moved, so its row must not follow a copy of its content.
            present = {c.key for c in candidates} | indexdb.indexed_paths(conn)
            report.renamed = state_plane.follow_content(
                store,
                state_plane.within(present),
                indexdb.unique_content_paths(conn),
                {path: known[path].content_hash for path in gone},
                report.written,
            )
        if embedder is not None:
            report.embedded = fill_vectors(conn, embedder, progress)
        # Counts the chunks (a read) before it records them: the write lock comes first.
        with immediate(conn):
            if embedder is not None:
                indexdb.drop_unused_vectors(conn)
            record_coverage(
                conn,
                embedder.name if embedder else read_meta(conn, "model"),
                embedder.dim if embedder else None,
            )
            write_meta(conn, "indexed_at", dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))
            write_meta(conn, "skipped", json.dumps(skipped_fingerprint(store, report.skipped)))
            write_meta(conn, "complete", 1)
    finally:
        conn.close()
    return report


def scan(
    candidates: list[Candidate],
    max_bytes: int,
    known: dict[str, KnownFile],
    seen: set[str],
    report: IndexReport,
    touched: list[tuple[int, str, str]],
    progress: Progress | None = None,
    preparsed: Preparsed | None = None,
) -> Iterator[Parsed]:
    """Yield the files that need writing; count unchanged ones and record skips as it goes.

    A file whose mtime moved but whose bytes did not goes to ``touched``: its row gets the new
    mtime (so the next run skips it on stat alone) without being parsed or re-embedded. A file
    whose bytes are those of a ``preparsed`` entry is not parsed again."""
    for number, candidate in enumerate(candidates, 1):
        if progress and (number % 25 == 0 or number == len(candidates)):
            progress("scan", number, len(candidates))
        if candidate.skip:
            report.skipped.append((candidate.key, candidate.skip))
            continue
        info = candidate.info or candidate.path.lstat()
        if info.st_size > max_bytes:
            report.skipped.append((candidate.key, over_limit(info.st_size, max_bytes)))
            continue
        stored = known.get(candidate.key)
        if stored and stored.size == info.st_size and stored.mtime_ns == info.st_mtime_ns:
            seen.add(candidate.key)
            report.unchanged += 1
            continue
        try:
            data, info = read_regular(candidate.path, max_bytes)
        except Unreadable as exc:
            report.skipped.append((candidate.key, exc.reason))
            continue
        digest = content_digest(data)
        if stored and stored.content_hash == digest:
            seen.add(candidate.key)
            report.unchanged += 1
            touched.append((info.st_mtime_ns, utc_from_ns(info.st_mtime_ns), candidate.key))
            continue
        given = (preparsed or {}).get(candidate.key)
        try:
            memory = given[1] if given and given[0] == digest else parse_memory(candidate.key, data)
        except Skip as skip:
            report.skipped.append((candidate.key, skip.reason))
            continue
        seen.add(candidate.key)
        yield Parsed(candidate.key, memory, digest, info.st_size, info.st_mtime_ns)


def write_files(conn: apsw.Connection, batch: list[Parsed]) -> None:
    """Upsert a batch of files and replace their chunks, in one transaction."""
    with conn:
        for item in batch:
            indexdb.write_file(conn, file_row(item))


def file_row(item: Parsed) -> FileRow:
    """A parsed memory as its ``files`` row and chunks; a memory without body text is one chunk
    of its title, so it still has a vector."""
    m = item.memory
    return FileRow(
        path=item.key,
        title=m.title,
        kind=m.kind,
        event_at=m.event_at,
        updated_at=utc_from_ns(item.mtime_ns),
        tags_json=json.dumps(list(m.tags), ensure_ascii=False),
        archived=m.archived,
        content_hash=item.content_hash,
        size=item.size,
        mtime_ns=item.mtime_ns,
        chunks=[
            (chunk, text_hash(embed_text(m.title, chunk)))
            for chunk in chunk_text(m.body) or [m.title]
        ],
    )


def fill_vectors(
    conn: apsw.Connection, embedder: Embedder, progress: Progress | None = None
) -> int:
    """Embed every chunk text that has no vector for ``embedder``; return how many were made."""
    with conn:
        indexdb.drop_other_vectors(conn, embedder.name, embedder.dim)
        # Recorded before the first vector, not at the end: after a killed run a search can
        # then tell these vectors' model and say how far embedding got.
        write_meta(conn, "model", embedder.name)
        write_meta(conn, "dim", embedder.dim)
    ensure_vector_table(conn, embedder.dim)
    missing = indexdb.chunks_without_vectors(conn)
    done = 0
    for start in range(0, len(missing), EMBED_BATCH):
        done += store_vectors(conn, embedder, missing[start : start + EMBED_BATCH])
        if progress:
            progress("embed", done, len(missing))
    return done


def store_vectors(
    conn: apsw.Connection, embedder: Embedder, batch: list[tuple[str, str, str]]
) -> int:
    """Embed a batch of (hash, title, text) chunks as the indexer keys them (title and text
    together) and store the vectors in one transaction; return how many. A full run and an
    incremental one both embed through here, so a chunk's vector never depends on which
    made it."""
    vectors = embedder.embed([embed_text(title, text) for _, title, text in batch])
    with conn:
        indexdb.add_vectors(
            conn,
            embedder.name,
            embedder.dim,
            [(digest, to_blob(v)) for (digest, _, _), v in zip(batch, vectors, strict=True)],
        )
    return len(batch)


def skipped_fingerprint(store: Store, skipped: list[tuple[str, str]]) -> dict[str, list[int]]:
    """path -> [size, mtime_ns] of the files this run skipped, so `status` does not count a
    file it will skip again as a pending change."""
    marks: dict[str, list[int]] = {}
    for key, _ in skipped:
        try:
            info = (store.root / key).stat()
        except OSError:
            continue
        marks[key] = [info.st_size, info.st_mtime_ns]
    return marks


def pending_changes(
    store: Store, conn: apsw.Connection, not_walked: list[tuple[str, str]] | None = None
) -> dict[str, int]:
    """Count files added, modified and removed since the last run, from stat() alone.

    What the walk skips without reading (a link, a pipe, a device, a bad name, a folder it does
    not enter) is no change: the next run would skip it again. Those paths go to
    ``not_walked``, with the reason, when it is given."""
    return changes_since(
        store, indexdb.file_fingerprints(conn), read_meta(conn, "skipped"), not_walked
    )


def changes_since(
    store: Store,
    indexed: dict[str, tuple[int, int]],
    skipped_json: str | None,
    not_walked: list[tuple[str, str]] | None = None,
) -> dict[str, int]:
    """:func:`pending_changes` from what the index holds, on either backend: path -> (size,
    mtime_ns) of every indexed file, and the last run's skipped files (its JSON)."""
    skipped = {k: tuple(v) for k, v in json.loads(skipped_json or "{}").items()}
    added = modified = 0
    present: set[str] = set()
    for candidate in walk(store):
        if candidate.skip and not_walked is not None:
            not_walked.append((candidate.key, candidate.skip))
        if candidate.skip or candidate.info is None:
            continue
        present.add(candidate.key)
        info = candidate.info
        stored = indexed.get(candidate.key)
        if stored is None:
            if skipped.get(candidate.key) != (info.st_size, info.st_mtime_ns):
                added += 1
        elif stored != (info.st_size, info.st_mtime_ns):
            modified += 1
    removed = len(set(indexed) - present)
    return {"added": added, "modified": modified, "removed": removed}
