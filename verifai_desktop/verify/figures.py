"""Figures bound to their subject: which clause of the evidence states each figure of a claim.

:func:`verifai_desktop.verify.figure_subjects.unstated_numbers` says which figures of a claim the
evidence does not state for the same subject. A generated answer is a paraphrase, so this
module also accepts the forms a paraphrase writes a stated figure in, and, when a figure is not
stated, looks for the value the evidence does give for the claim's subject:

* **equivalent forms** (:func:`~verifai_desktop.verify.equivalents.equivalent`): rounding,
  a hedged figure, a unit conversion, a share or a sum of stated counts;
* **the value the evidence gives instead** (:func:`bind`): when a figure of the evidence of
  the same quantity and another value shares the claim figure's subject words better than the
  figure holding the claim's value does (the words that tell the two apart point to it), the
  claim's figure is *bound to another value*: the app shows the sentence red and quotes the
  evidence's clause with its value ("the figure 48 hours: the passage gives 4 hours here (...)").
  So is the claim's value in another unit of the same dimension (:func:`_scaled`), a whole
  group where the evidence counts part of it ("all 680 families" against "327/680"), a
  confidence limit or range end given as the value ("mean kappa 0.57" against "0.33 (range
  0.18-0.57)", :func:`_qualified`), a total given as its part ("32,441 samples turned out
  positive" against "Of the 32,441 samples 16 were positive"; both
  :mod:`~verifai_desktop.verify.wholes`), and a value of coordinated figures told apart by a
  contrast word or a year ("63.4 years at their *first* catheterization" against "55.2 years
  at their first and 63.4 at their second",
  :func:`~verifai_desktop.verify.contrast.contrast_rival`). Confidence limits and levels,
  ranges and P values inside brackets, the base of a rate ("per 100 beats"), number words, the
  whole the claim counts its figure out of ("327 of the 680") and a value the claim ties to
  another year are never the other value (:func:`_rivals`, :func:`bind`). Nor, for whether a
  figure is stated, is a count the claim writes itself in another unit ("Forty-five patients
  ... into three groups", :func:`_counted_by_claim`) or the whole it counts out of.
* **what qualifies a figure** (:func:`_written_with`): a claim's spread ("454 +/- 406 IU/L"),
  confidence limit, range end or P value is never bound to another value; it is stated when
  the evidence writes it with the figure stating the one it qualifies (a spread right after
  it, the others in the bracket after it), and a spread written with no stated mean is not.

The subject of a figure is :mod:`~verifai_desktop.verify.figure_subjects`' rule (the content
words and years of its clause, the list frame and the item of a list member), with the frame of its
sentence (:func:`_framed`: a fronted "For people born in 1941-60," or "In 2008,"); "Of the 1,200
patients, 312 ..." makes 1,200 a total (:func:`~verifai_desktop.verify.wholes.totals`). Chosen
on the paraphrase dev set (``models/paraphrase_dev.py``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from verifai_desktop.domain import NliLabel
from verifai_desktop.ingest.sentences import split_sentences
from verifai_desktop.verify.contrast import contrast_rival, own_years
from verifai_desktop.verify.equivalents import equivalent
from verifai_desktop.verify.figure_subjects import YEAR, Figure, figures, is_stated, subject_words
from verifai_desktop.verify.finding import Effect, Finding
from verifai_desktop.verify.numbers import (
    PLUS_MINUS,
    SPREAD_GAP,
    NumberMention,
    compatible_units,
    find_numbers,
    same_value,
)
from verifai_desktop.verify.units import SCALES as _SCALES
from verifai_desktop.verify.wholes import counted_in, part_of, total_for_part, totals, whole_of

MIN_SHARED = 2
"""Subject words a rival figure must share with the claim figure for the claim's figure to be
bound to the rival's value (fewer when the claim figure's subject has fewer words)."""


def _words(e: Figure) -> frozenset[str]:
    return e.subject | e.item


def _same_quantity(claimed: Figure, e: Figure) -> bool:
    """Whether ``e`` can give another value of the quantity ``claimed`` names: the same unit
    (a bare figure only against a bare figure), and not a bare count against a bare ratio."""
    if e.mention.unit != claimed.mention.unit:
        return False
    return (
        bool(e.mention.unit) or e.mention.value.is_integer() == claimed.mention.value.is_integer()
    )


def bind(
    claimed: Figure,
    evidence: list[Figure],
    holder: Figure | None,
    years: frozenset[str] = frozenset(),
) -> Figure | None:
    """The evidence figure the claim figure's subject belongs to when it has another value.

    A rival is a figure of the same quantity (:func:`_same_quantity`) with another value whose
    subject shares at least :data:`MIN_SHARED` of the claim figure's subject words, more of them
    than the ``holder`` does, and, of the words that tell the two apart, at least one with the
    rival and none with the holder, or at least twice as many (and two) with the rival:
    "prevalence ... for people born in 1941-60: 493" where 493 is the overall prevalence and
    733 the 1941-60 one.

    Args:
        claimed: one figure of the claim.
        evidence: the figures of the evidence.
        holder: the evidence figure with the claim figure's value that shares the most of its
            subject words (it may share none), or None when no evidence figure has the value.
        years: the years written next to the claim figure
            (:func:`~verifai_desktop.verify.contrast.own_years`): a holder sharing one of them
            keeps the figure, whatever words the rival shares.

    Returns:
        The rival sharing the most words, or None.
    """
    if not claimed.subject:
        return None
    ours = frozenset() if holder is None else claimed.subject & _words(holder)
    best: tuple[int, Figure] | None = None
    for e in evidence:
        if same_value(e.mention.value, claimed.mention.value) or not _same_quantity(claimed, e):
            continue
        if e.item and not claimed.subject & e.item:
            continue
        theirs = claimed.subject & _words(e)
        if len(theirs) < MIN_SHARED or len(theirs) <= len(ours):
            continue
        if any(w in years for w in ours - theirs):
            continue  # the holder's year is the claim figure's: "from 4.1 in 2009 to 0.94 in 2013"
        only_theirs, only_ours = len(theirs - ours), len(ours - theirs)
        if not (only_theirs and not only_ours) and not (only_theirs >= 2 * max(only_ours, 1)):
            continue  # the words that tell the two apart do not point to the rival
        if best is None or len(theirs) > best[0]:
            best = (len(theirs), e)
    return None if best is None else best[1]


def _scaled(claimed: Figure, evidence: list[Figure]) -> Figure | None:
    """An evidence figure with the claim figure's value in another unit of the same dimension
    (or a share where the claim writes a bare figure, and back), sharing a subject word: the
    claim's unit is wrong ("5.4 grams" where the passage gives "5.4 kg")."""
    a = _SCALES.get(claimed.mention.unit)
    for e in evidence:
        if not same_value(e.mention.value, claimed.mention.value):
            continue
        b = _SCALES.get(e.mention.unit)
        scaled = a is not None and b is not None and a[0] == b[0] and a[1] != b[1]
        percent = "%" in (e.mention.unit, claimed.mention.unit) and e.mention.unit != (
            claimed.mention.unit
        )
        if (scaled or percent) and claimed.subject & _words(e):
            return e
    return None


