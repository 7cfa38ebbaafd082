"""Facts bound to their subject by name: a sentence the passage says of one named system,
gene or group is not support for the same words said of another (issue 39).

The generator paraphrases the sentence that holds the most of the question's words and can put
the wrong name on it: from "We experiment with fine-tuning SciBERT ... inferior to ... SPECTER.
Specifically, we finetune SciBERT directly on task-specific signals instead of citations." it
wrote "SPECTER uses citations for task-specific signals instead of citations", and the verifier
read it as supported (the window names SPECTER too). :func:`name_rule` finds the window sentence
that says what the part says (:func:`anchor_sentence`: the most of the part's content words
other than its names); when that sentence holds none of the part's names and names another
one the part does not, a SUPPORT guess is held back, the other name quoted.

Chosen on dev data (``models/paraphrase_dev.py``): on the name-binding dev set
(``models/data/name_binding_dev.jsonl``, 30 twins on SciFact train/dev abstracts) wrong names
caught 0.43 -> 0.60 with the right ones kept green (0.63 either way); on SciFact dev three wrong
greens held back and no right one; the paraphrase dev set unchanged. Holding back when *any*
name of the part is missing from the sentence cost four right greens on SciFact dev
(abbreviations and synonyms: "InsP3" for "IP3R"), when its first name is missing two; both
were dropped.

A *name* (:func:`names`) is a word with a capital letter after its first character ("SPECTER",
"SciBERT", "GlsA", "IL-6", "COVID-19"), without a lower-case ending after a hyphen ("HIV" of
"HIV-positive"), except the statistics' abbreviations, Roman numerals, an abstract's section
headings and capitalised stop words (:data:`NOT_NAMES`, :data:`~verifai_desktop.words.STOP_WORDS`).
An abbreviation and the words it abbreviates are one subject: a name is not missing from a
sentence that spells it out ("haematopoietic stem cells" for "HSCs"), and a name of the sentence
is no other subject when the part spells it out.

:func:`swap_rule` reads attributes exchanged between two names: "The H1047R hotspot lies in the
helical domain" against "two hotspots: the helical domain (E545K and E542K) and the kinase
domain (H1047R)", where the part's "helical" stands only in the phrase of E545K.
"""

from __future__ import annotations

import functools
import re

from verifai_desktop.domain import NliLabel
from verifai_desktop.ingest.sentences import split_sentences
from verifai_desktop.verify.figure_subjects import subject_words
from verifai_desktop.verify.finding import Effect, Finding
from verifai_desktop.words import STOP_WORDS

_STATISTICS = "CI CIS OR ORS HR HRS RR RRS SD SE SEM IQR AUC ROC ANOVA NS"
_NUMERALS_PLACES = "II III IV VI VII VIII IX XI XII US USA UK EU"
_HEADINGS = (
    "ABSTRACT AIM AIMS BACKGROUND CONCLUSION CONCLUSIONS CONTEXT DESIGN DISCUSSION EXPOSURE "
    "EXPOSURES FINDINGS FUNDING IMPORTANCE INTERPRETATION INTERVENTION INTERVENTIONS "
    "INTRODUCTION LIMITATIONS MAIN MATERIALS MEASUREMENTS MEASURES METHODS OBJECTIVE "
    "OBJECTIVES OUTCOME OUTCOMES PARTICIPANTS PATIENTS PURPOSE RATIONALE RELEVANCE RESULTS "
    "SAMPLE SETTING SETTINGS SIGNIFICANCE STUDY SUMMARY"
)
NOT_NAMES = frozenset(f"{_STATISTICS} {_NUMERALS_PLACES} {_HEADINGS}".split())
"""Capitalised words that name no subject: the statistics' abbreviations (confidence interval,
odds, hazard and risk ratios, ...), Roman numerals, a few places that qualify rather than name,
and the section headings of structured abstracts ("METHODS AND RESULTS")."""

ANCHOR_SHARE = 0.4
"""Share of the part's content words (names left out) the anchor sentence must hold, and at
least :data:`ANCHOR_MIN` of them: below it no sentence says what the part says."""

