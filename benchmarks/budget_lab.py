"""Which chunks should a file's embedding budget embed? A lab for issue 22, item 2.

    python benchmarks/budget_lab.py --work $TMPDIR/budget-lab            # every scheme
    python benchmarks/budget_lab.py --work $TMPDIR/budget-lab --schemes first,spread --budgets 32

The per-file embedding budget embeds only some of a huge file's chunks; the others are found
by full text alone. ``indexing.py`` measures the rule as shipped; this lab measures other
choices of *which* chunks, on the same store of this machine's documents (``indexing.py``'s
corpus, built the same way), each simulated on a copy of the store indexed once with no budget:
a chunk the scheme leaves out loses its vector unless a chunk it keeps shares the text, exactly
what an index run under that scheme leaves.

Schemes (``n`` a file's chunks, ``b`` the budget):

- ``first``: chunks ``0 .. b-1`` (the rule before this lab);
- ``spread``: ``b`` chunks evenly spaced over the file, chunk 0 first;
- ``head``: the first ``b/2`` chunks, then ``b/2`` evenly spaced over the rest;
- ``sections``: chunk 0 and the chunks where a Markdown heading starts (spread over them when
  there are more than ``b``), the rest of the budget spread over the other chunks;
- ``first-sqrt`` / ``spread-sqrt``: ``first`` / ``spread`` with a budget of ``b + 2 sqrt(n)``.

Two question sets, so that no scheme is judged on questions made for it:

- ``sections``: ``indexing.py``'s own known-item questions (headings and first sentences of
  Markdown sections; a scheme that embeds section starts is favoured by their construction);
- ``passages``: a sentence from a chunk drawn uniformly at random among the big files' chunks
  in each band of chunk numbers (0-15, 16-31, 32-63, 64-127, 128+), wherever it lies in its
  section, kept only when no other file holds it as a phrase (a licence paragraph found in
  twenty copyright files does not name one file) and it is not found earlier in its own file.

Per scheme and budget: chunks embedded (distinct texts: what an index run embeds), the CPU an
index run would spend (the full run's CPU per embedded text times the texts, plus its cost with
none), nDCG@10, hit@1 and hit@10 per set and band. Writes a JSON record and prints a table.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

from indexing import (
    QUESTIONS_PER_BAND,
    SHORT_DOC_CHUNKS,
    UNBOUNDED,
    CachedEmbedder,
    Question,
    band_name,
    build_corpus,
    build_questions,
    group_order,
    ndcg_at_10,
    write_store,
)
from stress_set import plain
from timing import log

from engine.files.store import open_store
from engine.indexing.indexer import index_store
from engine.search import Searcher
from engine.sqlite.db import connect, write_meta

Scheme = Callable[[int, int, list[str]], set[int]]
SEED = 20261203
HEADING = re.compile(r"(?:^|\s)#{1,6} \S")


def first(n: int, b: int, texts: list[str]) -> set[int]:
    return set(range(min(n, b)))


def evenly(lo: int, hi: int, k: int) -> set[int]:
    """``k`` positions evenly spaced over ``lo .. hi-1``, ``lo`` first; all when they fit."""
    count = hi - lo
    if k >= count:
        return set(range(lo, hi))
    return {lo + (i * count) // k for i in range(k)}


def spread(n: int, b: int, texts: list[str]) -> set[int]:
    return evenly(0, n, b)


def head(n: int, b: int, texts: list[str]) -> set[int]:
    if n <= b:
        return set(range(n))
    h = b // 2
    return set(range(h)) | evenly(h, n, b - h)


def sections(n: int, b: int, texts: list[str]) -> set[int]:
    if n <= b:
        return set(range(n))
    starts = [0] + [seq for seq, text in enumerate(texts) if seq and HEADING.search(text)]
    if len(starts) >= b:
        return {starts[i] for i in evenly(0, len(starts), b)}
    rest = [seq for seq in range(n) if seq not in set(starts)]
    return set(starts) | {rest[i] for i in evenly(0, len(rest), b - len(starts))}


def stride(n: int, b: int, texts: list[str]) -> set[int]:
    """Every ``s``-th chunk, ``s`` the smallest power of two leaving at most ``b``: a file that
    grows keeps its chunks chosen (``s`` only doubles, keeping every other one)."""
    step = 1
    while -(-n // step) > b:
        step *= 2
    return set(range(0, n, step))


def hashed(n: int, b: int, texts: list[str]) -> set[int]:
    """Chunk 0 and the ``b - 1`` others of smallest text hash: an edit elsewhere in the file
    does not move the choice."""
    if n <= b:
        return set(range(n))
    import hashlib

    order = sorted(range(1, n), key=lambda i: hashlib.sha256(texts[i].encode()).hexdigest())
    return {0, *order[: b - 1]}


def grown(rule: Scheme) -> Scheme:
    def scheme(n: int, b: int, texts: list[str]) -> set[int]:
        return rule(n, b + int(2 * math.sqrt(n)), texts)

    return scheme


SCHEMES: dict[str, Scheme] = {
    "first": first,
    "spread": spread,
    "head": head,
    "sections": sections,
    "stride": stride,
    "hashed": hashed,
    "first-sqrt": grown(first),
    "spread-sqrt": grown(spread),
}


# --------------------------------------------------------------------------- the full store


def full_store(work: Path, share: float) -> tuple[Path, list, float]:  # type: ignore[type-arg]
    """The corpus indexed once with every chunk embedded (kept in ``work``), its documents,
    and the CPU seconds that run took (read back from ``work`` when the store is kept)."""
    docs, _, _ = build_corpus(share)
    store = work / "store-full"
    record = work / "full-run.json"
    if record.exists() and (store / ".memsift" / "index.db").exists():
        return store, docs, float(json.loads(record.read_text())["cpu_s"])
    shutil.rmtree(store, ignore_errors=True)
    write_store(store, docs)
    (store / ".memsift").mkdir()
    (store / ".memsift" / "config.toml").write_text(
        f"[limits]\nembed_chunks_per_file = {UNBOUNDED}\n", encoding="utf-8"
    )
    started = time.process_time()
    report = index_store(open_store(store))
    cpu = time.process_time() - started
    record.write_text(json.dumps({"cpu_s": cpu, "embedded": report.embedded}))
    return store, docs, cpu


def file_chunks(store: Path) -> dict[str, list[tuple[int, str, str]]]:
    """path -> [(seq, hash, text)] in order."""
    conn = connect(str(store / ".memsift" / "index.db"))
    try:
        out: dict[str, list[tuple[int, str, str]]] = {}
        for path, seq, digest, text in conn.execute(
            "SELECT f.path, c.seq, c.hash, c.text FROM chunks AS c JOIN files AS f "
            "ON f.id = c.file_id ORDER BY f.path, c.seq"
        ):
            out.setdefault(path, []).append((int(seq), digest, text))
        return out
    finally:
        conn.close()


# --------------------------------------------------------------------------- passage questions


SENTENCE = re.compile(r"(?<=[.!?])\s+")


def passage_questions(store: Path, docs: list) -> list[Question]:  # type: ignore[type-arg]
    """A sentence from a chunk drawn at random within each band of the big files' chunks, that
    names its file alone (see the module docstring)."""
    families = {doc.key: doc.family for doc in docs}
    chunks = file_chunks(store)
    by_band: dict[str, list[tuple[str, int, str]]] = {}
    for path, rows in chunks.items():
        if len(rows) <= SHORT_DOC_CHUNKS:
            continue
        for seq, _, text in rows:
            by_band.setdefault(band_name(seq), []).append((path, seq, text))
    rng = random.Random(SEED)
    conn = connect(str(store / ".memsift" / "index.db"))
    out: list[Question] = []
    try:
        for band, pool in sorted(by_band.items(), key=lambda kv: group_order(kv[0])):
            rng.shuffle(pool)
            taken = 0
            for path, seq, text in pool:
                if taken >= QUESTIONS_PER_BAND:
                    break
                sentences = [plain(s) for s in SENTENCE.split(text)]
                sentences = [
                    s
                    for s in sentences
                    if 6 <= len(s.split()) <= 30
                    and not s.startswith("#")
                    and sum(w.isalpha() for w in s.split()) >= 0.7 * len(s.split())
                ]
                if not sentences:
                    continue
                sentence = rng.choice(sentences)
                where = located(conn, sentence, families[path]) or {}
                if where.get(path) != seq:
                    continue
                out.append(Question(sentence, families[path], band, path, seq))
                taken += 1
    finally:
        conn.close()
    return out


def located(conn, sentence: str, family: tuple[str, ...]):  # type: ignore[no-untyped-def]
    """(file, its first chunk holding them) when the sentence's first words, as a phrase, lie
    in one file only, besides its twin; None otherwise."""
    words = re.findall(r"\w+", sentence)[:10]
    if len(words) < 4:
        return None
    phrase = 'body : "' + " ".join(words) + '"'
    rows = conn.execute(
        "SELECT f.path, min(c.seq) FROM chunks_fts JOIN chunks AS c ON c.id = chunks_fts.rowid "
        "JOIN files AS f ON f.id = c.file_id WHERE chunks_fts MATCH ? GROUP BY f.path",
        (phrase,),
    ).fetchall()
    if not rows or not {path for path, _ in rows} <= set(family):
        return None
    return {path: int(seq) for path, seq in rows}


# --------------------------------------------------------------------------- one simulation


def simulate(store: Path, copy: Path, scheme: Scheme, budget: int, embedder) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """Copy ``store`` and leave in the copy the vectors a run under ``scheme`` leaves; returns
    (chunks the scheme keeps, distinct texts embedded)."""
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(store, copy)
    kept: set[str] = set()
    dropped: list[tuple[str, int]] = []
    chunks = 0
    for path, rows in file_chunks(copy).items():
        chosen = scheme(len(rows), budget, [text for _, _, text in rows])
        chunks += len(chosen)
        for seq, digest, _ in rows:
            if seq in chosen:
                kept.add(digest)
            else:
                dropped.append((path, seq))
    conn = connect(str(copy / ".memsift" / "index.db"))
    try:
        with conn:
            conn.execute("CREATE TEMP TABLE kept(hash TEXT PRIMARY KEY)")
            conn.executemany("INSERT OR IGNORE INTO kept VALUES (?)", [(h,) for h in kept])
            conn.execute(
                "UPDATE chunks SET hash = 'past-budget:' || hash WHERE hash NOT IN "
                "(SELECT hash FROM kept)"
            )
            conn.execute("DELETE FROM embeddings WHERE hash NOT IN (SELECT hash FROM chunks)")
            conn.execute("DELETE FROM meta WHERE key = 'store_floor'")
            write_meta(conn, "chunks", chunks)
            write_meta(conn, "embedded_chunks", chunks)
            write_meta(conn, "embed_budget", UNBOUNDED)
        embedded = conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
    finally:
        conn.close()
    return chunks, int(embedded)


Rows = dict[str, list[tuple[float, bool, bool]]]
#: The vector arm alone: what a scheme takes from the arm it changes, before fusion hides it.
VECTOR_ALONE = {"fts": 0.0, "recency": 0.0, "salience": 0.0, "time": 0.0}


def score(copy: Path, questions: list[Question], embedder, weights=None) -> Rows:  # type: ignore[no-untyped-def]
    """Per group, each question's (nDCG@10, hit@1, hit@10), in the questions' order."""
    found: Rows = {}
    with Searcher(open_store(copy), embedder=embedder) as searcher:
        for question in questions:
            hits = searcher.search(question.text, limit=10, weights=weights).hits
            paths = [hit.path for hit in hits]
            found.setdefault(question.group, []).append(
                (
                    ndcg_at_10(paths, question.relevant),
                    bool(paths) and paths[0] in question.relevant,
                    any(p in question.relevant for p in paths),
                )
            )
    return found


STOP = set(
    "the a an and or of to in on for with by from as at is are was were be been it its this "
    "that these those not no but if then than so such can may must will shall should would "
    "into out over under any all each other which who whom whose what when where how there "
    "their they them he she his her you your we our us i me my do does did done has have"
    " had".split()
)


def gist(questions: list[Question]) -> list[Question]:
    """Each question as a reader half remembers it: five of its content words, in order (a
    word the store spells alike everywhere no longer pins one chunk)."""
    rng = random.Random(SEED + 1)
    out = []
    for question in questions:
        words = [w for w in re.findall(r"[A-Za-z][\w'-]+", question.text) if w.lower() not in STOP]
        if len(words) < 5:
            continue
        picked = sorted(rng.sample(range(len(words)), 5))
        text = " ".join(words[i] for i in picked)
        out.append(
            Question(text, question.relevant, question.group, question.source, question.chunk)
        )
    return out


def summary(found: Rows) -> dict[str, object]:
    every = [row for rows in found.values() for row in rows]
    mean = lambda rows, i: round(sum(r[i] for r in rows) / len(rows), 4)  # noqa: E731
    return {
        "questions": len(every),
        "ndcg@10": mean(every, 0),
        "hit@1": mean(every, 1),
        "hit@10": mean(every, 2),
        "groups": {
            name: {"n": len(rows), "ndcg@10": mean(rows, 0), "hit@1": mean(rows, 1)}
            for name, rows in sorted(found.items(), key=lambda kv: group_order(kv[0]))
        },
    }


TABLE_SETS = ("sections", "passages", "gist")


def table(records: list[dict[str, object]]) -> str:
    """A Markdown table of every scheme and budget in ``records`` (the last run of each wins):
    texts embedded, the CPU an index run would take (the full run's CPU in proportion to the
    texts embedded: embedding is nearly all of it), and per question set nDCG@10 and hit@1
    fused and through the vector arm alone."""
    rows: dict[tuple[str, int], dict[str, object]] = {}
    full_cpu, full_texts = 0.0, 0
    for record in records:
        full_cpu = float(record["full_cpu_s"])  # type: ignore[arg-type]
        for row in record["rows"]:  # type: ignore[attr-defined]
            rows[(row["scheme"], row["budget"] or 0)] = row
            if row["scheme"] == "none":
                full_texts = int(row["embedded"])
    order = list(SCHEMES)
    head = "| scheme | budget | texts embedded | index CPU (est.) |"
    rule = "| --- | --- | --- | --- |"
    for name in TABLE_SETS:
        head += f" {name}: nDCG@10 / hit@1 | {name}, vector alone |"
        rule += " --- | --- |"
    lines = [head, rule]
    for (scheme, budget), row in sorted(
        rows.items(),
        key=lambda kv: (
            kv[0][0] != "none",
            order.index(kv[0][0]) if kv[0][0] in order else 99,
            kv[0][1],
        ),
    ):
        texts = int(row["embedded"])  # type: ignore[arg-type]
        cpu = full_cpu * texts / full_texts
        line = (
            f"| {scheme} | {budget or '-'} | {texts:,} | {cpu:.0f} s ({texts / full_texts:.2f}x) |"
        )
        for name in TABLE_SETS:
            for key in (name, f"{name}-vector"):
                cell = row[key]  # type: ignore[index]
                line += f" {cell['ndcg@10']:.3f} / {cell['hit@1']:.3f} |"  # type: ignore[index]
        lines.append(line)
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, help="stores and the record (required to run)")
    parser.add_argument("--share", type=float, default=0.1)
    parser.add_argument("--schemes", default=",".join(SCHEMES))
    parser.add_argument("--budgets", default="16,32,48,64")
    parser.add_argument(
        "--runs", help="scheme:budget pairs instead of every scheme at every budget"
    )
    parser.add_argument("--out", type=Path, help="JSON record (default: WORK/budget-lab.json)")
    parser.add_argument(
        "--table",
        nargs="+",
        type=Path,
        metavar="RECORD",
        help="print the Markdown table of these JSON records (runs nothing)",
    )
    args = parser.parse_args(argv)
    if args.table:
        print(table([json.loads(path.read_text()) for path in args.table]), end="")
        return 0
    if args.work is None:
        parser.error("--work is required to run the lab")
    args.work.mkdir(parents=True, exist_ok=True)
    store, docs, full_cpu = full_store(args.work, args.share)
    passages = passage_questions(store, docs)
    sections_set = build_questions(docs, store)
    #: (question set, weights): fused as shipped, and the vector arm alone.
    sets = {
        "sections": (sections_set, None),
        "sections-vector": (sections_set, VECTOR_ALONE),
        "passages": (passages, None),
        "passages-vector": (passages, VECTOR_ALONE),
        "gist": (gist(passages), None),
        "gist-vector": (gist(passages), VECTOR_ALONE),
    }
    log(", ".join(f"{name}: {len(qs)} questions" for name, (qs, _) in sets.items()))
    embedder = CachedEmbedder()
    total = sum(len(rows) for rows in file_chunks(store).values())
    runs = [("none", 0)] + (
        [(pair.split(":")[0], int(pair.split(":")[1])) for pair in args.runs.split(",")]
        if args.runs
        else [(n, int(b)) for n in args.schemes.split(",") for b in args.budgets.split(",")]
    )
    out = args.out or args.work / "budget-lab.json"
    record: dict[str, object] = {"full_cpu_s": round(full_cpu, 1), "chunks": total, "rows": []}
    for name, budget in runs:
        copy = args.work / "copy"
        if name == "none":
            chunks, embedded = simulate(store, copy, first, UNBOUNDED, embedder)
        else:
            chunks, embedded = simulate(store, copy, SCHEMES[name], budget, embedder)
        row: dict[str, object] = {
            "scheme": name,
            "budget": budget or None,
            "chunks_kept": chunks,
            "embedded": embedded,
        }
        for set_name, (questions, weights) in sets.items():
            found = score(copy, questions, embedder, weights)
            row[set_name] = summary(found)
            row[set_name]["per_question"] = {  # type: ignore[index]
                group: [round(r[0], 4) for r in rows] for group, rows in found.items()
            }
        record["rows"].append(row)  # type: ignore[union-attr]
        out.write_text(json.dumps(record, indent=1))
        log(
            f"{name:12} {budget or '-':>4} embedded {embedded:5} "
            + "  ".join(
                f"{s} {row[s]['ndcg@10']:.3f}/{row[s]['hit@1']:.3f}"  # type: ignore[index]
                for s in sets
            )
        )
    shutil.rmtree(args.work / "copy", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
