"""Fusion replay used by the weight sweep; the evaluation loop with a fake retriever."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from verifai_desktop.domain import ChunkId, DocId, Location, LocationKind, Passage
from verifai_desktop.evaluate.beir import BeirDataset, BeirDocument
from verifai_desktop.evaluate.retrieval import (
    PrimedEmbedder,
    QueryCandidates,
    best_weight,
    check_fusion_agrees,
    collect_candidates,
    evaluate_modes,
    fuse_rrf,
    fuse_weighted,
    weight_sweep,
)
from verifai_desktop.settings import RetrievalSettings

# chunk 0 (doc a): BM25 10, cos 0.2 ; chunk 1 (doc b): BM25 5, cos 0.8 ; chunk 2 (doc a): cos 0.4
CANDS = {
    "q": QueryCandidates(
        chunk_ids=np.array([0, 1, 2]),
        doc_ids=("a", "b", "a"),
        lexical=np.array([10.0, 5.0, 0.0]),
        semantic=np.array([0.2, 0.8, 0.4]),
        lexical_rank=np.array([1, 2, 0]),
        semantic_rank=np.array([3, 1, 2]),
    )
}


def test_fuse_weighted_normalises_by_each_engines_top_score() -> None:
    # w=0.7: chunk0 0.7*1 + 0.3*0.25 = 0.775 ; chunk1 0.7*0.5 + 0.3*1 = 0.65 ; chunk2 0.15
    assert fuse_weighted(CANDS, 0.7)["q"] == ("a", "b")
    # w=0.3: chunk0 0.3 + 0.7*0.25 = 0.475 ; chunk1 0.15 + 0.7 = 0.85
    assert fuse_weighted(CANDS, 0.3)["q"] == ("b", "a")
    assert fuse_weighted(CANDS, 0.3, doc_depth=1)["q"] == ("b",)


def test_fuse_rrf() -> None:
    # chunk0 1/61 + 1/63 = 0.03227 ; chunk1 1/62 + 1/61 = 0.03252 ; chunk2 1/62
    assert fuse_rrf(CANDS)["q"] == ("b", "a")


def test_weight_sweep_and_best_weight() -> None:
    qrels = {"q": {"a": 1}}
    rows = weight_sweep(CANDS, qrels, (0.3, 0.7))
    assert [r.lexical_weight for r in rows] == [0.3, 0.7]
    assert rows[0].metrics.ndcg_at_10 == pytest.approx(1 / np.log2(3))
    assert rows[1].metrics.ndcg_at_10 == pytest.approx(1.0)
    assert best_weight(rows) == 0.7
    assert check_fusion_agrees({"q": ["a", "b"]}, fuse_weighted(CANDS, 0.7)) == 1.0
    assert check_fusion_agrees({"q": ["b", "a"]}, fuse_weighted(CANDS, 0.7)) == 0.0


def _p(chunk: int, doc: str, *, lex: float | None = None, sem: float | None = None) -> Passage:
    return Passage(
        chunk_id=ChunkId(chunk),
        doc_id=DocId(0),
        path=Path(f"beir:{doc}"),
        title="",
        text="",
        char_start=0,
        char_end=0,
        location=Location(LocationKind.SECTION),
        sentence_spans=(),
        raw_lexical=lex,
        raw_semantic=sem,
        fused_score=lex if lex is not None else sem or 0.0,
    )


class FakeRetriever:
    """Answers lexical and semantic searches from fixed lists; records the calls.

    Copies made by ``with_settings`` share one call log, as the real ones share the embedder.
    """

    def __init__(
        self,
        settings: RetrievalSettings | None = None,
        calls: list[tuple[str, str, int, int]] | None = None,
    ) -> None:
        self.settings = settings or RetrievalSettings()
        self.calls: list[tuple[str, str, int, int]] = [] if calls is None else calls

    def with_settings(self, settings: RetrievalSettings) -> FakeRetriever:
        return FakeRetriever(settings, self.calls)

    def search(self, query: str, *, k: int | None = None) -> tuple[Passage, ...]:
        s = self.settings
        self.calls.append((query, s.mode, s.k if k is None else k, s.candidates))
        if s.mode == "lexical":
            return (_p(0, "a", lex=10.0), _p(1, "b", lex=5.0))
        return (_p(1, "b", sem=0.8), _p(2, "a", sem=0.4), _p(0, "a", sem=0.2))


def test_collect_candidates_aligns_both_engines_on_chunks() -> None:
    fake = FakeRetriever()
    cands = collect_candidates(fake, {"q": "query"}, chunk_depth=50)  # type: ignore[arg-type]
    c = cands["q"]
    assert c.chunk_ids.tolist() == [0, 1, 2]
    assert c.doc_ids == ("a", "b", "a")
    assert c.lexical.tolist() == [10.0, 5.0, 0.0]
    assert c.semantic.tolist() == [0.2, 0.8, 0.4]
    assert c.lexical_rank.tolist() == [1, 2, 0]
    assert c.semantic_rank.tolist() == [3, 1, 2]
    assert fake.calls == [("query", "lexical", 50, 50), ("query", "semantic", 50, 50)]


def test_evaluate_modes_ranks_documents_from_real_search_calls() -> None:
    ds = BeirDataset(
        Path("x"),
        "test",
        (BeirDocument("a", "", ""), BeirDocument("b", "", "")),
        {"q": "query"},
        {"q": {"b": 1}},
    )
    fake = FakeRetriever()
    results = evaluate_modes(
        None,  # type: ignore[arg-type]
        ds,
        modes=("lexical", "semantic"),
        retriever=fake,  # type: ignore[arg-type]
        chunk_depth=7,
    )
    assert [r.mode for r in results] == ["lexical", "semantic"]
    assert results[0].run == {"q": ("a", "b")}
    assert results[1].run == {"q": ("b", "a")}
    assert results[0].metrics.ndcg_at_10 == pytest.approx(1 / np.log2(3))
    assert results[1].metrics.ndcg_at_10 == pytest.approx(1.0)
    assert results[0].lexical_weight is None and len(results[0].latency_ms) == 1
    assert [c[2:] for c in fake.calls] == [(7, 7), (7, 7)]


class CountingEmbedder:
    """Fake embedder: the vector of a text is one-hot on its length; records each call."""

    name = "fake"
    dim = 8
    max_tokens = 16

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def load(self) -> None:
        """Nothing to load."""

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, len(t) % self.dim] = 1.0
        return out

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def count_tokens_batch(self, texts: Sequence[str]) -> list[int]:
        return [self.count_tokens(t) for t in texts]


def test_primed_embedder_embeds_queries_in_one_batch_then_serves_them() -> None:
    base = CountingEmbedder()
    primed = PrimedEmbedder(base)
    primed.prime(["ab", "abc", "ab"])
    assert base.calls == [["ab", "abc"]]
    vec = primed.embed(["abc"])
    assert vec.shape == (1, 8) and vec.dtype == np.float32 and vec[0, 3] == 1.0
    assert base.calls == [["ab", "abc"]]  # served from the cache
    primed.embed(["abcd", "ab"])
    assert base.calls == [["ab", "abc"], ["abcd"]]
    assert primed.embed([]).shape == (0, 8)
    assert primed.count_tokens_batch(["a b", "c"]) == [2, 1]