_PER = re.compile(r"\bper\s*$|/\s*$", re.IGNORECASE)
_LEVEL = re.compile(r"\s*(?:CI|CrI|confidence|credible)\b", re.IGNORECASE)
_DIGIT = re.compile(r"\d")
_QUALIFIER = re.compile(
    r"(?:\bto|[-\u2013,;±:]|\+/-)\s*$|\b(?:CI|confidence|range|IQR|SD|SE|p\s*[=<>])", re.IGNORECASE
)


def _rivals(text: str, found: list[Figure]) -> list[Figure]:
    """The figures of ``text`` that can give a subject's value: not the base of a rate ("per
    100 beats", "/1000"), not a number word ("two cell lines" counts the text's own items), not
    a confidence level ("95% CI"), and not a figure inside brackets that qualifies the one
    before it (a confidence interval, a range, a P value: "(95% CI 0.56 to 0.84)", "(733 per
    million, 269 to 1596 per million)")."""
    out = []
    for f in found:
        start = f.mention.span[0]
        if _PER.search(text[max(0, start - 6) : start]) or not _DIGIT.match(f.mention.text):
            continue
        if _LEVEL.match(text, f.mention.span[1]):
            continue  # "95% CI": a confidence level, no value of the subject
        if _qualifies(text, f.mention):
            continue
        out.append(f)
    return out


