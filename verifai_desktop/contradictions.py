"""Evidence for a claim from a whole collection: contradiction search and ``verifai check``.

Layer: use cases (beside :mod:`verifai_desktop.pipeline`): it searches the collection through
:mod:`verifai_desktop.retrieve` and verifies through :mod:`verifai_desktop.verify`.

A verdict on the passages the generator happened to be given says nothing about the other
documents of a collection. This module searches the whole collection for passages that
support or contradict a claim, in the decoupled design of contradiction-aware retrieval
(TREC BioGen 2025, "Negation is Not Semantic"): candidates first, from three lists fused by
reciprocal rank fusion (RRF, k = 60, Cormack et al., SIGIR 2009):

1. BM25 on the claim's content terms (the lexical index drops stop words, so "not" and "no"
   never match anything);
2. BM25 on a negation-aware variant (NegEx-style cue list, Chapman et al., 2001): a claim that
   holds a negation cue is searched with its cues removed, a claim without one with the
   indexed cue words added, so passages that deny what the claim asserts rank higher;
3. the claim's dense neighbours (cosine, the collection's embedder);

then the NLI verifier on every sentence window of the top ``budget`` candidates, one batch
(:func:`verifai_desktop.verify.check.verify_pairs`), the deciding window kept as evidence. A
passage's statements of aim or hypothesis are not evidence (:mod:`verifai_desktop.verify.aims`),
so a paper's own hypothesis is never listed as a conflicting passage. The budget bounds the
cost: ``budget`` passages x about 3 windows per sentence of each.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Sequence

from verifai_desktop.domain import AnswerSentence, CheckResult, Evidence, Passage
from verifai_desktop.errors import StoreUnavailable
from verifai_desktop.retrieve import Fused, PassageRetriever
from verifai_desktop.settings import VerifySettings
from verifai_desktop.verify.check import Verifier, verify_pairs
from verifai_desktop.verify.evidence import document_verdicts, verify_evidence
from verifai_desktop.verify.labels import conflicts_with, contradicts, supports
from verifai_desktop.verify.parts import claim_parts
from verifai_desktop.verify.subject import SUBJECT_SHARE, subject_share

log = logging.getLogger(__name__)

RRF_K = 60
"""Reciprocal rank fusion constant (Cormack, Clarke & Buettcher, SIGIR 2009)."""

CANDIDATES_PER_LIST = 30
"""Hits each of the three candidate lists contributes before fusion."""

NEGATION_CUES = frozenset(
    {
        "no",
        "not",
        "never",
        "none",
        "neither",
        "nor",
        "without",
        "cannot",
        "can't",
        "don't",
        "doesn't",
        "didn't",
        "isn't",
        "aren't",
        "wasn't",
        "weren't",
        "lack",
        "lacks",
        "lacked",
        "absence",
        "absent",
        "fail",
        "fails",
        "failed",
        "unable",
    }
)
"""Negation cues (a short English subset of NegEx's pre-negation triggers, Chapman et al.
2001), matched as whole lower-case words."""

INDEXED_CUES = ("never", "without", "neither", "lack", "absence", "fail", "unable", "cannot")
"""Cues the BM25 index keeps (not English stop words): added to a claim that has none."""

_WORD_RE = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")


def has_negation(claim: str) -> bool:
    """Whether ``claim`` holds a negation cue of :data:`NEGATION_CUES`."""
    return any(w.lower() in NEGATION_CUES for w in _WORD_RE.findall(claim))


def negation_variant(claim: str) -> str:
    """The negation-aware query: ``claim`` without its cues if it has any, else with the
    indexed cues (:data:`INDEXED_CUES`) appended."""
    if has_negation(claim):
        return " ".join(w for w in _WORD_RE.findall(claim) if w.lower() not in NEGATION_CUES)
    return f"{claim} {' '.join(INDEXED_CUES)}"


def about_subject(claim: str, passage: str) -> bool:
    """Whether ``passage`` holds at least :data:`~verifai_desktop.verify.subject.SUBJECT_SHARE`
    of the subject words of one of ``claim``'s parts
    (:func:`~verifai_desktop.verify.parts.claim_parts`). A passage that does not could not be
    shown contradicting the claim by the NLI verifier: every window of it holds fewer, and the
    subject rule holds their CONTRADICT back (issue 40, item 4: the contradiction search leaves
    such candidates out without asking the verifier)."""
    return any(subject_share(part.text, passage) >= SUBJECT_SHARE for part in claim_parts(claim))


def candidate_passages(retriever: PassageRetriever, claim: str, budget: int) -> tuple[Passage, ...]:
    """The ``budget`` passages of the collection most likely to decide ``claim``.

    RRF over BM25 on the claim, BM25 on :func:`negation_variant` and the dense neighbours,
    :data:`CANDIDATES_PER_LIST` hits each.

    Raises:
        ValueError: ``budget`` below 1.
    """
    if budget < 1:
        raise ValueError(f"budget must be 1 or more, got {budget}")
    lists = [
        retriever.lexical_hits(claim, CANDIDATES_PER_LIST),
        retriever.lexical_hits(negation_variant(claim), CANDIDATES_PER_LIST),
        retriever.semantic_hits(claim, CANDIDATES_PER_LIST),
    ]
    scores: dict[int, float] = {}
    for hits in lists:
        for rank, (chunk_id, _) in enumerate(hits, start=1):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (RRF_K + rank)
    raw_lex = dict(lists[0])
    raw_sem = dict(lists[2])
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    fused = [
        Fused(cid, score, 0.0, 0.0, raw_lex.get(cid), raw_sem.get(cid)) for cid, score in ranked
    ]
    return retriever.passages(fused, budget)


def check_claim(
    retriever: PassageRetriever,
    verifier: Verifier,
    claim: str,
    thresholds: VerifySettings,
    *,
    budget: int,
) -> CheckResult:
    """Search the whole collection for passages that support or contradict ``claim``.

    Args:
        retriever: the collection's retriever (its BM25 and HNSW indexes).
        verifier: the NLI verifier.
        claim: any statement.
        thresholds: the per-label thresholds of the shown labels.
        budget: candidate passages verified (:func:`candidate_passages`).

    Returns:
        Supporting and contradicting passages and a verdict per document.

    Raises:
        ValueError: ``budget`` below 1.
    """
    found = candidate_passages(retriever, claim, budget)
    evidence = verify_evidence(verifier, claim, found, thresholds=thresholds)
    supporting = sorted(
        (e for e in evidence if supports(e.verdict, thresholds)),
        key=lambda e: -e.verdict.p_support,
    )
    contradicting = sorted(
        (e for e in evidence if contradicts(e.verdict, thresholds)),
        key=lambda e: -e.verdict.p_contradict,
    )
    return CheckResult(
        claim=claim,
        supporting=tuple(supporting),
        contradicting=tuple(contradicting),
        documents=document_verdicts(evidence, thresholds),
        candidates=len(evidence),
    )


def find_conflicts(
    retriever: PassageRetriever,
    verifier: Verifier,
    claims: Sequence[str],
    thresholds: VerifySettings,
    *,
    budget: int,
    skip: frozenset[int] = frozenset(),
    subject_gate: bool = True,
) -> tuple[tuple[Evidence, ...], ...]:
    """Per claim, the passages of the collection that contradict it, strongest first.

    Every claim's ``budget`` candidates (:func:`candidate_passages`, chunk ids in ``skip``
    left out: the passages an answer already verified; with ``subject_gate``, those not
    :func:`about_subject` too) go through the verifier in one batch.

    Args:
        retriever: the collection's retriever.
        verifier: the NLI verifier.
        claims: the hypotheses (answer sentences without citation markers).
        thresholds: the per-label thresholds of the shown labels.
        budget: candidate passages verified per claim.
        skip: chunk ids not to verify again.
        subject_gate: leave out the candidates not :func:`about_subject` of their claim (they
            still count against ``budget``: the same passages are read, fewer verified).

    Returns:
        One tuple per claim, of the passages shown as contradicting it.

    Raises:
        ValueError: ``budget`` below 1.
    """
    owners: list[int] = []
    items: list[Passage] = []
    for n, claim in enumerate(claims):
        found = candidate_passages(retriever, claim, budget + len(skip))
        mine = [p for p in found if int(p.chunk_id) not in skip][:budget]
        if subject_gate:
            mine = [p for p in mine if about_subject(claim, p.text)]
        owners += [n] * len(mine)
        items += mine
    out: list[list[Evidence]] = [[] for _ in claims]
    if not items:
        return tuple(() for _ in claims)
    result = verify_pairs(
        verifier,
        [(p.text, claims[n]) for n, p in zip(owners, items, strict=True)],
        granularity="sentences",
        sentence_spans=[p.sentence_spans or None for p in items],
        thresholds=thresholds,
    )
    for i, (n, p) in enumerate(zip(owners, items, strict=True)):
        verdict = result.verdict(i, p.text, 0)
        if conflicts_with(verdict, thresholds, claims[n]):
            out[n].append(Evidence(p, verdict))
    return tuple(tuple(sorted(found, key=lambda e: -e.verdict.p_contradict)) for found in out)


def add_conflicts(
    retriever: PassageRetriever,
    verifier: Verifier,
    sentences: Sequence[AnswerSentence],
    passages: Sequence[Passage],
    thresholds: VerifySettings,
) -> tuple[AnswerSentence, ...]:
    """Add to each answer sentence the passages elsewhere in the collection that contradict it
    (:func:`find_conflicts`, one verifier batch; ``passages``, the ones the answer was given,
    left out) under the ``thresholds`` the answer was verified with; a sentence without a
    letter or digit is not searched for. When a server store cannot be used by then (a team
    collection's connection lost while the answer was written), the sentences are returned as
    given and a warning is logged: the answer outlives the search."""
    claims = [s.claim for s in sentences]
    todo = [i for i, claim in enumerate(claims) if any(ch.isalnum() for ch in claim)]
    try:
        found = find_conflicts(
            retriever,
            verifier,
            [claims[i] for i in todo],
            thresholds,
            budget=thresholds.conflict_budget,
            skip=frozenset(int(p.chunk_id) for p in passages),
        )
    except StoreUnavailable as exc:
        log.warning(
            "no search of the collection for conflicting passages (%s); the answer is shown "
            "without it",
            exc,
        )
        return tuple(sentences)
    out = list(sentences)
    for i, extra in zip(todo, found, strict=True):
        if extra:
            merged = sorted((*out[i].conflicts, *extra), key=lambda e: -e.verdict.p_contradict)
            out[i] = dataclasses.replace(out[i], conflicts=tuple(merged))
    return tuple(out)
