"""Perturbation pairs from any text: a sentence beside its passage, unchanged and changed.

From a passage, pairs of (premise = the passage, hypothesis = one of its sentences) with a gold
label: the sentence as written (SUPPORT), and the sentence changed where one change flips what
it says (CONTRADICT), or the passage with the sentence restated as an aim (NO_EVIDENCE). Used by
``verifai eval self-check`` (a smoke test of the verifier on the user's own documents) and to
make training pairs. The kinds and their sources:

* number swap and number change: VerifAI's (Bojic et al. 2024) "numbers and quantities
  changed" error class, and the numerical-reasoning stress test of Naik et al. (2018);
* item swap: FEVER's claim mutations (Thorne et al. 2018: substitution of an entity by another
  of the same context), here two items of a list, two opposite direction words, or the two sides
  of a comparison exchanged; issue 26's "value of the neighbouring item of a list";
* negation inserted or removed: the negation stress test of Naik et al. (2018) and CheckList's
  negation capability (Ribeiro et al. 2020); VerifAI's "negation" error class;
* aim: a statement of aim or hypothesis is not evidence for the finding (issue 26: a window
  stating the aim decided a verdict).

A changed sentence differs from its original only where it should: the figure's digits, the two
exchanged items, or the negation words with the verb form they need ("increased" -> "did not
increase"). A change that cannot be made cleanly is not made.
"""

from __future__ import annotations

import enum
import random
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from functools import partial

from verifai_desktop.domain import NliLabel
from verifai_desktop.ingest.sentences import split_sentences
from verifai_desktop.verify.numbers import NumberMention, find_numbers, numeral_span, same_value

Span = tuple[int, int]

MIN_WORDS = 6
"""Shorter sentences are skipped (headings, fragments)."""
MAX_WORDS = 60
"""Longer sentences are skipped (run-together lists, tables read as text)."""


class PerturbKind(enum.StrEnum):
    """How a hypothesis was made from its passage (sources in the module docstring)."""

    UNCHANGED = "unchanged"
    NUMBER_SWAP = "number_swap"
    NUMBER_CHANGE = "number_change"
    ITEM_SWAP = "item_swap"
    NEGATION_INSERT = "negation_insert"
    NEGATION_REMOVE = "negation_remove"
    AIM = "aim"


GOLD: dict[PerturbKind, NliLabel] = {
    PerturbKind.UNCHANGED: NliLabel.SUPPORT,
    PerturbKind.NUMBER_SWAP: NliLabel.CONTRADICT,
    PerturbKind.NUMBER_CHANGE: NliLabel.CONTRADICT,
    PerturbKind.ITEM_SWAP: NliLabel.CONTRADICT,
    PerturbKind.NEGATION_INSERT: NliLabel.CONTRADICT,
    PerturbKind.NEGATION_REMOVE: NliLabel.CONTRADICT,
    PerturbKind.AIM: NliLabel.NO_EVIDENCE,
}
"""The gold label of each kind."""


@dataclass(frozen=True, slots=True)
class PerturbPair:
    """One (premise, hypothesis) pair with its gold label.

    Attributes:
        premise: the passage (for ``AIM``, the passage with the sentence replaced by a statement
            of aim).
        hypothesis: the sentence, changed for the CONTRADICT kinds.
        label: the gold label (:data:`GOLD` of ``kind``).
        kind: how the pair was made.
        source: the caller's id of the passage.
        original: the sentence as the passage has it.
        changed_span: half-open offsets into ``hypothesis`` of the changed text, from the first
            changed character to the last; (0, 0) for ``UNCHANGED`` and ``AIM``.
    """

    premise: str
    hypothesis: str
    label: NliLabel
    kind: PerturbKind
    source: str
    original: str
    changed_span: Span


@dataclass(frozen=True, slots=True)
class _Edit:
    text: str  # the changed sentence, or for AIM the statement of aim
    span: Span  # the changed text in ``text``


