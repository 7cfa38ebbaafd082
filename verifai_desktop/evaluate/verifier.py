"""Verifier evaluation: SciFact, HealthVer and NLI files as 3-class (premise, claim) pairs.

* SciFact (Wadden et al. 2020, original release): every (claim, cited abstract) is a pair,
  labelled as in VerifAI's transformation (Bojic et al. 2024): SUPPORT / CONTRADICT when the
  abstract holds evidence for the claim, NO_EVIDENCE when it holds none.
* HealthVer (Sarrouti et al. 2021): ``evidence`` / ``claim`` / ``label`` CSV, Supports /
  Refutes / Neutral.
* NLI files: SNLI jsonl, TextFooler TSV (SNLI/MNLI samples), SICK txt, FEVER-Symmetric jsonl;
  entailment / SUPPORTS -> SUPPORT, contradiction / REFUTES -> CONTRADICT, neutral /
  NOT ENOUGH INFO -> NO_EVIDENCE.

Metrics: per-class precision, recall and F1, macro and support-weighted F1, accuracy and the
confusion matrix (rows gold, columns predicted, both in SUPPORT, CONTRADICT, NO_EVIDENCE order).
"""

from __future__ import annotations

import csv
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.domain import NliLabel, Progress
from verifai_desktop.errors import EvalDataError
from verifai_desktop.evaluate.shown import (
    SHOWN_ORDER,
    format_kinds,
    format_shown,
    kind_metrics,
    shown_metrics,
    verify_in_chunks,
)
from verifai_desktop.settings import PremiseGranularity, VerifySettings
from verifai_desktop.verify.calibration import expected_calibration_error
from verifai_desktop.verify.check import LABEL_ORDER, Verifier
from verifai_desktop.verify.checks import ALL_CHECKS, Checks

log = logging.getLogger(__name__)

_NLI_LABELS = {
    "entailment": NliLabel.SUPPORT, "contradiction": NliLabel.CONTRADICT,
    "neutral": NliLabel.NO_EVIDENCE, "supports": NliLabel.SUPPORT,
    "refutes": NliLabel.CONTRADICT, "not enough info": NliLabel.NO_EVIDENCE,
}  # fmt: skip
_POOL_LABELS = {label.value: label for label in NliLabel}
_HEALTHVER_LABELS = {
    "supports": NliLabel.SUPPORT,
    "refutes": NliLabel.CONTRADICT,
    "neutral": NliLabel.NO_EVIDENCE,
}


@dataclass(frozen=True, slots=True)
class EvalPair:
    """One labelled (premise, hypothesis) pair.

    Attributes:
        premise: evidence text (a whole abstract for SciFact).
        hypothesis: the claim.
        label: gold class.
        pair_id: where it came from (``"scifact:12:4983"``, ``"healthver:12813"``, ``"snli:3"``).
        kind: what kind of claim it is, where the file says (the paraphrase dev set's
            ``"wrong_subject_figure"``, ``"correct_negative"``, ...); ``""`` otherwise.
    """

    premise: str
    hypothesis: str
    label: NliLabel
    pair_id: str
    kind: str = ""


# -- data ------------------------------------------------------------------------------------


def load_scifact(folder: Path, split: str = "dev") -> list[EvalPair]:
    """SciFact claim-abstract pairs of a split (original release format).

    Args:
        folder: folder with ``claims_<split>.jsonl`` and ``corpus.jsonl`` (or its parent
            holding ``original/``).
        split: ``train`` or ``dev`` (``test`` has no labels).

    Raises:
        EvalDataError: files missing or the split has no evidence annotations.
    """
    folder = Path(folder)
    if not (folder / "corpus.jsonl").is_file() and (folder / "original").is_dir():
        folder = folder / "original"
    claims_path = folder / f"claims_{split}.jsonl"
    corpus_path = folder / "corpus.jsonl"
    for p in (claims_path, corpus_path):
        if not p.is_file():
            raise EvalDataError(
                p, "not found; give the SciFact release folder (claims_*.jsonl, corpus.jsonl)"
            )
    corpus: dict[int, str] = {}
    with corpus_path.open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            corpus[int(d["doc_id"])] = " ".join(s.strip() for s in d["abstract"])
    pairs = []
    with claims_path.open(encoding="utf-8") as fh:
        for line in fh:
            c = json.loads(line)
            if "cited_doc_ids" not in c or "evidence" not in c:
                raise EvalDataError(claims_path, "claims have no evidence labels (test split?)")
            for doc in c["cited_doc_ids"]:
                ev = c["evidence"].get(str(doc))
                label = NliLabel(ev[0]["label"]) if ev else NliLabel.NO_EVIDENCE
                pairs.append(
                    EvalPair(corpus[int(doc)], c["claim"], label, f"scifact:{c['id']}:{doc}")
                )
    return pairs