ANCHOR_MIN = 2

_WORD = re.compile(r"(?<![\w-])[^\W\d_][\w]*(?:-[\w]+)*")
_LOWER_ENDING = re.compile(r"(?:-[a-z]+)+$")
_INITIAL = re.compile(r"[^\W\d_]+")


def names(text: str) -> tuple[str, ...]:
    """The names in ``text`` in the order they first occur: words with a capital letter after
    their first character, as written, a lower-case ending after a hyphen cut off
    (:data:`NOT_NAMES` and capitalised stop words left out)."""
    out: dict[str, None] = {}
    for match in _WORD.finditer(text):
        word = _LOWER_ENDING.sub("", match.group())
        if (
            len(word) >= 2
            and any(c.isupper() for c in word[1:])
            and word.upper() not in NOT_NAMES
            and word.lower() not in STOP_WORDS
        ):
            out[word] = None
    return tuple(out)


def spelled_out(name: str, text: str) -> bool:
    """Whether ``text`` holds words whose initials are ``name``'s capitals, in a row
    ("haematopoietic stem cells" for "HSCs"; case ignored)."""
    letters = "".join(c for c in name if c.isupper()).lower()
    if len(letters) < 2:
        return False
    initials = "".join(w[0] for w in _INITIAL.findall(text)).lower()
    return letters in initials


def _mentions(name: str, text: str) -> bool:
    return name.lower() in text.lower() or spelled_out(name, text)


def anchor_sentence(part: str, window: str) -> str | None:
    """The sentence of ``window`` holding the most of ``part``'s content words other than its
    names (:func:`~verifai_desktop.verify.figure_subjects.subject_words`), or None when none holds
    :data:`ANCHOR_SHARE` of them and at least :data:`ANCHOR_MIN`."""
    named = subject_words(" ".join(names(part)))
    content = subject_words(part) - named
    if len(content) < ANCHOR_MIN:
        return None
    best, best_shared = None, 0
    for start, end in split_sentences(window):
        sentence = window[start:end]
        shared = len(content & subject_words(sentence))
        if shared > best_shared:
            best, best_shared = sentence, shared
    if best_shared < max(ANCHOR_MIN, ANCHOR_SHARE * len(content)):
        return None
    return best


def name_rule(part: str, window: str, passage: str, guess: NliLabel) -> tuple[Finding, ...]:
    """The name rule (:data:`~verifai_desktop.verify.finding.Rule`): a SUPPORT guess is
    ``HOLD`` when the window sentence that says what the part says (:func:`anchor_sentence`)
    holds none of the part's names and names another that the part does not. ``passage`` is not
    read."""
    if guess is not NliLabel.SUPPORT:
        return ()
    claimed = names(part)
    if not claimed:
        return ()
    anchor = anchor_sentence(part, window)
    if anchor is None:
        return ()
    missing = [n for n in claimed if not _mentions(n, anchor)]
    others = [n for n in names(anchor) if not _mentions(n, part)]
    if len(missing) < len(claimed) or not others:
        return ()
    reason = f"the passage says this of {others[0]}, not {missing[0]}"
    return (Finding("names", Effect.HOLD, reason),)


_SEGMENT = re.compile(r"\)|[;:]|,\s+|\bas\s+well\s+as\b|\bwhereas\b|\bwhile\b", re.IGNORECASE)
"""Where a phrase of a sentence ends: a bracket stays with the phrase it follows ("the helical
domain (E545K and E542K)"), a list of items is cut at its commas."""
_CAPITALISED = re.compile(r"(?<![\w-])[A-Z][a-z][\w]*")