_Option = Callable[[random.Random], _Edit | None]

_NEGATION = re.compile(
    r"\b(?:not|no|never|none|neither|nor|without|cannot|absence|absent|lack(?:s|ed|ing)?|"
    r"fail(?:s|ed)?|unable|non-?significant(?:ly)?|insignificant|unaffected|unchanged)\b|n't\b",
    re.IGNORECASE,
)
_ADVERB = (
    r"(?:significantly|strongly|positively|negatively|independently|markedly|also|further|"
    r"consistently|directly|inversely|substantially|statistically|greatly|dramatically|"
    r"specifically|selectively|efficiently|effectively|partially|completely|robustly)"
)
_RESULT = (
    r"(?:associat|relat|correlat|link|higher|lower|greater|smaller|increas|decreas|reduc|"
    r"improv|elevat|different|significant|requir|necessary|sufficient|observ|detect|found|"
    r"affect|alter|chang|present|effective|able|involv|responsible|predict|express|essential|"
    r"important|critical|common|frequent|consistent|similar|induc|inhibit|suppress|enhanc|"
    r"promot|prevent|caus|mediat|regulat|activat|impair|restor|protect|attenuat|abolish|"
    r"accelerat|delay|prolong|shorten|superior|inferior|safe|efficac|beneficial|used|been)\w*"
)
_AUX = re.compile(
    rf"\b(?P<aux>is|are|was|were|has|have|had|can|could|may|might|will|would|should|must)"
    rf"(?=\s+(?:{_ADVERB}\s+)?{_RESULT}\b)"
)
_RELATIVE = frozenset({"who", "which", "that", "whom", "whose"})
# Verbs whose negation flips a finding; their past and third-person forms are negated with do.
_VERBS = (
    "increase", "decrease", "reduce", "improve", "inhibit", "induce", "cause", "prevent",
    "promote", "enhance", "suppress", "affect", "alter", "predict", "lower", "raise", "block",
    "activate", "attenuate", "impair", "abolish", "accelerate", "delay", "extend", "shorten",
    "modulate", "regulate", "stimulate", "trigger", "mediate", "exacerbate", "worsen",
    "diminish", "restore", "rescue", "protect", "correlate", "differ", "require", "reverse",
    "limit", "elevate", "augment", "impede", "facilitate", "potentiate", "disrupt", "decline",
    "lead", "rise", "fall", "grow",
)  # fmt: skip
_IRREGULAR_PAST = {"lead": "led", "rise": "rose", "fall": "fell", "grow": "grew",
                   "occur": "occurred", "control": "controlled", "stop": "stopped",
                   "prefer": "preferred", "show": "showed", "find": "found"}  # fmt: skip


def _past(base: str) -> str:
    if base in _IRREGULAR_PAST:
        return _IRREGULAR_PAST[base]
    if base.endswith("e"):
        return base + "d"
    return base[:-1] + "ied" if re.search(r"[^aeiou]y$", base) else base + "ed"


def _third(base: str) -> str:
    if re.search(r"(?:s|sh|ch|x|z|o)$", base):
        return base + "es"
    return base[:-1] + "ies" if re.search(r"[^aeiou]y$", base) else base + "s"


