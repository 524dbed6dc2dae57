"""``memsift serve``: the store as an MCP server over stdio (the official ``mcp`` SDK, 2.x).

Thin glue: each tool declares its input schema (with limits), its output schema and a
description that tells an agent when to use it, then calls
:class:`engine.agents.service.MemoryService`. Anything the service refuses becomes a tool error with
the service's one-line message, and the server keeps serving. This module is imported only by
``serve`` (and the docs build), so no other command pays for loading the SDK.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
import anyio.lowlevel
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, BeforeValidator, Field, ValidationError

from engine.agents import stdio_pipes
from engine.agents.service import (
    ERRORS,
    MAX_READ_CHARS,
    MAX_SEARCH_LIMIT,
    READ_CHARS,
    MemoryService,
    SearchArgs,
    compact,
)
from engine.agents.stdio_transport import stdio_streams
from engine.files.store import Store
from engine.indexing.freshness import Freshness
from engine.ranking.scope import ScopeSpec
from engine.redact import redact, redact_logging
from engine.sqlite.errors import DRIVER_ERRORS
from engine.terminal import printable
from engine.version import memsift_version

SERVER_NAME = "memsift"

INSTRUCTIONS = """\
memsift is this agent's long-term memory: a folder of small Markdown files, searched by words,
meaning, recency and how useful each memory has been. Search it before answering from general
knowledge about this user, project or environment; read a hit when its snippet is not enough;
remember durable facts, decisions, preferences, procedures and notable events as they come up
(one idea per memory, specific title); reinforce a memory that helped (+1) or misled (-1);
forget (archive) a memory that is wrong or obsolete. Nothing is ever deleted."""

# --------------------------------------------------------------------------- output schemas


class SearchHit(BaseModel):
    path: str = Field(description="The memory's path in the store: pass it to read/reinforce.")
    title: str
    kind: str | None
    event_at: str | None = Field(description="When the remembered thing happened (UTC).")
    score: float = Field(description="Fused score; only the order matters.")
    snippet: str = Field(description="The best passage, query words in **bold**.")
    ranks: dict[str, int] = Field(description="Each ranking arm's rank of this hit (1 = best).")
    copies: list[str] = Field(
        default_factory=list,
        description="Other memories holding the same text (e.g. a page's .md and .html "
        "copies), folded into this hit instead of taking places of their own.",
    )
    authority: float = Field(
        default=1.0,
        description="What the memory's own tags did to its score: above 1 raised (pinned, "
        "canonical), below 1 held down (superseded, do-not-answer-from); 1 for neither.",
    )
    above_twin: str | None = Field(
        default=None,
        description="A near-twin this hit was put above because that twin denies or retires "
        "what this one says (it is not, no longer, used to be ...).",
    )


class Truncation(BaseModel):
    snippet_chars: int = Field(description="Snippets were cut to this many characters.")
    hits_dropped: int = Field(description="Hits left out at the bottom to fit the size bound.")


class SearchOutput(BaseModel):
    query: str
    hits: list[SearchHit]
    abstained: bool = Field(description="True when no memory is a confident answer.")
    degraded: bool = Field(
        description="True when an arm that should have run did not (e.g. vectors still being "
        "computed); results are then lexical, or otherwise weaker than usual."
    )
    arms_fired: list[str]
    arms_dropped: dict[str, str] = Field(description="Arms that did not run, and why.")
    empty_scope: bool = Field(description="True when no memory at all matches the filters.")
    notes: list[str]
    truncated: Truncation | None = Field(
        description="Set when the answer was trimmed to stay under about 8 KB."
    )


class FrontMatter(BaseModel):
    title: str | None = None
    kind: str | None = None
    event_at: str | None = None
    tags: list[str] = []
    archived: bool = False


class ReadOutput(BaseModel):
    path: str
    front_matter: FrontMatter
    text: str = Field(description="The file's text (front matter included), or this page of it.")
    offset: int
    next_offset: int | None = Field(description="Pass as offset to read on; null at the end.")
    total_chars: int
    access_count: int | None = Field(description="Reads counted so far (first page only).")
    problem: str | None = Field(description="Why the index skips this file, if it does.")
    notes: list[str] = Field(description="E.g. why this read could not be counted.")


class RememberOutput(BaseModel):
    path: str = Field(description="Where the memory was written, relative to the store.")
    indexed: bool
    embedded: bool = Field(description="Whether its vectors were computed before answering.")
    notes: list[str]


class ReinforceOutput(BaseModel):
    path: str
    outcome_score: float = Field(description="Moving average of outcomes, in [-1, 1].")
    access_count: int


class ForgetOutput(BaseModel):
    path: str
    archived: bool
    changed: bool = Field(description="False when it was already archived.")
    notes: list[str] = Field(
        description="Set when the file was archived but searches do not know it yet."
    )


class StatusOutput(BaseModel):
    model_config = {"extra": "allow"}

    store: str
    files: int


# --------------------------------------------------------------------------- tool descriptions

SEARCH_HELP = """\
Search the memory store. Use it BEFORE answering anything that may depend on what was learnt
earlier about this user, team, project or environment (names, decisions, preferences, how-tos,
past incidents), and before remembering something, to avoid duplicates. Write the query as
words or a question; narrow with kinds, tags, path_prefix or a since/until window. Returns up
to `limit` hits with path, title, a short snippet and each ranking's rank, within about 8 KB;
archived memories and tasks are left out unless asked for. Follow up with memory_read for a
hit's full text."""

