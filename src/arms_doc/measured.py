"""The benchmark results behind the Measured page and the arms page's "What each arm buys".

The files are defined once, in :mod:`engine.measure.results_schema`; this module reads the results
folder with it, tells which files were measured with another ranking than the registry
describes now (stale), and lays out what the pages need beyond the typed results themselves:
the arm order, the calibration pivoted by floor, the provenance lines. The Measured page's
layout is a :class:`MeasuredPage`, which :mod:`arms_doc.measured_markdown` writes as Markdown;
"What each arm buys" is a context of the arms page's template. Both format every figure with
the filters of :mod:`arms_doc.render`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from arms_doc.render import when
from engine.files.config import DEFAULT_EF_SEARCH
from engine.measure.fingerprint import Ranking
from engine.measure.results_schema import (
    ABSTENTION,
    DOCS_BUILD,
    INDEXING,
    LATENCY,
    MCP,
    METRICS,
    PAGE_FILES,
    QUALITY,
    QUALITY_PG,
    SCALE,
    AbstentionResults,
    BudgetGroup,
    BudgetPoint,
    DocsBuildResults,
    FloorPoint,
    IndexingResults,
    IndexingRun,
    LatencyResults,
    Machine,
    McpResults,
    PgQualityResults,
    QualityResults,
    ResultsError,
    ResultsFile,
    ScaleResults,
    ScaleSearch,
    ScaleStore,
    Stamp,
    StoreLatency,
    StoreMcp,
    read_results,
)

#: The evaluation command a reader runs on one set to check the figures.
EVAL_COMMAND = "memsift eval DATASET --ablation"


@dataclass(frozen=True)
class Loaded:
    """One results file of the folder: absent (``results`` None), fresh or stale."""

    kind: ResultsFile[object]
    #: The file as readers see it, e.g. ``benchmarks/results/quality.json``.
    shown: str
    results: object | None
    #: How the recorded ranking differs from the registry's now; empty when it does not.
    changes: tuple[str, ...] = ()

    @property
    def stamp(self) -> Stamp | None:
        return self.results.stamp if self.results is not None else None  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Results:
    """Every results file the pages read, in :data:`PAGE_FILES` order."""

    #: The folder as readers see it, e.g. ``benchmarks/results``.
    folder: str
    files: tuple[Loaded, ...]

    def results_of(self, kind: ResultsFile[object]) -> Loaded:
        return next(loaded for loaded in self.files if loaded.kind is kind)

    @property
    def quality(self) -> QualityResults | None:
        return self.results_of(QUALITY).results  # type: ignore[return-value]

    @property
    def quality_pg(self) -> PgQualityResults | None:
        return self.results_of(QUALITY_PG).results  # type: ignore[return-value]

    @property
    def abstention(self) -> AbstentionResults | None:
        return self.results_of(ABSTENTION).results  # type: ignore[return-value]

    @property
    def latency(self) -> LatencyResults | None:
        return self.results_of(LATENCY).results  # type: ignore[return-value]

    @property
    def mcp(self) -> McpResults | None:
        return self.results_of(MCP).results  # type: ignore[return-value]

    @property
    def scale(self) -> ScaleResults | None:
        return self.results_of(SCALE).results  # type: ignore[return-value]

    @property
    def docs_build(self) -> DocsBuildResults | None:
        return self.results_of(DOCS_BUILD).results  # type: ignore[return-value]

    @property
    def indexing(self) -> IndexingResults | None:
        return self.results_of(INDEXING).results  # type: ignore[return-value]

    @property
    def stale(self) -> list[Loaded]:
        return [loaded for loaded in self.files if loaded.changes]

    @property
    def missing(self) -> list[Loaded]:
        return [loaded for loaded in self.files if loaded.results is None]


def load_results(folder: Path, *, display: str, current: Ranking | None) -> Results:
    """Read the folder's results files; a missing one is recorded as missing, not an error.

    A file whose ranking differs from ``current`` is stale (no check when ``current`` is
    None, nor for a file whose figures no ranking can move). Raises
    :class:`engine.measure.results_schema.ResultsError` for a file that cannot be read.
    """
    display = display.rstrip("/")
    files = []
    for kind in PAGE_FILES:
        path, shown = folder / kind.name, f"{display}/{kind.name}"
        if not path.is_file():
            if path.is_symlink() or path.exists():  # something is there: not "not measured"
                raise ResultsError(f"{shown}: cannot be read ({not_a_file(path)}); {fix(kind)}")
            files.append(Loaded(kind, shown, None))
            continue
        results = read_results(kind, path, shown)
        recorded = results.stamp.ranking  # type: ignore[attr-defined]
        checked = current is not None and kind.ranked
        changes = current.changes_since(recorded, kind.dialects) if checked else []
        files.append(Loaded(kind, shown, results, tuple(changes)))
    return Results(display, tuple(files))


def not_a_file(path: Path) -> str:
    """What sits at a results file's place instead of a file."""
    if path.is_symlink() and not path.exists():
        return "a link to a file that is not there"
    return "a folder" if path.is_dir() else "not a regular file"


