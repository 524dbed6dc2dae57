"""Champion lists: the full-text arm's pre-selection on a large team store.

The fts arm ranks by BM25 computed in SQL for every chunk it scores (:mod:`engine.arms`). On a
store of a million memories a common word is held by hundreds of thousands of chunks, and
scoring them all took seconds per search. A chunk can only reach the top of a ranking through
the words it shares with the query, and a word's part of a chunk's BM25 depends on nothing but
how often the chunk holds it and how long the chunk is (the word's rarity is the same for every
chunk). So for every word held by more than :data:`COMMON` chunks the index keeps that word's
:data:`DEPTH` best chunks by its part of the score, best first (``fts_champions``); a search
scores exactly, with the same BM25 as before, only the union of

- the lists of its common words,
- every chunk holding one of its other words (rare by definition, or limited to a column),
- every chunk written after the lists were made (id above ``meta.fts_champions_through``),
- when the query requires all its words, the first 2,000 chunks holding them all (the index
  intersects the words' postings itself, so a few common words that rarely meet cost little;
  without this, a chunk holding all of them, each weakly, was the pre-selection's usual miss),

and keeps the exact scan of every matching chunk when the lists are missing (a store never
built, or one upgraded from layout 3 until its next full run) or when the pre-selection finds
fewer files in scope than the search asks for (a narrow scope, a rare combination of words).

Why it stays correct under writes: every chunk is written under the index's row lock
(:func:`engine.pg.indexdb.lock_rows`) and gets a new, higher id (a file written again gets new
chunks), so taking that lock and reading the highest id gives a mark below which every chunk
is committed; anything written later is above it and scanned exactly. A forgotten memory's
chunks are deleted, so the lists' ids of them join nothing and they can never be returned.
What drifts as a store changes is only which chunks are on the lists, never a score: a list
made when a word was rarer, or before some of its best chunks were forgotten, can miss a chunk
the exact scan would rank; and every chunk written since the lists costs each search a little.
The lists are made anew once the chunks written since pass :data:`TAIL_CHUNKS` or
:data:`STALE_SHARE` of the store, or the store's count of chunks moved by that share
(:func:`stale`, the one rule): at the end of a full index run, and after any other write
(``remember``, ``forget``, a watcher's batch: :func:`refresh_behind`, called where those share
their path, :func:`engine.pg.incremental.index_keys`). A store that has no list and no more than
:data:`COMMON` chunks has no word to list, so its writes make none (until the words of its
deleted chunks kept in ``fts_gone`` pass that count, which only a build clears).

After a write the lists are made on a thread of their own (minutes at a million memories), so
the write, and the agent waiting for its answer, does not wait: the build reads one snapshot
and swaps the lists in one transaction, which blocks no search (they read the old lists until
it commits). One build per store at a time, across processes (an advisory lock; a write that
finds one under way leaves it be). A process that exits mid-build (``memsift remember`` from a
shell) cancels it; the next write that finds the lists due starts again.
"""

from __future__ import annotations

import atexit
import contextlib
import threading

from engine.indexing.pipeline import Progress
from engine.pg.driver import PgConnection, PgError, connect, guarded
from engine.pg.indexdb import lock_rows, read_meta, write_meta
from engine.pg.target import DatabaseTarget

#: What other packages (the benchmarks) may rely on; the rest is internal.
__all__ = [
    "COMMON",
    "DEPTH",
    "build_champions",
    "description",
    "refresh_behind",
    "refresh_champions",
    "settle",
]

#: A word held by more chunks than this gets a champion list (the others are scanned whole,
#: which costs at most about this many chunks per word).
COMMON = 2000
#: How many of a common word's best chunks its list keeps.
DEPTH = 1000
#: Rebuild the lists at the end of a full run once this share of the store's chunks was
#: written since they were made, or the count of chunks moved by this share (forgotten ones)...
STALE_SHARE = 0.1
#: ... or once more chunks than this were written since: a search scores every chunk written
#: since the lists, about 30 microseconds each on two cores (measured at 200,000 memories:
#: 6,000 such chunks added 0.12-0.27 s to a search, 15,000 added 0.45-0.67 s).
TAIL_CHUNKS = 5000
#: Width of the score buckets of the first pass: the per-word cut-off is found on a histogram
#: of each word's scores in buckets this wide, then exact ranks are taken above it.
BUCKETS = 4096

#: meta keys: the mark (highest chunk id the lists were made from; absent: no lists, exact
#: scans), the chunks the store held then, and the rule (COMMON/DEPTH) they were made by.
THROUGH_KEY = "fts_champions_through"
CHUNKS_KEY = "fts_champions_chunks"
RULE_KEY = "fts_champions_rule"
WORDS_KEY = "fts_champions_words"