READ_HELP = """\
Read one memory in full (front matter and text) by the path a search returned. Use it when a
snippet is not enough to act on. Counts as an access, which makes the memory rank a little
higher in later searches. Long memories come in pages: call again with next_offset."""

REMEMBER_HELP = """\
Write a NEW memory. Use it when you learn something worth knowing in a later session: a
durable fact, decision, preference, procedure, person note or notable event. One idea per
memory, with a specific title (it also names the file). Search first: if a memory on this
already exists and is now wrong, forget it and remember the corrected one. The memory is
written as a Markdown file under a folder named for its kind, never over an existing file, and
is searchable as soon as this returns."""

REINFORCE_HELP = """\
Record whether a memory helped: outcome 1 when acting on it worked, -1 when it was misleading
or wrong. Memories that helped rank higher in later searches. Use after you acted on a memory
and know how it went."""

FORGET_HELP = """\
Archive a memory that is wrong, obsolete or superseded: it leaves default searches (still
found with include_archived) and its file gets `archived: true`. Nothing is deleted. Use after
remembering the corrected version, if there is one."""

STATUS_HELP = """\
Describe the store: how many memories are indexed, whether vectors cover them (searches run
lexically while they are computed), pending changes, and the file watcher's state. Use when
searches look degraded or a memory just written elsewhere seems missing."""

# --------------------------------------------------------------------------- the server


def answer(data: dict[str, object]) -> CallToolResult:
    """The tool result: structured content plus the same JSON, compact, as text for clients
    that read only text."""
    return CallToolResult(
        content=[TextContent(type="text", text=compact(data))], structured_content=data
    )


CALL_OUTCOME: ContextVar[dict[str, object] | None] = ContextVar("memsift_outcome", default=None)
"""Where a tool call leaves what it did, for :meth:`MemoryServer.call_tool` to report should
the call be cancelled after the work was done (a worker thread finishes what it started)."""


def call(work, *args, **kwargs):  # type: ignore[no-untyped-def]
    """Run a service call, turning what it refuses into a tool error with its message."""
    try:
        data = work(*args, **kwargs)
        outcome = CALL_OUTCOME.get()
        if outcome is not None:
            outcome["data"] = data
        return answer(data)
    except ToolError:
        raise
    except ERRORS as exc:
        raise ToolError(redact(str(exc))) from None
    except DRIVER_ERRORS as exc:
        raise ToolError(
            redact(f"SQLite: {exc}; retry, or run `memsift status` on the store")
        ) from None