def _proper_names(text: str, opening: bool) -> dict[str, str]:
    """:func:`names` and capitalised words ("Drosophila", "Volvox"), lower-cased -> as written;
    the word opening ``text`` only with ``opening`` (a sentence's first word is capitalised
    anyway); units written like names ("pH") left out."""
    found = {n.lower(): n for n in names(text)}
    for match in _CAPITALISED.finditer(text):
        word = match.group()
        if word.upper() in NOT_NAMES or word.lower() in STOP_WORDS:
            continue
        if opening or text[: match.start()].strip():
            found[word.lower()] = word
    return {k: v for k, v in found.items() if k not in _UNIT_NAMES}


_UNIT_NAMES = frozenset(("ph", "kda", "mmhg", "ml", "dl", "mg", "kg"))
"""Units written with a capital letter inside ("pH", "kDa"): no names."""


@functools.lru_cache(maxsize=1024)
def swapped_pair(part: str, window: str) -> tuple[str, str, str] | None:
    """A name of ``part`` given what ``window`` gives another name, or None.

    A word of the part stands in one phrase of a window sentence only (:data:`_SEGMENT`), the
    phrase of another name, and that phrase and the phrase of the part's name are parallel: both
    hold a word of the part. A name the part spells out ("loss of imprinting" for "LOI") is no
    other name. Memoised: the swap rule asks for the same (part, window) once per guess.

    Returns:
        The part's name, the other name's phrase and the other name, as written: ("H1047R",
        "the helical domain (E545K and E542K", "E542K") for "The H1047R hotspot lies in the
        helical domain" against "two hotspots: the helical domain (E545K and E542K) and the
        kinase domain (H1047R)".
    """
    ours = _proper_names(part, opening=True)
    if not ours:
        return None
    words = subject_words(part) - subject_words(" ".join(ours))
    for start, end in split_sentences(window):
        sentence = window[start:end]
        segments = [s for s in _SEGMENT.split(sentence) if s.strip()]
        theirs = []
        for i, segment in enumerate(segments):
            named = _proper_names(segment, opening=i > 0)
            other = {v for k, v in named.items() if k not in ours and not spelled_out(v, part)}
            theirs.append((set(named), other, subject_words(segment)))
        for name in ours:
            holding = [i for i, (named, _, _) in enumerate(theirs) if name in named]
            if len(holding) != 1:
                continue
            own = theirs[holding[0]][2]
            for word in words - own:
                places = [i for i, (_, _, held) in enumerate(theirs) if word in held]
                if len(places) != 1 or not theirs[places[0]][1]:
                    continue
                # parallel phrases: both hold a word of the part ("the helical domain (E545K
                # and E542K) and the kinase domain (H1047R)")
                if own & theirs[places[0]][2] & words:
                    return ours[name], segments[places[0]].strip(), sorted(theirs[places[0]][1])[0]
    return None


def swap_rule(part: str, window: str, passage: str, guess: NliLabel) -> tuple[Finding, ...]:
    """The swap rule (:data:`~verifai_desktop.verify.finding.Rule`): a SUPPORT guess is
    ``HOLD`` when the window gives a word of the part only to another name, in a phrase parallel
    to the one holding the part's name (:func:`swapped_pair`): attributes exchanged between two
    named subjects. ``passage`` is not read.

    Chosen on the paraphrase dev set: one wrong claim green -> unsure ("The H1047R hotspot lies
    in the helical domain, while E545K and E542K are in the kinase domain"), nothing else moved
    there, on the training claims, the name twins, SciFact dev or HealthVer dev. Without the
    parallel phrases (a word of the part found only in another name's phrase) it caught two
    more wrong dev claims, four name twins and six training claims, but held back six right
    SciFact dev greens ("AIRE is expressed in some skin tumors": "tumors" stands in the phrase
    of GLI2), two name twins and five right training claims.

    Returns:
        () or one finding, e.g. ``Finding("names", Effect.HOLD, 'the passage says this of E542K,
        not H1047R ("the helical domain (E545K and E542K")')``.
    """
    if guess is not NliLabel.SUPPORT:
        return ()
    found = swapped_pair(part, window)
    if found is None:
        return ()
    name, phrase, other = found
    reason = f'the passage says this of {other}, not {name} ("{phrase}")'
    return (Finding("names", Effect.HOLD, reason),)