def fix(kind: ResultsFile[object]) -> str:
    """How to clear the way for a results file."""
    return f"put the file `{kind.command}` writes there, or remove what is there"


def stale_message(loaded: Loaded, registry: str) -> str:
    """The warning for a stale results file: which file, what changed, how to refresh it."""
    return (
        f"{loaded.shown} was measured with another ranking than {registry} now describes "
        f"({'; '.join(loaded.changes)}), so its figures may no longer hold; refresh them with "
        f"`{loaded.kind.command}` and commit the new file"
    )


def tuning_drift(quality: QualityResults | None, weights: dict[str, float], k: int) -> list[str]:
    """Where the weights and k the lab chose differ from the registry's: the Measured page
    would present a procedure's choice that the registry does not hold."""
    tuning = quality.lab.tuning if quality and quality.lab else None
    if tuning is None:
        return []
    drift = [
        f"weight of {arm}: chosen {chosen:g}, registry {weights[arm]:g}"
        if arm in weights
        else f"weight of {arm}: chosen {chosen:g}, no such arm in the registry"
        for arm, chosen in tuning.weights.items()
        if weights.get(arm) != chosen
    ]
    if tuning.k != k:
        drift.append(f"k: chosen {tuning.k}, the engine's {k}")
    return drift


def arm_order(registry_arms: Sequence[str], quality: QualityResults | None) -> list[str]:
    """The registry's arms in its order, then any arm the results measured that it lacks."""
    measured = [e.arm for s in (quality.sets if quality else ()) for e in s.ablation]
    return [*registry_arms, *(arm for arm in dict.fromkeys(measured) if arm not in registry_arms)]


# --------------------------------------------------------------------------- provenance


def machine_line(machine: Machine) -> str:
    """One line: CPU, cores, OS and the versions on the measured path."""
    parts = [machine.cpu_model or ""]
    if machine.cpu_count:
        usable = machine.cpu_affinity
        parts.append(
            f"{machine.cpu_count} CPUs"
            + (f" ({usable} usable)" if usable and usable != machine.cpu_count else "")
        )
    parts.append(machine.platform or "")
    for value, name in (
        (machine.python, "Python"),
        (machine.sqlite, "SQLite"),
        (machine.sqlite_vec, "sqlite-vec"),
        (machine.numpy, "NumPy"),
        (machine.blas, "BLAS"),
        (machine.onnxruntime, "onnxruntime"),
        (machine.postgresql, "PostgreSQL"),
        (machine.pgvector, "pgvector"),
    ):
        parts.append(f"{name} {value}" if value else "")
    return ", ".join(part for part in parts if part) or "not recorded"


def commit_text(stamp: Stamp) -> str:
    if not stamp.git.commit:
        return "not recorded"
    dirty = " with uncommitted changes to `src/`" if stamp.git.src_dirty else ""
    return f"`{stamp.git.commit[:12]}`{dirty}"


@dataclass(frozen=True)
class FileRow:
    """One results file as the page's provenance table shows it."""

    #: The file as readers see it, e.g. ``benchmarks/results/quality.json``.
    file: str
    #: The command that writes it.
    command: str
    stamp: Stamp | None
    #: The stamp's time, commit and machine as the page prints them ("" without a stamp).
    made_at: str
    commit: str
    machine: str
    #: How the recorded ranking differs from the registry's now (empty: current).
    changes: tuple[str, ...]


