"""Score the real index-and-search path on a retrieval set in BEIR layout.

A set is a folder with ``corpus.jsonl`` (``_id``, ``title``, ``text``, optional ``event_at``),
``queries.jsonl`` (``_id``, ``text``, optional ``category``) and ``qrels/<split>.tsv`` (a header,
then query id, corpus id, graded relevance). A folder whose subfolders are sets is several
independent stores scored together. The corpus is written out as a real memory store, indexed by
the normal indexer and searched by the normal search, so the figures are the product's figures.
Metrics come from ir-measures, not from code of our own.
"""

from __future__ import annotations

import csv
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engine.arms import ARMS
from engine.assemble import AssemblyError, resolve_weights
from engine.embedder import Embedder
from engine.indexer import Progress, index_store
from engine.results_schema import METRICS
from engine.search import search
from engine.store import open_store, walk

#: The metrics eval reports, in order: the results schema's list (one home for both).
METRIC_NAMES = tuple(key for key, _ in METRICS)
RUN_DEPTH = 100
CORPUS_MTIME_NS = 946_684_800 * 1_000_000_000  # 2000-01-01T00:00:00Z


class DatasetError(ValueError):
    """A set that does not follow the BEIR layout; the message names the file and line."""


class KeepError(ValueError):
    """A ``--keep`` folder eval may not write into; the message names it and says why."""


@dataclass(frozen=True)
class Query:
    id: str
    text: str
    category: str | None


@dataclass
class EvalSet:
    """One set: its corpus rows, its queries, and the judgements for the chosen split."""

    name: str
    folder: Path
    corpus: list[dict[str, str]]
    queries: list[Query]
    qrels: dict[str, dict[str, int]] = field(default_factory=dict)


def find_sets(path: Path) -> list[Path]:
    """The set folders under ``path``: itself when it holds a corpus, else its subfolders."""
    if not path.is_dir():
        raise DatasetError(f"{path}: not a folder; pass a BEIR-layout set or a folder of sets")
    if (path / "corpus.jsonl").is_file():
        return [path]
    sets = sorted(p for p in path.iterdir() if (p / "corpus.jsonl").is_file())
    if not sets:
        raise DatasetError(f"{path}: no corpus.jsonl here or in any subfolder")
    return sets


def read_jsonl(path: Path) -> Iterable[dict[str, object]]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}:{number}: not JSON ({exc.msg})") from None
            if not isinstance(row, dict) or "_id" not in row:
                raise DatasetError(f"{path}:{number}: a row must be an object with an _id")
            yield row


def pick_split(folder: Path, split: str | None) -> Path:
    qrels = folder / "qrels"
    available = sorted(p.stem for p in qrels.glob("*.tsv"))
    if split is None:
        split = "test" if "test" in available else (available[0] if len(available) == 1 else "")
    if split not in available:
        raise DatasetError(
            f"{qrels}: no split {split or '(unspecified)'!r}; available: {', '.join(available)}"
        )
    return qrels / f"{split}.tsv"


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    judged: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for number, row in enumerate(csv.reader(handle, delimiter="\t"), 1):
            if number == 1 and row and not row[-1].strip().lstrip("-").isdigit():
                continue  # the header line
            if not row:
                continue
            if len(row) < 3:
                raise DatasetError(f"{path}:{number}: expected query-id, corpus-id, relevance")
            try:
                grade = int(row[2])
            except ValueError:
                raise DatasetError(
                    f"{path}:{number}: relevance {row[2]!r} is not an integer"
                ) from None
            if grade > 0:
                judged.setdefault(row[0], {})[row[1]] = grade
    return judged


def load_set(folder: Path, split: str | None = None) -> EvalSet:
    """Read one set; queries without judgements in the split are left out."""
    corpus = [
        {
            "_id": str(row["_id"]),
            "title": str(row.get("title") or ""),
            "text": str(row.get("text") or ""),
            "event_at": str(row.get("event_at") or ""),
        }
        for row in read_jsonl(folder / "corpus.jsonl")
    ]
    qrels = load_qrels(pick_split(folder, split))
    queries = []
    for row in read_jsonl(folder / "queries.jsonl"):
        qid = str(row["_id"])
        if qid not in qrels:
            continue
        meta = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
        category = row.get("category") or meta.get("category")  # type: ignore[union-attr]
        queries.append(Query(qid, str(row.get("text") or ""), str(category) if category else None))
    return EvalSet(folder.name, folder, corpus, queries, qrels)


def yaml_string(text: str) -> str:
    """A double-quoted YAML scalar (JSON strings are valid YAML)."""
    return json.dumps(text, ensure_ascii=False)


#: Written into every folder ``--keep`` makes; eval only ever reuses a folder that holds it.
KEEP_MARKER = ".memsift-eval.json"
#: The names ``write_store`` gives memory files; nothing else is ever deleted.
WRITTEN_NAME = re.compile(r"\d{7}-[A-Za-z0-9_-]*\.md")


