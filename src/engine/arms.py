"""The ranking arms of a memsift search, as data.

Each arm is one way of ranking the memories in scope: by the words they share with the query,
by meaning, by when they happened, by how much they have been used. A search runs every arm
whose inputs are present and fuses their rankings by weighted reciprocal rank fusion: a memory
at rank ``r`` in an arm earns ``weight / (k + r)`` from it (``k`` is ``RRF_K`` in
:mod:`engine.ranking.assemble`), and the sums decide the order.

Arms are records in a table rather than branches in code for three reasons. The SQL assembler
folds over this table, so adding a fifth arm is one new entry and no other file changes. The
preconditions are declared, not buried in ``if`` statements, so an arm whose input is missing
(no query vector, no state plane, no query words) is dropped before any SQL is built and the
search can say which arm it dropped and why. And the documentation reads this very table at
build time, statically, so the reference page cannot drift from the SQL that runs.

Arms that read the query (they need query terms or a query vector) find candidates; arms
that do not are priors, and rank only those candidates, through the ``candidates`` CTE the
assembler provides (every memory in scope when no query arm runs). A prior can reorder what
the query found; it can never bring in a memory the query did not ask for. A prior may still
read something of the query that cannot find memories by itself, such as a date it names.
A prior may also read the CTE ``listing``: it holds one row when that prior ranks alone with
no query arm (a listing), and then only the prior's first ``?2`` rows in its order (ties by
path) are needed; the assembler checks that they were enough and otherwise asks for all
(:func:`engine.ranking.assemble.listed`).

Order matters once: when two memories fuse to the same score, the one the first arm of this
table ranks higher comes first. Two arms that disagree about a pair (fts puts a memory first
and its near-twin second, the vector arm the reverse) produce exactly such a tie, and the
exact word is the harder evidence, so fts leads the table.

Rules for an entry: literal values only (the docs plugin reads them without running this
module); ``needs`` names inputs of :data:`engine.ranking.contract.INPUTS`; ``sql`` is a SELECT
yielding ``(id, rank)``, ``id`` the memory's row id in ``files``, with rank 1 the best, filtered
by the shared ``{scope}`` over the alias ``f`` (the ``files`` table); an arm that finds candidates
cuts them at ``?2``, a prior ranks all of them (there are at most a few times ``?2``; a prior
reads them as ``f.id IN (SELECT id FROM candidates)``). Besides ``?2`` it may use only the
placeholders of the inputs it needs (:data:`engine.ranking.contract.PARAMS`). ``pg_sql`` is the
same ranking in PostgreSQL for team stores, under the same rules except that its rows name a
memory by ``path`` (``(path, rank)``, and ``candidates`` holds paths) and the state plane is the
table ``state_access`` of the store's schema. The key of each dialect is
:attr:`engine.ranking.contract.Dialect.key`. :func:`engine.ranking.arm_rules.validate` checks all of
this, for the assembler and for the docs build alike.
"""

from __future__ import annotations

from dataclasses import dataclass

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "ARMS",
    "AUTHORITY",
    "Arm",
    "Authority",
]


@dataclass(frozen=True)
class Arm:
    """One ranking arm: how much it counts, what it needs, how it ranks (in each dialect)."""

    name: str
    #: What a user is told the arm is called, in plain words ("full-text ranking"): the
    #: search's account on stderr names a ranking that could not run by this.
    label: str
    weight: float
    #: Inputs (engine.ranking.contract.INPUTS) without which the arm drops out of a search.
    needs: tuple[str, ...]
    prose: str
    sql: str
    #: The same ranking in PostgreSQL (team stores): same placeholders, same ``{scope}``, rows
    #: ``(path, rank)``; empty for an arm that has no PostgreSQL form yet.
    pg_sql: str = ""


