"""Sentence labels from the verifier's verdicts on the passages a sentence cites.

The rules (after the VerifAI paper's colour scheme, Kosprdic et al., 2024), applied in order:

1. ``unreferenced``: the sentence cites no (valid) passage.
2. ``contradicted``: some cited passage has P(CONTRADICT) >= ``contradict_threshold``.
3. ``supported``: every cited passage has P(SUPPORT) >= ``support_threshold``.
4. ``partially_supported``: some, but not all, cited passages support it.
5. ``no_evidence``: no cited passage supports it and none contradicts it.

Contradiction wins over support because a contradiction is the thing a reader must not miss.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

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


def sentence_probability(
    label: SentenceLabel, verdicts: Sequence[Verdict], thresholds: VerifySettings | None = None
) -> float:
    """The probability that backs a sentence's label, for display (0..1).

    ``supported``: the weakest P(SUPPORT) of its citations; ``partially_supported``: the
    strongest P(SUPPORT); ``contradicted``: the strongest P(CONTRADICT); ``no_evidence``: the
    strongest P(NO_EVIDENCE); ``unreferenced``: 0.
    """
    del thresholds  # the label already encodes them; kept for a uniform call signature
    if not verdicts or label is SentenceLabel.UNREFERENCED:
        return 0.0
    if label is SentenceLabel.SUPPORTED:
        return min(v.p_support for v in verdicts)
    if label is SentenceLabel.PARTIALLY_SUPPORTED:
        return max(v.p_support for v in verdicts)
    if label is SentenceLabel.CONTRADICTED:
        return max(v.p_contradict for v in verdicts)
    return max(v.p_no_evidence for v in verdicts)


def label_counts(labels: Iterable[SentenceLabel]) -> dict[SentenceLabel, int]:
    """How many sentences carry each label (every label present, zeros included)."""
    counts = dict.fromkeys(SentenceLabel, 0)
    for label in labels:
        counts[label] += 1
    return counts
