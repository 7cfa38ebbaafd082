"""What a rule of the verification path finds on one (claim part, evidence window) pair.

The types every rule shares (:mod:`verifai_desktop.verify.rules` runs them): a rule is a
function ``(part, window, passage, guess) -> tuple[Finding, ...]``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from verifai_desktop.domain import NliLabel


class Effect(enum.Enum):
    """What a finding does to the shown label of one (part, window) pair."""

    HOLD = "hold"
    """The verifier's guess (SUPPORT or CONTRADICT) must not be shown: unsure at most."""
    RED = "red"
    """The window contradicts the part, whatever the verifier guessed."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One rule's finding on a (part, window) pair.

    Attributes:
        rule: the rule's name (``"figures"``, ``"negation"``, ``"aligned"``).
        effect: what it does to the shown label.
        reason: why, in the user's words, quoting the window where it can (``"the passage
            gives 4 hours for copper"``).
    """

    rule: str
    effect: Effect
    reason: str


Rule = Callable[[str, str, str, NliLabel], tuple[Finding, ...]]
"""``(part, window, passage, guess) -> findings``: the signature every rule has. ``window`` is
the premise window judged, ``passage`` the whole passage it is cut from, ``guess`` the
verifier's argmax for the pair; a rule may find nothing to say for some guesses."""
