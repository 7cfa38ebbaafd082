"""A whole and its parts: a claim figure given as the whole group where the evidence counts part
of it, or the total given as the part.

:mod:`verifai_desktop.verify.figures` asks these when it binds a claim's figure: "Of the 1,200
patients, 312 ..." makes 1,200 a total (:func:`totals`); "all 680 families" against "327/680"
(:func:`part_of`), "32,441 samples turned out positive" against "Of the 32,441 samples 16
were positive" (:func:`total_for_part`) and "6,912 people carried the mutations" against "18
mutations in 6,912 individuals" (:func:`counted_in`) bind the figure to the part; the whole a
claim counts its figure out of ("327 of the 680", :func:`whole_of`) is no rival value. Issue 26
(totals for sub-counts) and issue 39; chosen on the paraphrase dev set
(``models/paraphrase_dev.py``).
"""

from __future__ import annotations

import re

from verifai_desktop.verify.figure_subjects import Figure, subject_words
from verifai_desktop.verify.numbers import NumberMention, find_numbers, same_value
from verifai_desktop.verify.units import COUNT_UNITS as _COUNT_UNITS

_TOTAL = re.compile(
    r"(?:^|[.;:]\s*|\b[A-Z]{3,}\s+)(?i:of|among|in)\s+(?i:the|these|all|those)?\s*$"
)  # a section heading ("RESULTS Of the 32,441 samples") opens a sentence too


def totals(text: str, found: list[Figure]) -> list[Figure]:
    """``found`` with the figure of "Of the 1,200 patients, 312 ..." as a total (no subject):
    it counts the group the next figure is a part of."""
    return [
        Figure(f.mention, frozenset(), frozenset())
        if _TOTAL.search(text[max(0, f.mention.span[0] - 40) : f.mention.span[0]])
        else f
        for f in found
    ]


_ALL = re.compile(r"\b(?:all|each\s+of|every\s+one\s+of|every)\s+(?:of\s+)?(?:the\s+)?$", re.I)
_PART_OF = re.compile(r"\s*(?:(?:out\s+)?of(?:\s+the|\s+all)?|/)\s*$", re.I)


def part_of(claim: str, claimed: Figure, evidence: str, found: list[Figure]) -> Figure | None:
    """For a claim figure read as a whole group ("all 680 families", "each of the 151
    patients"), the evidence figure that counts only part of that group: a smaller count
    written as "327 of 680", "327/680" or "of the 680 ..., 327", or None."""
    if not _ALL.search(claim[: claimed.mention.span[0]]) or not claimed.mention.value.is_integer():
        return None
    for n, e in enumerate(found):
        if not same_value(e.mention.value, claimed.mention.value):
            continue
        for other in found[max(0, n - 2) : n + 3]:
            if other is e or not 0 < other.mention.value < e.mention.value:
                continue
            if not other.mention.value.is_integer() or other.mention.unit not in _COUNT_UNITS:
                continue
            gap = evidence[other.mention.span[1] : e.mention.span[0]]
            if _PART_OF.fullmatch(gap) or (
                not e.subject and e.mention.span[1] < other.mention.span[0]
            ):
                return other
    return None


def is_total(text: str, mention: NumberMention) -> bool:
    return _TOTAL.search(text[max(0, mention.span[0] - 40) : mention.span[0]]) is not None


def total_for_part(
    claim: str, claimed: Figure, holder: Figure, evidence: str, rivals: list[Figure]
) -> Figure | None:
    """The part the evidence counts out of a total the claim gives as if it were the part:
    "32,441 samples turned out positive" against "Of the 32,441 appendix samples 16 were
    positive". ``holder`` is the total ("Of the N ...") and the claim figure's subject holds a
    word of the next figure's clause that the total's own noun phrase lacks; a claim that
    writes its figure as a total too ("Of the 32,441 samples tested, 16 ...") is left alone.

    Returns:
        The part (the next figure of the same sentence, smaller than the total), or None.
    """
    if not is_total(evidence, holder.mention) or is_total(claim, claimed.mention):
        return None
    if whole_of_any(claim, claimed.mention):
        return None
    after = [r for r in rivals if r.mention.span[0] >= holder.mention.span[1]]
    if not after or after[0].mention.span[0] - holder.mention.span[1] > 80:
        return None
    part = after[0]
    if not 0 < part.mention.value < holder.mention.value:
        return None
    between = evidence[holder.mention.span[1] : part.mention.span[0]]
    if "." in between:
        return None
    own = subject_words(between)
    return part if claimed.subject & (part.subject - own) else None


_COUNTED_IN = re.compile(r"\s+(?:[^\W\d_][\w-]*\s+){1,3}(?i:in|among)\s+(?i:the\s+)?")
"""Between a count and the group it is counted in: "18 mutations in 6,912 individuals"."""
_CLAIM_COUNTED_IN = re.compile(r"\s+(?:[^\W\d_][\w-]*\s+){0,3}(?i:in|among)\s+(?i:the\s+)?")


def counted_in(
    claim: str, claimed: Figure, holder: Figure, evidence: str, rivals: list[Figure]
) -> Figure | None:
    """The count the evidence writes *in* a group the claim gives as if it were that count:
    "6,912 people with breast cancer carried the mutations" against "18 mutations in 6,912
    individuals with breast cancer". ``holder`` is the group; the claim figure's subject holds
    a word of the count's noun ("mutations"); a claim that writes a count in the group itself
    ("18 mutations in 6,912 ...", "18 of the 6,912 ...") is left alone.

    Returns:
        The count (the figure right before the group, a smaller whole number), or None.
    """
    start = claimed.mention.span[0]
    if whole_of_any(claim, claimed.mention) or any(
        other.span[1] <= start and _CLAIM_COUNTED_IN.fullmatch(claim[other.span[1] : start])
        for other in find_numbers(claim)
    ):
        return None
    before = [r for r in rivals if r.mention.span[1] <= holder.mention.span[0]]
    if not before:
        return None
    part = before[-1]
    gap = evidence[part.mention.span[1] : holder.mention.span[0]]
    if not _COUNTED_IN.fullmatch(gap) or not part.mention.value.is_integer():
        return None
    if not 0 < part.mention.value < holder.mention.value:
        return None
    return part if claimed.subject & subject_words(gap) else None


def whole_of_any(claim: str, mention: NumberMention) -> bool:
    """Whether the claim writes ``mention`` as the whole of another of its figures ("16 of
    the 32,441 samples")."""
    return any(
        other.span[1] <= mention.span[0]
        and _PART_OF.fullmatch(claim[other.span[1] : mention.span[0]])
        for other in find_numbers(claim)
    )


def whole_of(claim: str, mention: NumberMention) -> float | None:
    """The value of the whole a claim figure is counted out of ("327 of the 680 families",
    "9/10", "17 out of 58"): the claim gives it its own subject, so it is no rival value of the
    figure."""
    for other in find_numbers(claim):
        gap = claim[mention.span[1] : other.span[0]]
        if other.span[0] >= mention.span[1] and _PART_OF.fullmatch(" " + gap if gap else gap):
            return other.value
    return None