_PAST_TO_BASE = {_past(v): v for v in _VERBS}
_THIRD_TO_BASE = {_third(v): v for v in _VERBS}
_MAIN_VERB = re.compile(  # not a participle: "controlled by", "quantities required are"
    rf"\b(?:(?P<adv>{_ADVERB})\s+)?(?P<verb>[a-z]+)\b(?!-|\s+(?:by|is|are|was|were|for)\b)"
)
_NOT_A_SUBJECT = frozenset((
    "a", "an", "the", "this", "that", "these", "those", "its", "their", "his", "her", "our",
    "of", "in", "on", "at", "to", "for", "from", "by", "with", "and", "or", "but", "as",
    "than", "not", "no", "which", "who", "whom", "whose", "is", "are", "was", "were", "be",
    "been", "has", "have", "had", "do", "does", "did", "can", "could", "may", "might", "will",
    "would", "should", "must",
))  # fmt: skip
_NOT_AFTER_AUX = re.compile(
    r"\b(?P<aux>is|are|was|were|has|have|had|will|would|could|should|may|might|must|can)"
    r"\s+not\s+(?!only\b|yet\b|necessarily\b|just\b|merely\b)"
)
_DO_NOT = re.compile(  # not "did not find any": "found any" is no sentence
    rf"\b(?P<do>did|does|do)\s+not\s+(?:(?P<adv>{_ADVERB})\s+)?(?P<verb>[a-z]+)\b(?!-|\s+any\b)"
)
_SECOND_VERB = re.compile(rf"^[^,;.]*?\b(?:or|and|nor)\s+(?:{_ADVERB}\s+)?(?P<verb>[a-z]+)\b")
_NO = re.compile(
    r"\b(?P<no>[Nn]o)\s+(?P<next>(?:statistically\s+)?significant|effect|association|difference|"
    r"correlation|relationship|change|increase|decrease|reduction|benefit|impact|role|link|"
    r"evidence|effects|associations|differences|changes|correlations)\b(?:\s+(?P<after>\w+))?"
)
_NONSIGNIFICANT = re.compile(r"\b[Nn]on-?significant(?P<ly>ly)?\b")
_UP = frozenset((
    "increased", "increases", "increase", "higher", "greater", "more", "larger", "longer",
    "faster", "stronger", "better", "elevated", "enhanced", "promoted", "improved",
    "upregulated", "activated", "raised", "rose",
))  # fmt: skip
_DOWN = frozenset((
    "decreased", "decreases", "decrease", "lower", "smaller", "less", "shorter", "slower",
    "weaker", "worse", "reduced", "inhibited", "impaired", "downregulated", "suppressed",
    "diminished", "lowered", "fell",
))  # fmt: skip
_WORD = re.compile(r"[A-Za-z]+")
# Items of a list sit in different clauses; what joins two figures of one item is a range, a
# spread or a count and its total ("10-20", "12 ± 3", "3 of 12").
_BREAK = re.compile(r"[,;()]|\b(?:and|whereas|while|but|versus|vs|compared)\b")
_TIGHT_GAP = re.compile(r"\s*(?:-|\u2013|\u2014|to|±|\+/-|of|out of|/|x|\u00d7)?\s*")
_THAN = re.compile(
    r"\b(?:higher|lower|greater|smaller|more|less|fewer|better|worse|larger|longer|shorter|"
    r"faster|slower|stronger|weaker)\b[^.;:,()]*?\b(?P<p1>in|among|for|with|at|on|after|during)"
    r"\s+(?P<a>(?:[\w'-]+\s+){0,4}?[\w'-]+)\s+than\s+(?:(?:in|among|for|with|at|on|after|during)"
    r"\s+)?(?P<b>(?:[\w'-]+\s+){0,4}?[\w'-]+?)(?=\s*[,;:.()]|\s*$|\s(?:and|but|whereas|while|"
    r"which|who|p|P)\b)"
)
_AIM_TEMPLATES = (
    "We tested whether {}.", "We hypothesised that {}.", "We asked whether {}.",
    "We sought to determine whether {}.", "This study aimed to examine whether {}.",
)  # fmt: skip
_AIM_CUE = re.compile(
    r"\b(?:aim|aims|aimed|objective|purpose|sought|hypothes\w*|whether|investigat\w*|examin\w*|"
    r"assess\w*|evaluat\w*|determin\w*|designed|we (?:tested|asked|studied|explored))\b|^To\b",
    re.IGNORECASE,
)
_FINDING_CUE = re.compile(
    rf"\d|\b{_RESULT}\b|\b(?:increased|decreased|showed|revealed|demonstrated|identified)\b",
    re.IGNORECASE,
)
_REPORT = re.compile(r"\b[Ww]e\b|^(?:This|These|It|They|Such|Those)\b")  # "we show", anaphora
_CONNECTIVE = re.compile(
    r"^(?:However|Moreover|Furthermore|Instead|Finally|Lastly|Thus|Here|Therefore|Together|Hence|"
    r"Collectively|Overall|Importantly|Interestingly|Notably|Surprisingly|Similarly|Conversely|"
    r"Additionally|Consequently|Accordingly|In addition|In contrast|By contrast|In summary|"
    r"In conclusion|Taken together),\s+"
)
_SPREAD = re.compile(r"(?:CI|interval|range|±|\+/-|SD|SEM?|IQR)[\s,:;=(]*$")
_PLAIN = re.compile(r"[-\u2212]?(?:\d{1,3}(?:[,\u00a0\u2009\u202f ]\d{3})+|\d+)(?:[.·]\d+)?")


