"""Which rules the verification path applies, and the word-for-word rule.

:class:`Checks` switches the rules of :mod:`verifai_desktop.verify.rules` one by one (all on in
the app; ``verifai eval verifier`` and ``models/paraphrase_dev.py`` switch them to show each
one's effect). The word-for-word rule lives here: a small NLI model decides by lexical overlap,
so a sentence that repeats a passage sentence with one figure changed, its "not" dropped or two
items exchanged reads as supported (issue 26: 45% of perturbed sentences of real documents were
shown green). Where the claim follows the window word for word, :func:`aligned_changes` finds
such an edit (a word alignment, Ratcliff/Obershelp as in :mod:`difflib`) and
:func:`aligned_rule` shows the pair red; a window that states the claim word for word
(:func:`states_verbatim`) cannot show it red, the contradiction resting on its other
sentences.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from verifai_desktop.domain import NliLabel
from verifai_desktop.verify.finding import Effect, Finding


@dataclass(frozen=True, slots=True)
class Checks:
    """Which rules and which window rule the verification path applies (all on in the app;
    ``verifai eval verifier`` switches them one by one to show each one's effect).

    Attributes:
        aims: leave premise windows that state an aim or hypothesis out
            (:mod:`verifai_desktop.verify.aims`).
        numbers: the figures rule (:func:`verifai_desktop.verify.figures.figures_rule`): red
            for a figure bound to another value of the passage, held back for a figure it
            does not state for the subject.
        aligned: the word-for-word rule (:func:`aligned_rule`): red for a figure, a negation
            or two items changed where the claim follows the window word for word; a
            CONTRADICT from a window that states the claim word for word held back.
        negation: the negation rule (:func:`verifai_desktop.verify.negation.negation_rule`),
            and the positive forms of a claim and clause that both negate.
        support_first: window aggregation: a passage with a window that supports the claim
            (shown SUPPORT) is decided by its strongest such window, a contradicting window of
            the same passage kept beside it as a conflict; off: the window with the highest
            ``max(P(SUPPORT), P(CONTRADICT))`` decides, whatever the other windows say.
        parts: verify a claim one part at a time (:mod:`verifai_desktop.verify.parts`): green
            only when every part is, red when one is; off: the whole sentence at once.
        subject: hold back a CONTRADICT from a window about another subject
            (:mod:`verifai_desktop.verify.subject`).
        names: hold back a SUPPORT from a window whose sentence saying what the claim says
            names another subject than the claim (:mod:`verifai_desktop.verify.names`).
        gate: a window that shares no content word with the claim part
            (:func:`~verifai_desktop.words.content_stems`) is shown NO_EVIDENCE without asking
            the verifier (issue 40: 23% of the windows of 120 paraphrase dev pairs; the
            verifier gave 1.5% of them P >= 0.3 and decided 1 of 141 parts with one).
        quantifiers: hold back a SUPPORT for a part saying "all N" of a count the passage
            states without saying all of them (:mod:`verifai_desktop.verify.quantifiers`).
        directions: show red a SUPPORT from a window that changes what the part changes
            only the other way ("lowered ROS" against "elevated ROS";
            :mod:`verifai_desktop.verify.directions`).
    """

    aims: bool = True
    numbers: bool = True
    negation: bool = True
    aligned: bool = True
    support_first: bool = True
    parts: bool = True
    subject: bool = True
    names: bool = True
    gate: bool = True
    quantifiers: bool = True
    directions: bool = True


ALL_CHECKS = Checks()
"""Every check, support-first windows: what the app applies."""
NO_CHECKS = Checks(**{field.name: False for field in dataclasses.fields(Checks)})
"""The verification path as it was before the checks (aggregation by maximum)."""


_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|\w+|[^\s\w]")
_FIGURE = re.compile(r"\d+(?:[.,]\d+)*")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
"""A thousands separator: "1,000" and "1000" are one figure."""
_NEGATIONS = frozenset((
    "not", "no", "never", "none", "neither", "nor", "without", "cannot", "nonsignificant",
    "insignificant", "unaffected", "unchanged", "absence", "lack", "failed", "t",
))  # fmt: skip
"""Negation tokens as the alignment tokenizes them ("n't" ends in the token "t")."""


def _negations(span: Sequence[str], other: Sequence[str]) -> int:
    """Negation tokens of ``span``; "without" only against a "with" in the ``other`` span
    ("patients with diabetes" / "without diabetes"): an inserted "without surgery" names a
    group, as in :func:`verifai_desktop.verify.negation.negates`, and negates nothing."""
    return sum(t in _NEGATIONS and (t != "without" or "with" in other) for t in span)


ALIGNED_SHARE = 0.8
"""Share of a claim's tokens aligned with a window (in runs of two or more) from which a figure
changed between runs of statistics only ("(RR, **0.82**; 95% CI" against "(RR, **1.45**; 95%
CI") is a changed figure (:func:`aligned_changes`). Below it the claim follows the window only
in such a bracket, and the bracket may report another outcome: "a stent thrombosis rate of
0.9% compared to 1.2% (RR, 0.82; ...)" against "the risk of stroke 0.6% versus 0.4% (RR, 1.45;
...)" was shown red (issue 39, the shown conflicts of 50 dev figure answers). The unchanged and
perturbed sentences of the self-check align at 0.9 or more; 0.8 and 0.6 moved nothing else on
the paraphrase dev and training claims."""


def _aligned_share(matcher: difflib.SequenceMatcher[str], n_claim: int) -> float:
    """Share of the claim's ``n_claim`` tokens in matching runs of two or more tokens."""
    if not n_claim:
        return 0.0
    runs = [x.size for x in matcher.get_matching_blocks() if x.size >= 2]
    return sum(runs) / n_claim


def _worded(tokens: Sequence[str], *runs: tuple[str, int, int, int, int]) -> bool:
    """Whether an equal run around an edit holds a word of three letters or more (not only
    punctuation, figures and labels such as RR, CI, P or vs)."""
    return any(len(t) >= 3 and t.isalpha() for _, i1, i2, _, _ in runs for t in tokens[i1:i2])


def _written_elsewhere(evidence: Sequence[str], claim: Sequence[str], j: int) -> bool:
    """Whether the window writes the claim's figure at token ``j`` elsewhere as the claim does,
    with the token before it and the three after ("the **83** reviews by cited" against "... for
    the 68 reviews by cited reviewers" beside "The 83 reviews by cited reviewers"): the claim
    restates that figure, not the one it happens to align with (issue 39, a false red of the 50
    dev figure answers; no shown label moved on the dev sets or the self-check)."""
    frame = claim[max(0, j - 1) : j + 4]
    n = len(frame)
    if n < 4:
        return False
    return any(evidence[i : i + n] == frame for i in range(len(evidence) - n + 1))


@functools.lru_cache(maxsize=4096)
def aligned_changes(claim: str, evidence: str) -> tuple[str, ...]:
    """Figures changed, negations dropped or added, and items exchanged where ``claim`` follows
    ``evidence`` word for word.

    The two texts are aligned token by token (:class:`difflib.SequenceMatcher`, no junk
    heuristic); only local edits count (at most 3 tokens each side, between runs of at least 2
    tokens that agree). A one-token replacement of a figure by another figure ("76 and **53**
    cases" against "76 and **76** cases") is a changed figure; two replaced spans that trade
    places ("A increased and B decreased" against "B increased and A
    decreased") are exchanged items; a differing span with a negation on one side only ("was
    **not** increased" against "was increased") is a negation dropped or added. A paraphrase
    aligns too little to report anything, and a figure changed between runs of statistics
    only (no word of three letters: "(RR, 0.82; 95% CI") counts only where at least
    :data:`ALIGNED_SHARE` of the claim aligns, and a figure the window also writes as the claim
    does, with the words around it, is no change (:func:`_written_elsewhere`).

    Memoised: the word-for-word rule, :func:`states_verbatim` and :func:`figures_verbatim` ask
    for the same (part, window) pair.

    Returns:
        Reasons in the user's words, e.g. ``('the figure 76 where the evidence has 53',)``.
    """
    a = _TOKEN.findall(evidence.lower())
    b = _TOKEN.findall(claim.lower())
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    close = _aligned_share(matcher, len(b)) >= ALIGNED_SHARE
    ops = matcher.get_opcodes()
    out: list[str] = []
    replaced: list[tuple[str, str]] = []
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag == "equal":
            continue
        # a local edit: at most 3 tokens each side, between runs of at least 2 equal tokens
        framed = all(
            0 <= n < len(ops) and ops[n][0] == "equal" and ops[n][2] - ops[n][1] >= 2
            for n in (k - 1, k + 1)
        )
        local = framed and i2 - i1 <= 3 and j2 - j1 <= 3
        negated = _negations(a[i1:i2], b[j1:j2]), _negations(b[j1:j2], a[i1:i2])
        if local and (negated[0] > 0) != (negated[1] > 0):
            side, span = ("evidence", a[i1 - 1 : i2 + 1]) if negated[0] else (
                "sentence", b[j1 - 1 : j2 + 1])  # fmt: skip
            other = "sentence" if side == "evidence" else "evidence"
            out.append(f'the {side} says "{" ".join(span)}" where the {other} has no negation')
        if tag != "replace":
            continue
        old, new = " ".join(a[i1:i2]), " ".join(b[j1:j2])
        replaced.append((old, new))
        if (
            local and i2 - i1 == j2 - j1 == 1 and _FIGURE.fullmatch(old) and _FIGURE.fullmatch(new)
            and _THOUSANDS.sub("", old) != _THOUSANDS.sub("", new)
            and (close or _worded(a, ops[k - 1], ops[k + 1]))
            and not _written_elsewhere(a, b, j1)
        ):  # fmt: skip
            out.append(f"the figure {new} where the evidence has {old}")
    for n, (old, new) in enumerate(replaced):
        for old2, new2 in replaced[n + 1 :]:
            if old == new2 and new == old2 and old != new:
                out.append(f"{new} and {old} are exchanged relative to the evidence")
    return tuple(out)


VERBATIM_SHARE = 0.9
"""Share of a claim's tokens found in order in a window for the window to state it verbatim."""


def states_verbatim(claim: str, evidence: str) -> bool:
    """Whether ``evidence`` states ``claim`` word for word: at least :data:`VERBATIM_SHARE` of
    the claim's tokens align with the window's in runs of two or more, in order, and the
    aligned stretch of the window
    holds the same negations and figures as the claim (and :func:`aligned_changes` finds
    nothing changed). A CONTRADICT from such a window rests on its other sentences."""
    a = _TOKEN.findall(evidence.lower())
    b = _TOKEN.findall(claim.lower())
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if _aligned_share(matcher, len(b)) < VERBATIM_SHARE:  # 0 for an empty claim
        return False
    # runs of one token (a name met elsewhere in the window) neither count nor widen the stretch
    blocks = [x for x in matcher.get_matching_blocks() if x.size >= 2]
    stretch = a[blocks[0].a : blocks[-1].a + blocks[-1].size]

    def marks(tokens: Sequence[str]) -> list[str]:
        return sorted(t for t in tokens if t in _NEGATIONS or _FIGURE.fullmatch(t))

    return marks(stretch) == marks(b) and not aligned_changes(claim, evidence)


@functools.lru_cache(maxsize=4096)
def figures_verbatim(claim: str, evidence: str) -> bool:
    """Whether ``evidence`` writes ``claim``'s figures word for word: at least
    :data:`VERBATIM_SHARE` of the claim's tokens align with the window's in runs of two or more,
    every figure of the claim and the token after it (its unit) lie in such runs, and
    :func:`aligned_changes` finds nothing changed. The figures rule then has nothing to bind:
    the passage says it as the claim does, and its reading of the passage's lists cannot make
    it red ("46.9% 33.3%, 36.4% and 30.4% ..., respectively", a comma missing, bound 36.4% to
    the glands of the next clause; issue 39, a false red of the 50 dev figure answers).
    Memoised: the rules and the support-first window choice ask for the same pair."""
    a = _TOKEN.findall(evidence.lower())
    b = _TOKEN.findall(claim.lower())
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if _aligned_share(matcher, len(b)) < VERBATIM_SHARE:
        return False
    inside = {
        j for x in matcher.get_matching_blocks() if x.size >= 2 for j in range(x.b, x.b + x.size)
    }
    figures = [j for j, t in enumerate(b) if _FIGURE.fullmatch(t)]
    return all(j in inside and (j + 1 == len(b) or j + 1 in inside) for j in figures) and (
        not aligned_changes(claim, evidence)
    )


def aligned_rule(part: str, window: str, passage: str, guess: NliLabel) -> tuple[Finding, ...]:
    """The word-for-word rule (:data:`~verifai_desktop.verify.finding.Rule`): where ``part``
    follows ``window`` word for word, a changed figure, a dropped or added negation and two
    exchanged items are ``RED`` (:func:`aligned_changes`), whatever the verifier guessed; a
    CONTRADICT guess from a window that states the part word for word is ``HOLD``
    (:func:`states_verbatim`). ``passage`` is not read: the alignment is with the window."""
    out = [Finding("aligned", Effect.RED, reason) for reason in aligned_changes(part, window)]
    if guess is NliLabel.CONTRADICT and not out and states_verbatim(part, window):
        out.append(
            Finding("aligned", Effect.HOLD, "the evidence states the sentence word for word")
        )
    return tuple(out)
