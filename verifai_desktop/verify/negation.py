"""Negation polarity between a claim and its evidence: "do not increase" against "increases".

Small NLI models decide by lexical overlap and by the mere presence of a "not": a claim "X
increases the risk of Y" was shown supported at p 0.79 by a window reading "X did not increase
the risk of Y", and a correct negative claim "X is not associated with Y" contradicted at p
0.96 by windows that never speak of an association (issue 26). These checks find the predicate
a negation cue governs, NegEx style (Chapman et al. 2001: a cue list and a short forward
scope), and report

* :func:`negation_conflict`: a predicate one side negates and the other states plainly (a
  SUPPORT across it is held back);
* :func:`negation_ungrounded`: a negated claim whose window negates the same predicate too,
  or never mentions it (a CONTRADICT from such a window rests on the "not" alone and is held
  back).

The head of a cue is the first content word after it within its clause, skipping auxiliaries
and hedges ("did not *significantly* increase" -> increase; "no *statistically significant*
association" -> association; "not associated with" -> associated). Words are compared by a
crude stem (the first :data:`STEM_CHARS` letters), so "increase", "increased" and "increasing"
match, as do "associated" and "association". A predicate the other side uses both negated and
plainly is ambiguous and never reported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

STEM_CHARS = 6
"""Letters a word is cut to before comparing (a crude stemmer; "associated" and
"association" share "associ")."""

_CUE_RE = re.compile(
    r"\b(?:not|no|never|neither|nor|without|cannot|can't|won't|isn't|aren't|wasn't|weren't|"
    r"doesn't|don't|didn't|hasn't|haven't|hadn't|absence\s+of|absent|lack\s+of|lacked|lacks|"
    r"lacking|fail(?:s|ed)?\s+to|unable\s+to|did\s+not|does\s+not|do\s+not|non-?significant|"
    r"nonsignificant|insignificant|unaffected|unrelated\s+to|unassociated\s+with)\b",
    re.IGNORECASE,
)
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z\-]+")
_CLAUSE_END_RE = re.compile(
    r"[.;:,()\[\]]|\b(?:but|however|whereas|while|although|though|yet)\b", re.IGNORECASE
)
# Words between a cue and the predicate it governs; never a head.
_SKIP = frozenset((
    "a", "an", "the", "be", "been", "being", "is", "are", "was", "were", "do", "does", "did",
    "have", "has", "had", "to", "of", "any", "significantly", "significant", "statistically",
    "clinically", "substantially", "markedly", "further", "more", "much", "also", "only",
    "appear", "appears", "appeared", "seem", "seems", "seemed", "clear", "clearly",
    "consistent", "consistently", "strong", "strongly", "meaningful", "meaningfully",
    "detectable", "detectably", "apparent", "overall", "obvious", "major", "longer", "in",
    "on", "with", "for", "by", "at", "between", "among", "within", "from", "into", "over",
    "under", "than", "evidence", "sufficient", "enough",
))  # fmt: skip
_SCOPE_WORDS = 4
"""Words after a cue searched for its head (NegEx uses a window of five tokens)."""


def _stem(word: str) -> str:
    return word.lower()[:STEM_CHARS]


@dataclass(frozen=True, slots=True)
class Polarity:
    """Which predicates a text negates and which it states plainly.

    Attributes:
        negated: stem -> the negated phrase as written (cue through head), e.g.
            ``{"increa": "did not increase"}``.
        plain: stems of content words that occur outside any cue's head position.
    """

    negated: dict[str, str]
    plain: frozenset[str]


def polarity(text: str) -> Polarity:
    """The negated heads and the plainly stated words of ``text`` (see the module docstring).

    Args:
        text: a claim or a premise window.
    """
    negated: dict[str, str] = {}
    head_spans: set[tuple[int, int]] = set()
    for cue in _CUE_RE.finditer(text):
        end_clause = _CLAUSE_END_RE.search(text, cue.end())
        limit = end_clause.start() if end_clause else len(text)
        words = list(_WORD_RE.finditer(text, cue.end(), limit))[:_SCOPE_WORDS]
        head = next((w for w in words if w.group().lower() not in _SKIP), None)
        if head is None:
            continue
        negated.setdefault(_stem(head.group()), text[cue.start() : head.end()])
        head_spans.add(head.span())
    plain = frozenset(
        _stem(w.group())
        for w in _WORD_RE.finditer(text)
        if w.span() not in head_spans and len(w.group()) > 3 and not _CUE_RE.fullmatch(w.group())
    )
    return Polarity(negated, plain)


def negation_conflict(claim: str, evidence: str) -> str | None:
    """A predicate that one of ``claim`` and ``evidence`` negates and the other states plainly.

    Args:
        claim: the hypothesis (an answer sentence without citation markers).
        evidence: the premise window.

    Returns:
        A reason in the user's words (``'the evidence says "did not increase"; the sentence
        does not negate it'``), or None when the polarities agree or the check cannot tell.
    """
    c, e = polarity(claim), polarity(evidence)
    for stem, phrase in e.negated.items():
        if stem in c.plain and stem not in c.negated and stem not in e.plain:
            return f'the evidence says "{phrase}"; the sentence does not negate it'
    for stem, phrase in c.negated.items():
        if stem in e.plain and stem not in e.negated and stem not in c.plain:
            return f'the sentence says "{phrase}"; the evidence does not negate it'
    return None


def negation_ungrounded(claim: str, evidence: str) -> str | None:
    """Why a CONTRADICT of a negated claim by ``evidence`` rests on the negation alone.

    Only a claim that negates a predicate is judged: a window contradicts "X is not associated
    with Y" when it states the association plainly. When the window negates the same predicate
    too ("was not associated"), or never mentions it, the contradiction has no ground.

    Args:
        claim: the hypothesis.
        evidence: the premise window.

    Returns:
        The reason in the user's words, or None (the claim negates nothing, or the window
        states the negated predicate plainly).
    """
    c, e = polarity(claim), polarity(evidence)
    if any(stem in e.plain for stem in c.negated):
        return None
    for stem in c.negated:
        if stem in e.negated:
            return (
                f'the evidence says "{e.negated[stem]}" too; '
                "the contradiction rests on the negation alone"
            )
    if c.negated:
        phrase = next(iter(c.negated.values()))
        return f'the evidence does not speak of what the sentence negates ("{phrase}")'
    return None