def _eligible(sentence: str) -> bool:
    """Whether a sentence can be perturbed: 6-60 words, a final stop (not a title), no note."""
    end = sentence.rstrip("\"')]\u201d\u2019")
    stop = end.endswith((".", "!")) and not end.endswith("..")
    return MIN_WORDS <= len(sentence.split()) <= MAX_WORDS and stop and sentence[:1].isalnum()


def _replace(sentence: str, span: Span, new: str) -> _Edit:
    a, b = span
    return _Edit(sentence[:a] + new + sentence[b:], (a, a + len(new)))


def _swap(sentence: str, first: Span, second: Span) -> _Edit:
    """Exchange two non-overlapping spans, ``first`` before ``second``."""
    (a, b), (c, d) = first, second
    return _Edit(
        sentence[:a] + sentence[c:d] + sentence[b:c] + sentence[a:b] + sentence[d:], (a, d)
    )


def _fixed(edits: Iterable[_Edit], sentence: str) -> list[_Option]:
    """Options that make a change fixed in advance (only real changes of ``sentence``)."""

    def option(edit: _Edit) -> _Option:
        return lambda _rng: edit

    return [option(e) for e in edits if e.text != sentence]


@dataclass(frozen=True, slots=True)
class _Figure:
    mention: NumberMention  # offsets into its sentence
    numeral: Span  # the digits, offsets into its sentence
    text: str  # the digits as written


def _figures(sentence: str) -> list[_Figure]:
    """Figures a perturbation may change: plain digits, not CI levels, p-values, rate bases."""
    out = []
    for mention in find_numbers(sentence):
        a, b = numeral_span(mention)
        after = sentence[mention.span[1] : mention.span[1] + 12].lstrip()
        if not _PLAIN.fullmatch(sentence[a:b]) or after.startswith(("CI", "confidence")):
            continue  # an exponent, a number word, or the level of a confidence interval
        if re.search(r"\b(?:[pP]\s*[<>=≤≥]|per)\s*$", sentence[max(0, a - 8) : a]):
            continue  # a p-value or the base of a rate ("per 100,000")
        out.append(_Figure(mention, (a, b), sentence[a:b]))
    return out


def _decimals(numeral: str) -> int:
    match = re.search(r"[.·](\d+)$", numeral)
    return len(match.group(1)) if match else 0


def _format_like(numeral: str, value: float) -> str:
    """``value`` written as ``numeral`` is: sign character, grouping, decimal point, decimals."""
    decimals = _decimals(numeral)
    group = re.search(r"\d([,\u00a0\u2009\u202f ])\d{3}", numeral)
    body = f"{abs(value):,.{decimals}f}" if group else f"{abs(value):.{decimals}f}"
    point = "·" if "·" in numeral else "."
    body = (
        body.replace(",", "\0").replace(".", point).replace("\0", group.group(1) if group else "")
    )
    sign = numeral[0] if numeral[0] in "-\u2212" else "-"
    return (sign if value < 0 else "") + body