#: A posting's part of a chunk's BM25 without the word's rarity (the same for every chunk
#: holding it): the arm's frequency (title 4, tags 2, body 1) and length normalisation, k1 =
#: 1.2, b = 0.75, so ordering by it orders by the word's contribution to the score.
POSTINGS = """
SELECT u.lexeme AS lexeme, c.id AS id,
       p.freq / (p.freq + 1.2 * (0.25 + 0.75 * c.length / t.avgdl)) AS part
FROM chunks AS c
CROSS JOIN (SELECT CAST(greatest(tokens, 1) AS float8) / greatest(chunks, 1) AS avgdl
            FROM fts_totals) AS t
CROSS JOIN LATERAL unnest(c.terms) AS u
CROSS JOIN LATERAL (
    SELECT CAST(cardinality(u.weights) + 3 * cardinality(array_positions(u.weights, 'A'))
                + cardinality(array_positions(u.weights, 'B')) AS float8) AS freq
) AS p
WHERE c.id <= %(through)s
"""

#: Pass one: for each common word, the lowest score bucket its DEPTH best postings reach.
CUTOFFS = f"""
CREATE TEMPORARY TABLE champion_cutoffs ON COMMIT DROP AS
SELECT lexeme, min(bucket) AS bucket, min(held) AS held
FROM (
    SELECT lexeme, bucket,
           sum(hits) OVER (PARTITION BY lexeme ORDER BY bucket DESC) - hits AS above,
           sum(hits) OVER (PARTITION BY lexeme) AS held
    FROM (
        SELECT lexeme, floor(part * {BUCKETS}) AS bucket, count(*) AS hits
        FROM ({POSTINGS}) AS postings
        GROUP BY lexeme, floor(part * {BUCKETS})
    ) AS histogram
) AS running
WHERE held > %(common)s AND above < %(depth)s
GROUP BY lexeme
"""

#: Pass two: each common word's postings at or above its cut-off, the best DEPTH in order.
LISTS = f"""
INSERT INTO fts_champions(lexeme, hits, chunks)
SELECT lexeme, min(held), array_agg(id ORDER BY part DESC, id)
FROM (
    SELECT p.lexeme AS lexeme, p.id AS id, p.part AS part, k.held AS held,
           row_number() OVER (PARTITION BY p.lexeme ORDER BY p.part DESC, p.id) AS place
    FROM ({POSTINGS}) AS p
    JOIN champion_cutoffs AS k ON k.lexeme = p.lexeme
    WHERE floor(p.part * {BUCKETS}) >= k.bucket
) AS best
WHERE place <= %(depth)s
GROUP BY lexeme
"""


def rule() -> str:
    return f"common>{COMMON} depth={DEPTH}"


def mark(conn: PgConnection) -> int:
    """The highest chunk id every chunk at or below which is committed: read under the row lock
    every writer of chunks holds, in a transaction of its own (so the lock is held only for
    this read, not for the build)."""
    with conn:
        lock_rows(conn)
        (top,) = conn.run("SELECT coalesce(max(id), 0) FROM chunks").fetchone()
    return int(top)


