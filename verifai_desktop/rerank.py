"""Evidence-aware reranking: the verifier reads the top retrieved passages against the query.

No reranker weights can be had offline, but the app ships a cross-encoder that reads
(passage, claim) pairs: the NLI verifier. For a query ``q`` and a passage, the **evidence
probability** is ``P(SUPPORT) + P(CONTRADICT)`` of the passage's deciding sentence window
(:func:`~verifai_desktop.verify.evidence.verify_evidence`: sentence windows through the one
verification path: aims left out, checks, support-first): the probability that the passage
bears on ``q`` either way. The top ``N`` fused candidates are reordered by a fusion of their
retrieval rank and that probability (:func:`fuse`); the rest keep their order after them.

N, the fusion and its weight are chosen on SciFact BEIR train queries only
(``benchmarks/rerank.py``), test reported; the defaults in
:class:`~verifai_desktop.settings.RetrievalSettings` say what was chosen. A
:class:`~verifai_desktop.verify.memo.MemoVerifier` shared with the answer's verification keeps
any pair from being classified twice in one request.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.domain import Passage
from verifai_desktop.retrieve import PassageRetriever
from verifai_desktop.settings import (
    RERANK_FUSIONS,
    RerankFusion,
    RetrievalSettings,
    VerifySettings,
)
from verifai_desktop.verify.check import Verifier
from verifai_desktop.verify.evidence import verify_evidence

log = logging.getLogger(__name__)

RRF_K = 60
"""RRF's constant (Cormack, Clarke & Buettcher, SIGIR 2009), as in hybrid retrieval."""


def evidence_probabilities(
    verifier: Verifier,
    query: str,
    passages: Sequence[Passage],
    thresholds: VerifySettings | None = None,
) -> NDArray[np.float64]:
    """``P(SUPPORT) + P(CONTRADICT)`` of each passage's deciding window for ``query``.

    Args:
        verifier: the NLI verifier (one ``classify`` call for every window of every passage).
        query: the hypothesis (a question or a claim).
        passages: the candidates.
        thresholds: the shown labels' thresholds (they pick the deciding window); defaults
            if None.

    Returns:
        float64, shape (len(passages),), each in [0, 1].
    """
    found = verify_evidence(verifier, query, passages, thresholds=thresholds)
    p = np.array([(e.verdict.p_support, e.verdict.p_contradict) for e in found], dtype=np.float64)
    return np.clip(p.sum(axis=1), 0.0, 1.0) if len(p) else np.zeros(0, dtype=np.float64)


def fuse(evidence: NDArray[np.float64], weight: float, fusion: RerankFusion) -> NDArray[np.intp]:
    """The new order of ``n`` candidates given in retrieval order.

    Args:
        evidence: float64, shape (n,): evidence probabilities, index = retrieval rank - 1.
        weight: 0..1, the evidence's share (0 keeps the retrieval order).
        fusion: ``"linear"``: ``(1 - w) * (1 - (r - 1) / n) + w * e``; ``"rrf"``:
            ``(1 - w) / (60 + r) + w / (60 + r_e)``, ``r_e`` the rank by evidence.

    Returns:
        Indices into the candidates, best first; ties keep the retrieval order.

    Raises:
        ValueError: ``weight`` outside 0..1 or an unknown ``fusion``.
    """
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"rerank weight {weight!r} is outside 0..1")
    n = len(evidence)
    rank = np.arange(1, n + 1, dtype=np.float64)
    if fusion == "linear":
        scores = (1.0 - weight) * (1.0 - (rank - 1.0) / max(n, 1)) + weight * evidence
    elif fusion == "rrf":
        by_evidence = np.empty(n, dtype=np.float64)
        by_evidence[np.argsort(-evidence, kind="stable")] = rank
        scores = (1.0 - weight) / (RRF_K + rank) + weight / (RRF_K + by_evidence)
    else:
        raise ValueError(f"unknown rerank fusion {fusion!r}; use one of {RERANK_FUSIONS}")
    return np.argsort(-scores, kind="stable")


def rerank(
    verifier: Verifier,
    query: str,
    passages: Sequence[Passage],
    *,
    candidates: int,
    weight: float,
    fusion: RerankFusion,
    thresholds: VerifySettings | None = None,
) -> tuple[Passage, ...]:
    """The first ``candidates`` passages reordered by evidence, the rest after them unchanged.

    Args:
        verifier: the NLI verifier (a :class:`~verifai_desktop.verify.memo.MemoVerifier`
            when the same pairs may be verified again in the request).
        query: the question or claim.
        passages: retrieval's order, best first.
        candidates: how many of the first passages are reranked (N >= 1).
        weight: the evidence's share of the fusion (:func:`fuse`).
        fusion: ``"linear"`` or ``"rrf"``.
        thresholds: as for :func:`evidence_probabilities`.

    Returns:
        The passages, the reranked ones with ``evidence`` set (their ``fused_score`` is the
        retrieval's, unchanged).

    Raises:
        ValueError: ``candidates`` below 1, ``weight`` outside 0..1, an unknown ``fusion``.
    """
    if candidates < 1:
        raise ValueError(f"rerank candidates {candidates!r}; rerank 1 or more passages")
    head, tail = list(passages[:candidates]), list(passages[candidates:])
    evidence = evidence_probabilities(verifier, query, head, thresholds)
    order = fuse(evidence, weight, fusion)
    scored = [
        dataclasses.replace(p, evidence=float(e)) for p, e in zip(head, evidence, strict=True)
    ]
    return (*(scored[int(i)] for i in order), *tail)


def rerank_by(
    settings: RetrievalSettings,
    verifier: Verifier,
    query: str,
    passages: Sequence[Passage],
    thresholds: VerifySettings | None = None,
) -> tuple[Passage, ...]:
    """:func:`rerank` with the settings' ``rerank_candidates``, ``rerank_weight`` and
    ``rerank_fusion``, its time logged."""
    t0 = time.perf_counter()
    out = rerank(
        verifier,
        query,
        passages,
        candidates=settings.rerank_candidates,
        weight=settings.rerank_weight,
        fusion=settings.rerank_fusion,
        thresholds=thresholds,
    )
    log.info(
        "reranked %d passages by evidence in %.0f ms",
        min(len(passages), settings.rerank_candidates),
        (time.perf_counter() - t0) * 1000,
    )
    return out


def search_reranked(
    retriever: PassageRetriever,
    verifier: Verifier,
    query: str,
    settings: RetrievalSettings,
    *,
    k: int | None = None,
    thresholds: VerifySettings | None = None,
) -> tuple[Passage, ...]:
    """Up to ``k`` passages for ``query`` (``settings.k`` if None), reference-list chunks
    included: retrieval's order, or with ``settings.rerank`` the top ``rerank_candidates``
    fetched and reranked (:func:`rerank_by`) before the first ``k`` are kept.

    Raises:
        ValueError: a rerank setting out of range (:func:`rerank`).
    """
    k = settings.k if k is None else k
    if not settings.rerank:
        return retriever.search(query, k=k)
    found = retriever.search(query, k=max(k, settings.rerank_candidates))
    return rerank_by(settings, verifier, query, found, thresholds)[:k]