def _qualifies(text: str, mention: NumberMention) -> bool:
    """Whether ``mention`` stands inside brackets after a figure it qualifies: a confidence
    limit, a range end, a P value ("(95% CI 0.56 to 0.84)")."""
    start = mention.span[0]
    opened = text.rfind("(", 0, start)
    inside = text[opened:start] if opened > text.rfind(")", 0, start) else ""
    return bool(_DIGIT.search(inside) and _QUALIFIER.search(inside))


_FRONTED = re.compile(
    r"(?:In|Among|For|At|After|Before|During|Within|Under|Over|By|Compared\s+with)\b[^,;]*,",
)


def _framed(text: str, found: list[Figure]) -> list[Figure]:
    """``found`` with the frame of each figure's sentence in its subject: the words of a
    fronted clause without figures ("For people born in 1941-60, ...", "In men, ...", "Among
    the 27 surgeons ...,") and the year of a sentence that names one year ("In 2008, before
    the campaigns, 23.7% of respondents ..."): they scope over every figure of the sentence,
    though a comma parts them from its clause."""
    out = []
    for start, end in split_sentences(text):
        sentence = text[start:end]
        frame: frozenset[str] = frozenset()
        fronted = _FRONTED.match(sentence.lstrip())
        if fronted and not find_numbers(fronted.group()):
            frame = subject_words(fronted.group())
        years = frozenset(YEAR.findall(sentence))
        if len(years) == 1:
            frame |= years
        for f in found:
            if start <= f.mention.span[0] < end:
                out.append(Figure(f.mention, f.subject | frame, f.item) if f.subject else f)
    return out


def _qualified(
    claim: str, claimed: Figure, holder: Figure, rivals: list[Figure], evidence: str
) -> Figure | None:
    """The figure that ``holder`` qualifies, when the claim's value is only a confidence limit
    or range end of the evidence ("mean kappa: 0.33 (range 0.18-0.57)" for a claimed mean of
    0.57): the nearest figure of the same quantity before ``holder``'s bracket. None when
    ``holder`` gives a value of its own, or the claim writes its figure as a limit too."""
    if any(r.mention == holder.mention for r in rivals):
        return None
    if _rivals(claim, [claimed]) == [] or _QUALIFIER.search(
        claim[max(0, claimed.mention.span[0] - 12) : claimed.mention.span[0]]
    ):
        return None
    opened = evidence.rfind("(", 0, holder.mention.span[0])
    before = [
        r for r in rivals
        if r.mention.span[1] <= opened and _same_quantity(claimed, r)
        and not same_value(r.mention.value, claimed.mention.value)
    ]  # fmt: skip
    if opened < 0 or not before or opened - before[-1].mention.span[1] > 3:
        return None
    return before[-1]


@dataclass(frozen=True, slots=True)
class FigureFinding:
    """What the evidence says of one figure of a claim.

    Attributes:
        claimed: the claim's figure.
        stated: the evidence figure that states it (directly or in an equivalent form), or
            None.
        rival: the evidence figure the claim's subject belongs to with another value, or the
            claim's value in another unit (:func:`bind`); None when the evidence gives no
            other value for it.
        clause: the evidence's clause holding ``rival`` (for the user), "" without one.
        held: with a ``rival``, whether the evidence also holds the claim's value (for another
            subject) or in another unit; False when it holds the value nowhere.
    """

    claimed: NumberMention
    stated: NumberMention | None
    rival: NumberMention | None
    clause: str
    held: bool = True


