"""The Measured page written as Markdown, in plain Python, from the page laid out by
:func:`arms_doc.measured.measured_context`.

It was a Jinja template, but compiling its 600 lines was about 90 ms of a first build (a fresh
checkout's, or CI's: nothing cached), most of what the plugin cost there; rendering it was a
few. So the page is written here: a function per ``##`` section, a table helper, every figure
through the filters of :mod:`arms_doc.render`, every name or label from a results file through
:func:`~arms_doc.render.escape_html` (and :func:`~arms_doc.render.cell` inside a table). The
fixed prose is in the paragraph constants beside the section that writes it, with ``{field}``
places for what the results fill in.

A field the page needs and the results lack fails the build with an AttributeError or a
KeyError naming it, as the template's StrictUndefined did, never a blank on the page.

Each section function returns the section's lines (without their newlines), ending with the
blank line that separates it from the next.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, TypeVar

from arms_doc.render import (
    cell,
    delta,
    escape_html,
    mib,
    ms,
    number,
    percent,
    ratio,
    score,
    share,
    slug,
    thousands,
    when,
)

if TYPE_CHECKING:
    from arms_doc.measured import MeasuredPage
    from engine.measure.results_schema import (
        AbstentionResults,
        Calibration,
        DocsBuildResults,
        IndexingResults,
        LatencyResults,
        LeverTrials,
        Metrics,
        PluginPhases,
        QualityResults,
        QualitySet,
        ScaleStore,
        SiteBuilds,
        StoreMcp,
        Target,
        Tuning,
    )

T = TypeVar("T")
#: A table cell's text; None is a cell left empty.
Cell = str | None


# --------------------------------------------------------------------------- helpers


def row(cells: Iterable[Cell]) -> str:
    """One line of a Markdown table: each cell between pipes. None is a cell left empty
    (``| |``); an empty string is text that happens to be empty (``|  |``)."""
    return "|" + "".join(" |" if text is None else f" {text} |" for text in cells)


def table(head: Sequence[str], rows: Iterable[Sequence[Cell]]) -> list[str]:
    """A Markdown table: the head, its rule, a line per row (cells written as given)."""
    return [row(head), row(["---"] * len(head)), *(row(cells) for cells in rows)]


def columns(head: str) -> list[str]:
    """A table's head written as it reads: ``"Set | Queries"`` -> ``["Set", "Queries"]``."""
    return head.split(" | ")


def text_cell(text: str) -> str:
    """Text from a results file in a table cell: shown as written, on one line. Its
    backslashes are escaped too: one before a pipe would escape the backslash that escapes
    the pipe, and the cell would end there."""
    return cell(escape_html(text).replace("\\", "\\\\"))


def scores(metrics: Metrics) -> list[str]:
    """A ranking's quality figures, a cell each, in the page's metric order."""
    return [score(value) for value in metrics.scores()]


def joined(values: Iterable[object]) -> str:
    """Load averages as the page lists them: each as Python prints it, comma separated."""
    return ", ".join(map(str, values))


def lines_of(paragraphs: str, **fields: object) -> list[str]:
    """Fixed prose with its ``{field}`` places filled, as lines."""
    return paragraphs.format(**fields).split("\n")


def required(value: T | None, field: str) -> T:
    """``value``, which the page needs: None fails the build naming the field, as the
    template's StrictUndefined did, instead of leaving a blank on the page."""
    if value is None:
        raise AttributeError(f"the Measured page needs {field}, which the results lack")
    return value


def not_recorded(page: MeasuredPage, what: str, name: str, command: str) -> list[str]:
    """A section whose results file does not exist: say so, and how to make it."""
    return [
        f"No {what} results are recorded: `{page.folder}/{name}` does not exist; run "
        f"`{command}` to make it.",
        "",
    ]


def targets_table(targets: Sequence[Target], measured: Callable[[Target], str]) -> list[str]:
    """A benchmark's targets, each met or missed; ``measured`` prints the measured figure."""
    rows = [
        [
            text_cell(target.name),
            text_cell(target.target),
            measured(target),
            "met" if target.met else "**missed**",
        ]
        for target in targets
    ]
    return [*table(columns("Target | Goal | Measured | Result"), rows), ""]


def run_load(
    start: tuple[float, ...],
    cpus: int | None,
    elapsed_s: float,
    *,
    end: tuple[float, ...] | None = None,
    busy: str | None = None,
) -> list[str]:
    """A run's closing line: the load average it started (and ended) with, on how many CPUs,
    ``busy`` when more than half of them were busy at the start, and how long it took."""
    text = f"Load average when the run started: {joined(start)}"
    if end is not None:
        text += f", when it ended: {joined(end)}"
    if cpus:
        text += f" on {cpus} CPUs"
        if busy is not None and start and start[0] > cpus / 2:
            text += f" ({busy})"
    return [f"{text}. The whole run took {elapsed_s:.0f} s.", ""]


# --------------------------------------------------------------------------- the page


def render_measured(page: MeasuredPage) -> str:
    """The Measured page's Markdown (see :func:`arms_doc.measured.measured_context`)."""
    lines = [line for section in SECTIONS for line in section(page)]
    return "\n".join(lines).rstrip("\n") + "\n"


WRITTEN_COMMENT = (
    "<!-- Written by memsift docs write from {folder}/*.json. Re-run the benchmarks and memsift "
    "docs write, not this page; memsift docs check fails while this file no longer matches "
    "them. -->"
)
BUILT_COMMENT = (
    "<!-- Generated by the arms-doc MkDocs plugin from {folder}/*.json. Re-run the benchmarks, "
    "not this page. -->"
)
INTRODUCTION = """\
How well memsift's search finds what was asked for, and how fast, as measured by the scripts
in `benchmarks/` and committed to `{folder}/`. {made} Each file is stamped with the ranking it \
measured: every arm's name, weight, needs and
SQL in `{registry}`, the fusion constant and the embedder (not the arms' prose). When the
ranking has changed since, {warns} until the benchmark is run again.
"""
STALE = """\
> **Stale:** `{file}` was measured with another ranking than `{registry}` now
> describes, so its figures may no longer hold. Refresh them with `{command}` and
> commit the file.
"""


def introduction(page: MeasuredPage) -> list[str]:
    """The title, a comment on where the page comes from, what the page is, and a warning for
    each results file measured with another ranking than the registry's now."""
    if page.written:
        comment = WRITTEN_COMMENT
        made = "`memsift docs write` made this page from those files."
        warns = (
            "`memsift docs write` and `memsift docs check` warn that the figures are stale (and\n"
            "`memsift docs check --strict` fails)"
        )
    else:
        comment = BUILT_COMMENT
        made = "This page is made from those files in every\nbuild."
        warns = "the build warns that the figures are stale (and\n`mkdocs build --strict` fails)"
    lines = ["# Measured", "", comment.format(folder=page.folder), ""]
    lines += lines_of(
        INTRODUCTION, folder=page.folder, registry=page.registry, made=made, warns=warns
    )
    for stale in page.stale:
        lines += lines_of(STALE, file=stale.file, registry=page.registry, command=stale.command)
    return lines


