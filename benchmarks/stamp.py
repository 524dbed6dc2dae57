"""Provenance for benchmark results: the registry's content hash and the machine they ran on.

Every results file under ``benchmarks/results/`` carries :func:`registry_hash`, the sha256 of
the bytes of ``src/engine/arms.py``: a reader (the docs build) recomputes it and can tell that
the figures were made with a registry that has since changed.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import platform
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REGISTRY = REPO / "src" / "engine" / "arms.py"


def registry_hash(path: Path = REGISTRY) -> str:
    """sha256 (hex) of the arm registry's bytes, exactly as stored on disk."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def file_hash(path: Path, length: int = 12) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:length]


def git_state() -> dict[str, object]:
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
        return {"commit": None, "src_dirty": None}
    return {"commit": commit, "src_dirty": bool(dirty)}


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


def machine_info() -> dict[str, object]:
    """CPU, OS and the versions of everything on the measured path."""
    import apsw
    import numpy as np

    from engine.db import connect

    conn = connect(":memory:")
    (vec_version,) = conn.execute("SELECT vec_version()").fetchone()
    conn.close()
    try:
        import onnxruntime

        ort_version: str | None = onnxruntime.__version__
    except ImportError:
        ort_version = None
    return {
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu_model": cpu_model(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "sqlite": apsw.sqlite_lib_version(),
        "apsw": apsw.apsw_version(),
        "sqlite_vec": vec_version,
        "numpy": np.__version__,
        "blas": blas_name(),
        "onnxruntime": ort_version,
    }


def now_utc() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