@functools.lru_cache(maxsize=1024)
def figure_findings(claim: str, evidence: str) -> tuple[FigureFinding, ...]:
    """Each figure of ``claim`` against ``evidence``: stated, bound to another value, or
    unstated.

    Args:
        claim: the claim (a sentence or part of one, without citation markers).
        evidence: the evidence (a passage: a figure's rival may stand in another sentence).

    Returns:
        One finding per figure of the claim, in claim order; () when the claim has no figures.
        Memoised: the figures rule asks for the same (part, passage) once per window.
    """
    claimed = _framed(claim, figures(claim))
    if not claimed:
        return ()
    stated = totals(evidence, _framed(evidence, figures(evidence)))
    rivals = _rivals(evidence, stated)
    out = []
    anchor: NumberMention | None = None  # the evidence figure stating the last claim figure
    for c in claimed:
        if _PER.search(claim[max(0, c.mention.span[0] - 6) : c.mention.span[0]]):
            out.append(FigureFinding(c.mention, c.mention, None, ""))  # a rate's base
            continue
        if _LEVEL.match(claim, c.mention.span[1]):
            out.append(FigureFinding(c.mention, c.mention, None, ""))  # "95% CI": a level
            continue
        same = [
            e for e in stated
            if same_value(e.mention.value, c.mention.value)
            and compatible_units(e.mention.unit, c.mention.unit)
        ]  # fmt: skip
        holder = max(same, key=lambda e: len(c.subject & _words(e)), default=None)
        whole = whole_of(claim, c.mention)
        theirs = [
            e for e in stated
            if not _counted_by_claim(c, e, claimed)
            and (whole is None or not same_value(e.mention.value, whole))
        ]  # fmt: skip
        stated_by = holder if holder is not None and is_stated(c, theirs) else None
        stated_by = stated_by or equivalent(claim, c, stated)
        spread = bool(out) and SPREAD_GAP.fullmatch(
            claim[out[-1].claimed.span[1] : c.mention.span[0]]
        )
        p_value = _P_VALUE.search(claim[max(0, c.mention.span[0] - 8) : c.mention.span[0]])
        if spread or p_value or _qualifies(claim, c.mention):
            # a spread, a confidence limit, a range end or a P value: never bound, stated
            # when written with the figure it qualifies ("454 +/- 406 IU/ L(P<0.03)")
            written = _written_with(evidence, anchor, c.mention, bool(spread))
            if spread and anchor is not None:  # the mean is stated: its own spread, or none
                stated_as = written
            else:
                stated_as = written or (None if stated_by is None else stated_by.mention)
            out.append(FigureFinding(c.mention, stated_as, None, ""))
            continue
        candidates = [e for e in rivals if whole is None or not same_value(e.mention.value, whole)]
        years = own_years(claim, c.mention, [f.mention for f in claimed])
        rival = bind(c, candidates, stated_by or holder, years)
        if rival is not None and (
            _opposite_time(claim, evidence, rival.mention) or _negated_word(c, rival)
        ):
            rival = None  # the rival is another time point's or the "non-" group's figure
        rival = rival or part_of(claim, c, evidence, stated)
        held = stated_by or holder
        if rival is None and held is not None:
            rival = _qualified(claim, c, held, rivals, evidence)
        if rival is None and holder is not None:
            rival = total_for_part(claim, c, holder, evidence, rivals)
        if rival is None and holder is not None:
            rival = counted_in(claim, c, holder, evidence, rivals)
        if rival is None and holder is not None:
            same_kind = [
                e for e in candidates
                if not same_value(e.mention.value, c.mention.value) and _same_quantity(c, e)
            ]  # fmt: skip
            rival = contrast_rival(claim, c.mention, holder, same_kind, evidence, rivals)
        if rival is None and holder is not None and _ratio_as_share(c, holder, evidence):
            rival = holder  # "1.23% higher" where the passage gives the relative risk 1.23
        scaled = False
        if rival is None and stated_by is None and holder is None:
            rival = _scaled(c, stated)
            scaled = rival is not None
        if rival is not None:
            out.append(
                FigureFinding(
                    c.mention,
                    None,
                    rival.mention,
                    _clause(evidence, rival.mention),
                    held=holder is not None or stated_by is not None or scaled,
                )
            )
        else:
            mention = None if stated_by is None else stated_by.mention
            out.append(FigureFinding(c.mention, mention, None, ""))
        anchor = out[-1].stated
    return tuple(out)


_BEFORE = re.compile(r"\b(?:before|prior\s+to|pre-?treatment|at\s+baseline)\b", re.IGNORECASE)
_AFTER = re.compile(r"\b(?:after|following|post-?treatment)\b", re.IGNORECASE)


def _sentence_at(text: str, pos: int) -> str:
    """The sentence of ``text`` holding offset ``pos`` ("" when none does)."""
    return next((text[a:b] for a, b in split_sentences(text) if a <= pos < b), "")