HOW_THE_FIGURES_WERE_MADE = """\
- **Quality**: `{c.quality}` runs the same code as `memsift eval --ablation` on
  every evaluation set: it writes the set's corpus as a memory store in a temporary folder,
  indexes it with the normal indexer and the default embedder, runs every query through the
  normal search, and scores the top 10 hits with ir-measures: nDCG@10, MRR@10, Recall@5 and
  Recall@10, averaged over the judged queries. The ablation repeats the queries with each arm
  of the registry alone and with each arm left out (its weight set to 0). To check a set
  yourself: `{c.eval}` (add `--json` for machines).
- **Quality on PostgreSQL**: `{c.quality_pg}` runs the same evaluation with the
  sets indexed into a PostgreSQL database (the path of `memsift eval --database-url`): the
  fusion and each arm that finds candidates alone.
- **No answer**: `{c.abstention}` asks stores of real documents questions they
  answer and questions they do not, through the normal search, with the fixed floor and with
  the store's own (see the section below).
- **Latency**: `{c.latency}` builds synthetic stores (Zipf-distributed vocabulary,
  realistic lengths, about 1.5 chunks per file, random unit vectors, some access rows) and
  times `search()` end to end, fused and with each arm alone, with the query vector handed
  over precomputed (embedding time is excluded). In the same run it times the floor: an exact
  NumPy dot-product top-k over the same vectors, held in memory. It also measures indexing
  throughput and the indexer's overhead over the raw embedder.
- **Agents**: `{c.mcp}` starts `memsift serve` on synthetic stores of Markdown
  files (indexed by the normal indexer, random unit vectors under the real model's name) and
  drives it with the MCP SDK's own client over stdio, one request at a time, as an agent's
  client does: a timed search includes the round trip and the real model embedding the query.
  Beside it, the same searches through `MemoryService` in the benchmark's own process (no
  protocol), the query embedding alone, `memsift search` run as a new process per query (what
  an agent without the server pays), and `memory_remember` (write, index and embed one memory).
- **Scale**: `{c.scale}` writes synthetic stores of up to a million memories straight
  into the index tables of SQLite and of PostgreSQL (nothing is embedded: a million texts cannot
  be embedded on two cores in a day), then times the fused search on each, exactly and, on
  PostgreSQL, through a pgvector HNSW index, whose recall it scores against the exact scan.
- **The docs build**: `{c.docs_build}` builds sites with this page's plugin,
  without it, and with its two pages as plain files, each build a new Python process, round
  after round in rotating order, and times each of the plugin's steps (see its section).
- **Indexing**: `{c.indexing}` indexes a store of real documents found on the
  machine (Python packages' and Debian's docs, whole, huge files included) from scratch with
  this commit's code and with the code before the per-file embedding budget, each as
  `memsift index` in a fresh process, and asks the store's known-item questions under
  several budgets (see the last section).
"""


def how_the_figures_were_made(page: MeasuredPage) -> list[str]:
    """What each benchmark does, then each results file's provenance: when, from which commit,
    whether its ranking is current, on which machine, with any note its stamp carries."""
    lines = ["## How the figures were made", ""]
    lines += lines_of(HOW_THE_FIGURES_WERE_MADE, c=page.commands)
    rows: list[list[Cell]] = []
    for file in page.files:
        if file.stamp is None:
            rows.append([f"`{file.file}`", "not recorded", None, None, f"`{file.command}`"])
            continue
        if file.changes:
            ranking = f"**stale**: {text_cell('; '.join(file.changes))}"
        else:
            ranking = f"current (`{file.stamp.ranking.sha256[:12]}`)"
        made_at, commit = text_cell(file.made_at), cell(file.commit)
        rows.append([f"`{file.file}`", made_at, commit, ranking, f"`{file.command}`"])
    lines += [*table(columns("Results file | Made | Commit | Ranking | Made by"), rows), ""]
    for file in page.files:
        if file.stamp and file.stamp.note:
            lines += [f"> **Note on `{file.file}`:** {escape_html(file.stamp.note)}", ""]
    if page.machines:
        lines += ["Where they ran:", ""]
        for machine in page.machines:
            files = " and ".join(f"`{name}`" for name in machine.files)
            lines.append(f"- {files}: {escape_html(machine.machine)}.")
        lines.append("")
    return lines


# --------------------------------------------------------------------------- quality


def quality_section(page: MeasuredPage) -> list[str]:
    """Each set's fusion beside its best single arm, how the weights were chosen, the levers
    tried, the abstention calibration, then each set's ablation and outside references."""
    lines = ["## Quality", ""]
    quality = page.quality
    if quality is None:
        return lines + not_recorded(page, "quality", "quality.json", page.commands.quality)
    rows = []
    for result in quality.sets:
        held_out = " (held out)" if result.held_out else ""
        name = f"[{text_cell(result.name)}](#{slug(result.name)}){held_out}"
        best = result.best_single
        versus = ["–", "–"]
        if best is not None:
            fused, alone = result.fused.ndcg_at_10, best.alone.ndcg_at_10
            verdict = "yes" if fused >= alone else "**no**"
            versus = [
                f"{text_cell(best.arm)} {score(alone)}",
                f"{verdict} ({delta(fused - alone)})",
            ]
        rows.append([name, thousands(result.fused.queries), *scores(result.fused), *versus])
    head = ["Set", "Queries", *page.metrics, "Best arm alone", "Fusion ≥ best arm"]
    lines += [
        "The default fusion on each set, and the best nDCG@10 any single arm reaches alone.",
        "",
        *table(head, rows),
        "",
    ]
    if any(result.held_out for result in quality.sets):
        lines += [
            "A set marked *held out* was kept out of tuning altogether and measured separately.",
            "",
        ]
    lab = quality.lab
    if lab and lab.tuning:
        lines += weights_chosen(quality, lab.tuning)
    if lab and lab.levers:
        lines += levers_tried(lab.levers)
    if lab and lab.calibration:
        lines += abstention_calibration(page, lab.calibration)
    if lab:
        commit = lab.stamp.git.commit
        at = f" at `{commit[:12]}`" if commit else ""
        made_at = escape_html(when(lab.stamp.made_at))
        lines += [f"The tuning record comes from `{lab.stamp.benchmark}`, run {made_at}{at}.", ""]
    for result in quality.sets:
        lines += quality_set(page, result)
    return lines


FOLDS = """\
Leave-one-set-out: each set's figure when the weights were chosen on the other sets only,
beside its figure with the chosen setting (from the run above):
"""


