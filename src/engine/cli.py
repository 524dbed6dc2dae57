"""The ``memsift`` command: thin glue between click and the engine's functions.

Exit codes: 0 success, 1 no result where that matters (a search with no hits, a docs check
that finds a page out of date), 2 bad input or an unusable store, with one line saying what is
wrong and what to do (``--debug`` adds the traceback), and 141 when whoever read the output
closed the pipe before all of it was written (``memsift search x | head -1``), as a shell
reports for any Unix tool SIGPIPE ends.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from importlib.util import find_spec
from pathlib import Path
from typing import Any, NoReturn

import click

from engine import state as state_plane
from engine.arms import ARMS
from engine.errors import DatabaseError, IndexMissing
from engine.files.config import similarity_floor
from engine.files.store import Store, StoreError, open_store
from engine.indexing.embedder import EmbedderError
from engine.indexing.indexer import index_store
from engine.indexing.progress import EMBED_START, LABELS, Pace, periodic_progress, resume_line
from engine.ranking.query import bare_prefix_problem
from engine.ranking.scope import ScopeError, ScopeSpec
from engine.redact import hide_passwords_of, redact, redacted_traceback
from engine.search import SearchResult, search, shown_param
from engine.sqlite.errors import DRIVER_ERRORS
from engine.status import stale_state_paths, store_status
from engine.terminal import printable
from engine.version import memsift_version

#: The status of a command whose reader went away: 128 + SIGPIPE's number, what a shell reports
#: for ``cat`` or ``grep`` ended by SIGPIPE in a pipeline, so a ``set -o pipefail`` script
#: treats memsift as it treats them. Neither 1 (which says "no result") nor 0 (the output was
#: not all delivered, and a caller reading ``--json`` from a pipe that broke must not take a
#: part for the whole).
READER_GONE_EXIT = 141


class ReaderGone(Exception):
    """Whoever read memsift's output (``head``, a pager, a program) closed the pipe before all
    of it was written. Raised in place of the write's ``BrokenPipeError`` where click would
    otherwise catch that and end with status 1, which here means "no result"."""


@contextmanager
def reader_may_leave() -> Iterator[None]:
    """Let a write to a pipe nobody reads any more end the command as :class:`ReaderGone`."""
    try:
        yield
    except BrokenPipeError as exc:
        raise ReaderGone from exc


def end_for_gone_reader() -> NoReturn:
    """End quietly with :data:`READER_GONE_EXIT`: nothing more can reach the reader, and a
    line about the broken pipe, or a traceback, would only be noise (or fail in turn). Both
    streams are pointed at the null device first, so the output still buffered is flushed
    there when Python exits, not reported as one more ``BrokenPipeError``."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        with suppress(AttributeError, OSError, ValueError):  # a stream without a descriptor
            os.dup2(devnull, stream.fileno())
    sys.exit(READER_GONE_EXIT)


