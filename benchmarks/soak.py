"""Two ``memsift serve`` processes and a CLI writer on one store: is any access or outcome lost?

    python benchmarks/soak.py [--runs 3] [--server-calls 300] [--cli-calls 100]
                              [--in-flight 64] [--out benchmarks/results/soak.json]

Each run makes a fresh lexical store (``model = "none"``, so servers start at once) of a few
memories, starts two servers driven by the MCP SDK's own client, and has each keep its calls
pipelined (``--in-flight`` at a time, more than the worker threads a server runs them on):
mostly ``memory_read`` and ``memory_reinforce`` (random memory, random outcome), some
``memory_remember``. Meanwhile ``memsift read``, ``memsift reinforce`` and now and then
``memsift remember`` run as one-shot processes, two at a time; the servers go on until the CLI
is done (and at least ``--server-calls``), so the three sources overlap throughout. Every
answer is kept, then checked against the store:

* every call was answered without an error (a server's status calls too);
* each memory's ``access_count`` in state.db is the number of reads made of it, and the counts
  the reads answered are exactly 1..n (no read counted twice, none skipped);
* the outcome score is every answered reinforcement folded in once: each answer is the score
  after its own step (0.7 old + 0.3 outcome), so the answers must chain from 0 to the final
  score using every one of them (see :func:`outcome_chain`);
* every remembered memory is on disk exactly once, and (once the watchers settle) indexed once.

The figures go to ``benchmarks/results/soak.json`` (``engine.measure.results_schema.SoakResults``).
Nothing is timed against a target; the answer times' tail says how near a call came to the
busy timeout. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import apsw
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from stamp import make_stamp
from timing import load_average, log, stats

from engine.files.store import open_store
from engine.indexing.indexer import index_store
from engine.measure.results_schema import (
    LoadWindow,
    SoakCheck,
    SoakResults,
    SoakRun,
    SoakSettings,
    Timing,
    write_results,
)
from engine.state import OUTCOME_ALPHA

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "src"
DEFAULT_OUT = REPO / "benchmarks" / "results" / "soak.json"
CLI = [sys.executable, "-c", "from engine.cli import main; main()"]
#: How long to wait for a server's answer, or for the watchers to settle.
DEADLINE_S = 600


@dataclass
class Call:
    """One call made and what it answered (``error`` set when it failed)."""

    source: str
    tool: str
    path: str | None = None
    outcome: int | None = None
    title: str | None = None
    answer: dict[str, object] = field(default_factory=dict)
    error: str | None = None
    #: Whether the answer's score is rounded (the server answers 4 decimals, the CLI all).
    rounded: bool = False
    #: Seconds from sending the call to its answer.
    seconds: float = 0.0


def memory_text(number: int) -> str:
    return f"---\ntitle: Soak memory {number}\n---\nSoak memory number {number}, for reading.\n"


def make_store(root: Path, memories: int, model: str) -> list[str]:
    """A store of ``memories`` files, indexed lexically, whose embedder is ``model`` ("none":
    lexical only); returns their keys."""
    (root / ".memsift").mkdir(parents=True)
    (root / ".memsift" / "config.toml").write_text(f'[embedder]\nmodel = "{model}"\n')
    keys = []
    for number in range(memories):
        key = f"facts/m{number:02d}.md"
        (root / key).parent.mkdir(exist_ok=True)
        (root / key).write_text(memory_text(number))
        keys.append(key)
    index_store(open_store(root), embed=False)
    return keys


def server_parameters(root: Path, src: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[*CLI[1:], "--store", str(root), "serve"],
        env={"PYTHONPATH": str(src), "PATH": os.environ.get("PATH", "")},
    )


class Planner:
    """The calls one source makes, one at a time: reads and reinforcements of random memories
    (random outcomes), and a share ``remembers`` of new memories under titles no other call
    uses."""

    def __init__(self, rng: random.Random, source: str, keys: list[str], remembers: float):
        self.rng = rng
        self.source = source
        self.keys = keys
        self.remembers = remembers
        self.made = 0

    def next(self) -> Call:
        self.made += 1
        roll = self.rng.random()
        if roll < self.remembers:
            return Call(self.source, "remember", title=f"Soak {self.source} note {self.made}")
        path = self.rng.choice(self.keys)
        if roll < (1 + self.remembers) / 2:
            return Call(self.source, "read", path=path)
        return Call(self.source, "reinforce", path=path, outcome=self.rng.choice((1, -1)))


async def status_call(client: Client, source: str, calls: list[Call]) -> dict[str, object]:
    """``memory_status``, kept among the calls (an answer like any other: it must not fail)."""
    call = Call(source, "status")
    sent = time.perf_counter()
    result = await client.call_tool("memory_status", {})
    call.seconds = time.perf_counter() - sent
    if result.is_error:
        call.error = result.content[0].text  # type: ignore[union-attr]
    else:
        call.answer = dict(result.structured_content or {})
    calls.append(call)
    return call.answer


async def serve_calls(
    root: Path,
    src: Path,
    planner: Planner,
    at_least: int,
    in_flight: int,
    ready: anyio.Event,
    until: anyio.Event,
) -> tuple[list[Call], float]:
    """Start a server of its own and keep ``in_flight`` calls pipelined to it until it has made
    ``at_least`` and ``until`` is set (the CLI writer is done: the sources overlap all along);
    then wait for its watcher to settle. Returns the calls (its status calls included) and the
    seconds from the first call to the last answer. ``ready``: set once it has caught up."""
    calls: list[Call] = []
    source = planner.source
    async with Client(server_parameters(root, src), cache=None) as client:
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            status = await status_call(client, source, calls)
            if (status.get("freshness") or {}).get("caught_up"):  # type: ignore[union-attr]
                break
            await anyio.sleep(0.1)
        ready.set()
        slots = anyio.Semaphore(in_flight)
        started = time.perf_counter()

        async def one(call: Call) -> None:
            try:
                if call.tool == "read":
                    args: dict[str, object] = {"path": call.path}
                elif call.tool == "reinforce":
                    args = {"path": call.path, "outcome": call.outcome}
                else:
                    args = {"title": call.title, "body": f"{call.title}: written by the soak."}
                sent = time.perf_counter()
                result = await client.call_tool(f"memory_{call.tool}", args)
                call.seconds = time.perf_counter() - sent
            finally:
                slots.release()
            if result.is_error:
                call.error = result.content[0].text  # type: ignore[union-attr]
            else:
                call.answer = dict(result.structured_content or {})
            call.rounded = True

        async with anyio.create_task_group() as group:
            while planner.made < at_least or not until.is_set():
                await slots.acquire()
                call = planner.next()
                calls.append(call)
                group.start_soon(one, call)
        elapsed = time.perf_counter() - started
        await settle(client, source, calls)
    return calls, elapsed


async def settle(client: Client, source: str, calls: list[Call]) -> None:
    """Wait until the server's watcher has nothing pending (it indexes the others' writes)."""
    quiet = 0
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline and quiet < 5:
        status = await status_call(client, source, calls)
        freshness = status.get("freshness") or {}
        quiet = quiet + 1 if not freshness.get("pending_files") else 0  # type: ignore[union-attr]
        await anyio.sleep(0.2)


async def cli_calls(root: Path, src: Path, calls: list[Call], parallel: int) -> float:
    """Run ``calls`` as one-shot ``memsift`` processes, ``parallel`` at a time."""
    limiter = anyio.CapacityLimiter(parallel)
    env = {**os.environ, "PYTHONPATH": str(src)}
    started = time.perf_counter()

    async def one(call: Call) -> None:
        if call.tool == "read":
            args = ["read", str(call.path), "--json"]
        elif call.tool == "reinforce":
            args = ["reinforce", str(call.path), "--outcome", str(call.outcome), "--json"]
        else:
            body = f"{call.title}: written by the soak."
            args = ["remember", "--title", str(call.title), "--body", body, "--json"]
        async with limiter:
            sent = time.perf_counter()
            done = await anyio.run_process(
                [*CLI, "--store", str(root), *args], check=False, env=env
            )
            call.seconds = time.perf_counter() - sent
        if done.returncode != 0:
            call.error = done.stderr.decode(errors="replace").strip() or f"exit {done.returncode}"
        else:
            call.answer = json.loads(done.stdout)

    async with anyio.create_task_group() as group:
        for call in calls:
            group.start_soon(one, call)
    return time.perf_counter() - started


def final_state(root: Path) -> dict[str, tuple[int, float]]:
    """Each state row's (access_count, outcome_score), read straight from state.db."""
    conn = apsw.Connection(str(root / ".memsift" / "state.db"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        rows = conn.execute("SELECT path, access_count, outcome_score FROM access").fetchall()
    finally:
        conn.close()
    return {path: (count, score) for path, count, score in rows}


def step(score: float, outcome: int) -> float:
    """The engine's fold of one outcome into a score (the same floating-point operations)."""
    return max(-1.0, min(1.0, (1 - OUTCOME_ALPHA) * score + OUTCOME_ALPHA * outcome))


def outcome_chain(calls: list[Call], final: float) -> bool:
    """Whether the answered reinforcements of one memory fold, each once, from 0 to ``final``.

    Each answer is the score right after its own step, so some order of the calls must have
    every answer equal to ``step(previous answer, its outcome)``. A search with backtracking:
    two calls of different outcomes can both fit one moment (a score that comes back to an
    earlier value), so the first fit is not always the right one."""
    tolerance = {True: 0.5e-4 + 1e-12, False: 1e-12}
    remaining = list(calls)
    seen: set[tuple[float, frozenset[int]]] = set()

    def search(score: float, left: frozenset[int]) -> bool:
        if not left:
            return abs(score - final) <= 1e-12
        if (score, left) in seen:
            return False
        seen.add((score, left))
        tried = set()
        for index in sorted(left):
            call = remaining[index]
            nxt = step(score, int(call.outcome or 0))
            got = float(call.answer["outcome_score"])  # type: ignore[arg-type]
            key = (call.outcome, call.rounded, got)
            if key in tried or abs(got - nxt) > tolerance[call.rounded]:
                continue
            tried.add(key)
            if search(nxt, left - {index}):
                return True
        return False

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(calls) + 100))
    return search(0.0, frozenset(range(len(remaining))))


