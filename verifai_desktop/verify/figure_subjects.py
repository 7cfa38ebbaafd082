"""Whether a claim's figures are stated for the same subject in the evidence.

Issue 26 found the two common forms of a wrong figure in our answers: the value of the
neighbouring item of a list ("titanium 320 MPa" where the passage gives 320 MPa for steel) and a
total given where a sub-count was asked ("1,200 patients developed sepsis" where 312 of 1,200
did). :func:`figures` gives each figure of a text
(:func:`~verifai_desktop.verify.numbers.find_numbers`) with the words of its subject;
:func:`unstated_numbers` gives the figures of a claim that the evidence does not state *for the
same subject*.

The subject rule, per sentence:

* a figure's clause is the stretch of its sentence between clause breaks (``; , ( ) [ ] :`` and
  the words *and, whereas, while, but, respectively, compared with/to, versus, vs*, and *even*
  before *in, when, if, ...* inside a sentence: "6.1 even in gastric juice at 2.0"); its
  subject is the content words of that clause (lower-cased, stopwords and generic statistics
  words such as *mean* or *CI* removed, plural and -ed/-ing endings stripped), the figure's own
  unit excluded. A clause with no content word borrows: a share in brackets right after a
  count ("107 (15.3%)") takes the count's subject; a figure not in brackets that runs straight
  into the next clause ("107 (15.3%) had asthma"; read past the total of "1 out of 5,861
  controls") takes that clause; otherwise the nearest
  preceding clause with content words ("nausea (12%)", "mortality: 12%"), or else the next
  clause when that holds no figure of its own. A figure in brackets whose clause holds only a
  year ("(12.7% in 2009 versus 7.4% in 2008)") borrows too, and keeps its year: the words
  before the bracket, back to the last punctuation ("and English respondents were advised to
  use other remedies for coughs and colds ... (", not only "colds ... (");
* a change "from 4.1 ... in 2009 to 0.94 in 2013" breaks before its "to" when words stand
  between the two figures (a range "from 0.2 to 0.5 cm" stays one clause); of two counts of
  different units (people, mice, cases ...) joined by "and" ("169 men and 88 women with aortic
  stenosis"), the first takes the words after the second;
* the denominator of "312 of (the) 1,200", "312/1,200" or "312 out of 1,200" has an empty subject:
  it states a total, which any equal figure of the evidence states;
* figures with one unit in different clauses of a sentence form a list. When every member but
  the first has its words on one side of the figure ("320 MPa for steel, 110 MPa for
  titanium"), the first member's words on the other side ("Tensile strength was") are the
  list's frame, shared by all members; the words that tell members apart are their items
  (when every other member opens with one preposition, "for depression 2.50, for
  neck-shoulder disorders 1.98", the first member's item is what follows its own);
* "A, B and C had 12%, 30% and 5%, respectively" pairs the i-th item with the i-th figure.

A claim figure is *stated* when a figure of the evidence has an equal value (relative tolerance
1e-9), a compatible unit (equal, or one side without a unit), and the same subject: the claim
figure's subject shares a word with the evidence figure's item when that figure is a list
member, otherwise with its subject; a claim figure with an empty subject (a total) needs only
the value and unit, and an evidence figure with an empty subject states only such totals. The
subject must also be nearest: when a figure of the evidence with another value (and a
compatible unit) shares strictly more of the claim figure's subject words, and strictly more in
proportion (Jaccard), the claim's subject belongs to that figure and the value is unstated.
On one figure of each of 300 SciFact corpus sentences, swapped for another figure of its
abstract with the same unit (:mod:`verifai_desktop.verify.perturb`), this rule caught 85%
(139 of 164), against 62% without it; it flagged 15 of 34 SciFact train claims labelled SUPPORT
that have figures against their abstract, against 13 without it (paraphrase, rounding and labels
such as "BRCA 1" are its false alarms there). The unchanged sentences themselves are never
flagged against their own abstract (0 of 300).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from verifai_desktop.ingest.sentences import split_sentences
from verifai_desktop.verify.numbers import (
    DENOMINATOR_GAP,
    LIST_GAP,
    SPREAD_GAP,
    WORD_VALUES,
    NumberMention,
    compatible_units,
    find_numbers,
    same_value,
)
from verifai_desktop.verify.units import COUNT_UNITS

YEAR = re.compile(r"(?<![\w.,])(?:19|20)\d\d(?![\w%]|[.,]\d)")
"""A year written alone ("in 2009"), not part of a figure ("2009.5", "2009%")."""

_STOP = frozenset((
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with", "without",
    "and", "or", "nor", "but", "not", "no", "than", "then", "into", "onto", "over", "under",
    "between", "among", "during", "after", "before", "within", "across", "through", "per",
    "via", "upon", "about", "above", "below", "is", "are", "was", "were", "be", "been",
    "being", "am", "has", "have", "had", "having", "do", "does", "did", "can", "could", "may",
    "might", "will", "would", "shall", "should", "must", "this", "that", "these", "those",
    "it", "its", "they", "them", "their", "there", "here", "we", "our", "us", "you", "your",
    "he", "she", "his", "her", "him", "i", "me", "my", "which", "who", "whom", "whose", "what",
    "when", "where", "while", "whereas", "whether", "if", "as", "so", "such", "also", "only",
    "both", "each", "all", "any", "some", "more", "most", "less", "very", "much", "many",
    "other", "another", "same", "either", "neither", "respectively", "approximately", "around",
    "nearly", "almost", "roughly", "just", "out", "overall", "total", "mean", "median",
    "average", "sd", "se", "sem", "ci", "confidence", "interval", "iqr", "range", "value",
    "level", "rate", "ratio", "rr", "group", "showed", "shown", "found", "observed", "reported",
    "compared", "versus", "vs",
)) | frozenset(WORD_VALUES)  # fmt: skip
_GROUP_LETTERS = frozenset("ABCDEFGHJKLMOQRSTUVWXYZ")  # not I, nor the statistics' P and N
# words, and years: a year names a time point, part of a figure's subject ("2009 23.7%")
_TOKEN = re.compile(r"[^\W\d_][\w]*(?:[-'][\w]+)*|(?<![\w.,])(?:19|20)\d\d(?![\w%]|[.,]\d)")
_CLAUSE_BREAK = re.compile(
    r"[;,()\[\]:]|\b(?:and|whereas|while|but|respectively|compared\s+(?:with|to)|versus|vs|"
    r"(?<=\w\s)even(?=\s+(?:in|when|though|if|at|with|under|after)\b))\b\.?",
    re.IGNORECASE,
)
_ITEM_SEP = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+")
_RESPECTIVELY_GAP = re.compile(r"[\s,]*")
_COORDINATED = re.compile(r"\s*,?\s*(?:and|or)\s+")
_FROM = re.compile(r"\bfrom\s*$", re.IGNORECASE)
_TO = re.compile(r"\bto\s+$", re.IGNORECASE)
_OPEN = re.compile(r"\s*[(\[]\s*")
_PREDICATE = re.compile(r"[\s()\[\]#]*(?![PpNn]\s*[=<>\u2264\u2265])[^\W\d_]")  # not "(P=0.03)"


def _stem(word: str) -> str:
    """Lower-case ``word`` and strip a possessive, plural, -ed, -ing and a final e
    (consistently, not exactly): "men's" is "men"."""
    w = word.lower().removesuffix("'s").removesuffix("'")
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        w = w[:-1]
    for suffix in ("ing", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            break
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


@dataclass(frozen=True, slots=True)
class _Word:
    start: int
    key: str


@dataclass(frozen=True, slots=True)
class Figure:
    """A mention with its subject words and, for a list member, the words that identify it.

    Attributes:
        mention: the figure as found.
        subject: stems of the content words of its clause (the module docstring's rule).
        item: for a list member, the stems that tell it from the other members; else empty.
    """

    mention: NumberMention
    subject: frozenset[str]
    item: frozenset[str]


def _content_words(sentence: str, mentions: tuple[NumberMention, ...]) -> list[_Word]:
    words = []
    for match in _TOKEN.finditer(sentence):
        token, start = match.group(), match.start()
        if any(a <= start < b for a, b in (m.span for m in mentions)):
            continue
        if len(token) == 1:
            # "group A", "arm B": a capital letter names a group, except the sentence's article
            if token not in _GROUP_LETTERS or not sentence[:start].strip():
                continue
        elif token.lower() in _STOP or sentence[max(0, start - 4) : start].lower() == "per ":
            continue  # "per million": the base of a rate, not a subject
        words.append(_Word(start, _stem(token)))
    return words


def subject_words(text: str) -> frozenset[str]:
    """The stems a figure's subject is made of, for any stretch of text: its content words and
    years, as :func:`figures` reads them (stopwords and statistics words left out)."""
    return frozenset(w.key for w in _content_words(text, find_numbers(text)))


def _clauses(sentence: str, mentions: tuple[NumberMention, ...]) -> list[int]:
    """Start offsets of the clauses of ``sentence`` (breaks inside a figure do not count, nor
    the "and" of "between 1961 and 1985"; a change "from 4.1 ... in 2009 to 0.94 in 2013"
    breaks before its "to")."""
    starts = [0]
    for match in _CLAUSE_BREAK.finditer(sentence):
        if any(a <= match.start() < b for a, b in (m.span for m in mentions)):
            continue
        if re.search(r"\bbetween\s+\S+\s*$", sentence[: match.start()], re.IGNORECASE):
            continue
        starts.append(match.end())
    for j, mention in enumerate(mentions[:-1]):
        # "from 4.1 per 1000 line days in 2009 to 0.94 in 2013": "to" opens the second figure's
        # clause when words stand between the two (not the range "from 0.2 to 0.5 cm")
        if not _FROM.search(sentence, 0, mention.span[0]):
            continue
        for k in range(j + 1, len(mentions)):
            gap_start = mentions[k - 1].span[1]
            to = _TO.search(sentence[gap_start : mentions[k].span[0]])
            if to is not None:
                if _TOKEN.search(sentence, mention.span[1], gap_start + to.start()):
                    starts.append(gap_start + to.start())
                break
    return sorted(set(starts))


def _respectively(
    sentence: str, mentions: tuple[NumberMention, ...], words: list[_Word]
) -> dict[int, tuple[frozenset[str], frozenset[str]]]:
    """Subject and item of each figure of a "..., respectively" list, by mention index."""
    pos = sentence.lower().find("respectively")
    if pos < 0:
        return {}
    last = max((i for i, m in enumerate(mentions) if m.span[1] <= pos), default=-1)
    if last < 0 or not _RESPECTIVELY_GAP.fullmatch(sentence[mentions[last].span[1] : pos]):
        return {}
    first = last
    while first > 0 and LIST_GAP.fullmatch(
        sentence[mentions[first - 1].span[1] : mentions[first].span[0]]
    ):
        first -= 1
    # "2.29 ± 0.11 and 1.80 ± 0.07, respectively": a spread goes with the figure before it
    members = [
        i
        for i in range(first, last + 1)
        if i == first
        or not SPREAD_GAP.fullmatch(sentence[mentions[i - 1].span[1] : mentions[i].span[0]])
    ]
    k = len(members)
    segments = _ITEM_SEP.split(sentence[: mentions[first].span[0]])
    if k < 2 or len(segments) < k:
        return {}
    items: list[frozenset[str]] = []
    for j, segment in enumerate(segments[-k:]):
        tokens = _TOKEN.findall(segment)
        if j == 0:  # "The tensile strengths of steel": the words after the last stopword
            kept = []
            for token in reversed(tokens):
                if token.lower() in _STOP:
                    break
                kept.append(token)
        elif j == k - 1:  # "aluminium were": the words before the first stopword
            kept = []
            for token in tokens:
                if token.lower() in _STOP:
                    break
                kept.append(token)
        else:
            kept = [t for t in tokens if t.lower() not in _STOP]
        if not kept:
            return {}
        items.append(frozenset(_stem(t) for t in kept))
    frame = frozenset(w.key for w in words) - frozenset[str]().union(*items)
    spans = zip(items, members, [*members[1:], last + 1], strict=True)  # member and spread
    return {i: (it | frame, it) for it, a, b in spans for i in range(a, b)}


def _only_years(keys: list[str]) -> bool:
    return all(YEAR.fullmatch(k) for k in keys)


def _in_brackets(prefix: str) -> bool:
    """Whether the text after ``prefix`` is inside an open bracket."""
    return prefix.count("(") + prefix.count("[") > prefix.count(")") + prefix.count("]")


def _stretch_before(
    sentence: str, starts: list[int], clause_words: list[list[_Word]], at: int
) -> list[_Word]:
    """The words before the bracket open at ``at``, back to the last punctuation break:
    "and English respondents were advised to use other remedies for coughs and colds ... (",
    not only "colds ... (" after the list's "and"."""
    opened = max(sentence.rfind("(", 0, at), sentence.rfind("[", 0, at))
    out: list[_Word] = []
    for j in range(bisect_right(starts, opened) - 1, -1, -1):
        out = clause_words[j] + out
        if starts[j] == 0 or sentence[starts[j] - 1] in ";,:()[]":
            break
    return out


def _analyse(sentence: str) -> list[Figure]:
    """The figures of one sentence with their subjects (the rule in the module docstring)."""
    mentions = find_numbers(sentence)
    if not mentions:
        return []
    words = _content_words(sentence, mentions)
    starts = _clauses(sentence, mentions)
    n_clauses = len(starts)
    clause_words: list[list[_Word]] = [[] for _ in range(n_clauses)]
    for word in words:
        clause_words[bisect_right(starts, word.start) - 1].append(word)
    clause_of = [bisect_right(starts, m.span[0]) - 1 for m in mentions]
    masked = sentence
    for m in mentions:  # figures as "#", so that "107 (15.3%) had" reads "# (#) had"
        masked = masked[: m.span[0]] + "#" * (m.span[1] - m.span[0]) + masked[m.span[1] :]
    sides: list[tuple[list[str], list[str]]] = []
    for i, mention in enumerate(mentions):
        c = clause_of[i]
        left = [w.key for w in clause_words[c] if w.start < mention.span[0]]
        right = [w.key for w in clause_words[c] if w.start >= mention.span[1]]
        if i > 0 and DENOMINATOR_GAP.fullmatch(sentence[mentions[i - 1].span[1] : mention.span[0]]):
            left, right = [], []  # the total of "312 of 1,200"
        elif (
            not left
            and not right
            and i > 0
            and _OPEN.fullmatch(sentence[mentions[i - 1].span[1] : mention.span[0]])
        ):
            left, right = sides[i - 1]  # "107 (15.3%)": the share has the count's subject
        elif _only_years(left + right) and (
            not (left or right) or _in_brackets(sentence[: mention.span[0]])
        ):
            # no words of its own, or only a year in brackets ("(12.7% in 2009 versus 7.4% in
            # 2008)"): the figure borrows a clause with words, and keeps its year
            if left or right:  # a year: the stretch before the bracket, back to punctuation
                before = [_stretch_before(sentence, starts, clause_words, mention.span[0])]
            else:
                before = [clause_words[j] for j in range(c - 1, -1, -1) if clause_words[j]]
            after = [j for j in range(c + 1, n_clauses) if clause_words[j]]
            bracketed = _in_brackets(sentence[: mention.span[0]])
            end = mention.span[1]
            if i + 1 < len(mentions) and DENOMINATOR_GAP.fullmatch(
                sentence[end : mentions[i + 1].span[0]]
            ):
                end = mentions[i + 1].span[1]  # "1 out of 5,861 controls": past the total
            if after and _PREDICATE.match(masked, end) and not bracketed:
                right = [w.key for w in clause_words[after[0]]]  # "107 (15.3%) had asthma"
            elif before:
                left = [w.key for w in before[0]] + left  # "nausea (12%)", "mortality: 12%"
            elif after and after[0] == c + 1 and c + 1 not in clause_of:
                right = right + [w.key for w in clause_words[c + 1]]
        sides.append((left, right))
    # "169 men and 88 women with aortic stenosis": counts of two units joined by "and" share
    # the words after the second (counts only: not "1168 IU/L and nine months after")
    for i in range(len(mentions) - 2, -1, -1):
        first, second = mentions[i], mentions[i + 1]
        if (
            not sides[i][1]
            and sides[i + 1][1]
            and first.unit
            and second.unit
            and first.unit != second.unit
            and {first.unit, second.unit} <= COUNT_UNITS
            and _COORDINATED.fullmatch(sentence[first.span[1] : second.span[0]])
        ):
            sides[i] = (sides[i][0], sides[i + 1][1])
    subjects = [frozenset(left + right) for left, right in sides]
    items: list[frozenset[str]] = [frozenset()] * len(mentions)
    for unit in {m.unit for m in mentions}:
        members: list[int] = []
        for i, m in enumerate(mentions):  # one member per clause: "10-20 mg" is one item
            if (
                m.unit == unit
                and subjects[i]
                and clause_of[i] not in [clause_of[j] for j in members]
            ):
                members.append(i)
        if len(members) < 2:
            continue
        lead = _shared_lead(sentence, starts, clause_of, members, mentions, clause_words)
        member_items = _list_items(members, sides, subjects, lead)
        common = frozenset.intersection(*member_items.values())
        for i, item in member_items.items():
            items[i] = item - common
    for i, (subject, item) in _respectively(sentence, mentions, words).items():
        subjects[i], items[i] = subject, item
    return [
        Figure(mentions[i], subjects[i], items[i] if subjects[i] else frozenset())
        for i in range(len(mentions))
    ]


_LEADS = frozenset(("for", "in", "among", "with", "at", "on", "after"))
"""Prepositions that can open every member of a list ("for depression 2.50, for neck-shoulder
disorders 1.98, ...")."""


def _shared_lead(
    sentence: str,
    starts: list[int],
    clause_of: list[int],
    members: list[int],
    mentions: tuple[NumberMention, ...],
    clause_words: list[list[_Word]],
) -> int | None:
    """How many words the first member of a list has for its item when every other member with
    words of its own opens with one preposition (:data:`_LEADS`) and the first member's clause
    has it too: the words after its last such preposition ("... with the lowest quartile were
    for *myocardial infarction* 2.34 (...), for depression 2.50 (...), ..."); None otherwise.
    Without it the first member took as many words as the longest other member ("lowest
    quartile myocardial infarction"), and "the lowest quartile ... for depression 2.50" was read
    as the first member's (issue 39, a false conflict of the 50 dev figure answers)."""
    if len(members) < 3:
        return None
    firsts = set()
    for i in members[1:]:
        words = re.findall(r"[A-Za-z]+", sentence[starts[clause_of[i]] : mentions[i].span[0]])
        if words:  # a confidence limit borrows its figure's words: it has none of its own
            firsts.add(words[0].lower())
    if len(firsts) != 1 or not firsts <= _LEADS:
        return None
    (lead,) = firsts
    head, c = members[0], clause_of[members[0]]
    end = mentions[head].span[0]
    opened = [m.end() for m in re.finditer(rf"\b{lead}\b", sentence[starts[c] : end], re.I)]
    if not opened:
        return None
    cut = starts[c] + opened[-1]
    n = sum(1 for w in clause_words[c] if cut <= w.start < end)
    return n or None


def _list_items(
    members: list[int],
    sides: list[tuple[list[str], list[str]]],
    subjects: list[frozenset[str]],
    lead: int | None = None,
) -> dict[int, frozenset[str]]:
    """Item words of each list member; the first member's frame words go into every subject.

    The first member's item is as long as the longest other member's, or ``lead`` words
    (:func:`_shared_lead`) when that is fewer.

    ``subjects`` is updated in place with the frame.
    """
    rest = members[1:]
    right_only = sum(1 for i in rest if sides[i][1] and not sides[i][0])
    left_only = sum(1 for i in rest if sides[i][0] and not sides[i][1])
    head = members[0]
    left, right = sides[head]
    items = {i: subjects[i] for i in members}
    if 2 * right_only > len(rest):
        n = max(len(sides[i][1]) for i in rest)
        items[head] = frozenset(right[:n])
        frame = frozenset(left + right[n:])
    elif 2 * left_only > len(rest):
        n = max(len(sides[i][0]) for i in rest)
        if lead is not None:
            n = min(n, lead)
        items[head] = frozenset(left[-n:])
        frame = frozenset(left[:-n] + right)
    else:
        return items
    for i in members:
        subjects[i] = subjects[i] | frame
    return items


def figures(text: str) -> list[Figure]:
    """The figures of every sentence of ``text`` with their subjects, spans offset into
    ``text`` (the subject rule of the module docstring, sentence by sentence)."""
    out = []
    for start, end in split_sentences(text):
        for fig in _analyse(text[start:end]):
            m = fig.mention
            shifted = NumberMention(m.text, m.value, m.unit, (m.span[0] + start, m.span[1] + start))
            out.append(Figure(shifted, fig.subject, fig.item))
    return out


def _states(evidence: Figure, claim: Figure) -> bool:
    """Whether the evidence figure states the claim figure for the same subject."""
    if not same_value(evidence.mention.value, claim.mention.value):
        return False
    if not compatible_units(evidence.mention.unit, claim.mention.unit):
        return False
    if not claim.subject:
        return True
    return bool(claim.subject & (evidence.item or evidence.subject))


def _fit(claim: Figure, evidence: Figure) -> tuple[int, float]:
    """How well an evidence figure's subject fits a claim figure's: shared words, Jaccard."""
    shared = len(claim.subject & evidence.subject)
    union = len(claim.subject | evidence.subject)
    return shared, shared / union if union else 0.0


def is_stated(claim: Figure, evidence: list[Figure]) -> bool:
    """Whether a figure of ``evidence`` states ``claim``'s value for its subject (and no figure
    with another value fits that subject strictly better; the module docstring's rule)."""
    holders = [e for e in evidence if _states(e, claim)]
    if not holders or not claim.subject:
        return bool(holders)
    best_shared = max(_fit(claim, e)[0] for e in holders)
    best_jaccard = max(_fit(claim, e)[1] for e in holders)
    for rival in evidence:
        if same_value(rival.mention.value, claim.mention.value):
            continue
        if not compatible_units(rival.mention.unit, claim.mention.unit):
            continue
        shared, jaccard = _fit(claim, rival)
        if shared > best_shared and jaccard > best_jaccard:
            return False  # the subject belongs to another figure
    return True


def unstated_numbers(claim: str, evidence: str) -> tuple[NumberMention, ...]:
    """The claim's figures that the evidence does not state for the same subject.

    The rule is the module docstring's; its motivating error class is VerifAI's (Bojic et al.
    2024) "numbers and quantities changed". Examples, evidence "Tensile strength was 320 MPa
    for steel, 110 MPa for titanium and 45 MPa for aluminium.": the claim "Titanium had a
    tensile strength of 320 MPa." gives (320 MPa,), "... of 110 MPa." gives (); evidence "Of the
    1,200 patients enrolled, 312 developed sepsis.": "1,200 patients developed sepsis." gives
    (1,200 patients,), "312 of 1,200 patients developed sepsis." gives ().

    Args:
        claim: the claim (an answer sentence, a hypothesis); citation markers are not figures.
        evidence: the evidence text (a premise window, a passage).

    Returns:
        The unstated mentions, in claim order, spans offset into ``claim``; () when the claim
        has no figures.
    """
    claimed = figures(claim)
    if not claimed:
        return ()
    stated = figures(evidence)
    return tuple(c.mention for c in claimed if not is_stated(c, stated))
