"""Equivalent forms of a stated figure: the forms a paraphrase writes a figure of the evidence in.

A generated answer rarely copies a figure as the passage writes it. :func:`equivalent` accepts
rounding to the precision the claim writes ("62.9" -> "63", "0.557" -> "0.56"), a hedged figure
within :data:`HEDGE_TOL` ("about 60%" for "58.7%"), a unit conversion within one dimension
("10,395 nM" = "10.4 uM", "1,500 mg" = "1.5 g", "48 hours" = "2 days"), a share of two counts the
evidence states ("88 of 122" -> "72%"), and a sum of two counts of one unit written near each
other ("45 men and 77 women" -> "122 patients", :data:`SUM_GAP`). Issue 39, item 2; chosen on
the paraphrase dev set (``models/paraphrase_dev.py``). :mod:`verifai_desktop.verify.figures`
asks it when the subject rule finds no figure with the claim's very value.
"""

from __future__ import annotations

import math
import re

from verifai_desktop.verify.figure_subjects import Figure
from verifai_desktop.verify.numbers import NumberMention, compatible_units, same_value
from verifai_desktop.verify.units import COUNT_UNITS as _COUNT_UNITS
from verifai_desktop.verify.units import PEOPLE
from verifai_desktop.verify.units import SCALES as _SCALES

HEDGE_TOL = 0.05
"""Relative tolerance of a hedged claim figure ("about", "approximately", "nearly", "roughly",
"around", "almost", "over", "more than", "some", "~")."""

_HEDGE = re.compile(
    r"(?:about|approximately|approx\.?|nearly|roughly|around|almost|over|more\s+than|"
    r"less\s+than|under|some|~|≈|close\s+to|just\s+(?:over|under))\s*$",
    re.IGNORECASE,
)


def _decimals(mention: NumberMention) -> int:
    """Digits written after the decimal point of a mention's numeral (0 for "63", "1,200")."""
    match = re.search(r"\d[.·](\d+)", mention.text)
    return len(match.group(1)) if match else 0


def hedged(claim: str, mention: NumberMention) -> bool:
    """Whether ``claim`` hedges ``mention`` ("about 60%", "nearly 1,200 patients")."""
    return _HEDGE.search(claim[: mention.span[0]]) is not None


def _close(claimed: float, stated: float, decimals: int, hedge: bool) -> bool:
    """Whether ``stated`` written at ``decimals`` digits gives ``claimed`` (or is within the
    hedge tolerance)."""
    if math.isclose(round(stated, decimals), claimed, rel_tol=1e-9, abs_tol=1e-12):
        return True
    return hedge and math.isclose(stated, claimed, rel_tol=HEDGE_TOL)


def _converted(claimed: Figure, stated: Figure, decimals: int, hedge: bool) -> bool:
    """Whether ``stated`` in its unit is ``claimed`` in another unit of the same dimension."""
    a, b = _SCALES.get(claimed.mention.unit), _SCALES.get(stated.mention.unit)
    if a is None or b is None or a[0] != b[0] or a[1] == b[1]:
        return False
    value = stated.mention.value * b[1] / a[1]
    if _close(claimed.mention.value, value, decimals, hedge):
        return True
    # "48 hours" against "2 days": significant figures, not decimals, after a conversion
    digits = max(1, len(re.sub(r"\D", "", f"{claimed.mention.value:g}")))
    return math.isclose(float(f"{value:.{digits}g}"), claimed.mention.value, rel_tol=1e-9)


def _addable(a: str, b: str, total: str) -> bool:
    """Whether counts in units ``a`` and ``b`` add up to a count in unit ``total`` ("169 men
    and 88 women" to "257 patients")."""
    if compatible_units(a, b) and compatible_units(a or b, total):
        return True
    return {a, b} <= PEOPLE and total in PEOPLE | {""}


def _shares_subject(claimed: Figure, stated: Figure) -> bool:
    return not claimed.subject or bool(claimed.subject & (stated.item or stated.subject))


SUM_GAP = 80
"""Most characters between the two counts a claim's sum adds up ("45 men and 77 women").
Chosen on the paraphrase dev set: without it any two counts of the passage were summed
("Fluoroscopy was needed in 13 patients" read as 12 + 1, the lower bound of an age range and an
"n = 1"); at 80 one wrong dev claim green -> unsure and one right claim that was green only by
such a sum lost it, and on the training claims three wrong claims green -> unsure and two right
ones lost their green; at 40 two more right dev claims lost it, at 150 one training claim
turned green again."""


def _terms_of_one_sum(a: Figure, b: Figure) -> bool:
    """Whether counts ``a`` and ``b`` (``b`` after ``a``) stand near enough to be added."""
    return 0 <= b.mention.span[0] - a.mention.span[1] <= SUM_GAP


def equivalent(claim: str, claimed: Figure, evidence: list[Figure]) -> Figure | None:
    """The evidence figure that states ``claimed`` in an equivalent form, or None.

    Args:
        claim: the claim text ``claimed`` was found in (for its hedges).
        claimed: one figure of the claim.
        evidence: the figures of the evidence
            (:func:`~verifai_desktop.verify.figure_subjects.figures`).

    Returns:
        The evidence figure (for a share or a sum, its first term) whose subject shares a word
        with the claim figure's (any word, when the claim figure's subject is empty).
    """
    decimals = _decimals(claimed.mention)
    hedge = hedged(claim, claimed.mention)
    unit = claimed.mention.unit
    for e in evidence:
        if not _shares_subject(claimed, e):
            continue
        if same_value(e.mention.value, claimed.mention.value):
            continue  # the same value is stated or not by the subject rule, not as a variant
        if compatible_units(unit, e.mention.unit) and _close(
            claimed.mention.value, e.mention.value, decimals, hedge
        ):
            return e
        if _converted(claimed, e, decimals, hedge):
            return e
    integral = (e for e in evidence if e.mention.value > 0 and e.mention.value.is_integer())
    counts = [e for e in integral if e.mention.unit in _COUNT_UNITS]  # 1.26 + 1.24 is no count
    for i, part in enumerate(counts):
        for whole in counts:
            if whole is part or whole.mention.value <= part.mention.value:
                continue
            if unit == "%" and _shares_subject(claimed, part):
                share = 100.0 * part.mention.value / whole.mention.value
                if _close(claimed.mention.value, share, decimals, hedge) or math.isclose(
                    share, claimed.mention.value, abs_tol=0.5
                ):
                    return part
        if unit in _COUNT_UNITS:
            for other in counts[i + 1 :]:
                if not _addable(part.mention.unit, other.mention.unit, unit):
                    continue
                if not _terms_of_one_sum(part, other):
                    continue
                total = part.mention.value + other.mention.value
                if math.isclose(total, claimed.mention.value, rel_tol=1e-9):
                    return part
    return None