def number_only(value: object) -> object:
    """Refuse ``true``/``false`` and text where a number is asked for: the validator would
    read ``true`` as 1 and ``"3"`` as 3, and an agent's slip would reinforce a memory or size
    a search it did not mean to. A whole number written ``2.0`` is still a number."""
    if isinstance(value, (bool, str)):
        kind = "true/false" if isinstance(value, bool) else "text"
        raise ValueError(f"must be a number, not {kind}")
    return value


Number = BeforeValidator(number_only)
Text = Annotated[str, Field(max_length=200)]
Path_ = Annotated[
    str,
    Field(
        min_length=1,
        max_length=1000,
        description="The memory's path relative to the store, as search returned it.",
    ),
]


def argument_problems(error: ValidationError) -> str:
    """A validator's report as one line: each bad argument's name and what it should be,
    without the rejected value (an agent's query may be long, or private)."""
    parts = []
    for problem in error.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in problem["loc"]) or "arguments"
        parts.append(f"{where}: {problem['msg']}")
    return "; ".join(parts)


def unknown_arguments(tool: Any, arguments: object) -> str | None:
    """The arguments ``tool`` does not take, said in one line with the ones it does; None when
    there are none. The SDK ignores them, so a misspelt ``pathPrefix`` would silently search
    the whole store."""
    if tool is None or not isinstance(arguments, dict):
        return None
    taken = sorted(tool.parameters.get("properties", {}))
    extra = sorted(key for key in arguments if key not in taken)
    if not extra:
        return None
    return (
        f"unknown argument{'s' if len(extra) > 1 else ''} "
        + ", ".join(repr(key) for key in extra)
        + f"; it takes {', '.join(taken) or 'none'}"
    )


def done_before_cancel(name: str, data: dict[str, object]) -> str | None:
    """What a cancelled call had changed in the store, said for the log; None when it
    changed nothing (a search, a status, a read of a read-only store)."""
    path = data.get("path")
    if name == "memory_remember":
        return f"it had written {path}: the memory is kept, do not write it again"
    if name == "memory_forget" and data.get("changed"):
        return f"it had archived {path}"
    if name == "memory_reinforce":
        return f"it had recorded the outcome for {path} (outcome_score {data.get('outcome_score')})"
    if name == "memory_read" and data.get("access_count") is not None:
        return f"it had counted a read of {path}"
    return None


def log(line: str) -> None:
    """One line of the server's log on stderr (stdout is the protocol's), never a password."""
    print(f"memsift serve: {printable(redact(line))}", file=sys.stderr, flush=True)


class MemoryServer(MCPServer):
    """The SDK's server, with bad arguments refused in one line naming each argument (the
    SDK's own message is the validator's multi-line report, ending with a web link), and a
    call cancelled after its work was done (by the client, or at the end of the input) said
    in the log: its answer is never sent, so nothing else would tell."""

    log: Callable[[str], None] = staticmethod(log)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        unknown = unknown_arguments(self._tool_manager.get_tool(name), arguments)
        if unknown:
            raise ToolError(f"{name}: bad arguments: {unknown}")
        outcome: dict[str, object] = {}
        token = CALL_OUTCOME.set(outcome)
        try:
            result = await super().call_tool(name, arguments, context)
            # A worker thread is waited for even when its call is cancelled meanwhile, and
            # the cancellation would surface only later, in the SDK, where nothing says what
            # the call did: take it here.
            await anyio.lowlevel.checkpoint_if_cancelled()
            return result
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                problems = argument_problems(exc.__cause__)
                raise ToolError(f"{name}: bad arguments: {problems}") from exc.__cause__
            raise
        except anyio.get_cancelled_exc_class():
            data = outcome.get("data")
            done = done_before_cancel(name, data) if isinstance(data, dict) else None
            if done is not None:
                self.log(f"{name} was cancelled before it could answer, but {done}")
            raise
        finally:
            CALL_OUTCOME.reset(token)


#: (what a memory's path ends with, its MIME type), most specific first; "" matches any.
RESOURCE_TYPES = ((".html", "text/html"), (".htm", "text/html"), ("", "text/markdown"))


