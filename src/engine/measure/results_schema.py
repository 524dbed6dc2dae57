"""The benchmark results files, defined once: the benchmarks write these, the docs read them.

``benchmarks/quality.py`` writes :class:`QualityResults` to ``quality.json``,
``benchmarks/latency.py`` writes :class:`LatencyResults` to ``latency.json`` and
``benchmarks/mcp_latency.py`` writes :class:`McpResults` to ``mcp.json`` (what an agent waits
for from ``memsift serve``); ``benchmarks/fusion_lab.py`` may write :class:`LabResults` to
``tuning.json`` (how the weights were chosen, which levers were tried, how the abstention
floor was calibrated), which ``quality.py`` merges into ``quality.json``;
``benchmarks/scale.py`` writes :class:`ScaleResults` to ``scale.json`` (large synthetic
stores on both backends, and the HNSW index's recall); ``benchmarks/docs_build.py`` writes
:class:`DocsBuildResults` to ``docs_build.json`` (what the docs plugin adds to a site's
build); ``benchmarks/indexing.py`` writes :class:`IndexingResults` to ``indexing.json`` (a store
of real documents indexed before and after the embedding budget, and each budget's answers).
The docs plugin's Measured page reads them back with :func:`read_results`. The dataclasses
are the whole schema: :mod:`engine.measure.typed_json` turns them into JSON and back, checking
every value against the type hints, so the writer cannot write what the reader refuses
(:func:`write_results` reads its text back before it writes), and a file that does not fit
fails with one line naming the file and the field.

Every file starts with the same :class:`Stamp`: which benchmark, when, from which commit, on
which machine, and the :class:`~engine.measure.fingerprint.Ranking` it measured. The docs build
compares that ranking with the one the registry describes now; figures measured with another
ranking are stale.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Generic, TypeVar

from engine.measure.fingerprint import Ranking
from engine.measure.typed_json import ShapeError, dumps, json_key, key_of, load

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "ABSTENTION",
    "DOCS_BUILD",
    "FORMAT",
    "INDEXING",
    "LAB",
    "LATENCY",
    "MCP",
    "METRICS",
    "PAGE_FILES",
    "QUALITY",
    "QUALITY_PG",
    "SCALE",
    "AbstentionCorpus",
    "AbstentionResults",
    "AnswerBytes",
    "ArmAblation",
    "BackendSet",
    "BudgetGroup",
    "BudgetPoint",
    "BuildComparison",
    "BuildRuns",
    "Calibration",
    "DocsBuildResults",
    "DocsBuildSettings",
    "FloorOutcome",
    "FloorPoint",
    "Fold",
    "Git",
    "IndexingCorpus",
    "IndexingResults",
    "IndexingRun",
    "LabResults",
    "LatencyResults",
    "Lever",
    "LeverTrials",
    "LoadWindow",
    "Machine",
    "McpResults",
    "McpSettings",
    "McpStoreBuild",
    "Metrics",
    "ModuleImport",
    "PgQualityResults",
    "PhaseTime",
    "PluginPhases",
    "QualityResults",
    "QualitySet",
    "QuestionOutcome",
    "ResultsError",
    "ResultsFile",
    "ScaleFullText",
    "ScaleResults",
    "ScaleSearch",
    "ScaleSettings",
    "ScaleStore",
    "ServerStart",
    "SetCalibration",
    "SharedSetChunks",
    "SiteBuilds",
    "SoakCheck",
    "SoakResults",
    "SoakRun",
    "SoakSettings",
    "Stamp",
    "StoreLatency",
    "StoreMcp",
    "Target",
    "Timing",
    "Tuning",
    "read_results",
    "write_results",
]

#: The layout of every results file; a file of another layout is refused with the fix.
FORMAT = 2

T = TypeVar("T")


# --------------------------------------------------------------------------- the stamp


@dataclass(frozen=True)
class Git:
    """The commit the benchmark ran from, and whether ``src/`` had uncommitted changes."""

    commit: str | None = None
    src_dirty: bool | None = None


@dataclass(frozen=True)
class Machine:
    """The CPU, the OS and the versions of everything on the measured path."""

    cpu_count: int | None = None
    cpu_affinity: int | None = None
    cpu_model: str | None = None
    platform: str | None = None
    python: str | None = None
    sqlite: str | None = None
    apsw: str | None = None
    sqlite_vec: str | None = None
    numpy: str | None = None
    blas: str | None = None
    onnxruntime: str | None = None
    #: The PostgreSQL server and pgvector, for figures measured on a team store.
    postgresql: str | None = None
    pgvector: str | None = None


@dataclass(frozen=True)
class Stamp:
    """Where a results file comes from; the same fields in every file."""

    #: Which benchmark wrote the file: "quality", "latency", "mcp" or "fusion_lab".
    benchmark: str
    format: int
    #: ISO 8601, UTC.
    made_at: str
    #: What the measured ranking depended on (:func:`engine.measure.fingerprint.ranking`).
    ranking: Ranking
    git: Git = field(default_factory=Git)
    machine: Machine = field(default_factory=Machine)
    #: Anything a reader of the figures must know about how the file came to be (the page
    #: shows it), e.g. that its stamp was rewritten after the run.
    note: str | None = None


# --------------------------------------------------------------------------- quality


def metric(key: str, title: str) -> dict[str, str]:
    return {**json_key(key), "title": title}


@dataclass(frozen=True)
class Metrics:
    """One ranking's figures over a set's judged queries (as ``memsift eval`` reports them)."""

    queries: int
    ndcg_at_10: float = field(metadata=metric("ndcg@10", "nDCG@10"))
    mrr_at_10: float = field(metadata=metric("mrr@10", "MRR@10"))
    recall_at_5: float = field(metadata=metric("recall@5", "R@5"))
    recall_at_10: float = field(metadata=metric("recall@10", "R@10"))

    def scores(self) -> list[float]:
        """The figures in :data:`METRICS` order."""
        return [getattr(self, f.name) for f in fields(self) if f.name != "queries"]


#: The metrics' keys in JSON (``memsift eval``'s names) and their titles on the page, in order.
METRICS: tuple[tuple[str, str], ...] = tuple(
    (key_of(f), f.metadata["title"]) for f in fields(Metrics) if f.name != "queries"
)


@dataclass(frozen=True)
class ArmAblation:
    """One arm of the registry: the ranking it makes alone, and the fusion without it."""

    arm: str
    alone: Metrics
    without: Metrics


@dataclass(frozen=True)
class QualitySet:
    """One evaluation set: the default fusion, every arm's ablation, outside reference figures."""

    name: str
    fused: Metrics
    #: One entry per arm of the registry, in registry order.
    ablation: tuple[ArmAblation, ...] = ()
    by_category: dict[str, Metrics] = field(default_factory=dict)
    #: nDCG@10 of outside systems on the same files (as published with the set).
    references: dict[str, float] = field(default_factory=dict)
    seconds: float | None = None
    #: True for a set kept out of tuning altogether (measured separately).
    held_out: bool = False

    def __post_init__(self) -> None:
        arms = [entry.arm for entry in self.ablation]
        if len(set(arms)) != len(arms):
            raise ValueError(f"set {self.name!r} lists an arm twice in its ablation: {arms}")

    def ablation_of(self, arm: str) -> ArmAblation | None:
        return next((entry for entry in self.ablation if entry.arm == arm), None)

    @property
    def best_single(self) -> ArmAblation | None:
        """The arm whose ranking alone scores the best nDCG@10 (the first one on a tie)."""
        best = None
        for entry in self.ablation:
            if best is None or entry.alone.ndcg_at_10 > best.alone.ndcg_at_10:
                best = entry
        return best


