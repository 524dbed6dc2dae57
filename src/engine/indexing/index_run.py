"""The one indexing loop: a full run and the key-by-key scan, over an :class:`IndexWriter`.

Both backends index a store through these functions, so what a run decides (which files are
read, which rows are written, touched or removed, which state rows follow their content, which
chunks are embedded, in what batches, with what progress) is decided once. A backend supplies
only where the rows go and how its transactions and locks are taken (:mod:`engine.sqlite.indexer`,
:mod:`engine.pg.indexer`).

A full run has three passes, each committed in small transactions so a killed run leaves a
consistent index that the next run completes:

1. scan: walk the store; a file whose size and mtime match the index is not even read (unless
   it had changed too recently before the read that indexed it for those to be trusted), one
   whose content hash matches is unchanged, anything else is parsed and written with its chunks
   (unless it changed again since it was read: another writer then owns its row); files gone
   from the store are removed (their chunks go with them);
2. embed: every chunk without a vector for the configured model gets one. Vectors are keyed by
   the hash of the embedded text, so an unchanged chunk is never embedded twice, a renamed file
   costs nothing, and switching models re-embeds without ever mixing two models' vectors;
3. tidy: vectors no chunk uses are dropped, the coverage figures are recorded, and the store's
   no-answer floor is measured again when the store changed materially (:mod:`engine.floor`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from engine.files.store import Candidate, Store, walk
from engine.floor import WritableFloorPlace
from engine.floor import refresh as refresh_floor
from engine.indexing.embedder import Embedder, to_blob
from engine.indexing.pipeline import (
    EMBED_BATCH,
    WRITE_BATCH,
    IndexReport,
    KnownFile,
    Parsed,
    Preparsed,
    Progress,
    Touch,
    batched,
    embed_text,
    key_candidates,
    scan,
    skipped_fingerprint,
)

#: (content hash, title, text) of a chunk still without a vector.
Pending = tuple[str, str, str]


class IndexWriter(Protocol):
    """Where a run's rows go: one open connection to a backend's index, inside its run lock."""

    def begin(self) -> bool:
        """Mark the index incomplete until :meth:`finish` (a killed run is recognised); return
        whether the last run had finished (False: this one resumes an interrupted run)."""

    def known_files(self, keys: list[str] | None = None) -> dict[str, KnownFile]:
        """What the index holds of ``keys`` (None: every file)."""

    def refuse_foreign(self, candidates: Sequence[Candidate], known: dict[str, KnownFile]) -> None:
        """Raise when the index belongs to another store (a shared team schema)."""

    def write_files(self, batch: list[Parsed]) -> list[Parsed]:
        """Upsert a batch of files and replace their chunks, in one transaction that holds the
        index's write lock; return those written. A file that no longer holds the bytes it was
        parsed from (:func:`engine.indexing.pipeline.still_current`, asked under that lock) is
        left out: its row stays as the writer that changed the file leaves it."""

    def touch_files(self, touched: list[Touch]) -> None:
        """Record new size/mtime fingerprints of files whose content did not change (of rows
        that still hold that content)."""

    def delete_files(self, gone: list[str], vanished: set[str]) -> list[str]:
        """Remove files (and their chunks) no longer in the store, in one transaction that
        holds the index's write lock; return those removed. Of ``vanished`` (files the walk
        did not find), a file back in place is left out
        (:func:`engine.indexing.pipeline.still_gone`, asked under that lock)."""

    def follow_content(
        self, keys: set[str], gone: dict[str, str], written: dict[str, str]
    ) -> list[tuple[str, str]]:
        """Move state rows after their content (see :mod:`engine.state_rules`); ``keys`` are
        the paths the walk found, which count as present even when skipped."""

    def prepare_vectors(self, embedder: Embedder) -> None:
        """Drop other models' vectors and those the embedding budget no longer covers, and
        record ``embedder``'s model and the budget, before the first vector."""

    def chunks_without_vectors(self) -> list[Pending]:
        """Every chunk text within its file's embedding budget that the index has no vector of
        the recorded model for."""

    def coverage(self, embedder: Embedder) -> tuple[int, int]:
        """(chunks within the embedding budget, those with a vector of ``embedder``)."""

    def add_vectors(self, embedder: Embedder, rows: list[tuple[str, bytes]]) -> None:
        """Store (content hash, vector) rows in one transaction."""

    def finish(self, embedder: Embedder | None, skipped: dict[str, list[int]]) -> None:
        """Tidy: drop unused vectors, record coverage and the skipped files, mark complete."""

    def floor_place(self) -> WritableFloorPlace:
        """Where the store floor's record is kept (:mod:`engine.floor`)."""