def _checked(edit: _Edit, at: int, value: float) -> _Edit | None:
    """``edit`` if its sentence reads ``value`` at offset ``at``, else None."""
    found = find_numbers(edit.text)
    return edit if any(m.span[0] == at and same_value(m.value, value) for m in found) else None


def _changed_value(
    value: float, decimals: int, unit: str, taken: list[float], rng: random.Random
) -> float | None:
    """A plausible other value: +/- 10-50 %, rounded like the original, not one of ``taken``."""
    for _ in range(10):
        factor = rng.uniform(0.1, 0.5)
        up = rng.random() < 0.5 and not (unit == "%" and value <= 100 < value * (1 + factor))
        new = round(value * (1 + factor if up else 1 - factor), decimals)
        if new * value > 0 and not any(same_value(new, t) for t in [value, *taken]):
            return new
    new = round(value + 10.0**-decimals, decimals)  # small values: one step of the last digit
    return None if any(same_value(new, t) for t in [value, *taken]) else new


@dataclass(frozen=True, slots=True)
class _Passage:
    text: str
    sentences: tuple[Span, ...]
    figures: tuple[list[_Figure], ...]  # per sentence

    def sentence(self, i: int) -> str:
        a, b = self.sentences[i]
        return self.text[a:b]


def _tight(sentence: str, x: _Figure, y: _Figure) -> bool:
    """Whether two figures of one sentence belong together ("10-20", "12 ± 3", "3 of 12")."""
    first, second = sorted((x, y), key=lambda f: f.mention.span[0])
    gap = sentence[first.mention.span[1] : second.mention.span[0]]
    return _TIGHT_GAP.fullmatch(gap) is not None or _BREAK.search(gap) is None


def _interval(sentence: str, x: _Figure, y: _Figure) -> bool:
    """Whether ``y`` opens an interval in brackets after ``x`` ("2.16 (1.55 to 2.78)")."""
    gap = sentence[x.mention.span[1] : y.mention.span[0]]
    return x.mention.unit == y.mention.unit and re.fullmatch(r"\s*[(\[]\s*", gap) is not None


def _number_swaps(passage: _Passage, i: int) -> list[_Option]:
    sentence = passage.sentence(i)
    options: list[_Option] = []
    for fig in passage.figures[i]:
        partners = {
            (p.text, p.mention.value)
            for j, figs in enumerate(passage.figures)
            for p in figs
            if p.mention.unit == fig.mention.unit
            and not same_value(p.mention.value, fig.mention.value)
            and (fig.mention.unit or ("." in p.text) == ("." in fig.text))
            and not (j == i and _tight(sentence, fig, p))
        }
        if partners:
            options.append(partial(_swapped, sentence, fig, sorted(partners)))
    return options


def _swapped(
    sentence: str, fig: _Figure, partners: list[tuple[str, float]], rng: random.Random
) -> _Edit | None:
    new, value = rng.choice(partners)
    return _checked(_replace(sentence, fig.numeral, new), fig.numeral[0], value)


def _number_changes(passage: _Passage, i: int) -> list[_Option]:
    taken = [f.mention.value for figs in passage.figures for f in figs]
    sentence = passage.sentence(i)
    return [partial(_changed, sentence, f, taken) for f in passage.figures[i] if f.mention.value]


def _changed(sentence: str, fig: _Figure, taken: list[float], rng: random.Random) -> _Edit | None:
    new = _changed_value(fig.mention.value, _decimals(fig.text), fig.mention.unit, taken, rng)
    if new is None:
        return None
    edit = _replace(sentence, fig.numeral, _format_like(fig.text, new))
    return _checked(edit, fig.numeral[0], new)


def _ending(word: str) -> str:
    """The inflection class of a direction word, so that swapped words fit each other's slot."""
    found = (suffix for suffix in ("ed", "es", "er", "s", "ing") if word.endswith(suffix))
    return next(found, {"more": "er", "less": "er", "worse": "er", "better": "er"}.get(word, ""))


