"""Convert results files of the first layout (format 1) to ``engine.results_schema``'s, once.

The first layout stamped each file with ``registry_sha256``, the sha256 of the registry's bytes,
and the benchmarks used different keys for the same stamp (``kind``/``made_at`` against
``benchmark``/``timestamp``). This script moves every figure unchanged into the typed layout
and stamps the file with the ranking it was really measured with: it finds the registry whose
bytes have that sha256 in git (at the recorded commit, else anywhere in the registry's history),
reads it statically and takes the fusion constant and embedder of the same commit. Figures
measured with a ranking that has changed since stay stale, as they should.

    python benchmarks/convert_results.py                      # quality, latency and mcp.json
    python benchmarks/convert_results.py path/to/quality.json ...
    python benchmarks/convert_results.py --restamp ...        # stamp with today's ranking

``--restamp`` is for checking a docs build only: it stamps the figures with the current
ranking even though they were measured with another, and says so in the stamp's ``note``,
which the Measured page shows. Do not commit a restamped file; rerun the benchmark.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from engine.arms import ARMS
from engine.fingerprint import Ranking, ranking
from engine.results_schema import (
    FORMAT,
    LATENCY,
    MCP,
    QUALITY,
    LatencyResults,
    McpResults,
    QualityResults,
    ResultsError,
    ResultsFile,
    read_results,
    write_results,
)
from engine.typed_json import ShapeError, dump, load

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
REGISTRY = "src/engine/arms.py"


class ConvertError(Exception):
    """A file this script cannot convert; the message says which and why."""


def git(*args: str) -> str | None:
    done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False)
    return done.stdout if done.returncode == 0 else None


def registry_commit(sha256: str, commit: str | None) -> str:
    """A commit whose registry has exactly the bytes ``sha256`` names."""
    candidates = [commit] if commit else []
    candidates += (git("log", "--format=%H", "--", REGISTRY) or "").split()
    for candidate in candidates:
        text = git("show", f"{candidate}:{REGISTRY}")
        if text is not None and hashlib.sha256(text.encode("utf-8")).hexdigest() == sha256:
            return candidate
    raise ConvertError(f"no commit in this repository has a {REGISTRY} with sha256 {sha256[:12]}…")


def constant(commit: str, path: str, name: str) -> object:
    """The literal assigned to module-level ``name`` in ``path`` at ``commit``."""
    text = git("show", f"{commit}:{path}")
    if text is not None:
        for node in ast.parse(text).body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets
            ):
                return ast.literal_eval(node.value)
    raise ConvertError(f"{path} at {commit[:12]} assigns no literal {name}")


def registry_arms(text: str) -> list[SimpleNamespace]:
    """The ``Arm(...)`` entries of a registry's source, each field's literal as written; read
    with ``ast`` rather than today's registry reader, so a registry of any earlier shape
    (needs as flags, say) still reads."""
    for node in ast.parse(text).body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign):
            target = node.targets[0]
        if isinstance(target, ast.Name) and target.id == "ARMS":
            assert isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None
            return [
                with_needs({k.arg: ast.literal_eval(k.value) for k in call.keywords})
                for call in node.value.elts  # type: ignore[attr-defined]
            ]
    raise ConvertError(f"{REGISTRY}: no assignment to ARMS")


def with_needs(fields: dict[str, object]) -> SimpleNamespace:
    """An entry with ``needs`` as input names, also for a registry that declared them as the
    flags needs_query_terms, needs_query_vector and needs_state_plane."""
    flags = {key: fields.pop(key) for key in list(fields) if key.startswith("needs_")}
    if flags:
        fields["needs"] = tuple(key.removeprefix("needs_") for key, on in flags.items() if on)
    return SimpleNamespace(**fields)


def ranking_at(sha256: str, commit: str | None) -> Ranking:
    """The ranking of the registry with these bytes, read statically from git."""
    found = registry_commit(sha256, commit)
    return ranking(
        registry_arms(git("show", f"{found}:{REGISTRY}") or ""),
        rrf_k=int(constant(found, "src/engine/assemble.py", "RRF_K")),  # type: ignore[arg-type]
        embedder_model=str(constant(found, "src/engine/embedder.py", "DEFAULT_MODEL")),
        embedder_dim=int(constant(found, "src/engine/embedder.py", "MINILM_DIM")),  # type: ignore[arg-type]
    )


def stamp(document: dict, benchmark: str, made_at_key: str, restamp: bool) -> dict:
    sha, commit = document["registry_sha256"], (document.get("git") or {}).get("commit")
    if restamp:
        measured = ranking(ARMS)
        note = (
            f"restamped by benchmarks/convert_results.py --restamp: the figures were measured "
            f"with the registry of sha256 {sha[:12]}…, not with this ranking; rerun the benchmark"
        )
    else:
        measured, note = ranking_at(sha, commit), None
    return {
        "benchmark": benchmark,
        "format": FORMAT,
        "made_at": document[made_at_key],
        "ranking": dump(measured),
        "git": document.get("git") or {},
        "machine": document.get("machine") or {},
        "note": note,
    }


def convert_quality(document: dict, restamp: bool) -> QualityResults:
    sets = []
    for name, figures in document["sets"].items():
        ablation = figures.get("ablation", {})
        arms = [key.removeprefix("only ") for key in ablation if key.startswith("only ")]
        sets.append(
            {
                "name": name,
                "fused": figures["overall"],
                "ablation": [
                    {
                        "arm": arm,
                        "alone": ablation[f"only {arm}"],
                        "without": ablation[f"without {arm}"],
                    }
                    for arm in arms
                ],
                "by_category": figures.get("by_category", {}),
                "references": figures.get("references_ndcg@10", {}),
                "seconds": figures.get("seconds"),
            }
        )
    value = {"stamp": stamp(document, "quality", "made_at", restamp), "sets": sets}
    return load(QualityResults, value)


def convert_latency(document: dict, restamp: bool) -> LatencyResults:
    first_layout = {"benchmark", "format", "timestamp", "registry_sha256", "registry_path"}
    body = {
        key: value
        for key, value in document.items()
        if key not in first_layout | {"git", "machine"}
    }
    value = {"stamp": stamp(document, "latency", "timestamp", restamp), **body}
    return load(LatencyResults, value)


def convert_mcp(document: dict, restamp: bool) -> McpResults:
    """The first mcp.json listed its targets once for the run, named "... @ N files"; the typed
    layout keeps each store's targets with the store, under the name without the suffix."""
    first_layout = {"benchmark", "format", "timestamp", "registry_sha256", "registry_path"}
    body = {
        key: value
        for key, value in document.items()
        if key not in first_layout | {"git", "machine", "targets"}
    }
    stores = []
    for store in document["stores"]:
        suffix = f" @ {store['files']} files"
        mine = [t for t in document.get("targets", []) if t["name"].endswith(suffix)]
        stores.append(
            {**store, "targets": [{**t, "name": t["name"].removesuffix(suffix)} for t in mine]}
        )
    value = {"stamp": stamp(document, "mcp", "timestamp", restamp), **body, "stores": stores}
    return load(McpResults, value)


