"""Indexing a store of real documents: how long until it answers, how long until it is whole,
and what the per-file embedding budget costs in answers.

    nice -n 10 python benchmarks/indexing.py --src $TMPDIR/before/src   # before and after
    python benchmarks/indexing.py --share 0.05 --out $TMPDIR/indexing.json

The store is built at run time from documents found on the machine (nothing is copied into the
repository): the installed Python packages' descriptions and shipped docs and Debian's
``/usr/share/doc`` (``abstention_corpora``'s builders with no size cap, so a 2 MB copyright file
or a 900 KB changelog stays whole), sampled by a hash of each document's key, ``--share`` of the
ordinary ones and the same share of the huge ones (over :data:`HUGE_CHUNKS` chunks), so the
sample keeps the machine's mix of a long tail and many short pages. Every sampled Node.js API
page (``nodejs/api/X.md``) comes with its HTML twin (``X.html``), and one small pair is always
in, so a page's two renderings are indexed side by side.

**Before and after.** The same store is indexed from scratch by this checkout's engine and, with
``--src``, by another checkout's (``git archive 9a5cde3 src | tar -x -C $TMPDIR/before``: the
code before the embedding budget), each as ``memsift index --json`` in a fresh process with its
``src/`` first on ``PYTHONPATH``, one after the other in the same run. Per run: files, chunks,
distinct texts embedded, chunks that reused another chunk's vector, chunks past the budget (no
vector), wall and CPU time and peak RSS of the indexing process (``wait4``), the time until a
lexical ``memsift search --no-vector`` first answers (searches are started one after another
from the moment the index starts), and the time to a fully indexed store (the index process's
end: it returns once every chunk within the budget has a vector).

**The budget.** On a copy of the store indexed with no budget (the "before" run's store when
there is one: it embeds every chunk), each budget of ``--budgets`` is simulated by taking the
vectors away from the chunks the rule leaves out (every ``s``-th chunk of a file over the
budget is kept, :mod:`engine.indexing.budget`; a chunk sharing a kept chunk's text keeps its
vector too), exactly as an index run under that budget leaves them, and known-item questions
are asked through the normal search: questions drawn from the headings and first sentences of
sections of the big files (grouped by the chunk their answer lies in) and of short documents.
Per budget and group: nDCG@10 and hit@1/hit@10. The shared sets' largest document in chunks is
counted too: a budget at or above it leaves their indexes, and their quality, as they are.

The file is ``engine.measure.results_schema.IndexingResults``; the Measured page shows it.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from abstention_corpora import debian_docs, memory_text, python_docs
from stamp import make_stamp
from stress_set import first_sentence, plain, sections
from timing import busy_warning, load_average, log

from engine.files.chunking import chunk_text
from engine.files.config import DEFAULT_EMBED_CHUNKS_PER_FILE
from engine.files.store import open_store
from engine.indexing.budget import budget_join, embeddable_sql
from engine.indexing.embedder import default_embedder
from engine.indexing.indexer import index_store
from engine.measure.results_schema import (
    INDEXING,
    BudgetGroup,
    BudgetPoint,
    IndexingCorpus,
    IndexingResults,
    IndexingRun,
    LoadWindow,
    SharedSetChunks,
    Target,
    write_results,
)
from engine.search import Searcher
from engine.sqlite.db import connect, write_meta
from engine.sqlite.indexdb import record_coverage

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATA = REPO.parent / "shared" / "data"
DEBIAN_DOC = Path("/usr/share/doc")
DEFAULT_OUT = HERE / "results" / INDEXING.name
#: A document of more chunks than this is "huge": sampled apart, so a sample keeps its share.
HUGE_CHUNKS = 64
#: The share of the machine's documents indexed: about 150 ordinary pages and 7 huge files on
#: the reference machine, 2,500-3,000 chunks (the issue's store, 845 documents and 18,865
#: chunks, took 45 minutes on a loaded machine; this one about 12 before the budget).
DEFAULT_SHARE = 0.1
#: A pair of twins always indexed: a Node.js API page as Markdown and as HTML.
ALWAYS_TWINS = ("nodejs/api/path",)
#: The lexical question the poller asks while the index is built.
PROBE_QUERY = "license"
DEFAULT_BUDGETS = (16, 32, 40, 64, 128, 0)  # 0: no budget
#: Chunk bands the deep questions are grouped by (their answer's chunk number).
BANDS = ((0, 16), (16, 32), (32, 64), (64, 128), (128, None))
QUESTIONS_PER_BAND = 40
SHORT_QUESTIONS = 60
SHORT_DOC_CHUNKS = 9
SEED = 20261202
#: Issue 22: the time to a fully indexed store at most half today's code's.
TARGET_RATIO = 0.5
#: A budget this large is no budget (config needs a whole number).
UNBOUNDED = 1_000_000_000
CORPUS_MTIME_NS = 1_700_000_000 * 10**9


# --------------------------------------------------------------------------- the corpus


@dataclass(frozen=True)
class Doc:
    """One file of the store: its path in the store and its bytes' text."""

    key: str
    content: str
    #: What answers questions about it: itself and its twin, if any.
    family: tuple[str, ...]
    #: The text the question builder reads (the body, without front matter).
    text: str
    html: bool = False