def _opposite_time(claim: str, evidence: str, rival: NumberMention) -> bool:
    """Whether the claim speaks of the time after an event and the rival's sentence only of the
    time before it, or the other way round: "after the 80-hour workweek was introduced, 85% of
    programs held didactic sessions" against "Prior to the initiation of the 80-hour workweek,
    residency programs emphasized weekly didactic sessions ... (88%)". The passage then gives
    no value for the claim's time, and the figure is unstated, not bound to the other time's
    (issue 39, a false red of the 50 dev figure answers; no shown label moved on the dev sets)."""
    theirs = _sentence_at(evidence, rival.span[0])
    for ours_re, other_re in ((_AFTER, _BEFORE), (_BEFORE, _AFTER)):
        if ours_re.search(claim) and not other_re.search(claim):
            return bool(other_re.search(theirs)) and not ours_re.search(theirs)
    return False


def _negated_word(claimed: Figure, rival: Figure) -> bool:
    """Whether the rival's subject holds a claim subject word negated by "non" or "un" that the
    claim does not: "the 117 reviews of the noncited reviewers" is no rival of "the 83 reviews by
    cited reviewers" (issue 39, a false red of the 50 dev figure answers)."""
    ours = claimed.subject
    return any(
        word.startswith(prefix) and word not in ours and word.removeprefix(prefix) in ours
        for word in _words(rival)
        for prefix in ("non-", "non", "un")
    )


_RATIO = re.compile(
    r"\b(?:(?i:(?:relative|excess)\s+risks?|(?:risk|odds|hazards?|rate|incidence)\s+ratios?)|"
    r"a?(?:RR|OR|HR|IRR)s?)\b[^.;]*$"
)


def _ratio_as_share(claimed: Figure, holder: Figure, evidence: str) -> bool:
    """Whether the claim gives as a percentage ("1.23% higher") the value the evidence gives as
    a ratio without a unit ("the relative risk ... was 1.23"): a unit error (issue 39)."""
    if claimed.mention.unit != "%" or holder.mention.unit != "":
        return False
    start = holder.mention.span[0]
    return _RATIO.search(evidence[max(0, start - 200) : start]) is not None


def _counted_by_claim(c: Figure, e: Figure, claimed: list[Figure]) -> bool:
    """Whether the evidence figure ``e`` counts what another figure of the claim counts, in a
    unit ``c`` does not have: "Forty-five patients ... were split into three groups" writes 45
    patients itself, so the evidence's "Forty-five patients" is no other value for "three"."""
    unit = e.mention.unit
    if not unit or unit == c.mention.unit:
        return False
    return any(
        o is not c and o.mention.unit == unit and same_value(o.mention.value, e.mention.value)
        for o in claimed
    )


_BRACKET_OPEN = re.compile(
    rf"(?:\s*(?:{PLUS_MINUS})\s*[\d.,]+(?:\s?[^\W\d_/]+(?:/\s?\w+)?)?)?\s*[(\[]"
)
"""The bracket right after a figure, past its spread: " (95% CI", " +/- 406 IU/ L(P"."""
_BRACKET_END = re.compile(r"[)\]]|\.\s")
_P_VALUE = re.compile(r"\bp\s*[=<>\u2264\u2265]\s*$", re.IGNORECASE)


def _written_with(
    evidence: str, anchor: NumberMention | None, mention: NumberMention, spread: bool
) -> NumberMention | None:
    """The evidence figure with ``mention``'s value that qualifies ``anchor`` as ``mention``
    qualifies the claim figure before it, or None.

    ``anchor`` is the evidence figure stating that claim figure. A spread ("454 +/- 406 IU/L",
    ``spread``) must follow it at once, after a "+/-"; a confidence limit, range end or P value
    must stand in the bracket after it ("2.50 (95% CI: 1.09-5.72)", "406 IU/ L(P<0.03)"), up to
    the bracket's close. Either qualifies the figure it follows, so it has no subject of its own
    to bind: it is stated when it is written with the same figure.
    """
    if anchor is None:
        return None
    tail = evidence[anchor.span[1] : anchor.span[1] + 80]
    if not spread:  # the bracket right after the figure (and its spread), to its close
        opened = _BRACKET_OPEN.match(tail)
        if opened is None:
            return None
        close = _BRACKET_END.search(tail, opened.end())
        tail = tail[: close.start() + 1] if close else tail
    for m in find_numbers(tail):
        if spread and not SPREAD_GAP.fullmatch(tail[: m.span[0]]):
            return None
        if same_value(m.value, mention.value) and compatible_units(m.unit, mention.unit):
            start = anchor.span[1] + m.span[0]
            return NumberMention(m.text, m.value, m.unit, (start, start + len(m.text)))
        if spread:
            return None
    return None


