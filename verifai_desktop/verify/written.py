"""A claim's figures written as the evidence writes them, before the verifier reads the pair.

The NLI verifier reads figures as word pieces: "3,494" and "3494", "two months" and "2 months"
are other tokens to it, and a paraphrase that writes a stated figure its own way reads as a
changed one (the paraphrase dev set, ``models/paraphrase_dev.py``: "Vision outcome data were
available for 3,494 older people" against "... for 3494 people" was P(CONTRADICT) 0.54, and
P(SUPPORT) 0.7 once written as the passage writes it).
"""

from __future__ import annotations

import re

from verifai_desktop.verify.numbers import (
    SCIENTIFIC,
    compatible_units,
    find_numbers,
    numeral_span,
    same_value,
)

_DIGIT = re.compile(r"\d")


def as_written(claim: str, evidence: str) -> str:
    """``claim`` with each figure written as ``evidence`` writes the same value in a compatible
    unit ("3,494 people" -> "3494 people" against "3494 people", "two months" -> "2 months"):
    the verifier reads figures as word pieces, and a paraphrase's thousands separator or number
    word reads to it as another figure (the paraphrase dev set: "Outcome data on vision were
    available for 3494 people" against "... for 3,494 older people" was P(CONTRADICT) 0.54).

    Args:
        claim: the hypothesis (a claim part).
        evidence: the premise window.

    Returns:
        The rewritten claim; ``claim`` itself when no figure's writing differs.
    """
    stated = find_numbers(evidence)
    out = claim
    for m in reversed(find_numbers(claim)):
        e = next(
            (e for e in stated
             if same_value(e.value, m.value)
             and (compatible_units(e.unit, m.unit) or not (e.unit and m.unit))),
            None,
        )  # fmt: skip
        if e is None:
            continue
        (a, b), (c, d) = numeral_span(m), numeral_span(e)
        if not (_DIGIT.match(m.text) and _DIGIT.match(e.text)):
            if m.unit != e.unit or m.text == e.text:
                continue  # a number word is rewritten with its unit, the same on both sides
            a, b, c, d = *m.span, *e.span
        elif SCIENTIFIC.search(m.text) or SCIENTIFIC.search(e.text):
            continue
        if claim[a:b] != evidence[c:d]:
            out = out[:a] + evidence[c:d] + out[b:]
    return out
