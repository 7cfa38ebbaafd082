"""Deterministic checks that hold a verdict back: figures and negations.

A small NLI model decides by lexical overlap, so a sentence that repeats a passage's words with
the neighbouring item's figure, or without the passage's "not", reads as supported (issue 26:
45% of perturbed sentences of real documents were shown green). These checks look at the claim
and one premise window and say, in the user's words, why a SUPPORT must not be shown green:

* a figure of the claim not stated for the same subject in the window
  (:func:`verifai_desktop.verify.numbers.unstated_numbers`; VerifAI's "numbers and quantities
  changed" error class, Bojic et al. 2024), or, where the claim follows the window word for
  word, a figure that differs from the window's figure in the same place, or two items of the
  window exchanged (:func:`aligned_changes`: a word alignment, Ratcliff/Obershelp as in
  :mod:`difflib`);
* a predicate one side negates and the other states plainly
  (:func:`verifai_desktop.verify.negation.negation_conflict`; NegEx, Chapman et al. 2001).

and why a CONTRADICT must not be shown red:

* a negated claim whose window negates the same predicate too, or never mentions it
  (:func:`verifai_desktop.verify.negation.negation_ungrounded`): the "not" alone decided;
* a window that states the claim word for word (:func:`states_verbatim`): the contradiction
  rests on its other sentences.

:func:`verifai_desktop.verify.check.verify_pairs` runs them on the windows whose best guess is
SUPPORT or CONTRADICT; a held-back window cannot decide that label and, when it is still the
strongest one, the verdict is shown *unsure* with these reasons
(:func:`verifai_desktop.verify.labels.shown_label`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from verifai_desktop.domain import NliLabel
from verifai_desktop.verify.negation import negation_conflict, negation_ungrounded
from verifai_desktop.verify.numbers import unstated_numbers


@dataclass(frozen=True, slots=True)
class Checks:
    """Which checks and which window rule the verification path applies (all on in the app;
    ``verifai eval verifier`` switches them one by one to show each one's effect).

    Attributes:
        aims: leave premise windows that state an aim or hypothesis out
            (:mod:`verifai_desktop.verify.aims`).
        numbers: hold back a SUPPORT whose figures the window does not state for the subject.
        aligned: hold back a SUPPORT that follows the window word for word with a figure, a
            negation or two items changed (:func:`aligned_changes`), and a CONTRADICT from a
            window that states the claim word for word (:func:`states_verbatim`).
        negation: hold back a SUPPORT across a negation only one side makes.
        support_first: window aggregation: a passage with a window that supports the claim
            (shown SUPPORT) is decided by its strongest such window, a contradicting window of
            the same passage kept beside it as a conflict; off: the window with the highest
            ``max(P(SUPPORT), P(CONTRADICT))`` decides, whatever the other windows say.
    """

    aims: bool = True
    numbers: bool = True
    negation: bool = True
    aligned: bool = True
    support_first: bool = True


ALL_CHECKS = Checks()
"""Every check, support-first windows: what the app applies."""
NO_CHECKS = Checks(aims=False, numbers=False, negation=False, aligned=False, support_first=False)
"""The verification path as it was before the checks (aggregation by maximum)."""


_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|\w+|[^\s\w]")
_FIGURE = re.compile(r"\d+(?:[.,]\d+)*")
_NEGATIONS = frozenset((
    "not", "no", "never", "none", "neither", "nor", "without", "cannot", "nonsignificant",
    "insignificant", "unaffected", "unchanged", "absence", "lack", "failed", "t",
))  # fmt: skip
"""Negation tokens as the alignment tokenizes them ("n't" ends in the token "t")."""


def aligned_changes(claim: str, evidence: str) -> tuple[str, ...]:
    """Figures changed, negations dropped or added, and items exchanged where ``claim`` follows
    ``evidence`` word for word.

    The two texts are aligned token by token (:class:`difflib.SequenceMatcher`, no junk
    heuristic); only local edits count (at most 3 tokens each side, between runs of at least 2
    tokens that agree). A one-token replacement of a figure by another figure ("76 and **53**
    cases" against "76 and **76** cases") is a changed figure; two replaced spans that trade
    places ("A increased and B decreased" against "B increased and A
    decreased") are exchanged items; a differing span with a negation on one side only ("was
    **not** increased" against "was increased") is a negation dropped or added. A paraphrase
    aligns too little to report anything.

    Returns:
        Reasons in the user's words, e.g. ``('the figure 76 where the evidence has 53',)``.
    """
    a = _TOKEN.findall(evidence.lower())
    b = _TOKEN.findall(claim.lower())
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    out: list[str] = []
    replaced: list[tuple[str, str]] = []
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag == "equal":
            continue
        # a local edit: at most 3 tokens each side, between runs of at least 2 equal tokens
        framed = all(
            0 <= n < len(ops) and ops[n][0] == "equal" and ops[n][2] - ops[n][1] >= 2
            for n in (k - 1, k + 1)
        )
        local = framed and i2 - i1 <= 3 and j2 - j1 <= 3
        negated = sum(t in _NEGATIONS for t in a[i1:i2]), sum(t in _NEGATIONS for t in b[j1:j2])
        if local and (negated[0] > 0) != (negated[1] > 0):
            side, span = ("evidence", a[i1 - 1 : i2 + 1]) if negated[0] else (
                "sentence", b[j1 - 1 : j2 + 1])  # fmt: skip
            other = "sentence" if side == "evidence" else "evidence"
            out.append(f'the {side} says "{" ".join(span)}" where the {other} has no negation')
        if tag != "replace":
            continue
        old, new = " ".join(a[i1:i2]), " ".join(b[j1:j2])
        replaced.append((old, new))
        if local and i2 - i1 == j2 - j1 == 1 and _FIGURE.fullmatch(old) and _FIGURE.fullmatch(new):
            out.append(f"the figure {new} where the evidence has {old}")
    for n, (old, new) in enumerate(replaced):
        for old2, new2 in replaced[n + 1 :]:
            if old == new2 and new == old2 and old != new:
                out.append(f"{new} and {old} are exchanged relative to the evidence")
    return tuple(out)


VERBATIM_SHARE = 0.9
"""Share of a claim's tokens found in order in a window for the window to state it verbatim."""


def states_verbatim(claim: str, evidence: str) -> bool:
    """Whether ``evidence`` states ``claim`` word for word: at least :data:`VERBATIM_SHARE` of
    the claim's tokens align with the window's in runs of two or more, in order, and the
    aligned stretch of the window
    holds the same negations and figures as the claim (and :func:`aligned_changes` finds
    nothing changed). A CONTRADICT from such a window rests on its other sentences."""
    a = _TOKEN.findall(evidence.lower())
    b = _TOKEN.findall(claim.lower())
    if not b:
        return False
    # runs of one token (a name met elsewhere in the window) neither count nor widen the stretch
    blocks = [x for x in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()
              if x.size >= 2]  # fmt: skip
    if not blocks or sum(x.size for x in blocks) / len(b) < VERBATIM_SHARE:
        return False
    stretch = a[blocks[0].a : blocks[-1].a + blocks[-1].size]

    def marks(tokens: Sequence[str]) -> list[str]:
        return sorted(t for t in tokens if t in _NEGATIONS or _FIGURE.fullmatch(t))

    return marks(stretch) == marks(b) and not aligned_changes(claim, evidence)


def held_back(
    claim: str, evidence: str, label: NliLabel, checks: Checks = ALL_CHECKS
) -> tuple[str, ...]:
    """Why ``evidence`` must not be shown as ``label`` for ``claim``, in the user's words.

    Args:
        claim: the hypothesis (an answer sentence without citation markers).
        evidence: one premise window.
        label: the verifier's best guess for the pair (NO_EVIDENCE is never held back).
        checks: which checks to run.

    Returns:
        One reason per failed check (empty when none failed), e.g.
        ``("the figure 12% is not stated for the same subject in the evidence",)``.
    """
    if label is NliLabel.CONTRADICT:
        reasons = []
        if checks.negation:
            reasons.append(negation_ungrounded(claim, evidence))
        if checks.aligned and states_verbatim(claim, evidence):
            reasons.append("the evidence states the sentence word for word")
        return tuple(r for r in reasons if r)
    if label is not NliLabel.SUPPORT:
        return ()
    flags: list[str] = []
    if checks.aligned:
        flags += aligned_changes(claim, evidence)
    if checks.numbers:
        unstated = unstated_numbers(claim, evidence)
        if unstated:
            figures = ", ".join(m.text for m in unstated)
            noun = "figure" if len(unstated) == 1 else "figures"
            verb = "is" if len(unstated) == 1 else "are"
            flags.append(
                f"the {noun} {figures} {verb} not stated for the same subject in the evidence"
            )
    if checks.negation:
        reason = negation_conflict(claim, evidence)
        if reason:
            flags.append(reason)
    return tuple(flags)