@dataclass(frozen=True)
class Fold:
    """One leave-one-set-out round: the setting tuned on the other sets, scored on this one."""

    held_out: str
    weights: dict[str, float]
    k: int
    ndcg_at_10: float = field(metadata=json_key("ndcg@10"))


@dataclass(frozen=True)
class Tuning:
    """How the registry's weights (and k) were chosen."""

    #: One paragraph: the grid searched, the objective, the sets.
    procedure: str
    #: The chosen setting: what the registry holds.
    weights: dict[str, float]
    k: int
    folds: tuple[Fold, ...] = ()


@dataclass(frozen=True)
class Lever:
    """A change to the ranking that was built and measured, and whether it was kept."""

    name: str
    #: Set name -> nDCG@10 with the lever.
    ndcg_at_10: dict[str, float] = field(metadata=json_key("ndcg@10"))
    kept: bool
    note: str


@dataclass(frozen=True)
class LeverTrials:
    """Every lever tried, each against the same baseline."""

    #: What each lever was compared with, e.g. "weighted RRF with the chosen weights".
    baseline: str
    baseline_ndcg_at_10: dict[str, float] = field(metadata=json_key("baseline_ndcg@10"))
    levers: tuple[Lever, ...] = ()


@dataclass(frozen=True)
class FloorPoint:
    """What one similarity floor does on one set: shares of that set's queries, 0 to 1."""

    floor: float
    #: Answerable queries that would get no answer.
    answerable_silenced: float
    #: Foreign queries (nothing in the store answers them) that would correctly get none.
    foreign_caught: float

    def __post_init__(self) -> None:
        for share in (self.answerable_silenced, self.foreign_caught):
            if not 0 <= share <= 1:
                raise ValueError(f"a share of queries must lie in 0..1, found {share}")


@dataclass(frozen=True)
class SetCalibration:
    set: str
    #: How many answerable and foreign queries the shares are of.
    answerable: int
    foreign: int
    points: tuple[FloorPoint, ...]


@dataclass(frozen=True)
class Calibration:
    """How the abstention floor was chosen."""

    #: The rule the floor belongs to, in one sentence.
    rule: str
    chosen_floor: float
    sets: tuple[SetCalibration, ...]


@dataclass(frozen=True)
class LabResults:
    """``tuning.json``, written by ``benchmarks/fusion_lab.py``; each part may be absent."""

    stamp: Stamp
    tuning: Tuning | None = None
    levers: LeverTrials | None = None
    calibration: Calibration | None = None


