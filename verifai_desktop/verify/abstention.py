"""Abstention by retrieval and by evidence: when the ask session answers "not found".

Two rules, after Claim-Aware Scientific RAG (abstain when retrieval finds nothing close enough)
and VerifAI (an answer none of whose sentences is supported by its citations is not shown as
an answer).
"""

from __future__ import annotations

from collections.abc import Sequence

from verifai_desktop.domain import AnswerSentence, Passage, SentenceLabel

ABSTAIN_TEXT = "Not found in your documents."
"""The answer text of an abstention."""


def best_semantic(passages: Sequence[Passage]) -> float | None:
    """The highest raw cosine among ``passages`` (None if no passage has one)."""
    scores = [p.raw_semantic for p in passages if p.raw_semantic is not None]
    return max(scores) if scores else None


def should_abstain(passages: Sequence[Passage], threshold: float) -> bool:
    """Abstain when nothing was retrieved or the best raw cosine is below ``threshold``.

    Passages without a semantic score (lexical-only search) never cause abstention.
    """
    if not passages:
        return True
    best = best_semantic(passages)
    return best is not None and best < threshold


def supported_anywhere(sentences: Sequence[AnswerSentence]) -> bool:
    """Whether some sentence is supported (or partially) by its citations: abstention by
    evidence refuses an answer for which this is False."""
    return any(
        s.label in (SentenceLabel.SUPPORTED, SentenceLabel.PARTIALLY_SUPPORTED) for s in sentences
    )
