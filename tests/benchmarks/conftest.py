"""The benchmarks are scripts that import each other by bare name (``from stamp import ...``),
as they do when run from their folder; their tests see them the same way."""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))
