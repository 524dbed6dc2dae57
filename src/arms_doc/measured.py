"""From the benchmark results to the Measured page and to the arms page's "What each arm buys".

Plain functions of :class:`arms_doc.results.Results`: every figure is formatted here, so the
templates only lay out strings. The arm order is the registry's (then any arm the results
measured that the registry no longer has).
"""

from __future__ import annotations

import datetime as dt
import re

from arms_doc.chart import Goal, Series, latency_chart, size_label
from arms_doc.results import (
    COMMANDS,
    LATENCY_FILE,
    METRICS,
    QUALITY_FILE,
    LatencyResults,
    Metrics,
    QualityResults,
    QualitySet,
    Results,
    Stamp,
    StoreLatency,
    arm_order,
    is_stale,
)

METRIC_TITLES = {"ndcg@10": "nDCG@10", "mrr@10": "MRR@10", "recall@5": "R@5", "recall@10": "R@10"}
#: Shown for a figure the results do not have.
NOT_MEASURED = "–"
#: The evaluation command a reader runs on one set to check the figures.
EVAL_COMMAND = "memsift eval DATASET --ablation"
#: The arm whose latency is compared with the NumPy floor, and shown in the chart.
VECTOR_ARM = "vector"
#: latency.json's targets on the fused p50, e.g. "fused p50 @ 2000 files 384-d", "<= 5.0 ms".
_FUSED_TARGET = re.compile(r"^fused p50 @ (\d+) files (\d+)-d$")
_AT_MOST_MS = re.compile(r"^<=\s*([0-9.]+)\s*ms$")


# --------------------------------------------------------------------------- formatting


def score(value: float) -> str:
    return f"{value:.4f}"


def delta(value: float) -> str:
    """A signed difference of scores; exactly 0 (after rounding) carries no sign."""
    text = f"{value:+.4f}"
    return "0.0000" if text in ("+0.0000", "-0.0000") else text


def ms(value: float) -> str:
    """Milliseconds with about three significant digits."""
    if value < 1:
        return f"{value:.3f}"
    if value < 10:
        return f"{value:.2f}"
    if value < 100:
        return f"{value:.1f}"
    return f"{value:.0f}"


def ratio(value: float | None) -> str:
    return NOT_MEASURED if value is None else f"{value:.1f}×"


def mib(value: float | None) -> str:
    return NOT_MEASURED if value is None else f"{value:,.0f}"


def percent(value: float) -> str:
    return f"{value * 100:+.1f} %"


def count(value: int) -> str:
    return f"{value:,}"


def when(text: str | None) -> str:
    """An ISO 8601 time as "2026-06-01 12:34 UTC"; the text itself if it does not parse."""
    if not text:
        return "not recorded"
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return text
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC)
        return moment.strftime("%Y-%m-%d %H:%M UTC")
    return moment.strftime("%Y-%m-%d %H:%M")


def machine(stamp: Stamp) -> str:
    """One line: CPU, cores, OS and the versions on the measured path."""
    info = stamp.machine
    parts = []
    if info.get("cpu_model"):
        parts.append(str(info["cpu_model"]))
    if info.get("cpu_count"):
        cores = f"{info['cpu_count']} CPUs"
        usable = info.get("cpu_affinity")
        if usable and usable != info["cpu_count"]:
            cores += f" ({usable} usable)"
        parts.append(cores)
    if info.get("platform"):
        parts.append(str(info["platform"]))
    for key, name in (
        ("python", "Python"),
        ("sqlite", "SQLite"),
        ("sqlite_vec", "sqlite-vec"),
        ("numpy", "NumPy"),
        ("blas", "BLAS"),
        ("onnxruntime", "onnxruntime"),
    ):
        if info.get(key):
            parts.append(f"{name} {info[key]}")
    return ", ".join(parts) if parts else "not recorded"


def commit(stamp: Stamp) -> str:
    if not stamp.commit:
        return "not recorded"
    text = f"`{stamp.commit[:12]}`"
    if stamp.src_dirty:
        text += " with uncommitted changes to `src/`"
    return text


# --------------------------------------------------------------------------- arms page


