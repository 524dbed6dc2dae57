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
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engine.arms import ARMS
from engine.files.store import open_store, walk
from engine.indexing.embedder import Embedder
from engine.indexing.indexer import index_store
from engine.indexing.pipeline import Progress
from engine.measure.results_schema import METRICS
from engine.ranking.assemble import AssemblyError, resolve_weights
from engine.search import search

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "KEEP_MARKER",
    "evaluate",
    "find_sets",
    "load_set",
    "mark_keep_folder",
    "write_store",
]

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
    #: What is odd about the set but does not stop it being scored, each naming file and line.
    warnings: list[str] = field(default_factory=list)


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


#: What a set folder holds, for the messages that find something missing.
LAYOUT = "a BEIR set holds corpus.jsonl, queries.jsonl and qrels/<split>.tsv"


def numbered_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Each line of one of a set's files with its number. A file that is missing, unreadable or
    not UTF-8 is a :class:`DatasetError` naming it (and the line with the bad byte), where the
    bare OSError or UnicodeDecodeError would name neither."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise DatasetError(f"{path}: missing; {LAYOUT}") from None
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read it ({exc.strerror}); {LAYOUT}") from None
    with handle:
        number = 0
        try:
            for number, raw in enumerate(handle, 1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise DatasetError(
                        f"{path}:{number}: not UTF-8 (byte 0x{raw[exc.start]:02x} at column "
                        f"{exc.start + 1}); save the file as UTF-8"
                    ) from None
                yield number, text.removeprefix("\ufeff") if number == 1 else text
        except OSError as exc:
            raise DatasetError(f"{path}:{number + 1}: cannot read it ({exc.strerror})") from None


def read_jsonl(path: Path) -> Iterable[tuple[int, dict[str, object]]]:
    """The rows of a JSON Lines file with their line numbers, each an object with a usable
    ``_id``: a null, empty or non-scalar id would be written out as the text "None" and judged
    under that name."""
    for number, line in numbered_lines(path):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{number}: not JSON ({exc.msg}); fix the line") from None
        if not isinstance(row, dict) or "_id" not in row:
            raise DatasetError(
                f"{path}:{number}: a row must be an object with an _id; fix the line"
            )
        ident = row["_id"]
        if isinstance(ident, bool) or not isinstance(ident, str | int) or not str(ident).strip():
            raise DatasetError(
                f"{path}:{number}: _id is {json.dumps(ident)[:40]}; every row needs a "
                "non-empty string _id"
            )
        yield number, row


def unique_rows(path: Path) -> Iterator[tuple[int, str, dict[str, object]]]:
    """``read_jsonl`` with each row's id as text, refusing an id seen before: a second d1 would
    be indexed twice and its judgement would stand for either."""
    first: dict[str, int] = {}
    for number, row in read_jsonl(path):
        ident = str(row["_id"])
        if ident in first:
            raise DatasetError(
                f"{path}:{number}: _id {json.dumps(ident)} again (first on line "
                f"{first[ident]}); ids must be unique"
            )
        first[ident] = number
        yield number, ident, row


def pick_split(folder: Path, split: str | None) -> Path:
    qrels = folder / "qrels"
    if not qrels.is_dir():
        raise DatasetError(f"{qrels}: missing folder; {LAYOUT}")
    available = sorted(p.stem for p in qrels.glob("*.tsv"))
    if not available:
        raise DatasetError(f"{qrels}: no <split>.tsv file in it (such as test.tsv); {LAYOUT}")
    if split is None:
        split = "test" if "test" in available else (available[0] if len(available) == 1 else "")
    if split not in available:
        raise DatasetError(
            f"{qrels}: no split {split or '(unspecified)'!r}; available: {', '.join(available)}"
        )
    return qrels / f"{split}.tsv"


@dataclass(frozen=True)
class Judgement:
    """One qrels line: a query, a document, a grade > 0, and where it was written."""

    query: str
    doc: str
    grade: int
    line: int


def read_qrels(path: Path) -> list[Judgement]:
    """The lines of a qrels file with a grade > 0 (after an optional header)."""
    judged: list[Judgement] = []
    reader = csv.reader((line for _, line in numbered_lines(path)), delimiter="\t")
    for row in reader:
        number = reader.line_num
        if number == 1 and row and not row[-1].strip().lstrip("-").isdigit():
            continue  # the header line
        if not row:
            continue
        if len(row) < 3:
            raise DatasetError(
                f"{path}:{number}: expected query-id, corpus-id and relevance separated by "
                "tabs; fix the line"
            )
        try:
            grade = int(row[2])
        except ValueError:
            raise DatasetError(
                f"{path}:{number}: relevance {row[2]!r} is not an integer; write a whole number"
            ) from None
        if grade > 0:
            judged.append(Judgement(row[0], row[1], grade, number))
    return judged


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    judged: dict[str, dict[str, int]] = {}
    for row in read_qrels(path):
        judged.setdefault(row.query, {})[row.doc] = row.grade
    return judged


def load_set(folder: Path, split: str | None = None) -> EvalSet:
    """Read one set; queries without judgements in the split are left out.

    A set that cannot give a meaningful figure is refused, naming the file and line: no
    documents, no judgements, a judged query missing from queries.jsonl or without text, or no
    judged document in the corpus at all (the wrong corpus: every figure would be 0). Some
    judged documents missing from the corpus is a warning, not a refusal: published BEIR sets
    have such lines, and the standard figures count them as relevant documents never found."""
    corpus_path, queries_path = folder / "corpus.jsonl", folder / "queries.jsonl"
    corpus = [
        {
            "_id": ident,
            "title": str(row.get("title") or ""),
            "text": str(row.get("text") or ""),
            "event_at": str(row.get("event_at") or ""),
        }
        for _, ident, row in unique_rows(corpus_path)
    ]
    if not corpus:
        raise DatasetError(f"{corpus_path}: no documents in it; {LAYOUT}, one JSON row a line")
    qrels_path = pick_split(folder, split)
    judgements = read_qrels(qrels_path)
    if not judgements:
        raise DatasetError(
            f"{qrels_path}: no judgement with a relevance above 0; add query-id, corpus-id, "
            "relevance lines"
        )
    texts: dict[str, tuple[int, str, str | None]] = {}
    for number, qid, row in unique_rows(queries_path):
        meta = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
        category = row.get("category") or meta.get("category")  # type: ignore[union-attr]
        texts[qid] = (number, str(row.get("text") or ""), str(category) if category else None)
    if not texts:
        raise DatasetError(f"{queries_path}: no queries in it; {LAYOUT}, one JSON row a line")
    check_judgements(qrels_path, queries_path, corpus_path, judgements, texts, corpus)
    qrels: dict[str, dict[str, int]] = {}
    for row in judgements:
        qrels.setdefault(row.query, {})[row.doc] = row.grade
    queries = []
    for qid, (number, text, category) in texts.items():
        if qid not in qrels:
            continue
        if not text.strip():
            raise DatasetError(
                f"{queries_path}:{number}: query {json.dumps(qid)} is judged but has no text; "
                "give it a text or remove its qrels lines"
            )
        queries.append(Query(qid, text, category))
    data = EvalSet(folder.name, folder, corpus, queries, qrels)
    data.warnings.extend(missing_documents(qrels_path, corpus_path, judgements, corpus))
    return data


def check_judgements(
    qrels_path: Path,
    queries_path: Path,
    corpus_path: Path,
    judgements: list[Judgement],
    texts: dict[str, object],
    corpus: list[dict[str, str]],
) -> None:
    """Refuse judgements that name queries queries.jsonl lacks (they would be dropped and the
    set scored on fewer queries than it has), or only documents the corpus lacks."""
    unknown = [row for row in judgements if row.query not in texts]
    if unknown:
        raise DatasetError(
            f"{qrels_path}:{unknown[0].line}: query {json.dumps(unknown[0].query)} is not in "
            f"{queries_path.name} ({count(unknown, 'such line')}); add it there or remove "
            "its lines"
        )
    ids = {row["_id"] for row in corpus}
    if not any(row.doc in ids for row in judgements):
        raise DatasetError(
            f"{qrels_path}:{judgements[0].line}: no judged document is in {corpus_path.name} "
            f"(this one is {json.dumps(judgements[0].doc)}); the qrels belong to another corpus"
        )


def missing_documents(
    qrels_path: Path, corpus_path: Path, judgements: list[Judgement], corpus: list[dict[str, str]]
) -> list[str]:
    """A warning for judged documents the corpus lacks: they stay relevant, never found."""
    ids = {row["_id"] for row in corpus}
    missing = [row for row in judgements if row.doc not in ids]
    if not missing:
        return []
    return [
        f"{qrels_path}:{missing[0].line}: {count(missing, 'judgement')} name a document not "
        f"in {corpus_path.name} (first {json.dumps(missing[0].doc)}); they count as relevant "
        "documents never found, which lowers every figure"
    ]


def count(rows: Sequence[object], what: str) -> str:
    return f"{len(rows)} {what}" + ("" if len(rows) == 1 else "s")


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
    warn: Callable[[str], None] | None = None,
) -> dict[str, object]:
    """Index every set under ``path`` and score each variant; figures pooled over all queries.

    ``workdir`` keeps the written stores (one folder per set) so a second run re-indexes
    incrementally instead of embedding the corpus again; by default they are temporary. It must
    be new, empty or made by an earlier eval (``KeepError`` otherwise): eval never deletes or
    overwrites a file it did not write. ``warn`` hears what is odd about a set but does not
    stop it being scored, as soon as the sets are read (the report lists it too).
    """
    try:  # the assembler's rule for arm names, for the arms to keep and the weights alike
        resolve_weights(ARMS, {}, {**{name: 0.0 for name in arms or ()}, **(weights or {})})
    except AssemblyError as exc:
        raise DatasetError(str(exc)) from None
    sets = [load_set(folder, split) for folder in find_sets(path)]
    warnings = [line for data in sets for line in data.warnings]
    for line in warnings:
        if warn:
            warn(line)
    if workdir is not None:  # refuse before any work, and before anything is written
        check_keep_folder(workdir, store=False)
        for data in sets:
            check_keep_folder(workdir / data.name, store=True)
        mark_keep_folder(workdir, set())
    if embedder is None:
        from engine.indexing.embedder import default_embedder

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
    if warnings:
        report["warnings"] = warnings
    if ablation:
        report["ablation"] = {v.name: score(runs[v.name], qrels) for v in plan}
    return report