@dataclass(frozen=True)
class QualityResults:
    """``quality.json``: every evaluation set, and the lab's record when there was one."""

    stamp: Stamp
    sets: tuple[QualitySet, ...]
    lab: LabResults | None = None

    def __post_init__(self) -> None:
        names = [result.name for result in self.sets]
        if len(set(names)) != len(names):
            raise ValueError(f"a set is listed twice: {names}")

    def set_named(self, name: str) -> QualitySet | None:
        return next((result for result in self.sets if result.name == name), None)


@dataclass(frozen=True)
class BackendSet:
    """One evaluation set scored on another backend than SQLite: the default fusion and the
    arms that find candidates, each alone (the priors only reorder what those find)."""

    name: str
    fused: Metrics
    #: Arm name -> its ranking alone, in registry order.
    alone: dict[str, Metrics] = field(default_factory=dict)
    seconds: float | None = None


@dataclass(frozen=True)
class PgQualityResults:
    """``quality_pg.json``: the evaluation sets scored on PostgreSQL (the path of
    ``memsift eval --database-url``), to set beside ``quality.json``'s SQLite figures."""

    stamp: Stamp
    #: The server the sets were indexed into, e.g. "PostgreSQL 18.1, pgvector 0.8.1".
    server: str
    sets: tuple[BackendSet, ...]

    def __post_init__(self) -> None:
        names = [result.name for result in self.sets]
        if len(set(names)) != len(names):
            raise ValueError(f"a set is listed twice: {names}")

    def set_named(self, name: str) -> BackendSet | None:
        return next((result for result in self.sets if result.name == name), None)


# --------------------------------------------------------------------------- latency


@dataclass(frozen=True)
class Timing:
    """Percentiles of one configuration's times in milliseconds (wall, and CPU when recorded)."""

    n: int
    p50_ms: float
    p95_ms: float
    mean_ms: float | None = None
    min_ms: float | None = None
    max_ms: float | None = None
    cpu_p50_ms: float | None = None
    cpu_p95_ms: float | None = None


@dataclass(frozen=True)
class LoadWindow:
    """Load averages (1, 5, 15 minutes) before and after a phase."""

    before: tuple[float, ...]
    after: tuple[float, ...]


@dataclass(frozen=True)
class Memory:
    """Peaks of one process, in MiB; each only where the phase measures it."""

    peak_rss_mib: float | None = None
    python_peak_mib: float | None = None
    sqlite_heap_peak_mib: float | None = None
    matrix_mib: float | None = None


@dataclass(frozen=True)
class StoreFacts:
    files: int
    chunks: int
    chunks_per_file: float
    files_in_scope: int
    chunks_in_scope: int
    event_at_share: float
    access_rows: int


@dataclass(frozen=True)
class StoreBuild:
    files: int
    chunks: int
    vectors: int
    access_rows: int
    dim: int
    build_s: float
    build_peak_rss_mib: float
    index_db_mib: float
    #: True when the store was reused from the cache (then no load averages were taken).
    cached: bool
    load_average: LoadWindow | None = None


@dataclass(frozen=True)
class StoreMemory:
    search: Memory
    floor: Memory
    build: Memory


@dataclass(frozen=True)
class PhaseLoads:
    search: LoadWindow
    floor: LoadWindow


@dataclass(frozen=True)
class Recall:
    mean: float
    min: float


@dataclass(frozen=True)
class StoreLatency:
    """One synthetic store: search times fused and per arm, the NumPy floor, recall, memory."""

    files: int
    dim: int
    store: StoreFacts
    build: StoreBuild
    #: "fused", "fused_searcher", "fused_sql_only", "vector_sql_only" and each arm alone.
    latency: dict[str, Timing]
    floor: Timing
    floor_per_file: Timing
    floor_blas_threads: str
    floor_by_threads: dict[str, Timing]
    floor_load_s: float
    ratios: dict[str, float]
    vector_recall_at_40: Recall
    memory: StoreMemory
    load_average: PhaseLoads

    def __post_init__(self) -> None:
        if "fused" not in self.latency:
            raise ValueError("the store's latency has no 'fused' timing")


@dataclass(frozen=True)
class LexicalIndexing:
    files: int
    indexed: int
    skipped: int
    seconds: float
    files_per_s: float
    unchanged_rescan_s: float
    unchanged_files_per_s: float
    memory: Memory
    load_average: LoadWindow


@dataclass(frozen=True)
class EmbeddingIndexing:
    files: int
    texts: int
    model: str
    model_load_s: float
    raw_embed_s: float
    raw_embed_runs_s: tuple[float, ...]
    index_with_embed_runs_s: tuple[float, ...]
    raw_texts_per_s: float
    lexical_index_s: float
    index_with_embed_s: float
    overhead: float
    overhead_beyond_lexical: float
    memory: Memory
    load_average: LoadWindow


@dataclass(frozen=True)
class Indexing:
    lexical: LexicalIndexing | None = None
    embedding: EmbeddingIndexing | None = None


@dataclass(frozen=True)
class Target:
    name: str
    #: The goal as text, e.g. "<= 5.0 ms", "< 15%".
    target: str
    measured: float
    met: bool