def files_written(folder: Path) -> set[str] | None:
    """The file names an earlier eval wrote into ``folder``, or None when eval did not make it."""
    marker = folder / KEEP_MARKER
    if not marker.is_file() or marker.is_symlink():
        return None
    try:
        names = json.loads(marker.read_text(encoding="utf-8")).get("files", [])
    except (OSError, ValueError, AttributeError):
        return None
    return {n for n in names if isinstance(n, str) and WRITTEN_NAME.fullmatch(n)}


def check_keep_folder(folder: Path, *, store: bool) -> set[str]:
    """Refuse a folder eval did not make; return the files it wrote there before.

    A new or empty folder is fine. A non-empty one must carry the marker eval writes, so
    ``--keep`` pointed at a real memory store is refused instead of being tidied to the corpus.
    In a set folder (``store``), a memory file eval did not write is refused as well: it would be
    searched with the corpus, and eval never deletes what it did not write.
    """
    written = files_written(folder)
    if written is None:
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            raise KeepError(f"{folder}: not a folder; pass --keep a new or empty folder")
        if folder.exists() and any(folder.iterdir()):
            raise KeepError(
                f"{folder}: a non-empty folder not made by memsift eval; pass --keep a new or "
                f"empty folder, or one an earlier `memsift eval --keep` made (it holds "
                f"{KEEP_MARKER})"
            )
        return set()
    if store:
        foreign = [c.key for c in walk(open_store(folder)) if c.key not in written]
        if foreign:
            raise KeepError(
                f"{folder / foreign[0]}: not written by memsift eval; move it out of the --keep "
                "folder (eval never deletes a file it did not write)"
            )
    return written


def mark_keep_folder(folder: Path, files: set[str]) -> None:
    """Make ``folder`` if needed and record in its marker which files eval wrote there."""
    folder.mkdir(parents=True, exist_ok=True)
    marker = {
        "made_by": "memsift eval --keep; it rewrites and deletes only the files listed here",
        "files": sorted(files),
    }
    (folder / KEEP_MARKER).write_text(json.dumps(marker, indent=1) + "\n", encoding="utf-8")


def write_store(data: EvalSet, root: Path) -> dict[str, str]:
    """Write the corpus as memory files into ``root`` (a folder eval made); return key -> id.

    The marker lists every file before it is written, so a killed run still knows its own
    files; a kept store from a larger corpus then loses only files eval wrote itself."""
    before = check_keep_folder(root, store=True)
    keys: dict[str, str] = {}
    for number, row in enumerate(data.corpus):
        safe = re.sub(r"[^A-Za-z0-9_-]+", "_", row["_id"])[:60]
        keys[f"{number:07d}-{safe}.md"] = row["_id"]
    mark_keep_folder(root, before | set(keys))
    for key, row in zip(keys, data.corpus, strict=True):
        lines = ["---", f"title: {yaml_string(row['title'] or row['_id'])}"]
        if row["event_at"]:
            lines.append(f"event_at: {yaml_string(row['event_at'])}")
        lines += ["---", row["text"], ""]
        path = root / key
        path.write_text("\n".join(lines), encoding="utf-8")
        # A corpus carries no time but event_at: one shared mtime keeps file-write order from
        # posing as recency (and lets a kept store skip unchanged files on the next run).
        os.utime(path, ns=(CORPUS_MTIME_NS, CORPUS_MTIME_NS))
    for stale in sorted(before - set(keys)):
        (root / stale).unlink(missing_ok=True)
    mark_keep_folder(root, set(keys))
    return keys


def eval_schema(name: str) -> str:
    """The database schema a set's store is indexed into when eval runs on PostgreSQL."""
    return "memsift_eval_" + re.sub(r"[^a-z0-9_]+", "_", name.lower())[:40]


def own_schema(root: Path, name: str) -> None:
    """Give a set's store a schema of its own, in case a database URL is in force.

    With ``MEMSIFT_DATABASE_URL`` set (``memsift eval --database-url``, or a team's shell), the
    store would otherwise share the default schema with the team's real store, and indexing the
    corpus there would drop every real memory from that index. On SQLite the key is unused."""
    config = root / ".memsift" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[database]\nschema = "{eval_schema(name)}"\n', encoding="utf-8")


@dataclass(frozen=True)
class Variant:
    """A named arm subset, as weights (0 drops an arm)."""

    name: str
    weights: dict[str, float]


def variants(
    arms: Sequence[str] | None, weights: dict[str, float], ablation: bool
) -> list[Variant]:
    names = [arm.name for arm in ARMS]
    base = {arm.name: weights.get(arm.name, arm.weight) for arm in ARMS}
    chosen = list(arms) if arms else names
    fused = Variant(
        "fused" if not arms else "+".join(chosen),
        {n: (base[n] if n in chosen else 0.0) for n in names},
    )
    out = [fused]
    if ablation:
        out += [
            Variant(f"only {n}", {m: (base[m] if m == n else 0.0) for m in names}) for n in names
        ]
        out += [Variant(f"without {n}", {**fused.weights, n: 0.0}) for n in names]
    return out


