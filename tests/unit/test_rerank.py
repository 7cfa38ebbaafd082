"""Evidence-aware reranking's control flow with a fake verifier (the real one: tests/e2e/
test_search_rerank.py): the fusion, the memo that keeps a pair from being classified twice,
the settings' checks and the session's search."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from numpy.typing import NDArray

from tests.unit.test_pipeline import _passage
from verifai_desktop.domain import Passage
from verifai_desktop.errors import SettingsError
from verifai_desktop.pipeline import AskSession
from verifai_desktop.rerank import evidence_probabilities, fuse, rerank
from verifai_desktop.settings import RetrievalSettings, Settings, check_retrieval
from verifai_desktop.verify.memo import MemoVerifier


class KeywordVerifier:
    """P(SUPPORT) 0.9 when the premise holds "evidence", else NO_EVIDENCE 0.9; counts pairs."""

    def __init__(self) -> None:
        self.pairs: list[tuple[str, str]] = []

    def load(self) -> None:
        pass

    def classify(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        self.pairs += pairs
        rows = [[0.9, 0.05, 0.05] if "evidence" in p else [0.05, 0.05, 0.9] for p, _ in pairs]
        return np.asarray(rows, dtype=np.float32).reshape(-1, 3)


PASSAGES = (  # each shares "claim" with the question: the verifier's gate lets it through
    _passage(1, "Nothing to see here on the claim.", 0.5),
    _passage(2, "Still nothing here on the claim.", 0.5),
    _passage(3, "Here is the evidence for the claim.", 0.5),
    _passage(4, "Past the reranked ones, with evidence for the claim.", 0.5),
)


def test_weight_zero_keeps_the_retrieval_order_and_one_sorts_by_evidence() -> None:
    evidence = np.array([0.1, 0.9, 0.5, 0.9])
    for fusion in ("linear", "rrf"):
        assert fuse(evidence, 0.0, fusion).tolist() == [0, 1, 2, 3]
        assert fuse(evidence, 1.0, fusion).tolist() == [1, 3, 2, 0]  # ties: retrieval order
    # linear, half and half: (1 - (r-1)/4) / 2 + e / 2 -> 0.55, 0.825, 0.5, 0.575
    assert fuse(evidence, 0.5, "linear").tolist() == [1, 3, 0, 2]


def test_a_bad_weight_or_fusion_is_refused() -> None:
    with pytest.raises(ValueError, match=r"outside 0\.\.1"):
        fuse(np.zeros(2), 1.5, "linear")
    with pytest.raises(ValueError, match="unknown rerank fusion"):
        fuse(np.zeros(2), 0.5, "max")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="1 or more"):
        rerank(KeywordVerifier(), "q", PASSAGES, candidates=0, weight=0.5, fusion="linear")


def test_only_the_first_n_are_read_reordered_and_given_their_evidence() -> None:
    verifier = KeywordVerifier()
    out = rerank(verifier, "a claim", PASSAGES, candidates=3, weight=1.0, fusion="linear")
    assert [int(p.chunk_id) for p in out] == [3, 1, 2, 4]
    assert out[0].evidence == pytest.approx(0.95)
    assert out[1].evidence == pytest.approx(0.10)
    assert out[3].evidence is None  # not read: past N
    assert {p for p, _ in verifier.pairs} == {p.text for p in PASSAGES[:3]}
    assert all(h == "a claim" for _, h in verifier.pairs)
    assert evidence_probabilities(verifier, "q", ()).shape == (0,)


def test_the_memo_classifies_each_pair_once() -> None:
    inner = KeywordVerifier()
    memo = MemoVerifier(inner)
    first = memo.classify([("evidence", "c"), ("none", "c"), ("evidence", "c")])
    again = memo.classify([("none", "c"), ("evidence", "c"), ("new", "c")])
    assert inner.pairs == [("evidence", "c"), ("none", "c"), ("new", "c")]
    assert (memo.classified, memo.reused) == (3, 3)
    assert np.array_equal(first[0], again[1]) and np.array_equal(first[1], again[0])


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("rerank_candidates", 0, "retrieval.rerank_candidates"),
        ("rerank_fusion", "max", "use linear or rrf"),
        ("rerank_weight", 1.5, "retrieval.rerank_weight"),
        ("rerank", "yes", "use true or false"),
    ],
)
def test_rerank_settings_out_of_range_are_named(key: str, value: object, message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        check_retrieval(RetrievalSettings(**{key: value}))  # type: ignore[arg-type]


class ListRetriever:
    """A retriever handing back :data:`PASSAGES` (first ``k``), recording each ``k`` asked."""

    def __init__(self) -> None:
        self.asked: list[int] = []

    def search(self, query: str, *, k: int, include_references: bool = True) -> tuple[Passage, ...]:
        self.asked.append(k)
        return PASSAGES[:k]


def test_the_session_searches_deeper_when_reranking_and_returns_k() -> None:
    retriever = ListRetriever()
    verifier = KeywordVerifier()
    settings = Settings(retrieval=RetrievalSettings(rerank=True, rerank_candidates=4, k=2))
    session = AskSession(
        settings,
        verifier=verifier,
        retriever_factory=lambda _c, _s: retriever,  # type: ignore[arg-type,return-value]
    )
    found = session.search(object(), "a claim")  # type: ignore[arg-type]
    assert retriever.asked == [4]
    assert [int(p.chunk_id) for p in found] == [3, 4]  # both evidence passages first
    off = AskSession(
        Settings(retrieval=RetrievalSettings(k=2)),
        verifier=verifier,
        retriever_factory=lambda _c, _s: retriever,  # type: ignore[arg-type,return-value]
    )
    assert [int(p.chunk_id) for p in off.search(object(), "a claim")] == [1, 2]  # type: ignore[arg-type]
    assert off.search(object(), "q")[0].evidence is None  # type: ignore[arg-type]
