"""Read and check the benchmark result files the Measured page is made from.

``benchmarks/quality.py`` writes ``quality.json`` and ``benchmarks/latency.py`` writes
``latency.json``; both carry ``registry_sha256``, the sha256 of the arm registry's bytes when
they ran. This module turns each file into plain, typed records, checking every field the
pages use: a file that is not JSON, or lacks a field, stops the build with a
:class:`ResultsError` naming the file (and the line, or the JSON pointer of the field). Fields
the pages do not use are ignored, so the scripts may record more.

Nothing here logs or knows about MkDocs: the plugin turns :attr:`Results.stale` into warnings.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

QUALITY_FILE = "quality.json"
LATENCY_FILE = "latency.json"
#: The command that writes each results file, named in every message about the file.
COMMANDS = {
    QUALITY_FILE: "python benchmarks/quality.py",
    LATENCY_FILE: "python benchmarks/latency.py",
}
#: The quality metrics, in the order the pages show them.
METRICS = ("ndcg@10", "mrr@10", "recall@5", "recall@10")
#: The ``format`` of latency.json this reader understands.
LATENCY_FORMAT = 1


class ResultsError(Exception):
    """A results file that cannot be read; the message names the file and what is wrong."""


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Stamp:
    """Where and when a results file was made, and with which registry."""

    #: The file as readers see it, e.g. ``benchmarks/results/quality.json``.
    file: str
    command: str
    registry_sha256: str
    made_at: str | None
    commit: str | None
    src_dirty: bool | None
    machine: dict[str, str | int | float | bool | None]


@dataclass(frozen=True)
class Metrics:
    """Figures of one ranking over one set of queries."""

    queries: int
    scores: dict[str, float]

    def __getitem__(self, metric: str) -> float:
        return self.scores[metric]


@dataclass(frozen=True)
class QualitySet:
    """One evaluation set: the default fusion, its ablation and outside reference figures."""

    name: str
    overall: Metrics
    by_category: dict[str, Metrics]
    #: Variant name ("fused", "only <arm>", "without <arm>") to its figures, in file order.
    ablation: dict[str, Metrics]
    references: dict[str, float]
    seconds: float | None

    @property
    def fused(self) -> Metrics:
        return self.ablation.get("fused", self.overall)

    def alone(self, arm: str) -> Metrics | None:
        return self.ablation.get(f"only {arm}")

    def without(self, arm: str) -> Metrics | None:
        return self.ablation.get(f"without {arm}")

    def arms(self) -> list[str]:
        """The arms the ablation measured, in file order."""
        names: dict[str, None] = {}
        for variant in self.ablation:
            for prefix in ("only ", "without "):
                if variant.startswith(prefix):
                    names.setdefault(variant[len(prefix) :], None)
        return list(names)


@dataclass(frozen=True)
class QualityResults:
    stamp: Stamp
    sets: list[QualitySet]


@dataclass(frozen=True)
class Timing:
    """Percentiles of one configuration's search times, in milliseconds."""

    p50_ms: float
    p95_ms: float
    n: int | None = None


@dataclass(frozen=True)
class StoreLatency:
    """One synthetic store: its search times, the NumPy floor, recall and memory."""

    files: int
    dim: int
    chunks: int | None
    #: "fused", "fused_sql_only", "vector_sql_only" and one entry per arm timed alone.
    timings: dict[str, Timing]
    floor: Timing
    ratios: dict[str, float]
    recall_mean: float | None
    recall_min: float | None
    memory: dict[str, float]


@dataclass(frozen=True)
class TargetCheck:
    name: str
    target: str
    measured: float
    met: bool


@dataclass(frozen=True)
class LexicalIndexing:
    files: int
    seconds: float
    files_per_s: float
    unchanged_files_per_s: float | None
    peak_rss_mib: float | None


@dataclass(frozen=True)
class EmbeddingIndexing:
    files: int
    texts: int
    model: str | None
    raw_embed_s: float
    raw_texts_per_s: float | None
    index_with_embed_s: float
    overhead: float
    overhead_beyond_lexical: float | None
    peak_rss_mib: float | None


@dataclass(frozen=True)
class LatencyResults:
    stamp: Stamp
    stores: list[StoreLatency]
    targets: list[TargetCheck]
    lexical: LexicalIndexing | None
    embedding: EmbeddingIndexing | None
    load_average: list[float] | None
    elapsed_s: float | None
    quick: bool