def vector_rows(embedder: Embedder, batch: Iterable[Pending]) -> list[tuple[str, bytes]]:
    """Embed chunks as every writer keys them (title and text together, so a chunk's vector
    never depends on which run or backend made it) as (content hash, float32 blob) rows."""
    pending = list(batch)
    vectors = embedder.embed([embed_text(title, text) for _, title, text in pending])
    return [(digest, to_blob(v)) for (digest, _, _), v in zip(pending, vectors, strict=True)]


def full_run(
    writer: IndexWriter,
    store: Store,
    max_file_bytes: int,
    embedder: Embedder | None,
    progress: Progress | None,
    report: IndexReport,
) -> IndexReport:
    """Bring the whole index in step with the store (the three passes above)."""
    finished_before = writer.begin()
    known = writer.known_files()
    candidates = list(walk(store))
    writer.refuse_foreign(candidates, known)
    seen: set[str] = set()
    touched: list[Touch] = []
    changed = scan(candidates, max_file_bytes, known, seen, report, touched, progress)
    for batch in batched(changed, WRITE_BATCH):
        report.took(writer.write_files(batch))
    if touched:
        writer.touch_files(touched)
    gone = sorted(set(known) - seen)
    if gone:
        gone = writer.delete_files(gone, set(known) - {c.key for c in candidates})
        report.removed = gone
    # Every path still in the store counts, a skipped one too: a memory that is briefly
    # unparsable has not moved, so its row must not follow a copy of its content.
    report.renamed = writer.follow_content(
        {c.key for c in candidates},
        {path: known[path].content_hash for path in gone},
        report.written,
    )
    if embedder is not None:
        embedded = embed_missing(writer, embedder, progress, resuming=not finished_before)
        report.embedded = len(embedded)
        report.count_reuse(embedded, store.config().embed_chunks_per_file)
    writer.finish(embedder, skipped_fingerprint(store, report.skipped))
    refresh_floor(writer.floor_place(), embedder, report.embedded)
    return report


def embed_missing(
    writer: IndexWriter, embedder: Embedder, progress: Progress | None, resuming: bool = False
) -> set[str]:
    """Embed every chunk without a vector of ``embedder``, EMBED_BATCH per transaction; return
    the hashes of the texts embedded. A run ``resuming`` an interrupted one first reports how
    many chunks that run left with vectors (progress phase "resume": done, of the total)."""
    writer.prepare_vectors(embedder)
    missing = writer.chunks_without_vectors()
    if resuming and missing and progress:
        chunks, embedded = writer.coverage(embedder)
        if embedded:
            progress("resume", embedded, chunks)
    done: set[str] = set()
    for start in range(0, len(missing), EMBED_BATCH):
        batch = missing[start : start + EMBED_BATCH]
        writer.add_vectors(embedder, vector_rows(embedder, batch))
        done.update(digest for digest, _, _ in batch)
        if progress:
            progress("embed", len(done), len(missing))
    return done


def scan_keys(
    writer: IndexWriter,
    store: Store,
    wanted: list[str],
    report: IndexReport,
    preparsed: Preparsed | None,
) -> tuple[dict[str, KnownFile], list[Touch], list[str], set[str]]:
    """The first pass of a run for exactly ``wanted`` (an incremental run): changed files are
    written; returns what the index held of them, the files only touched, the keys gone (held
    by the index, not indexed now) and those of them this scan did not find on disk: a writer
    deletes those only if still missing under its lock (:func:`still_gone`)."""
    known = writer.known_files(wanted)
    seen: set[str] = set()
    touched: list[Touch] = []
    candidates = key_candidates(store, wanted)
    max_bytes = store.config().max_file_bytes
    changed = scan(candidates, max_bytes, known, seen, report, touched, None, preparsed)
    for batch in batched(changed, WRITE_BATCH):
        report.took(writer.write_files(batch))
    gone = sorted(set(known) - seen)
    # Not found on disk: not listed, or listed and deleted before the scan read it.
    skipped = {key for key, _ in report.skipped}
    return known, touched, gone, set(gone) - skipped
