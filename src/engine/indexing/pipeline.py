"""The parts of indexing that no database is in: which files a run looks at, what it reads
of each, and the rows and chunks it makes of them; what a run did, as a report.

Both backends build their runs from these (:mod:`engine.indexing.indexer` and
:mod:`engine.indexing.incremental` for SQLite, :mod:`engine.pg.indexer` and
:mod:`engine.pg.incremental` for PostgreSQL), so a file is scanned, chunked and keyed one way
whichever database it goes to, and a backend imports this module, never the other backend's.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import islice
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from engine.files.chunking import chunk_text
from engine.files.keys import name_refusal
from engine.files.memory import Memory, Skip, format_utc, parse_memory
from engine.files.reading import Unreadable, over_limit, read_regular
from engine.files.store import Candidate, Store, too_deep, walk
from engine.indexing.budget import embeddable

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "embed_text",
    "text_hash",
]

#: ``progress(phase, done, total)``; phase is "scan" or "embed".
Progress = Callable[[str, int, int], None]

WRITE_BATCH = 64
EMBED_BATCH = 128
#: Chunks embedded per transaction by the background filler: small, so a search waiting for
#: the shared embedder waits for at most one such batch.
FILL_BATCH = 16
#: Seconds between coverage updates while the background filler runs (counting is a scan).
COVERAGE_EVERY_S = 2.0

#: Memories a caller has just parsed, by key: the sha256 of the bytes it parsed and the result.
#: A scan that reads exactly those bytes uses the result instead of parsing the file again
#: (``forget`` parses the file it writes to check the edit; a large HTML page takes seconds).
Preparsed = Mapping[str, tuple[str, Memory]]


#: How long after a file's last change its size and mtime can still miss a rewrite: the
#: coarsest timestamp granularity in common use (FAT's 2 s; ext4, APFS and NTFS are finer, some
#: network filesystems are 1 s) plus a second for clocks that disagree a little. A file whose
#: mtime is not at least this much older than the moment it was read may be rewritten with the
#: same size within the same tick, leaving size and mtime as they were (git's "racy clean").
RACY_NS = 3_000_000_000


def wall_clock_ns() -> int:
    """Now, on the clock file mtimes are stamped by (a seam: tests set it)."""
    return time.time_ns()


def settled(mtime_ns: int, read_at_ns: int) -> bool:
    """Whether a file read at ``read_at_ns`` with this mtime can be trusted by size and mtime
    from then on: any later change lands in a later timestamp tick, so it moves the mtime."""
    return mtime_ns <= read_at_ns - RACY_NS


def recorded_size(size: int, trusted: bool) -> int:
    """The size a row records: the file's own, or for a file that was not :func:`settled` when
    read, its complement (``-1 - size``, never a real size), so the next scan's size check fails
    and the file is hashed instead of trusted. Git "smudges" such entries the same way (it sets
    their size to 0); the complement keeps the size for ``status``, and no column is added."""
    return size if trusted else -1 - size


def stat_size(recorded: int) -> int:
    """The file size a row's recorded size stands for (see :func:`recorded_size`)."""
    return recorded if recorded >= 0 else -1 - recorded


class KnownFile(NamedTuple):
    """A file as the index last saw it: enough to tell, from ``stat()``, whether it changed."""

    id: int
    content_hash: str
    #: As recorded: negative when the file was not settled when read (:func:`recorded_size`).
    size: int
    mtime_ns: int

    def matches(self, info: os.stat_result) -> bool:
        """Whether ``stat()`` alone shows the file as indexed: never for a row recorded from a
        read that could not trust size and mtime."""
        return self.size >= 0 and (self.size, self.mtime_ns) == (info.st_size, info.st_mtime_ns)


class Touch(NamedTuple):
    """A file read again and found to hold the content its row has: the row's new size and
    mtime (as recorded, :func:`recorded_size`), written only while the row still holds
    ``content_hash`` (a writer that indexed newer content in between keeps its row)."""

    size: int
    mtime_ns: int
    updated_at: str
    path: str
    content_hash: str


@dataclass(frozen=True)
class FileRow:
    """One memory as written to ``files``, with its chunks as ``(text, hash of embedded text)``
    in order."""

    path: str
    title: str
    kind: str | None
    event_at: str | None
    updated_at: str
    tags_json: str
    archived: bool
    content_hash: str
    size: int
    mtime_ns: int
    chunks: Sequence[tuple[str, str]]