def _item_swaps(passage: _Passage, i: int) -> list[_Option]:
    sentence = passage.sentence(i)
    pairs: list[tuple[Span, Span]] = []
    every = passage.figures[i]
    figs = [  # findings, not the spread or interval around one ("± 3", "CI 2-5", "2.1 (1.5-3)")
        f
        for k, f in enumerate(every)
        if not _SPREAD.search(sentence[: f.numeral[0]])
        and not (k and (_tight(sentence, every[k - 1], f) or _interval(sentence, every[k - 1], f)))
    ]
    for x, fx in enumerate(figs):  # "X (12%) and Y (30%)" -> "X (30%) and Y (12%)"
        same_unit = [f for f in figs[x + 1 :] if f.mention.unit == fx.mention.unit]
        if same_unit:  # the next figure of the unit: items of one list sit side by side
            fy = same_unit[0]
            gap = sentence[fx.numeral[1] : fy.numeral[0]]
            if (
                not same_value(fx.mention.value, fy.mention.value)
                and not _tight(sentence, fx, fy)
                and len(gap.split()) <= 15  # a list's neighbours, not figures far apart
            ):
                pairs.append((fx.numeral, fy.numeral))
    words = [w for w in _WORD.finditer(sentence) if w.group() in _UP | _DOWN]  # "A rose, B fell"
    for x, wx in enumerate(words):
        for wy in words[x + 1 :]:
            lx, ly = wx.group(), wy.group()
            opposite = (lx in _UP and ly in _DOWN) or (lx in _DOWN and ly in _UP)
            apart = _BREAK.search(sentence[wx.end() : wy.start()]) is not None
            if opposite and apart and _ending(lx) == _ending(ly):
                pairs.append((wx.span(), wy.span()))
    for match in _THAN.finditer(sentence):  # "higher in A than in B" -> "... in B than in A"
        if match["a"].lower() != match["b"].lower():
            pairs.append((match.span("a"), match.span("b")))
    return _fixed((_swap(sentence, first, second) for first, second in pairs), sentence)


def _previous_word(sentence: str, pos: int) -> str:
    match = re.search(r"([\w'-]+)\s+$", sentence[:pos])
    return match.group(1).lower() if match else ""


def _negation_inserts(passage: _Passage, i: int) -> list[_Option]:
    sentence = passage.sentence(i)
    if _NEGATION.search(sentence) or _AIM_CUE.search(sentence) or "?" in sentence:
        return []  # a negated sentence, or an aim, whose negation is no clean contradiction
    edits = [  # "was associated" -> "was not associated"
        _replace(sentence, m.span("aux"), "cannot" if m["aux"] == "can" else m["aux"] + " not")
        for m in _AUX.finditer(sentence)
        if _previous_word(sentence, m.start()) not in _RELATIVE  # not "patients who were ..."
    ]
    if not edits:
        for match in _MAIN_VERB.finditer(sentence):  # "increased" -> "did not increase"
            verb = match["verb"]
            base = _PAST_TO_BASE.get(verb) or _THIRD_TO_BASE.get(verb)
            subject = _previous_word(sentence, match.start())
            if base is None or not subject or subject in _NOT_A_SUBJECT or subject.endswith("ly"):
                continue  # "the increased risk", "with reduced", "dynamically controlled"
            do = "did" if verb in _PAST_TO_BASE else "does"
            adverb = f"{match['adv']} " if match["adv"] else ""
            edits.append(_replace(sentence, match.span(), f"{do} not {adverb}{base}"))
    return _fixed(edits, sentence)