def arm_gains(quality: QualityResults | None, registry_arms: list[str]) -> list[dict[str, object]]:
    """Per set: the fusion's nDCG@10, and per arm nDCG@10 without it, the difference (what
    the arm buys) and the arm alone. Empty without quality results."""
    if quality is None:
        return []
    sets = []
    for result in quality.sets:
        if not result.ablation:
            continue
        fused = result.fused["ndcg@10"]
        rows = []
        for arm in arm_order(registry_arms, result.arms()):
            without, alone = result.without(arm), result.alone(arm)
            rows.append(
                {
                    "arm": arm,
                    "without": score(without["ndcg@10"]) if without else NOT_MEASURED,
                    "buys": delta(fused - without["ndcg@10"]) if without else NOT_MEASURED,
                    "alone": score(alone["ndcg@10"]) if alone else NOT_MEASURED,
                }
            )
        sets.append(
            {
                "name": result.name,
                "queries": count(result.fused.queries),
                "fused": score(fused),
                "rows": rows,
            }
        )
    return sets


def buys_context(
    results: Results | None, registry_arms: list[str], measured_link: str | None
) -> dict[str, object]:
    """The arms page's "What each arm buys" section."""
    folder = results.folder if results else "benchmarks/results"
    file = f"{folder}/{QUALITY_FILE}"
    quality = results.quality if results else None
    return {
        "sets": arm_gains(quality, registry_arms),
        "present": quality is not None,
        "file": file,
        "command": COMMANDS[QUALITY_FILE],
        "stale": bool(results and is_stale(results, file)),
        "link": measured_link,
    }


# --------------------------------------------------------------------------- measured page


def measured_context(
    results: Results, registry: str, registry_arms: list[str]
) -> dict[str, object]:
    """The Measured page's whole context, as plain data (strings, lists, dicts)."""
    files = []
    for name in (QUALITY_FILE, LATENCY_FILE):
        shown = f"{results.folder}/{name}"
        loaded = results.quality if name == QUALITY_FILE else results.latency
        stamp = loaded.stamp if loaded else None
        files.append(
            {
                "file": shown,
                "command": COMMANDS[name],
                "present": stamp is not None,
                "made_at": when(stamp.made_at) if stamp else "",
                "commit": commit(stamp) if stamp else "",
                "machine": machine(stamp) if stamp else "",
                "registry": ("**stale**" if is_stale(results, shown) else "current")
                if stamp
                else "",
            }
        )
    machines: dict[str, list[str]] = {}
    for file in files:
        if file["present"]:
            machines.setdefault(str(file["machine"]), []).append(str(file["file"]))
    return {
        "folder": results.folder,
        "registry": registry,
        "files": files,
        "machines": [{"files": names, "machine": text} for text, names in machines.items()],
        "stale": [{"file": stale.file, "command": stale.command} for stale in results.stale],
        "commands": {
            "quality": COMMANDS[QUALITY_FILE],
            "latency": COMMANDS[LATENCY_FILE],
            "eval": EVAL_COMMAND,
        },
        "quality": quality_context(results.quality, registry_arms),
        "latency": latency_context(results.latency, registry_arms),
    }


def metric_cells(metrics: Metrics) -> list[str]:
    return [score(metrics[metric]) for metric in METRICS]


def quality_context(
    quality: QualityResults | None, registry_arms: list[str]
) -> dict[str, object] | None:
    if quality is None:
        return None
    return {
        "file": quality.stamp.file,
        "metrics": [METRIC_TITLES[metric] for metric in METRICS],
        "sets": [set_context(result, registry_arms) for result in quality.sets],
    }


def best_single(result: QualitySet, arms: list[str]) -> tuple[str, float] | None:
    """The arm that scores the best nDCG@10 alone (the first such arm on a tie)."""
    singles = [(arm, alone["ndcg@10"]) for arm in arms if (alone := result.alone(arm))]
    if not singles:
        return None
    return max(singles, key=lambda pair: pair[1])