@dataclass(frozen=True)
class LatencySettings:
    quick: bool
    seed: int
    queries: int
    warmup: int
    budget_s_per_config: float
    k: int
    final_limit: int
    #: How the query vector was obtained (its embedding time is excluded).
    query_vector: str
    #: What each memory figure measures.
    memory: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class LatencyResults:
    """``latency.json``: search latency per store size against its floor, and indexing."""

    stamp: Stamp
    load_average_at_start: tuple[float, ...]
    settings: LatencySettings
    stores: tuple[StoreLatency, ...]
    indexing: Indexing
    elapsed_s: float
    targets: tuple[Target, ...] = ()


# --------------------------------------------------------------------------- mcp


@dataclass(frozen=True)
class McpStoreBuild:
    """The synthetic store the server was started on: real Markdown files and a real index."""

    files: int
    chunks: int
    build_s: float
    #: True when the store was reused from the benchmark's cache (build_s is then the first
    #: build's time).
    cached: bool


@dataclass(frozen=True)
class ServerStart:
    """How long an agent waits before ``memsift serve`` answers, and its first search."""

    #: Spawn to the end of the MCP handshake.
    handshake_s: float
    #: Spawn to an index caught up with the files and at full vector coverage.
    ready_s: float
    first_search_ms: float


@dataclass(frozen=True)
class AnswerBytes:
    """Sizes of the timed ``memory_search`` answers as the agent receives them (UTF-8)."""

    p50: int
    max: int


@dataclass(frozen=True)
class StoreMcp:
    """One store size: the server's start, search through MCP beside in process, the query
    embedding alone and the one-shot CLI, and ``memory_remember``."""

    files: int
    store: McpStoreBuild
    server: ServerStart
    #: ``memory_search`` through the SDK's client over stdio, warm, query embedding included.
    search_mcp: Timing
    #: The same searches through ``MemoryService`` in the benchmark's process: no protocol.
    search_in_process: Timing
    #: The real model embedding each query, nothing else.
    query_embedding_alone: Timing
    #: ``memsift search`` as a new process per query: what an agent without the server pays.
    search_cli_one_shot: Timing
    answer_bytes: AnswerBytes
    #: Timed answers that said the search ran degraded (an arm could not run).
    degraded_answers: int
    #: Write, index and embed one new memory; None when the run remembered nothing.
    remember_mcp: Timing | None = None
    #: This store's targets (issue 11), each met or missed.
    targets: tuple[Target, ...] = ()
    #: Load averages before and after this store's measurements (None in files that predate it).
    load_average: LoadWindow | None = None


@dataclass(frozen=True)
class McpSettings:
    seed: int
    #: Timed searches per store, after ``warmup`` untimed ones.
    queries: int
    warmup: int
    #: Hits asked for per search.
    limit: int
    #: Where the query vector comes from (the server embeds each query: included).
    query_vector: str
    #: What the store's chunk vectors are.
    stored_vectors: str
    #: How the benchmark talks to the server.
    transport: str
    #: Timed ``memory_remember`` calls and one-shot CLI searches asked for per store (None in
    #: files that predate them; the timings' ``n`` says how many ran).
    remembers: int | None = None
    cli_runs: int | None = None


@dataclass(frozen=True)
class McpResults:
    """``mcp.json``: search as an agent sees it through ``memsift serve``, per store size."""

    stamp: Stamp
    load_average_at_start: tuple[float, ...]
    settings: McpSettings
    stores: tuple[StoreMcp, ...]
    elapsed_s: float
    load_average_at_end: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        sizes = [store.files for store in self.stores]
        if len(set(sizes)) != len(sizes):
            raise ValueError(f"a store size is listed twice: {sizes}")

    @property
    def targets(self) -> tuple[Target, ...]:
        """Every store's targets, in store order."""
        return tuple(target for store in self.stores for target in store.targets)


# --------------------------------------------------------------------------- scale


@dataclass(frozen=True)
class ScaleSearch:
    """One way of searching one synthetic store: exact, or through HNSW at one ef_search."""

    #: "exact" or "hnsw".
    vector_index: str
    #: pgvector's hnsw.ef_search (None when exact).
    ef_search: int | None
    #: The fused statement alone, as a search binds it (every arm that runs).
    fused: Timing
    #: The whole search around it (the full-text probe, the statement, snippets); the query
    #: vector is precomputed, so embedding time is excluded.
    search: Timing
    #: Of the vector arm's 40 nearest memories by the exact scan, the share this way finds
    #: (per query: mean and worst); None for the exact scan itself.
    recall_at_40: Recall | None
    load_average: LoadWindow


@dataclass(frozen=True)
class ScaleFullText:
    """The full-text arm alone on one PostgreSQL store: every matching chunk scored (the store
    without champion lists) against the pre-selection of :mod:`engine.pg.champions`, on the
    same queries, and how much of the exact ranking the pre-selection keeps."""

    #: Making the champion lists (both passes over the chunks' postings), and how many words
    #: got one.
    build_s: float
    words: int
    #: The fts arm's statement alone (weights 0 for every other arm), 100 candidates.
    exact: Timing
    preselected: Timing
    #: Per query, the share of the exact scan's 100 (and 10) best memories the pre-selection
    #: ranks among its own 100 (10): mean and worst.
    recall_at_100: Recall
    recall_at_10: Recall
    #: Queries whose 100 memories came out in exactly the exact scan's order.
    identical: int


