"""Embedder names, the per-process cache and the sentence-transformers wrapper's own logic.

The wrapper is given a stub model (``_model`` set), so nothing here loads torch: loading the
real model is covered by tests/e2e.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from verifai_desktop.errors import ModelLoadError
from verifai_desktop.index import embedder as embedder_mod
from verifai_desktop.index.embedder import (
    DEFAULT_EMBEDDER,
    SentenceTransformerEmbedder,
    canonical_name,
    get_embedder,
)


class StubTokenizer:
    def __call__(self, texts: list[str], **kwargs: Any) -> dict[str, list[list[int]]]:
        assert kwargs == {"add_special_tokens": False, "truncation": False, "verbose": False}
        return {"input_ids": [list(range(len(t.split()))) for t in texts]}


class StubModel:
    """What the wrapper reads of a SentenceTransformer (old API: no get_embedding_dimension)."""

    max_seq_length = 256
    tokenizer = StubTokenizer()

    def __init__(self, dim: int | None = 6) -> None:
        self.dim = dim
        self.encoded: list[tuple[list[str], dict[str, Any]]] = []

    def get_sentence_embedding_dimension(self) -> int | None:
        return self.dim

    def encode(self, texts: Sequence[str], **kwargs: Any) -> NDArray[np.float64]:
        self.encoded.append((list(texts), kwargs))
        out = np.zeros((len(texts), self.dim or 1))
        out[:, 0] = 1.0
        return out


def _wrapped(model: StubModel) -> SentenceTransformerEmbedder:
    emb = SentenceTransformerEmbedder("stub-model")
    emb._model = model  # type: ignore[assignment]
    return emb


def test_bundled_aliases_collapse_to_one_name() -> None:
    assert canonical_name("all-MiniLM-L6-v2") == DEFAULT_EMBEDDER == "all-MiniLM-L6-v2"
    assert canonical_name("sentence-transformers/all-MiniLM-L6-v2") == "all-MiniLM-L6-v2"
    assert canonical_name("/models/my-embedder") == "/models/my-embedder"
    assert canonical_name("sentence-transformers/msmarco-distilbert-base-tas-b") == (
        "sentence-transformers/msmarco-distilbert-base-tas-b"
    )


def test_get_embedder_is_cached_per_canonical_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedder_mod, "_CACHE", {})
    bundled = get_embedder()
    assert isinstance(bundled, SentenceTransformerEmbedder)
    assert bundled.name == "all-MiniLM-L6-v2"
    assert get_embedder("sentence-transformers/all-MiniLM-L6-v2") is bundled
    other = get_embedder("/models/x")
    assert other is not bundled and other is get_embedder("/models/x")
    assert sorted(embedder_mod._CACHE) == ["/models/x", "all-MiniLM-L6-v2"]


def test_creating_an_embedder_loads_no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedder_mod, "_CACHE", {})
    emb = get_embedder("sentence-transformers/all-MiniLM-L6-v2")
    assert isinstance(emb, SentenceTransformerEmbedder)
    assert emb._model is None and emb._query_encoder is None and not emb._query_encoder_tried


def test_dim_max_tokens_and_token_counts_come_from_the_model() -> None:
    emb = _wrapped(StubModel(dim=6))
    assert (emb.dim, emb.max_tokens) == (6, 256)
    assert emb.count_tokens_batch(["one two three", "four", ""]) == [3, 1, 0]
    assert emb.count_tokens("a b") == 2
    assert emb.count_tokens_batch([]) == []


def test_a_model_without_a_dimension_is_a_load_error() -> None:
    with pytest.raises(ModelLoadError, match="does not report its embedding dimension"):
        _ = _wrapped(StubModel(dim=None)).dim


def test_large_batches_are_encoded_normalised_in_batches_of_64() -> None:
    model = StubModel(dim=4)
    emb = _wrapped(model)
    texts = [f"text {i}" for i in range(9)]  # over SMALL_BATCH: no single-thread switch
    vectors = emb.embed(texts)
    assert vectors.shape == (9, 4) and vectors.dtype == np.float32
    assert vectors.flags["C_CONTIGUOUS"]
    assert model.encoded == [
        (
            texts,
            {
                "batch_size": 64,
                "normalize_embeddings": True,
                "convert_to_numpy": True,
                "show_progress_bar": False,
            },
        )
    ]
    empty = emb.embed([])
    assert empty.shape == (0, 4) and empty.dtype == np.float32
