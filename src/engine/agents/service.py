"""What an agent can do with a store, as plain functions on JSON-ready data.

This is the server's core without the protocol: one warm :class:`~engine.search.Searcher` (so a
search costs the statement and one query embedding, not a process start), the write path, and
the state plane, each call returning a small dict. The MCP glue (:mod:`engine.agents.mcp_server`)
only declares schemas and maps :class:`ServiceError` to tool errors, so everything here is tested
without a protocol in the way.

An agent's context is the scarce resource: a search answer is bounded (:data:`BUDGET_BYTES` of
JSON, snippets trimmed and then hits dropped, and the answer says so), and ``read`` pages a
long memory instead of returning all of it.
"""

from __future__ import annotations

import json
import threading
from contextlib import suppress
from dataclasses import dataclass, field

from engine import state as state_plane
from engine.agents.write import (
    ArchiveResult,
    NotIndexed,
    WriteError,
    forget,
    read_memory,
    remember,
)
from engine.backend import open_backend
from engine.errors import DatabaseError, IndexMissing
from engine.files.keys import resolve_memory
from engine.files.memory import Skip, memory_text, parse_memory
from engine.files.store import Store
from engine.indexing.embedder import EmbedderError, make_embedder
from engine.indexing.freshness import Freshness
from engine.ranking.query import bare_prefix_problem
from engine.ranking.scope import ScopeSpec
from engine.search import Hit, Searcher, SearchResult
from engine.status import store_status

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "MemoryService",
    "SearchArgs",
]

#: The most JSON a search answer may take, in bytes (agents' tool outputs are small).
BUDGET_BYTES = 8000
SNIPPET_STEPS = (300, 200, 120, 60, 0)
#: Below this a snippet no longer holds a usable passage: hits are dropped instead.
MIN_SNIPPET_CHARS = 120
MAX_SEARCH_LIMIT = 50
READ_CHARS = 20_000
MAX_READ_CHARS = 100_000


class ServiceError(ValueError):
    """A request that cannot be served as asked; the message says what to change."""


