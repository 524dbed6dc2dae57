"""What the arms-doc plugin adds to a site's build: the same site built with the plugin,
without it, and with its pages as plain files, in rounds, each build a fresh process; and
where the plugin's own time goes.

    python benchmarks/docs_build.py [--rounds 9] [--sites project,small]
                                    [--out benchmarks/results/docs_build.json]

Two sites: this project's own (``mkdocs.yml``: the Material theme, search, the generated CLI
reference, about fifteen pages), and the smallest a new user has (``mkdocs new``'s one page, the
default theme, search, the plugin reading this project's registry and results). Each is built
four ways: with the plugin; without it (the same config, the plugin and its two pages left
out); with the two pages it generated written as files into a copy of the docs folder and
the plugin left out (what a site that commits ``memsift docs write``'s pages builds); and with
the plugin remembering nothing from earlier builds (a temporary directory of its own, empty:
no remembered pages or verdicts). Every round builds all four, in an
order rotated each round, after one untimed build of each (which leaves the bytecode, and
the plugin's cache in the run's own temporary directory); a build is a new Python process
(``build_site.py``), so the imports are in it, as they are in ``mkdocs build``. The figures
are the medians over the rounds of with ÷ without, with ÷ files and cold ÷ without,
wall-clock and CPU (the process's and its children's): the first is what the plugin and its
pages cost, the second what the plugin costs beyond its pages' own weight, the third what a
first build costs. Then three
processes time each of the plugin's steps on the project's site (``build_site.py --phases``).
The file is ``engine.measure.results_schema.DocsBuildResults``; the Measured page shows it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, replace
from pathlib import Path

from stamp import make_stamp
from timing import busy_warning, load_average, log

from engine.measure.results_schema import (
    DOCS_BUILD,
    BuildComparison,
    BuildRuns,
    DocsBuildResults,
    DocsBuildSettings,
    LoadWindow,
    ModuleImport,
    PhaseTime,
    PluginPhases,
    SiteBuilds,
    Target,
    write_results,
)

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
BUILD_SITE = HERE / "build_site.py"
DEFAULT_OUT = HERE / "results" / DOCS_BUILD.name
#: Issue 23: a build with the plugin costs at most this many times one without (this
#: project's site, median of the rounds).
TARGET_RATIO = 1.15
#: The ways a site is built, in the order of a round's first build: "cold" is with the plugin
#: and nothing it remembers across builds (its cache folder, Jinja's, in a new empty temporary
#: directory for that build: what a fresh checkout's first build, or CI, pays).
WAYS = ("with", "without", "files", "cold")
#: The plugin's generated pages, as both sites place them (its defaults).
GENERATED = ("reference/rrf-arms.md", "reference/measured.md")


@dataclass(frozen=True)
class Site:
    name: str
    description: str
    config: Path
    docs: Path


def project_site() -> Site:
    return Site(
        "project",
        "this project's own site: the Material theme, search, the generated CLI reference "
        "(mkdocs-click), a hook",
        REPO / "mkdocs.yml",
        REPO / "docs",
    )


def small_site(folder: Path) -> Site:
    """The site ``mkdocs new`` makes, with the plugin reading this project's registry and
    results (the plugin's two pages in its nav)."""
    (folder / "docs").mkdir(parents=True)
    (folder / "docs" / "index.md").write_text(
        "# Welcome\n\nA site made by `mkdocs new`, with the arms-doc plugin.\n", encoding="utf-8"
    )
    registry, results = REPO / "src" / "engine" / "arms.py", REPO / "benchmarks" / "results"
    (folder / "mkdocs.yml").write_text(
        textwrap.dedent(
            f"""\
            site_name: A small site
            plugins:
              - search
              - arms-doc:
                  registry: {json.dumps(str(registry))}
                  results: {json.dumps(str(results))}
            nav:
              - Home: index.md
              - Ranking arms: {GENERATED[0]}
              - Measured: {GENERATED[1]}
            """
        ),
        encoding="utf-8",
    )
    return Site(
        "small",
        "the one-page site `mkdocs new` makes: the default theme, search",
        folder / "mkdocs.yml",
        folder / "docs",
    )


# --------------------------------------------------------------------------- builds


def build_command(site: Site, site_dir: Path, way: str, docs_with_pages: Path) -> list[str]:
    command = [sys.executable, str(BUILD_SITE), str(site.config), str(site_dir)]
    if way == "without":
        command.append("--without-plugin")
        for page in GENERATED:
            command += ["--drop-page", page]
    elif way == "files":
        command += ["--without-plugin", "--docs-dir", str(docs_with_pages)]
    return command


def environment(src: Path | None, temp: Path | None = None) -> dict[str, str]:
    """The builds' environment: MkDocs' notice about its 2.0 off; bytecode written (a shell
    with PYTHONDONTWRITEBYTECODE set would have every build compile the project's modules from
    source, which no ``mkdocs build`` after the first does); with ``src``, that folder's
    packages (another commit's plugin and engine) ahead of the installed ones; with ``temp``,
    that folder as the temporary directory (where the plugin's caches live)."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if temp is not None:
        env["TMPDIR"] = str(temp)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH")]))
    return env


def run(
    command: list[str], src: Path | None, what: str, temp: Path | None = None
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command, capture_output=True, text=True, env=environment(src, temp), check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{what} failed:\n{done.stderr}")
    return done


def pages_as_files(site: Site, folder: Path, src: Path | None) -> Path:
    """A copy of the site's docs folder holding the plugin's two pages as Markdown files,
    exactly as a build with the plugin generates them."""
    docs = folder / "docs"
    shutil.copytree(site.docs, docs)
    command = [sys.executable, str(BUILD_SITE), str(site.config), str(folder / "site")]
    command += ["--write-pages", str(docs)]
    for page in GENERATED:
        command += ["--drop-page", page]
    run(command, src, f"writing the {site.name} site's generated pages")
    return docs


def timed_build(
    site: Site, site_dir: Path, way: str, docs: Path, src: Path | None, warm: Path
) -> tuple[float, float]:
    """Wall and CPU seconds of one build in a new process (its children, git, included), with
    ``warm`` as its temporary directory (where the plugin remembers what it may across builds,
    kept for the whole run); a cold one in a temporary directory of its own, empty, removed
    afterwards."""
    with tempfile.TemporaryDirectory(prefix="memsift-docs-cold-") as empty:
        temp = Path(empty) if way == "cold" else warm
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        command = build_command(site, site_dir, way, docs)
        run(command, src, f"the {site.name} site's build ({way})", temp)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def runs(wall: list[float], cpu: list[float]) -> BuildRuns:
    return BuildRuns(
        wall_s=tuple(round(x, 4) for x in wall),
        cpu_s=tuple(round(x, 4) for x in cpu),
        wall_median_s=round(statistics.median(wall), 4),
        cpu_median_s=round(statistics.median(cpu), 4),
    )


def compare(plugin: BuildRuns, other: BuildRuns) -> BuildComparison:
    """Round by round, the builds with the plugin against ``other``."""
    wall = [a / b for a, b in zip(plugin.wall_s, other.wall_s, strict=True)]
    cpu = [a / b for a, b in zip(plugin.cpu_s, other.cpu_s, strict=True)]
    return BuildComparison(
        wall_ratios=tuple(round(r, 4) for r in wall),
        cpu_ratios=tuple(round(r, 4) for r in cpu),
        wall_ratio=round(statistics.median(wall), 4),
        cpu_ratio=round(statistics.median(cpu), 4),
        wall_extra_s=round(
            statistics.median(a - b for a, b in zip(plugin.wall_s, other.wall_s, strict=True)), 4
        ),
        cpu_extra_s=round(
            statistics.median(a - b for a, b in zip(plugin.cpu_s, other.cpu_s, strict=True)), 4
        ),
    )


def measure_site(site: Site, scratch: Path, rounds: int, src: Path | None) -> SiteBuilds:
    """``rounds`` rounds of one build each way, the order rotated every round."""
    site_dir = scratch / f"{site.name}-site"
    docs = pages_as_files(site, scratch / f"{site.name}-files", src)
    # The run's own temporary directory: no other process's build evicts what the plugin keeps.
    warm = scratch / f"{site.name}-tmp"
    warm.mkdir()
    times: dict[str, tuple[list[float], list[float]]] = {way: ([], []) for way in WAYS}
    # Untimed: bytecode written, files in the page cache, the template compiled and the pages
    # remembered (in ``warm``; never for "cold").
    for way in WAYS:
        timed_build(site, site_dir, way, docs, src, warm)
    before = load_average()
    for turn in range(rounds):
        order = WAYS[turn % len(WAYS) :] + WAYS[: turn % len(WAYS)]
        for way in order:
            wall, cpu = timed_build(site, site_dir, way, docs, src, warm)
            times[way][0].append(wall)
            times[way][1].append(cpu)
        log(
            f"  {site.name} round {turn + 1}/{rounds}: "
            + ", ".join(f"{way} {times[way][0][-1]:.2f} s" for way in WAYS)
        )
    after = load_average()
    built = {way: runs(*times[way]) for way in WAYS}
    return SiteBuilds(
        name=site.name,
        description=site.description,
        pages=sum(1 for _ in site.docs.rglob("*.md")),
        with_plugin=built["with"],
        without_plugin=built["without"],
        pages_as_files=built["files"],
        versus_without=compare(built["with"], built["without"]),
        versus_files=compare(built["with"], built["files"]),
        with_plugin_cold=built["cold"],
        cold_versus_without=compare(built["cold"], built["without"]),
        load_average=LoadWindow(before=tuple(before), after=tuple(after)),
    )


# --------------------------------------------------------------------------- phases


def phase_run(site: Site, site_dir: Path) -> dict[str, dict[str, float]]:
    """One process's timings, with nothing remembered from earlier builds (an empty temporary
    directory of its own): its first build does every step; its second reuses the pages the
    first left in the process, as a rebuild of ``mkdocs serve`` does."""
    command = [sys.executable, str(BUILD_SITE), str(site.config), str(site_dir), "--phases"]
    for page in GENERATED:
        command += ["--drop-page", page]
    with tempfile.TemporaryDirectory(prefix="memsift-docs-phases-") as empty:
        done = run(command, None, f"the {site.name} site's timed builds", Path(empty))
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def median_ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 2)


def measure_phases(site: Site, scratch: Path, repeats: int) -> PluginPhases:
    """The median of ``repeats`` processes' timings of each import and step."""
    found = [phase_run(site, scratch / f"{site.name}-phases") for _ in range(repeats)]
    imports = tuple(
        ModuleImport(name, median_ms([run["imports"][name] for run in found]))
        for name in found[0]["imports"]
    )

    def phase(name: str) -> PhaseTime:
        return PhaseTime(
            name,
            first_ms=median_ms([run["first"].get(name, 0.0) for run in found]),
            warm_ms=median_ms([run["warm"].get(name, 0.0) for run in found]),
        )

    names = [name for name in found[0]["first"] if name not in ("build", "on_files")]
    return PluginPhases(
        imports=imports,
        steps=tuple(phase(name) for name in names),
        on_files=phase("on_files"),
        build=phase("build"),
    )