def weights_chosen(quality: QualityResults, tuning: Tuning) -> list[str]:
    """The tuning procedure, the setting it chose, and each leave-one-set-out fold."""
    chosen = ", ".join(f"{escape_html(arm)} {number(w)}" for arm, w in tuning.weights.items())
    lines = [
        "### How the weights were chosen",
        "",
        escape_html(tuning.procedure),
        "",
        f"The chosen setting, which the registry holds: {chosen}; k = {tuning.k}.",
        "",
    ]
    if not tuning.folds:
        return lines
    rows = []
    for fold in tuning.folds:
        full = quality.set_named(fold.held_out)
        weights = ", ".join(f"{text_cell(arm)} {number(w)}" for arm, w in fold.weights.items())
        rows.append(
            [
                text_cell(fold.held_out),
                weights,
                str(fold.k),
                score(fold.ndcg_at_10),
                score(full.fused.ndcg_at_10 if full else None),
            ]
        )
    head = columns(
        "Held-out set | Weights chosen on the others | k | nDCG@10 held out "
        "| nDCG@10, chosen setting"
    )
    return [*lines, *lines_of(FOLDS), *table(head, rows), ""]


LEVERS = """\
Each lever built and measured against {baseline}; nDCG@10 per set, the
difference to the baseline in brackets. Kept levers are part of the ranking measured above.
"""


def levers_tried(levers: LeverTrials) -> list[str]:
    """Each lever's nDCG@10 per set against the baseline's, kept or dropped."""
    baseline = levers.baseline_ndcg_at_10
    rows: list[list[Cell]] = [
        ["*baseline*", *(score(value) for value in baseline.values()), None, None]
    ]
    for lever in levers.levers:
        cells: list[Cell] = [text_cell(lever.name)]
        for name, base in baseline.items():
            value = lever.ndcg_at_10.get(name)
            cells.append("–" if value is None else f"{score(value)} ({delta(value - base)})")
        cells += ["kept" if lever.kept else "dropped", text_cell(lever.note)]
        rows.append(cells)
    head = ["Lever", *(text_cell(name) for name in baseline), "Kept", "Note"]
    return [
        "### Levers tried",
        "",
        *lines_of(LEVERS, baseline=escape_html(levers.baseline)),
        *table(head, rows),
        "",
    ]


CALIBRATION = """\
{rule} The chosen floor is **{floor}**.
Each cell: the share of the set's answerable queries the floor would silence / the share of
foreign queries (asked of a store that holds no answer) it catches.
"""


def sentence(text: str) -> str:
    """``text`` ended as a sentence: the page writes another after it (the lab's rule is
    recorded with or without its full stop)."""
    text = text.rstrip()
    return text if not text or text[-1] in ".!?" else f"{text}."


def abstention_calibration(page: MeasuredPage, calibration: Calibration) -> list[str]:
    """Per floor and set: the answerable queries it silences, the foreign ones it catches."""
    head = ["Floor"] + [
        f"{text_cell(s.set)} ({thousands(s.answerable)} / {thousands(s.foreign)})"
        for s in calibration.sets
    ]
    rows = [
        [f"**{number(line.floor)}** (chosen)" if line.chosen else number(line.floor)]
        + [
            f"{share(point.answerable_silenced)} / {share(point.foreign_caught)}" if point else "–"
            for point in line.cells
        ]
        for line in page.calibration
    ]
    rule, floor = escape_html(sentence(calibration.rule)), number(calibration.chosen_floor)
    return [
        "### Abstention calibration",
        "",
        *lines_of(CALIBRATION, rule=rule, floor=floor),
        *table(head, rows),
        "",
    ]


def quality_set(page: MeasuredPage, result: QualitySet) -> list[str]:
    """One set: the fusion and each arm alone and left out, against the best single arm;
    outside tools' figures; the fusion per query category."""
    fused = result.fused.ndcg_at_10
    held_out = ", held out of tuning" if result.held_out else ""
    seconds = result.seconds
    took = f", {seconds:.0f} s to index and search every variant" if seconds else ""
    rows: list[list[Cell]] = [["full fusion", *scores(result.fused), None]]
    if result.ablation:
        for label, side in (("{} alone", "alone"), ("without {}", "without")):
            for arm in page.arms:
                entry, name = result.ablation_of(arm), label.format(text_cell(arm))
                if entry is None:
                    rows.append([name, *("–" for _ in page.metrics), None])
                    continue
                metrics: Metrics = getattr(entry, side)
                rows.append([name, *scores(metrics), delta(metrics.ndcg_at_10 - fused)])
    lines = [
        f"### {escape_html(result.name)}",
        "",
        f"{thousands(result.fused.queries)} queries{held_out}{took}.",
        "",
        *table(["Ranking", *page.metrics, "nDCG@10 vs fusion"], rows),
        "",
    ]
    best = result.best_single
    if best is None:
        lines += ["No ablation was recorded for this set.", ""]
    else:
        alone = best.alone.ndcg_at_10
        versus = "matches or beats" if fused >= alone else "scores **below**"
        lines += [
            f"The full fusion {versus} the best single arm: {score(fused)} against "
            f"{score(alone)} for {escape_html(best.arm)} alone ({delta(fused - alone)}).",
            "",
        ]
    if result.references:
        references: list[list[Cell]] = [["memsift, full fusion", score(fused), None]]
        references += [
            [text_cell(name), f"{value:.3f}", delta(fused - value)]
            for name, value in result.references.items()
        ]
        lines += [
            "Outside tools on the same files (nDCG@10, as published with the evaluation sets):",
            "",
            *table(columns("System | nDCG@10 | memsift's fusion vs it"), references),
            "",
        ]
    else:
        lines += ["No outside reference figures are recorded for this set.", ""]
    if result.by_category:
        categories = [
            [text_cell(name), thousands(figures.queries), *scores(figures)]
            for name, figures in result.by_category.items()
        ]
        lines += [
            "By query category (full fusion):",
            "",
            *table(["Category", "Queries", *page.metrics], categories),
            "",
        ]
    return lines


QUALITY_PG = """\
A team store keeps its index in PostgreSQL; its arms run their PostgreSQL SQL over the same
files. `{command}` scores the same sets on that path (each set indexed into a
schema of its own, as `memsift eval --database-url` does), with the default fusion and with
each arm that finds candidates alone. nDCG@10 on each backend, side by side
(server: {server}):
"""


def quality_on_postgresql(page: MeasuredPage) -> list[str]:
    """nDCG@10 of the fusion and of each arm alone, SQLite beside PostgreSQL, per set."""
    lines = ["## Quality on PostgreSQL", ""]
    quality_pg, command = page.quality_pg, page.commands.quality_pg
    if quality_pg is None:
        return lines + not_recorded(page, "PostgreSQL quality", "quality_pg.json", command)
    head = columns("Set | Queries | Fusion, SQLite | Fusion, PostgreSQL")
    for arm in page.backend_arms:
        head += [f"{text_cell(arm)} alone, SQLite", f"{text_cell(arm)} alone, PostgreSQL"]
    rows = [
        [text_cell(backend.name), thousands(backend.queries)]
        + [text for lite, pg in backend.cells for text in (score(lite), score(pg))]
        for backend in page.backends
    ]
    return [
        *lines,
        *lines_of(QUALITY_PG, command=command, server=escape_html(quality_pg.server)),
        *table(head, rows),
        "",
        "A dash: the SQLite results (`quality.json`) do not hold that set or arm.",
        "",
    ]