def kind_of(document: dict) -> ResultsFile[object]:
    benchmark = (document.get("stamp") or document).get("benchmark")
    if benchmark == "mcp":
        return MCP
    return QUALITY if "sets" in document else LATENCY


def convert(path: Path, restamp: bool) -> str:
    document = json.loads(path.read_text(encoding="utf-8"))
    kind = kind_of(document)
    if "stamp" in document:
        read_results(kind, path, str(path))  # refuses a file that does not fit
        return f"{path}: already format {FORMAT}, left as it is"
    if "registry_sha256" not in document:
        raise ConvertError(f"{path}: neither format 1 (registry_sha256) nor {FORMAT} (stamp)")
    converters = {QUALITY: convert_quality, LATENCY: convert_latency, MCP: convert_mcp}
    converter = converters[kind]
    write_results(converter(document, restamp), path)
    read_results(kind, path, str(path))  # the converted file reads back
    return f"{path}: converted to format {FORMAT}" + (" (restamped)" if restamp else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--restamp", action="store_true", help="stamp with today's ranking")
    args = parser.parse_args()
    files = args.files or [RESULTS / kind.name for kind in (QUALITY, LATENCY, MCP)]
    status = 0
    for path in files:
        try:
            print(convert(path, args.restamp))
        except (ConvertError, ResultsError, ShapeError, OSError, KeyError) as exc:
            print(f"error: {path}: {exc}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
