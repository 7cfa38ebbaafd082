"""Verify a generated answer: every sentence against the passages, with re-citation.

After VerifAI (Kosprdic et al., 2024) every (sentence, cited passage) pair is checked by the
NLI verifier. A generator often cites the wrong passage of the ones it was given (on PubMedQA
the question's own abstract is given 97.5% of the time but cited only 67.5%), so with
``verify.recite`` on (the default) each sentence is checked against *every* passage given, a
sentence's pairs in one verifier batch through :func:`verifai_desktop.verify.check.verify_pairs`
(one batch per sentence, so that checking can report its progress sentence by sentence):

* a sentence its citations support, or one a cited passage contradicts, keeps its citations
  and label (:func:`verifai_desktop.verify.labels.sentence_label`; contradiction wins);
* a sentence labelled ``no_evidence``, ``partially_supported`` or ``unreferenced`` that some
  passage given supports is re-cited: ``supported``, citing the generator's supporting
  citations first, then the strongest other supporters, at most :data:`MAX_CITATIONS`; the
  generator's citations, their verdicts and label are kept on the sentence and its text gets
  the corrected markers (the answer text too, so copy and export cite the evidence);
* a sentence no passage supports keeps its label;
* passages given that contradict a sentence they are not cited for are kept as its
  ``conflicts``, and so is the contradicting window of a passage that supports it through
  another window (the collection-wide search of :mod:`verifai_desktop.contradictions` adds
  the rest of the collection).

Re-citation repairs the attribution, not the text (unlike RARR, Gao et al. 2023, which
revises the text), with the same verifier and thresholds as the labels.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from verifai_desktop.domain import (
    AnswerSentence,
    Evidence,
    Passage,
    Progress,
    SentenceLabel,
    Verdict,
)
from verifai_desktop.settings import VerifySettings
from verifai_desktop.verify.check import Verifier, verify_pairs
from verifai_desktop.verify.claims import ParsedSentence, Splitter, split_answer, with_citations
from verifai_desktop.verify.labels import conflicts_with, sentence_label, supports

MAX_CITATIONS = 3
"""Most citations a re-cited sentence gets (the citation grammar allows three per sentence)."""

RECITABLE = frozenset(
    {SentenceLabel.NO_EVIDENCE, SentenceLabel.PARTIALLY_SUPPORTED, SentenceLabel.UNREFERENCED}
)
"""Labels from the generator's citations that re-citation may turn into ``supported``."""

VERIFY_STAGE = "verify"
"""The :class:`Progress` stage of :func:`verify_answer`, in answer sentences checked."""


@dataclass(frozen=True, slots=True)
class VerifiedText:
    """An answer's sentences after verification.

    Attributes:
        text: the answer text, with corrected citation markers where sentences were re-cited.
        sentences: the sentences, offsets into ``text``.
        generated_text: the text as generated when ``text`` differs from it, else ``None``.
    """

    text: str
    sentences: tuple[AnswerSentence, ...]
    generated_text: str | None


def _has_words(claim: str) -> bool:
    return any(ch.isalnum() for ch in claim)


