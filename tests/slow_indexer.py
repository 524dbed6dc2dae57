"""An index run in a child process, made slow (small batches, an embedder that sleeps), so a
test's searches, reads and outcomes happen while it writes. It prints "ready" before the run
and "done N" (vectors embedded) after it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import hashlib, sys, time
    import numpy as np
    from engine.indexing import indexer
    from engine.sqlite import indexer as sqlite_indexer
    from engine.files.store import open_store

    class SlowEmbedder:
        name, dim = "test-slow", 8
        def embed(self, texts):
            time.sleep(0.01 * len(texts))
            out = np.zeros((len(texts), 8), dtype=np.float32)
            for row, text in enumerate(texts):
                digest = hashlib.sha256(text.encode()).digest()
                out[row] = np.frombuffer(digest[:32], dtype=np.uint32)[:8] % 97 + 1
            return out / np.linalg.norm(out, axis=1, keepdims=True)

    sqlite_indexer.WRITE_BATCH = 4
    sqlite_indexer.EMBED_BATCH = 4
    print("ready", flush=True)
    report = indexer.index_store(open_store(sys.argv[1]), embedder=SlowEmbedder())
    print("done", report.embedded, flush=True)
    """
)


def start(root: Path) -> subprocess.Popen[str]:
    """Start the run on ``root`` and return once it has said it is ready."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(root)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    return process


def finish(process: subprocess.Popen[str], timeout: float = 180) -> int:
    """Wait for the run to end; its exit code."""
    code = process.wait(timeout=timeout)
    assert process.stdout is not None
    process.stdout.close()
    return code
