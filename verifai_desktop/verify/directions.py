"""A change read the other way round: "lowered ROS levels" where the passage says "elevated ROS
levels" (issue 39, two facts with one wrong, swapped attributes).

A small NLI model reads "suppression of 6PGD ... elevated ROS levels in cancer cells" as
supporting "it lowered ROS levels in cancer cells": the words are the passage's, only the
direction word is the other one. The same holds for other pairs of opposite words
(:data:`_AXES`: "downstream of NLRP3" against "upstream of NLRP3", "dispensable for
invasion" against "required for invasion").

:func:`direction_rule` reads each direction word of the part (*increased, higher, more,
elevated* against *decreased, lower, less, reduced* ...) with what it changes (up to three
content words right after it, or right before it when none follow: "ROS levels rose"; the
nearest is its head), finds the direction words of the window that change
the same thing (each one's head among the other's words), and shows a SUPPORT guess red when
every one of them goes the other way. A direction word under a negation ("did not increase")
is the negation rule's, a comparator before a figure ("more than 20%") the figures rule's, and
a change of a change ("more weight loss") reads both ways; none is read here.

Chosen on the paraphrase dev set (``models/paraphrase_dev.py``): two wrong claims green ->
red, one unsure -> red, no shown label of a right claim moved; on the training claims one
wrong claim green -> red, and on SciFact dev nothing moved. Red on any guess but CONTRADICT
(not chosen) turned three more wrong dev claims red, but also two SciFact dev pairs (one
gold SUPPORT, one gold NO_EVIDENCE) and one training claim labelled NO_EVIDENCE.
"""

from __future__ import annotations

import functools
import re

from verifai_desktop.domain import NliLabel
from verifai_desktop.ingest.sentences import split_sentences
from verifai_desktop.verify.finding import Effect, Finding
from verifai_desktop.words import STEM_CHARS, STOP_WORDS

_UP = (
    r"increas(?:e|es|ed|ing)|ris(?:e|es|en|ing)|rose|rais(?:e|es|ed|ing)|"
    r"elevat(?:e|es|ed|ing|ion)|higher|greater|more|larger|longer|"
    r"boost(?:s|ed|ing)?|enhanc(?:e|es|ed|ing)|up-?regulat(?:e|es|ed|ing|ion)|"
    r"augment(?:s|ed|ing)?|accelerat(?:e|es|ed|ing)"
)
_DOWN = (
    r"decreas(?:e|es|ed|ing)|reduc(?:e|es|ed|ing|tion)|lower(?:s|ed|ing)?|less|fewer|"
    r"smaller|shorter|declin(?:e|es|ed|ing)|diminish(?:es|ed|ing)?|cut|drop(?:s|ped)?|"
    r"fell|suppress(?:es|ed|ing)?|attenuat(?:e|es|ed|ing)|down-?regulat(?:e|es|ed|ing|ion)"
)
_AXES = (
    (_UP, _DOWN),
    (r"upstream", r"downstream"),
    (r"required|necessary|essential|indispensable", r"dispensable|unnecessary|superfluous"),
    (
        r"improv(?:e|es|ed|ing|ement)",
        r"worsen(?:s|ed|ing)?|impair(?:s|ed|ing|ment)?|deteriorat(?:e|es|ed|ing|ion)",
    ),
    (r"sensitiv(?:e|ity)|susceptib(?:le|ility)", r"resistan(?:t|ce)"),
)
"""Pairs of opposite words, one axis each: a change up or down, a place in a pathway, whether
something is needed, a change for the better or worse, a response to a drug. Chosen on the
paraphrase dev set: the last four axes turned two wrong claims red ("acted downstream of
NLRP3" against "upstream"; "dispensable for ... invasion" against "required"), no right one
moved; on the training claims one wrong claim red ("worsened insulin sensitivity"); SciFact
dev and HealthVer dev unchanged."""
_DIRECTION = re.compile(
    r"\b(?:"
    + "|".join(f"(?P<up{i}>{up})|(?P<down{i}>{down})" for i, (up, down) in enumerate(_AXES))
    + r")\b",
    re.IGNORECASE,
)
_CLAUSE_EDGE = re.compile(r"[;,:()\[\]]|\b(?:and|but|while|whereas)\b", re.IGNORECASE)
_COMPARATOR = re.compile(r"\s*(?:than|[\d(])", re.IGNORECASE)
_SPAN = 3
"""Content words read on each side of a direction word as what it changes."""
_NEGATED = re.compile(
    r"\b(?:not|no|never|without|nor|neither|fail(?:s|ed)?\s+to|unable\s+to)\b(?:\W+\w+){0,3}\W*$",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9][a-z0-9-]*")