@dataclass(frozen=True)
class Authority:
    """A tag a memory can carry about itself that scales its fused score: a raise (a factor
    above 1; raises multiply, bounded by :data:`engine.ranking.authority.CEILING`) or a cap (the
    multiplier is at most the factor, whatever raises it). The rule lives in
    :mod:`engine.ranking.authority`; the entries below are data, like the arms."""

    name: str
    label: str
    #: The front-matter tags that carry the signal, lower-case (tags are indexed lower-case).
    tags: tuple[str, ...]
    #: "raise" or "cap".
    effect: str
    factor: float
    prose: str


ARMS: tuple[Arm, ...] = (
    Arm(
        name="fts",
        label="full-text ranking",
        weight=1.0,
        needs=("query_terms",),
        prose="""
The lexical arm finds memories that contain the query's words, through the FTS5 index over
each chunk of a memory with its title and tags (Porter stemming, so "rotates" finds
"rotation"; diacritics folded). It ranks them by BM25, which rewards a rare word more than a
common one and a match in a short passage more than the same match diluted in a long one.
Like the vector arm, it lets a memory's best chunk speak for it: a huge file (a changelog
that mentions everything) is judged by its closest passage, not by its length, so it no
longer crowds every result list. FTS5 reports BM25 as a negative number, more negative
meaning more relevant, so the candidates are taken in ascending order of that score; a title
match counts four times a body match.

Like the vector arm, it first takes the best matches only (here the best-scoring chunks, four
per candidate wanted, through FTS5's own ordering by rank) and groups those by file. That is
exact whenever enough files in scope have a chunk strictly better than the last chunk taken,
or when every match was taken; otherwise the same statement groups every matching chunk in
scope. On 50,000 notes, where a common word matches a quarter of all chunks, this halves the
arm's time.

This is the arm that keeps exact facts exact: a port number, a person's name, an error code.
The query never reaches FTS5 as typed. It is reduced to words, common stop words are left
out ("how do I" is not what a question asks about), and the search first asks whether any
memory in scope holds all the remaining words; if one does, all are required, otherwise any
will do.

On PostgreSQL the arm computes the same BM25 in SQL (k1 = 1.2, b = 0.75, FTS5's constants):
each chunk's `tsvector`, made by PostgreSQL's English stemmer from the words FTS5 would index
(the text is cut into words by the same rule first, so "2.4" is "2" and "4" on both backends,
where PostgreSQL's parser alone keeps it whole), holds every word with the column it came from
(a title match counts four, a tag two, a body word one); the chunk keeps its length in words,
and the store its count of chunks and of words, so a word's rarity
and a chunk's length weigh as they do in FTS5. A quoted phrase must still occur as a phrase,
but its words score one by one (FTS5 scores the phrase as one term). A word limited to a part
of the memory (`title:`, `tags:`, `body:`) asks for that part's label (`'release':A`), so it
matches and counts only there, as an FTS5 column filter does.

Scoring every chunk that holds a common word took seconds on a store of a million memories,
so a PostgreSQL store pre-selects what it scores. For each word held by more than 2,000
chunks, an index run keeps the word's 1,000 best chunks by its part of the score (its champion
list, see engine/pg/champions.py). A search then scores, with the same BM25, only the lists of
its common words, every chunk of its other words, every chunk written since the lists were
made and, when every word is required, the first 2,000 chunks holding them all; it scores
every match as before when the store has no lists yet or when the pre-selection holds fewer
memories in scope than the arm wants. A memory can only be missed when none of its chunks is
on the list of any common query word while it still outscores the ones found (a query of
several common words that no chunk holds together, each weak alone). On the synthetic store
of 100,000 memories it keeps 99.65 % of the full scan's 100 best memories (93 % for the worst
query) and all of its 10 best, at a twelfth of the full scan's 95th percentile; on SciFact,
where 766 of 809 queries hold a listed word, every query's 100 best are the full scan's. The
word counts that make a word rare follow every chunk written or deleted since the lists, so
a score is the full scan's score.
""",
        sql="""
WITH best AS MATERIALIZED (
    SELECT rowid AS chunk_id, rank AS score
    FROM chunks_fts
    WHERE chunks_fts MATCH ?1 AND chunks_fts.rank MATCH 'bm25(4.0, 1.0, 2.0)'
    ORDER BY rank
    LIMIT 4 * ?2
),
near AS MATERIALIZED (
    SELECT f.id AS id, f.path AS path, min(best.score) AS score
    FROM best
    CROSS JOIN chunks AS c ON c.id = best.chunk_id
    CROSS JOIN files AS f ON f.id = c.file_id
    WHERE {scope}
    GROUP BY f.id
),
exact AS (
    SELECT (SELECT count(*) FROM best) < 4 * ?2
           OR count(*) >= ?2 AS ok
    FROM near
    WHERE score < (SELECT max(score) FROM best)
)
SELECT id, row_number() OVER (ORDER BY score, path) AS rank
FROM (
    SELECT id, path, score FROM near WHERE (SELECT ok FROM exact)
    UNION ALL
    SELECT f.id AS id, f.path AS path, min(chunks_fts.rank) AS score
    FROM chunks_fts
    CROSS JOIN chunks AS c ON c.id = chunks_fts.rowid
    CROSS JOIN files AS f ON f.id = c.file_id
    WHERE chunks_fts MATCH ?1 AND chunks_fts.rank MATCH 'bm25(4.0, 1.0, 2.0)'
      AND {scope} AND NOT (SELECT ok FROM exact)
    GROUP BY f.id
    ORDER BY score, path
    LIMIT ?2
)
""",
        pg_sql="""
WITH query AS MATERIALIZED (
    SELECT to_tsquery('memsift', CAST(?1 AS text)) AS match
),
words AS MATERIALIZED (
    SELECT DISTINCT replace(w[1], '''''', '''') AS lexeme, coalesce(w[4], '') AS labels
    FROM query AS q
    CROSS JOIN regexp_matches(CAST(q.match AS text), '''(([^'']|'''')*)''(:([A-D]+))?', 'g')
         AS w
),
asked AS MATERIALIZED (
    SELECT coalesce(array_agg(DISTINCT lexeme), '{}') AS lexemes FROM words
),
totals AS MATERIALIZED (
    SELECT greatest(chunks, 1) AS n,
           CAST(greatest(tokens, 1) AS float8) / greatest(chunks, 1) AS avgdl
    FROM fts_totals
),
lists AS MATERIALIZED (
    SELECT CAST(m.value AS bigint) AS through
    FROM meta AS m
    WHERE m.key = 'fts_champions_through'
),
idf AS MATERIALIZED (
    SELECT w.lexeme AS lexeme, w.labels AS labels, s.word AS word, ch.chunks AS champions,
           greatest(ln((t.n - h.hits + 0.5) / (h.hits + 0.5)), 1e-6) AS idf
    FROM words AS w
    CROSS JOIN totals AS t
    CROSS JOIN LATERAL (
        SELECT CAST('''' || replace(replace(w.lexeme, chr(92), chr(92) || chr(92)),
                                    '''', '''''') || ''''
                    || CASE w.labels WHEN '' THEN '' ELSE ':' || w.labels END
                    AS tsquery) AS word
    ) AS s
    LEFT JOIN fts_champions AS ch
           ON ch.lexeme = w.lexeme AND w.labels = '' AND EXISTS (SELECT 1 FROM lists)
    CROSS JOIN LATERAL (
        SELECT CAST(CASE WHEN ch.lexeme IS NULL
                         THEN (SELECT count(*) FROM chunks AS c WHERE c.terms @@ s.word)
                         ELSE least(ch.hits
                                    - (SELECT count(*)
                                       FROM fts_gone AS g
                                       WHERE g.terms @@ s.word
                                         AND g.id <= (SELECT through FROM lists))
                                    + (SELECT count(*)
                                       FROM chunks AS c
                                       WHERE c.id > (SELECT through FROM lists)
                                         AND c.id < 9223372036854775807
                                         AND ts_match_vq(c.terms, s.word)),
                                    t.n)
                    END AS float8) AS hits
    ) AS h
),
picked AS MATERIALIZED (
    SELECT DISTINCT p.id AS id
    FROM (
        SELECT unnest(i.champions) AS id FROM idf AS i WHERE i.champions IS NOT NULL
        UNION ALL
        SELECT c.id AS id
        FROM idf AS i
        JOIN chunks AS c ON c.terms @@ i.word
        WHERE i.champions IS NULL
        UNION ALL
        SELECT c.id AS id
        FROM chunks AS c
        WHERE c.id > (SELECT through FROM lists) AND c.id < 9223372036854775807
        UNION ALL
        (SELECT c.id AS id
         FROM chunks AS c
         CROSS JOIN query AS q
         CROSS JOIN asked AS a
         WHERE c.terms @@ q.match AND cardinality(a.lexemes) > 1
           AND strpos(CAST(q.match AS text), '|') = 0
         LIMIT 2000)
    ) AS p
    WHERE EXISTS (SELECT 1 FROM lists)
),
matched AS MATERIALIZED (
    SELECT c.terms AS terms, c.length AS length, f.id AS file_id, f.path AS path
    FROM picked AS p
    JOIN chunks AS c ON c.id = p.id
    JOIN files AS f ON f.id = c.file_id
    CROSS JOIN query AS q
    WHERE ts_match_vq(c.terms, q.match) AND {scope}
),
enough AS MATERIALIZED (
    SELECT count(DISTINCT file_id) >= ?2 AS ok FROM matched
),
scored AS MATERIALIZED (
    SELECT c.file_id AS file_id, c.path AS path,
           (SELECT sum(i.idf * tf.freq * 2.2
                       / (tf.freq + 1.2 * (0.25 + 0.75 * c.length / t.avgdl)))
            FROM unnest(ts_delete(c.terms, tsvector_to_array(ts_delete(c.terms, a.lexemes))))
                 AS u
            JOIN idf AS i ON i.lexeme = u.lexeme
            CROSS JOIN LATERAL (
                SELECT coalesce(sum(CASE l WHEN 'A' THEN 4.0 WHEN 'B' THEN 2.0 ELSE 1.0 END), 0)
                       AS freq
                FROM unnest(u.weights) AS l
                WHERE i.labels = '' OR strpos(i.labels, l) > 0
            ) AS tf) AS score
    FROM (
        SELECT m.terms AS terms, m.length AS length, m.file_id AS file_id, m.path AS path
        FROM matched AS m
        WHERE (SELECT ok FROM enough)
        UNION ALL
        SELECT c.terms AS terms, c.length AS length, f.id AS file_id, f.path AS path
        FROM chunks AS c
        CROSS JOIN query AS q
        JOIN files AS f ON f.id = c.file_id
        WHERE c.terms @@ q.match AND {scope} AND NOT (SELECT ok FROM enough)
    ) AS c
    CROSS JOIN asked AS a
    CROSS JOIN totals AS t
)
SELECT path, row_number() OVER (ORDER BY score DESC, path) AS rank
FROM (
    SELECT path, max(score) AS score
    FROM scored
    GROUP BY file_id, path
    ORDER BY score DESC, path
    LIMIT ?2
) AS best
""",
    ),
    Arm(
        name="vector",
        label="semantic ranking",
        weight=1.0,
        needs=("query_vector",),
        prose="""
The semantic arm finds memories that mean what the query means even when they share no
word with it ("the deploy broke" finds "release rolled back after errors"). Memories are
compared with the query's embedding by exact cosine distance. A long memory is split into
several chunks; only its best chunk speaks for it, so a file is ranked once, by its closest
passage, and length alone cannot earn it a place.

The arm first asks for the files nearest the query across the whole store (two per
candidate wanted; `nearest_files` compares the query with every chunk vector, held in
memory, places each file by its nearest chunk and gives the files that lie strictly nearer
than the farthest one fetched; see engine/sqlite/knn.py), then keeps those in scope. That
shortcut is provably exact when enough files in scope are among them: any file left out has
no chunk that near. When the scope is too narrow for that (a rare tag, a short time window,
a store where most of the nearest memories are archived), the same statement scans every
chunk in scope instead, so the answer is exact either way. The nearest files are computed
beside the statement, on a second thread, while its full-text arm runs.

On PostgreSQL the nearest chunks come from pgvector's `ORDER BY vector <=> query LIMIT`:
an exact scan by default, or a walk through an HNSW index when the store sets
`[database] vector_index = "hnsw"`. The walk is approximate (it can miss a near chunk), so
a store that uses it says so in `status` and in every search's `vector_search`, and the
Measured page gives its recall against the exact scan.

This arm needs a query vector: it drops out when no embedding model is configured, when the
caller asks for a lexical search, or when fewer than 95 % of the chunks in the index carry a
vector from the configured model.
""",
        sql="""
WITH near AS MATERIALIZED (
    SELECT f.id AS id, f.path AS path, j.value AS place
    FROM json_each(nearest_files(?4, 2 * ?2)) AS j
    CROSS JOIN files AS f ON f.id = CAST(j.key AS integer)
    WHERE {scope}
),
exact AS (
    SELECT count(*) >= ?2 AS ok FROM near
)
SELECT id, row_number() OVER (ORDER BY distance, path) AS rank
FROM (
    SELECT id, path, place AS distance FROM near WHERE (SELECT ok FROM exact)
    UNION ALL
    SELECT f.id AS id, f.path AS path, min(vec_distance_cosine(e.vector, ?4)) AS distance
    FROM chunks AS c
    JOIN embeddings AS e ON e.hash = c.hash
    JOIN files AS f ON f.id = c.file_id
    WHERE {scope} AND NOT (SELECT ok FROM exact)
    GROUP BY c.file_id
    ORDER BY distance, path
    LIMIT ?2
)
""",
        pg_sql="""
WITH knn AS MATERIALIZED (
    SELECT e.hash AS hash, e.vector <=> CAST(?4 AS vector) AS distance
    FROM embeddings AS e
    ORDER BY e.vector <=> CAST(?4 AS vector)
    LIMIT 4 * ?2
),
near AS MATERIALIZED (
    SELECT f.path AS path, min(knn.distance) AS distance
    FROM knn
    JOIN chunks AS c ON c.hash = knn.hash
    JOIN files AS f ON f.id = c.file_id
    WHERE {scope}
    GROUP BY f.id
),
exact AS (
    SELECT count(*) >= ?2 AS ok
    FROM near
    WHERE distance < (SELECT max(distance) FROM knn)
)
SELECT path, row_number() OVER (ORDER BY distance, path) AS rank
FROM (
    SELECT path, distance FROM near WHERE (SELECT ok FROM exact)
    UNION ALL
    SELECT f.path AS path, min(e.vector <=> CAST(?4 AS vector)) AS distance
    FROM chunks AS c
    JOIN embeddings AS e ON e.hash = c.hash
    JOIN files AS f ON f.id = c.file_id
    WHERE {scope} AND NOT (SELECT ok FROM exact)
    GROUP BY f.id
    ORDER BY distance, path
    LIMIT ?2
) AS nearest
""",
    ),
    Arm(
        name="recency",
        label="recency ranking",
        weight=0.02,
        needs=(),
        prose="""
The recency arm prefers what happened last. A memory's moment is its `event_at` when the
front matter gives one (when the remembered thing happened) and otherwise the file's last
modification. It needs nothing from the query: it is a prior that breaks near-ties between
relevant memories in favour of the newer one, which is usually the one still true.

Like every arm that does not read the query, it ranks only the candidates the query arms
found (every memory in scope when no query arm runs), so it can reorder relevant memories
but never bring in an irrelevant one. Memories with the same moment share a rank. When it
ranks alone, with no query arm ("what is recent"), the statement needs only its first
candidates, newest first: they are read in order from the index on the moment (a `LIMIT`, not a
ranking of every memory in scope), and the statement checks that no memory further down could
have reached the hits (see `listing` in engine/ranking/assemble.py). Its weight
is a fiftieth of a query arm's: enough to settle an exact tie in favour of the newer memory,
too little to outvote the query. Measured on every evaluation set, including dated chat
histories where the message asked about is usually an old one, any heavier weight cost more
than it gained; the arm stays for the tie, which those sets do not reward.
""",
        sql="""
SELECT id, rank() OVER (ORDER BY moment DESC) AS rank
FROM (
    SELECT f.id AS id, coalesce(f.event_at, f.updated_at) AS moment
    FROM files AS f
    WHERE {scope} AND f.id IN (SELECT id FROM candidates)
      AND NOT EXISTS (SELECT 1 FROM listing)
)
UNION ALL
SELECT id, rank() OVER (ORDER BY moment DESC) AS rank
FROM (
    SELECT f.id AS id, coalesce(f.event_at, f.updated_at) AS moment
    FROM files AS f
    WHERE {scope}
    ORDER BY moment DESC, f.path
    LIMIT CASE WHEN EXISTS (SELECT 1 FROM listing) THEN ?2 ELSE 0 END
)
""",
        pg_sql="""
SELECT path, rank() OVER (ORDER BY moment DESC) AS rank
FROM (
    SELECT f.path AS path, coalesce(f.event_at, f.updated_at) AS moment
    FROM files AS f
    WHERE {scope} AND f.path IN (SELECT path FROM candidates)
      AND NOT EXISTS (SELECT 1 FROM listing)
) AS dated
UNION ALL
SELECT path, rank() OVER (ORDER BY moment DESC) AS rank
FROM (
    SELECT f.path AS path, coalesce(f.event_at, f.updated_at) AS moment
    FROM files AS f
    WHERE {scope} AND EXISTS (SELECT 1 FROM listing)
    ORDER BY moment DESC, f.path
    LIMIT ?2
) AS newest
""",
    ),
    Arm(
        name="salience",
        label="salience ranking",
        weight=0.4,
        needs=("state_plane",),
        prose="""
The salience arm prefers memories that have proved useful. Its score adds three things from
the state plane: how recently the memory was read, decaying by a factor of e every 100
hours; how often it was read, on a log scale so the hundredth read adds little; and its
outcome score when positive, so memories reported as helpful rise while a bad outcome only
withdraws the bonus instead of burying the memory.

Only memories with a record in the state plane are ranked, and only while that record says
something good: a memory never read or reinforced earns nothing here (ranking it by when its
file was written would make this a second recency arm), and neither does one that was never
read and only ever reported unhelpful.

Like recency, it ranks only the candidates the query arms found. Tasks and person records
get no rank here: they are looked up often by nature, and that traffic says nothing about
whether they are worth surfacing for an unrelated query. The exclusion belongs to this arm
alone; those memories still rank through the other arms. The arm drops out when the store
has no state plane yet.
""",
        sql="""
SELECT id, rank() OVER (ORDER BY salience DESC) AS rank
FROM (
    SELECT f.id AS id,
           coalesce(exp(-0.01 * 24.0 * (julianday('now') - julianday(a.last_accessed_at))), 0)
           + ln(1 + a.access_count)
           + max(a.outcome_score, 0) AS salience
    FROM files AS f
    JOIN state.access AS a ON a.path = f.path
    WHERE {scope} AND f.id IN (SELECT id FROM candidates)
      AND coalesce(f.kind, '') NOT IN ('task', 'person')
)
WHERE salience > 0
""",
        pg_sql="""
SELECT path, rank() OVER (ORDER BY salience DESC) AS rank
FROM (
    SELECT f.path AS path,
           coalesce(exp(-0.01 * extract(epoch FROM (now() AT TIME ZONE 'UTC')
                                        - CAST(a.last_accessed_at AS timestamp)) / 3600), 0)
           + ln(1 + a.access_count)
           + greatest(a.outcome_score, 0) AS salience
    FROM files AS f
    JOIN state_access AS a ON a.path = f.path
    WHERE {scope} AND f.path IN (SELECT path FROM candidates)
      AND coalesce(f.kind, '') NOT IN ('task', 'person')
) AS scored
WHERE salience > 0
""",
    ),
    Arm(
        name="time",
        label="date ranking",
        weight=1.0,
        needs=("query_time",),
        prose="""
The time arm answers questions that name a time: "what did Elise buy on 7 Jan 2024", "the
match Kevin watched in 2017", "what changed after 3 March". It reads the first date, month or
year the query names (written dates in the usual forms, `before`/`after` a date) with plain
rules, no language model, and ranks the candidates by how far their moment (`event_at`, else
the file's modification time) lies from that time: inside it first, then the nearest.

It is a prior: it ranks only what the query arms found, so a date alone never brings in an
unrelated memory of that day. It drops out when the query names no time it can read. Relative
expressions ("yesterday", "last week") are left alone: measured on conversational sets, the
words in a chat usually speak of the conversation, not of the memory being looked for.
""",
        sql="""
SELECT id, rank() OVER (ORDER BY gap) AS rank
FROM (
    SELECT f.id AS id,
           max(julianday(?5) - julianday(coalesce(f.event_at, f.updated_at)),
               julianday(coalesce(f.event_at, f.updated_at)) - julianday(?6),
               0) AS gap
    FROM files AS f
    WHERE {scope} AND f.id IN (SELECT id FROM candidates)
)
""",
        pg_sql="""
SELECT path, rank() OVER (ORDER BY gap) AS rank
FROM (
    SELECT f.path AS path,
           greatest(
               extract(epoch FROM CAST(?5 AS timestamp)
                                  - CAST(coalesce(f.event_at, f.updated_at) AS timestamp)),
               extract(epoch FROM CAST(coalesce(f.event_at, f.updated_at) AS timestamp)
                                  - CAST(?6 AS timestamp)),
               0) / 86400 AS gap
    FROM files AS f
    WHERE {scope} AND f.path IN (SELECT path FROM candidates)
) AS dated
""",
    ),
)