def compact(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def size_of(data: object) -> int:
    return len(compact(data).encode("utf-8"))


def cut(text: str, chars: int) -> str:
    """``text`` cut to about ``chars`` characters at a word boundary, with an ellipsis."""
    if len(text) <= chars:
        return text
    if chars <= 0:
        return ""
    space = text.rfind(" ", 0, chars)
    end = space if space > chars // 2 else chars
    return text[:end].rstrip(" *") + "…"


def hit_record(hit: Hit, snippet_chars: int) -> dict[str, object]:
    return {
        "path": hit.path,
        "title": hit.title,
        "kind": hit.kind,
        "event_at": hit.event_at,
        "score": round(hit.score, 6),
        "snippet": cut(hit.snippet, snippet_chars),
        "ranks": {name: arm.rank for name, arm in hit.arms.items()},
        "copies": hit.copies,
        "authority": hit.authority,
        "above_twin": hit.above_twin,
    }


def bounded_answer(result: SearchResult, budget: int = BUDGET_BYTES) -> dict[str, object]:
    """The search answer as JSON-ready data of at most ``budget`` bytes; ``truncated`` says
    what went.

    Snippets are shortened step by step down to :data:`MIN_SNIPPET_CHARS`; past that, hits are
    dropped from the bottom rather than stripped of their text: a path alone tells an agent
    nothing it can use without reading the file, while fewer hits with their best passage do.
    Only when not even one hit with a snippet fits are snippets cut further."""
    answer: dict[str, object] = {
        "query": cut(result.query, 200),
        "hits": [],
        "abstained": bool(getattr(result, "abstained", False)),
        "degraded": result.degraded,
        "arms_fired": result.arms_fired,
        "arms_dropped": result.arms_dropped,
        "empty_scope": result.empty_scope,
        "notes": list(result.notes),
        "truncated": None,
    }
    kept = [s for s in SNIPPET_STEPS if s >= MIN_SNIPPET_CHARS]
    for chars in kept:
        answer["hits"] = [hit_record(hit, chars) for hit in result.hits]
        if size_of(answer) <= budget:
            if chars != SNIPPET_STEPS[0] and result.hits:
                answer["truncated"] = {"snippet_chars": chars, "hits_dropped": 0}
            return answer
    notes = list(result.notes)

    def keep(hits: list[dict[str, object]], chars: int) -> None:
        """Set the answer to ``hits`` at ``chars``, saying how many more there are."""
        dropped = len(result.hits) - len(hits)
        answer["hits"] = hits
        answer["truncated"] = {"snippet_chars": chars, "hits_dropped": dropped}
        answer["notes"] = [*notes, more_hits_note(dropped, budget)] if dropped else notes

    for chars in [kept[-1]] + [s for s in SNIPPET_STEPS if s < MIN_SNIPPET_CHARS]:
        hits = [hit_record(hit, chars) for hit in result.hits]
        keep(hits, chars)
        while len(hits) > 1 and size_of(answer) > budget:
            hits.pop()
            keep(hits, chars)
        if size_of(answer) <= budget:
            return answer
    keep([], 0)
    return answer


def more_hits_note(dropped: int, budget: int) -> str:
    return (
        f"{dropped} more hit(s) left out to keep the answer under {budget} bytes; "
        "a narrower scope or a more specific query brings them up"
    )


@dataclass
class SearchArgs:
    """A search as a tool asks for it: the scope is the engine's own :class:`ScopeSpec`."""

    query: str
    limit: int = 10
    scope: ScopeSpec = field(default_factory=ScopeSpec)


class MemoryService:
    """One store served to agents: a warm searcher, the write path, and (optionally) the
    threads that keep the index following the files."""

    def __init__(self, store: Store, *, freshness: Freshness | None = None) -> None:
        self.store = store
        self.freshness = freshness
        self._searcher = Searcher(store)
        self._search_lock = threading.Lock()
        #: Whether an answer has been given yet: the first says when vectors are missing.
        self._answered = False

    def warm(self) -> None:
        """Load the embedder and open the index now, so the first search is as fast as the
        rest (called in the background at start). A database that cannot be searched is left
        for the first search to report, naming it, as a tool error."""
        with self._search_lock:
            try:
                self._searcher.search("warm up", limit=1)
            except (IndexMissing, ValueError, DatabaseError):
                with suppress(*ERRORS):
                    make_embedder(self.store.config().model)

    def close(self) -> None:
        with self._search_lock:
            self._searcher.close()

    # ------------------------------------------------------------------ tools

    def search(self, args: SearchArgs) -> dict[str, object]:
        if not 1 <= args.limit <= MAX_SEARCH_LIMIT:
            raise ServiceError(f"limit must be between 1 and {MAX_SEARCH_LIMIT}")
        if not args.query.strip():
            raise ServiceError("query is empty; say what to look for, in words")
        if problem := bare_prefix_problem(args.query):
            raise ServiceError(problem)
        try:
            with self._search_lock:
                result = self._searcher.search(args.query, limit=args.limit, scope=args.scope)
        except IndexMissing:
            raise ServiceError(self._no_index_yet()) from None
        if not self._answered:
            self._answered = True
            if "vector" in result.arms_dropped and result.degraded:
                result.notes.append(self._vectors_missing_note())
        return bounded_answer(result)

    def _vectors_missing_note(self) -> str:
        """What a client that starts a server per call needs to hear once: the semantic arm is
        off because vectors are missing, and what fills them (a server killed after one call
        never does)."""
        filling = self.freshness is not None  # its filler thread embeds what is missing
        return (
            "this store's vectors are not all computed yet, so this search ran on full text "
            "and the other rankings only; `memsift index` fills them"
            + (
                ", and so does this server while it keeps running (a client that starts a "
                "server per call never lets it finish)"
                if filling
                else ", or a long-lived `memsift serve`"
            )
            + "; memory_status says how far they are"
        )

    def read(self, path: str, offset: int = 0, max_chars: int = READ_CHARS) -> dict[str, object]:
        if offset < 0 or not 1 <= max_chars <= MAX_READ_CHARS:
            raise ServiceError(f"offset must be >= 0 and max_chars between 1 and {MAX_READ_CHARS}")
        page = read_page(self.store, path, offset, max_chars)
        return {
            "path": page.key,
            "front_matter": page.fields,
            "text": page.text,
            "offset": offset,
            "next_offset": page.next_offset,
            "total_chars": page.total_chars,
            "access_count": page.access.access_count if page.access else None,
            "problem": page.problem,
            "notes": [page.not_counted] if page.not_counted else [],
        }

    def remember(
        self,
        title: str,
        body: str,
        kind: str,
        tags: list[str] | None,
        event_at: str | None,
    ) -> dict[str, object]:
        embedder = make_embedder(self.store.config().model)
        notes = []
        try:
            key = remember(self.store, title, body, kind, tags, event_at, embedder=embedder)
            indexed = True
        except NotIndexed as exc:  # on disk already: an error would have the agent write it again
            key, indexed = exc.key, False
            notes.append(not_indexed_note(exc, self.freshness is not None))
        if kind.strip().lower() == "task":
            notes.append("tasks are out of default searches; search with kinds=['task']")
        return {
            "path": key,
            "indexed": indexed,
            "embedded": indexed and embedder is not None,
            "notes": notes,
        }

    def reinforce(self, path: str, outcome: int) -> dict[str, object]:
        access = reinforce_memory(self.store, path, outcome)
        return {
            "path": access.path,
            "outcome_score": round(access.outcome_score, 4),
            "access_count": access.access_count,
        }

    def forget(self, path: str) -> dict[str, object]:
        try:
            result = forget(self.store, path)
            notes = []
        except NotIndexed as exc:
            result = ArchiveResult(exc.key, changed=True)
            notes = [not_indexed_note(exc, self.freshness is not None)]
        return {"path": result.path, "archived": True, "changed": result.changed, "notes": notes}

    def status(self) -> dict[str, object]:
        # The watcher's state is read before the index's counts, so the counts are at least as
        # new as what it says: read after them, a catch-up finishing in between said
        # "caught_up" beside the 0 files of the index it had not yet made.
        freshness = self.freshness.status() if self.freshness else None
        try:
            info = store_status(self.store)
        except IndexMissing:
            info = {"store": str(self.store.root), "files": 0, "index": self._no_index_yet()}
        for counted in ("stale_state_rows", "not_walked"):  # counts: `memsift status` lists them
            paths = info.pop(counted, [])
            info[counted] = len(paths) if isinstance(paths, list) else paths
        info["freshness"] = freshness
        return info

    def _no_index_yet(self) -> str:
        if self.freshness is not None and not self.freshness.caught_up.is_set():
            return "the index is still being built (it started with the server); retry shortly"
        return "the store has no index yet; run `memsift index` in it"


@dataclass(frozen=True)
class Page:
    """A memory as a read returns it: a page of its text, its fields, and the access counted
    (``access`` None for a page past the first, which counts nothing)."""

    key: str
    text: str
    fields: dict[str, object]
    total_chars: int
    next_offset: int | None
    problem: str | None
    access: state_plane.Access | None
    not_counted: str | None


def read_page(store: Store, path: str, offset: int = 0, max_chars: int | None = None) -> Page:
    """Read the memory ``path`` names (by :func:`engine.files.keys.resolve_memory`) and count the
    read when the page is its first; ``max_chars`` None reads to the end. The CLI and the MCP
    tool both read through here, so a read is resolved, counted and hashed one way."""
    key, full = resolve_memory(store, path)
    data, _ = read_memory(store, key, full)
    text = memory_text(key, data)
    fields: dict[str, object] = {}
    problem = None
    try:
        memory = parse_memory(key, data)
        fields = {
            "title": memory.title,
            "kind": memory.kind,
            "event_at": memory.event_at,
            "tags": list(memory.tags),
            "archived": memory.archived,
        }
    except Skip as skip:
        problem = f"the index skips this file: {skip.reason}"
    if offset > len(text):
        raise ServiceError(f"offset {offset} is past the end ({len(text)} characters)")
    page = text[offset:] if max_chars is None else text[offset : offset + max_chars]
    end = offset + len(page)
    access, not_counted = (
        state_plane.record_read(store, key, content_hash_of(store, key))
        if offset == 0
        else (None, None)
    )
    return Page(
        key=key,
        text=page,
        fields=fields,
        total_chars=len(text),
        next_offset=end if end < len(text) else None,
        problem=problem,
        access=access,
        not_counted=not_counted,
    )


def reinforce_memory(store: Store, path: str, outcome: int) -> state_plane.Access:
    """Fold ``outcome`` (+1 helped, -1 misled) into the score of the memory ``path`` names."""
    if outcome not in (1, -1):
        raise ServiceError("outcome must be 1 (the memory helped) or -1 (it misled)")
    key, _ = resolve_memory(store, path)
    return state_plane.reinforce(store, key, outcome, content_hash_of(store, key))


def not_indexed_note(exc: NotIndexed, watching: bool) -> str:
    """Why a written memory is not searchable yet, and what makes it so, for an agent."""
    then = (
        "the server's watcher indexes it as soon as the index is free"
        if watching
        else "the next `memsift index` in the store indexes it"
    )
    return (
        f"the file was {exc.done}, but the index has not taken it yet ({exc.reason}); {then}; "
        "do not write it again"
    )


def content_hash_of(store: Store, key: str) -> str | None:
    """The indexed content hash of ``key`` (lets the state row follow a later rename)."""
    return open_backend(store).content_hash(store, key)


ERRORS = (ServiceError, WriteError, ValueError, OSError, DatabaseError, EmbedderError)
