"""The evidence sentence: the passage sentence closest to a claim by embedding cosine.

Shown under each verified answer sentence so the reader sees where in the cited passage the
claim comes from (VerifAI shows the supporting abstract; we point at its closest sentence).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.domain import Passage


class SentenceEmbedder(Protocol):
    """What evidence search needs of an embedder (:mod:`verifai_desktop.index.embedder`)."""

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """L2-normalised vectors, float32, shape (len(texts), dim)."""
        ...


@dataclass(frozen=True, slots=True)
class Evidence:
    """The closest passage sentence to a claim.

    Attributes:
        text: the sentence.
        span: its half-open offsets into the passage text.
        cosine: cosine similarity between claim and sentence embeddings (-1..1).
    """

    text: str
    span: tuple[int, int]
    cosine: float


def _spans(passage: Passage) -> tuple[tuple[int, int], ...]:
    spans = tuple((s, e) for s, e in passage.sentence_spans if e > s)
    return spans or ((0, len(passage.text)),)


def find_evidence(
    pairs: Sequence[tuple[str, Passage]], embedder: SentenceEmbedder
) -> tuple[Evidence, ...]:
    """For each (claim, passage) pair, the passage sentence closest to the claim.

    All claims and all sentences of the passages involved are embedded in ONE ``embed`` call.

    Args:
        pairs: (claim text, cited passage) pairs.
        embedder: returns L2-normalised float32 vectors, so a dot product is the cosine.

    Returns:
        One :class:`Evidence` per pair, same order.
    """
    if not pairs:
        return ()
    claims = sorted({claim for claim, _ in pairs})
    passages: dict[int, Passage] = {}
    for _, passage in pairs:
        passages.setdefault(int(passage.chunk_id), passage)
    texts: list[str] = list(claims)
    rows: dict[int, tuple[int, tuple[tuple[int, int], ...]]] = {}
    for chunk_id, passage in passages.items():
        spans = _spans(passage)
        rows[chunk_id] = (len(texts), spans)
        texts.extend(passage.text[s:e] for s, e in spans)
    vectors = embedder.embed(texts)
    claim_row = {claim: i for i, claim in enumerate(claims)}
    out = []
    for claim, passage in pairs:
        first, spans = rows[int(passage.chunk_id)]
        sims = vectors[first : first + len(spans)] @ vectors[claim_row[claim]]
        best = int(np.argmax(sims))
        s, e = spans[best]
        out.append(Evidence(passage.text[s:e], (s, e), float(sims[best])))
    return tuple(out)
