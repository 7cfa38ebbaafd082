"""Abstention by retrieval and by evidence: when the ask session answers "not found".

Two rules, after Claim-Aware Scientific RAG (abstain when retrieval finds nothing close enough)
and VerifAI (an answer none of whose sentences is supported by its citations is not shown as
an answer).
"""

from __future__ import annotations

from collections.abc import Sequence

from verifai_desktop.domain import AnswerSentence, NliLabel, Passage, SentenceLabel

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


def best_guess_support(sentence: AnswerSentence) -> bool:
    """Whether ``sentence`` is shown unsure although the verifier's best guess (argmax) on
    one of its citations is SUPPORT and no check held that verdict back: the threshold alone
    made it unsure."""
    return sentence.label is SentenceLabel.UNSURE and any(
        v.label is NliLabel.SUPPORT and not v.flags for v in sentence.verdicts
    )


def supported_anywhere(sentences: Sequence[AnswerSentence], *, best_guess: bool = False) -> bool:
    """Whether some sentence is supported (or partially) by its citations: abstention by
    evidence refuses an answer for which this is False.

    Args:
        sentences: the verified answer sentences.
        best_guess: count an unsure sentence whose best guess is SUPPORT, unflagged
            (:func:`best_guess_support`), as support too (``verify.abstain_best_guess``).
    """
    return any(
        s.label in (SentenceLabel.SUPPORTED, SentenceLabel.PARTIALLY_SUPPORTED)
        or (best_guess and best_guess_support(s))
        for s in sentences
    )