TITLE = re.compile(r"^title: (.*)$", re.MULTILINE)


def titles_on_disk(root: Path) -> Counter[str]:
    counts: Counter[str] = Counter()
    for path in root.rglob("*.md"):
        if ".memsift" in path.parts:
            continue
        found = TITLE.search(path.read_text(encoding="utf-8"))
        if found:
            counts[found.group(1).strip().strip("\"'")] += 1
    return counts


def indexed_paths(root: Path) -> Counter[str]:
    conn = apsw.Connection(str(root / ".memsift" / "index.db"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return Counter(row[0] for row in conn.execute("SELECT path FROM files"))
    finally:
        conn.close()


def check(root: Path, keys: list[str], calls: list[Call]) -> SoakCheck:
    """Every figure of one run, from its answers and the store they left."""
    errors = [call for call in calls if call.error is not None]
    answered = [call for call in calls if call.error is None]
    state = final_state(root)
    reads_wrong = outcomes_wrong = 0
    for key in keys:
        reads = [c for c in answered if c.tool == "read" and c.path == key]
        count = state.get(key, (0, 0.0))[0]
        counts = sorted(int(c.answer["access_count"]) for c in reads)  # type: ignore[arg-type]
        if count != len(reads) or counts != list(range(1, len(reads) + 1)):
            reads_wrong += 1
        outcomes = [c for c in answered if c.tool == "reinforce" and c.path == key]
        if not outcome_chain(outcomes, state.get(key, (0, 0.0))[1]):
            outcomes_wrong += 1
    remembers = [c for c in calls if c.tool == "remember"]
    on_disk = titles_on_disk(root)
    index = indexed_paths(root)
    # An answered memory is on disk exactly once; a failed remember may have left no file,
    # never two.
    not_once = [
        c.title
        for c in remembers
        if on_disk[str(c.title)] != 1 and (c.error is None or on_disk[str(c.title)] > 1)
    ]
    written = [str(c.answer.get("path")) for c in remembers if c.error is None]
    not_indexed_once = [path for path in written if index[path] != 1]
    return SoakCheck(
        calls=len(calls),
        calls_by_tool=dict(Counter(f"{c.source} {c.tool}" for c in calls)),
        errors=len(errors),
        errors_by_tool=dict(Counter(f"{c.source} {c.tool}" for c in errors)),
        error_samples=tuple(sorted({str(c.error)[:300] for c in errors})[:5]),
        reads=sum(1 for c in answered if c.tool == "read"),
        reads_counted=sum(state.get(key, (0, 0.0))[0] for key in keys),
        memories_with_wrong_counts=reads_wrong,
        reinforcements=sum(1 for c in answered if c.tool == "reinforce"),
        memories_with_broken_outcome_chain=outcomes_wrong,
        remembers=len(remembers),
        remembered_not_once_on_disk=len(not_once),
        answered_not_indexed=sum(1 for c in remembers if c.answer.get("indexed") is False),
        remembered_not_indexed_once_after_settling=len(not_indexed_once),
        latency=latencies(calls),
    )


def latencies(calls: list[Call]) -> dict[str, Timing]:
    """Per source and tool, how long the calls took (a call near the busy timeout is a call
    that nearly failed)."""
    groups: dict[str, list[float]] = {}
    for call in calls:
        groups.setdefault(f"{call.source} {call.tool}", []).append(call.seconds)
    return {name: Timing(**stats(times)) for name, times in sorted(groups.items())}


def one_run(number: int, args: argparse.Namespace) -> SoakRun:
    rng = random.Random(args.seed + number)
    workdir = Path(tempfile.mkdtemp(prefix="memsift-soak-"))
    root = workdir / "store"
    try:
        keys = make_store(root, args.memories, args.model)
        planners = [
            Planner(random.Random(rng.random()), f"serve-{n}", keys, args.remember_share)
            for n in (1, 2)
        ]
        writer_planner = Planner(random.Random(rng.random()), "cli", keys, args.remember_share)
        cli = [writer_planner.next() for _ in range(args.cli_calls)]
        served: list[Call] = []
        elapsed: dict[str, float] = {}
        load_before = load_average()

        async def main() -> None:
            ready = [anyio.Event(), anyio.Event()]
            cli_done = anyio.Event()

            async def server(index: int) -> None:
                calls, seconds = await serve_calls(
                    root,
                    args.src,
                    planners[index],
                    args.server_calls,
                    args.in_flight,
                    ready[index],
                    cli_done,
                )
                served.extend(calls)
                elapsed[planners[index].source] = seconds

            async def writer() -> None:
                for event in ready:
                    await event.wait()
                elapsed["cli"] = await cli_calls(root, args.src, cli, args.cli_parallel)
                cli_done.set()

            async with anyio.create_task_group() as group:
                group.start_soon(server, 0)
                group.start_soon(server, 1)
                group.start_soon(writer)

        anyio.run(main)
        result = check(root, keys, served + cli)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return SoakRun(
        run=number + 1,
        elapsed_s={name: round(seconds, 2) for name, seconds in sorted(elapsed.items())},
        load_average=LoadWindow(tuple(load_before), tuple(load_average())),
        check=result,
    )


def report(run: SoakRun) -> str:
    c = run.check
    times = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in run.elapsed_s.items())
    lines = [
        f"run {run.run}: {c.calls} calls, {c.errors} errors {c.errors_by_tool or ''} ({times})",
        "  " + ", ".join(f"{name} {count}" for name, count in sorted(c.calls_by_tool.items())),
        f"  reads {c.reads} answered, {c.reads_counted} counted; "
        f"memories with a wrong count: {c.memories_with_wrong_counts}",
        f"  reinforcements {c.reinforcements}; memories whose outcomes do not chain: "
        f"{c.memories_with_broken_outcome_chain}",
        f"  remembers {c.remembers}: not once on disk {c.remembered_not_once_on_disk}, "
        f"answered indexed:false {c.answered_not_indexed}, not indexed once after settling "
        f"{c.remembered_not_indexed_once_after_settling}",
    ]
    for source in ("serve", "cli"):
        mine = {k: v for k, v in c.latency.items() if k.startswith(source) and "status" not in k}
        if mine:
            name, slowest = max(mine.items(), key=lambda item: item[1].max_ms or 0.0)
            lines.append(
                f"  slowest {source} call: {name} {(slowest.max_ms or 0) / 1000:.1f} s "
                f"(its p95 {slowest.p95_ms / 1000:.2f} s)"
            )
    lines += [f"  error: {sample}" for sample in c.error_samples]
    return "\n".join(lines)


def lost_nothing(run: SoakRun) -> bool:
    c = run.check
    return not (
        c.errors
        or c.memories_with_wrong_counts
        or c.memories_with_broken_outcome_chain
        or c.remembered_not_once_on_disk
        or c.remembered_not_indexed_once_after_settling
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="soaks in a row, each on a new store")
    parser.add_argument("--server-calls", type=int, default=300, help="calls per server")
    parser.add_argument("--cli-calls", type=int, default=100, help="one-shot CLI calls")
    parser.add_argument("--cli-parallel", type=int, default=2, help="CLI processes at a time")
    parser.add_argument("--in-flight", type=int, default=64, help="pipelined calls per server")
    parser.add_argument("--memories", type=int, default=8, help="memories read and reinforced")
    parser.add_argument("--remember-share", type=float, default=0.1, help="share of remembers")
    parser.add_argument(
        "--model", default="none", help='the store\'s embedder ("none": lexical, starts at once)'
    )
    parser.add_argument(
        "--src",
        type=Path,
        default=SRC,
        help="the engine the servers and the CLI run (default: this checkout's src/); "
        "another commit's, to soak it as it was",
    )
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results JSON")
    args = parser.parse_args(argv)
    if args.src.resolve() != SRC and args.out == DEFAULT_OUT:
        parser.error("--src needs --out: results/soak.json holds this checkout's figures")
    started = time.perf_counter()
    runs = []
    for number in range(args.runs):
        log(f"soak run {number + 1} of {args.runs}…")
        run = one_run(number, args)
        print(report(run), flush=True)
        runs.append(run)
    results = SoakResults(
        stamp=make_stamp("soak"),
        settings=SoakSettings(
            servers=2,
            server_calls=args.server_calls,
            in_flight=args.in_flight,
            cli_calls=args.cli_calls,
            cli_parallel=args.cli_parallel,
            memories=args.memories,
            remember_share=args.remember_share,
            seed=args.seed,
            model=args.model,
        ),
        runs=tuple(runs),
        elapsed_s=round(time.perf_counter() - started, 1),
    )
    write_results(results, args.out)
    log(f"wrote {args.out}")
    return 0 if all(lost_nothing(run) for run in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
