"""The rules around the verifier, in one shape: claim part x evidence window -> findings.

The verification path reads (:mod:`verifai_desktop.verify.check`):

1. **claim -> parts** (:func:`verifai_desktop.verify.parts.claim_parts`): one fact at a time;
2. **part -> the evidence window it rests on**: every window of the passage is classified by
   the NLI verifier (premise = window, hypothesis = part, its figures written as the window
   writes them: :func:`~verifai_desktop.verify.written.as_written`); a part and the window clause it
   speaks of that both negate are read in their positive forms
   (:func:`~verifai_desktop.verify.negation.positive_pair`);
3. **window -> each rule's findings** (this module, :func:`findings`): every rule is a function
   ``(part, window, passage, guess) -> tuple[Finding, ...]``, ``guess`` the verifier's best
   guess for the pair;
4. **findings -> the shown label** (:func:`shown_with`): a ``RED`` finding shows the pair
   contradicted whatever the guess; a ``HOLD`` finding keeps the guessed label from being shown
   (the pair is *unsure*); otherwise the per-label thresholds decide
   (:func:`~verifai_desktop.verify.labels.shown_label`);
5. **parts -> the sentence's verdict on the passage**: red when a part is red, green only when
   every part is green.

The rules (each one module, one function of the same signature), chosen on the paraphrase dev
set (``models/data/paraphrase_dev.jsonl``, ``models/paraphrase_dev.py``):

* :func:`~verifai_desktop.verify.figures.figures_rule`: a figure of the part bound to another
  value of the passage, written in another unit (a relative risk of 1.23 as "1.23%"), or read
  as a whole group the passage counts part of, is ``RED`` with the passage's value quoted
  ("the figure 493: the passage gives 733 here"); a figure the passage does not state for the
  subject, directly or in an equivalent form, is ``HOLD``, and so is a CONTRADICT from a window
  that states no figure at all; not run where the window writes the part's figures word for
  word (:func:`~verifai_desktop.verify.checks.figures_verbatim`);
* :func:`~verifai_desktop.verify.negation.negation_rule`: the clause of the passage the part
  speaks of negates and the part does not, or the other way round: ``RED`` (unless another
  clause negates the part's predicate too, or the part's negation names a group: "responders
  who did not have surgery"); "X but not Y" against "Y but not X": ``RED``; both negate: the
  verifier has read their positive forms (step 2);
* :func:`~verifai_desktop.verify.checks.aligned_rule`: where the part follows the window word
  for word, a changed figure, negation or exchanged items is ``RED``; a CONTRADICT from a
  window that states the part word for word is ``HOLD``;
* :func:`~verifai_desktop.verify.subject.subject_rule`: a CONTRADICT from a window about
  another subject is ``HOLD`` (conflicts that are real);
* :func:`~verifai_desktop.verify.names.name_rule`: a SUPPORT from a window whose sentence that
  says what the part says names another system, gene or group than the part is ``HOLD``;
* :func:`~verifai_desktop.verify.names.swap_rule`: a SUPPORT from a window whose sentence gives
  a word of the part only in the parallel phrase of another name ("the helical domain (E545K
  and E542K) and the kinase domain (H1047R)" against "H1047R lies in the helical domain") is
  ``HOLD``;
* :func:`~verifai_desktop.verify.quantifiers.universal_rule`: a SUPPORT for a part saying "all
  N" when no sentence of the passage stating N says all of them is ``HOLD``;
* :func:`~verifai_desktop.verify.directions.direction_rule`: a SUPPORT from a window that
  changes what the part changes only the other way ("lowered ROS levels" against "elevated
  ROS levels") is ``RED``, the window's sentence quoted.
"""

from __future__ import annotations

from collections.abc import Sequence

from verifai_desktop.domain import NliLabel, ShownLabel
from verifai_desktop.settings import VerifySettings
from verifai_desktop.verify.checks import ALL_CHECKS, Checks, aligned_rule, figures_verbatim
from verifai_desktop.verify.directions import direction_rule
from verifai_desktop.verify.figures import figures_rule
from verifai_desktop.verify.finding import Effect, Finding
from verifai_desktop.verify.labels import shown_label
from verifai_desktop.verify.names import name_rule, swap_rule
from verifai_desktop.verify.negation import negation_rule
from verifai_desktop.verify.quantifiers import universal_rule
from verifai_desktop.verify.subject import subject_rule


def findings(
    part: str, window: str, passage: str, guess: NliLabel, checks: Checks = ALL_CHECKS
) -> tuple[Finding, ...]:
    """Every rule's findings on one (part, window) pair, in the order of the module docstring.

    Args:
        part: the hypothesis (a claim part, without citation markers).
        window: the premise window.
        passage: the whole passage the window is cut from.
        guess: the verifier's argmax for the pair.
        checks: which rules run (``numbers``: figures, ``negation``, ``aligned``,
            ``subject``, ``names``, ``quantifiers``, ``directions``).
    """
    out: list[Finding] = []
    if checks.aligned:
        out += aligned_rule(part, window, passage, guess)
    if checks.numbers and not figures_verbatim(part, window):
        out += figures_rule(part, window, passage, guess)
    if checks.negation:
        out += negation_rule(part, window, passage, guess)
    if checks.subject:
        out += subject_rule(part, window, passage, guess)
    if checks.names:
        out += name_rule(part, window, passage, guess)
        out += swap_rule(part, window, passage, guess)
    if checks.quantifiers:
        out += universal_rule(part, window, passage, guess)
    if checks.directions:
        out += direction_rule(part, window, passage, guess)
    return tuple(out)


def shown_with(
    p_support: float,
    p_contradict: float,
    p_no_evidence: float,
    found: Sequence[Finding],
    thresholds: VerifySettings,
) -> ShownLabel:
    """The shown label of one (part, window) pair from its probabilities and findings.

    Args:
        p_support: P(SUPPORT), 0..1.
        p_contradict: P(CONTRADICT), 0..1.
        p_no_evidence: P(NO_EVIDENCE), 0..1.
        found: the rules' findings on the pair (:func:`findings`).
        thresholds: the per-label thresholds.

    Returns:
        CONTRADICT when a finding is ``RED``; otherwise
        :func:`~verifai_desktop.verify.labels.shown_label` with the ``HOLD`` reasons as flags.
    """
    if any(f.effect is Effect.RED for f in found):
        return ShownLabel.CONTRADICT
    holds = tuple(f.reason for f in found if f.effect is Effect.HOLD)
    return shown_label(p_support, p_contradict, p_no_evidence, holds, thresholds)


def reasons(found: Sequence[Finding], shown: ShownLabel) -> tuple[str, ...]:
    """The reasons a verdict shows (:attr:`~verifai_desktop.domain.Verdict.flags`): the ``RED``
    findings' when it is shown red by a rule, else the ``HOLD`` findings' (none on a pair
    shown SUPPORT or CONTRADICT by the verifier)."""
    red = tuple(f.reason for f in found if f.effect is Effect.RED)
    if red and shown is ShownLabel.CONTRADICT:
        return red
    if shown in (ShownLabel.SUPPORT, ShownLabel.CONTRADICT):
        return ()
    return tuple(f.reason for f in found if f.effect is Effect.HOLD)