def build_champions(conn: PgConnection, progress: Progress | None = None) -> int:
    """Make the champion lists anew from the chunks written so far; return how many words got
    one. The lists and their mark replace the old ones in one transaction, so a search sees
    either the old lists with the old mark or the new ones with the new mark. ``progress``
    hears ``("champions", passes done, 2)`` before the first pass over the postings and after
    each (minutes each at a million memories: the only sign of life an index run gives then)."""
    through = mark(conn)
    params = {"through": through, "common": COMMON, "depth": DEPTH}
    say = progress or (lambda _phase, _done, _total: None)
    with conn:
        # One snapshot for every statement: the counts and lists are of the chunks it holds,
        # and the deleted chunks it clears from fts_gone are exactly those it no longer holds
        # (a chunk deleted after it began stays there, so a search still subtracts it).
        conn.run("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        say("champions", 0, 2)
        conn.run(CUTOFFS, params)
        say("champions", 1, 2)
        conn.run("DELETE FROM fts_champions")
        conn.run(LISTS, params)
        conn.run("DELETE FROM fts_gone")
        (words,) = conn.run("SELECT count(*) FROM fts_champions").fetchone()
        (chunks,) = conn.run("SELECT count(*) FROM chunks WHERE id <= %s", (through,)).fetchone()
        write_meta(conn, THROUGH_KEY, through)
        write_meta(conn, CHUNKS_KEY, chunks)
        write_meta(conn, RULE_KEY, rule())
        write_meta(conn, WORDS_KEY, words)
    conn.run("ANALYZE fts_champions")
    say("champions", 2, 2)
    return int(words)


def description(conn: PgConnection) -> str:
    """How the fts arm chooses what it scores on this store, for status and search: "exact"
    until an index run made lists for a word or more (the arm's guard reads the mark)."""
    meta = dict(
        conn.run(
            "SELECT key, value FROM meta WHERE key IN (%s, %s, %s)",
            (THROUGH_KEY, WORDS_KEY, RULE_KEY),
        ).fetchall()
    )
    words = int(meta.get(WORDS_KEY) or 0)
    if THROUGH_KEY not in meta or not words:
        return "exact"
    common, _, depth = (meta.get(RULE_KEY) or "").partition(" ")
    held = common.removeprefix("common>")
    kept = depth.removeprefix("depth=")
    return (
        f"pre-selected (champion lists: the best {kept} chunks of each of {words:,} words held "
        f"by more than {held} chunks; a memory on none of its common words' lists can be missed)"
    )


def stale(conn: PgConnection) -> bool:
    """Whether the lists are due: missing, made by another rule, or behind the store by more
    than :data:`STALE_SHARE` of its chunks (written since, or a count moved by forgetting), or
    by more than :data:`TAIL_CHUNKS` written since. A store with no list and no more than
    :data:`COMMON` chunks has none to make: due only once ``fts_gone`` holds more than that
    many deleted chunks (a build empties it)."""
    through, then = read_meta(conn, THROUGH_KEY), read_meta(conn, CHUNKS_KEY)
    (now,) = conn.run("SELECT chunks FROM fts_totals").fetchone()
    if int(now) <= COMMON and (through is None or not int(read_meta(conn, WORDS_KEY) or 0)):
        return bounded_count(conn, "SELECT 1 FROM fts_gone", (), COMMON) > COMMON
    if through is None or then is None or read_meta(conn, RULE_KEY) != rule():
        return True
    allowed = STALE_SHARE * max(int(now), 1)
    if abs(int(now) - int(then)) > allowed:
        return True
    most = int(min(allowed, TAIL_CHUNKS))
    newer = bounded_count(conn, "SELECT 1 FROM chunks WHERE id > %s", (int(through),), most)
    return newer > most


def bounded_count(conn: PgConnection, rows: str, params: tuple[object, ...], most: int) -> int:
    """How many rows ``rows`` selects, counting no further than ``most`` + 1 (every write asks:
    a long tail costs no more than the answer needs)."""
    (count,) = conn.run(
        f"SELECT count(*) FROM ({rows} LIMIT %s) AS counted", (*params, most + 1)
    ).fetchone()
    return int(count)


def lock_key(schema: str) -> str:
    """The advisory lock one build of a store's lists holds (keyed by its schema)."""
    return f"memsift champions {schema}"


def refresh_champions(
    conn: PgConnection, *, wait: bool = True, progress: Progress | None = None
) -> int | None:
    """Make the lists anew when :func:`stale`; how many words got one, or None when they were
    fresh enough and kept. Under the store's build lock: ``wait`` for a build under way (a full
    run's end, which then finds the lists fresh), or else leave it be and return None."""
    key = lock_key(conn.target.schema)
    if wait:
        conn.run("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (key,))
    else:
        (got,) = conn.run(
            "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (key,)
        ).fetchone()
        if not got:
            return None
    try:
        with conn:
            due = stale(conn)
        return build_champions(conn, progress) if due else None
    finally:
        conn.run("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (key,))


#: The builds this process runs behind writes, by store (url, schema), and their connections
#: (cancelled when the process exits).
_behind: dict[tuple[str, str], threading.Thread] = {}
_building: set[PgConnection] = set()
_behind_lock = threading.Lock()


def refresh_behind(conn: PgConnection) -> threading.Thread | None:
    """After a write outside a full run: when the lists are due (:func:`stale`, read on the
    writer's connection, a few small reads), make them on a thread of their own and return it;
    None when they are not due. A build of the same store already running in this process is
    returned instead of a second one."""
    with conn:
        due = stale(conn)
    if not due:
        return None
    target = conn.target
    key = (target.url, target.schema)
    with _behind_lock:
        running = _behind.get(key)
        if running is not None and running.is_alive():
            return running
        thread = threading.Thread(
            target=rebuild, args=(target,), name="memsift-champions", daemon=True
        )
        _behind[key] = thread
        thread.start()
    return thread


def rebuild(target: DatabaseTarget) -> None:
    """The thread's work: the lists made anew if still due once the build lock is held. A
    failure is dropped: the store stays correct (its newer chunks are scanned exactly, only
    slower), and the next write or full run that finds the lists due tries again."""
    try:
        conn = connect(target, vectors=False)
    except PgError:
        return
    with _behind_lock:
        _building.add(conn)
    try:
        with guarded(target):
            refresh_champions(conn, wait=False)
    except PgError:
        pass
    finally:
        with _behind_lock:
            _building.discard(conn)
        conn.close()


def settle(timeout: float | None = None) -> bool:
    """Wait for this process's builds behind writes to end; whether they all did in time."""
    with _behind_lock:
        threads = list(_behind.values())
    for thread in threads:
        thread.join(timeout)
    return not any(thread.is_alive() for thread in threads)


@atexit.register
def cancel_builds() -> None:
    """A process leaving mid-build cancels it on the server, which would otherwise run the
    statement under way to its end for nobody (its advisory lock is then released)."""
    with _behind_lock:
        connections = list(_building)
    for conn in connections:
        with contextlib.suppress(Exception):  # exiting: a server already gone needs no cancel
            conn.raw.cancel()
