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

import functools
import re
from dataclasses import dataclass

from verifai_desktop.domain import NliLabel
from verifai_desktop.verify.aims import is_aim
from verifai_desktop.verify.finding import Effect, Finding

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
    "under", "than", "evidence", "sufficient", "enough", "just", "only",
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


SHARED_WORDS = 0.35
"""Share of a claim's content words a clause of the window must hold to be the clause the claim
speaks of (:func:`matching_clause`): only then does its polarity decide."""

RED_SHARE = 0.4
"""Share of a claim's content words the matching clause must hold for a negation only one side
makes to show the pair red (a stricter match than :data:`SHARED_WORDS`)."""

_NULL_CUE = re.compile(
    r"\b(?:similar|unchanged|comparable|disappeared|devoid\s+of|free\s+of|no\s+longer|"
    r"remained\s+(?:unchanged|stable|the\s+same)|limited\s+to)\b",
    re.IGNORECASE,
)
"""Words that report a null finding without a negation cue ("were similar between cohorts",
"the difference disappeared"): a claim that negates the finding agrees with them."""
# "..., but not for X" is no new clause: it negates the clause before it for X; nor is the
# bracketed charge of an ion ("K(+) efflux", "Ca(2+)")
_CLAUSE_SPLIT = re.compile(
    r"[.;:]\s+|,?\s+\b(?:but(?!\s+(?:not|no)\b)|whereas|while|however|although|though|yet)\b"
    r"|(?<![A-Za-z])\(|\((?!\d?[+-]\))|(?<!\([+-])(?<!\(\d[+-])\)",
    re.IGNORECASE,
)
_BACKGROUND = re.compile(
    r"^\s*(?i:background|introduction|objectives?|aims?|purpose|methods?|design|setting)\b|"
    r"\b(?:has|have) been (?:found|reported|shown|suggested)\b|\bwere estimated\b|"
    r"^\s*(?i:if)\b|\b(?i:no studies)\b|\b(?:remains?|is) (?:unknown|unclear)\b",
)
"""A clause that reports background, method or a hypothesis ("If such an association exists,
...", "no studies have evaluated whether ..."), not this study's finding."""


_ELLIPTICAL = re.compile(
    r"\s*(?:was|were|is|are|had|has|have|did|does|do|remained|showed|became)\b", re.IGNORECASE
)
"""The opening of a clause without a subject ("..., yet was devoid of any ..."): it speaks of
the subject of the clause before it, whose words :func:`matching_clause` lends it."""
_RELATIVE = re.compile(r"\b(?:who|that|which)\s+(?:\w+\s+)?$")
"""The opening of a relative clause just before a cue ("surgeons who did not ..."): the
negation names a group rather than negates what the clause states."""


def negates(text: str) -> bool:
    """Whether ``text`` carries a negation cue or a null-finding word (:data:`_NULL_CUE`);
    "without", "with no" and a cue opening a relative clause ("surgeons who did not ...") do not
    count: they name a group rather than negate what the clause states."""
    for cue in _CUE_RE.finditer(text):
        before = text[max(0, cue.start() - 30) : cue.start()].lower()
        if cue.group().lower() == "without" or before.endswith("with "):
            continue  # "women without insurance", "genes with no known phenotype"
        if _RELATIVE.search(before):
            continue  # "the 27 surgeons who did not consider": a relative clause names a group
        return True
    return bool(_NULL_CUE.search(text))


def _negates_a_group(text: str) -> bool:
    """Whether ``text`` negates inside a relative clause ("two responders who did not have
    surgery"): :func:`negates` leaves it out, yet a passage negating the same ("two patients
    were not submitted to surgery") does not add a negation to it."""
    return any(
        _RELATIVE.search(text[max(0, c.start() - 30) : c.start()]) for c in _CUE_RE.finditer(text)
    )