@dataclass(frozen=True)
class Stale:
    """A results file made with a registry other than the one the site is built from."""

    file: str
    command: str
    recorded: str
    current: str


@dataclass(frozen=True)
class Results:
    """Everything found in the results folder."""

    #: The folder as readers see it, e.g. ``benchmarks/results``.
    folder: str
    quality: QualityResults | None
    latency: LatencyResults | None
    stale: list[Stale] = field(default_factory=list)
    #: Results files that do not exist (as readers see them).
    missing: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- checked access


def pointer_token(key: str) -> str:
    """One RFC 6901 reference token: ``~`` and ``/`` escaped."""
    return key.replace("~", "~0").replace("/", "~1")


@dataclass(frozen=True)
class Node:
    """A value inside a results file, with its JSON pointer, for errors that say where."""

    file: str
    command: str
    value: object
    pointer: str = ""

    def error(self, problem: str) -> ResultsError:
        return ResultsError(
            f"{self.file}: {self.pointer or '/'}: {problem}; the file is written by "
            f"`{self.command}`: run it again to rewrite it"
        )

    def at(self, key: str) -> Node:
        return Node(self.file, self.command, None, f"{self.pointer}/{pointer_token(key)}")

    def mapping(self) -> dict[str, object]:
        if not isinstance(self.value, dict):
            raise self.error(f"expected an object, found {describe(self.value)}")
        return self.value

    def get(self, key: str) -> Node:
        """The required member ``key`` (present and not null)."""
        found = self.optional(key)
        if found is None:
            raise self.error(f"missing {key!r}")
        return found

    def optional(self, key: str) -> Node | None:
        """The member ``key``, or None when it is absent or null."""
        value = self.mapping().get(key)
        if value is None:
            return None
        return Node(self.file, self.command, value, f"{self.pointer}/{pointer_token(key)}")

    def items(self) -> Iterator[tuple[str, Node]]:
        for key, value in self.mapping().items():
            yield key, Node(self.file, self.command, value, f"{self.pointer}/{pointer_token(key)}")

    def elements(self) -> list[Node]:
        if not isinstance(self.value, list):
            raise self.error(f"expected a list, found {describe(self.value)}")
        return [
            Node(self.file, self.command, value, f"{self.pointer}/{index}")
            for index, value in enumerate(self.value)
        ]

    def number(self) -> float:
        value = self.value
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(f"expected a number, found {describe(value)}")
        if not math.isfinite(value):
            raise self.error(f"expected a finite number, found {value}")
        return float(value)

    def count(self) -> int:
        value = self.value
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.error(f"expected a whole number of at least 0, found {describe(value)}")
        return value

    def text(self) -> str:
        if not isinstance(self.value, str):
            raise self.error(f"expected a string, found {describe(self.value)}")
        return self.value

    def flag(self) -> bool:
        if not isinstance(self.value, bool):
            raise self.error(f"expected true or false, found {describe(self.value)}")
        return self.value


