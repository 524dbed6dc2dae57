"""Retrieval quality of the default fusion on every evaluation set, with the ablation.

Runs the same code path as ``memsift eval --ablation`` (corpus written as a store, indexed by
the real indexer, searched by the real search) on each set under ``../shared/data`` (or the
folders given) and writes ``benchmarks/results/quality.json`` in the layout of
``engine.results_schema.QualityResults``, stamped with the ranking it measured so the docs
build can tell when the figures are stale.

    python benchmarks/quality.py                       # every set beside the checkout
    python benchmarks/quality.py path/to/set ...       # chosen sets
    python benchmarks/quality.py --held-out path/to/set    # also a set kept out of tuning
    python benchmarks/quality.py --keep $TMPDIR/stores    # reuse indexed stores between runs

The ablation covers every arm of the registry (each alone, and the fusion without it), so a
new arm is measured with no change here. When ``benchmarks/results/tuning.json`` exists (the
fusion lab's record of how the weights were chosen, the levers tried and the abstention
calibration), it is merged in as ``lab``. Reference figures from outside tools are recorded
beside ours so the page can show where memsift stands; they come from ../shared/data/README.md,
not from this script.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from stamp import make_stamp

from engine.arms import ARMS
from engine.evaluate import evaluate, find_sets
from engine.results_schema import (
    LAB,
    ArmAblation,
    LabResults,
    Metrics,
    QualityResults,
    QualitySet,
    ResultsError,
    read_results,
    write_results,
)
from engine.typed_json import load

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
RESULTS = REPO / "benchmarks" / "results"
OUT = RESULTS / "quality.json"

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
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    folders = args.sets or default_sets()
    if not folders:
        print(f"no evaluation sets: {DATA} does not exist; pass set folders", file=sys.stderr)
        return 2
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
    write_results(QualityResults(stamp=stamp, sets=tuple(sets), lab=lab), args.out)
    print(f"wrote {args.out.relative_to(REPO) if args.out.is_relative_to(REPO) else args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
