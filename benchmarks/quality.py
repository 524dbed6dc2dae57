"""Retrieval quality of the default fusion on every evaluation set, with the ablation.

Runs the same code path as ``memsift eval --ablation`` (corpus written as a store, indexed by
the real indexer, searched by the real search) on each set under ``../shared/data`` (or the
folders given) and writes ``benchmarks/results/quality.json``, stamped with the registry's
content hash so the docs build can tell when the figures are stale.

    python benchmarks/quality.py                       # every set beside the checkout
    python benchmarks/quality.py path/to/set ...       # chosen sets
    python benchmarks/quality.py --keep $TMPDIR/stores    # reuse indexed stores between runs

Reference figures from outside tools are recorded beside ours (``references``) so the page can
show where memsift stands; they come from ../shared/data/README.md, not from this script.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from stamp import git_state, machine_info, now_utc, registry_hash

from engine.evaluate import evaluate, find_sets

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
OUT = REPO / "benchmarks" / "results" / "quality.json"

#: nDCG@10 of outside systems on the same files, as published in the data README.
REFERENCES = {
    "madial-en": {"BM25 (bm25s)": 0.442, "all-MiniLM-L6-v2 dense": 0.542, "plain RRF": 0.568},
    "cranfield": {"BM25 (bm25s)": 0.370, "all-MiniLM-L6-v2 dense": 0.381, "plain RRF": 0.416},
}


def progress(label: str, done: int, total: int) -> None:
    print(f"\r{label}: {done}/{total or '?'}        ", end="", file=sys.stderr, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sets", nargs="*", type=Path, help="BEIR-layout sets (default: all)")
    parser.add_argument("--keep", type=Path, default=None, help="keep indexed stores here")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    folders = args.sets or (find_sets(DATA) if DATA.is_dir() else [])
    if not folders:
        print(f"no evaluation sets: {DATA} does not exist; pass set folders", file=sys.stderr)
        return 2
    results = {}
    for folder in folders:
        started = time.perf_counter()
        report = evaluate(folder, ablation=True, progress=progress, workdir=args.keep)
        print(file=sys.stderr)
        ablation = report["ablation"]
        singles = {k: v for k, v in ablation.items() if k.startswith("only ")}
        best_single = max(singles, key=lambda k: singles[k]["ndcg@10"])
        results[folder.name] = {
            "overall": report["overall"],
            "by_category": report["by_category"],
            "ablation": ablation,
            "best_single_arm": best_single,
            "fusion_beats_best_single": (
                report["overall"]["ndcg@10"] >= singles[best_single]["ndcg@10"]
            ),
            "references_ndcg@10": REFERENCES.get(folder.name, {}),
            "seconds": round(time.perf_counter() - started, 1),
        }
        print(
            f"{folder.name}: nDCG@10 {report['overall']['ndcg@10']:.4f} "
            f"(best single arm: {best_single} {singles[best_single]['ndcg@10']:.4f})"
        )
    document = {
        "kind": "quality",
        "registry_sha256": registry_hash(),
        "made_at": now_utc(),
        "git": git_state(),
        "machine": machine_info(),
        "sets": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out.relative_to(REPO) if args.out.is_relative_to(REPO) else args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
