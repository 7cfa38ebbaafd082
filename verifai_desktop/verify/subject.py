"""Conflicts that are real: a contradiction is shown only from a window about the same subject.

A small NLI model reads "contradiction" into a window that merely speaks of something else: a
different corpus's size, a paragraph about the software's design (issue 39: "Conflicting
evidence" shown for passages about another subject). :func:`subject_rule` holds a CONTRADICT
guess back when the window holds fewer than :data:`SUBJECT_SHARE` of the claim's subject words
(:func:`~verifai_desktop.verify.figure_subjects.subject_words`: content words and years, stemmed).
The rules that show red by themselves (figures bound to another value, a negation dropped or
added) already match the claim's subject in the passage.
"""

from __future__ import annotations

from verifai_desktop.domain import NliLabel
from verifai_desktop.verify.figure_subjects import subject_words
from verifai_desktop.verify.finding import Effect, Finding

SUBJECT_SHARE = 0.25
"""Share of the claim's subject words a window must hold for its CONTRADICT to be shown. Chosen
on SciFact dev (red precision 0.52 at coverage 0.37, against 0.51 / 0.38 without the rule and
0.48 / 0.27 at 0.5); the paraphrase dev set, whose claims are all on the passage's subject, moves
by at most 0.01 between 0.3 and 0.5."""


def subject_share(part: str, window: str) -> float:
    """Share of ``part``'s subject words that ``window`` holds, 0..1 (1 for a part without
    any)."""
    words = subject_words(part)
    return len(words & subject_words(window)) / len(words) if words else 1.0


def subject_rule(part: str, window: str, passage: str, guess: NliLabel) -> tuple[Finding, ...]:
    """The subject rule (:data:`~verifai_desktop.verify.finding.Rule`): a CONTRADICT guess from
    a window holding fewer than :data:`SUBJECT_SHARE` of the part's subject words is ``HOLD``.
    ``passage`` is not read."""
    if guess is not NliLabel.CONTRADICT:
        return ()
    share = subject_share(part, window)
    if share >= SUBJECT_SHARE:
        return ()
    reason = f"the passage speaks of another subject here ({share:.0%} of the sentence's words)"
    return (Finding("subject", Effect.HOLD, reason),)
