"""`verifai eval check`: SciFact's abstract-level evaluation of the contradiction search.

Open setting (Wadden et al., "Fact or Fiction: Verifying Scientific Claims", EMNLP 2020): each
claim is checked against the whole corpus of 5,183 abstracts with
:func:`verifai_desktop.contradictions.check_claim` (candidate passages from BM25, a
negation-aware BM25 variant and dense neighbours, then the NLI verifier on sentence windows);
each document's verdict is the label of its strongest passage.

Abstract-level, label-only: a predicted (claim, abstract, label) is correct when the abstract
is one of the claim's gold evidence abstracts and the label (SUPPORT / CONTRADICT) is its gold
label. Precision = correct / predicted, recall = correct / gold, F1 their harmonic mean. As in
the official evaluator, at most :data:`MAX_ABSTRACTS` abstracts are predicted per claim (the
strongest). Anchors on the test split: VeriSci about 0.47 F1, MultiVerS about 0.72.

One decision is tuned, on the train split only: the least evidence strength
``max(P(SUPPORT), P(CONTRADICT))`` a document needs to be predicted (:data:`STRENGTH_GRID`).
The split reported (dev) is scored at the strength chosen on train.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from verifai_desktop.contradictions import check_claim
from verifai_desktop.domain import Progress
from verifai_desktop.errors import Cancelled, DatasetError
from verifai_desktop.evaluate.beir import BeirDataset, BeirDocument
from verifai_desktop.evaluate.retrieval import open_beir_collection, passage_doc_id
from verifai_desktop.retrieve import Retriever
from verifai_desktop.settings import Settings
from verifai_desktop.verify.check import Verifier

log = logging.getLogger(__name__)

MAX_ABSTRACTS = 3
"""Abstracts predicted per claim at most (the SciFact evaluator's limit)."""

STRENGTH_GRID: tuple[float, ...] = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
"""Least ``max(P(SUPPORT), P(CONTRADICT))`` for a document to be predicted, tried on train."""

ANCHORS: tuple[tuple[str, float], ...] = (
    ("VeriSci (Wadden et al. 2020), test", 0.47),
    ("MultiVerS (Wadden et al. 2022), test", 0.72),
)

COLLECTION = "scifact-open"


@dataclass(frozen=True, slots=True)
class SciFactClaim:
    """One SciFact claim with its gold abstract labels.

    Attributes:
        claim_id: SciFact claim id.
        claim: the claim text.
        gold: abstract id -> ``"SUPPORT"`` or ``"CONTRADICT"`` (empty: not enough info).
    """

    claim_id: int
    claim: str
    gold: dict[str, str]


@dataclass(frozen=True, slots=True)
class Prediction:
    """One document verdict for a claim: abstract id, label, strength (0..1)."""

    doc_id: str
    label: str
    strength: float


@dataclass(frozen=True, slots=True)
class PRF:
    """Label-only precision, recall and F1 (0..1) at one strength threshold."""

    min_strength: float
    precision: float
    recall: float
    f1: float
    predicted: int
    correct: int
    gold: int


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """Where the gold (claim, abstract) pairs of a split are lost, in counts of pairs.

    Attributes:
        gold: gold evidence pairs.
        checked: the gold abstract was among the candidates verified (the recall ceiling of
            the candidate search at the budget).
        right_label: checked, and its verdict is the gold label (at any strength).
        no_evidence: checked, but the verifier found neither support nor contradiction.
        wrong_label: checked, and labelled the opposite of the gold label.
    """

    gold: int
    checked: int
    right_label: int
    no_evidence: int
    wrong_label: int


def diagnose(
    claims: Sequence[SciFactClaim], predictions: Sequence[Sequence[Prediction]]
) -> Diagnosis:
    """Count where each gold pair ends: not a candidate, no evidence, wrong or right label."""
    gold = checked = right = none = wrong = 0
    for claim, preds in zip(claims, predictions, strict=True):
        by_doc = {p.doc_id: p.label for p in preds}
        for doc_id, label in claim.gold.items():
            gold += 1
            if doc_id not in by_doc:
                continue
            checked += 1
            right += by_doc[doc_id] == label
            none += by_doc[doc_id] == "NO_EVIDENCE"
            wrong += by_doc[doc_id] not in (label, "NO_EVIDENCE")
    return Diagnosis(gold, checked, right, none, wrong)


@dataclass(frozen=True, slots=True)
class CheckReport:
    """The evaluation of one split.

    Attributes:
        split: the split reported.
        n_claims: claims checked.
        budget: candidate passages verified per claim.
        chosen_strength: the threshold chosen on the tuning split (``None``: not tuned).
        tuning: the tuning split's sweep (train), ``()`` when not tuned.
        result: the reported split at ``chosen_strength`` (or 0.5 when not tuned).
        sweep: the reported split at every threshold (for information; not used to choose).
        seconds_per_claim: mean wall time of one check.
        diagnosis: where the reported split's gold pairs are lost.
    """

    split: str
    n_claims: int
    budget: int
    chosen_strength: float | None
    tuning: tuple[PRF, ...]
    result: PRF
    sweep: tuple[PRF, ...]
    seconds_per_claim: float
    diagnosis: Diagnosis


def load_claims(path: Path) -> tuple[SciFactClaim, ...]:
    """Read a SciFact ``claims_<split>.jsonl``.

    Raises:
        DatasetError: the file is missing or a line is not a SciFact claim.
    """
    if not path.is_file():
        raise DatasetError(str(path), "no such file; expected SciFact's claims_<split>.jsonl")
    out = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                gold = {
                    str(doc): str(sets[0]["label"])
                    for doc, sets in row.get("evidence", {}).items()
                    if sets
                }
                out.append(SciFactClaim(int(row["id"]), str(row["claim"]), gold))
            except (ValueError, KeyError, TypeError, IndexError) as exc:
                raise DatasetError(f"{path}:{n}", f"not a SciFact claim ({exc})") from exc
    return tuple(out)


def load_corpus(path: Path) -> tuple[BeirDocument, ...]:
    """Read SciFact's ``corpus.jsonl`` (title and abstract sentences) as corpus documents.

    Raises:
        DatasetError: the file is missing or a line is not a SciFact abstract.
    """
    if not path.is_file():
        raise DatasetError(str(path), "no such file; expected SciFact's corpus.jsonl")
    docs = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                docs.append(
                    BeirDocument(str(row["doc_id"]), str(row["title"]), " ".join(row["abstract"]))
                )
            except (ValueError, KeyError, TypeError) as exc:
                raise DatasetError(f"{path}:{n}", f"not a SciFact abstract ({exc})") from exc
    return tuple(docs)


def score(
    claims: Sequence[SciFactClaim],
    predictions: Sequence[Sequence[Prediction]],
    min_strength: float,
) -> PRF:
    """Label-only abstract-level P/R/F1 at ``min_strength`` (at most :data:`MAX_ABSTRACTS`
    predictions per claim, strongest first)."""
    predicted = correct = 0
    gold = sum(len(c.gold) for c in claims)
    for claim, preds in zip(claims, predictions, strict=True):
        kept = sorted(
            (p for p in preds if p.label != "NO_EVIDENCE" and p.strength >= min_strength),
            key=lambda p: -p.strength,
        )[:MAX_ABSTRACTS]
        predicted += len(kept)
        correct += sum(claim.gold.get(p.doc_id) == p.label for p in kept)
    precision = correct / predicted if predicted else 0.0
    recall = correct / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return PRF(min_strength, precision, recall, f1, predicted, correct, gold)


def predict(
    retriever: Retriever,
    verifier: Verifier,
    claims: Sequence[SciFactClaim],
    settings: Settings,
    *,
    budget: int,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> tuple[list[list[Prediction]], float]:
    """Check every claim against the whole corpus; document verdicts per claim and the mean
    seconds per claim.

    Raises:
        Cancelled: ``cancel`` was set.
    """
    out: list[list[Prediction]] = []
    t0 = time.perf_counter()
    for n, claim in enumerate(claims):
        if cancel is not None and cancel.is_set():
            raise Cancelled("claim check evaluation")
        result = check_claim(retriever, verifier, claim.claim, settings.verify, budget=budget)
        preds = []
        for d in result.documents:
            doc_id = passage_doc_id(d.evidence.passage)
            if doc_id is not None:
                preds.append(Prediction(doc_id, d.label, d.evidence.strength))
        out.append(preds)
        if progress:
            progress(Progress("check", n + 1, len(claims), "claims"))
    return out, (time.perf_counter() - t0) / max(1, len(claims))


def _claims(root: Path, split: str, limit: int | None) -> tuple[SciFactClaim, ...]:
    claims = load_claims(root / f"claims_{split}.jsonl")
    if split == "test" and not any(c.gold for c in claims):
        raise DatasetError(str(root / "claims_test.jsonl"), "SciFact's test labels are hidden")
    return claims[:limit] if limit else claims


def evaluate_check(
    root: Path,
    *,
    split: str = "dev",
    tune_split: str | None = "train",
    limit: int | None = None,
    tune_limit: int | None = 200,
    budget: int = 10,
    settings: Settings | None = None,
    verifier: Verifier | None = None,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> CheckReport:
    """SciFact open-setting abstract-level label-only evaluation of ``check_claim``.

    Args:
        root: SciFact's original folder (``corpus.jsonl``, ``claims_<split>.jsonl``).
        split: the split reported.
        tune_split: the split the strength threshold is chosen on (never ``split``); None
            keeps 0.5.
        limit: claims of ``split`` checked (all if None).
        tune_limit: claims of ``tune_split`` checked (the first ones).
        budget: candidate passages verified per claim.
        settings: thresholds and the embedder; defaults if None.
        verifier: the NLI verifier; the one named in the settings if None.
        progress: progress reports (``ingest`` while the corpus is indexed, then ``check``).
        cancel: set to stop.

    Returns:
        The report (tuning sweep, chosen threshold, the split's result and sweep).

    Raises:
        DatasetError: a SciFact file is missing or malformed.
        ValueError: ``tune_split`` equals ``split``.
        Cancelled: ``cancel`` was set.
    """
    from verifai_desktop.verify.nli import get_verifier

    if tune_split == split:
        raise ValueError("tune on another split than the one reported")
    settings = settings or Settings()
    verifier = verifier or get_verifier(settings.models.verifier)
    corpus = load_corpus(root / "corpus.jsonl")
    dataset = BeirDataset(root=root.parent / "scifact", split=split, corpus=corpus, queries={},
                          qrels={})  # fmt: skip
    claims = _claims(root, split, limit)
    tuning: tuple[PRF, ...] = ()
    chosen: float | None = None
    with open_beir_collection(
        dataset, COLLECTION, settings=settings, progress=progress, cancel=cancel
    ) as collection:
        retriever = Retriever(collection, settings.retrieval)
        if tune_split is not None:
            tune_claims = _claims(root, tune_split, tune_limit)
            tune_preds, _ = predict(
                retriever, verifier, tune_claims, settings, budget=budget,
                progress=progress, cancel=cancel,
            )  # fmt: skip
            tuning = tuple(score(tune_claims, tune_preds, t) for t in STRENGTH_GRID)
            chosen = max(tuning, key=lambda r: (r.f1, -r.min_strength)).min_strength
        preds, seconds = predict(
            retriever, verifier, claims, settings, budget=budget, progress=progress, cancel=cancel
        )
    sweep = tuple(score(claims, preds, t) for t in STRENGTH_GRID)
    return CheckReport(
        split=split,
        n_claims=len(claims),
        budget=budget,
        chosen_strength=chosen,
        tuning=tuning,
        result=score(claims, preds, chosen if chosen is not None else 0.5),
        sweep=sweep,
        seconds_per_claim=seconds,
        diagnosis=diagnose(claims, preds),
    )


def format_report(report: CheckReport) -> str:
    """The report as Markdown tables."""
    lines = [
        f"SciFact open setting, abstract-level label-only, split {report.split} "
        f"({report.n_claims} claims, {report.budget} candidate passages per claim, "
        f"{report.seconds_per_claim:.1f} s per claim)",
        "",
    ]
    r = report.result
    chosen = (
        f"{report.chosen_strength:.2f} (chosen on train)"
        if report.chosen_strength is not None
        else "0.50 (not tuned)"
    )
    lines += [
        "| min strength | precision | recall | F1 | predicted | correct | gold |",
        "|---|---|---|---|---|---|---|",
        f"| {chosen} | {r.precision:.3f} | {r.recall:.3f} | **{r.f1:.3f}** | {r.predicted} "
        f"| {r.correct} | {r.gold} |",
        "",
    ]
    lines += ["Anchors (test split): " + "; ".join(f"{n} {f:.2f}" for n, f in ANCHORS), ""]
    d = report.diagnosis
    if d.gold:

        def pct(n: int) -> str:
            return f"{n} ({100 * n / d.gold:.1f}%)"

        lines += [
            f"Where the {d.gold} gold (claim, abstract) pairs end (any strength)",
            "",
            "| not among the candidates verified | no evidence found | opposite label "
            "| gold label |",
            "|---|---|---|---|",
            f"| {pct(d.gold - d.checked)} | {pct(d.no_evidence)} | {pct(d.wrong_label)} "
            f"| {pct(d.right_label)} |",
            "",
        ]
    for title, rows in (("Tuning (train)", report.tuning), (f"Sweep ({report.split}, for "
                        "information only)", report.sweep)):  # fmt: skip
        if not rows:
            continue
        lines += [title, "", "| min strength | P | R | F1 |", "|---|---|---|---|"]
        lines += [
            f"| {x.min_strength:.2f} | {x.precision:.3f} | {x.recall:.3f} | {x.f1:.3f} |"
            for x in rows
        ]
        lines.append("")
    return "\n".join(lines)
