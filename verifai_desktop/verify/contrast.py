"""Coordinated figures told apart by a contrast word: "55.2 years at their first and 63.4 years
at their second catheterization", "0.69 using a fixed-effects model and 0.62 using a
random-effects model".

Figures coordinated in one clause share its subject words (the subject rule of
:mod:`verifai_desktop.verify.figure_subjects` gives them the same ones), so a claim that binds one
figure's value to the other's group ("a mean age of 63.4 years at their first
catheterization") shares as many subject words with either. What tells them apart is a pair of
contrasting words, one next to each figure: *first* / *second*, *fixed* / *random*, *men* /
*women*. :func:`contrast_rival` finds the figure whose own stretch of the evidence holds the
claim's side of such a pair when the figure holding the claim's value holds the other side.

The pairs (:data:`CONTRAST_PAIRS`) are the contrasts structured abstracts report figures
across: time points, arms, sexes, models, analyses. Chosen on the paraphrase dev set
(``models/paraphrase_dev.py``); never on ``docs/clean``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from verifai_desktop.verify.figure_subjects import YEAR, Figure
from verifai_desktop.verify.numbers import PLUS_MINUS, NumberMention, find_numbers

CONTRAST_PAIRS: tuple[tuple[str, str], ...] = (
    ("first", "second"),
    ("fixed", "random"),
    ("men", "women"),
    ("male", "female"),
    ("males", "females"),
    ("boys", "girls"),
    ("before", "after"),
    ("pre", "post"),
    ("preoperative", "postoperative"),
    ("baseline", "follow-up"),
    ("intervention", "control"),
    ("treatment", "placebo"),
    ("treated", "untreated"),
    ("younger", "older"),
    ("systolic", "diastolic"),
    ("univariate", "multivariate"),
    ("unadjusted", "adjusted"),
    ("crude", "adjusted"),
    ("minimum", "maximum"),
    ("lowest", "highest"),
    ("inpatient", "outpatient"),
    ("primary", "secondary"),
    ("early", "late"),
    ("left", "right"),
    ("day", "night"),
    ("cases", "controls"),
)
"""Words that name the two sides a study reports one measure for; each side is a word of the
text (hyphenated words are split: "random-effects" holds "random")."""

_WORD = re.compile(r"[a-z]+(?:-up)?")
_PLUS_MINUS = re.compile(rf"(?:{PLUS_MINUS})\s*$")
_CLAUSE_EDGE = re.compile(r"[.;]\s|\b(?:whereas|while|but)\b")
_LEFT_EDGE = re.compile(r"[.;,:()\[\]]\s*|\b(?:whereas|while|but|and)\b")
LEAD_WORDS = 3
"""Words before a figure (after the last comma or bracket) that still belong to it alone ("in
women 15%"); the words after it, up to the next figure, do ("63.4 years at their second")."""


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def _own_stretch(text: str, mention: NumberMention, others: Sequence[NumberMention]) -> str:
    """The evidence between the figure before ``mention`` and the figure after it (within the
    clause): the words that belong to this figure alone. A figure after "±" or "+/-" is its
    spread and no boundary."""
    start, end = mention.span
    before = [m.span[1] for m in others if m.span[1] <= start]
    after = [m.span[0] for m in others if m.span[0] >= end]
    left = max(before, default=0)
    right = min(after, default=len(text))
    edge_left = max((m.end() for m in _LEFT_EDGE.finditer(text, left, start)), default=left)
    edge_right = next((m.start() for m in _CLAUSE_EDGE.finditer(text, end, right)), right)
    lead = text[edge_left:start].split()[-LEAD_WORDS:]
    return " ".join(lead) + " " + text[start:edge_right]


def own_years(text: str, mention: NumberMention, others: Sequence[NumberMention]) -> frozenset[str]:
    """The years written in ``mention``'s own stretch of ``text`` ("from 4.1 per 1,000 line
    days in 2009 to ..." -> {"2009"}), ``others`` the text's other figures."""
    bounds = [m for m in others if m != mention and not YEAR.fullmatch(m.text)]
    return frozenset(YEAR.findall(_own_stretch(text, mention, bounds)))


def contrast_rival(
    claim: str,
    claimed: NumberMention,
    holder: Figure,
    candidates: Sequence[Figure],
    evidence: str,
    figures: Sequence[Figure],
) -> Figure | None:
    """The evidence figure the claim's value belongs to by a contrast word, or None.

    Args:
        claim: the claim part (its words are compared whole: a part is one fact).
        claimed: the claim's figure (the years of its own stretch are compared).
        holder: the evidence figure holding the claim figure's value.
        candidates: figures of the same quantity with another value (the rivals the subject
            rule weighed, :func:`verifai_desktop.verify.figures.bind`).
        evidence: the passage ``figures`` were found in.
        figures: every figure of ``evidence`` (their positions bound each figure's stretch).

    Returns:
        A candidate in ``holder``'s sentence whose own stretch holds one side of a
        :data:`CONTRAST_PAIRS` pair that the claim names (and not the other side) while
        ``holder``'s own stretch holds the other side; None when no pair tells them apart.
    """
    said = _words(claim)
    claim_mentions = find_numbers(claim)
    mention = next((m for m in claim_mentions if m.span == claimed.span), None)
    said_years = frozenset() if mention is None else own_years(claim, mention, claim_mentions)
    bounds = [
        f.mention
        for f in figures
        if not _PLUS_MINUS.search(evidence[max(0, f.mention.span[0] - 4) : f.mention.span[0]])
    ]
    ours_text = _own_stretch(evidence, holder.mention, [m for m in bounds if m != holder.mention])
    ours = _words(ours_text) | frozenset(YEAR.findall(ours_text))
    sentence_start = evidence.rfind(". ", 0, holder.mention.span[0])
    sentence_end = evidence.find(". ", holder.mention.span[1])
    sentence_end = len(evidence) if sentence_end < 0 else sentence_end
    holder_years = YEAR.findall(ours_text)
    pairs = list(CONTRAST_PAIRS)
    for year in said_years:
        pairs += [
            (other, year) for other in holder_years if other != year and year not in holder_years
        ]
    for a, b in pairs:
        for mine, theirs in ((a, b), (b, a)):
            if mine not in ours or theirs not in said or mine in said:
                continue
            for e in candidates:
                if not sentence_start < e.mention.span[0] < sentence_end:
                    continue
                stretch = _own_stretch(evidence, e.mention, [m for m in bounds if m != e.mention])
                words = _words(stretch) | frozenset(YEAR.findall(stretch))
                if theirs in words and mine not in words:
                    return e
    return None
