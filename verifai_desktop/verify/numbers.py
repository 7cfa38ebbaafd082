"""Figures in text: where a text writes a number, its value and its unit.

A wrong figure is the error a reader of a scientific answer can least afford, and one that small
NLI models miss: VerifAI (Bojic et al. 2024) lists "numbers and quantities changed" among the
error classes of generated answers. :func:`find_numbers` finds the figures of a text with their
values and units ("12.5 %", "1,200 patients", "1.5 x 10^6", "twenty-one"), skipping citation
markers and labels ("Figure 2", "type 2", "Arg 257"); :func:`numeral_span` says where the digits
of one are written. Which subject a figure belongs to, and whether a claim's figures are stated
for the same subject, is :mod:`verifai_desktop.verify.figure_subjects`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from verifai_desktop.verify.units import SYMBOL_UNITS as _SYMBOL_UNITS
from verifai_desktop.verify.units import WORD_UNITS as _WORD_UNITS

Span = tuple[int, int]

REL_TOL = 1e-9
"""Relative tolerance for equal values (:func:`same_value`)."""


@dataclass(frozen=True, slots=True)
class NumberMention:
    """One figure in a text.

    Attributes:
        text: the figure as written, with its unit when one follows it ("12.5 %", "1,200
            patients", "320 MPa").
        value: the value in the written scale ("12.5 %" -> 12.5, "1.5 x 10^6" -> 1500000.0).
        unit: the normalised unit ("%", "mg", "mmol/l", "years", "fold", "patients", "MPa", ...),
            "" when none. A bare figure listed before a unit ("10-20 mg", "12, 30 and 5%")
            takes that unit, though its ``text`` does not show it.
        span: half-open character offsets of ``text`` in the searched text.
    """

    text: str
    value: float
    unit: str
    span: Span


def _alternation(words: list[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_WORD_ALT = _alternation([w + "s" for w in _WORD_UNITS if not w.endswith("s")] + list(_WORD_UNITS))
_ONE_UNIT = rf"(?:(?i:{_WORD_ALT})|{_alternation(list(_SYMBOL_UNITS))})"
_UNIT = re.compile(rf"(?:[ \u00a0\u2009\u202f]?|-)({_ONE_UNIT}(?:\s?/\s?{_ONE_UNIT})*)(?![\w/])")
_SIGN = "-\u2212"
_NUMERAL = re.compile(
    rf"(?<![\w)\]%.,/^])(?P<sign>[{_SIGN}])?"
    r"(?P<int>\d{1,3}(?:,\d{3})+(?![\d])|\d{1,3}(?:[ \u00a0\u2009\u202f]\d{3})+(?![\d.,]?\d)|\d+)"
    r"(?P<frac>[.·]\d+)?"
    r"(?P<exp>[eE][-+\u2212]?\d+(?![\w])|\s?[x\u00d7]\s?10(?:\^[-+\u2212]?\d+|\([-+\u2212]?\d+\)|"
    r"[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))?"
)
_SMALL = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty",
)  # fmt: skip
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
         "eighty": 80, "ninety": 90}  # fmt: skip
WORD_VALUES = {w: i for i, w in enumerate(_SMALL)} | _TENS
"""Number words and their values ("two" -> 2, "forty" -> 40)."""
_NUMBER_WORD = re.compile(
    rf"\b(?i:(?P<tens>{'|'.join(_TENS)})-(?P<unit>{'|'.join(_SMALL[1:10])})|"
    rf"(?P<word>{'|'.join(sorted(WORD_VALUES, key=len, reverse=True))}))\b"
)
# Citation markers: "[3]", "[1, 2]", "[4-6]".
_CITATION = re.compile(r"\[\s*\d+(?:\s*[-\u2013,;]\s*\d+)*\s*\]")
# Labels: "Figure 2", "Tables 3 and 4", "type 2", "Arg 257", the enumerator of ": (1) item".
_LABEL = re.compile(
    r"\b(?i:fig(?:ure)?s?|tables?|tab|sect(?:ion)?s?|sec|chap(?:ter)?s?|eqs?|equations?|"
    r"appendix|supplement(?:ary)?|panels?|box|lanes?|type|phases?|grades?|stages?|class|"
    r"steps?|exons?|introns?|chromosomes?|codons?|version|waves?|refs?|references?|no|"
    r"factors?|receptors?|lysines?|residues?|subunits?|isoforms?|domains?|helix|loops?)"
    r"\.?\s*(?:S?\d+[A-Za-z]?(?:\s*(?:,|and|&|-|\u2013|to)\s*S?\d+[A-Za-z]?)*)|"
    r"\b(?:Ala|Arg|Asn|Asp|Cys|Gln|Glu|Gly|His|Ile|Leu|Lys|Met|Phe|Pro|Ser|Thr|Trp|Tyr|Val)"
    r"[- ]?\d+|(?:^|(?<=[:;,.])|(?<=\band)|(?<=\bor))\s*\(?[1-9]\)(?=\s+[A-Za-z])"
)
PLUS_MINUS = r"±|\+/[-\u2212]"
"""The sign of a spread ("12.5 ± 3.2", "12.5 +/- 3.2"), a regular-expression alternation."""
LIST_GAP = re.compile(
    rf"\s*(?:,\s*(?:and|or)?|and|or|to|-|\u2013|\u2014|{PLUS_MINUS}|vs\.?|versus)\s*"
)
"""What stands between two figures of one list or range ("12, 30 and 5%", "10-20 mg")."""
DENOMINATOR_GAP = re.compile(r"\s*(?:(?:out )?of(?: the| all)?|/)\s*")
"""What stands between a count and its whole ("312 of the 1,200", "312/1,200")."""
SPREAD_GAP = re.compile(rf"\s*(?:{PLUS_MINUS})\s*")
"""What stands between a figure and its spread ("454 +/- 406", "12.5 ± 3.2")."""
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺\u2212", "0123456789-+-")


def same_value(a: float, b: float) -> bool:
    """Whether two figures have equal values (relative tolerance :data:`REL_TOL`)."""
    return math.isclose(a, b, rel_tol=REL_TOL)


def compatible_units(a: str, b: str) -> bool:
    """Whether figures in units ``a`` and ``b`` can state one another: equal, or one is ""."""
    return a == b or not a or not b


def _unit_at(text: str, pos: int) -> tuple[str, int] | None:
    """The normalised unit written at ``text[pos:]`` and where it ends, or None."""
    match = _UNIT.match(text, pos)
    if match is None:
        return None
    parts = []
    for part in re.split(r"\s?/\s?", match.group(1)):
        unit = _SYMBOL_UNITS.get(part)
        if unit is None:
            lower = part.lower()
            unit = _WORD_UNITS.get(lower) or _WORD_UNITS.get(lower[:-1], "")
        parts.append(unit)
    return "/".join(parts), match.end()


def _numeral_value(match: re.Match[str]) -> float:
    frac = (match["frac"] or "").replace("·", ".")  # the Lancet's decimal point
    digits = re.sub(r"[, \u00a0\u2009\u202f]", "", match.group("int")) + frac
    value = float(digits)
    if match["sign"]:
        value = -value
    exp = match["exp"]
    if exp:
        power = re.search(r"[-+]?\d+\)?$", exp.strip().translate(_SUPERSCRIPT))
        assert power is not None  # the pattern ends in digits
        value *= 10.0 ** int(power.group().rstrip(")"))
    return value


def _skipped_spans(text: str) -> list[Span]:
    return [m.span() for m in _CITATION.finditer(text)] + [m.span() for m in _LABEL.finditer(text)]


_ONE = re.compile(r"\b(?:one|a\s+single)\b", re.IGNORECASE)
_COORDINATED = re.compile(r"\s+(?:[^\W\d_][\w/-]*\s+){1,3}(?:and|or)\s+")


def _with_coordinated_ones(
    text: str, found: list[tuple[int, int, str, float, str]], skipped: list[Span]
) -> list[tuple[int, int, str, float, str]]:
    """``found`` with "one" and "a single" read as the figure 1 where a list coordinates them
    with another count: "five SH3 domains and one PX domain", "a single SH3 domain and five PX
    domains" (issue 39, attributes swapped between two counts)."""
    added = []
    for match in _ONE.finditer(text):
        start, end = match.span()
        if any(s <= start < e for s, e, *_ in found) or any(a <= start < b for a, b in skipped):
            continue
        before = [f for f in found if f[1] <= start]
        after = [f for f in found if f[0] >= end]
        if (before and _COORDINATED.fullmatch(text[before[-1][1] : start])) or (
            after and _COORDINATED.fullmatch(text[end : after[0][0]])
        ):
            added.append((start, end, text[start:end], 1.0, ""))
    return sorted(found + added) if added else found


def find_numbers(text: str) -> tuple[NumberMention, ...]:
    """The figures of a text, in order.

    Found: integers, decimals (also the Lancet's "0·5"), thousands separators ("1,234",
    "1 234"), percentages, negative values ("-0.5", also with a minus sign), both ends of a
    range ("10-20", "10 to 20") and of "12.5 ± 3.2" / "+/-", scientific notation ("1.5e6",
    "1.5 x 10^6", "1.5 x 10(6)", also with a times sign), and number words (zero to twenty, the
    tens, "twenty-five"; "one" only when a unit follows, as in "one patient", or when a list
    coordinates it, or "a single", with another count, as in "five SH3 domains and one PX
    domain", since "one of the" is no figure). "half", "twice" and "double" are relations
    between figures, not figures, and are not returned.

    Skipped: citation markers ("[3]", "[1, 2]", "[4-6]"); labels ("Figure 2", "Table 3",
    "type 2", "phase 3", "stage 2", "factor 21", "no. 5", residues such as "Arg 257", list
    enumerators such as ": (1) ..." or "; 2) ..."); numbers glued to letters ("IL-6", "p53",
    "COVID-19", "GP(3)", "4th", "10^6" alone); and four-digit years 1900-2100 without unit,
    separator or decimals: a year dates a finding rather than quantifying it, so it is not a
    figure at all (it keeps no value, and a changed year is not this module's error class).

    Args:
        text: any text.

    Returns:
        The mentions, ordered by offset; spans are half-open offsets into ``text``.
    """
    skipped = _skipped_spans(text)
    found: list[tuple[int, int, str, float, str]] = []  # start, end, text, value, unit
    for match in _NUMERAL.finditer(text):
        start, end = match.span()
        if text[start - 2 : start - 1].isalpha() and text[start - 1 : start] in ("-", "("):
            continue  # IL-6, COVID-19, GP(3)
        if re.search(r"(?:19|20)\d\d[-\u2013]$", text[max(0, start - 5) : start]):
            continue  # the end of a span of years: "born in 1941-60"
        if any(a <= start < b for a, b in skipped):
            continue
        unit_at = _unit_at(text, end)
        if unit_at is None:
            rest = text[end : end + 2]
            glued = rest[:1].isalpha() or (rest[:1] and rest[0] in "(^⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
            if glued or re.match(r"-[^\W\d]", rest):
                continue  # 4th, 25(OH)D, 5-HT, 10^6 (a bare power of ten)
            is_year = re.fullmatch(r"(19|20)\d\d|2100", match.group()) is not None
            if is_year:
                continue
            found.append((start, end, text[start:end], _numeral_value(match), ""))
        else:
            unit, unit_end = unit_at
            found.append((start, unit_end, text[start:unit_end], _numeral_value(match), unit))
    for match in _NUMBER_WORD.finditer(text):
        start, end = match.span()
        if match["tens"]:
            value = float(_TENS[match["tens"].lower()] + WORD_VALUES[match["unit"].lower()])
        else:
            value = float(WORD_VALUES[match["word"].lower()])
        unit_at = _unit_at(text, end)
        if unit_at is None and (value == 1 or re.match(r"-[^\W\d]", text[end : end + 2])):
            continue  # "one of the", "one-third"
        unit, end = unit_at if unit_at is not None else ("", end)
        found.append((start, end, text[start:end], value, unit))
    found.sort()
    found = _with_coordinated_ones(text, found, skipped)
    units = [f[4] for f in found]
    for i in range(len(found) - 2, -1, -1):  # "10-20 mg", "12, 30 and 5%": the unit distributes
        gap = text[found[i][1] : found[i + 1][0]]
        if not units[i] and units[i + 1] and LIST_GAP.fullmatch(gap):
            units[i] = units[i + 1]
    return tuple(
        NumberMention(text=t, value=v, unit=u, span=(s, e))
        for (s, e, t, v, _), u in zip(found, units, strict=True)
    )


SCIENTIFIC = re.compile(r"\s*(?:[eE][-+]?\d|[x\u00d7]\s*10|\^)")
"""What follows the digits of a figure written in scientific notation ("1.5e6", "2 x 10^6")."""


def numeral_span(mention: NumberMention) -> Span:
    """Where the digits of ``mention`` are written (without its unit), in the same text.

    Args:
        mention: a mention from :func:`find_numbers`.

    Returns:
        Half-open offsets into the text ``mention`` was found in; the whole mention for a
        number word or scientific notation.
    """
    match = re.match(rf"[{_SIGN}]?\d[\d,.·\u00a0\u2009\u202f ]*", mention.text)
    if match is None:
        return mention.span
    digits = match.group().rstrip(",.· \u00a0\u2009\u202f")
    if SCIENTIFIC.match(mention.text, len(digits)):
        return mention.span
    return mention.span[0], mention.span[0] + len(digits)