def _negation_removals(passage: _Passage, i: int) -> list[_Option]:
    sentence = passage.sentence(i)
    if re.search(r"\b(?:not only|whether or not|no longer|no more than|neither|nor)\b", sentence):
        return []
    edits = [
        _replace(sentence, m.span(), m["aux"] + " ") for m in _NOT_AFTER_AUX.finditer(sentence)
    ]
    for match in re.finditer(r"\b[Cc]an(?:not|\s+not)\b", sentence):
        edits.append(_replace(sentence, match.span(), match.group()[0] + "an"))
    for match in _DO_NOT.finditer(sentence):  # "did not increase" -> "increased"
        second = _SECOND_VERB.match(sentence, match.end())
        if second and second["verb"] in _VERBS:
            continue  # "does not increase A or induce B": the second verb needs the "does" too
        verb, do = match["verb"], match["do"]
        form = _past(verb) if do == "did" else _third(verb) if do == "does" else verb
        adverb = f"{match['adv']} " if match["adv"] else ""
        edits.append(_replace(sentence, match.span(), adverb + form))
    for match in _NO.finditer(sentence):  # "no significant effect" -> "a significant effect"
        noun = match["after"] if "significant" in match["next"] else match["next"]
        capital = match["no"] == "No"
        if noun and (noun == "evidence" or re.search(r"[^su]s$", noun)):  # plural, mass noun: drop
            new = match["next"][0].upper() + match["next"][1:] if capital else match["next"]
            edits.append(_replace(sentence, (match.start(), match.end("next")), new))
        else:
            article = "an" if match["next"][0] in "aeiou" else "a"
            edits.append(
                _replace(sentence, match.span("no"), article.capitalize() if capital else article)
            )
    for match in _NONSIGNIFICANT.finditer(sentence):  # "non-significant" -> "significant"
        new = ("S" if match.group()[0] == "N" else "s") + "ignificant" + (match["ly"] or "")
        edits.append(_replace(sentence, match.span(), new))
    return _fixed(edits, sentence)


def _aims(passage: _Passage, i: int) -> list[_Option]:
    sentence = passage.sentence(i)
    if _AIM_CUE.search(sentence) or not _FINDING_CUE.search(sentence) or _REPORT.search(sentence):
        return []
    words = {w.lower() for w in _WORD.findall(sentence) if len(w) > 3}
    for j in range(len(passage.sentences)):  # the finding must not be restated elsewhere
        other = {w.lower() for w in _WORD.findall(passage.sentence(j)) if len(w) > 3}
        if j != i and words and len(words & other) >= 0.6 * len(words):
            return []
    others = [f.mention.value for j, fs in enumerate(passage.figures) if j != i for f in fs]
    if any(same_value(f.mention.value, o) for f in passage.figures[i] for o in others):
        return []
    body = _CONNECTIVE.sub("", sentence.rstrip().rstrip(".!"))
    first = body.split()[0].rstrip(",;:")
    if first.isupper() and len(first) > 2:
        return []  # a structured abstract's label ("RESULTS ...")
    if re.fullmatch(r"[A-Z][a-z]*(?:-[a-z]+)*", first):  # "The", "A", "Small-molecule"; not "Li+"
        body = body[0].lower() + body[1:]
    return [lambda rng: _Edit(rng.choice(_AIM_TEMPLATES).format(body), (0, 0))]


_MAKERS: dict[PerturbKind, Callable[[_Passage, int], list[_Option]]] = {
    PerturbKind.NUMBER_SWAP: _number_swaps,
    PerturbKind.NUMBER_CHANGE: _number_changes,
    PerturbKind.ITEM_SWAP: _item_swaps,
    PerturbKind.NEGATION_INSERT: _negation_inserts,
    PerturbKind.NEGATION_REMOVE: _negation_removals,
    PerturbKind.AIM: _aims,
}