def memory_resource(service: MemoryService, suffix: str) -> Callable[[str], str]:
    """A resource function for memories whose path ends with ``suffix`` (which the template
    takes off ``path``): the memory's text, as ``memory_read`` gives its first page."""

    def read(path: str) -> str:
        try:
            return service.read(path + suffix, 0, MAX_READ_CHARS)["text"]  # type: ignore[return-value]
        except ERRORS as exc:
            raise ResourceError(redact(str(exc))) from None

    return read


def build_server(service: MemoryService, log: Callable[[str], None] = log) -> MemoryServer:
    """The MCP server with memsift's tools (and memory files as resources); ``log`` takes
    what the server reports on stderr."""
    server = MemoryServer(
        SERVER_NAME,
        title="memsift memory",
        instructions=INSTRUCTIONS,
        version=server_version(),
        log_level="WARNING",
    )

    @server.tool(
        name="memory_search",
        title="Search memories",
        description=SEARCH_HELP,
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    async def memory_search(
        query: Annotated[
            str, Field(min_length=1, max_length=2000, description="What to look for, in words.")
        ],
        limit: Annotated[
            int, Field(ge=1, le=MAX_SEARCH_LIMIT, description="How many hits at most."), Number
        ] = 10,
        kinds: Annotated[
            list[Text],
            Field(max_length=20, description="Only these kinds (any of them), e.g. episodic."),
        ] = [],  # noqa: B006 (pydantic copies defaults)
        tags: Annotated[
            list[Text], Field(max_length=20, description="Only memories with all these tags.")
        ] = [],  # noqa: B006
        path_prefix: Annotated[
            str | None, Field(max_length=1000, description="Only paths starting with this.")
        ] = None,
        since: Annotated[
            str | None, Field(max_length=40, description="Event time on/after (ISO 8601).")
        ] = None,
        until: Annotated[
            str | None, Field(max_length=40, description="Event time on/before (ISO 8601).")
        ] = None,
        include_archived: Annotated[
            bool, Field(strict=True, description="Also search archived (forgotten) memories.")
        ] = False,
    ) -> Annotated[CallToolResult, SearchOutput]:
        scope = ScopeSpec(
            tuple(kinds),
            tuple(tags),
            path_prefix or None,
            since or None,
            until or None,
            include_archived,
        )
        args = SearchArgs(query, limit, scope)
        # Inline, not on a worker thread: searches are serialised on the one warm Searcher
        # anyway, and the hop to a thread and back costs more than the statement at 2k files.
        return call(service.search, args)

    @server.tool(
        name="memory_read",
        title="Read a memory",
        description=READ_HELP,
        annotations=ToolAnnotations(read_only_hint=False, idempotent_hint=False),
    )
    def memory_read(
        path: Path_,
        offset: Annotated[int, Field(ge=0, description="Where to start (characters)."), Number] = 0,
        max_chars: Annotated[
            int, Field(ge=1, le=MAX_READ_CHARS, description="Most characters to return."), Number
        ] = READ_CHARS,
    ) -> Annotated[CallToolResult, ReadOutput]:
        return call(service.read, path, offset, max_chars)

    @server.tool(
        name="memory_remember",
        title="Remember something new",
        description=REMEMBER_HELP,
        annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=False),
    )
    def memory_remember(
        title: Annotated[
            str, Field(min_length=1, max_length=300, description="Short and specific.")
        ],
        body: Annotated[
            str, Field(min_length=1, max_length=200_000, description="The memory, in Markdown.")
        ],
        kind: Annotated[
            str,
            Field(
                pattern=r"^[a-z][a-z0-9_-]{0,39}$",
                description="One lower-case word: semantic (a fact), episodic (an event), "
                "procedural (how to), preference, person, task… Names the folder.",
            ),
        ] = "semantic",
        tags: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=50)]],
            Field(max_length=20, description="A few lower-case tags."),
        ] = [],  # noqa: B006
        event_at: Annotated[
            str | None,
            Field(max_length=40, description="When it happened (ISO 8601), for events."),
        ] = None,
    ) -> Annotated[CallToolResult, RememberOutput]:
        return call(service.remember, title, body, kind, list(tags), event_at)

    @server.tool(
        name="memory_reinforce",
        title="Reinforce a memory",
        description=REINFORCE_HELP,
        annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=False),
    )
    def memory_reinforce(
        path: Path_,
        outcome: Annotated[
            Literal[1, -1], Field(description="1: it helped; -1: it misled."), Number
        ],
    ) -> Annotated[CallToolResult, ReinforceOutput]:
        return call(service.reinforce, path, outcome)

    @server.tool(
        name="memory_forget",
        title="Archive a memory",
        description=FORGET_HELP,
        annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=True),
    )
    def memory_forget(path: Path_) -> Annotated[CallToolResult, ForgetOutput]:
        return call(service.forget, path)

    @server.tool(
        name="memory_status",
        title="Memory store status",
        description=STATUS_HELP,
        annotations=ToolAnnotations(read_only_hint=True),
    )
    def memory_status() -> Annotated[CallToolResult, StatusOutput]:
        return call(service.status)

    # One template per media type, HTML first: the SDK labels a template's reads with its one
    # MIME type, and the first template that matches a URI serves it.
    for suffix, mime_type in RESOURCE_TYPES:
        server.resource(
            f"memsift://memory/{{+path}}{suffix}",
            name="memory" + suffix.replace(".", "-"),
            title="A memory file",
            description="One memory file of the store, by its path relative to the store.",
            mime_type=mime_type,
        )(memory_resource(service, suffix))

    for tool in server._tool_manager.list_tools():  # say what call_tool enforces
        tool.parameters["additionalProperties"] = False
    server.log = log  # type: ignore[method-assign]
    return server


