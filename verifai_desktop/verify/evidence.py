"""A claim against passages from anywhere in a collection: the evidence per passage and the
verdict per document (``verifai check``, the contradiction search).

Every sentence window of every passage goes through the one verification path
(:func:`verifai_desktop.verify.check.verify_pairs`) in one batch; the deciding window is the
evidence. Which passages to check is the caller's choice
(:mod:`verifai_desktop.contradictions` searches the collection for them).
"""

from __future__ import annotations

from collections.abc import Sequence

from verifai_desktop.domain import CheckLabel, DocId, DocumentVerdict, Evidence, Passage
from verifai_desktop.settings import VerifySettings
from verifai_desktop.verify.check import Verifier, verify_pairs
from verifai_desktop.verify.labels import contradicts, supports


def verify_evidence(
    verifier: Verifier,
    claim: str,
    passages: Sequence[Passage],
    numbers: dict[int, int] | None = None,
    thresholds: VerifySettings | None = None,
) -> tuple[Evidence, ...]:
    """The verifier's verdict on ``claim`` against every sentence window of each passage.

    Args:
        verifier: the NLI verifier.
        claim: the hypothesis.
        passages: the premises' passages; all their windows go in one batch.
        numbers: chunk id -> citation number for passages given to the generator.
        thresholds: the per-label thresholds of the shown labels; defaults if None.

    Returns:
        One :class:`Evidence` per passage, in the order given.
    """
    if not passages:
        return ()
    result = verify_pairs(
        verifier,
        [(p.text, claim) for p in passages],
        granularity="sentences",
        sentence_spans=[p.sentence_spans or None for p in passages],
        thresholds=thresholds,
    )
    numbers = numbers or {}
    return tuple(
        Evidence(p, result.verdict(n, p.text, numbers.get(int(p.chunk_id), 0)))
        for n, p in enumerate(passages)
    )


def document_verdicts(
    evidence: Sequence[Evidence], thresholds: VerifySettings
) -> tuple[DocumentVerdict, ...]:
    """One verdict per document: the shown label of its strongest passage, decided ones first
    (then unsure ones, then by strength)."""
    best: dict[int, Evidence] = {}
    for ev in evidence:
        held = best.get(int(ev.passage.doc_id))
        if held is None or ev.strength > held.strength:
            best[int(ev.passage.doc_id)] = ev
    out = []
    for doc_id, ev in best.items():
        v = ev.verdict
        label: CheckLabel = "NO_EVIDENCE"
        if v.shown is not None:
            label = v.shown.value
        elif v.p_contradict >= v.p_support and contradicts(v, thresholds):
            label = "CONTRADICT"
        elif supports(v, thresholds):
            label = "SUPPORT"
        elif contradicts(v, thresholds):
            label = "CONTRADICT"
        out.append(DocumentVerdict(DocId(doc_id), ev.passage.path, ev.passage.title, label, ev))
    rank = {"SUPPORT": 0, "CONTRADICT": 0, "UNSURE": 1, "NO_EVIDENCE": 2}
    out.sort(key=lambda d: (rank[d.label], -d.evidence.strength, int(d.doc_id)))
    return tuple(out)