# --------------------------------------------------------------------------- no answer

NO_ANSWER = """\
A search answers nothing when no memory holds every query word and the memory nearest in
meaning (a hit or not) is less similar to the query than the abstention floor, or when the
store has never seen what the query is about and that memory is not near in meaning (the
coverage test, `engine.ranking.coverage`): a name the question gives is in no chunk, not even
spelt otherwise (the names rule), or words no chunk holds carry half the question and the
nearest memory does not say them in other words (the words rule). `{command}` checks them on
stores of real documents nobody on this project wrote, built from what the measuring machine
holds, written as Markdown memories and indexed by the normal indexer with the default
embedder; each store is asked this project's own questions (`benchmarks/abstention/*.json`):
answerable ones, each naming the file that answers it, and foreign ones that nothing in the
store answers (made-up words, everyday questions off the store's topic, people and things it
never mentions, near misses in its own field). Every question runs through the normal search
under four rules: the fixed floor of {fixed_floor} that `[limits] min_similarity` defaulted
to before; the store's own floor alone (`withhold_unseen = false`); the store's floor and the
words rule alone (`withhold_unseen = "words"`); and the default, the store's floor and both
rules. The goals: at most 10 % of foreign questions answered, no answerable one silenced.
"""
STORE_FLOOR = """\
A store floor is measured at the end of an index run: strings of made-up words are compared
with every chunk, and the floor is the similarity that nine in ten of them stay under
(kept between 0.25 and 0.45). It holds back nonsense; a question in real words about
something the store lacks can come as close to some memory as a question it answers. The
coverage test catches most of those from their words. Its names rule catches questions about
neighbouring tools a store of documents never names (Flask, MongoDB); a name the store writes
spelt otherwise counts as written (a chat whose speaker types "Muhhamed" is asked about
"Muhammad", `engine.ranking.names`). Its words rule lets a memory that says the unseen words
otherwise ("housework" asked of a chat about cleaning and laundry) answer: it is no closer
to the question without them. A question of more than twelve content words (a dialogue used
as a query) is not judged.
"""


def no_answer(page: MeasuredPage) -> list[str]:
    """Per store of real documents and floor: foreign questions answered, answerable ones
    silenced; the foreign questions the store floor still answers."""
    lines = ["## No answer on stores of real documents", ""]
    abstention, command = page.abstention, page.commands.abstention
    if abstention is None:
        return lines + not_recorded(page, "abstention", "abstention.json", command)
    head = columns(
        "Store | Documents | Chunks | Floor | Foreign answered | Answerable silenced "
        "| Expected file in the top 10"
    )
    lines += [
        *lines_of(NO_ANSWER, command=command, fixed_floor=number(abstention.fixed_floor)),
        *table(head, abstention_rows(abstention)),
        "",
    ]
    bullets = []
    for corpus in abstention.corpora:
        store = (
            corpus.floor_named("default")
            or corpus.floor_named("store")
        )
        if not store:
            continue
        line = f"- **{escape_html(corpus.name)}** ({escape_html(corpus.source)})"
        if corpus.missing_expected:
            lacking = len(corpus.missing_expected)
            line += f"; {lacking} answerable question(s) not asked: this machine lacks their file"
        answered = [
            f'"{escape_html(q.question)}" ({q.best_similarity or 0:.2f}'
            + (", every word in one memory" if q.fts_form == "all" else "")
            + ")"
            for q in store.foreign
            if q.answered
        ]
        if answered:
            line += (
                ". Foreign questions the default rule still answers: "
                + "; ".join(answered)
                + "."
            )
        else:
            line += ". The default rule answers no foreign question."
        bullets.append(line)
    if bullets:
        lines += [*bullets, ""]
    return [*lines, *lines_of(STORE_FLOOR)]


def abstention_rows(abstention: AbstentionResults) -> list[list[Cell]]:
    """A row per store and floor; the store's name and size on its first row only."""
    rows: list[list[Cell]] = []
    for corpus in abstention.corpora:
        for index, floor in enumerate(corpus.floors):
            store = [text_cell(corpus.name), thousands(corpus.documents), thousands(corpus.chunks)]
            foreign, answerable = len(floor.foreign), len(floor.answerable)
            caught = share(floor.foreign_answered / foreign)
            rows.append(
                [
                    *(store if index == 0 else ["", "", ""]),
                    text_cell(floor.floor_text),
                    f"{floor.foreign_answered} of {foreign} ({caught})",
                    f"{floor.answerable_silenced} of {answerable}",
                    f"{floor.expected_in_top_10} of {answerable}",
                ]
            )
    return rows


# --------------------------------------------------------------------------- latency

QUICK = """\
> These figures come from a `--quick` run (one small store, smaller indexing runs); the full
> run is `{command}` without options.
"""
LATENCY = """\
Times are wall-clock milliseconds per query, after a warm-up; the query vector is
precomputed, so embedding the query is not included.
"""
LATENCY_COLUMNS = """\
*Fused* is one `search()` call, which opens and closes the index; *Searcher* is the same
search through a long-lived `engine.Searcher`, as an agent that searches often holds one.
*Fused SQL only* replays the fused statement alone on an open connection (no connection
setup, probe or snippets). The ratios divide p50 by the floor's p50; recall@40 is the overlap
of the vector arm's top 40 files with the exact top 40 (mean, and the worst query).
"""
ARMS_ALONE = """\
Each arm alone, p50 (ms); a prior alone ranks every memory in scope, since no query arm
supplies candidates:
"""