def perturb_passage(
    text: str,
    *,
    source: str = "",
    rng: random.Random,
    kinds: Collection[PerturbKind] = tuple(PerturbKind),
    sentence_spans: tuple[Span, ...] | None = None,
) -> tuple[PerturbPair, ...]:
    """Perturbation pairs of one passage, at most one per kind.

    For each kind, one sentence is chosen at random among the sentences that kind can change
    (6-60 words, ending in a full stop, so not a title), and one change at random among those it
    allows. One sentence, chosen at random among those any requested changing kind can change,
    is preferred by every kind that can change it, and the ``UNCHANGED`` pair uses it: each
    changed sentence sits beside its unchanged original where the passage allows.

    Args:
        text: the passage.
        source: the caller's id of the passage, copied into each pair.
        rng: the random source (the only one used; same state, same pairs).
        kinds: the kinds to make; kinds the passage cannot produce are skipped.
        sentence_spans: the passage's sentences as half-open offsets into ``text``; split with
            :func:`~verifai_desktop.ingest.sentences.split_sentences` when None.

    Returns:
        The pairs, in :class:`PerturbKind` order.
    """
    spans = split_sentences(text) if sentence_spans is None else sentence_spans
    passage = _Passage(text, spans, tuple(_figures(text[a:b]) for a, b in spans))
    eligible = [i for i, (a, b) in enumerate(spans) if _eligible(text[a:b])]
    options = {
        kind: {i: opts for i in eligible if (opts := _MAKERS[kind](passage, i))}
        for kind in PerturbKind
        if kind in kinds and kind is not PerturbKind.UNCHANGED
    }
    changeable = sorted({i for by_sentence in options.values() for i in by_sentence})
    focus = rng.choice(changeable or eligible) if eligible else None
    pairs: list[PerturbPair] = []
    if PerturbKind.UNCHANGED in kinds and focus is not None:
        sentence = passage.sentence(focus)
        pairs.append(PerturbPair(text, sentence, NliLabel.SUPPORT, PerturbKind.UNCHANGED, source,
                                 sentence, (0, 0)))  # fmt: skip
    for kind, by_sentence in options.items():
        for i in sorted(by_sentence, key=lambda i: (i != focus, rng.random())):
            (a, b), original = spans[i], passage.sentence(i)
            made = (o(rng) for o in rng.sample(by_sentence[i], len(by_sentence[i])))
            edit = next((e for e in made if e is not None and e.text != original), None)
            if edit is not None:  # an aim replaces the sentence in the premise
                aim = kind is PerturbKind.AIM
                premise = text[:a] + edit.text + text[b:] if aim else text
                hypothesis, span = (original, (0, 0)) if aim else (edit.text, edit.span)
                pairs.append(PerturbPair(premise, hypothesis, GOLD[kind], kind, source, original,
                                         span))  # fmt: skip
                break
    return tuple(pairs)


def sample_pairs(
    passages: Iterable[tuple[str, str]], *, n_per_kind: int, seed: int
) -> tuple[PerturbPair, ...]:
    """Up to ``n_per_kind`` pairs of each kind, spread over as many passages as possible.

    Passages are visited in an order shuffled by ``seed``; each gives at most one pair per kind
    (:func:`perturb_passage`, with a random source seeded by ``seed`` and the passage's
    position and id), and a kind stops being asked for once it has ``n_per_kind`` pairs.

    Args:
        passages: (source id, passage text) pairs; read once, in full.
        n_per_kind: the most pairs of one kind.
        seed: the seed; the same passages and seed give the same pairs.

    Returns:
        The pairs in the order made.
    """
    items = list(passages)
    order = list(range(len(items)))
    random.Random(seed).shuffle(order)
    counts = dict.fromkeys(PerturbKind, 0)
    out: list[PerturbPair] = []
    for index in order:
        wanted = [k for k in PerturbKind if counts[k] < n_per_kind]
        if not wanted:
            break
        source, text = items[index]
        rng = random.Random(f"{seed}:{index}:{source}")
        for pair in perturb_passage(text, source=source, rng=rng, kinds=wanted):
            counts[pair.kind] += 1
            out.append(pair)
    return tuple(out)