def describe(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + '..."'


def members(node: Node | None) -> Iterator[tuple[str, Node]]:
    """The members of an optional object (none when it is absent)."""
    return node.items() if node is not None else iter(())


def optional_number(node: Node, key: str) -> float | None:
    found = node.optional(key)
    return None if found is None else found.number()


def optional_count(node: Node, key: str) -> int | None:
    found = node.optional(key)
    return None if found is None else found.count()


def optional_text(node: Node, key: str) -> str | None:
    found = node.optional(key)
    return None if found is None else found.text()


# --------------------------------------------------------------------------- reading


def registry_sha256(path: Path) -> str | None:
    """sha256 (hex) of the registry's bytes, as benchmarks/stamp.py computes it; None if the
    file cannot be read (the registry reader reports that, better)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def read_json(path: Path, display: str) -> Node:
    command = COMMANDS.get(path.name, "the benchmark that wrote it")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ResultsError(
            f"{display}: not UTF-8 text ({exc.reason}); run `{command}` again to rewrite it"
        ) from None
    except OSError as exc:
        raise ResultsError(f"{display}: cannot be read ({exc.strerror or exc})") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsError(
            f"{display}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); the file is "
            f"written by `{command}`: run it again to rewrite it"
        ) from None
    return Node(display, command, value)


def read_stamp(root: Node, made_at_key: str) -> Stamp:
    sha = root.get("registry_sha256").text().strip().lower()
    if len(sha) != 64 or any(char not in "0123456789abcdef" for char in sha):
        raise root.get("registry_sha256").error(
            f"expected the 64 hex digits of a sha256, found {describe(sha)}"
        )
    git = root.optional("git")
    commit = optional_text(git, "commit") if git else None
    dirty_node = git.optional("src_dirty") if git else None
    machine: dict[str, str | int | float | bool | None] = {}
    machine_node = root.optional("machine")
    if machine_node is not None:
        for key, value in machine_node.items():
            if value.value is None or isinstance(value.value, str | int | float | bool):
                machine[key] = value.value  # type: ignore[assignment]
    return Stamp(
        file=root.file,
        command=root.command,
        registry_sha256=sha,
        made_at=optional_text(root, made_at_key),
        commit=commit,
        src_dirty=dirty_node.flag() if dirty_node else None,
        machine=machine,
    )


def read_metrics(node: Node) -> Metrics:
    return Metrics(
        queries=node.get("queries").count(),
        scores={metric: node.get(metric).number() for metric in METRICS},
    )


def load_quality(path: Path, display: str) -> QualityResults:
    """``quality.json`` as written by ``benchmarks/quality.py``."""
    root = read_json(path, display)
    root.mapping()
    kind = optional_text(root, "kind")
    if kind is not None and kind != "quality":
        raise root.get("kind").error(f'expected "quality", found {describe(kind)}')
    stamp = read_stamp(root, "made_at")
    sets = []
    for name, node in root.get("sets").items():
        categories = node.optional("by_category")
        references = node.optional("references_ndcg@10")
        ablation = node.optional("ablation")
        sets.append(
            QualitySet(
                name=name,
                overall=read_metrics(node.get("overall")),
                by_category={key: read_metrics(value) for key, value in members(categories)},
                ablation={key: read_metrics(value) for key, value in members(ablation)},
                references={key: value.number() for key, value in members(references)},
                seconds=optional_number(node, "seconds"),
            )
        )
    return QualityResults(stamp=stamp, sets=sets)


def read_timing(node: Node) -> Timing:
    return Timing(
        p50_ms=node.get("p50_ms").number(),
        p95_ms=node.get("p95_ms").number(),
        n=optional_count(node, "n"),
    )


def read_store(node: Node) -> StoreLatency:
    timings = {key: read_timing(value) for key, value in node.get("latency").items()}
    if "fused" not in timings:
        raise node.get("latency").error("missing 'fused'")
    ratios_node = node.optional("ratios")
    recall = node.optional("vector_recall_at_40")
    facts = node.optional("store")
    memory: dict[str, float] = {}
    memory_node = node.optional("memory")
    if memory_node is not None:
        for part, key, name in (
            ("search", "peak_rss_mib", "search_peak_rss_mib"),
            ("search", "sqlite_heap_peak_mib", "sqlite_heap_peak_mib"),
            ("floor", "peak_rss_mib", "floor_peak_rss_mib"),
            ("floor", "matrix_mib", "floor_matrix_mib"),
        ):
            section = memory_node.optional(part)
            value = optional_number(section, key) if section else None
            if value is not None:
                memory[name] = value
    return StoreLatency(
        files=node.get("files").count(),
        dim=node.get("dim").count(),
        chunks=optional_count(facts, "chunks") if facts else None,
        timings=timings,
        floor=read_timing(node.get("floor")),
        ratios={key: value.number() for key, value in members(ratios_node)},
        recall_mean=optional_number(recall, "mean") if recall else None,
        recall_min=optional_number(recall, "min") if recall else None,
        memory=memory,
    )


def peak_rss(node: Node) -> float | None:
    memory = node.optional("memory")
    return optional_number(memory, "peak_rss_mib") if memory else None


def load_latency(path: Path, display: str) -> LatencyResults:
    """``latency.json`` as written by ``benchmarks/latency.py``."""
    root = read_json(path, display)
    root.mapping()
    kind = optional_text(root, "benchmark")
    if kind is not None and kind != "latency":
        raise root.get("benchmark").error(f'expected "latency", found {describe(kind)}')
    version = root.optional("format")
    if version is not None and version.count() != LATENCY_FORMAT:
        raise version.error(
            f"format {version.value} is not one this plugin reads (it reads {LATENCY_FORMAT}); "
            "upgrade memsift"
        )
    stamp = read_stamp(root, "timestamp")
    stores = [read_store(node) for node in root.get("stores").elements()]
    targets_node = root.optional("targets")
    targets = [
        TargetCheck(
            name=node.get("name").text(),
            target=node.get("target").text(),
            measured=node.get("measured").number(),
            met=node.get("met").flag(),
        )
        for node in (targets_node.elements() if targets_node else [])
    ]
    indexing = root.optional("indexing")
    lexical_node = indexing.optional("lexical") if indexing else None
    embed_node = indexing.optional("embedding") if indexing else None
    lexical = (
        LexicalIndexing(
            files=lexical_node.get("files").count(),
            seconds=lexical_node.get("seconds").number(),
            files_per_s=lexical_node.get("files_per_s").number(),
            unchanged_files_per_s=optional_number(lexical_node, "unchanged_files_per_s"),
            peak_rss_mib=peak_rss(lexical_node),
        )
        if lexical_node
        else None
    )
    embedding = (
        EmbeddingIndexing(
            files=embed_node.get("files").count(),
            texts=embed_node.get("texts").count(),
            model=optional_text(embed_node, "model"),
            raw_embed_s=embed_node.get("raw_embed_s").number(),
            raw_texts_per_s=optional_number(embed_node, "raw_texts_per_s"),
            index_with_embed_s=embed_node.get("index_with_embed_s").number(),
            overhead=embed_node.get("overhead").number(),
            overhead_beyond_lexical=optional_number(embed_node, "overhead_beyond_lexical"),
            peak_rss_mib=peak_rss(embed_node),
        )
        if embed_node
        else None
    )
    load_node = root.optional("load_average_at_start")
    settings = root.optional("settings")
    quick = settings.optional("quick") if settings else None
    return LatencyResults(
        stamp=stamp,
        stores=sorted(stores, key=lambda store: (store.dim, store.files)),
        targets=targets,
        lexical=lexical,
        embedding=embedding,
        load_average=[node.number() for node in load_node.elements()] if load_node else None,
        elapsed_s=optional_number(root, "elapsed_s"),
        quick=quick.flag() if quick else False,
    )


def load_results(folder: Path, *, display: str, registry_sha256: str | None) -> Results:
    """Read ``quality.json`` and ``latency.json`` from ``folder`` (shown as ``display``).

    A file that does not exist is listed in :attr:`Results.missing`; a file whose registry
    hash differs from ``registry_sha256`` is listed in :attr:`Results.stale` (no check when
    ``registry_sha256`` is None). Raises :class:`ResultsError` for a file that cannot be read.
    """
    display = display.rstrip("/")
    missing: list[str] = []
    stamps: list[Stamp] = []

    def load(name: str, loader):  # type: ignore[no-untyped-def]
        path = folder / name
        shown = f"{display}/{name}"
        if not path.is_file():
            missing.append(shown)
            return None
        loaded = loader(path, shown)
        stamps.append(loaded.stamp)
        return loaded

    quality = load(QUALITY_FILE, load_quality)
    latency = load(LATENCY_FILE, load_latency)
    stale = [
        Stale(stamp.file, stamp.command, stamp.registry_sha256, registry_sha256)
        for stamp in stamps
        if registry_sha256 is not None and stamp.registry_sha256 != registry_sha256
    ]
    return Results(display, quality, latency, stale, missing)


def stale_message(stale: Stale, registry: str) -> str:
    """The warning for a stale results file: which file, why, and how to refresh it."""
    return (
        f"{stale.file} was made with another version of {registry} (its registry_sha256 "
        f"is {stale.recorded[:12]}…, {registry} now hashes to {stale.current[:12]}…), so its "
        f"figures may no longer hold; refresh them with `{stale.command}` and commit the "
        "new file"
    )


def is_stale(results: Results, file: str) -> bool:
    return any(stale.file == file for stale in results.stale)


def arm_order(registry_arms: list[str], measured: list[str]) -> list[str]:
    """The registry's arms in its order, then any other measured arm in the file's order."""
    return [*registry_arms, *(arm for arm in measured if arm not in registry_arms)]