def latency_section(page: MeasuredPage) -> list[str]:
    """Search times per synthetic store against the NumPy floor, each arm alone, peak memory,
    indexing throughput and the latency targets."""
    lines = ["## Latency", ""]
    latency = page.latency
    if latency is None:
        return lines + not_recorded(page, "latency", "latency.json", page.commands.latency)
    if latency.settings.quick:
        lines += lines_of(QUICK, command=page.commands.latency)
    rows = []
    for store in page.stores:
        timings, recall = store.latency, store.vector_recall_at_40
        searcher, sql_only = timings.get("fused_searcher"), timings.get("fused_sql_only")
        rows.append(
            [
                f"{thousands(store.files)} files, {store.dim}-d",
                thousands(store.store.chunks),
                ms(timings["fused"].p50_ms),
                ms(timings["fused"].p95_ms),
                ms(searcher.p50_ms if searcher else None),
                ms(sql_only.p50_ms if sql_only else None),
                ms(store.floor.p50_ms),
                ratio(store.ratios.get("fused_over_floor")),
                ratio(store.ratios.get("vector_over_floor")),
                f"{recall.mean:.3f} (min {recall.min:.3f})",
            ]
        )
    head = columns(
        "Store | Chunks | Fused p50 (ms) | Fused p95 (ms) | Searcher p50 (ms) "
        "| Fused SQL only p50 (ms) | NumPy floor p50 (ms) | Fused ÷ floor | Vector ÷ floor "
        "| Vector recall@40"
    )
    lines += [*lines_of(LATENCY), *table(head, rows), "", *lines_of(LATENCY_COLUMNS)]
    if page.latency_arms:
        arms = page.latency_arms
        alone = [
            [f"{thousands(store.files)} files, {store.dim}-d"]
            + [ms(store.latency[arm].p50_ms if arm in store.latency else None) for arm in arms]
            + [
                ms(store.latency["vector_sql_only"].p50_ms)
                if "vector_sql_only" in store.latency
                else ms(None)
            ]
            for store in page.stores
        ]
        head = ["Store", *(text_cell(arm) for arm in arms), "vector SQL only"]
        lines += [*lines_of(ARMS_ALONE), *table(head, alone), ""]
    memory = [
        [
            f"{thousands(store.files)} files, {store.dim}-d",
            mib(store.memory.search.peak_rss_mib),
            mib(store.memory.search.sqlite_heap_peak_mib),
            mib(store.memory.floor.peak_rss_mib),
            mib(store.memory.floor.matrix_mib),
        ]
        for store in page.stores
    ]
    head = columns(
        "Store | Search, peak RSS | SQLite heap | NumPy floor, peak RSS | Floor's matrix"
    )
    lines += ["Peak memory (MiB) of each measuring process:", "", *table(head, memory), ""]
    lines += indexing_throughput(latency)
    lines += ["### Targets", ""]
    if latency.targets:
        met = sum(1 for target in latency.targets if target.met)
        lines += [f"{met} of {len(latency.targets)} targets met.", ""]
        lines += targets_table(latency.targets, latency_measured)
    else:
        lines += ["The results file records no targets.", ""]
    cpus = latency.stamp.machine.cpu_count
    return lines + run_load(latency.load_average_at_start, cpus, latency.elapsed_s)


def latency_measured(target: Target) -> str:
    """A goal in percent ("< 15%") is met by a fraction (0.12): shown as a percentage."""
    return percent(target.measured) if "%" in target.target else number(target.measured)


def indexing_throughput(latency: LatencyResults) -> list[str]:
    """Files per second indexed lexically, and the indexer's overhead over the raw embedder."""
    lexical, embedding = latency.indexing.lexical, latency.indexing.embedding
    if not (lexical or embedding):
        return []
    lines = ["### Indexing", ""]
    if lexical:
        rss = lexical.memory.peak_rss_mib
        lines.append(
            f"- **Lexical only**: {thousands(lexical.files)} files in {lexical.seconds:.2f} s, "
            f"**{lexical.files_per_s:,.0f} files/s** (re-scanning unchanged files: "
            f"{lexical.unchanged_files_per_s:,.0f} files/s)"
            + (f"; peak RSS {mib(rss)} MiB" if rss else "")
            + "."
        )
    if embedding:
        rss = embedding.memory.peak_rss_mib
        lines.append(
            f"- **With embedding**: {thousands(embedding.files)} files "
            f"({thousands(embedding.texts)} distinct texts) with "
            f"`{escape_html(embedding.model)}`. The raw embedder takes "
            f"{embedding.raw_embed_s:.2f} s ({embedding.raw_texts_per_s:,.1f} texts/s); the "
            f"indexer with embedding {embedding.index_with_embed_s:.2f} s, an overhead of "
            f"**{percent(embedding.overhead)}** ({percent(embedding.overhead_beyond_lexical)} "
            "once a lexical-only index of the same files is subtracted)"
            + (f"; peak RSS {mib(rss)} MiB" if rss else "")
            + "."
        )
    return [*lines, ""]


# --------------------------------------------------------------------------- agents

AGENTS = """\
What an agent waits for from `memsift serve`: wall-clock milliseconds, {queries} timed \
searches per
store after {warmup} untimed ones, {limit} hits asked for. Transport: {transport}.\
"""


def agents_section(page: MeasuredPage) -> list[str]:
    """What an agent waits for from ``memsift serve``: a table per store size."""
    lines = ["## Agents: the MCP server", ""]
    mcp = page.mcp
    if mcp is None:
        return lines + not_recorded(page, "MCP server", "mcp.json", page.commands.mcp)
    settings = mcp.settings
    lines += lines_of(
        AGENTS,
        queries=thousands(settings.queries),
        warmup=thousands(settings.warmup),
        limit=settings.limit,
        transport=escape_html(settings.transport),
    )
    if mcp.targets:
        met = sum(1 for target in mcp.targets if target.met)
        lines.append(f"{met} of {len(mcp.targets)} targets met; each store's are under its table.")
    lines.append("")
    for store in page.mcp_stores:
        lines += mcp_store(store)
    return lines + run_load(
        mcp.load_average_at_start,
        mcp.stamp.machine.cpu_count,
        mcp.elapsed_s,
        end=mcp.load_average_at_end or None,
        busy="over half the cores busy: the times are inflated",
    )


def mcp_store(store: StoreMcp) -> list[str]:
    """One store size: search through MCP beside in process, the embedding alone and the
    one-shot CLI, remembering, the server's start, the answers' size, its targets."""
    served, cli, remember = store.search_mcp, store.search_cli_one_shot, store.remember_mcp
    local, embed = store.search_in_process, store.query_embedding_alone
    rows = [
        [
            "Warm search through MCP (`memory_search`)",
            f"**{ms(served.p50_ms)}**",
            ms(served.p95_ms),
            thousands(served.n),
        ],
        [
            "The same search in process (`MemoryService`, no protocol)",
            ms(local.p50_ms),
            ms(local.p95_ms),
            thousands(local.n),
        ],
        ["Query embedding alone", ms(embed.p50_ms), ms(embed.p95_ms), thousands(embed.n)],
        [
            "One-shot CLI search (`memsift search`, a new process)",
            f"**{ms(cli.p50_ms)}**",
            ms(cli.p95_ms),
            thousands(cli.n),
        ],
        [
            "`memory_remember` (write, index, embed)",
            ms(remember.p50_ms if remember else None),
            ms(remember.p95_ms if remember else None),
            thousands(remember.n if remember else None),
        ],
        ["First search after the start", ms(store.server.first_search_ms), "–", "1"],
    ]
    lines = [
        f"### {thousands(store.files)} memories",
        "",
        *table(columns("Operation | p50 (ms) | p95 (ms) | Runs"), rows),
        "",
    ]
    if served.p50_ms > 0:
        lines.append(
            f"The one-shot CLI takes **{ratio(cli.p50_ms / served.p50_ms)}** as long as a warm "
            "search through the server (p50)."
        )
    server, answers = store.server, store.answer_bytes
    lines += [
        f"The server answered its handshake {server.handshake_s:.2f} s after it was spawned and "
        "had caught up with the files, at full vector coverage, after "
        f"{server.ready_s:.2f} s.",
        f"Answers: {thousands(answers.p50)} bytes at the median, {thousands(answers.max)} at "
        f"most; {thousands(store.degraded_answers)} of {thousands(served.n)} ran degraded.",
        f"The store: {thousands(store.store.files)} files, {thousands(store.store.chunks)} chunks.",
    ]
    if store.load_average:
        before, after = joined(store.load_average.before), joined(store.load_average.after)
        lines.append(f"Load average before these measurements: {before}; after: {after}.")
    lines.append("")
    if store.targets:
        return lines + targets_table(store.targets, lambda target: number(target.measured))
    return [*lines, "No targets are recorded for this store.", ""]