def set_context(result: QualitySet, registry_arms: list[str]) -> dict[str, object]:
    arms = arm_order(registry_arms, result.arms())
    fused = result.fused
    ablation = []
    if result.ablation:
        variants = [("fused", "full fusion")]
        variants += [(f"only {arm}", f"{arm} alone") for arm in arms]
        variants += [(f"without {arm}", f"without {arm}") for arm in arms]
        listed = {key for key, _ in variants}
        variants += [(key, key) for key in result.ablation if key not in listed]
        for key, title in variants:
            metrics = result.ablation.get(key)
            if metrics is None:
                continue
            ablation.append(
                {
                    "title": title,
                    "cells": metric_cells(metrics),
                    "vs_fused": delta(metrics["ndcg@10"] - fused["ndcg@10"])
                    if key != "fused"
                    else "",
                }
            )
    best = best_single(result, arms)
    verdict = None
    if best is not None:
        arm, value = best
        margin = fused["ndcg@10"] - value
        verdict = {
            "holds": margin >= 0,
            "arm": arm,
            "arm_score": score(value),
            "margin": delta(margin),
        }
    references = [
        {"name": name, "score": f"{value:.3f}", "ours_minus": delta(fused["ndcg@10"] - value)}
        for name, value in result.references.items()
    ]
    return {
        "name": result.name,
        "queries": count(result.overall.queries),
        "seconds": f"{result.seconds:.0f}" if result.seconds is not None else None,
        "overall": metric_cells(result.overall),
        "fused_ndcg": score(fused["ndcg@10"]),
        "ablation": ablation,
        "verdict": verdict,
        "references": references,
        "categories": [
            {"name": name, "queries": count(metrics.queries), "cells": metric_cells(metrics)}
            for name, metrics in result.by_category.items()
        ],
    }


def primary_dim(stores: list[StoreLatency]) -> int | None:
    """The vector width measured at the most sizes (the narrower one on a tie)."""
    sizes: dict[int, int] = {}
    for store in stores:
        sizes[store.dim] = sizes.get(store.dim, 0) + 1
    if not sizes:
        return None
    return min(sizes, key=lambda dim: (-sizes[dim], dim))


def fused_goals(latency: LatencyResults, dim: int) -> list[Goal]:
    """The fused p50 targets recorded in the file for stores of width ``dim``."""
    goals = []
    for target in latency.targets:
        name, limit = _FUSED_TARGET.match(target.name), _AT_MOST_MS.match(target.target)
        if name and limit and int(name.group(2)) == dim:
            goals.append(Goal(int(name.group(1)), float(limit.group(1))))
    return goals


def chart_svg(latency: LatencyResults) -> str:
    """Fused search, the vector arm alone and the NumPy floor against store size."""
    dim = primary_dim(latency.stores)
    stores = [store for store in latency.stores if store.dim == dim]
    series = [
        Series(
            "fused",
            "fused search",
            "primary",
            [(s.files, s.timings["fused"].p50_ms) for s in stores],
        ),
        Series(
            VECTOR_ARM,
            f"{VECTOR_ARM} arm alone",
            "accent",
            [(s.files, s.timings[VECTOR_ARM].p50_ms) for s in stores if VECTOR_ARM in s.timings],
        ),
        Series("floor", "NumPy floor", "text", [(s.files, s.floor.p50_ms) for s in stores]),
    ]
    sizes = ", ".join(size_label(store.files) for store in stores)
    return latency_chart(
        series,
        fused_goals(latency, dim) if dim is not None else [],
        title=f"Search latency (p50) against store size, {dim}-d vectors",
        description=(
            f"p50 latency in milliseconds of the fused search, the {VECTOR_ARM} arm alone and "
            f"an exact NumPy top-k over the same vectors, at {sizes} files; both axes "
            "logarithmic. The tables below give every figure."
        ),
    )


def store_title(store: StoreLatency) -> str:
    return f"{store.files:,} files, {store.dim}-d"


