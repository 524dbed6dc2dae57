"""Install memsift's core into a fresh virtual environment and use it as a new user would.

    python scripts/check_core_install.py [--workdir DIR]

The promise checked: ``pip install memsift`` (no extras) indexes and searches a store, and
installs none of the docs or eval packages; the commands that need those name the extra to
install in one line. Steps: make a venv, ``pip install`` a copy of this checkout (not editable,
so only what the wheel ships is used), index and search a copy of ``examples/``, then check
that ``import mkdocs`` fails, ``memsift eval`` names the eval extra and importing the arms-doc
plugin names the docs extra. Needs pip to reach a package index; takes a minute or two.
Exit code 0 when every step passed; the first failing step is printed with its output.

The test suite runs this when ``MEMSIFT_INSTALL_TEST=1`` is set
(``tests/engine/test_packaging.py``).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Left out of the copy that is installed: local state and build output, not source.
NOT_SOURCE = (".git", ".venv", "site", "build", "*.egg-info", ".memsift", "__pycache__", ".*cache")
#: Packages only the extras bring; none may be importable after a core install.
EXTRA_ONLY = ("mkdocs", "jinja2", "material", "ir_measures")


class StepFailed(Exception):
    pass


def run(step: str, args: list[str], *, expect: int = 0) -> subprocess.CompletedProcess[str]:
    print(f"- {step}", flush=True)
    done = subprocess.run(args, capture_output=True, text=True, timeout=1800)
    if done.returncode != expect:
        raise StepFailed(
            f"{step}: exit code {done.returncode}, expected {expect}\n"
            f"$ {' '.join(args)}\n{done.stdout}{done.stderr}"
        )
    return done


def check(workdir: Path) -> None:
    source = workdir / "memsift"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*NOT_SOURCE))
    env = workdir / "venv"
    print(f"- make a fresh venv in {env}", flush=True)
    venv.create(env, with_pip=True)
    bin_dir = env / ("Scripts" if sys.platform == "win32" else "bin")
    python, memsift = str(bin_dir / "python"), str(bin_dir / "memsift")
    run("pip install the core (not editable)", [python, "-m", "pip", "install", str(source)])

    store = workdir / "store"
    shutil.copytree(ROOT / "examples", store, ignore=shutil.ignore_patterns(".memsift"))
    indexed = run("memsift index", [memsift, "--store", str(store), "index"])
    if not indexed.stdout.startswith("indexed ") or "embedded 0 " in indexed.stdout:
        raise StepFailed(f"memsift index: unexpected summary {indexed.stdout!r}")
    query = "how do we rotate the staging database credentials"
    found = run("memsift search", [memsift, "--store", str(store), "search", query, "--limit", "3"])
    if "[procedures/rotate-staging-db-credentials.md]" not in found.stdout:
        raise StepFailed(f"memsift search: the runbook is not in the top 3:\n{found.stdout}")

    for name in EXTRA_ONLY:
        run(f"import {name} fails", [python, "-c", f"import {name}"], expect=1)
    refused = run("memsift eval names the extra", [memsift, "eval", str(store)], expect=2)
    wanted = "memsift: memsift eval needs the eval extra: pip install 'memsift[eval]'\n"
    if refused.stderr != wanted:
        raise StepFailed(f"memsift eval: expected {wanted!r}, got {refused.stderr!r}")
    plugin = run("the plugin names the extra", [python, "-c", "import arms_doc.plugin"], expect=1)
    last = plugin.stderr.strip().splitlines()[-1]
    if "needs the docs extra: pip install 'memsift[docs]'" not in last:
        raise StepFailed(f"import arms_doc.plugin: unexpected error {last!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, help="Work here (kept) instead of a temp folder.")
    args = parser.parse_args()
    try:
        if args.workdir:
            args.workdir.mkdir(parents=True, exist_ok=False)
            check(args.workdir)
        else:
            with tempfile.TemporaryDirectory(prefix="memsift-core-") as folder:
                check(Path(folder))
    except StepFailed as exc:
        print(f"FAILED {exc}", file=sys.stderr)
        return 1
    print("core install: index and search work, no docs or eval package installed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