def hashed(key: str) -> float:
    """A stable number in [0, 1) per key: the sample does not depend on the order found."""
    return int(hashlib.sha256(key.encode()).hexdigest()[:12], 16) / 16**12


def html_twin(key: str) -> Path | None:
    """The HTML rendering beside a Node.js API page of ``debian_docs`` (key
    ``debian/nodejs_api_X.md.md``), or None."""
    match = re.fullmatch(r"debian/nodejs_api_(.+)\.md\.md", key)
    if not match:
        return None
    path = DEBIAN_DOC / "nodejs" / "api" / f"{match.group(1)}.html"
    return path if path.is_file() else None


def build_corpus(share: float, huge_files: int | None = None) -> tuple[list[Doc], int, int]:
    """The sampled documents, and how many ordinary and huge documents the machine offered."""
    pool = {**python_docs(capped=False), **debian_docs(DEBIAN_DOC, capped=False)}
    sizes = {key: len(chunk_text(text)) for key, (_, text) in pool.items()}
    huge = sorted((k for k in pool if sizes[k] > HUGE_CHUNKS), key=hashed)
    ordinary = [k for k in pool if sizes[k] <= HUGE_CHUNKS]
    picked = {k for k in ordinary if hashed(k) < share}
    wanted = max(1, round(share * len(huge))) if huge_files is None else huge_files
    picked |= set(huge[:wanted])
    picked |= {f"debian/{slug.replace('/', '_')}.md.md" for slug in ALWAYS_TWINS} & set(pool)
    docs = []
    for key in sorted(picked):
        title, text = pool[key]
        twin = html_twin(key)
        twin_key = key.removesuffix(".md.md") + ".html" if twin else None
        family = (key, twin_key) if twin_key else (key,)
        docs.append(Doc(key, memory_text(title, text), family, text))
        if twin is not None and twin_key is not None:
            raw = twin.read_text(encoding="utf-8", errors="replace")
            docs.append(Doc(twin_key, raw, family, raw, html=True))
    return docs, len(ordinary), len(huge)


def write_store(root: Path, docs: list[Doc]) -> None:
    for doc in docs:
        path = root / doc.key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(doc.content, encoding="utf-8")
        os.utime(path, ns=(CORPUS_MTIME_NS, CORPUS_MTIME_NS))