def latency_context(
    latency: LatencyResults | None, registry_arms: list[str]
) -> dict[str, object] | None:
    if latency is None:
        return None
    measured_arms = [
        key
        for store in latency.stores
        for key in store.timings
        if not key.startswith("fused") and not key.endswith("_sql_only")
    ]
    arms = [
        arm
        for arm in arm_order(registry_arms, list(dict.fromkeys(measured_arms)))
        if arm in measured_arms
    ]
    dim = primary_dim(latency.stores)
    stores = []
    for store in latency.stores:
        fused, floor = store.timings["fused"], store.floor
        sql_only = store.timings.get("fused_sql_only")
        held = store.timings.get("fused_searcher")
        vector_sql = store.timings.get("vector_sql_only")
        stores.append(
            {
                "title": store_title(store),
                "chunks": count(store.chunks) if store.chunks is not None else NOT_MEASURED,
                "fused_p50": ms(fused.p50_ms),
                "fused_p95": ms(fused.p95_ms),
                "fused_sql_p50": ms(sql_only.p50_ms) if sql_only else NOT_MEASURED,
                "searcher_p50": ms(held.p50_ms) if held else NOT_MEASURED,
                "floor_p50": ms(floor.p50_ms),
                "fused_over_floor": ratio(store.ratios.get("fused_over_floor")),
                "vector_over_floor": ratio(store.ratios.get("vector_over_floor")),
                "recall": (
                    f"{store.recall_mean:.3f} (min {store.recall_min:.3f})"
                    if store.recall_mean is not None and store.recall_min is not None
                    else NOT_MEASURED
                ),
                "arms": [
                    ms(store.timings[arm].p50_ms) if arm in store.timings else NOT_MEASURED
                    for arm in arms
                ],
                "vector_sql_p50": ms(vector_sql.p50_ms) if vector_sql else NOT_MEASURED,
                "search_rss": mib(store.memory.get("search_peak_rss_mib")),
                "sqlite_heap": mib(store.memory.get("sqlite_heap_peak_mib")),
                "floor_rss": mib(store.memory.get("floor_peak_rss_mib")),
                "floor_matrix": mib(store.memory.get("floor_matrix_mib")),
            }
        )
    targets = [
        {
            "name": target.name,
            "target": target.target,
            # A goal in percent ("< 15%") is met by a fraction (0.12): show it as a percentage.
            "measured": percent(target.measured)
            if "%" in target.target
            else f"{target.measured:g}",
            "met": target.met,
        }
        for target in latency.targets
    ]
    lexical = latency.lexical
    embedding = latency.embedding
    return {
        "file": latency.stamp.file,
        "quick": latency.quick,
        "dim": dim,
        "other_dims": sorted({store.dim for store in latency.stores} - {dim}),
        "chart": chart_svg(latency) if latency.stores else None,
        "stores": stores,
        "arms": arms,
        "targets": targets,
        "targets_met": sum(1 for target in latency.targets if target.met),
        "lexical": {
            "files": count(lexical.files),
            "seconds": f"{lexical.seconds:.2f}",
            "files_per_s": f"{lexical.files_per_s:,.0f}",
            "unchanged_files_per_s": f"{lexical.unchanged_files_per_s:,.0f}"
            if lexical.unchanged_files_per_s is not None
            else None,
            "peak_rss": mib(lexical.peak_rss_mib) if lexical.peak_rss_mib is not None else None,
        }
        if lexical
        else None,
        "embedding": {
            "files": count(embedding.files),
            "texts": count(embedding.texts),
            "model": embedding.model,
            "raw_s": f"{embedding.raw_embed_s:.2f}",
            "raw_texts_per_s": f"{embedding.raw_texts_per_s:,.1f}"
            if embedding.raw_texts_per_s is not None
            else None,
            "index_s": f"{embedding.index_with_embed_s:.2f}",
            "overhead": percent(embedding.overhead),
            "beyond_lexical": percent(embedding.overhead_beyond_lexical)
            if embedding.overhead_beyond_lexical is not None
            else None,
            "peak_rss": mib(embedding.peak_rss_mib) if embedding.peak_rss_mib is not None else None,
        }
        if embedding
        else None,
        "load_average": ", ".join(f"{value:g}" for value in latency.load_average)
        if latency.load_average
        else None,
        "cpus": latency.stamp.machine.get("cpu_count"),
        "elapsed_s": f"{latency.elapsed_s:.0f}" if latency.elapsed_s is not None else None,
    }
