"""The per-file embedding budget: which chunks of a file get a vector.

A huge file (a 5 MB single-line log is 2,625 chunks) cost minutes of embedding, while the vector
arm ranks a file by its best chunk and the full-text arm reads every chunk anyway. So only a
file's first ``[limits] embed_chunks_per_file`` chunks are embedded; the rest are found by full
text only. The rule is one comparison, written here and in each backend's SQL as
``seq < budget`` (``seq`` counts a file's chunks from 0):

- what an index run, a remember and the background filler embed;
- what the coverage a search trusts the vector arm by counts (a chunk past the budget is not
  missing, so a store with huge files is not "degraded" for ever);
- what ``status`` reports as full-text only.

A chunk past the budget whose text another file embeds shares that vector: vectors are keyed by
text, and the vector arm reads every chunk that has one.

A run records the budget it embedded with (``meta`` key :data:`BUDGET_KEY`), so a search that
finds a run interrupted counts the coverage that run was aiming for.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.files.config import DEFAULT_EMBED_CHUNKS_PER_FILE

BUDGET_KEY = "embed_budget"


def embeddable(seq: int, budget: int) -> bool:
    """Whether a file's chunk number ``seq`` (from 0) gets a vector under ``budget``."""
    return seq < budget


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
        f"{full_text_only:,} chunks past the first {budget:,} of their file are found by full "
        "text only, without a vector ([limits] embed_chunks_per_file)"
    )