def targets(sites: tuple[SiteBuilds, ...]) -> tuple[Target, ...]:
    """Issue 23's target on this project's site, wall-clock and CPU: against a build without
    the plugin, and against the build of its pages as files (the plugin's own work)."""
    project = next((site for site in sites if site.name == "project"), None)
    if project is None:
        return ()
    goal = f"<= {TARGET_RATIO}"
    found = []
    cold = project.cold_versus_without
    for label, against, comparison in (
        ("with the plugin", "without the plugin", project.versus_without),
        ("with the plugin", "with its pages as files", project.versus_files),
        *(
            [("with the plugin, nothing remembered", "without the plugin", cold)]
            if cold is not None
            else []
        ),
    ):
        for clock, ratio in (("wall", comparison.wall_ratio), ("CPU", comparison.cpu_ratio)):
            name = f"project site: {label} ÷ {against}, {clock}"
            found.append(Target(name, goal, ratio, ratio <= TARGET_RATIO))
    return tuple(found)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9, help="rounds of builds per site")
    parser.add_argument("--sites", default="project,small", help="project, small or both")
    parser.add_argument("--phase-runs", type=int, default=3, help="processes timing the steps")
    parser.add_argument(
        "--src",
        type=Path,
        help="build with another checkout's src/ (its plugin and engine) ahead of the installed "
        "ones, e.g. a commit before a change; needs --out and --phase-runs 0",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results JSON")
    args = parser.parse_args(argv)
    if args.src is not None and (args.out == DEFAULT_OUT or args.phase_runs):
        parser.error(
            "--src needs --out and --phase-runs 0: results/docs_build.json holds this "
            "checkout's figures, and the steps are timed in this checkout's plugin"
        )
    names = [name.strip() for name in args.sites.split(",") if name.strip()]
    started = time.perf_counter()
    busy = load_average()
    if warning := busy_warning(busy):
        log(warning)
    stamp = make_stamp("docs_build")
    with tempfile.TemporaryDirectory(prefix="memsift-docs-build-") as folder:
        scratch = Path(folder)
        known = {"project": project_site(), "small": small_site(scratch / "small")}
        unknown = [name for name in names if name not in known]
        if unknown:
            parser.error(f"no site named {', '.join(unknown)}; the sites are project and small")
        sites = []
        for name in names:
            log(f"{name}: {args.rounds} rounds of builds")
            builds = measure_site(known[name], scratch, args.rounds, args.src)
            if name == "project" and args.phase_runs:
                log(f"{name}: the plugin's steps, {args.phase_runs} processes")
                phases = measure_phases(known[name], scratch, args.phase_runs)
                builds = replace(builds, phases=phases)
            sites.append(builds)
    results = DocsBuildResults(
        stamp=stamp,
        settings=DocsBuildSettings(
            rounds=args.rounds,
            builder="a new Python process per build (benchmarks/build_site.py: MkDocs' "
            "load_config and build, not strict)",
            phase_runs=args.phase_runs,
        ),
        sites=tuple(sites),
        targets=targets(tuple(sites)),
        load_average_at_start=tuple(busy),
        load_average_at_end=tuple(load_average()),
        elapsed_s=round(time.perf_counter() - started, 1),
    )
    write_results(results, args.out)
    for site in results.sites:
        log(
            f"  {site.name}: with {site.with_plugin.wall_median_s:.2f} s, without "
            f"{site.without_plugin.wall_median_s:.2f} s, pages as files "
            f"{site.pages_as_files.wall_median_s:.2f} s; with ÷ without "
            f"{site.versus_without.wall_ratio:.3f} (CPU {site.versus_without.cpu_ratio:.3f}), "
            f"with ÷ files {site.versus_files.wall_ratio:.3f} "
            f"(CPU {site.versus_files.cpu_ratio:.3f})"
        )
    for check in results.targets:
        met = "MET " if check.met else "MISS"
        log(f"  {met}  {check.name}: {check.measured:g} ({check.target})")
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