class UserError(click.ClickException):
    """A one-line error for the user, exit code 2."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"memsift: {said(self.format_message())}", err=True)


def said(line: str) -> str:
    """A line about the store or its database as it may be printed: any database password
    taken out (:mod:`engine.redact`), control characters escaped."""
    return printable(redact(line))


def print_traceback() -> None:
    """What ``--debug`` shows: the traceback being handled, every password taken out of it
    (the driver's own messages in a chained exception may quote one)."""
    click.echo(redacted_traceback(), err=True, nl=False)


def fail(message: str) -> NoReturn:
    raise UserError(message)


@contextmanager
def user_errors(debug: bool) -> Iterator[None]:
    """Turn the engine's known errors into one-line messages; tracebacks only with --debug."""
    try:
        yield
    except ScopeError as exc:  # said with the options' names: --since, not since
        if debug:
            print_traceback()
        fail(exc.worded(option_name))
    except BrokenPipeError:  # the output's reader left: no fault of the store (see ReaderGone)
        raise
    except (
        DatabaseError,
        StoreError,
        EmbedderError,
        IndexMissing,
        ValueError,
        OSError,
    ) as exc:
        if debug:
            print_traceback()
        fail(str(exc))
    except DRIVER_ERRORS as exc:  # the engine names the database; this is the safety net
        if debug:
            print_traceback()
        fail(f"SQLite: {exc} (rerun with --debug for the traceback, and please report it)")


def option_name(name: str) -> str:
    """A ScopeSpec field as the command line spells its option: path_prefix is --path-prefix."""
    return "--" + name.replace("_", "-")


def warn(message: str) -> None:
    click.echo(f"memsift: warning: {said(message)}", err=True)


def emit(data: object) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def show_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(f"memsift {memsift_version()}")
        ctx.exit()


def set_store_after(ctx: click.Context, _param: click.Parameter, value: Path | None) -> None:
    """``--store`` given after the subcommand wins over the one before it."""
    if value is not None and ctx.obj is not None:
        ctx.obj["store_dir"] = value


class StoreGroup(click.Group):
    """A group whose every subcommand (nested groups' too) also accepts ``--store``, so
    ``memsift search --store DIR QUERY`` works as well as ``memsift --store DIR search QUERY``."""

    group_class = type  # nested groups are StoreGroups too

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        if getattr(cmd, "storeless", False):  # works on something else than a store
            super().add_command(cmd, name)
            return
        if not any(isinstance(p, click.Option) and "--store" in p.opts for p in cmd.params):
            cmd.params.append(
                click.Option(
                    ["--store", "store_after"],
                    type=click.Path(file_okay=False, path_type=Path),
                    expose_value=False,
                    is_eager=True,
                    callback=set_store_after,
                    help="The memory store folder (also accepted before the command).",
                )
            )
        super().add_command(cmd, name)

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        with reader_may_leave():  # --help and --version write while the arguments are read
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        with reader_may_leave():  # every command's output is written in here
            return super().invoke(ctx)


@click.group(cls=StoreGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=show_version,
    help="Show the version and exit.",
)
@click.option(
    "--store",
    "store_dir",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="MEMSIFT_STORE",
    help="The memory store folder. Default: $MEMSIFT_STORE, else the current folder.",
)
@click.option("--debug", is_flag=True, help="Show tracebacks on errors.")
@click.pass_context
def cli(ctx: click.Context, store_dir: Path | None, debug: bool) -> None:
    """Search an AI agent's memory files: index a folder of Markdown/HTML memories, then search
    it with one SQL statement that fuses {rankings} rankings."""
    ctx.obj = {"store_dir": store_dir, "debug": debug}


def get_store(ctx: click.Context) -> Store:
    with user_errors(ctx.obj["debug"]):
        return open_store(ctx.obj["store_dir"])


def terminal_progress() -> tuple[Callable[[str, int, int], None] | None, Callable[[], None]]:
    """A progress bar on stderr when it is a terminal; a line every few seconds otherwise."""
    if not sys.stderr.isatty():
        return periodic_progress(lambda line: click.echo(line, err=True)), lambda: None

    width = 28
    pace = Pace()
    seen: set[str] = set()

    def show(phase: str, done: int, total: int) -> None:
        if phase == "resume":  # a line of its own, before the embedding bar
            click.echo("\r" + " " * 110 + "\r" + resume_line(done, total), err=True)
            return
        rate = pace.text(phase, done, total)
        if phase == "embed" and phase not in seen:  # said once, on a line of its own
            click.echo("\r" + " " * 100 + "\r" + EMBED_START, err=True)
        seen.add(phase)
        label = LABELS.get(phase, phase)
        if total:
            filled = width * done // total
            bar = "[" + "#" * filled + "-" * (width - filled) + "]"
            line = f"{bar} {100 * done // total:>3}% {done}/{total} {label}{rate}"
        else:
            line = f"{done} {label}{rate}"
        click.echo(f"\r{line[:110]:<110}", nl=False, err=True)

    return show, lambda: click.echo("\r" + " " * 110 + "\r", nl=False, err=True)


@cli.command()
@click.option("--no-embed", is_flag=True, help="Index lexically only; no vectors are computed.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary.")
@click.pass_context
def index(ctx: click.Context, no_embed: bool, as_json: bool) -> None:
    """Bring the index in step with the store's files (incremental).

    Unchanged files cost nothing, changed ones are re-indexed, deleted ones disappear, and a
    chunk whose text did not change is not embedded again. Files that cannot be used are
    skipped with a reason and the run goes on.
    """
    store = get_store(ctx)
    progress, done = terminal_progress()
    with user_errors(ctx.obj["debug"]):
        try:
            report = index_store(store, embed=not no_embed, progress=progress)
        finally:
            done()
    if as_json:
        emit(report.summary())
        return
    click.echo(
        f"indexed {len(report.indexed)}, unchanged {report.unchanged}, "
        f"removed {len(report.removed)}, skipped {len(report.skipped)}, "
        f"embedded {report.embedded} chunk(s), reused {report.reused}"
        + (
            # Not "full text only": a chunk counted may hold the text of one within another
            # file's budget, embedded by an earlier run; `status` counts those found by full
            # text only (IndexReport.past_budget).
            f", {report.past_budget} past the per-file embedding budget"
            if report.past_budget
            else ""
        )
    )
    for path, reason in report.skipped:
        click.echo(f"  skipped {printable(path)}: {printable(reason)}")
    for line in report.move_lines():
        click.echo(f"  {printable(line)}")


def scope_options(func: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option(
            "--kind",
            "kinds",
            multiple=True,
            help="Only memories of this kind (repeatable: any of them).",
        ),
        click.option(
            "--tag",
            "tags",
            multiple=True,
            help="Only memories with this tag (repeatable: all of them).",
        ),
        click.option("--path-prefix", help="Only memories whose path starts with this text."),
        click.option("--since", help="Only memories whose event time is on/after this date."),
        click.option("--until", help="Only memories whose event time is on/before this date."),
        click.option("--include-archived", is_flag=True, help="Include archived memories."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@cli.command(name="search", epilog="A word typed as title:word, body:word or tags:word (or a "
    "quoted phrase after the prefix) must occur in that part of a memory.")
@click.argument("query")
@click.option(
    "--limit",
    default=10,
    show_default=True,
    type=click.IntRange(1, 1000),
    help="How many hits to return.",
)
@scope_options
@click.option("--no-vector", is_flag=True, help="Lexical search: skip the semantic arm.")
@click.option(
    "--min-similarity",
    type=click.FloatRange(0, 1),
    default=None,
    help="Answer nothing when no memory holds every query word and none is this similar to "
    "the query (default: [limits] min_similarity, else the floor measured on the store "
    "itself; 0 always answers).",
)
@click.option(
    "--withhold-unseen/--answer-unseen",
    default=None,
    help="--withhold-unseen: answer nothing when the store never wrote a name the query gives "
    "(not even spelt otherwise) or words carrying half of it, unless a memory is 0.6 similar "
    "(the coverage test; a floor set with --min-similarity or [limits] min_similarity is the "
    "whole rule instead); --answer-unseen: answer all the same. Default: [limits] "
    "withhold_unseen, else --withhold-unseen.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--explain", is_flag=True, help="Show each arm's rank and contribution per hit.")
@click.option("--sql", "show_sql", is_flag=True, help="Show the SQL statement and its values.")
@click.pass_context
def search_command(
    ctx: click.Context,
    query: str,
    limit: int,
    kinds: tuple[str, ...],
    tags: tuple[str, ...],
    path_prefix: str | None,
    since: str | None,
    until: str | None,
    include_archived: bool,
    no_vector: bool,
    min_similarity: float | None,
    withhold_unseen: bool | None,
    as_json: bool,
    explain: bool,
    show_sql: bool,
) -> None:
    """Search the store for QUERY.

    One SQL statement fuses the {rankings} rankings. Archived
    memories and tasks are out of scope unless asked for (--include-archived, --kind task).
    Prints rank, title, path and a snippet. A ranking that could not run, and a degraded
    search, are named on stderr with the reason; a normal search prints nothing there. Exit
    code 1 when nothing is found.

    \b
    Examples:
      memsift search "staging database port"
      memsift search "flaky tests" --kind episodic --since 2026-09-01 --explain
      memsift search "rotation" --tag infra --json
      memsift search "rotation" --sql
    """
    store = get_store(ctx)
    if not query.strip():  # as the server refuses it: recency alone is `memsift list`
        fail(
            "the query is empty; say what to look for, in words (`memsift list` shows recent "
            "memories)"
        )
    if problem := bare_prefix_problem(query):
        fail(problem)
    if min_similarity is not None and (problem := similarity_floor(min_similarity)):
        fail(f"--min-similarity {min_similarity}: {problem}")  # nan passes click's range
    spec = ScopeSpec(kinds, tags, path_prefix, since, until, include_archived)
    with user_errors(ctx.obj["debug"]):
        result = search(
            store,
            query,
            limit=limit,
            scope=spec,
            use_vector=not no_vector,
            min_similarity=min_similarity,
            withhold_unseen=withhold_unseen,
        )
    if as_json:
        # Every hit carries its arms' ranks and contributions; --sql adds the statement.
        emit(result.to_json(explain=show_sql))
    else:
        print_result(result, explain, show_sql)
        quiet = set(result.routine_drops) | (vector_arms() if no_vector else set())
        for line in search_account(result, asked_off=quiet):
            click.echo(click.style(f"memsift: {said(line)}", dim=True), err=True)
    if not result.hits:
        ctx.exit(1)


def rankings() -> str:
    """The registry's arms as the help names them: "full-text, semantic, … and date"."""
    names = [arm.label.removesuffix(" ranking") for arm in ARMS]
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)


for command in (cli, search_command):  # help drawn from the registry, never a count to drift
    command.help = (command.help or "").replace("{rankings}", rankings())


def vector_arms() -> set[str]:
    """The arms --no-vector turns off: those that need a query vector."""
    return {arm.name for arm in ARMS if "query_vector" in arm.needs}


def search_account(result: SearchResult, asked_off: set[str]) -> list[str]:
    """What a user must know about how a search ran, one line each, in the user's words: that
    it was degraded, every ranking that could not run and why, and the notes. Nothing for a
    normal search, nor for an arm the user turned off or that dropped in the normal course."""
    lines = ["search degraded: results may be weaker than usual"] if result.degraded else []
    for name, why in result.arms_dropped.items():
        if name not in asked_off:
            lines.append(f"{result.arm_labels.get(name, name)} off: {why}")
    lines += result.notes
    if result.abstained:  # the engine's note names no option: other callers have none
        lines.append(
            "--answer-unseen shows the withheld hits"
            if result.withheld_by == "coverage"
            else "--min-similarity 0 shows the withheld hits"
        )
    return lines


def print_result(result: SearchResult, explain: bool, show_sql: bool) -> None:
    for number, hit in enumerate(result.hits, 1):
        title, path = printable(hit.title), printable(hit.path)
        click.echo(click.style(f"{number:>2}. {title}", bold=True) + f"  [{path}]")
        click.echo(f"    {styled_snippet(printable(hit.snippet))}")
        if hit.copies:  # the same text in other files: folded into this hit
            click.echo(f"    copies: {', '.join(printable(c) for c in hit.copies)}")
        if explain:
            parts = [
                f"{name} #{arm.rank} +{arm.contribution:.5f}" for name, arm in hit.arms.items()
            ]
            summed = ", ".join(parts)
            if hit.authority != 1.0:  # the memory's own tags scaled the fused sum
                signals = ", ".join(hit.authority_signals)
                summed = f"({summed}) x {hit.authority:g} authority ({signals})"
            click.echo(f"    score {hit.score:.5f} = {summed}")
            if hit.above_twin:
                click.echo(
                    f"    ranked above its near-twin {printable(hit.above_twin)}, which denies "
                    "or retires what this one says"
                )
    if explain and result.vector_search not in (None, "exact"):
        click.echo(f"semantic ranking: {result.vector_search}")
    if explain and result.full_text_search not in (None, "exact"):
        click.echo(f"full-text ranking: {result.full_text_search}")
    if explain and result.floor and not result.abstained:  # withheld: the note says it
        click.echo(
            f"no-answer floor: {result.floor}; the nearest memory is {result.best_similarity:.2f} "
            "similar"
        )
    if not result.hits:
        why = " (the scope holds no memories)" if result.empty_scope else ""
        if result.abstained:
            why = " (nothing close enough to be an answer)"
        click.echo("no results" + why)
    if show_sql and not result.sql:
        click.echo("\n-- no SQL statement ran: every ranking was off")
    elif show_sql:
        click.echo("\n-- SQL (bind these values in order: ?1, ?2, ...)")
        click.echo(printable(result.sql, multiline=True))
        values = json.dumps([shown_param(p) for p in result.params], ensure_ascii=False)
        click.echo("-- values: " + printable(values))


def styled_snippet(snippet: str) -> str:
    """Render **word** marks as bold on a terminal (click strips styles when piped)."""
    parts = snippet.split("**")
    return "".join(click.style(p, bold=True) if i % 2 else p for i, p in enumerate(parts))


@cli.command()
@click.argument("path")
@click.option("--json", "as_json", is_flag=True, help="Print the memory and its access record.")
@click.pass_context
def read(ctx: click.Context, path: str, as_json: bool) -> None:
    """Print a memory and record the access in the state plane.

    In a read-only store the memory is still printed; a warning says the access could not be
    counted (--json: "counted": false). A file the index skips (bad front matter, binary) is
    printed too, with a warning saying why no search finds it (--json: "problem").
    """
    from engine.agents.service import read_page

    store = get_store(ctx)
    with user_errors(ctx.obj["debug"]):
        page = read_page(store, path)
    if page.not_counted:
        warn(page.not_counted)
    if page.problem and not as_json:  # as the MCP tool's `problem`: no search finds it
        warn(f"{page.key}: {page.problem}")
    if as_json:
        access = page.access
        emit(
            {
                "path": page.key,
                "text": page.text,
                "problem": page.problem,
                "access_count": access.access_count if access else 0,
                "last_accessed_at": access.last_accessed_at if access else None,
                "outcome_score": access.outcome_score if access else 0.0,
                "counted": page.not_counted is None,
            }
        )
    else:
        text = page.text
        click.echo(printable(text, multiline=True), nl=not text.endswith("\n"))


@cli.command()
@click.argument("path")
@click.option(
    "--outcome",
    type=click.Choice(["1", "-1", "+1"]),
    required=True,
    help="1 if the memory helped, -1 if it misled.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the updated record as JSON.")
@click.pass_context
def reinforce(ctx: click.Context, path: str, outcome: str, as_json: bool) -> None:
    """Fold an outcome into a memory's score (a moving average kept in [-1, 1])."""
    from engine.agents.service import reinforce_memory

    store = get_store(ctx)
    with user_errors(ctx.obj["debug"]):
        access = reinforce_memory(store, path, int(outcome))
    key = access.path
    if as_json:
        emit(
            {
                "path": key,
                "outcome_score": access.outcome_score,
                "access_count": access.access_count,
            }
        )
    else:
        click.echo(f"{printable(key)}: outcome score {access.outcome_score:+.3f}")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Show what the index holds and whether files changed since the last run."""
    store = get_store(ctx)
    with user_errors(ctx.obj["debug"]):
        info = store_status(store)
    if as_json:
        emit(info)
        return
    width = max(map(len, info), default=0)
    for key, value in info.items():
        click.echo(f"{key:>{width}}: {printable(plain(value))}")


def plain(value: object) -> str:
    """A status value as a person reads it (``--json`` keeps the exact values)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{key} {plain(item)}" for key, item in value.items()) or "none"
    if isinstance(value, list | tuple):
        return ", ".join(plain(item) for item in value) or "none"
    return str(value)


@cli.group(name="state")
def state_group() -> None:
    """Inspect and tidy the durable state plane (.memsift/state.db)."""


@state_group.command(name="prune")
@click.option("--dry-run", is_flag=True, help="List the rows that would go; delete nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print what was (or would be) pruned.")
@click.pass_context
def state_prune(ctx: click.Context, dry_run: bool, as_json: bool) -> None:
    """Delete state rows whose memory file no longer exists in the store.

    Nothing else ever deletes state: a memory that disappears keeps its row (it may come back,
    e.g. from version control) until you prune.
    """
    store = get_store(ctx)
    with user_errors(ctx.obj["debug"]):
        stale = stale_state_paths(store)
        removed = 0 if dry_run else state_plane.prune(store, stale)
    if as_json:
        emit({"stale": stale, "removed": removed, "dry_run": dry_run})
        return
    for path in stale:
        click.echo(f"{'would remove' if dry_run else 'removed'} {printable(path)}")
    click.echo(f"{len(stale)} stale row(s); {removed} removed")


def parse_weights(text: str | None) -> dict[str, float]:
    """'fts=1,vector=0.5' to a mapping; a malformed pair is a usage error."""
    weights: dict[str, float] = {}
    for pair in filter(None, (p.strip() for p in (text or "").split(","))):
        name, _, value = pair.partition("=")
        try:
            weights[name.strip()] = float(value)
        except ValueError:
            fail(f"--weights {pair!r}: write arm=number pairs, e.g. fts=1.0,recency=0.2")
    return weights


def select_eval_database(url: str | None) -> None:
    """Point this eval process at ``url``, or at SQLite when none is given: a URL left in the
    environment for a team store must not make eval index corpora into that database."""
    from engine.files.config import database_url as url_problem
    from engine.pg.target import URL_VARIABLE

    if url is None:
        os.environ.pop(URL_VARIABLE, None)
        return
    hide_passwords_of(url)
    if problem := url_problem(url):
        fail(f"--database-url {problem}")
    os.environ[URL_VARIABLE] = url


@cli.command(name="eval")
@click.argument("dataset", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--split", default=None, help="qrels split to score (default: test, or the only one)."
)
@click.option("--arms", default=None, help="Comma-separated arms to fuse, e.g. fts,vector.")
@click.option("--weights", default=None, help="Weight overrides for this run, e.g. recency=0.2.")
@click.option("--ablation", is_flag=True, help="Also score each arm alone and each arm left out.")
@click.option(
    "--keep",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Keep the indexed stores in this folder (new, empty, or made by an earlier --keep); "
    "later runs reuse their vectors.",
)
@click.option(
    "--database-url",
    default=None,
    metavar="URL",
    help="Score the PostgreSQL path: index each set into its own schema (memsift_eval_<set>) "
    "of this database. Without it eval runs on SQLite, even when MEMSIFT_DATABASE_URL is set.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def eval_command(
    ctx: click.Context,
    dataset: Path,
    split: str | None,
    arms: str | None,
    weights: str | None,
    ablation: bool,
    keep: Path | None,
    database_url: str | None,
    as_json: bool,
) -> None:
    """Score search quality on a BEIR-layout set (or a folder of sets).

    The corpus is written to a temporary store, indexed and searched through the normal code
    path; nDCG@10, MRR@10, Recall@5 and Recall@10 are computed with ir-measures, which comes
    with the eval extra (pip install 'memsift[eval]').
    """
    if find_spec("ir_measures") is None:  # before indexing anything for nothing
        fail("memsift eval needs the eval extra: pip install 'memsift[eval]'")
    from engine.measure.evaluate import METRIC_NAMES, DatasetError, evaluate

    select_eval_database(database_url)

    chosen = [a.strip() for a in arms.split(",") if a.strip()] if arms else None
    progress, done = terminal_progress()
    try:
        report = evaluate(
            dataset,
            split=split,
            arms=chosen,
            weights=parse_weights(weights),
            ablation=ablation,
            progress=progress,
            workdir=keep,
            warn=warn,
        )
    except (DatasetError, DatabaseError, ValueError, StoreError, EmbedderError, OSError) as exc:
        if ctx.obj["debug"]:
            print_traceback()
        fail(str(exc))
    finally:
        done()
    for name, rows in report.get("skipped", {}).items():
        click.echo(
            printable(
                f"warning: {name}: {len(rows)} corpus row(s) could not be indexed, e.g. "
                f"{rows[0]['id']}: {rows[0]['reason']}"
            ),
            err=True,
        )
    if as_json:
        emit(report)
        return
    click.echo(printable(f"sets: {', '.join(report['sets'])}  (variant: {report['variant']})"))
    rows = {"overall": report["overall"], **report["by_category"]}
    if "ablation" in report:
        rows = {**rows, **report["ablation"]}
    click.echo(f"{'':<20}{'queries':>8}" + "".join(f"{m:>11}" for m in METRIC_NAMES))
    for name, figures in rows.items():
        click.echo(
            f"{printable(name):<20}{figures['queries']:>8}"
            + "".join(f"{figures[m]:>11.4f}" for m in METRIC_NAMES)
        )


# --------------------------------------------------------------------------- the write path


@cli.command()
@click.option("--title", required=True, help="A short, specific title (it also names the file).")
@click.option(
    "--kind",
    default="semantic",
    show_default=True,
    help="One lower-case word: semantic, episodic, procedural, person, task… (names the folder).",
)
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option(
    "--event-at",
    callback=lambda _ctx, _param, value: event_at_option(value),
    help="When the remembered thing happened (ISO 8601 date/datetime).",
)
@click.option("--body", help="The memory's text. Default: read from stdin.")
@click.option("--no-embed", is_flag=True, help="Index it lexically only (no vector now).")
@click.option("--json", "as_json", is_flag=True, help="Print the new memory's path as JSON.")
@click.pass_context
def remember(
    ctx: click.Context,
    title: str,
    kind: str,
    tags: tuple[str, ...],
    event_at: str | None,
    body: str | None,
    no_embed: bool,
    as_json: bool,
) -> None:
    """Write a new memory file and index it; print its path.

    The file is Markdown with front matter, written whole or not at all under a folder named
    for its kind (KIND/slug-of-title.md); an existing file is never replaced: a clash gets a
    suffix (-2, -3, …).

    \b
    Examples:
      memsift remember --title "Staging DB listens on 6432" --tag infra --body "Behind PgBouncer."
      echo "Priya wants no retries in tests." | memsift remember --title "Priya on retries" \\
          --kind episodic --event-at 2026-09-17
    """
    from engine.agents.write import NotIndexed
    from engine.agents.write import remember as write_memory
    from engine.indexing.embedder import make_embedder

    store = get_store(ctx)
    if body is None:
        if sys.stdin.isatty():
            fail("no body: pass --body TEXT or pipe the memory's text on stdin")
        body = sys.stdin.read()
    problem = None
    with user_errors(ctx.obj["debug"]):
        embedder = None if no_embed else make_embedder(store.config().model)
        try:
            key = write_memory(store, title, body, kind, list(tags), event_at, embedder=embedder)
        except NotIndexed as exc:  # the memory is on disk: a failure would get it written twice
            key, problem = exc.key, str(exc)
    if as_json:
        emit({"path": key, "indexed": problem is None})
    else:
        click.echo(printable(key))
    if problem:
        warn(problem)
    if kind.strip().lower() == "task":
        warn("tasks are out of default searches and lists; find it with --kind task")


def event_at_option(value: str | None) -> str | None:
    """``--event-at`` checked before the body is read, its error naming the option."""
    from engine.agents.write import WriteError, check_event_at

    try:
        check_event_at(value, name="--event-at")
    except WriteError as exc:
        fail(str(exc))
    return value


@cli.command()
@click.argument("path")
@click.option("--undo", is_flag=True, help="Bring an archived memory back (archived: false).")
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
@click.pass_context
def forget(ctx: click.Context, path: str, undo: bool, as_json: bool) -> None:
    """Archive a memory: set `archived: true` in its front matter.

    Nothing is deleted: the file keeps every other byte, stays in the index and comes back
    with --include-archived (or for good with --undo); it only leaves default searches.
    """
    from engine.agents.write import ArchiveResult, NotIndexed
    from engine.agents.write import forget as archive

    store = get_store(ctx)
    problem = None
    with user_errors(ctx.obj["debug"]):
        try:
            outcome = archive(store, path, archived=not undo)
        except NotIndexed as exc:  # the file is changed: say so, and what is left to do
            outcome, problem = ArchiveResult(exc.key, changed=True), str(exc)
    state = "unarchived" if undo else "archived"
    shown = printable(outcome.path)
    if as_json:
        emit(
            {
                "path": outcome.path,
                "archived": not undo,
                "changed": outcome.changed,
                "indexed": problem is None,
            }
        )
    elif outcome.changed:
        click.echo(f"{state} {shown}")
    else:
        click.echo(f"{shown} was already {state}")
    if problem:
        warn(problem)


@cli.command(name="list")
@scope_options
@click.option(
    "--limit",
    default=20,
    show_default=True,
    type=click.IntRange(1, 10_000),
    help="How many memories to list.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@click.pass_context
def list_command(
    ctx: click.Context,
    kinds: tuple[str, ...],
    tags: tuple[str, ...],
    path_prefix: str | None,
    since: str | None,
    until: str | None,
    include_archived: bool,
    limit: int,
    as_json: bool,
) -> None:
    """List the most recent memories in scope (by event time, else modification time).

    The same scope options as search; archived memories and tasks are left out unless asked
    for. Reads the index: run `memsift index` (or keep `memsift watch` running) first.
    """
    from engine.agents.write import list_memories

    store = get_store(ctx)
    spec = ScopeSpec(kinds, tags, path_prefix, since, until, include_archived)
    with user_errors(ctx.obj["debug"]):
        memories = list_memories(store, spec, limit)
    if as_json:
        emit(memories)
        return
    for memory in memories:
        moment = str(memory["event_at"] or memory["updated_at"])[:10]
        kind = memory["kind"] or "-"
        flag = " (archived)" if memory["archived"] else ""
        line = f"{moment}  {kind:<11} {memory['path']}  {memory['title']}{flag}"
        click.echo(printable(line))
    if not memories:
        click.echo(f"no memories in scope ({spec.describe()})", err=True)


# --------------------------------------------------------------------------- agents


@cli.command()
@click.option(
    "--no-watch",
    is_flag=True,
    help="Do not watch the store for changes (still catches up once at start).",
)
@click.pass_context
def serve(ctx: click.Context, no_watch: bool) -> None:
    """Serve the store to AI agents over MCP (stdio).

    Tools: memory_search, memory_read, memory_remember, memory_reinforce, memory_forget,
    memory_status. The server keeps the index following the files (it catches up at start,
    then watches), holds the search engine warm, and logs to stderr only. Register it with an
    MCP client as the command `memsift --store DIR serve`.
    """
    store = get_store(ctx)
    from engine.agents.mcp_server import serve as run_server

    with user_errors(ctx.obj["debug"]):
        run_server(store, watch=not no_watch)


def stop_on_signal(_signum: int, _frame: object) -> None:
    """SIGTERM ends `watch` the way Ctrl-C does; so does Ctrl-C when the parent started it
    with SIGINT ignored (a script's background job), where Python alone would not stop."""
    raise KeyboardInterrupt


@cli.command()
@click.pass_context
def watch(ctx: click.Context) -> None:
    """Keep the index following the store's files until interrupted (Ctrl-C).

    Catches up with what changed since the last run, then indexes each changed file as it is
    saved: lexically at once, vectors right behind. One line per change on stderr.
    """
    import signal
    import time

    from engine.indexing.freshness import Freshness

    store = get_store(ctx)
    freshness = Freshness(
        store, log=lambda line: click.echo(f"memsift watch: {said(line)}", err=True)
    )
    signal.signal(signal.SIGTERM, stop_on_signal)
    signal.signal(signal.SIGINT, stop_on_signal)
    click.echo(f"memsift watch: watching {store.root} (Ctrl-C to stop)", err=True)
    freshness.start()
    try:
        while True:
            time.sleep(0.5)
    except KeyboardInterrupt:
        click.echo("memsift watch: stopping", err=True)
    finally:
        freshness.stop()


# --------------------------------------------------------------------------- docs


def docs_extra() -> None:
    """Stop with one line naming the docs extra when a package of it is missing."""
    try:
        import arms_doc  # noqa: F401
    except ImportError as exc:
        missing = ", ".join(getattr(exc, "missing", ()) or [exc.name or str(exc)])
        fail(f"memsift docs needs the docs extra: pip install 'memsift[docs]' (missing: {missing})")


DOCS_OPTIONS = (
    click.argument(
        "folder", metavar="DIR", type=click.Path(exists=True, file_okay=False, path_type=Path)
    ),
    click.option(
        "-f",
        "--config-file",
        type=click.Path(dir_okay=False, path_type=Path),
        help="The site's mkdocs.yml: its arms-doc entry under plugins: gives the defaults of "
        "the options below (its paths relative to its folder) and repo_url the line links. "
        "Default: mkdocs.yml in the current folder, when there is one.",
    ),
    click.option(
        "--registry",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        help="The arm registry's Python file. Default: arms-doc's registry option, else "
        "src/engine/arms.py.",
    ),
    click.option("--variable", help="The registry's variable. Default: ARMS."),
    click.option(
        "--page", help="The arms page's path inside DIR. Default: reference/rrf-arms.md."
    ),
    click.option(
        "--results",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        help="The benchmark results folder. Default: benchmarks/results; without that folder "
        "there is no Measured page.",
    ),
    click.option(
        "--measured-page",
        help="The Measured page's path inside DIR. Default: reference/measured.md.",
    ),
    click.option(
        "--no-measured", is_flag=True, help="No Measured page, as measured_page: null."
    ),
    click.option(
        "--source-link",
        metavar="TEMPLATE",
        help="Link each arm's lines through this template ({commit}, {path}, {start}, {end}). "
        "Default: arms-doc's source_link, else GitHub-style links from repo_url.",
    ),
    click.option(
        "--tabs",
        is_flag=True,
        help="Each dialect's SQL in a content tab (pymdownx.tabbed, as Material and Zensical "
        "sites have) instead of under a bold heading of its own.",
    ),
)


def docs_options(func: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(DOCS_OPTIONS):
        func = option(func)
    return func


def docs_pages(config_file: Path | None, flags: dict[str, Any]) -> tuple[Any, Any]:
    """The pages' sources and the pages rendered from them (``arms_doc.pages.Sources`` and
    ``Pages``, typed Any: naming them here would load the docs plugin, and with it
    measurement, into every command), as the plugin renders them; the warnings printed; bad
    options and unreadable sources end the command with one line. The caller has checked the
    docs extra (:func:`docs_extra`)."""
    from arms_doc.pages import OptionError, read_errors, render_pages
    from arms_doc.site_options import Flags, SiteConfigError, find_config, read_site, sources_for

    cwd = Path.cwd()
    try:
        site = read_site(find_config(config_file, cwd), cwd)
        sources = sources_for(site, Flags(**flags), cwd).check()
        pages = render_pages(sources)
    except (SiteConfigError, OptionError, *read_errors()) as exc:
        fail(str(exc))
    for warning in pages.warnings:
        warn(warning)
    return sources, pages


class SiteGroup(click.Group):
    """A group about a documentation site, not a store: its commands take no ``--store``."""

    storeless = True


@cli.group(name="docs", cls=SiteGroup)
def docs_group() -> None:
    """Write the arms reference page as Markdown files, or check committed ones.

    For a site whose generator runs no MkDocs plugins (Zensical, MkDocs 2, Sphinx with MyST,
    a README): `docs write` puts in files what the arms-doc plugin renders at build time, and
    `docs check` fails in CI when they no longer match the registry. Needs the docs extra
    (pip install 'memsift[docs]').
    """


@docs_group.command(name="write")
@docs_options
@click.option(
    "--force",
    is_flag=True,
    help="Replace a file at a page's path even though memsift docs write did not write it.",
)
def docs_write(folder: Path, config_file: Path | None, force: bool, **flags: Any) -> None:
    """Write the arms page, and the Measured page when there are results, into DIR.

    The pages are plain Markdown (tables, fenced code, an HTML comment) that any generator
    renders; --tabs adds content tabs. Each carries a 'Written by memsift docs write' comment,
    and only a file with that comment is ever replaced (--force replaces any file). A page that
    already holds its text is left untouched. Exit codes: 0 written, 2 bad input or a file in
    the way.
    """
    docs_extra()
    from arms_doc.written import InTheWay, leftover, planned, write_pages

    sources, pages = docs_pages(config_file, flags)
    try:
        done = write_pages(planned(pages, sources, folder, str(folder)), force=force)
    except InTheWay as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write the pages into {folder}: {exc}")
    for page, changed in done:
        click.echo(f"{'wrote' if changed else 'unchanged'} {printable(page.shown)}")
    if (stale := leftover(sources, folder, str(folder))) is not None:
        old, why = stale
        warn(f"{old.shown} was written earlier, but {why}, so no Measured page is made; delete it")


@docs_group.command(name="check")
@docs_options
@click.option(
    "--strict",
    is_flag=True,
    help="Fail on warnings too: the registry's quality warnings and stale results, which fail "
    "mkdocs build --strict with the plugin.",
)
@click.pass_context
def docs_check(
    ctx: click.Context, folder: Path, config_file: Path | None, strict: bool, **flags: Any
) -> None:
    """Check that the pages in DIR are what memsift docs write would write now.

    Give it the options given to docs write. Each page that differs is named with the sections
    that changed, and its unified diff is printed. Exit codes: 0 up to date, 1 a page differs
    or is missing (or, with --strict, there were warnings), 2 bad input.
    """
    docs_extra()
    from arms_doc.written import differences, leftover, planned

    sources, pages = docs_pages(config_file, flags)
    files = planned(pages, sources, folder, str(folder))
    found = differences(files, leftover(sources, folder, str(folder)))
    for difference in found:
        changed = f" (changed: {'; '.join(difference.sections)})" if difference.sections else ""
        click.echo(
            printable(f"memsift docs check: {difference.page.shown} {difference.problem}{changed}"),
            err=True,
        )
        for line in difference.diff:
            click.echo(printable(line))
    if found:
        if any(difference.page in files for difference in found):
            force = any(difference.foreign for difference in found)
            click.echo(
                f"memsift docs check: run `memsift docs write {printable(str(folder))}"
                f"{' --force' if force else ''}` with the same options to write the pages again"
                + (" (--force: a page at their path was not written by it)" if force else ""),
                err=True,
            )
        ctx.exit(1)
    if strict and pages.warnings:
        click.echo(
            f"memsift docs check: {len(pages.warnings)} warning(s) in strict mode", err=True
        )
        ctx.exit(1)
    click.echo(f"up to date: {', '.join(printable(page.shown) for page in files)}")


def main() -> None:
    """Console entry point: the last line of defence keeps tracebacks behind --debug (and
    passwords out of them)."""
    try:
        try:
            cli(prog_name="memsift")
        except (ReaderGone, BrokenPipeError):  # the latter: an error's line to a closed stderr
            end_for_gone_reader()
        except Exception as exc:
            if "--debug" in sys.argv[1:]:
                print_traceback()
            click.echo(
                f"memsift: unexpected {type(exc).__name__}: {said(str(exc))} "
                "(rerun with --debug for the traceback, and please report it)",
                err=True,
            )
            sys.exit(2)
    except BrokenPipeError:  # the line about an unexpected error could not be written either
        end_for_gone_reader()


if __name__ == "__main__":  # python -m engine.cli, as from a checkout without the script
    main()
