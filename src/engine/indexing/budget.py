"""The per-file embedding budget: which chunks of a file get a vector.

A huge file (a 5 MB single-line log is 2,625 chunks) cost minutes of embedding, while the vector
arm ranks a file by its best chunk and the full-text arm reads every chunk anyway. So a file of
more than ``[limits] embed_chunks_per_file`` chunks gets at most that many vectors, on chunks
spread over its whole length at a fixed stride: every ``s``-th chunk from chunk 0, ``s`` the
smallest power of two that leaves at most the budget (:func:`stride`). A question about the
middle or the end of a long file then finds a vector at most ``s / 2`` chunks from its answer,
where the first chunks alone left the end of the file with none; measured on real documents
(``benchmarks/budget_lab.py``), this choice ranks such answers higher than the first
``budget`` chunks did, for fewer vectors. A stride that is a power of two keeps a growing file
cheap: appended chunks move no chosen chunk (the stride only ever doubles, and the chunks of
the doubled stride were already chosen), so a log that grows is not embedded anew.

The rule is one function, written twice from one definition: :func:`embeddable` in Python
(what a run reports as embedded and past the budget) and :func:`embeddable_sql` in SQL, the
same text on SQLite and PostgreSQL, which every writer and reader of the rule selects with:

- what an index run, a remember and the background filler embed;
- which vectors a run keeps: a vector no chunk within the rule holds is dropped
  (:func:`uncovered_vectors_sql`), so after a budget is lowered, or a file changes length, the
  vector arm reads no vector the rule no longer covers;
- what the coverage a search trusts the vector arm by counts (a chunk past the budget is not
  missing, so a store with huge files is not "degraded" for ever);
- what ``status`` reports as full-text only.

A chunk the rule leaves out whose text a chunk within it embeds (in the same file or another)
shares that vector: vectors are keyed by text, and the vector arm reads every chunk that has
one.

A run records the budget it embedded with (``meta`` key :data:`BUDGET_KEY`), so a search that
finds a run interrupted counts the coverage that run was aiming for, and a writer can tell the
budget changed since.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.files.config import DEFAULT_EMBED_CHUNKS_PER_FILE

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "budget_join",
    "embeddable",
    "embeddable_sql",
]

BUDGET_KEY = "embed_budget"
#: The ``meta`` key of the rule a run chose its chunks by, and this code's rule: an index whose
#: vectors were chosen by another rule (the first chunks of each file, before) or another budget
#: has its uncovered vectors dropped by the next writer, whichever it is
#: (:func:`rule_changed`).
RULE_KEY = "embed_rule"
RULE = "stride"


#: The largest chunk count the SQL form spells out a stride for; a file of more chunks (no file
#: comes near: a 5 MB file is about 5,000) takes the stride of this many.
MOST_CHUNKS = 2**40


def stride(chunks: int, budget: int) -> int:
    """The step between a file's embedded chunks: the smallest power of two ``s`` with
    ``ceil(chunks / s) <= budget`` (1 for a file within the budget)."""
    step = 1
    while chunks > budget * step and budget * step < MOST_CHUNKS:
        step *= 2
    return step


def embeddable(seq: int, chunks: int, budget: int) -> bool:
    """Whether chunk number ``seq`` (from 0) of a file of ``chunks`` chunks gets a vector under
    ``budget``: every chunk of a file within the budget, else every :func:`stride`-th."""
    return seq % stride(chunks, budget) == 0


def embeddable_sql(budget: int, seq: str = "c.seq", chunks: str = "over.n") -> str:
    """:func:`embeddable` as a SQL condition on the columns ``seq`` and ``chunks`` (a file's
    chunk count, NULL for a file within the budget: :func:`budget_join`), the same text on
    SQLite and PostgreSQL: one ``CASE`` branch per stride, ``chunks <= budget * s`` choosing
    the step ``s`` and ``seq & (s - 1)`` testing a multiple of it (``%`` is psycopg's
    placeholder mark). The budget is inlined, a whole number from the configuration like the
    weights; the ladder stops at :data:`MOST_CHUNKS`, so no literal overflows 64 bits."""
    b = int(budget)
    branches = [f"WHEN {chunks} <= {b} THEN 1 = 1"]
    step = 1
    while b * step < MOST_CHUNKS:
        step *= 2
        branches.append(f"WHEN {chunks} <= {b * step} THEN ({seq} & {step - 1}) = 0")
    ladder = f"CASE {' '.join(branches)} ELSE ({seq} & {step - 1}) = 0 END"
    return f"({chunks} IS NULL OR {ladder})"


def budget_join(budget: int, chunk: str = "c", file_ids: str | None = None) -> str:
    """A ``LEFT JOIN`` giving each chunk of ``chunk`` (an alias of ``chunks``) its file's chunk
    count as ``over.n`` when the file is over the budget, NULL otherwise: the files over it are
    few, so the join costs one pass over the ``(file_id, seq)`` index, not a count per chunk.
    ``file_ids``: a subquery selecting the only files a caller reads (others get NULL)."""
    where = f"WHERE file_id IN ({file_ids}) " if file_ids is not None else ""
    return (
        f"LEFT JOIN (SELECT file_id, max(seq) + 1 AS n FROM chunks {where}GROUP BY file_id "
        f"HAVING max(seq) >= {int(budget)}) AS over ON over.file_id = {chunk}.file_id"
    )


def uncovered_vectors_sql(budget: int) -> str:
    """A ``DELETE`` of every vector no chunk within the rule holds (a text no chunk holds any
    more included): run by a full run, and by any writer when the rule or budget changed, so
    nothing the rule leaves out is read by the vector arm, whatever the budget was when it was
    embedded."""
    return (
        "DELETE FROM embeddings WHERE hash NOT IN "
        f"(SELECT c.hash FROM chunks AS c {budget_join(budget)} WHERE {embeddable_sql(budget)})"
    )


def covered_among_sql(budget: int, among: str) -> str:
    """A ``SELECT`` of those text hashes of ``among`` (a subquery, given twice its values) that
    a chunk within the rule holds: a writer that wrote a few files drops the vectors of their
    left-out chunks but these (:func:`uncovered_vectors_sql`'s work, on a few hashes)."""
    files = f"SELECT m.file_id FROM chunks AS m WHERE m.hash IN ({among})"
    return (
        f"SELECT DISTINCT c.hash FROM chunks AS c {budget_join(budget, file_ids=files)} "
        f"WHERE c.hash IN ({among}) AND {embeddable_sql(budget)}"
    )


def rule_changed(meta: Mapping[str, object], budget: int) -> bool:
    """Whether the index's vectors were chosen under another rule or budget than ``budget``
    under this code's :data:`RULE` (``meta``: the index's ``meta`` rows, at least these two
    keys): then a writer drops the vectors the rule no longer covers in every file, not only in
    the files it wrote."""
    return meta.get(RULE_KEY) != RULE or str(meta.get(BUDGET_KEY)) != str(int(budget))


def recorded_budget(meta: Mapping[str, object]) -> int:
    """The budget the last run embedded with, from the index's ``meta``; the default for an
    index written before budgets existed (it embedded every chunk, so its coverage within the
    default budget is what it was before)."""
    value = meta.get(BUDGET_KEY)
    try:
        return int(value) if value is not None else DEFAULT_EMBED_CHUNKS_PER_FILE  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return DEFAULT_EMBED_CHUNKS_PER_FILE


def budget_note(full_text_only: int, budget: int) -> str | None:
    """What ``status`` says of the chunks past the budget, or None when there are none."""
    if full_text_only <= 0:
        return None
    return (
        f"{full_text_only:,} chunks of files over {budget:,} chunks are found by full text "
        f"only, without a vector: such a file embeds at most {budget:,}, spread over its "
        "length ([limits] embed_chunks_per_file)"
    )