def _content(text: str) -> frozenset[str]:
    return frozenset(
        _stem(w.group())
        for w in _WORD_RE.finditer(text)
        if len(w.group()) > 3 and not _CUE_RE.fullmatch(w.group())
        and w.group().lower() not in _SKIP
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class ClauseMatch:
    """The clause of a text a claim speaks of, and which of the two negate.

    Attributes:
        clause: the clause ("" when none holds a content word of the claim).
        share: share of the claim's content words the clause holds, 0..1.
        claim_negates: the claim negates (:func:`negates`).
        clause_negates: the clause negates (:func:`negates`). Which predicate each negates is
            not compared: NegEx heads ("did not *form*", "*devoid* of") are too often another
            word than the other side's, and comparing them lost more than it caught on dev.
    """

    clause: str
    share: float
    claim_negates: bool
    clause_negates: bool


HEAD_BONUS = 0.25
"""Added to a clause's share when it speaks of the predicate the claim negates (ranking only)."""


_BUT_NOT = re.compile(r",?\s*\bbut\s+not\b([^,;]*)", re.IGNORECASE)


def _negates(clause: str, words: frozenset[str]) -> bool:
    """Whether ``clause`` negates what a claim with content ``words`` speaks of: "X, but not Y"
    negates Y only, so it negates for a claim that names a word of Y the rest lacks, and counts
    as plain for a claim about X."""
    contrast = _BUT_NOT.search(clause)
    if contrast is None:
        return negates(clause)
    rest = clause[: contrast.start()] + clause[contrast.end() :]
    if negates(rest):
        return True
    return bool(words & _content(contrast.group(1)) - _content(rest))


@functools.lru_cache(maxsize=1024)
def matching_clause(claim: str, text: str) -> ClauseMatch:
    """The clause of ``text`` that holds the largest share of ``claim``'s content words
    (clauses end at ``. ; :``, brackets and *but, whereas, while, however, although*; "..., but
    not for X" stays with its clause), and whether each side negates what the other speaks of.

    A clause stating an aim or hypothesis (:func:`~verifai_desktop.verify.aims.is_aim`), or
    background or method (:data:`_BACKGROUND`), is never the match: it states no finding of the
    study. A clause that speaks of the predicate the claim negates
    ranks :data:`HEAD_BONUS` higher. A clause without a subject ("..., yet was devoid of K(+)
    efflux dependency", :data:`_ELLIPTICAL`) holds the words of the clause before it too: on the
    paraphrase dev set one wrong claim green -> red, one right claim red -> unsure; on the
    training claims one wrong claim unsure -> red. Memoised: the negation rule asks for the
    same (part, passage) once per window.
    """
    words = _content(claim)
    if not words:
        return ClauseMatch("", 0.0, False, False)
    heads = frozenset(polarity(claim).negated)
    best, rank = ClauseMatch("", 0.0, False, False), 0.0
    previous = frozenset[str]()
    for clause in _CLAUSE_SPLIT.split(text):
        own = _content(clause)
        # "..., yet was devoid of ...": a clause without a subject speaks of the one before
        held = own | previous if _ELLIPTICAL.match(clause) else own
        previous = own
        if not clause.strip() or is_aim(clause) or _BACKGROUND.search(clause):
            continue
        theirs = polarity(clause)
        share = len(words & held) / len(words)
        # a clause that speaks of the predicate the claim negates wins a tie
        score = share + (HEAD_BONUS if heads & (theirs.plain | theirs.negated.keys()) else 0.0)
        if share > 0 and score > rank:
            best, rank = (
                ClauseMatch(clause.strip(), share, negates(claim), _negates(clause, words)),
                score,
            )
    return best


def _scope_swapped(claim: str, clause: str) -> bool:
    """Whether ``claim`` and ``clause`` both say "X, but not Y" with X and Y exchanged: "tied
    to postmenopausal but not to premenopausal cancer" against "a link with premenopausal, but
    not postmenopausal, breast cancer". Read in positive forms the two would agree."""
    ours, theirs = _BUT_NOT.search(claim), _BUT_NOT.search(clause)
    if ours is None or theirs is None:
        return False
    our_not, their_not = _content(ours.group(1)), _content(theirs.group(1))
    our_rest = _content(claim[: ours.start()] + claim[ours.end() :]) - our_not
    their_rest = _content(clause[: theirs.start()] + clause[theirs.end() :]) - their_not
    return bool(our_not & their_rest) and bool(their_not & our_rest)


def negation_rule(part: str, window: str, passage: str, guess: NliLabel) -> tuple[Finding, ...]:
    """The negation rule (:data:`~verifai_desktop.verify.finding.Rule`), read both ways.

    The clause of the passage the part speaks of is :func:`matching_clause` (the whole passage
    is searched, since the window the verifier found strongest may speak of something else).
    When exactly one of the part and that clause negates what the other speaks of and the
    clause holds :data:`RED_SHARE` of the part's content words, the pair is ``RED``: a negation
    dropped ("mortality differed" against "mortality did not differ") or added ("X did not
    increase Y" against "X increased Y"). When both negate (:data:`SHARED_WORDS`), the verifier
    has read their positive forms (:func:`positive_pair`, in
    :func:`verifai_desktop.verify.check.verify_pairs`), and a CONTRADICT guess from a window
    without that clause is ``HOLD``. Without such a clause: a predicate one side negates and
    the other states plainly (:func:`negation_conflict`) is ``HOLD`` of a SUPPORT guess, and a
    CONTRADICT guess on a negated part whose window negates the same predicate too, or never
    mentions it (:func:`negation_ungrounded`), is ``HOLD``.
    """
    match = matching_clause(part, passage)
    if match.share >= RED_SHARE and _scope_swapped(part, match.clause):
        reason = f'the passage negates the other one: "{match.clause}"'
        return (Finding("negation", Effect.RED, reason),)
    if (
        match.share >= RED_SHARE
        and match.claim_negates != match.clause_negates
        and not (match.clause_negates and _negates_a_group(part))
        and not (match.claim_negates and negated_elsewhere(part, passage))
    ):
        if match.claim_negates:
            reason = f'the sentence negates what the passage states: "{match.clause}"'
        else:
            reason = f'the passage negates it: "{match.clause}"'
        return (Finding("negation", Effect.RED, reason),)
    if match.share >= SHARED_WORDS and match.claim_negates and match.clause_negates:
        if guess is NliLabel.CONTRADICT and match.clause not in window:
            reason = (
                f'the passage negates it too ("{match.clause}"); '
                "this window speaks of something else"
            )
            return (Finding("negation", Effect.HOLD, reason),)
        return ()
    conflict = negation_conflict(part, window)
    if conflict is not None and guess is NliLabel.SUPPORT:
        return (Finding("negation", Effect.HOLD, conflict),)
    ungrounded = negation_ungrounded(part, window) if guess is NliLabel.CONTRADICT else None
    if ungrounded:
        return (Finding("negation", Effect.HOLD, ungrounded),)
    return ()


HEAD_PREFIX = 5
"""Letters a claim's negated head and a clause's word share to be the same predicate ("form"
and "formed", "depend" and "dependency", not "break" and "breast"; :func:`negating_clause`).
Chosen on the paraphrase dev set: 4 let "failed to break" find "breast cancer" as a plain
statement of the predicate; 5 moves no other pair there, on SciFact dev or the name twins."""


def negated_elsewhere(claim: str, passage: str) -> bool:
    """Whether a clause of ``passage`` other than the best match negates a predicate ``claim``
    negates too (:func:`negating_clause`): "cells with less Tks5 did not form podosomes"
    against "They no longer formed podosomes", the pronoun hiding its subject from
    :func:`matching_clause`. A claim whose negation the passage also states is not shown red
    for adding one."""
    return negating_clause(claim, passage) is not None


def negating_clause(
    claim: str, text: str, *, plain: bool = False, scoped: bool = False
) -> str | None:
    """The clause of ``text`` that negates a predicate ``claim`` negates too: of the clauses
    that negate (:func:`negates`; with ``scoped``, that negate what the claim speaks of: "X,
    but not Y" negates Y only) and hold a word starting with the claim's negated head
    (:data:`HEAD_PREFIX` letters: "form" and "formed"), the one sharing the most of the claim's
    content words, at least two; None when none does, or the claim negates nothing. With
    ``plain``, the same among the clauses that do not negate: a clause stating the predicate."""
    heads = [stem[:HEAD_PREFIX] for stem in polarity(claim).negated]
    if not heads:
        return None
    words = _content(claim)
    best, most = None, 1
    for clause in _CLAUSE_SPLIT.split(text):
        if not clause.strip() or is_aim(clause) or _BACKGROUND.search(clause):
            continue
        theirs = _content(clause)
        says_not = _negates(clause, words) if scoped else negates(clause)
        if says_not == plain or not any(w.startswith(h) for h in heads for w in theirs):
            continue
        if len(words & theirs) > most:
            best, most = clause.strip(), len(words & theirs)
    return best


def positive_pair(claim: str, window: str) -> tuple[str, str] | None:
    """``(window, claim)`` in their positive forms when both negate the clause the claim speaks
    of (:func:`matching_clause`, :func:`negates`), else None. Only that clause of the window is
    rewritten; a negation elsewhere in the window stays.

    When the claim negates and the clause it speaks of states its words plainly, the clause of
    the window that negates the claim's predicate (:func:`negating_clause`, scoped) is the one
    rewritten: "cells with less Tks5/Fish did not form podosomes" against "We generated cells
    with reduced Tks5/Fish levels. They no longer formed podosomes", the pronoun hiding the
    subject. Not when another clause states that predicate plainly ("Non-severe X was not
    associated with any outcome. Severe X was associated with ..."): the verifier then reads
    the negation as written. On the paraphrase dev set one correct negative claim more is
    green and no other pair moves (README, "Colours on paraphrase")."""
    match = matching_clause(claim, window)
    if match.share < SHARED_WORDS or not (match.claim_negates and match.clause_negates):
        elsewhere = match.claim_negates and not match.clause_negates
        clause = negating_clause(claim, window, scoped=True) if elsewhere else None
        if clause is not None and negating_clause(claim, window, plain=True, scoped=True):
            clause = None  # another clause states it plainly: "severe X was associated with"
        if clause is None:
            return None
        return window.replace(clause, positive_form(clause), 1), positive_form(claim)
    return window.replace(match.clause, positive_form(match.clause), 1), positive_form(claim)


_POSITIVE = (
    (r"\b(do|does|did|is|are|was|were|has|have|had|could|would|should|may|might|must)\s+not\b",
     r"\1"),
    (r"\b(do|does|did|is|are|was|were|has|have|had|could|would|should)n't\b", r"\1"),
    (r"\bcan(?:not|'t)\b", "can"),
    (r"\bwon't\b", "will"),
    (r"\bno\s+longer\b", "still"),
    (r"\b(?:absence|lack)\s+of\b", "presence of"),
    (r"\b(lack(?:s|ed|ing)?)\b", "had"),
    (r"\bfail(?:s|ed)?\s+to\b", "did"),
    (r"\bunable\s+to\b", "able to"),
    (r"\b(?:without|devoid\s+of|free\s+of)\b", "with"),
    (r"\bnone\s+of\b", "some of"),
    (r"\bnon-?significant(ly)?\b|\binsignificant(ly)?\b", "significant"),
    (r"\bunaffected\b", "affected"),
    (r"\bunrelated\s+to\b", "related to"),
    (r"\bunassociated\s+with\b", "associated with"),
    (r"\b(?:similar|comparable)\b", "different"),
    (r"\bremained\s+(?:unchanged|stable|the\s+same)\b|\bunchanged\b", "changed"),
    (r"\bdisappeared\b", "remained"),
    (r"\bneither\s+", ""),
    (r"\bnor\b", "and"),
    (r"\b(?:not|never|no)\b\s*", ""),
)  # fmt: skip
_POSITIVE_RE = tuple((re.compile(p, re.IGNORECASE), r) for p, r in _POSITIVE)


def positive_form(text: str) -> str:
    """``text`` with its negation cues removed or turned positive ("was not associated with" ->
    "was associated with", "no difference" -> "difference", "without" -> "with", "were
    similar" -> "were different").

    Used on a claim and the clause of a window that both negate (:func:`positive_pair`): a
    small NLI model reads the shared "not" as a contradiction (issue 39: "the method does not
    need labelled data" shown red against "the method does not need any labelled data"), so
    the pair is judged on what both say without it.
    """
    out = text
    for pattern, repl in _POSITIVE_RE:
        out = pattern.sub(repl, out)
    return re.sub(r"\s{2,}", " ", out).strip()