def load_healthver(path: Path) -> list[EvalPair]:
    """HealthVer CSV rows (``id, evidence, claim, label, ...``) as pairs.

    Raises:
        EvalDataError: file missing or without the expected columns.
    """
    path = Path(path)
    if not path.is_file():
        raise EvalDataError(path, "not found")
    pairs: list[EvalPair] = []
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        if not reader.fieldnames or not {"evidence", "claim", "label"} <= set(reader.fieldnames):
            raise EvalDataError(path, "expected HealthVer columns id, evidence, claim, label")
        for row in reader:
            label = _HEALTHVER_LABELS.get(row["label"].strip().lower())
            if label is not None:
                pairs.append(
                    EvalPair(
                        row["evidence"].strip(),
                        row["claim"].strip(),
                        label,
                        f"healthver:{row.get('id', len(pairs))}",
                    )
                )
    return pairs


def load_nli(path: Path) -> list[EvalPair]:
    """An NLI file (SNLI jsonl, TextFooler TSV, SICK txt, FEVER-Symmetric jsonl, or the NLI
    training pool's normalised JSONL: ``premise``, ``hypothesis``, ``label`` in SUPPORT /
    CONTRADICT / NO_EVIDENCE, optionally ``kind``) as pairs.

    SNLI rows without a gold label (``-``) are dropped.

    Raises:
        EvalDataError: file missing or in none of these formats.
    """
    path = Path(path)
    if not path.is_file():
        raise EvalDataError(path, "not found")
    name = path.stem
    pairs: list[EvalPair] = []
    with path.open(encoding="utf-8") as fh:
        if path.suffix == ".jsonl":
            for n, line in enumerate(fh):
                if not line.strip():
                    continue
                d = json.loads(line)
                if "premise" in d and "hypothesis" in d:  # the NLI pool's normalised JSONL
                    premise, hypothesis = d["premise"], d["hypothesis"]
                    label = _POOL_LABELS.get(str(d.get("label", "")))
                    pair_id = f"{name}:{d.get('id', n)}"
                    kind = str(d.get("kind") or "")
                else:
                    if "claim" in d and "evidence" in d:
                        premise, hypothesis = d["evidence"], d["claim"]
                    else:
                        premise, hypothesis = d.get("sentence1"), d.get("sentence2")
                    label = _NLI_LABELS.get(str(d.get("gold_label", "")).lower())
                    pair_id, kind = f"{name}:{n}", ""
                if label is not None and premise and hypothesis:
                    pairs.append(EvalPair(premise, hypothesis, label, pair_id, kind))
        else:
            first = fh.readline()
            cols = first.rstrip("\n").split("\t")
            if "entailment_judgment" in cols:  # SICK
                ia, ib, il = (
                    cols.index(c) for c in ("sentence_A", "sentence_B", "entailment_judgment")
                )
                rows = (line.rstrip("\n").split("\t") for line in fh)
                for n, f in enumerate(rows):
                    label = _NLI_LABELS.get(f[il].lower()) if len(f) > il else None
                    if label is not None:
                        pairs.append(EvalPair(f[ia], f[ib], label, f"{name}:{n}"))
            else:  # TextFooler: label \t premise \t hypothesis, no header
                for n, line in enumerate([first, *fh]):
                    f = line.rstrip("\n").split("\t")
                    label = _NLI_LABELS.get(f[0].lower()) if len(f) == 3 else None
                    if label is not None:
                        pairs.append(EvalPair(f[1], f[2], label, f"{name}:{n}"))
    if not pairs:
        raise EvalDataError(
            path,
            "no labelled pairs; expected SNLI jsonl, TextFooler TSV, "
            "SICK txt or FEVER-Symmetric jsonl",
        )
    return pairs


# -- metrics ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClassMetrics:
    """Precision, recall, F1 and support (gold count) of one class."""

    precision: float
    recall: float
    f1: float
    support: int


