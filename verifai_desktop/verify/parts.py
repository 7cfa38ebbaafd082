"""One fact at a time: a claim split into the clauses that state its facts.

A small NLI model reads a sentence with two facts as supported when the first one is: "the
registry holds 12M records, and full text is available for 12M records" was shown green though
its second half is wrong (issue 39). :func:`claim_parts` cuts a sentence at the joints where a
chatbot joins two findings (``;``, ``, and``, ``, while``, ``, whereas``, ``, but``, ``, with``,
``, although``); each part is verified on its own
(:func:`verifai_desktop.verify.check.verify_pairs`) and the sentence is green only when every
part is.

A cut is made only where both sides are clauses worth a verdict of their own: at least
:data:`MIN_PART_WORDS` words each, outside brackets and quotations, and never before a
"respectively", which pairs the figures of a list across the cut with their items ("71.1%
compared to 57.5%, ..., 36.4%, and 30.4% for glands 40 to 54.9, ... and 115 cc or greater,
respectively": cut at ", and", the first part's figures lost their items and one was shown
red; issue 39, the shown conflicts of 50 dev figure answers). A bare ``and`` is never
cut: "A and B increased" lists the subjects of one predicate, and "12% in the treated arm and
30% in the control arm" leaves a part without its predicate; the figures of such a sentence are
bound to their own clauses by :mod:`verifai_desktop.verify.figure_subjects` instead. Rules
only, no model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MIN_PART_WORDS = 4
"""Words (runs of letters or digits) each side of a cut must have; shorter sides stay joined."""

PART_REASON_PREFIX = "part "
"""How a verdict's reason that names a claim part and its label begins (``'part 1 of 2,
"...": supported'``, written by :func:`verifai_desktop.verify.check.verify_pairs`)."""

MAX_PARTS = 4
"""At most this many parts per sentence (each costs one verifier pass over the windows)."""

_WORD = re.compile(r"[^\W_]+")
# Joints after which a new finding starts. Group 1 is the joint; the text after it is the part.
_STRONG_JOINT = re.compile(
    r"\s*;\s*|,\s+(?:and|while|whereas|but|with|although|though)\s+(?=\w)",
    re.IGNORECASE,
)
_RESPECTIVELY = re.compile(r"\brespectively\b", re.IGNORECASE)
"""A list paired with its items by "respectively" is one fact: no cut before it."""


@dataclass(frozen=True, slots=True)
class ClaimPart:
    """One part of a claim.

    Attributes:
        text: the part as written, without the joint word ("and", "while", ...).
        span: half-open character offsets of ``text`` in the claim.
    """

    text: str
    span: tuple[int, int]


def _words(text: str) -> int:
    return len(_WORD.findall(text))


def _brackets_open(text: str) -> bool:
    return text.count("(") + text.count("[") > text.count(")") + text.count("]")


def _quote_open(text: str) -> bool:
    """Whether ``text`` ends inside a quotation ("... which states: "The 83 reviews (8.3%) had
    a mean score of 2.8 (SD 1.4); the 916 reviews ..."): a quoted passage is one part."""
    return text.count('"') % 2 == 1 or text.count("\u201c") > text.count("\u201d")


def claim_parts(claim: str) -> tuple[ClaimPart, ...]:
    """The parts of ``claim`` (see the module docstring); one part, the whole claim, when it
    has no joint worth cutting.

    Args:
        claim: one sentence without citation markers.

    Returns:
        1..:data:`MAX_PARTS` parts in order; their spans are half-open offsets into ``claim``
        and never overlap. A trailing full stop stays with the last part.

    Example:
        ``claim_parts("The registry holds 12M records, and full text is available for 8M.")``
        gives ``"The registry holds 12M records"`` and ``"full text is available for 8M."``.
    """
    cuts: list[tuple[int, int]] = []  # (end of the left part, start of the right part)
    for match in _STRONG_JOINT.finditer(claim):
        before = claim[: match.start()]
        if _RESPECTIVELY.search(claim, match.end()):
            continue  # "71.1% compared to 57.5%, ... and 30.4% for glands ..., respectively"
        if not _brackets_open(before) and not _quote_open(before):
            cuts.append((match.start(), match.end()))
    parts: list[tuple[int, int]] = []
    start = 0
    for end, next_start in cuts:
        left = claim[start:end]
        right = claim[next_start:]
        if _words(left) < MIN_PART_WORDS or _words(right) < MIN_PART_WORDS:
            continue
        if len(parts) + 2 > MAX_PARTS:
            break
        parts.append((start, end))
        start = next_start
    parts.append((start, len(claim)))
    return tuple(ClaimPart(claim[a:b].strip(), _strip(claim, a, b)) for a, b in parts)


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    """``(start, end)`` narrowed past white space at both ends."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