#: What a memory may say about itself, applied after fusion (see :class:`Authority`). Tags
#: only: a store's memories say it in front matter (``tags: [canonical]``), and a search needs
#: no other column. Same rules as the arms: literal values, read by the docs plugin as source.
AUTHORITY: tuple[Authority, ...] = (
    Authority(
        name="pinned",
        label="pinned",
        tags=("pinned",),
        effect="raise",
        factor=1.2,
        prose="""
A memory someone pinned is one they want found first. Its score is raised by a fifth: enough
to put it above a near-twin that the arms rank the same or one place higher, not enough to
lift it over a memory that answers the query much better.
""",
    ),
    Authority(
        name="canonical",
        label="canonical source",
        tags=("canonical", "source-of-truth"),
        effect="raise",
        factor=1.2,
        prose="""
A memory marked as the canonical source of a fact (`canonical`, `source-of-truth`) beats the
notes that repeat or paraphrase it. Raised like a pinned one; a memory both pinned and
canonical is raised by both, up to the ceiling.
""",
    ),
    Authority(
        name="superseded",
        label="superseded",
        tags=("superseded", "historical", "outdated"),
        effect="cap",
        factor=0.5,
        prose="""
A memory marked as past (`superseded`, `historical`, `outdated`) still answers a question
about its time, but ranks below what replaced it: its score is at most halved, whatever else
raises it, so a superseded note that is also pinned stays down.
""",
    ),
    Authority(
        name="do_not_answer",
        label="do not answer from",
        tags=("do-not-answer-from",),
        effect="cap",
        factor=0.05,
        prose="""
A memory tagged `do-not-answer-from` is kept for the record (a draft, a quarantined import, a
note known to be wrong) and must not be the answer while anything else is: its score is cut
to a twentieth, which sinks it below every memory without the tag that the full-text or the
semantic ranking found.
""",
    ),
)