@dataclass(frozen=True, slots=True)
class VerifierMetrics:
    """Classification metrics over the three classes.

    Attributes:
        per_class: metrics per class, in :data:`LABEL_ORDER`.
        macro_f1: unweighted mean F1 over the three classes.
        weighted_f1: F1 averaged with gold support as weights.
        accuracy: share of correct predictions.
        confusion: 3x3 counts, rows gold, columns predicted, :data:`LABEL_ORDER` both ways.
        n: number of pairs.
    """

    per_class: tuple[ClassMetrics, ...]
    macro_f1: float
    weighted_f1: float
    accuracy: float
    confusion: tuple[tuple[int, ...], ...]
    n: int

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "n": self.n,
            "accuracy": self.accuracy,
            "macro_f1": self.macro_f1,
            "weighted_f1": self.weighted_f1,
            "per_class": {
                lab.value: {
                    "precision": m.precision,
                    "recall": m.recall,
                    "f1": m.f1,
                    "support": m.support,
                }
                for lab, m in zip(LABEL_ORDER, self.per_class, strict=True)
            },
            "confusion": [list(r) for r in self.confusion],
            "labels": [lab.value for lab in LABEL_ORDER],
        }


def compute_metrics(gold: Sequence[int], predicted: Sequence[int]) -> VerifierMetrics:
    """Metrics from gold and predicted class indices (0 SUPPORT, 1 CONTRADICT, 2 NO_EVIDENCE).

    A class never predicted has precision 0 (and F1 0), as in scikit-learn's
    ``zero_division=0``.
    """
    g = np.asarray(gold, dtype=np.intp)
    p = np.asarray(predicted, dtype=np.intp)
    if g.shape != p.shape:
        raise ValueError(f"{len(g)} gold labels but {len(p)} predictions")
    cm = np.zeros((3, 3), dtype=np.int64)
    np.add.at(cm, (g, p), 1)
    per = []
    for k in range(3):
        tp = float(cm[k, k])
        pred_k = float(cm[:, k].sum())
        gold_k = int(cm[k, :].sum())
        prec = tp / pred_k if pred_k else 0.0
        rec = tp / gold_k if gold_k else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        per.append(ClassMetrics(prec, rec, f1, gold_k))
    n = int(cm.sum())
    supports = np.array([m.support for m in per], dtype=np.float64)
    f1s = np.array([m.f1 for m in per])
    return VerifierMetrics(
        per_class=tuple(per),
        macro_f1=float(f1s.mean()),
        weighted_f1=float((f1s * supports).sum() / supports.sum()) if n else 0.0,
        accuracy=float(np.trace(cm) / n) if n else 0.0,
        confusion=tuple(tuple(int(v) for v in row) for row in cm),
        n=n,
    )