@dataclass
class IndexReport:
    """What a run did, in the shape ``memsift index --json`` prints."""

    indexed: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    #: Distinct chunk texts embedded by this run.
    embedded: int = 0
    #: Chunks of the files this run wrote that got a vector without being embedded for it: the
    #: same text (title and chunk) already had one, from another file, an earlier version of the
    #: file or an earlier run, or is embedded once for several chunks of this run.
    reused: int = 0
    #: Chunks of the files this run wrote that the per-file embedding budget leaves out, but for
    #: those whose text this run embedded or a chunk it wrote within the budget holds. Not a
    #: count of chunks found by full text only: one may hold the same text as a chunk within the
    #: budget of a file this run did not write, embedded before, and share its vector; ``status``
    #: counts exactly (``full_text_only_chunks``; :mod:`engine.indexing.budget`). Counting that
    #: here would take one more query per backend.
    past_budget: int = 0
    #: (seq, its file's chunk count, text hash) of every chunk of the files this run wrote, for
    #: the two counts above and the vectors the budget no longer covers.
    written_chunks: list[tuple[int, int, str]] = field(default_factory=list, repr=False)
    #: State rows moved to a new path holding their memory's content: (old, new).
    renamed: list[tuple[str, str]] = field(default_factory=list)
    #: path -> content hash of each file this run wrote (what the index now knows of it).
    written: dict[str, str] = field(default_factory=dict)

    def took(self, batch: list[Parsed]) -> None:
        """Record a batch of files as written to the index."""
        self.indexed.extend(item.key for item in batch)
        self.written.update((item.key, item.content_hash) for item in batch)
        self.written_chunks.extend(
            (seq, len(item.row.chunks), digest)
            for item in batch
            for seq, (_, digest) in enumerate(item.row.chunks)
        )

    def count_reuse(self, embedded: set[str], budget: int) -> None:
        """Set :attr:`reused` and :attr:`past_budget` once embedding is done, from the hashes
        of the texts this run embedded: each chunk within the budget either is the one its text
        was embedded for, or reused a vector."""
        within = [d for seq, n, d in self.written_chunks if embeddable(seq, n, budget)]
        held = set(within) | embedded
        self.past_budget = sum(
            1
            for seq, n, d in self.written_chunks
            if not embeddable(seq, n, budget) and d not in held
        )
        self.reused = len(within) - len(set(within) & embedded)

    def left_out(self, budget: int) -> list[str]:
        """The text hashes of the chunks this run wrote that the ``budget`` leaves out: a
        vector one of them had (an earlier, larger budget; the file's earlier length) goes
        unless a chunk within the budget holds the same text
        (:func:`engine.indexing.budget.uncovered_vectors_sql`)."""
        return sorted({d for seq, n, d in self.written_chunks if not embeddable(seq, n, budget)})

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
            "reused": self.reused,
            "past_budget": self.past_budget,
            "moved": [{"from": old, "to": new} for old, new in self.renamed],
        }


@dataclass(frozen=True)
class Parsed:
    """A memory read and parsed by a scan, with what the read saw of its file."""

    key: str
    memory: Memory
    content_hash: str
    size: int
    mtime_ns: int
    #: Whether the file's mtime was :func:`settled` when it was read.
    trusted: bool = True
    #: The file's identity at the read (:func:`identity`): a writer re-checks it before it
    #: writes the row (:func:`still_current`).
    seen: tuple[int, ...] = ()

    @cached_property
    def row(self) -> FileRow:
        """This memory's ``files`` row and chunks, made once (chunking a huge file takes
        a while, and the writer and the report both read them)."""
        return file_row(self)


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


