"""The bundled embedder: token counting for the chunker, and ONNX query embedding == PyTorch."""

from __future__ import annotations

import numpy as np

from verifai_desktop.index.embedder import SentenceTransformerEmbedder
from verifai_desktop.index.onnx_query import OnnxQueryEncoder
from verifai_desktop.settings import models_dir

QUERIES = (
    "0-dimensional biomaterials show inductive properties.",
    "COVID-19: (why?) transmission in hospitals",
    "A" * 3000,  # longer than 256 word pieces: both paths truncate the same way
)


def test_bundled_embedder_onnx_queries_match_pytorch() -> None:
    embedder = SentenceTransformerEmbedder("all-MiniLM-L6-v2")  # fresh: no process cache
    assert (embedder.dim, embedder.max_tokens) == (384, 256)
    assert embedder.count_tokens("") == 0
    assert embedder.count_tokens_batch(["hello world", "hello " * 300]) == [2, 300]
    embedder.prepare_query()
    assert isinstance(embedder._query_encoder, OnnxQueryEncoder)
    assert (models_dir() / "embedders" / "all-MiniLM-L6-v2" / "query.onnx").is_file()
    torch_vectors = embedder.embed(list(QUERIES))
    assert torch_vectors.shape == (3, 384) and torch_vectors.dtype == np.float32
    for query, reference in zip(QUERIES, torch_vectors, strict=True):
        vector = embedder.embed_query(query)
        assert vector.shape == (384,) and vector.dtype == np.float32
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
        assert float(np.dot(vector, reference)) > 0.9999