def file_row(loaded: Loaded) -> FileRow:
    stamp = loaded.stamp
    return FileRow(
        file=loaded.shown,
        command=loaded.kind.command,
        stamp=stamp,
        made_at=when(stamp.made_at) if stamp else "",
        commit=commit_text(stamp) if stamp else "",
        machine=machine_line(stamp.machine) if stamp else "",
        changes=loaded.changes,
    )


@dataclass(frozen=True)
class MachineFiles:
    """The files measured on one machine (its :func:`machine_line`), in the page's order."""

    machine: str
    files: tuple[str, ...]


# --------------------------------------------------------------------------- page contexts


def buys_context(
    results: Results | None, registry_arms: Sequence[str], measured_link: str | None
) -> dict[str, object]:
    """The arms page's "What each arm buys": per set, each arm without and alone."""
    loaded = results.results_of(QUALITY) if results else None
    quality = results.quality if results else None
    return {
        "quality": quality,
        "sets": [s for s in quality.sets if s.ablation] if quality else [],
        "arms": arm_order(registry_arms, quality),
        "file": loaded.shown if loaded else f"benchmarks/results/{QUALITY.name}",
        "command": QUALITY.command,
        "stale": bool(loaded and loaded.changes),
        "link": measured_link,
        #: A site without benchmark results gets {"enabled": False} instead (arms_doc.page).
        "enabled": True,
    }


@dataclass(frozen=True)
class CalibrationRow:
    """One floor of the abstention calibration: a cell per set (None where the set did not
    try that floor)."""

    floor: float
    chosen: bool
    cells: tuple[FloorPoint | None, ...]


def calibration_rows(quality: QualityResults | None) -> tuple[CalibrationRow, ...]:
    """The abstention calibration pivoted: one row per floor, one cell per set (or None)."""
    calibration = quality.lab.calibration if quality and quality.lab else None
    if calibration is None:
        return ()
    floors = sorted({p.floor for s in calibration.sets for p in s.points})
    by_set = [{p.floor: p for p in s.points} for s in calibration.sets]
    return tuple(
        CalibrationRow(
            floor=floor,
            chosen=floor == calibration.chosen_floor,
            cells=tuple(points.get(floor) for points in by_set),
        )
        for floor in floors
    )


@dataclass(frozen=True)
class BackendRow:
    """One set PostgreSQL measured: nDCG@10 of the fusion, then of each arm alone, as
    (SQLite, PostgreSQL) pairs."""

    name: str
    queries: int
    cells: tuple[tuple[float | None, float | None], ...]


def backend_rows(
    quality: QualityResults | None, quality_pg: PgQualityResults | None
) -> tuple[tuple[str, ...], tuple[BackendRow, ...]]:
    """The arms PostgreSQL measured alone, and one row per set it measured: nDCG@10 of the
    fusion and of each of those arms alone, on SQLite (None where quality.json lacks the set
    or the arm) and on PostgreSQL."""
    if quality_pg is None:
        return (), ()
    arms = tuple(dict.fromkeys(arm for s in quality_pg.sets for arm in s.alone))
    rows = []
    for pg in quality_pg.sets:
        lite = quality.set_named(pg.name) if quality else None
        cells = [(lite.fused.ndcg_at_10 if lite else None, pg.fused.ndcg_at_10)]
        for arm in arms:
            entry = lite.ablation_of(arm) if lite else None
            mine = pg.alone.get(arm)
            cells.append(
                (
                    entry.alone.ndcg_at_10 if entry else None,
                    mine.ndcg_at_10 if mine else None,
                )
            )
        rows.append(BackendRow(pg.name, pg.fused.queries, tuple(cells)))
    return arms, tuple(rows)


def latency_arms(latency: LatencyResults | None, registry_arms: Sequence[str]) -> tuple[str, ...]:
    """The arms timed alone, in registry order (timings other than arms are fused_*, *_sql_only)."""
    timed = dict.fromkeys(
        key
        for store in (latency.stores if latency else ())
        for key in store.latency
        if not key.startswith("fused") and not key.endswith("_sql_only")
    )
    return tuple(arm for arm in registry_arms if arm in timed) + tuple(
        arm for arm in timed if arm not in registry_arms
    )