def identity(info: os.stat_result) -> tuple[int, ...]:
    """What ``stat()`` shows of a file's content: a replace moves the inode, a write the mtime
    and the ctime (which no program can set back)."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def still_current(root: Path, item: Parsed, max_bytes: int) -> bool:
    """Whether the file ``item`` was parsed from still holds the bytes it was parsed from.

    A writer asks this under the index's write lock, in the transaction that writes the row:
    a watcher or run that read a file just before ``forget`` (or any writer) rewrote it would
    otherwise write the old row over the new one. Every writer of a row checks under one lock,
    so no row is written for content its file no longer holds, and the writer that changed the
    file (or the watcher that saw it) writes the row of what it holds now. ``stat()`` answers
    when the file was settled at the read and shows it untouched; otherwise the bytes are read
    and hashed again."""
    path = root / item.key
    try:
        info = path.lstat()
    except OSError:
        return False
    if item.trusted and item.seen and identity(info) == item.seen:
        return True
    try:
        data, _ = read_regular(path, max_bytes)
    except Unreadable:
        return False
    return content_digest(data) == item.content_hash


def write_current(
    root: Path,
    rows: Sequence[tuple[Parsed, FileRow]],
    max_bytes: int,
    write: Callable[[FileRow], None],
) -> list[Parsed]:
    """Write the rows of the files that still hold what they were parsed from (see
    :func:`still_current`) and return those files. The caller holds its backend's write lock
    around this call; the rows were made (chunked) before it, since that takes a while."""
    current = [(item, row) for item, row in rows if still_current(root, item, max_bytes)]
    for _, row in current:
        write(row)
    return [item for item, _ in current]


def still_gone(root: Path, gone: Sequence[str], vanished: set[str]) -> list[str]:
    """The rows to delete of ``gone`` (indexed files a run did not index now): each file its
    walk found and skipped, and each file its walk did not find (``vanished``) that is still
    not there. A writer asks this under the index's write lock, as :func:`still_current`: an
    editor that moves the old file away and writes a new one leaves the path empty for a
    moment, and a file back in place keeps its row (a watcher may have indexed it meanwhile;
    the next run compares it as any file)."""
    return [key for key in gone if key not in vanished or not back_in_place(root, key)]


def back_in_place(root: Path, key: str) -> bool:
    """Whether a regular file is at ``key`` as the walk reaches files: with no symlink on the
    way. A folder of the same name (a file replaced by a folder), a symlink or a socket is no
    memory back in place, and neither is a file behind a folder replaced by a link to one (a
    folder moved to another disk and linked back): the walk never follows the link, so such a
    row, kept, would stay for ever, found by searches and refused by ``read``."""
    info = reached(root, key)
    return isinstance(info, os.stat_result) and stat.S_ISREG(info.st_mode)


def reached(root: Path, key: str) -> os.stat_result | str | None:
    """What the walk finds at ``key`` under ``root``, part by part and never through a link: the
    file's own ``lstat``, None when nothing is there, or why the walk cannot reach it (a symlink
    on the way, an error). :func:`back_in_place` and :func:`path_problem` judge by it."""
    here = root
    info = None
    for part in PurePosixPath(key).parts:
        here = here / part
        try:
            info = here.lstat()
        except FileNotFoundError:
            return None
        except OSError as exc:
            return f"cannot stat: {exc.strerror}"
        if stat.S_ISLNK(info.st_mode):
            return "symlink (not followed)"
    return info


def batched(items: Iterable[Parsed], size: int) -> Iterator[list[Parsed]]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def scan(
    candidates: list[Candidate],
    max_bytes: int,
    known: dict[str, KnownFile],
    seen: set[str],
    report: IndexReport,
    touched: list[Touch],
    progress: Progress | None = None,
    preparsed: Preparsed | None = None,
) -> Iterator[Parsed]:
    """Yield the files that need writing; count unchanged ones and record skips as it goes.

    A file whose mtime moved but whose bytes did not goes to ``touched``: its row gets the new
    mtime (so the next run skips it on stat alone) without being parsed or re-embedded. A file
    whose bytes are those of a ``preparsed`` entry is not parsed again. A file changed too
    recently before its read to be trusted by size and mtime (:func:`settled`) is recorded so
    that the next scan hashes it (:func:`recorded_size`). A file deleted since it was listed
    (``rm -rf`` under a watcher) is neither seen nor skipped: it is gone, as if never listed."""
    for number, candidate in enumerate(candidates, 1):
        if progress and (number % 25 == 0 or number == len(candidates)):
            progress("scan", number, len(candidates))
        if candidate.skip:
            report.skipped.append((candidate.key, candidate.skip))
            continue
        try:
            info = candidate.info or candidate.path.lstat()
        except FileNotFoundError:
            continue
        if info.st_size > max_bytes:
            report.skipped.append((candidate.key, over_limit(info.st_size, max_bytes)))
            continue
        stored = known.get(candidate.key)
        if stored and stored.matches(info):
            seen.add(candidate.key)
            report.unchanged += 1
            continue
        read_at = wall_clock_ns()  # before the read: a later clock would trust too much
        try:
            data, info = read_regular(candidate.path, max_bytes)
        except Unreadable as exc:
            if os.path.lexists(candidate.path):
                report.skipped.append((candidate.key, exc.reason))
            continue
        trusted = settled(info.st_mtime_ns, read_at)
        digest = content_digest(data)
        if stored and stored.content_hash == digest:
            seen.add(candidate.key)
            report.unchanged += 1
            size = recorded_size(info.st_size, trusted)
            if (size, info.st_mtime_ns) != (stored.size, stored.mtime_ns):
                mtime = info.st_mtime_ns
                touched.append(Touch(size, mtime, utc_from_ns(mtime), candidate.key, digest))
            continue
        given = (preparsed or {}).get(candidate.key)
        try:
            memory = given[1] if given and given[0] == digest else parse_memory(candidate.key, data)
        except Skip as skip:
            report.skipped.append((candidate.key, skip.reason))
            continue
        seen.add(candidate.key)
        yield Parsed(
            candidate.key,
            memory,
            digest,
            info.st_size,
            info.st_mtime_ns,
            trusted,
            identity(info),
        )


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
        size=recorded_size(item.size, item.trusted),
        mtime_ns=item.mtime_ns,
        chunks=[
            (chunk, text_hash(embed_text(m.title, chunk)))
            for chunk in chunk_text(m.body) or [m.title]
        ],
    )


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


def changes_since(
    store: Store,
    indexed: dict[str, tuple[int, int]],
    skipped_json: str | None,
    not_walked: list[tuple[str, str]] | None = None,
) -> dict[str, int]:
    """:func:`pending_changes` from what the index holds, on either backend: path -> (size,
    mtime_ns) of every indexed file (the size as recorded: :func:`stat_size` reads it), and
    the last run's skipped files (its JSON)."""
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
        elif (stat_size(stored[0]), stored[1]) != (info.st_size, info.st_mtime_ns):
            modified += 1
    removed = len(set(indexed) - present)
    return {"added": added, "modified": modified, "removed": removed}