# --------------------------------------------------------------------------- scale

SCALE = """\
{data}. Query vectors: {query_vector}. Every
search is the one `memsift search` runs (default scope, 10 hits, every arm whose input is
there); "fused" times its one SQL statement alone, "search" the whole search around it (the
full-text probe, the statement, the snippets). Recall@40: of the 40 memories the vector arm
ranks first by the exact scan, the share the HNSW index finds too (mean over the queries, and
the worst query). HNSW: m = {m}, ef_construction = {ef_construction} (pgvector's defaults);
PostgreSQL ran with shared_buffers {shared_buffers} and maintenance_work_mem \
{maintenance_work_mem} for the builds; its searches ran with work_mem {work_mem}.
"""
#: The work_mem of figures measured before the engine set ``[database] work_mem``.
DEFAULT_WORK_MEM = "4MB (the server's default: these figures predate `[database] work_mem`)"


def backend_name(backend: str) -> str:
    return "SQLite" if backend == "sqlite" else "PostgreSQL"


def scale_section(page: MeasuredPage) -> list[str]:
    """Large synthetic stores on both backends, exact and through HNSW: each way's times and
    recall, each store's build, and when to switch."""
    lines = ["## Scale: large stores on SQLite and PostgreSQL", ""]
    scale, view = page.scale, page.scale_view
    if scale is None:
        return lines + not_recorded(page, "scale", "scale.json", page.commands.scale)
    settings = scale.settings
    lines += lines_of(
        SCALE,
        data=escape_html(settings.data[:1].upper() + settings.data[1:]),
        query_vector=escape_html(settings.query_vector),
        m=settings.hnsw_m,
        ef_construction=settings.hnsw_ef_construction,
        shared_buffers=escape_html(settings.shared_buffers or "not recorded"),
        maintenance_work_mem=escape_html(settings.maintenance_work_mem or "not recorded"),
        work_mem=escape_html(settings.search_work_mem or DEFAULT_WORK_MEM),
    )
    rows = []
    for way in view.rows:
        search, recall = way.search, way.search.recall_at_40
        rows.append(
            [
                backend_name(way.store.backend),
                thousands(way.store.files),
                thousands(way.store.chunks),
                way.how,
                ms(search.fused.p50_ms),
                ms(search.fused.p95_ms),
                ms(search.search.p50_ms),
                ms(search.search.p95_ms),
                f"{share(recall.mean)} / {share(recall.min)}" if recall else "exact",
                thousands(search.fused.n),
            ]
        )
    head = columns(
        "Backend | Memories | Chunks | Vector search | Fused p50 (ms) | Fused p95 (ms) "
        "| Search p50 (ms) | Search p95 (ms) | Recall@40 (mean / worst) | Queries"
    )
    lines += [*table(head, rows), ""]
    builds = [
        [
            backend_name(store.backend),
            thousands(store.files),
            f"{store.build_s:.0f}",
            mib(store.database_mib),
            "–" if store.hnsw_build_s is None else f"{store.hnsw_build_s:.0f}",
            mib(store.hnsw_mib),
            text_cell(when(store.made_at)),
            f"{joined(store.build_load_average.before)} → {joined(store.build_load_average.after)}",
        ]
        for store in (*view.sqlite, *view.postgres)
    ]
    head = columns(
        "Backend | Memories | Writing the rows (s) | Database (MiB) | HNSW build (s) "
        "| HNSW index (MiB) | Measured | Load average (build, before → after)"
    )
    lines += [*table(head, builds), ""]
    lines += full_text_rows(view.postgres)
    loads = "; ".join(
        f"{backend_name(way.store.backend)} {thousands(way.store.files)} {way.how}: "
        f"{way.search.load_average.before[0]} → {way.search.load_average.after[0]}"
        for way in view.rows
    )
    end = "." if view.rows else ""
    lines.append(
        f"Load averages while each way of searching was timed (before → after): {loads}{end}"
    )
    cpus = scale.stamp.machine.cpu_count
    if cpus:
        lines.append(
            f"On {cpus} CPUs: a load above {cpus / 2} means other work shared the cores, and "
            "the times are inflated."
        )
    return [*lines, "", *when_to_switch(page), ""]


def full_text_rows(stores: Sequence[ScaleStore]) -> list[str]:
    """The full-text arm alone on each PostgreSQL store measured with and without its champion
    lists (none before they existed: nothing is shown)."""
    rows = [
        [
            thousands(store.files),
            ms(fts.exact.p50_ms),
            ms(fts.exact.p95_ms),
            ms(fts.preselected.p50_ms),
            ms(fts.preselected.p95_ms),
            f"{share(fts.recall_at_100.mean)} / {share(fts.recall_at_100.min)}",
            f"{share(fts.recall_at_10.mean)} / {share(fts.recall_at_10.min)}",
            f"{thousands(fts.words)} in {fts.build_s:.0f} s",
            thousands(fts.exact.n),
        ]
        for store in stores
        if (fts := store.full_text) is not None
    ]
    if not rows:
        return []
    head = columns(
        "Memories | Full scan p50 (ms) | Full scan p95 (ms) | Pre-selected p50 (ms) "
        "| Pre-selected p95 (ms) | Recall@100 (mean / worst) | Recall@10 (mean / worst) "
        "| Champion lists | Queries"
    )
    return [
        "The full-text arm alone on PostgreSQL, scoring every matching chunk (the store as "
        "written, without champion lists) and then only its pre-selection (the lists made as "
        "an index run makes them), on the same queries; recall is the share of the full "
        "scan's best memories the pre-selection ranks among its own.",
        "",
        *table(head, rows),
        "",
    ]