_CLAUSE_EDGE = re.compile(r"[;:()\[\]]|,\s|\.\s|\b(?:whereas|while|but|compared)\b")


def _clause(text: str, mention: NumberMention) -> str:
    """The stretch of ``text`` around ``mention`` between clause edges, at most 160 chars."""
    start, end = mention.span
    left = max((m.end() for m in _CLAUSE_EDGE.finditer(text, 0, start)), default=0)
    right = next((m.start() for m in _CLAUSE_EDGE.finditer(text, end)), len(text))
    left = max(left, start - 100)
    right = min(right, end + 60)
    return text[left:right].strip(" ,.;")


NO_FIGURE_HERE = (
    "the evidence here gives no figure, so it cannot say the sentence's figures are wrong"
)
"""Why a CONTRADICT from a window without figures is held back for a sentence with figures:
the verifier read the sentence as contradicted, but the figures rule found no figure at odds
with it. Of the shown conflicts of 50 dev figure answers, the one red of this kind was false
("77.5% of the total yearly prescriptions" against a bare table caption); on the paraphrase dev
set no pair moved, on the training claims one wrong claim red -> unsure, on HealthVer dev one
gold SUPPORT claim red -> unsure (issue 39)."""


def figures_rule(part: str, window: str, passage: str, guess: NliLabel) -> tuple[Finding, ...]:
    """The figures rule (:data:`~verifai_desktop.verify.finding.Rule`).

    The figures of ``part`` are read against the whole ``passage``, not only ``window``: the value a
    claim's subject really has often stands in the sentence next to the one that repeats the claim's
    figure. A figure bound to another value (:func:`bind`) where the passage also holds the claim's
    value (for another subject), or written in another unit (:func:`_scaled`; a ratio given as a
    percentage, :func:`_ratio_as_share`), is ``RED``, with the passage's clause and value quoted,
    whatever the verifier guessed. A figure bound to another value whose own value is nowhere in the
    passage is ``HOLD`` of a SUPPORT guess, the rival quoted: the passage may not report the claim's
    subject at all (another outcome or subgroup of the same study): of the reds and listed
    conflicts this rule no longer shows in the answers to 50 dev figure questions, 8 of 9 were
    false (``models/shown_conflicts.py``; README, "Conflicts that are real"). A figure the
    passage states neither directly nor in an equivalent form, for no rival value, is ``HOLD``
    of a SUPPORT guess. A CONTRADICT guess from a window that states no figure at all, on a part
    that states one, is ``HOLD`` (:data:`NO_FIGURE_HERE`).

    Returns:
        At most one finding per figure of ``part``, e.g. ``Finding("figures", Effect.RED,
        'the figure 48 hours: the passage gives 4 hours here ("on copper for 4 hours")')``.
    """
    out: list[Finding] = []
    unstated: list[str] = []
    absent: list[FigureFinding] = []
    for f in figure_findings(part, passage):
        if f.stated is not None:
            continue
        if f.rival is not None and not f.held:
            absent.append(f)
        elif f.rival is not None:
            out.append(Finding(
                "figures",
                Effect.RED,
                f'the figure {f.claimed.text}: the passage gives {f.rival.text} here '
                f'("{f.clause}")',
            ))  # fmt: skip
        else:
            unstated.append(f.claimed.text)
    if absent and guess is NliLabel.SUPPORT:
        out.extend(
            Finding(
                "figures",
                Effect.HOLD,
                f"the figure {f.claimed.text} is not in the evidence; it gives {f.rival.text} "
                f'for a subject like it ("{f.clause}")',
            )
            for f in absent
            if f.rival is not None
        )
    if guess is NliLabel.CONTRADICT and not out and find_numbers(part) and not find_numbers(window):
        out.append(Finding("figures", Effect.HOLD, NO_FIGURE_HERE))
    if unstated and guess is NliLabel.SUPPORT:
        noun, verb = ("figure", "is") if len(unstated) == 1 else ("figures", "are")
        out.append(Finding(
            "figures",
            Effect.HOLD,
            f"the {noun} {', '.join(unstated)} {verb} not stated for the same subject in the "
            "evidence",
        ))  # fmt: skip
    return tuple(out)
