"""The stamp every results file starts with: which benchmark, when, where, and which ranking.

:func:`make_stamp` fills ``engine.measure.results_schema.Stamp``, the same fields in every
file. Its ``ranking`` is ``engine.measure.fingerprint.ranking`` of the imported registry: what a
ranking depends on (arms' names, weights, needs and SQL, the fusion constant, the embedder), not
the registry's prose. The docs build computes the same value from the registry file it reads
and calls the figures stale when the two differ.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import platform
import subprocess
import sys
from pathlib import Path

from engine.arms import ARMS, AUTHORITY
from engine.measure.fingerprint import ranking
from engine.measure.results_schema import FORMAT, Git, Machine, Stamp

REPO = Path(__file__).resolve().parent.parent


def make_stamp(benchmark: str) -> Stamp:
    """The stamp of a results file written now by ``benchmark`` ("quality", "latency", ...)."""
    return Stamp(
        benchmark=benchmark,
        format=FORMAT,
        made_at=now_utc(),
        ranking=ranking(ARMS, authority=AUTHORITY),
        git=git_state(),
        machine=machine_info(),
    )


def file_hash(path: Path, length: int = 12) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:length]


def git_state() -> Git:
    """The commit the source tree is at and whether it has uncommitted changes."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "src"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return Git()
    return Git(commit=commit, src_dirty=bool(dirty))


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def blas_name() -> str | None:
    import numpy as np

    try:
        config = np.show_config(mode="dicts")
        return str(config["Build Dependencies"]["blas"]["name"])
    except Exception:  # numpy's config layout is not a stable API
        return None


def machine_info() -> Machine:
    """CPU, OS and the versions of everything on the measured path."""
    import apsw
    import numpy as np

    from engine.sqlite.db import connect

    conn = connect(":memory:")
    (vec_version,) = conn.execute("SELECT vec_version()").fetchone()
    conn.close()
    try:
        import onnxruntime

        ort_version: str | None = onnxruntime.__version__
    except ImportError:
        ort_version = None
    return Machine(
        cpu_count=os.cpu_count(),
        cpu_affinity=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        cpu_model=cpu_model(),
        platform=platform.platform(),
        python=sys.version.split()[0],
        sqlite=apsw.sqlite_lib_version(),
        apsw=apsw.apsw_version(),
        sqlite_vec=vec_version,
        numpy=np.__version__,
        blas=blas_name(),
        onnxruntime=ort_version,
    )


def now_utc() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