@dataclass(frozen=True)
class ScaleStore:
    """One synthetic store of one backend and size, and how fast it is searched."""

    #: "sqlite" or "postgresql".
    backend: str
    files: int
    chunks: int
    vectors: int
    dim: int
    queries: int
    #: Writing the rows (for PostgreSQL including the full-text vectors and the GIN index).
    build_s: float
    database_mib: float
    #: Building the HNSW index (declaring the column's width and the graph), when measured.
    hnsw_build_s: float | None
    hnsw_mib: float | None
    searches: tuple[ScaleSearch, ...]
    build_load_average: LoadWindow
    #: ISO 8601, UTC: when this store was measured (a run may add sizes to an earlier file).
    made_at: str
    #: PostgreSQL only: the full-text arm with and without its pre-selection (None: a store
    #: measured before the pre-selection existed, or on SQLite).
    full_text: ScaleFullText | None = None


@dataclass(frozen=True)
class ScaleSettings:
    seed: int
    #: How the synthetic rows and vectors were made (shown on the page).
    data: str
    query_vector: str
    clusters: int
    #: The HNSW build's parameters and the server's memory settings during the run.
    hnsw_m: int
    hnsw_ef_construction: int
    shared_buffers: str | None
    maintenance_work_mem: str | None
    #: The work_mem PostgreSQL searches ran with; None: the server's default (4MB), as the
    #: engine left it before it set ``[database] work_mem`` on its search connections.
    search_work_mem: str | None = None


@dataclass(frozen=True)
class ScaleResults:
    """``scale.json``: search latency on large synthetic stores, SQLite and PostgreSQL (exact
    and HNSW), and HNSW's recall against the exact scan."""

    stamp: Stamp
    settings: ScaleSettings
    stores: tuple[ScaleStore, ...]


# --------------------------------------------------------------------------- soak


@dataclass(frozen=True)
class SoakSettings:
    """What ``benchmarks/soak.py`` ran: two servers and a CLI writer on one lexical store."""

    servers: int
    #: The fewest calls each server is sent, ``in_flight`` at a time (pipelined); each goes on
    #: until the CLI writer is done too, so the three sources overlap throughout.
    server_calls: int
    in_flight: int
    #: One-shot ``memsift`` processes, ``cli_parallel`` at a time.
    cli_calls: int
    cli_parallel: int
    #: Memories the reads and reinforcements pick from; the share of calls that remember.
    memories: int
    remember_share: float
    seed: int
    #: The store's embedder ("none": lexical only, so remembers index without embedding).
    model: str


@dataclass(frozen=True)
class SoakCheck:
    """What one soak found: every count a lost write would change."""

    calls: int
    #: "<source> <tool>" -> calls made (a server's status calls included).
    calls_by_tool: dict[str, int]
    errors: int
    #: "<source> <tool>" -> errors; a few distinct messages, cut to 300 characters.
    errors_by_tool: dict[str, int]
    error_samples: tuple[str, ...]
    #: Reads answered, and the accesses state.db counted for the soak's memories.
    reads: int
    reads_counted: int
    #: Memories whose count is not their reads, or whose reads did not answer 1..n.
    memories_with_wrong_counts: int
    reinforcements: int
    #: Memories whose answered outcomes do not fold, each once, into the final score.
    memories_with_broken_outcome_chain: int
    remembers: int
    remembered_not_once_on_disk: int
    #: Remembers answered ``indexed: false`` (allowed: the watchers index them).
    answered_not_indexed: int
    remembered_not_indexed_once_after_settling: int
    #: "<source> <tool>" -> how long its calls took to answer, a failed call included.
    latency: dict[str, Timing] = field(default_factory=dict)


@dataclass(frozen=True)
class SoakRun:
    run: int
    #: Seconds from each source's first call to its last answer ("serve-1", "serve-2", "cli").
    elapsed_s: dict[str, float]
    load_average: LoadWindow
    check: SoakCheck


@dataclass(frozen=True)
class SoakResults:
    """``soak.json``: whether two servers and a CLI on one store lose a read, an outcome or a
    memory (not a Measured-page file: its figures are counts that must be zero)."""

    stamp: Stamp
    settings: SoakSettings
    runs: tuple[SoakRun, ...]
    elapsed_s: float


# --------------------------------------------------------------------------- abstention


@dataclass(frozen=True)
class QuestionOutcome:
    """One question of ``benchmarks/abstention/<corpus>.json`` through the normal search."""

    question: str
    #: False when the search answered nothing (abstained).
    answered: bool
    #: The full-text form bound: "all" (a memory holds every query word: never silenced),
    #: "any", or None (no query terms).
    fts_form: str | None
    #: The similarity to the question of the memory nearest in meaning (its closest chunk),
    #: a hit or not, withheld or not (``SearchResult.best_similarity``).
    best_similarity: float | None
    #: Where the expected file ranked among the ten hits (answerable questions; None: not
    #: there, or nothing was answered).
    expected_rank: int | None = None
    #: The floor the search applied, as it described it (None: none was needed).
    floor: str | None = None
    #: Why a withheld question was: "floor" or "coverage" (engine.search.abstain); None when
    #: it was answered, or in files written before the coverage test.
    withheld_by: str | None = None


