"""The default embedding model's name and width, without the model.

A store's settings (:mod:`engine.files.config`) and a ranking's fingerprint
(:mod:`engine.measure.fingerprint`) name the default model; neither runs it. Kept apart from
:mod:`engine.indexing.embedder`, which needs numpy, so reading a configuration or rendering the
docs' pages loads no numpy.
"""

from __future__ import annotations

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "DEFAULT_MODEL",
    "MINILM_DIM",
]

DEFAULT_MODEL = "all-MiniLM-L6-v2-int8"
MINILM_DIM = 384