def when_to_switch(page: MeasuredPage) -> list[str]:
    """Each PostgreSQL size exactly and through HNSW at the default ef_search, the SQLite
    sizes, and the first size where HNSW halves the median (or that none did)."""
    view = page.scale_view
    lines = ["### When to switch", ""]
    if not view.switch:
        return [
            *lines,
            "No PostgreSQL store was measured both exactly and through HNSW at the default "
            f"ef_search ({view.default_ef}), so these figures cannot say when to switch.",
        ]
    for way in view.switch:
        exact = required(way.exact, "the exact search of an HNSW row")
        recall = required(way.search.recall_at_40, "an HNSW search's recall_at_40")
        lines.append(
            f"- PostgreSQL, {thousands(way.store.files)} memories: the fused search takes "
            f"{ms(exact.fused.p50_ms)} ms at the median exactly and "
            f"{ms(way.search.fused.p50_ms)} ms through HNSW at ef_search {view.default_ef} "
            f"(the default; {ratio(way.speedup)} as fast), finding "
            f"{share(recall.mean)} of the exact 40 nearest."
        )
    for store in view.sqlite:
        median = ms(store.searches[0].fused.p50_ms)
        lines.append(
            f"- SQLite, {thousands(store.files)} memories: {median} ms at the median "
            "(always exact)."
        )
    lines.append("")
    first = view.first_halving
    if first is not None:
        recall = required(first.search.recall_at_40, "an HNSW search's recall_at_40")
        lines.append(
            "The smallest measured PostgreSQL store where HNSW at the default ef_search at "
            "least halves the fused search's median time holds "
            f"{thousands(first.store.files)} memories; there it finds {share(recall.mean)} of "
            "the exact nearest 40. Below that size HNSW saved less than half of the median "
            'time on these figures, while the exact scan (`vector_index = "exact"`, the '
            "default) misses no nearest memory at any size."
        )
        return lines
    largest = view.switch[-1]
    recall = required(largest.search.recall_at_40, "an HNSW search's recall_at_40")
    lines.append(
        "At no measured size did HNSW at the default ef_search halve the fused search's median "
        "time: on the largest PostgreSQL store measured "
        f"({thousands(largest.store.files)} memories) it was {ratio(largest.speedup)} as fast "
        f"and found {share(recall.mean)} of the exact 40 nearest (the worst query "
        f"{share(recall.min)}). Up to that size, these figures show the exact default giving "
        "up at most that speed-up, and missing no nearest memory."
    )
    return lines


# --------------------------------------------------------------------------- the docs build

DOCS_BUILD = """\
Every site is built {rounds} times each of three ways, one round after another with the
order rotated each round: with the arms-doc plugin; without it (the plugin and its two pages
left out of the same config); and with its pages as files (the plugin left out, the two pages
it generated written into a copy of the docs folder, as a site that commits
`memsift docs write`'s pages builds them). How a build runs: {builder};
its imports are in it, as they are in `mkdocs build`. Seconds are medians of the builds, wall
clock and (in brackets) CPU, the build's children included; the ratios are medians of each
round's ratio. *With ÷ without* is what the plugin and its pages cost together; *with ÷ pages
as files* what the plugin's own work costs beyond the weight of the two pages.
"""
COLD_BUILDS = """\
The plugin remembers its pages, and SQLite's verdict on the statements, from one build to the
next for as long as nothing they are made from changes (the registry, the results files, the
commit, the code); the builds above come after one that left all of that behind, as every
build after the first on a machine does. A build with nothing remembered (a fresh checkout's
first build, or CI) costs more:
"""


def docs_build_section(page: MeasuredPage) -> list[str]:
    """Each site built with the plugin, without it and with its pages as files; what a first
    build costs; where the plugin's time goes; the targets."""
    lines = ["## The docs build: what the plugin costs", ""]
    docs_build, command = page.docs_build, page.commands.docs_build
    if docs_build is None:
        return lines + not_recorded(page, "docs build", "docs_build.json", command)
    settings = docs_build.settings
    head = columns(
        "Site | Pages | With the plugin (s) | Without it (s) | Its pages as files (s) "
        "| With ÷ without | With ÷ pages as files"
    )
    lines += [
        *lines_of(DOCS_BUILD, rounds=settings.rounds, builder=escape_html(settings.builder)),
        *table(head, (site_row(site) for site in docs_build.sites)),
        "",
    ]
    cold = [
        f"- **{escape_html(site.name)}**: {runs.wall_median_s:.2f} s ({runs.cpu_median_s:.2f} s "
        f"CPU), **{versus.wall_ratio:.2f}×** ({versus.cpu_ratio:.2f}× CPU) a build without the "
        f"plugin, {versus.wall_extra_s:+.2f} s."
        for site in docs_build.sites
        if (runs := site.with_plugin_cold) and (versus := site.cold_versus_without)
    ]
    if cold:
        lines += [*lines_of(COLD_BUILDS), *cold, ""]
    for site in docs_build.sites:
        if site.phases:
            lines += plugin_phases(docs_build, site.name, site.phases)
    if docs_build.targets:
        lines += targets_table(docs_build.targets, lambda target: f"{target.measured:.3f}")
    return lines + run_load(
        docs_build.load_average_at_start,
        docs_build.stamp.machine.cpu_count,
        docs_build.elapsed_s,
        end=docs_build.load_average_at_end,
        busy="over half the cores busy: the times are inflated; the ratios less so",
    )


def site_row(site: SiteBuilds) -> list[str]:
    """A site's medians each way, and the plugin's cost against each other way."""
    return [
        f"**{text_cell(site.name)}**: {text_cell(site.description)}",
        str(site.pages),
        *(
            f"{runs.wall_median_s:.2f} ({runs.cpu_median_s:.2f})"
            for runs in (site.with_plugin, site.without_plugin, site.pages_as_files)
        ),
        *(
            f"**{versus.wall_ratio:.2f}×** ({versus.cpu_ratio:.2f}×), {versus.wall_extra_s:+.2f} s"
            for versus in (site.versus_without, site.versus_files)
        ),
    ]


PHASES = """\
Medians of {runs} processes, each of which first built the site without the plugin (so what
MkDocs and the site's other plugins import was already there), then imported the plugin's
modules one by one, then built the site twice with the plugin, with nothing remembered from
earlier builds: the first build does every step, the second reuses the pages the first left
in the process (as a rebuild of `mkdocs serve` does), so a step it skipped shows 0. An import
counts what that module brings that nothing before it had. The step where MkDocs renders the \
two generated
pages is MkDocs' own work, which a build of the pages as files does as well; the rest is the
plugin's.
"""
TEMPLATES_COMPILE = """\
The arms page's template was kept compiled in Jinja's bytecode cache; a machine's first build
compiled it, which added {ms} ms (the Measured page was written in plain Python: nothing to
compile). Both pages are written in plain Python now.
"""


def plugin_phases(docs_build: DocsBuildResults, site: str, phases: PluginPhases) -> list[str]:
    """Where the plugin's time goes on one site: each import and each step, in a first build
    and in a second one in the same process."""
    rows = [
        [f"Import `{text_cell(module.module)}`", ms(module.ms), "–"]
        for module in phases.imports
        if module.ms >= 0.05
    ]
    rows += [[text_cell(step.phase), ms(step.first_ms), ms(step.warm_ms)] for step in phases.steps]
    on_files, build = phases.on_files, phases.build
    rows += [
        [
            "The plugin's `on_files` in all (reading, checking, rendering both pages)",
            ms(on_files.first_ms),
            ms(on_files.warm_ms),
        ],
        ["The whole build, MkDocs' own work included", ms(build.first_ms), ms(build.warm_ms)],
    ]
    return [
        f"### Where the plugin's time goes: the {escape_html(site)} site",
        "",
        *lines_of(PHASES, runs=docs_build.settings.phase_runs),
        *table(columns("Step | First build (ms) | Second build (ms)"), rows),
        "",
        *(
            lines_of(TEMPLATES_COMPILE, ms=ms(phases.templates_compile_ms))
            if phases.templates_compile_ms is not None
            else []
        ),
    ]