def server_version() -> str:
    return memsift_version()


def tool_definitions(service: MemoryService | None = None) -> list[dict[str, object]]:
    """The tools as the server lists them (name, title, description, input and output
    schemas), for the docs build: the page cannot drift from the code."""
    import anyio

    # A service over a store that is never touched: listing tools reads no files.
    server = build_server(service or MemoryService(Store(Path.cwd())))

    async def listed() -> list[dict[str, object]]:
        tools = await server.list_tools()
        return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]

    return anyio.run(listed)


def interrupted(log: Callable[[str], None]) -> None:
    """Ctrl-C in a terminal. A terminal's input is read on a worker thread that no
    cancellation reaches, so a graceful stop would hang until the next line of input; every
    write the server makes is atomic on disk, so ending the process here loses nothing."""
    log("interrupted; stopping")
    os._exit(130)


def run_stdio(server: MCPServer, log: Callable[[str], None]) -> None:
    """Serve over stdin/stdout through memsift's transport (see :mod:`engine.agents.stdio_transport`
    and :mod:`engine.agents.stdio_pipes`); on Windows through the SDK's own."""
    # The SDK's MCPServer.run_stdio_async is exactly this with its threaded streams; the
    # low-level server is reached the same way it does (mcp pinned to 2.x).
    lowlevel = getattr(server, "_lowlevel_server", None)
    if lowlevel is None or not stdio_pipes.usable():
        server.run("stdio")
        return
    anyio.run(serve_wire, lowlevel, log)


async def serve_wire(lowlevel, log: Callable[[str], None]) -> None:  # type: ignore[no-untyped-def]
    with stdio_pipes.claimed() as (wire_in, wire_out):
        reader = stdio_pipes.LineReader(wire_in)
        writer = stdio_pipes.LineWriter(wire_out)
        async with stdio_streams(reader, writer, log) as (read, write):
            await lowlevel.run(read, write, lowlevel.create_initialization_options())


def serve(store: Store, *, watch: bool = True) -> None:
    """Serve ``store`` over stdio until the client closes the connection."""
    freshness = Freshness(store, watch=watch, log=log)
    service = MemoryService(store, freshness=freshness)
    server = build_server(service, log=log)
    redact_logging()  # the SDK's handlers exist now; it logs a tool's crash with its traceback
    signal.signal(signal.SIGINT, lambda *_: interrupted(log))
    freshness.start()
    threading.Thread(target=service.warm, name="memsift-warm", daemon=True).start()
    try:
        run_stdio(server, log)
    finally:
        freshness.stop()
        service.close()