# -- running ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class VerifierEval:
    """Result of one evaluation run.

    Attributes:
        dataset: dataset name (``"scifact_dev"``, ``"healthver_test"``, file stem).
        system: what was evaluated (model folder name or baseline name).
        granularity: premise granularity used.
        metrics: the metrics.
        ece: expected calibration error of the top-class probability (15 bins).
        predictions: predicted class index per pair.
        gold: gold class index per pair.
        probs: probabilities, float32, shape (n, 3).
        elapsed_s: wall time of classification.
        shown: what the app shows per pair, index into
            :data:`~verifai_desktop.evaluate.shown.SHOWN_ORDER`.
        kinds: the pairs' kinds (:attr:`EvalPair.kind`), ``""`` where a file gives none.
    """

    dataset: str
    system: str
    granularity: str
    metrics: VerifierMetrics
    ece: float
    predictions: tuple[int, ...]
    gold: tuple[int, ...]
    probs: NDArray[np.float32]
    elapsed_s: float
    shown: tuple[int, ...] = ()
    kinds: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary (no per-pair probabilities): the argmax metrics, what the app
        shows (:func:`~verifai_desktop.evaluate.shown.shown_metrics`) and, when the pairs carry
        kinds, what it shows per kind (``per_kind``,
        :func:`~verifai_desktop.evaluate.shown.kind_metrics`)."""
        out = {
            "dataset": self.dataset,
            "system": self.system,
            "granularity": self.granularity,
            "ece": self.ece,
            "elapsed_s": self.elapsed_s,
            **self.metrics.as_dict(),
            **shown_metrics(self.gold, self.shown),
        }
        if any(self.kinds):
            out["per_kind"] = kind_metrics(self.kinds, self.gold, self.shown)
        return out


def evaluate_pairs(
    verifier: Verifier,
    pairs: Sequence[EvalPair],
    *,
    dataset: str,
    system: str,
    granularity: PremiseGranularity = "passage",
    thresholds: VerifySettings | None = None,
    checks: Checks = ALL_CHECKS,
    chunk: int = 64,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> VerifierEval:
    """Classify every pair through the app's verification path and score the predictions.

    Every pair goes through :func:`verifai_desktop.verify.check.verify_pairs`, exactly as the
    app verifies a cited passage (premise windows at ``granularity``, the deciding window, its
    shown label under ``thresholds`` and ``checks``). Pairs go ``chunk`` at a time so progress
    and cancel work on long runs.

    Raises:
        Cancelled: ``cancel`` was set.
    """
    t0 = time.perf_counter()
    probs = np.zeros((len(pairs), 3), dtype=np.float32)
    shown: list[int] = []

    def done(n: int) -> None:
        if progress is not None:
            progress(Progress(stage="verify", done=n, total=len(pairs), unit="pairs",
                              message=dataset))  # fmt: skip

    chunks = verify_in_chunks(
        verifier,
        [(p.premise, p.hypothesis) for p in pairs],
        granularity=granularity,
        thresholds=thresholds,
        checks=checks,
        chunk=chunk,
        what="verifier evaluation",
        done=done,
        cancel=cancel,
    )
    for s, checked in zip(range(0, len(pairs), chunk), chunks, strict=True):
        probs[s : s + len(checked.probs)] = checked.probs
        shown += [SHOWN_ORDER.index(label) for label in checked.shown]
    gold = tuple(LABEL_ORDER.index(p.label) for p in pairs)
    pred = tuple(int(i) for i in probs.argmax(axis=1))
    return VerifierEval(
        dataset=dataset,
        system=system,
        granularity=granularity,
        metrics=compute_metrics(gold, pred),
        ece=expected_calibration_error(probs, gold),
        predictions=pred,
        gold=gold,
        probs=probs,
        elapsed_s=time.perf_counter() - t0,
        shown=tuple(shown),
        kinds=tuple(p.kind for p in pairs),
    )


# -- baselines -------------------------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset((
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with", "and",
    "or", "is", "are", "was", "were", "be", "been", "that", "this", "these", "those", "it",
    "its", "as", "than", "into", "over", "under", "between", "among", "during", "after",
    "before", "have", "has", "had", "do", "does", "did", "can", "could", "may", "might",
    "will", "would", "should", "which", "who", "what", "when", "where", "there", "their",
    "they", "them", "we", "our",
))  # fmt: skip
_NEGATION = re.compile(
    r"\b(?:no|not|never|none|without|cannot|lack of|absence of|fail(?:s|ed)? "
    r"to|n't)\b",
    re.IGNORECASE,
)


class LexicalOverlapVerifier:
    """Baseline: claim/premise word overlap decides evidence; negation mismatch, contradiction.

    For each (premise, claim) pair the share of the claim's content words the premise contains
    is computed. Overlap below ``threshold`` is NO_EVIDENCE; otherwise CONTRADICT when exactly
    one of claim and premise has a negation cue, else SUPPORT. Outputs one-hot probabilities.
    Implements :class:`~verifai_desktop.verify.check.Verifier`; at ``"sentences"`` granularity
    :func:`~verifai_desktop.verify.check.verify_pairs` hands it every sentence window and the
    first window with enough overlap decides.
    """

    name = "lexical-overlap"

    def __init__(self, threshold: float = 0.5) -> None:
        self.threshold = threshold

    def load(self) -> None:
        """Nothing to load."""

    def label(self, premise: str, claim: str) -> NliLabel:
        """The baseline's label for one pair."""
        words = {w for w in _WORD.findall(claim.lower()) if w not in _STOP}
        overlap = set(_WORD.findall(premise.lower()))
        score = len(words & overlap) / len(words) if words else 0.0
        if score < self.threshold:
            return NliLabel.NO_EVIDENCE
        if bool(_NEGATION.search(claim)) != bool(_NEGATION.search(premise)):
            return NliLabel.CONTRADICT
        return NliLabel.SUPPORT

    def classify(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        """One-hot probabilities, float32, shape (n, 3), columns in ``LABEL_ORDER``."""
        return one_hot([self.label(premise, claim) for premise, claim in pairs])


def one_hot(labels: Sequence[NliLabel]) -> NDArray[np.float32]:
    """Probabilities 1.0 on each label, float32, shape (len(labels), 3), ``LABEL_ORDER``."""
    out = np.zeros((len(labels), 3), dtype=np.float32)
    for n, label in enumerate(labels):
        out[n, LABEL_ORDER.index(label)] = 1.0
    return out


JUDGE_GRAMMAR = 'root ::= "SUPPORT" | "CONTRADICT" | "NO_EVIDENCE"'
JUDGE_PROMPT = (
    "You check scientific claims against evidence.\n"
    "Evidence: {premise}\n"
    "Claim: {claim}\n"
    "Does the evidence support the claim, contradict it, or give no evidence about it? "
    "Answer with exactly one word: SUPPORT, CONTRADICT or NO_EVIDENCE."
)


class LlmJudgeVerifier:
    """Baseline: a local GGUF LLM (llama.cpp) as judge, its output constrained by a grammar.

    The answer is restricted to the three labels with a GBNF grammar, greedy decoding; the
    premise is cut to ``max_premise_chars``. Outputs one-hot probabilities; implements
    :class:`~verifai_desktop.verify.check.Verifier`, so it is judged on the same premise windows
    as the model.
    """

    name = "llm-judge"

    def __init__(
        self,
        gguf_path: Path,
        *,
        n_ctx: int = 2048,
        n_threads: int = 2,
        max_premise_chars: int = 3000,
    ) -> None:
        self.gguf_path = Path(gguf_path)
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.max_premise_chars = max_premise_chars
        self._llm: Any = None
        self._grammar: Any = None

    def load(self) -> None:
        """Load the GGUF and the label grammar now (otherwise on the first pair)."""
        if self._llm is None:
            # Deferred on purpose: llama.cpp loads only when the judge is evaluated.
            from llama_cpp import Llama
            from llama_cpp.llama_grammar import LlamaGrammar

            self._llm = Llama(
                model_path=str(self.gguf_path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                verbose=False,
            )
            self._grammar = LlamaGrammar.from_string(JUDGE_GRAMMAR, verbose=False)

    def judge(self, premise: str, claim: str) -> NliLabel:
        """The LLM's label for one pair."""
        self.load()
        prompt = JUDGE_PROMPT.format(premise=premise[: self.max_premise_chars], claim=claim)
        out = self._llm.create_chat_completion(
            messages=[{"role": "user", "content": prompt}],
            grammar=self._grammar,
            temperature=0.0,
            max_tokens=8,
        )
        text = str(out["choices"][0]["message"]["content"]).strip()
        return NliLabel(text) if text in NliLabel.__members__ else NliLabel.NO_EVIDENCE

    def classify(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        """One-hot probabilities, float32, shape (n, 3), one LLM call per pair."""
        return one_hot([self.judge(premise, claim) for premise, claim in pairs])


# -- report ----------------------------------------------------------------------------------


def format_report(result: VerifierEval) -> str:
    """Plain-text report: per-class table, averages and confusion matrix."""
    m = result.metrics
    lines = [
        f"{result.dataset}  system={result.system}  premise={result.granularity}  n={m.n}",
        f"{'class':<12} {'P':>6} {'R':>6} {'F1':>6} {'support':>8}",
    ]
    for lab, c in zip(LABEL_ORDER, m.per_class, strict=True):
        lines.append(
            f"{lab.value:<12} {c.precision:6.3f} {c.recall:6.3f} {c.f1:6.3f} {c.support:8d}"
        )
    lines += [
        f"macro F1 {m.macro_f1:.3f}   weighted F1 {m.weighted_f1:.3f}   "
        f"accuracy {m.accuracy:.3f}   ECE {result.ece:.3f}   ({result.elapsed_s:.1f} s)",
        "confusion (rows gold, columns predicted):",
        f"{'':<12} " + " ".join(f"{lab.value[:10]:>10}" for lab in LABEL_ORDER),
    ]
    for lab, row in zip(LABEL_ORDER, m.confusion, strict=True):
        lines.append(f"{lab.value:<12} " + " ".join(f"{v:10d}" for v in row))
    if result.shown:
        lines += format_shown(shown_metrics(result.gold, result.shown))
    if result.shown and any(result.kinds):
        lines += format_kinds(kind_metrics(result.kinds, result.gold, result.shown))
    return "\n".join(lines)