# --------------------------------------------------------------------------- indexing

CORPUS = """\
{documents} documents ({megabytes} MB): {source}, a share of {share} of the {ordinary} \
ordinary and {huge} huge (over 64 chunks) documents this machine holds, sampled by a hash of \
each one's path{twins}. Its files over 64 chunks hold {chunks_in_huge} chunks: {huge_files}.

Each run indexes the store from scratch as `memsift index --json` in a fresh process of its
code, one after the other. The counts are read from the index each run left. *First full-text
answer*: seconds until a lexical `memsift search "{probe}" --no-vector`,
started again and again from the moment the index starts, first answered; *fully indexed*:
until the index process returned with every chunk within its budget embedded. CPU and peak
RSS are the indexing process's own (`wait4`).
"""


def indexing_section(page: MeasuredPage) -> list[str]:
    """A store of real documents indexed by the code before the embedding budget and by this
    commit's, and its known-item questions answered under each budget."""
    lines = ["## Indexing a store of real documents", ""]
    indexing, view = page.indexing, page.indexing_view
    if indexing is None:
        return lines + not_recorded(page, "indexing", "indexing.json", page.commands.indexing)
    corpus = indexing.corpus
    lines += lines_of(
        CORPUS,
        documents=thousands(corpus.documents),
        megabytes=corpus.megabytes,
        source=escape_html(corpus.source),
        share=share(corpus.share),
        ordinary=thousands(corpus.machine_ordinary),
        huge=thousands(corpus.machine_huge),
        twins=f", with {corpus.html} HTML twin(s) of Markdown pages" if corpus.html else "",
        chunks_in_huge=thousands(corpus.chunks_in_huge_files),
        huge_files=escape_html(", ".join(corpus.huge_files)),
        probe=escape_html(indexing.probe_query),
    )
    rows: list[list[Cell]] = []
    for run in view.runs:
        budget = f" (budget {run.embed_chunks_per_file})" if run.embed_chunks_per_file else ""
        counts = (run.files, run.chunks, run.embedded, run.reused, run.past_budget)
        seconds = (run.wall_s, run.cpu_s, run.first_full_text_s, run.fully_indexed_s)
        rows.append(
            [f"**{text_cell(run.code)}**: {text_cell(run.source)}{budget}"]
            + [thousands(count) for count in counts]
            + [f"{value:.1f}" for value in seconds]
            + [mib(run.peak_rss_mib)]
        )
    if view.ratios:
        ratios = view.ratios
        rows.append(
            ["after ÷ before", None, None, None, None, None]
            + [f"{ratios[name]:.2f}×" for name in ("wall_s", "cpu_s", "first_full_text_s")]
            + [f"**{ratios['fully_indexed_s']:.2f}×**", f"{ratios['peak_rss_mib']:.2f}×"]
        )
    head = columns(
        "Code | Files | Chunks | Embedded | Reused | Past the budget | Wall (s) | CPU (s) "
        "| First full-text answer (s) | Fully indexed (s) | Peak RSS (MiB)"
    )
    lines += [*table(head, rows), ""]
    for run in view.runs:
        before, after = joined(run.load_average.before), joined(run.load_average.after)
        lines.append(
            f"- {escape_html(run.code)}: load average {before} when it started, {after} when "
            "it ended."
        )
    lines.append("")
    if view.budgets:
        lines += embedding_budget(page, indexing)
    if indexing.shared_sets:
        sets = ", ".join(
            f"{escape_html(shared.name)} {shared.max_chunks_per_document} chunk(s)"
            for shared in indexing.shared_sets
        )
        largest = max(shared.max_chunks_per_document for shared in indexing.shared_sets)
        leaves = (
            "every one of their indexes, and so their quality, unchanged"
            if largest <= indexing.default_budget
            else "**some of their documents without every vector**"
        )
        lines += [
            f"The shared evaluation sets' largest documents: {sets}; a budget of "
            f"{indexing.default_budget} leaves {leaves}.",
            "",
        ]
    if indexing.targets:
        lines += targets_table(indexing.targets, lambda target: f"{target.measured:.3f}")
    return lines + run_load(
        indexing.load_average_at_start,
        indexing.stamp.machine.cpu_count,
        indexing.elapsed_s,
        end=indexing.load_average_at_end,
        busy="over half the cores busy: wall times are inflated; read the CPU column",
    )


EMBEDDING_BUDGET = """\
{questions} known-item questions through the normal search, drawn from the headings and first
sentences of the store's sections, each judged answered by its file (and the file's twin):
grouped by the chunk their answer lies in for files of more than 9 chunks, and apart for
short documents. Each budget is simulated on a copy of the store indexed with no budget: a
chunk the budget's rule leaves out of its file (a file over the budget keeps every *s*-th
chunk, *s* the smallest power of two leaving at most the budget) loses its vector unless a
chunk within the budget shares its text, as an index run under that budget leaves it. \
nDCG@10 per group, hit@10 over
every question; the default is in bold. Which chunks a budget embeds (this stride, against the
first chunks, evenly spaced ones, section starts and budgets growing with the file, with
questions drawn uniformly from the big files' chunks and scored through the vector arm alone
too) was measured by `benchmarks/budget_lab.py`: its table is `benchmarks/results/budget_lab.md`.
"""


def embedding_budget(page: MeasuredPage, indexing: IndexingResults) -> list[str]:
    """Per budget: chunks with and without a vector, nDCG@10 per group of questions and over
    all of them."""
    view = page.indexing_view
    rows = []
    for line in view.budgets:
        point = line.point
        if line.default:
            budget = f"**{point.budget}** (default)"
        else:
            budget = str(point.budget) if point.budget else "none"
        rows.append(
            [budget, thousands(point.chunks_with_vector), thousands(point.chunks_without_vector)]
            + [
                f"{score(group.ndcg_at_10)} ({group.questions})" if group else "–"
                for group in line.cells
            ]
            + [score(point.ndcg_at_10), share(point.hit_at_10)]
        )
    head = ["Budget", "Chunks with a vector", "Without"]
    head += [text_cell(group) for group in view.groups] + ["All: nDCG@10", "All: hit@10"]
    return [
        "### The embedding budget",
        "",
        *lines_of(EMBEDDING_BUDGET, questions=thousands(indexing.questions)),
        *table(head, rows),
        "",
    ]


#: The page's ``##`` sections, in order.
SECTIONS: tuple[Callable[[MeasuredPage], list[str]], ...] = (
    introduction,
    how_the_figures_were_made,
    quality_section,
    quality_on_postgresql,
    no_answer,
    latency_section,
    agents_section,
    scale_section,
    docs_build_section,
    indexing_section,
)
