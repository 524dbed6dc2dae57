"""Retrieval quality of the default fusion on every evaluation set, with the ablation.

Runs the same code path as ``memsift eval --ablation`` (corpus written as a store, indexed by
the real indexer, searched by the real search) on each set under ``../shared/data`` (or the
folders given) and writes ``benchmarks/results/quality.json`` in the layout of
``engine.measure.results_schema.QualityResults``, stamped with the ranking it measured so the docs
build can tell when the figures are stale.

    python benchmarks/quality.py                       # every set beside the checkout
    python benchmarks/quality.py path/to/set ...       # chosen sets
    python benchmarks/quality.py --held-out path/to/set    # also a set kept out of tuning
    python benchmarks/quality.py --keep $TMPDIR/stores    # reuse indexed stores between runs
    python benchmarks/quality.py --database-url URL    # the same sets on PostgreSQL

With ``--database-url`` the sets are indexed into that PostgreSQL database (one schema per set,
as ``memsift eval --database-url`` does) and scored with the default fusion and with each arm
that finds candidates alone (the priors only reorder what those find); the run writes
``benchmarks/results/quality_pg.json`` (``engine.measure.results_schema.PgQualityResults``),
which the Measured page sets beside the SQLite figures. Without it the run is on SQLite even
when ``MEMSIFT_DATABASE_URL`` is set, so quality.json never holds another backend's figures.

The ablation covers every arm of the registry (each alone, and the fusion without it), so a
new arm is measured with no change here. When ``benchmarks/results/tuning.json`` exists (the
fusion lab's record of how the weights were chosen, the levers tried and the abstention
calibration), it is merged in as ``lab``. Reference figures from outside tools are recorded
beside ours so the page can show where memsift stands; they come from ../shared/data/README.md,
not from this script.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from stamp import make_stamp

from engine.arms import ARMS
from engine.files.config import database_url
from engine.measure.evaluate import evaluate, find_sets
from engine.measure.results_schema import (
    LAB,
    QUALITY_PG,
    ArmAblation,
    BackendSet,
    LabResults,
    Metrics,
    PgQualityResults,
    QualityResults,
    QualitySet,
    ResultsError,
    read_results,
    write_results,
)
from engine.measure.typed_json import load
from engine.pg.target import URL_VARIABLE
from engine.ranking.arm_rules import reads_query

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
RESULTS = REPO / "benchmarks" / "results"
OUT = RESULTS / "quality.json"
PG_OUT = RESULTS / QUALITY_PG.name
#: The arms a PostgreSQL run scores alone: those that find candidates, in registry order.
QUERY_ARMS = tuple(arm.name for arm in ARMS if reads_query(arm.needs))

#: nDCG@10 of outside systems on the same files, as published in the data README.
REFERENCES = {
    "madial-en": {"BM25 (bm25s)": 0.442, "all-MiniLM-L6-v2 dense": 0.542, "plain RRF": 0.568},
    "cranfield": {"BM25 (bm25s)": 0.370, "all-MiniLM-L6-v2 dense": 0.381, "plain RRF": 0.416},
    "realtalk": {"BM25 (bm25s)": 0.386, "all-MiniLM-L6-v2 dense": 0.319, "plain RRF": 0.400},
}


def progress(label: str, done: int, total: int) -> None:
    print(f"\r{label}: {done}/{total or '?'}        ", end="", file=sys.stderr, flush=True)


def measure(folder: Path, keep: Path | None, held_out: bool) -> QualitySet:
    """One set through the real index and search, every arm of the registry ablated."""
    started = time.perf_counter()
    report = evaluate(folder, ablation=True, progress=progress, workdir=keep)
    print(file=sys.stderr)
    ablation = report["ablation"]
    return QualitySet(
        name=folder.name,
        fused=load(Metrics, report["overall"]),
        ablation=tuple(
            ArmAblation(
                arm=arm.name,
                alone=load(Metrics, ablation[f"only {arm.name}"]),
                without=load(Metrics, ablation[f"without {arm.name}"]),
            )
            for arm in ARMS
        ),
        by_category={name: load(Metrics, m) for name, m in report["by_category"].items()},
        references=REFERENCES.get(folder.name, {}),
        seconds=round(time.perf_counter() - started, 1),
        held_out=held_out,
    )


def measure_on_database(folder: Path, keep: Path | None) -> BackendSet:
    """One set through the real index and search on the database ``MEMSIFT_DATABASE_URL``
    names: the fusion, then each query arm alone (later runs find the set indexed already)."""
    started = time.perf_counter()
    fused = evaluate(folder, progress=progress, workdir=keep)
    alone = {
        arm: load(Metrics, evaluate(folder, arms=[arm], progress=progress, workdir=keep)["overall"])
        for arm in QUERY_ARMS
    }
    print(file=sys.stderr)
    return BackendSet(
        name=folder.name,
        fused=load(Metrics, fused["overall"]),
        alone=alone,
        seconds=round(time.perf_counter() - started, 1),
    )


def select_database(url: str | None) -> str | None:
    """Point this run at ``url``'s database, or at SQLite when none is given; the problem with
    ``url`` when it is not a PostgreSQL URL."""
    if url is None:
        os.environ.pop(URL_VARIABLE, None)
        return None
    if problem := database_url(url):
        return f"--database-url {problem}"
    os.environ[URL_VARIABLE] = url
    return None


def server_version(url: str) -> str:
    """The server and pgvector versions, for the results file."""
    import psycopg

    with psycopg.connect(url) as conn:
        (version,) = conn.execute("SHOW server_version").fetchone()
        row = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
    return f"PostgreSQL {version}" + (f", pgvector {row[0]}" if row else "")


def run_on_database(url: str, folders: list[Path], keep: Path | None, out: Path) -> int:
    stamp = make_stamp(QUALITY_PG.benchmark)
    sets = []
    for folder in folders:
        result = measure_on_database(folder, keep)
        alone = ", ".join(f"{arm} {m.ndcg_at_10:.4f}" for arm, m in result.alone.items())
        print(f"{result.name} on PostgreSQL: nDCG@10 {result.fused.ndcg_at_10:.4f} ({alone})")
        sets.append(result)
    server = server_version(url)
    write_results(PgQualityResults(stamp=stamp, server=server, sets=tuple(sets)), out)
    print(f"wrote {out.relative_to(REPO) if out.is_relative_to(REPO) else out}")
    return 0


def default_sets() -> list[Path]:
    """Every set beside the checkout; a folder of sets (realtalk's chats, one store each) is
    one set, scored over all its queries."""
    if not DATA.is_dir():
        return []
    return [folder for folder in sorted(DATA.iterdir()) if folder.is_dir() and find_sets(folder)]


def read_lab(path: Path) -> LabResults | None:
    """The fusion lab's record, when it has written one."""
    if not path.is_file():
        return None
    shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
    return read_results(LAB, path, str(shown))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sets", nargs="*", type=Path, help="BEIR-layout sets (default: all)")
    parser.add_argument(
        "--held-out", nargs="*", type=Path, default=[], help="sets kept out of tuning"
    )
    parser.add_argument("--keep", type=Path, default=None, help="keep indexed stores here")
    parser.add_argument("--lab", type=Path, default=RESULTS / LAB.name, help="the lab's record")
    parser.add_argument(
        "--database-url",
        default=None,
        metavar="URL",
        help=f"score the sets on this PostgreSQL database and write {QUALITY_PG.name}",
    )
    parser.add_argument("--out", type=Path, default=None, help="the results file to write")
    args = parser.parse_args()
    folders = args.sets or default_sets()
    if not folders:
        print(f"no evaluation sets: {DATA} does not exist; pass set folders", file=sys.stderr)
        return 2
    if problem := select_database(args.database_url):
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if args.database_url is not None:
        return run_on_database(args.database_url, folders, args.keep, args.out or PG_OUT)
    try:
        lab = read_lab(args.lab)
    except ResultsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stamp = make_stamp("quality")
    sets = []
    for folder, held_out in [(f, False) for f in folders] + [(f, True) for f in args.held_out]:
        result = measure(folder, args.keep, held_out)
        best = result.best_single
        assert best is not None  # the registry has at least one arm
        print(
            f"{result.name}: nDCG@10 {result.fused.ndcg_at_10:.4f} (best single arm: "
            f"{best.arm} {best.alone.ndcg_at_10:.4f})"
        )
        sets.append(result)
    out = args.out or OUT
    write_results(QualityResults(stamp=stamp, sets=tuple(sets), lab=lab), out)
    print(f"wrote {out.relative_to(REPO) if out.is_relative_to(REPO) else out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