def score(runs: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]]) -> dict[str, float]:
    """nDCG@10, MRR@10, Recall@5 and Recall@10 by ir-measures, averaged over judged queries."""
    import ir_measures
    from ir_measures import RR, R, nDCG

    measures = {"ndcg@10": nDCG @ 10, "mrr@10": RR @ 10, "recall@5": R @ 5, "recall@10": R @ 10}
    qrel_rows = [ir_measures.Qrel(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    run_rows = [ir_measures.ScoredDoc(q, d, s) for q, docs in runs.items() for d, s in docs.items()]
    per_query: dict[str, dict[str, float]] = {q: {} for q in qrels}
    for metric in ir_measures.iter_calc(list(measures.values()), qrel_rows, run_rows):
        per_query.setdefault(metric.query_id, {})[str(metric.measure)] = metric.value
    out: dict[str, float] = {"queries": len(qrels)}
    for name, measure in measures.items():
        values = [per_query[q].get(str(measure), 0.0) for q in qrels]
        out[name] = round(sum(values) / len(values), 4) if values else 0.0
    return out


EvalProgress = Callable[[str, int, int], None]


class CachedEmbedder:
    """Embeds each distinct text once: every variant of an ablation reuses the query vector."""

    def __init__(self, inner: Embedder) -> None:
        self.name, self.dim, self._inner = inner.name, inner.dim, inner
        self._cache: dict[str, object] = {}

    def embed(self, texts: Sequence[str]):  # type: ignore[no-untyped-def]
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            self._cache.update(zip(missing, self._inner.embed(missing), strict=True))
        return np.stack([self._cache[t] for t in texts]) if texts else self._inner.embed([])


def evaluate(
    path: Path,
    *,
    split: str | None = None,
    arms: Sequence[str] | None = None,
    weights: dict[str, float] | None = None,
    ablation: bool = False,
    embedder: Embedder | None = None,
    progress: EvalProgress | None = None,
    workdir: Path | None = None,
) -> dict[str, object]:
    """Index every set under ``path`` and score each variant; figures pooled over all queries.

    ``workdir`` keeps the written stores (one folder per set) so a second run re-indexes
    incrementally instead of embedding the corpus again; by default they are temporary. It must
    be new, empty or made by an earlier eval (``KeepError`` otherwise): eval never deletes or
    overwrites a file it did not write.
    """
    try:  # the assembler's rule for arm names, for the arms to keep and the weights alike
        resolve_weights(ARMS, {}, {**{name: 0.0 for name in arms or ()}, **(weights or {})})
    except AssemblyError as exc:
        raise DatasetError(str(exc)) from None
    sets = [load_set(folder, split) for folder in find_sets(path)]
    if workdir is not None:  # refuse before any work, and before anything is written
        check_keep_folder(workdir, store=False)
        for data in sets:
            check_keep_folder(workdir / data.name, store=True)
        mark_keep_folder(workdir, set())
    if embedder is None:
        from engine.embedder import default_embedder

        embedder = default_embedder()
    query_embedder = CachedEmbedder(embedder)
    plan = variants(arms, weights or {}, ablation)
    runs: dict[str, dict[str, dict[str, float]]] = {v.name: {} for v in plan}
    qrels: dict[str, dict[str, int]] = {}
    categories: dict[str, list[str]] = {}
    skipped: dict[str, list[dict[str, str]]] = {}
    with tempfile.TemporaryDirectory(prefix="memsift-eval-") as scratch:
        for data in sets:
            root = (workdir or Path(scratch)) / data.name
            keys = write_store(data, root)
            own_schema(root, data.name)
            store = open_store(root)
            index_progress: Progress | None = None
            if progress:

                def index_progress(phase: str, done: int, total: int, name: str = data.name):
                    progress(f"{name}: {phase}", done, total)

            indexed = index_store(store, embedder=embedder, progress=index_progress)
            if indexed.skipped:
                skipped[data.name] = [
                    {"id": keys.get(path, path), "reason": reason}
                    for path, reason in indexed.skipped
                ]
            for number, query in enumerate(data.queries, 1):
                qid = f"{data.name}/{query.id}" if len(sets) > 1 else query.id
                qrels[qid] = {
                    (f"{data.name}/{d}" if len(sets) > 1 else d): g
                    for d, g in data.qrels[query.id].items()
                }
                if query.category:
                    categories.setdefault(query.category, []).append(qid)
                for variant in plan:
                    result = search(
                        store,
                        query.text,
                        limit=RUN_DEPTH,
                        embedder=query_embedder,
                        weights=variant.weights,
                    )
                    runs[variant.name][qid] = {
                        (
                            f"{data.name}/{keys[h.path]}" if len(sets) > 1 else keys[h.path]
                        ): RUN_DEPTH - rank
                        for rank, h in enumerate(result.hits)
                    }
                if progress:
                    progress(f"{data.name}: queries", number, len(data.queries))
    head = plan[0].name
    report: dict[str, object] = {
        "sets": [d.name for d in sets],
        "variant": head,
        "overall": score(runs[head], qrels),
        "by_category": {
            name: score(runs[head], {q: qrels[q] for q in ids})
            for name, ids in sorted(categories.items())
        },
    }
    if skipped:
        report["skipped"] = skipped
    if ablation:
        report["ablation"] = {v.name: score(runs[v.name], qrels) for v in plan}
    return report