_TURNS = frozenset(("loss", "gain", "decre", "reduc", "incre", "highe", "great"))
"""Stems after which a direction word changes a change ("more weight loss" is less weight):
such a target is not read (nor one holding a whole direction word, "lower", "less")."""
_GENERIC = STOP_WORDS | frozenset((
    "significantly", "markedly", "slightly", "substantially", "somewhat", "much", "also",
    "both", "all", "than", "in", "at", "after", "before", "during", "among", "between",
))  # fmt: skip


def _stems(text: str) -> list[str]:
    return [w[:STEM_CHARS] for w in _WORD.findall(text.lower()) if w not in _GENERIC]


def _changes(text: str) -> list[tuple[int, str, frozenset[str]]]:
    """Each direction word of ``text`` not under a negation and not a figure's comparator:
    (its side and axis, +k / -k for the first / second word of the k-th pair of
    :data:`_AXES`; the head of what it changes (the nearest content word); the stems of what
    it changes)."""
    out = []
    for match in _DIRECTION.finditer(text):
        left = max((m.end() for m in _CLAUSE_EDGE.finditer(text, 0, match.start())), default=0)
        if _COMPARATOR.match(text, match.end()) or _NEGATED.search(text[left : match.start()]):
            continue
        edge = _CLAUSE_EDGE.search(text, match.end())
        right = edge.start() if edge else len(text)
        after = _stems(text[match.end() : right])[:_SPAN]
        target = after or _stems(text[left : match.start()])[-_SPAN:][::-1]
        if target and not any(_DIRECTION.fullmatch(w) or w in _TURNS for w in target):
            kind = match.lastgroup or ""  # "up0", "down3": the side and the axis
            axis = int(kind.lstrip("updown")) + 1
            out.append((axis if kind.startswith("up") else -axis, target[0], frozenset(target)))
    return out


@functools.lru_cache(maxsize=1024)
def reversed_change(part: str, window: str) -> str | None:
    """The window's sentence that changes what ``part`` changes the other way, or None."""
    claimed = _changes(part)
    if not claimed:
        return None
    sentences = [window[a:b] for a, b in split_sentences(window)]
    for sign, head, target in claimed:
        same = other = None
        for sentence in sentences:
            for s, h, t in _changes(sentence):
                if head in t and h in target and abs(s) == abs(sign):
                    if s == sign:
                        same = sentence
                    else:
                        other = other or sentence
        if other is not None and same is None:
            return other
    return None


def direction_rule(part: str, window: str, passage: str, guess: NliLabel) -> tuple[Finding, ...]:
    """The direction rule (:data:`~verifai_desktop.verify.finding.Rule`): a SUPPORT guess is
    ``RED`` when the window changes what the part changes only the other way (the module
    docstring), the window's sentence quoted. ``passage`` is not read.

    Returns:
        () or one finding, e.g. ``Finding("directions", Effect.RED, 'the passage says the
        change goes the other way ("... elevated ROS levels in cancer cells ...")')``.
    """
    if guess is not NliLabel.SUPPORT:
        return ()
    sentence = reversed_change(part, window)
    if sentence is None:
        return ()
    reason = f'the passage says the change goes the other way ("{sentence.strip()}")'
    return (Finding("directions", Effect.RED, reason),)
