"""What the app shows: one (claim, passage) verdict's shown label, and a sentence's label.

A verdict's shown label (:func:`shown_label`, :class:`~verifai_desktop.domain.ShownLabel`):

* ``CONTRADICT`` when CONTRADICT is the verifier's best guess, P(CONTRADICT) reaches
  ``contradict_threshold`` and no check held it back (a negated claim contradicted by the
  "not" alone, :func:`~verifai_desktop.verify.negation.negation_ungrounded`);
* ``SUPPORT`` when SUPPORT is the best guess, P(SUPPORT) reaches ``support_threshold`` and no
  check held it back (a figure not stated for the same subject,
  :mod:`~verifai_desktop.verify.figure_subjects`; a negation the other side lacks,
  :mod:`~verifai_desktop.verify.negation`);
* ``NO_EVIDENCE`` when that is the best guess, or the passage states only an aim or
  hypothesis (:mod:`~verifai_desktop.verify.aims`);
* otherwise ``UNSURE``: the verifier cannot tell, and the app says so instead of colouring
  (issue 26).

A sentence's label from the verdicts on the passages it cites (after the VerifAI paper's colour
scheme, Kosprdic et al., 2024, with *unsure* added), applied in order:

1. ``unreferenced``: the sentence cites no (valid) passage.
2. ``contradicted``: some cited passage contradicts it.
3. ``supported``: every cited passage supports it.
4. ``partially_supported``: some, but not all, cited passages support it.
5. ``unsure``: no cited passage supports or contradicts it, and for some the verifier cannot
   tell.
6. ``no_evidence``: no cited passage supports it and none contradicts it.

A verdict made before shown labels existed (``Verdict.shown`` None, e.g. an old history entry)
supports when P(SUPPORT) >= ``support_threshold`` and contradicts when P(CONTRADICT) >=
``contradict_threshold``, as the app did then. Contradiction wins over support because a
contradiction is the thing a reader must not miss.
The probability shown for a label and the label counts need no thresholds and live in
:mod:`verifai_desktop.domain` (:func:`~verifai_desktop.domain.label_probability`,
:func:`~verifai_desktop.domain.label_counts`).
"""

from __future__ import annotations

from collections.abc import Sequence

from verifai_desktop.domain import SentenceLabel, ShownLabel, Verdict
from verifai_desktop.settings import VerifySettings
from verifai_desktop.verify.numbers import find_numbers
from verifai_desktop.verify.parts import PART_REASON_PREFIX

AIM_FLAG = "the passage states an aim, a hypothesis or an open question here, not a finding"
"""The flag of a passage whose every premise window states an aim (shown NO_EVIDENCE)."""


def shown_label(
    p_support: float,
    p_contradict: float,
    p_no_evidence: float,
    flags: Sequence[str],
    thresholds: VerifySettings,
) -> ShownLabel:
    """What the app shows for one (claim, passage) verdict (see the module docstring).

    Args:
        p_support: P(SUPPORT) of the deciding window, 0..1.
        p_contradict: P(CONTRADICT), 0..1.
        p_no_evidence: P(NO_EVIDENCE), 0..1.
        flags: the checks that held the deciding window back (:attr:`Verdict.flags`);
            :data:`AIM_FLAG` makes it NO_EVIDENCE, any other flag keeps it from SUPPORT and
            CONTRADICT (the checks flag the label that is the best guess).
        thresholds: ``support_threshold`` and ``contradict_threshold``.
    """
    if AIM_FLAG in flags:
        return ShownLabel.NO_EVIDENCE
    best = max(p_support, p_contradict, p_no_evidence)
    if p_contradict == best and p_contradict >= thresholds.contradict_threshold and not flags:
        return ShownLabel.CONTRADICT
    if p_support == best and p_support >= thresholds.support_threshold and not flags:
        return ShownLabel.SUPPORT
    if p_no_evidence == best:
        return ShownLabel.NO_EVIDENCE
    return ShownLabel.UNSURE


def supports(verdict: Verdict, thresholds: VerifySettings) -> bool:
    """Whether the passage supports the claim: shown SUPPORT (P(SUPPORT) >=
    ``support_threshold`` for a verdict without a shown label)."""
    if verdict.shown is not None:
        return verdict.shown is ShownLabel.SUPPORT
    return verdict.p_support >= thresholds.support_threshold


def contradicts(verdict: Verdict, thresholds: VerifySettings) -> bool:
    """Whether the passage contradicts the claim: shown CONTRADICT (P(CONTRADICT) >=
    ``contradict_threshold`` for a verdict without a shown label)."""
    if verdict.shown is not None:
        return verdict.shown is ShownLabel.CONTRADICT
    return verdict.p_contradict >= thresholds.contradict_threshold


CONFLICT_ON_TOPIC = 0.3
"""Least ``max(P(SUPPORT), P(CONTRADICT))`` of a passage shown as conflicting evidence
(:func:`conflicts_with`). Chosen on the shown conflicts of 50 answers to dev figure questions,
labelled by reading (``models/shown_conflicts.py``; issue 39): conflicts listed 0.12 real
without it, 0.33 with it, 5 of the 6 real ones kept."""


def rests_on_a_rule(verdict: Verdict) -> bool:
    """Whether a rule's finding, not the verifier alone, shows ``verdict`` red: it carries a
    reason other than the lines naming a sentence's parts (:func:`verifai_desktop.verify.rules.
    reasons` gives none for a pair the verifier shows red by itself)."""
    return any(not flag.startswith(PART_REASON_PREFIX) for flag in verdict.flags)


def conflicts_with(verdict: Verdict, thresholds: VerifySettings, claim: str = "") -> bool:
    """Whether a passage other than the sentence's own citations is shown as conflicting
    evidence: it contradicts the claim (:func:`contradicts`) and the verifier reads it as
    bearing on the claim at all, ``max(P(SUPPORT), P(CONTRADICT)) >=``
    :data:`CONFLICT_ON_TOPIC`. A rule turns a verdict red on a figure or a negation whatever the
    passage is about; on the other studies the contradiction search finds by shared words,
    such reds were mostly passages about another subject.

    A ``claim`` that states a figure (:func:`~verifai_desktop.verify.numbers.find_numbers`) is
    contradicted only where a rule finds it (:func:`rests_on_a_rule`: a figure bound to another
    value, a negation, a change the other way): the figures rule reads every figure of the
    claim against the passage and found none at odds with it, so the passage's figures do not
    line up against the sentence. Chosen on the shown conflicts of 50 answers to dev figure
    questions (issue 39): each of the 23 listed conflicts of figure sentences that rested on the
    verifier alone in four labellings (some the same sentence again) was false (another study,
    another measure, or the sentence's own figure stated: "The respective times ... were 67.2,
    16.0, and 9.4 months").
    """
    if not contradicts(verdict, thresholds):
        return False
    if claim and find_numbers(claim) and not rests_on_a_rule(verdict):
        return False
    return max(verdict.p_support, verdict.p_contradict) >= CONFLICT_ON_TOPIC


def sentence_label(
    verdicts: Sequence[Verdict], thresholds: VerifySettings | None = None
) -> SentenceLabel:
    """Label one answer sentence from its verdicts (one per cited passage).

    Args:
        verdicts: the verifier's verdicts, one per valid citation of the sentence.
        thresholds: ``contradict_threshold`` and ``support_threshold`` for verdicts without a
            shown label; defaults if None.

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
    if any(v.shown is ShownLabel.UNSURE for v in verdicts):
        return SentenceLabel.UNSURE
    return SentenceLabel.NO_EVIDENCE