def memory_key(store: Store, path: str | os.PathLike[str]) -> str | None:
    """The store key of a path a watcher reported, or None when it cannot be a memory (outside
    the store, inside a hidden folder such as ``.memsift``, not a Markdown/HTML name, or below
    a folder the walk does not enter for being too deep)."""
    try:
        key = Path(path).relative_to(store.root).as_posix()
    except ValueError:
        return None
    if name_refusal(PurePosixPath(key).parts):
        return None
    return None if too_deep(key.rpartition("/")[0]) else key


def path_problem(store: Store, key: str) -> str | None:
    """Why the file at ``key`` cannot be indexed from its path alone: a symlink on the way
    (never followed), or not a regular file. None when it can (or when it does not exist)."""
    info = reached(store.root, key)
    if info is None or isinstance(info, str):
        return info
    return None if stat.S_ISREG(info.st_mode) else NOT_REGULAR


NOT_REGULAR = "not a regular file"


def wanted_keys(store: Store, keys: Iterable[str]) -> list[str]:
    """``keys`` that can name a memory of ``store``, sorted, without duplicates."""
    return sorted({k for k in keys if memory_key(store, store.root / k) == k})


def key_candidates(store: Store, wanted: list[str]) -> list[Candidate]:
    """What the scan should look at for ``wanted``: each key whose file exists (or is there
    but unusable, with the reason); a key whose file is gone is left out, so its row, if any,
    counts as removed."""
    candidates = []
    for key in wanted:
        full = store.root / key
        problem = path_problem(store, key)
        if problem is None and not os.path.lexists(full):
            continue
        if problem == NOT_REGULAR and is_real_folder(full):
            continue  # a folder named like a memory (notes.md/): walked into, never a file
        candidates.append(Candidate(key, full, problem))
    return candidates


def is_real_folder(path: Path) -> bool:
    """Whether ``path`` is a folder itself, not a link to one."""
    try:
        return stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False