@dataclass(frozen=True)
class FloorOutcome:
    """Every question of one corpus under one rule: "fixed" (the old 0.25, given as
    ``--min-similarity``), "store" (the store's own floor alone), "words" (the store floor and
    the coverage test's words rule alone, ``[limits] withhold_unseen = "words"``) or "default"
    (the store floor and both rules of the coverage test: the default). Files written before
    have "store+unseen" (both rules, when the names rule was opt-in), and "default" meant the
    words rule alone."""

    floor: str
    #: The floor as the search described it, e.g. "store floor 0.37 from 48 probes".
    floor_text: str
    #: Counts of the corpus's questions (the lists below hold every one).
    foreign_answered: int
    answerable_silenced: int
    #: Answerable questions whose expected file was among the ten hits.
    expected_in_top_10: int
    answerable: tuple[QuestionOutcome, ...]
    foreign: tuple[QuestionOutcome, ...]


@dataclass(frozen=True)
class AbstentionCorpus:
    """One store of real documents and how each floor did on its questions."""

    name: str
    #: Where the documents came from, in a sentence.
    source: str
    documents: int
    chunks: int
    #: Chunks this run embedded (0 when the cached store was already indexed).
    embedded_this_run: int
    #: Expected files of answerable questions this machine's corpus lacks (those questions
    #: were not asked).
    missing_expected: tuple[str, ...]
    floors: tuple[FloorOutcome, ...]
    seconds: float

    def floor_named(self, name: str) -> FloorOutcome | None:
        return next((f for f in self.floors if f.floor == name), None)


@dataclass(frozen=True)
class AbstentionResults:
    """``abstention.json``: foreign questions answered and answerable ones silenced, per
    corpus of real documents, under today's fixed floor and under the store floor."""

    stamp: Stamp
    #: The fixed floor measured beside the store floor.
    fixed_floor: float
    corpora: tuple[AbstentionCorpus, ...]


# --------------------------------------------------------------------------- docs build


@dataclass(frozen=True)
class BuildRuns:
    """One way of building a site, each build a fresh process: seconds per build."""

    wall_s: tuple[float, ...]
    #: CPU time of the build's process and its children (git), user and system.
    cpu_s: tuple[float, ...]
    wall_median_s: float
    cpu_median_s: float


@dataclass(frozen=True)
class BuildComparison:
    """The builds with the plugin against another way of building the same site, round by
    round (the two built one after the other in each round)."""

    #: Each round's time with the plugin divided by its time the other way.
    wall_ratios: tuple[float, ...]
    cpu_ratios: tuple[float, ...]
    #: The medians of the rounds' ratios.
    wall_ratio: float
    cpu_ratio: float
    #: The medians of the rounds' differences: what the plugin adds, in seconds.
    wall_extra_s: float
    cpu_extra_s: float


@dataclass(frozen=True)
class ModuleImport:
    """One module the plugin imports, timed in a process that has built the site without the
    plugin first (what MkDocs and the site's other plugins import is already there)."""

    module: str
    ms: float


@dataclass(frozen=True)
class PhaseTime:
    """One step of a build with the plugin: in the process's first build with it and in a
    second build in the same process."""

    phase: str
    first_ms: float
    warm_ms: float


@dataclass(frozen=True)
class PluginPhases:
    """Where the plugin's time goes in one process: its imports, then each step, twice."""

    imports: tuple[ModuleImport, ...]
    steps: tuple[PhaseTime, ...]
    #: The plugin's ``on_files`` (reading, checking and rendering both pages) as a whole.
    on_files: PhaseTime
    #: The whole build, MkDocs' own work included (the imports above not included).
    build: PhaseTime
    #: Compiling the plugin's templates without Jinja's cache: what a machine's first build
    #: added (the builds above loaded them from the cache). The arms page's template only once
    #: the Measured page was written in plain Python; None since the arms page is too (no
    #: template left to compile).
    templates_compile_ms: float | None = None


@dataclass(frozen=True)
class SiteBuilds:
    """One site built in rounds: with the plugin, without it (the plugin and its pages left
    out), with its pages as plain files (the plugin left out, the two pages it generated
    written into a copy of the docs folder, as ``memsift docs write`` would), and with the
    plugin remembering nothing from earlier builds."""

    name: str
    #: What the site is, in a sentence.
    description: str
    #: Pages the site has without the plugin's.
    pages: int
    with_plugin: BuildRuns
    without_plugin: BuildRuns
    pages_as_files: BuildRuns
    versus_without: BuildComparison
    versus_files: BuildComparison
    load_average: LoadWindow
    phases: PluginPhases | None = None
    #: With the plugin and nothing it remembers across builds (its cache folder empty: a fresh
    #: checkout's first build, or CI); absent from files measured before it was.
    with_plugin_cold: BuildRuns | None = None
    cold_versus_without: BuildComparison | None = None


