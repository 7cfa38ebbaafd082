"""A total read as every member having the finding: "all 680 families" (issue 39, a total for
a sub-count).

A chatbot turns "We examined 680 FAP families for germline APC mutations" into "mutations were
found in all 680 FAP families": the figure is right and the NLI model reads the sentence as
supported, but the passage counts the families examined, not the ones with the finding. On the
paraphrase dev set every wrong claim of this shape that was shown green said *all*, *each* or
*every one* of a count the passage gives without such a word.

:func:`universal_rule` holds a SUPPORT guess back (unsure, never red: the passage may say it in
words the rule does not read) when the part quantifies over a count with *all N*, *all of the
N*, *each of the N* or *every one of the N*, and no sentence of the passage stating that count
says so too: *all*, *each*, *every*, *both*, *entire*, *100%*, *none*, or "N of (the) N" /
"N/N". Chosen on the paraphrase dev set (``models/paraphrase_dev.py``).
"""

from __future__ import annotations

import functools
import re

from verifai_desktop.domain import NliLabel
from verifai_desktop.ingest.sentences import split_sentences
from verifai_desktop.verify.finding import Effect, Finding
from verifai_desktop.verify.numbers import DENOMINATOR_GAP, find_numbers, same_value

_UNIVERSAL = re.compile(
    r"\b(?:all|each|every(?:\s+one)?)\s+(?:of\s+)?(?:the\s+|these\s+|those\s+|their\s+)?",
    re.IGNORECASE,
)
"""A universal quantifier ("all", "each of the", "every one of the"); it quantifies over a
count when a figure of :func:`~verifai_desktop.verify.numbers.find_numbers` starts right after
it ("all 680", "each of the 151", "all five")."""
_UNIVERSAL_WORD = re.compile(
    r"\b(?:all|each|every|everyone|both|entire|none|whole)\b|\b100(?:\.0)?\s*%", re.IGNORECASE
)
"""Words by which a passage sentence says a finding holds for every member."""
_N_OF_N = re.compile(rf"(\d[\d,]*){DENOMINATOR_GAP.pattern}(\d[\d,]*)")
"""A count of a count: "45 of 45", "45/45" (the gap as
:data:`~verifai_desktop.verify.numbers.DENOMINATOR_GAP` reads it)."""


def universal_counts(part: str) -> tuple[float, ...]:
    """The values of the counts ``part`` quantifies universally ("all 680 families" -> 680.0),
    in order; empty when none."""
    mentions = find_numbers(part)
    out = []
    for match in _UNIVERSAL.finditer(part):
        after = next((m for m in mentions if m.span[0] >= match.end()), None)
        if after is not None and after.span[0] == match.end():
            out.append(after.value)
    return tuple(out)


def _says_every(sentence: str, value: float) -> bool:
    if _UNIVERSAL_WORD.search(sentence):
        return True
    for match in _N_OF_N.finditer(sentence):
        a, b = (float(g.replace(",", "")) for g in match.groups())
        if same_value(a, b) and same_value(a, value):
            return True
    return False


def universal_rule(part: str, window: str, passage: str, guess: NliLabel) -> tuple[Finding, ...]:
    """The universal-count rule (:data:`~verifai_desktop.verify.finding.Rule`): a SUPPORT guess
    on a part saying *all N* is ``HOLD`` when no sentence of ``passage`` that states N says all
    of them (see the module docstring). ``window`` is not read: the count may be stated in
    another sentence of the passage."""
    if guess is not NliLabel.SUPPORT:
        return ()
    value = _unsaid_count(part, passage)
    if value is None:
        return ()
    shown = f"{value:,.0f}" if value == int(value) else f"{value:g}"
    reason = (
        f"the sentence says all {shown}; the passage gives {shown} as a count "
        "without saying the finding holds for every one of them"
    )
    return (Finding("quantifiers", Effect.HOLD, reason),)


@functools.lru_cache(maxsize=1024)
def _unsaid_count(part: str, passage: str) -> float | None:
    """The first count ``part`` says all of that the passage states without saying all of
    them, or None; memoised, since the rule runs once per window of the same passage."""
    counts = universal_counts(part)
    if not counts:
        return None
    stated = [(passage[a:b], find_numbers(passage[a:b])) for a, b in split_sentences(passage)]
    for value in counts:
        stating = [text for text, found in stated if any(same_value(m.value, value) for m in found)]
        if stating and not any(_says_every(text, value) for text in stating):
            return value
    return None