def verify_answer(
    verifier: Verifier,
    text: str,
    passages: Sequence[Passage],
    thresholds: VerifySettings,
    *,
    splitter: Splitter | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> VerifiedText:
    """Split ``text`` into sentences, verify them one verifier batch per sentence, label and
    re-cite them.

    Args:
        verifier: the NLI verifier.
        text: the generated answer; citations ``[n]`` name ``passages[n - 1]``.
        passages: the passages given to the generator, in prompt order.
        thresholds: support/contradict thresholds, premise granularity and ``recite``.
        splitter: sentence splitter; the ingest splitter when None.
        progress: called with ``Progress(VERIFY_STAGE, i, n, "sentences")`` before sentence
            ``i + 1`` of ``n`` is checked, then with ``done == total``.

    Returns:
        The (possibly re-cited) text and its sentences. Pairs verified: one per (sentence,
        cited passage) with ``recite`` off; one per (sentence with words, passage given) with
        it on.

    Raises:
        ValueError: ``thresholds.premise`` is not a known granularity.
    """
    parsed = split_answer(text, len(passages), splitter=splitter)
    recite = thresholds.recite and bool(passages)
    out: list[AnswerSentence] = []
    for i, s in enumerate(parsed):
        if progress:
            progress(Progress(VERIFY_STAGE, i, len(parsed), "sentences"))
        numbers: Sequence[int] = s.citations
        if recite and _has_words(s.claim):
            numbers = range(1, len(passages) + 1)
        result = verify_pairs(
            verifier,
            [(passages[n - 1].text, s.claim) for n in numbers],
            granularity=thresholds.premise,
            sentence_spans=[passages[n - 1].sentence_spans or None for n in numbers],
            thresholds=thresholds,
        )
        verdicts: list[Verdict] = []
        inner: list[Evidence] = []
        for k, n in enumerate(numbers):
            premise = passages[n - 1].text
            verdicts.append(result.verdict(k, premise, n))
            conflict = result.conflict(k, premise, n)
            if conflict is not None and conflicts_with(conflict, thresholds, s.claim):
                inner.append(Evidence(passages[n - 1], conflict))
        out.append(_label(s, verdicts, passages, thresholds, recite=recite, inner=inner))
    if progress:
        progress(Progress(VERIFY_STAGE, len(parsed), len(parsed), "sentences"))
    return _rebuild(text, parsed, out)


def _label(
    s: ParsedSentence,
    verdicts: Sequence[Verdict],
    passages: Sequence[Passage],
    thresholds: VerifySettings,
    *,
    recite: bool,
    inner: Sequence[Evidence] = (),
) -> AnswerSentence:
    """One sentence's label from its verdicts (one per passage verified), re-cited if due.

    ``inner``: contradicting windows of passages that support the sentence through another
    window (kept as conflicts beside the support), under the same relevance gate as other
    passages (:func:`~verifai_desktop.verify.labels.conflicts_with`): none of the 11 such
    conflicts listed in 50 answers to dev figure questions was real (mostly another measure of
    the very study that supports the sentence), and the gate drops 10 of them
    (``models/shown_conflicts.py``; README, "Conflicts that are real")."""
    of = {v.passage_number: v for v in verdicts}
    cited = tuple(of[n] for n in s.citations)
    label = sentence_label(cited, thresholds)
    supporters = sorted(
        (v for v in verdicts if supports(v, thresholds)), key=lambda v: -v.p_support
    )
    supported_by = tuple((v.passage_number, v.p_support) for v in supporters) if recite else ()
    others = [
        Evidence(passages[v.passage_number - 1], v)
        for v in verdicts
        if recite and conflicts_with(v, thresholds, s.claim) and v.passage_number not in s.citations
    ]
    conflicts = tuple(sorted([*others, *inner], key=lambda e: -e.verdict.p_contradict))
    sentence = AnswerSentence(
        text=s.text,
        char_start=s.char_start,
        char_end=s.char_end,
        citations=s.citations,
        verdicts=cited,
        label=label,
        invalid_citations=s.invalid_citations,
        supported_by=supported_by,
        conflicts=conflicts,
    )
    if not (recite and supporters and label in RECITABLE):
        return sentence
    keep = [v for v in cited if supports(v, thresholds)]
    chosen = (keep + [v for v in supporters if v not in keep])[:MAX_CITATIONS]
    numbers = tuple(v.passage_number for v in chosen)
    return AnswerSentence(
        text=with_citations(s.text, numbers),
        char_start=s.char_start,
        char_end=s.char_end,
        citations=numbers,
        verdicts=tuple(chosen),
        label=sentence_label(chosen, thresholds),
        invalid_citations=s.invalid_citations,
        cited_by_generator=s.citations,
        generator_verdicts=cited,
        generator_label=label,
        supported_by=supported_by,
        conflicts=tuple(
            e for e in conflicts if e.verdict.passage_number not in numbers or e in inner
        ),
    )


def _rebuild(
    text: str, parsed: Sequence[ParsedSentence], sentences: Sequence[AnswerSentence]
) -> VerifiedText:
    """The answer text with each sentence's (possibly re-cited) text, offsets recomputed."""
    if all(not s.recited for s in sentences):
        return VerifiedText(text, tuple(sentences), None)
    pieces: list[str] = []
    out: list[AnswerSentence] = []
    prev_end = 0
    length = 0
    for p, s in zip(parsed, sentences, strict=True):
        gap = text[prev_end : p.char_start]
        pieces.append(gap)
        length += len(gap)
        start = length
        pieces.append(s.text)
        length += len(s.text)
        out.append(dataclasses.replace(s, char_start=start, char_end=length))
        prev_end = p.char_end
    pieces.append(text[prev_end:])
    return VerifiedText("".join(pieces), tuple(out), text)