@dataclass(frozen=True)
class DocsBuildSettings:
    #: Rounds of builds per site (each round builds the site every way, in rotating order).
    rounds: int
    #: How each build was run.
    builder: str
    #: Processes that timed the plugin's steps (their medians are the phases).
    phase_runs: int


@dataclass(frozen=True)
class DocsBuildResults:
    """``docs_build.json``: what the arms-doc plugin adds to a site's build."""

    stamp: Stamp
    settings: DocsBuildSettings
    sites: tuple[SiteBuilds, ...]
    targets: tuple[Target, ...]
    load_average_at_start: tuple[float, ...]
    load_average_at_end: tuple[float, ...]
    elapsed_s: float

    def __post_init__(self) -> None:
        names = [site.name for site in self.sites]
        if len(set(names)) != len(names):
            raise ValueError(f"a site is listed twice: {names}")

    def site_named(self, name: str) -> SiteBuilds | None:
        return next((site for site in self.sites if site.name == name), None)


# --------------------------------------------------------------------------- indexing


@dataclass(frozen=True)
class IndexingCorpus:
    """The store of real documents both index runs indexed (built from the machine's docs at
    run time, sampled by a hash of each document's key)."""

    #: Where the documents came from, in a sentence.
    source: str
    #: The share of the machine's ordinary and huge documents sampled.
    share: float
    documents: int
    #: HTML files among them (each the twin of a Markdown page).
    html: int
    twins: int
    #: Documents the machine offered: ordinary, and huge (over 64 chunks).
    machine_ordinary: int
    machine_huge: int
    #: The store's files over 64 chunks, each "path (N chunks)", largest first.
    huge_files: tuple[str, ...]
    chunks_in_huge_files: int
    megabytes: float


@dataclass(frozen=True)
class IndexingRun:
    """``memsift index`` of the store from scratch by one version of the code, in a fresh
    process; the counts read from the index it left, the same way for either code."""

    #: "before" (the code the issue measured) or "after" (this commit).
    code: str
    #: Which code, e.g. "9a5cde3 (before the budget)" or "this commit".
    source: str
    files: int
    chunks: int
    #: Distinct texts embedded (vectors in the index).
    embedded: int
    #: Chunks whose vector another chunk's identical text supplied.
    reused: int
    #: Chunks left without a vector (past their file's embedding budget).
    past_budget: int
    #: What ``index --json`` itself reported (its whole-number fields; older code reports fewer).
    reported: dict[str, int]
    #: The budget the run embedded with, as its index recorded it (None: code before budgets).
    embed_chunks_per_file: int | None
    wall_s: float
    #: CPU time of the indexing process (user and system), from ``wait4``.
    cpu_s: float
    #: Seconds from the start until a lexical ``memsift search --no-vector`` first answered.
    first_full_text_s: float
    #: Seconds until the index process returned, every chunk within the budget embedded.
    fully_indexed_s: float
    #: Peak resident memory of the indexing process, in MiB.
    peak_rss_mib: float
    load_average: LoadWindow


@dataclass(frozen=True)
class BudgetGroup:
    """One group of known-item questions under one budget: those whose answer lies in a band
    of chunk numbers of a big file, or those answered by short documents."""

    group: str
    questions: int
    ndcg_at_10: float = field(metadata=json_key("ndcg@10"))
    hit_at_1: float = field(metadata=json_key("hit@1"))
    hit_at_10: float = field(metadata=json_key("hit@10"))


@dataclass(frozen=True)
class BudgetPoint:
    """The store's known-item questions answered with one per-file embedding budget."""

    #: Chunks embedded per file; None: no budget.
    budget: int | None
    chunks_with_vector: int
    chunks_without_vector: int
    groups: tuple[BudgetGroup, ...]
    #: Over every question.
    ndcg_at_10: float = field(metadata=json_key("ndcg@10"))
    hit_at_10: float = field(metadata=json_key("hit@10"))


@dataclass(frozen=True)
class SharedSetChunks:
    """A shared evaluation set's largest document in the engine's chunks: any budget at or
    above it leaves the set's index, and its quality, unchanged."""

    name: str
    max_chunks_per_document: int


@dataclass(frozen=True)
class IndexingResults:
    """``indexing.json``: a store of real documents indexed by today's code and by the code
    before the embedding budget, and the search quality of each budget on that store."""

    stamp: Stamp
    corpus: IndexingCorpus
    runs: tuple[IndexingRun, ...]
    #: The lexical question asked while the index was built.
    probe_query: str
    budgets: tuple[BudgetPoint, ...]
    questions: int
    #: ``[limits] embed_chunks_per_file``'s default when the file was written.
    default_budget: int
    shared_sets: tuple[SharedSetChunks, ...]
    targets: tuple[Target, ...]
    load_average_at_start: tuple[float, ...]
    load_average_at_end: tuple[float, ...]
    elapsed_s: float

    def __post_init__(self) -> None:
        codes = [run.code for run in self.runs]
        if len(set(codes)) != len(codes):
            raise ValueError(f"a code is listed twice: {codes}")

    def run_of(self, code: str) -> IndexingRun | None:
        return next((run for run in self.runs if run.code == code), None)