#: A way of searching that "halves" the exact search's median time is the page's threshold
#: for naming the size where HNSW starts to pay (a plain, stated rule; not a tuned one).
SWITCH_SPEEDUP = 2.0


@dataclass(frozen=True)
class ScaleRow:
    """One line of the scale table: a store searched one way."""

    store: ScaleStore
    search: ScaleSearch
    #: The exact search of the same store, for the speed-up (None for the exact row itself).
    exact: ScaleSearch | None

    @property
    def how(self) -> str:
        if self.search.vector_index == "exact":
            return "exact"
        return f"HNSW, ef_search {self.search.ef_search}"

    @property
    def speedup(self) -> float | None:
        if self.exact is None or self.search.fused.p50_ms <= 0:
            return None
        return self.exact.fused.p50_ms / self.search.fused.p50_ms


@dataclass(frozen=True)
class ScaleView:
    """The scale section laid out: a row per store and way of searching, and what the "when
    to switch" paragraph states."""

    rows: tuple[ScaleRow, ...]
    #: Each PostgreSQL size measured exactly and through HNSW at the default ef_search: its
    #: row at the default.
    switch: tuple[ScaleRow, ...]
    #: The first of those where HNSW at least halves the median, if any.
    first_halving: ScaleRow | None
    default_ef: int
    sqlite: tuple[ScaleStore, ...] = ()
    postgres: tuple[ScaleStore, ...] = ()


def scale_context(scale: ScaleResults | None, default_ef: int) -> ScaleView:
    """The scale section: a row per store and way of searching, and the figures the "when to
    switch" paragraph states (each PostgreSQL size's exact and default-HNSW medians, and the
    first size where HNSW halves the median, if any)."""
    if scale is None:
        return ScaleView((), (), None, default_ef)
    stores = sorted(scale.stores, key=lambda s: (s.backend != "sqlite", s.backend, s.files))
    rows: list[ScaleRow] = []
    switch: list[ScaleRow] = []
    for store in stores:
        exact = next((w for w in store.searches if w.vector_index == "exact"), None)
        for way in store.searches:
            row = ScaleRow(store, way, None if way is exact else exact)
            rows.append(row)
            if way.vector_index == "hnsw" and way.ef_search == default_ef and exact is not None:
                switch.append(row)
    first = next(
        (row for row in switch if row.speedup is not None and row.speedup >= SWITCH_SPEEDUP),
        None,
    )
    return ScaleView(
        rows=tuple(rows),
        switch=tuple(switch),
        first_halving=first,
        default_ef=default_ef,
        sqlite=tuple(s for s in stores if s.backend == "sqlite"),
        postgres=tuple(s for s in stores if s.backend == "postgresql"),
    )


@dataclass(frozen=True)
class BudgetRow:
    """One budget of the budget table: a cell per group of questions (None where the budget
    has no such group)."""

    point: BudgetPoint
    default: bool
    cells: tuple[BudgetGroup | None, ...]


@dataclass(frozen=True)
class IndexingView:
    """The indexing section laid out."""

    runs: tuple[IndexingRun, ...]
    #: after ÷ before, by IndexingRun field name, for each figure both runs have.
    ratios: dict[str, float]
    groups: tuple[str, ...]
    budgets: tuple[BudgetRow, ...]


def indexing_context(indexing: IndexingResults | None) -> IndexingView:
    """The indexing section: the runs, after ÷ before for each figure both runs have, and the
    budgets pivoted (one row per budget, one column per group of questions, in the order the
    first budget lists them)."""
    if indexing is None:
        return IndexingView((), {}, (), ())
    before, after = indexing.run_of("before"), indexing.run_of("after")
    ratios: dict[str, float] = {}
    if before is not None and after is not None:
        for name in ("wall_s", "cpu_s", "first_full_text_s", "fully_indexed_s", "peak_rss_mib"):
            old, new = getattr(before, name), getattr(after, name)
            if old > 0:
                ratios[name] = new / old
    groups = tuple(dict.fromkeys(g.group for point in indexing.budgets for g in point.groups))
    budgets = tuple(
        BudgetRow(
            point=point,
            default=point.budget == indexing.default_budget,
            cells=tuple(
                next((g for g in point.groups if g.group == name), None) for name in groups
            ),
        )
        for point in indexing.budgets
    )
    return IndexingView(tuple(indexing.runs), ratios, groups, budgets)