def read_text(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8", "replace")


# --------------------------------------------------------------------------- one index run


def environment(src: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")])),
    }


def memsift(src: Path, *args: str) -> list[str]:
    return [sys.executable, "-c", "from engine.cli import main; main()", *args]


def first_answer(store: Path, src: Path, started: float, done: threading.Event) -> float | None:
    """Seconds from ``started`` until a lexical search of the store first answers with a hit;
    None when the index finished first (then the index's end is the first answer)."""
    command = memsift(src, "--store", str(store), "search", PROBE_QUERY, "--no-vector", "--json")
    while not done.is_set():
        found = subprocess.run(command, capture_output=True, text=True, env=environment(src))
        if found.returncode == 0:
            try:
                hits = json.loads(found.stdout).get("hits") or []
            except json.JSONDecodeError:
                hits = []
            if hits:
                return time.perf_counter() - started
        done.wait(0.25)
    return None


def index_counts(store: Path) -> dict[str, int]:
    """What the index holds after a run, counted the same way for any code that wrote it."""
    conn = connect(str(store / ".memsift" / "index.db"))
    try:
        files = conn.execute("SELECT count(*) FROM files").fetchone()[0]
        chunks, with_vector = conn.execute(
            "SELECT count(*), count(e.hash) FROM chunks AS c "
            "LEFT JOIN embeddings AS e ON e.hash = c.hash"
        ).fetchone()
        vectors = conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
        budget = conn.execute("SELECT value FROM meta WHERE key = 'embed_budget'").fetchone()
    finally:
        conn.close()
    return {
        "files": int(files),
        "chunks": int(chunks),
        "embedded": int(vectors),
        "reused": int(with_vector) - int(vectors),
        "without_vector": int(chunks) - int(with_vector),
        #: The budget the run recorded (0: code before budgets records none).
        "budget": int(budget[0]) if budget else 0,
    }


def index_run(label: str, code: str, src: Path, store: Path) -> IndexingRun:
    """``memsift index --json`` on a store never indexed, in a fresh process of ``src``'s code,
    with a lexical search asked again and again beside it until it answers."""
    shutil.rmtree(store / ".memsift", ignore_errors=True)
    before = load_average()
    log(f"{label}: indexing {store} with {src}")
    with tempfile.TemporaryFile("w+") as errors:
        started = time.perf_counter()
        process = subprocess.Popen(
            memsift(src, "--store", str(store), "index", "--json"),
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            env=environment(src),
        )
        done = threading.Event()
        answer: list[float | None] = []
        poller = threading.Thread(
            target=lambda: answer.append(first_answer(store, src, started, done)), daemon=True
        )
        poller.start()
        assert process.stdout is not None
        output = process.stdout.read()
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        done.set()
        poller.join()
        if process.returncode != 0:
            errors.seek(0)
            raise SystemExit(f"{label}: memsift index failed:\n{errors.read()[-4000:]}")
    report = json.loads(output)
    counts = index_counts(store)
    first = answer[0] if answer and answer[0] is not None else wall
    run = IndexingRun(
        code=label,
        source=code,
        files=counts["files"],
        chunks=counts["chunks"],
        embedded=counts["embedded"],
        reused=counts["reused"],
        past_budget=counts["without_vector"],
        reported={
            k: int(v) for k, v in report.items() if isinstance(v, int) and not isinstance(v, bool)
        },
        embed_chunks_per_file=counts["budget"] or None,
        wall_s=round(wall, 2),
        cpu_s=round(usage.ru_utime + usage.ru_stime, 2),
        first_full_text_s=round(first, 2),
        fully_indexed_s=round(wall, 2),
        peak_rss_mib=round(usage.ru_maxrss / 1024, 1),
        load_average=LoadWindow(before=tuple(before), after=tuple(load_average())),
    )
    log(
        f"{label}: {run.files} files, {run.chunks} chunks, embedded {run.embedded}, reused "
        f"{run.reused}, past budget {run.past_budget}; wall {run.wall_s} s, CPU {run.cpu_s} s, "
        f"first full-text answer {run.first_full_text_s} s, peak RSS {run.peak_rss_mib} MiB"
    )
    return run


# --------------------------------------------------------------------------- questions


@dataclass(frozen=True)
class Question:
    text: str
    relevant: tuple[str, ...]
    #: The group it is scored in: a band of chunk numbers in a big file, or "short documents".
    group: str
    source: str
    chunk: int


HTML_HEADING = re.compile(r"<h([2-4])[^>]*>(.*?)</h\1>", re.IGNORECASE | re.DOTALL)


def html_sections(raw: str) -> list[tuple[str, str]]:
    """(heading, following text) of an HTML page's h2-h4 headings."""
    found = list(HTML_HEADING.finditer(raw))
    out = []
    for number, match in enumerate(found):
        end = found[number + 1].start() if number + 1 < len(found) else len(raw)
        body = re.sub(r"<[^>]+>", " ", raw[match.end() : end])
        body = re.sub(r"[ \t]+", " ", body)
        body = re.sub(r"\n\s*\n+", "\n\n", body)
        out.append((plain(match.group(2)).replace("#", " ").strip(), body.strip()))
    return out


def candidate_questions(doc: Doc) -> list[str]:
    """Questions a reader of ``doc`` might ask: its sections' headings (each once in the file)
    and first sentences, as ``stress_set.py`` draws them."""
    found = html_sections(doc.text) if doc.html else sections(doc.text)
    headings = [plain(h) for h, _ in found]
    seen = {h: headings.count(h) for h in headings}
    out = []
    for number, (heading, body) in enumerate(found):
        text = plain(heading) if number % 2 == 0 else first_sentence(body)
        if text and number % 2 == 0 and seen.get(text, 0) > 1:
            text = first_sentence(body)
        if text and 3 <= len(text.split()) <= 30:
            out.append(text)
    if not out and (sentence := first_sentence(doc.text)):
        out.append(sentence)
    return list(dict.fromkeys(out))


def answer_chunk(conn, path: str, text: str) -> int | None:  # type: ignore[no-untyped-def]
    """The first chunk of ``path`` holding the question's words as a phrase (the full-text
    index's own tokens), or None."""
    words = re.findall(r"\w+", text)[:10]
    if len(words) < 2:
        return None
    phrase = 'body : "' + " ".join(words) + '"'
    row = conn.execute(
        "SELECT min(c.seq) FROM chunks_fts JOIN chunks AS c ON c.id = chunks_fts.rowid "
        "JOIN files AS f ON f.id = c.file_id WHERE chunks_fts MATCH ? AND f.path = ?",
        (phrase, path),
    ).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def band_name(chunk: int) -> str:
    for low, high in BANDS:
        if chunk >= low and (high is None or chunk < high):
            return f"chunks {low}-{high - 1}" if high else f"chunks {low}+"
    raise AssertionError(chunk)


def build_questions(docs: list[Doc], store: Path) -> list[Question]:
    """Known-item questions: per band of chunk numbers in files over ``SHORT_DOC_CHUNKS``
    chunks, and from short documents, each judged answered by its file (and its twin)."""
    conn = connect(str(store / ".memsift" / "index.db"))
    try:
        chunks = dict(
            conn.execute(
                "SELECT f.path, count(*) FROM chunks AS c JOIN files AS f ON f.id = c.file_id "
                "GROUP BY f.path"
            ).fetchall()
        )
        pools: dict[str, list[Question]] = {}
        for doc in docs:
            count = chunks.get(doc.key, 0)
            if not count:
                continue
            for text in candidate_questions(doc):
                where = answer_chunk(conn, doc.key, text)
                if where is None:
                    continue
                group = "short documents" if count <= SHORT_DOC_CHUNKS else band_name(where)
                pools.setdefault(group, []).append(
                    Question(text, doc.family, group, doc.key, where)
                )
    finally:
        conn.close()
    rng = random.Random(SEED)
    out = []
    for group, pool in sorted(pools.items()):
        wanted = SHORT_QUESTIONS if group == "short documents" else QUESTIONS_PER_BAND
        if group == "short documents":  # one question per document first, so many answer
            by_doc: dict[str, Question] = {}
            for question in pool:
                by_doc.setdefault(question.source, question)
            pool = list(by_doc.values())
        out += rng.sample(pool, min(wanted, len(pool)))
    return out


# --------------------------------------------------------------------------- the budget


def simulate_budget(store: Path, budget: int, model: str, dim: int) -> tuple[int, int]:
    """Leave in ``store``'s index the vectors an index run under ``budget`` leaves: a chunk the
    rule leaves out of its file (:func:`engine.indexing.budget.embeddable`) loses its vector
    unless a chunk within the budget shares its text. Returns (chunks with a vector, chunks
    past the budget without one)."""
    conn = connect(str(store / ".memsift" / "index.db"))
    try:
        with conn:
            conn.execute(
                "UPDATE chunks SET hash = 'past-budget:' || hash WHERE hash NOT IN "
                f"(SELECT c.hash FROM chunks AS c {budget_join(budget)} "
                f"WHERE {embeddable_sql(budget)})"
            )
            conn.execute("DELETE FROM embeddings WHERE hash NOT IN (SELECT hash FROM chunks)")
            conn.execute("DELETE FROM meta WHERE key = 'store_floor'")  # measured anew
            record_coverage(conn, model, dim, budget)
            write_meta(conn, "embed_budget", budget)
        with_vector, without = conn.execute(
            "SELECT count(e.hash), count(*) - count(e.hash) FROM chunks AS c "
            "LEFT JOIN embeddings AS e ON e.hash = c.hash"
        ).fetchone()
    finally:
        conn.close()
    return int(with_vector), int(without)


class CachedEmbedder:
    """The default embedder, each question embedded once for every budget."""

    def __init__(self) -> None:
        inner = default_embedder()
        self.name, self.dim, self._inner = inner.name, inner.dim, inner
        self._cache: dict[str, np.ndarray] = {}

    def embed(self, texts):  # type: ignore[no-untyped-def]
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            self._cache.update(zip(missing, self._inner.embed(missing), strict=True))
        return np.stack([self._cache[t] for t in texts]) if texts else self._inner.embed([])


def ndcg_at_10(paths: list[str], relevant: tuple[str, ...]) -> float:
    gains = sum(1 / math.log2(rank + 2) for rank, p in enumerate(paths[:10]) if p in relevant)
    ideal = sum(1 / math.log2(rank + 2) for rank in range(min(len(relevant), 10)))
    return gains / ideal


def score_budget(
    store: Path, budget: int, questions: list[Question], embedder: CachedEmbedder
) -> BudgetPoint:
    copy = store.parent / f"{store.name}-budget-{budget or 'none'}"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(store, copy)
    with_vector, without = simulate_budget(copy, budget or UNBOUNDED, embedder.name, embedder.dim)
    found: dict[str, list[tuple[float, bool, bool]]] = {}
    with Searcher(open_store(copy), embedder=embedder) as searcher:  # type: ignore[arg-type]
        for question in questions:
            paths = [hit.path for hit in searcher.search(question.text, limit=10).hits]
            found.setdefault(question.group, []).append(
                (
                    ndcg_at_10(paths, question.relevant),
                    bool(paths) and paths[0] in question.relevant,
                    any(p in question.relevant for p in paths),
                )
            )
    shutil.rmtree(copy, ignore_errors=True)
    groups = tuple(
        BudgetGroup(
            group=name,
            questions=len(rows),
            ndcg_at_10=round(sum(r[0] for r in rows) / len(rows), 4),
            hit_at_1=round(sum(r[1] for r in rows) / len(rows), 4),
            hit_at_10=round(sum(r[2] for r in rows) / len(rows), 4),
        )
        for name, rows in sorted(found.items(), key=lambda item: group_order(item[0]))
    )
    every = [row for rows in found.values() for row in rows]
    point = BudgetPoint(
        budget=budget or None,
        chunks_with_vector=with_vector,
        chunks_without_vector=without,
        groups=groups,
        ndcg_at_10=round(sum(r[0] for r in every) / len(every), 4),
        hit_at_10=round(sum(r[2] for r in every) / len(every), 4),
    )
    log(
        f"budget {budget or 'none'}: {with_vector} chunks with a vector, nDCG@10 "
        + ", ".join(f"{g.group} {g.ndcg_at_10:.3f}" for g in groups)
    )
    return point


def group_order(name: str) -> tuple[int, int]:
    if name == "short documents":
        return (1, 0)
    return (0, int(re.findall(r"\d+", name)[0]))


def shared_set_chunks(data: Path = DATA) -> tuple[SharedSetChunks, ...]:
    """Each shared set's largest document, in the engine's chunks (``../shared/data``; a set
    of several stores, like realtalk's chats, counted over all of them)."""
    out = []
    for corpus in sorted(data.glob("*/corpus.jsonl")) + sorted(data.glob("*/*/corpus.jsonl")):
        name = str(corpus.parent.relative_to(data)).split("/")[0]
        most = 0
        for line in corpus.read_text(encoding="utf-8").splitlines():
            if line.strip():
                most = max(most, len(chunk_text(str(json.loads(line).get("text") or ""))))
        out.append((name, most))
    merged: dict[str, int] = {}
    for name, most in out:
        merged[name] = max(merged.get(name, 0), most)
    return tuple(SharedSetChunks(name, most) for name, most in sorted(merged.items()))


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--share", type=float, default=DEFAULT_SHARE, help="share of documents")
    parser.add_argument(
        "--src",
        type=Path,
        help="another checkout's src/ (e.g. the commit before the budget) indexed the same "
        "store before this checkout's, in the same run",
    )
    parser.add_argument("--src-label", default="9a5cde3 (before the budget)")
    parser.add_argument(
        "--budgets",
        default=",".join(str(b) for b in DEFAULT_BUDGETS),
        help="budgets to score, 0 for none; empty: skip the budget measurement",
    )
    parser.add_argument(
        "--huge", type=int, help="huge documents to sample (default: --share of them)"
    )
    parser.add_argument(
        "--data", type=Path, default=DATA, help="the shared sets (default: ../shared/data)"
    )
    parser.add_argument("--work", type=Path, help="where the stores are written (default: temp)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results JSON")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    busy = load_average()
    if warning := busy_warning(busy):
        log(warning)
    stamp = make_stamp("indexing")
    budgets = [int(b) for b in args.budgets.split(",") if b.strip()]
    work = args.work or Path(tempfile.mkdtemp(prefix="memsift-indexing-"))
    work.mkdir(parents=True, exist_ok=True)
    docs, ordinary, huge = build_corpus(args.share, args.huge)
    log(f"corpus: {len(docs)} documents sampled from {ordinary} ordinary and {huge} huge")
    runs = []
    stores = {}
    plan = ([("before", args.src_label, args.src.resolve())] if args.src else []) + [
        ("after", "this commit", REPO / "src")
    ]
    for label, code, src in plan:
        store = work / f"store-{label}"
        shutil.rmtree(store, ignore_errors=True)
        write_store(store, docs)
        runs.append(index_run(label, code, src, store))
        stores[label] = store
    points: list[BudgetPoint] = []
    questions: list[Question] = []
    if budgets:
        full = stores.get("before") or stores["after"]
        if "before" not in stores:  # the after store misses vectors past the budget: fill them
            (full / ".memsift" / "config.toml").write_text(
                f"[limits]\nembed_chunks_per_file = {UNBOUNDED}\n", encoding="utf-8"
            )
            index_store(open_store(full))
        questions = build_questions(docs, full)
        log(f"{len(questions)} questions; scoring budgets {budgets}")
        embedder = CachedEmbedder()
        points = [score_budget(full, budget, questions, embedder) for budget in budgets]
    chunk_sizes = sorted(
        (count for count in chunk_counts(stores.get("before") or stores["after"]).values()),
        reverse=True,
    )
    corpus = IndexingCorpus(
        source="the installed Python packages' descriptions and shipped docs and Debian's "
        "/usr/share/doc (READMEs, Markdown, copyright files), whole; Node.js API pages with "
        "their HTML twins",
        share=args.share,
        documents=len(docs),
        html=sum(doc.html for doc in docs),
        twins=sum(doc.html for doc in docs),
        machine_ordinary=ordinary,
        machine_huge=huge,
        huge_files=tuple(
            f"{key} ({count} chunks)"
            for key, count in sorted(
                chunk_counts(stores.get("before") or stores["after"]).items(),
                key=lambda kv: -kv[1],
            )
            if count > HUGE_CHUNKS
        ),
        chunks_in_huge_files=sum(c for c in chunk_sizes if c > HUGE_CHUNKS),
        megabytes=round(sum(len(doc.content.encode()) for doc in docs) / 2**20, 2),
    )
    targets = []
    before = next((run for run in runs if run.code == "before"), None)
    after = next(run for run in runs if run.code == "after")
    if before is not None:
        for clock, a, b in (
            ("wall", after.fully_indexed_s, before.fully_indexed_s),
            ("CPU", after.cpu_s, before.cpu_s),
        ):
            ratio = round(a / b, 3)
            targets.append(
                Target(
                    f"time to a fully indexed store ÷ today's code's, {clock}",
                    f"<= {TARGET_RATIO}",
                    ratio,
                    ratio <= TARGET_RATIO,
                )
            )
    results = IndexingResults(
        stamp=stamp,
        corpus=corpus,
        runs=tuple(runs),
        probe_query=PROBE_QUERY,
        budgets=tuple(points),
        questions=len(questions),
        default_budget=DEFAULT_EMBED_CHUNKS_PER_FILE,
        shared_sets=shared_set_chunks(args.data),
        targets=tuple(targets),
        load_average_at_start=tuple(busy),
        load_average_at_end=tuple(load_average()),
        elapsed_s=round(time.perf_counter() - started, 1),
    )
    write_results(results, args.out)
    for check in results.targets:
        met = "MET " if check.met else "MISS"
        log(f"  {met}  {check.name}: {check.measured:g} ({check.target})")
    log(f"wrote {args.out}")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def chunk_counts(store: Path) -> dict[str, int]:
    conn = connect(str(store / ".memsift" / "index.db"))
    try:
        return dict(
            conn.execute(
                "SELECT f.path, count(*) FROM chunks AS c JOIN files AS f ON f.id = c.file_id "
                "GROUP BY f.path"
            ).fetchall()
        )
    finally:
        conn.close()


if __name__ == "__main__":
    sys.exit(main())