# --------------------------------------------------------------------------- the files


@dataclass(frozen=True)
class ResultsFile(Generic[T]):
    """A results file: its name, the benchmark that writes it, its schema, and the backends
    its figures are measured on (only their dialects' SQL can make the figures stale)."""

    name: str
    benchmark: str
    command: str
    schema: type[T]
    dialects: tuple[str, ...] = ("sqlite",)
    #: Whether the figures depend on the ranking at all. A file that measures something no
    #: ranking change can move (what the docs plugin costs a build) keeps its stamp, for the
    #: record, but is never called stale: a weight change must not force a rerun that would
    #: measure the same thing again.
    ranked: bool = True


QUALITY = ResultsFile("quality.json", "quality", "python benchmarks/quality.py", QualityResults)
LATENCY = ResultsFile("latency.json", "latency", "python benchmarks/latency.py", LatencyResults)
MCP = ResultsFile("mcp.json", "mcp", "python benchmarks/mcp_latency.py --large", McpResults)
QUALITY_PG = ResultsFile(
    "quality_pg.json",
    "quality_pg",
    "python benchmarks/quality.py --database-url URL",
    PgQualityResults,
    dialects=("postgresql",),
)
LAB = ResultsFile("tuning.json", "fusion_lab", "python benchmarks/fusion_lab.py", LabResults)
SCALE = ResultsFile(
    "scale.json",
    "scale",
    "python benchmarks/scale.py",
    ScaleResults,
    dialects=("sqlite", "postgresql"),
)
ABSTENTION = ResultsFile(
    "abstention.json", "abstention", "python benchmarks/abstention.py", AbstentionResults
)
DOCS_BUILD = ResultsFile(
    "docs_build.json",
    "docs_build",
    "python benchmarks/docs_build.py",
    DocsBuildResults,
    ranked=False,
)
INDEXING = ResultsFile(
    "indexing.json",
    "indexing",
    "nice -n 10 python benchmarks/indexing.py --src BEFORE/src",
    IndexingResults,
    ranked=False,
)
#: The files the Measured page is made from, in the page's order. A new benchmark joins with a
#: dataclass for its file above, a ResultsFile here, and a section of the page
#: (arms_doc/measured.py and arms_doc/measured_markdown.py).
PAGE_FILES: tuple[ResultsFile[object], ...] = (
    QUALITY,
    QUALITY_PG,
    ABSTENTION,
    LATENCY,
    MCP,
    SCALE,
    DOCS_BUILD,
    INDEXING,
)


class ResultsError(Exception):
    """A results file that cannot be read; the message names the file, the field and the fix."""


def read_results(kind: ResultsFile[T], path: Path, display: str) -> T:
    """The file at ``path`` (called ``display`` in messages) as ``kind``'s schema."""
    rerun = f"the file is written by `{kind.command}`: run it again to rewrite it"
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ResultsError(f"{display}: not UTF-8 text ({exc.reason}); {rerun}") from None
    except OSError as exc:
        raise ResultsError(f"{display}: cannot be read ({exc.strerror or exc})") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsError(
            f"{display}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); {rerun}"
        ) from None
    stamp = value.get("stamp") if isinstance(value, dict) else None
    if isinstance(value, dict) and stamp is None and "registry_sha256" in value:
        raise ResultsError(
            f"{display}: written in the layout before format {FORMAT} (stamped with "
            f"registry_sha256), which this memsift no longer reads; run `{kind.command}` "
            "again to measure it in the current layout"
        )
    if isinstance(stamp, Mapping) and stamp.get("format") not in (FORMAT, None):
        raise ResultsError(
            f"{display}: /stamp/format: format {stamp.get('format')!r} is not one this memsift "
            f"reads (it reads {FORMAT}); use the memsift that wrote it, or {rerun}"
        )
    if isinstance(stamp, Mapping) and stamp.get("benchmark") != kind.benchmark:
        raise ResultsError(
            f"{display}: /stamp/benchmark: expected {kind.benchmark!r}, found "
            f"{stamp.get('benchmark')!r}: this is not a {kind.name}; {rerun}"
        )
    try:
        return load(kind.schema, value)
    except ShapeError as exc:
        raise ResultsError(f"{display}: {exc.pointer}: {exc.problem}; {rerun}") from None


def write_results(results: object, path: Path) -> None:
    """Write ``results`` as JSON (the folder is made when missing), once the text has read back
    as ``results``' own schema: a benchmark that built a value its file refuses (a string for a
    count, a NaN) stops before it replaces a good file with one the docs build would refuse."""
    try:
        text = dumps(results)
        load(type(results), json.loads(text))
    except ShapeError as exc:
        raise ResultsError(
            f"{path}: {exc.pointer}: {exc.problem}; the benchmark built a value its results "
            "schema refuses, so nothing was written"
        ) from None
    except ValueError as exc:  # json refuses NaN and infinity (allow_nan=False)
        raise ResultsError(
            f"{path}: a figure is not a finite number ({exc}); nothing was written"
        ) from None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