@dataclass(frozen=True)
class Commands:
    """The command that makes each results file, and the one a reader checks a set with."""

    quality: str = QUALITY.command
    quality_pg: str = QUALITY_PG.command
    abstention: str = ABSTENTION.command
    latency: str = LATENCY.command
    mcp: str = MCP.command
    scale: str = SCALE.command
    docs_build: str = DOCS_BUILD.command
    indexing: str = INDEXING.command
    eval: str = EVAL_COMMAND


@dataclass(frozen=True)
class MeasuredPage:
    """Everything the Measured page shows, laid out: the typed results themselves and what
    the page needs beyond them (:func:`measured_context` builds it;
    :mod:`arms_doc.measured_markdown` writes it as Markdown)."""

    #: The page ``memsift docs write`` puts in a file (it says so instead of speaking of a build).
    written: bool
    #: The results folder and the registry, as readers see them.
    folder: str
    registry: str
    #: Every results file, in :data:`PAGE_FILES` order.
    files: tuple[FileRow, ...]
    #: The stamped files grouped by the machine they were measured on.
    machines: tuple[MachineFiles, ...]
    commands: Commands
    #: The titles of the quality metrics, in :data:`METRICS` order.
    metrics: tuple[str, ...]
    quality: QualityResults | None
    #: The registry's arms in its order, then any other arm quality.json measured.
    arms: tuple[str, ...]
    calibration: tuple[CalibrationRow, ...]
    quality_pg: PgQualityResults | None
    backend_arms: tuple[str, ...]
    backends: tuple[BackendRow, ...]
    abstention: AbstentionResults | None
    latency: LatencyResults | None
    #: latency.json's stores by vector width, then size.
    stores: tuple[StoreLatency, ...]
    latency_arms: tuple[str, ...]
    mcp: McpResults | None
    #: mcp.json's stores by size.
    mcp_stores: tuple[StoreMcp, ...]
    scale: ScaleResults | None
    scale_view: ScaleView
    docs_build: DocsBuildResults | None
    indexing: IndexingResults | None
    indexing_view: IndexingView

    @property
    def stale(self) -> tuple[FileRow, ...]:
        """The files measured with another ranking than the registry's now."""
        return tuple(file for file in self.files if file.changes)


def measured_context(
    results: Results, registry: str, registry_arms: Sequence[str], *, written: bool = False
) -> MeasuredPage:
    """The Measured page's whole context; ``written`` for the page ``memsift docs write`` puts
    in a file (it says so instead of speaking of a build)."""
    files = tuple(file_row(loaded) for loaded in results.files)
    machines: dict[str, list[str]] = {}
    for file in files:
        if file.stamp is not None:
            machines.setdefault(file.machine, []).append(file.file)
    latency, mcp = results.latency, results.mcp
    backend_arms, backends = backend_rows(results.quality, results.quality_pg)
    return MeasuredPage(
        written=written,
        folder=results.folder,
        registry=registry,
        files=files,
        machines=tuple(MachineFiles(text, tuple(names)) for text, names in machines.items()),
        commands=Commands(),
        metrics=tuple(title for _, title in METRICS),
        quality=results.quality,
        arms=tuple(arm_order(registry_arms, results.quality)),
        calibration=calibration_rows(results.quality),
        quality_pg=results.quality_pg,
        backend_arms=backend_arms,
        backends=backends,
        abstention=results.abstention,
        latency=latency,
        stores=tuple(sorted(latency.stores, key=lambda s: (s.dim, s.files))) if latency else (),
        latency_arms=latency_arms(latency, registry_arms),
        mcp=mcp,
        mcp_stores=tuple(sorted(mcp.stores, key=lambda s: s.files)) if mcp else (),
        scale=results.scale,
        scale_view=scale_context(results.scale, DEFAULT_EF_SEARCH),
        docs_build=results.docs_build,
        indexing=results.indexing,
        indexing_view=indexing_context(results.indexing),
    )
