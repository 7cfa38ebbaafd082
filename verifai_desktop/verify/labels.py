"""Sentence labels from the verifier's verdicts on the passages a sentence cites.

The rules (after the VerifAI paper's colour scheme, Kosprdic et al., 2024), applied in order:

1. ``unreferenced``: the sentence cites no (valid) passage.
2. ``contradicted``: some cited passage has P(CONTRADICT) >= ``contradict_threshold``.
3. ``supported``: every cited passage has P(SUPPORT) >= ``support_threshold``.
4. ``partially_supported``: some, but not all, cited passages support it.
5. ``no_evidence``: no cited passage supports it and none contradicts it.

Contradiction wins over support because a contradiction is the thing a reader must not miss.
The probability shown for a label and the label counts need no thresholds and live in
:mod:`verifai_desktop.domain` (:func:`~verifai_desktop.domain.label_probability`,
:func:`~verifai_desktop.domain.label_counts`).
"""

from __future__ import annotations

from collections.abc import Sequence

from verifai_desktop.domain import SentenceLabel, Verdict
from verifai_desktop.settings import VerifySettings


def supports(verdict: Verdict, thresholds: VerifySettings) -> bool:
    """Whether the cited passage supports the claim (P(SUPPORT) >= support_threshold)."""
    return verdict.p_support >= thresholds.support_threshold


def contradicts(verdict: Verdict, thresholds: VerifySettings) -> bool:
    """Whether the cited passage contradicts the claim (P(CONTRADICT) >= contradict_threshold)."""
    return verdict.p_contradict >= thresholds.contradict_threshold


def sentence_label(
    verdicts: Sequence[Verdict], thresholds: VerifySettings | None = None
) -> SentenceLabel:
    """Label one answer sentence from its verdicts (one per cited passage).

    Args:
        verdicts: the verifier's verdicts, one per valid citation of the sentence.
        thresholds: ``contradict_threshold`` and ``support_threshold``; defaults if None.

    Returns:
        The sentence label, by the rules in this module's docstring.
    """
    thresholds = thresholds or VerifySettings()
    if not verdicts:
        return SentenceLabel.UNREFERENCED
    if any(contradicts(v, thresholds) for v in verdicts):
        return SentenceLabel.CONTRADICTED
    n_support = sum(supports(v, thresholds) for v in verdicts)
    if n_support == len(verdicts):
        return SentenceLabel.SUPPORTED
    if n_support > 0:
        return SentenceLabel.PARTIALLY_SUPPORTED
    return SentenceLabel.NO_EVIDENCE
