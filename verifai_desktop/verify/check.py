"""The one verification path: (passage, claim) items -> probabilities and the deciding window.

The app (:class:`verifai_desktop.pipeline.AskSession`), ``verifai eval verifier``
(:func:`verifai_desktop.evaluate.verifier.evaluate_pairs`) and the baselines all verify through
:func:`verify_pairs` over one :class:`Verifier` protocol, so a pair gets the same probabilities
wherever it is scored.

A claim is verified one part at a time (:mod:`verifai_desktop.verify.parts`), each window's
verdict decided by the rules of :mod:`verifai_desktop.verify.rules` (their flow is written
there). Premise granularity (:mod:`verifai_desktop.verify.premises`): ``"passage"`` checks the claim
against the whole passage; ``"sentences"`` against every window of 1..3 consecutive sentences,
all windows of all items in ONE ``classify`` call (sentence-level premises surface
contradictions a whole passage hides, Gao et al. 2024). Windows holding a statement of aim or
hypothesis are left out (:mod:`verifai_desktop.verify.aims`). Which window decides
(:class:`~verifai_desktop.verify.checks.Checks`): with ``support_first`` (the default, chosen on
SciFact dev) the strongest window the app would show as supporting, when there is one, its
figures and negations checked (:mod:`verifai_desktop.verify.checks`); otherwise the window with
the highest ``max(P(SUPPORT), P(CONTRADICT))`` (aggregation by maximum). The deciding window is
the evidence shown to the user; a contradicting window of a passage decided as supporting is
kept as that passage's conflict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.domain import Claim, NliLabel, Passage, ShownLabel, Verdict
from verifai_desktop.ingest.sentences import split_sentences
from verifai_desktop.settings import PremiseGranularity, VerifySettings
from verifai_desktop.verify.aims import aim_sentences
from verifai_desktop.verify.checks import ALL_CHECKS, Checks, figures_verbatim
from verifai_desktop.verify.finding import Effect, Finding
from verifai_desktop.verify.labels import AIM_FLAG
from verifai_desktop.verify.negation import positive_pair
from verifai_desktop.verify.parts import PART_REASON_PREFIX, ClaimPart, claim_parts
from verifai_desktop.verify.premises import sentence_windows
from verifai_desktop.verify.rules import findings, reasons, shown_with
from verifai_desktop.verify.written import as_written
from verifai_desktop.words import content_stems

LABEL_ORDER: tuple[NliLabel, ...] = (NliLabel.SUPPORT, NliLabel.CONTRADICT, NliLabel.NO_EVIDENCE)
"""Column order of every probability array a :class:`Verifier` returns."""

Span = tuple[int, int]
"""Half-open ``(char_start, char_end)`` offsets into a passage text."""


class Verifier(Protocol):
    """An NLI verifier: (premise, hypothesis) pairs in, class probabilities out.

    Implementations: :class:`verifai_desktop.verify.nli.OnnxVerifier` (the shipped model) and
    the evaluation baselines in :mod:`verifai_desktop.evaluate.verifier`.
    """

    def load(self) -> None:
        """Load the model now (otherwise on first use); a no-op where nothing loads lazily.

        Raises:
            ModelLoadError: a model file is missing or cannot be read.
        """
        ...

    def classify(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        """Probabilities, float32, shape (len(pairs), 3), columns in :data:`LABEL_ORDER`,
        rows summing to 1, for ``(premise, hypothesis)`` pairs scored in one call."""
        ...


@dataclass(frozen=True, slots=True)
class PairResults:
    """What :func:`verify_pairs` found for a batch of (passage text, claim) items.

    Attributes:
        probs: float32, shape (n_items, 3), columns in :data:`LABEL_ORDER`: the deciding
            window's probabilities per item.
        spans: per item, the deciding window as half-open offsets into the item's passage text
            (the whole text, ``(0, len(text))``, at ``"passage"`` granularity).
        flags: per item, why the checks held the deciding window back (empty when none did;
            :data:`~verifai_desktop.verify.labels.AIM_FLAG` when the passage states only aims).
        shown: per item, the shown label (:func:`~verifai_desktop.verify.labels.shown_label`).
        conflicts: per item decided as SUPPORT, its strongest window shown CONTRADICT, as
            ``(row of probabilities, span, reasons)`` (the reasons a rule showed it red, as
            ``flags``); ``None`` for every other item.
    """

    probs: NDArray[np.float32]
    spans: tuple[Span, ...]
    flags: tuple[tuple[str, ...], ...] = ()
    shown: tuple[ShownLabel, ...] = ()
    conflicts: tuple[tuple[NDArray[np.float32], Span, tuple[str, ...]] | None, ...] = ()

    def verdict(self, item: int, passage_text: str, passage_number: int) -> Verdict:
        """Item ``item``'s result as a :class:`Verdict` (argmax label, the three probabilities,
        the deciding window's text and offsets into ``passage_text``, shown label and flags).

        Args:
            item: index into the batch, 0-based.
            passage_text: that item's passage text (the premise the spans index).
            passage_number: the verdict's citation number (0: not given to the generator).
        """
        return _verdict(self.probs[item], self.spans[item], passage_text, passage_number,
                        self.shown[item], self.flags[item])  # fmt: skip

    def conflict(self, item: int, passage_text: str, passage_number: int) -> Verdict | None:
        """The contradicting window of an item decided as SUPPORT, as a :class:`Verdict`
        (shown CONTRADICT, with the reasons a rule showed it red), or None when the passage
        has none."""
        found = self.conflicts[item]
        if found is None:
            return None
        row, span, why = found
        return _verdict(row, span, passage_text, passage_number, ShownLabel.CONTRADICT, why)


def _verdict(
    row: NDArray[np.float32],
    span: Span,
    passage_text: str,
    passage_number: int,
    shown: ShownLabel,
    flags: tuple[str, ...],
) -> Verdict:
    start, end = span
    return Verdict(
        passage_number=passage_number,
        label=LABEL_ORDER[int(np.argmax(row))],
        p_support=float(row[0]),
        p_contradict=float(row[1]),
        p_no_evidence=float(row[2]),
        evidence=passage_text[start:end],
        evidence_span=(start, end),
        shown=shown,
        flags=flags,
    )


def premise_windows(
    text: str, granularity: PremiseGranularity, spans: Sequence[Span] | None = None
) -> tuple[Span, ...]:
    """The premises a claim is checked against in one passage, as offsets into ``text``.

    Args:
        text: the passage text.
        granularity: ``"passage"`` (the whole text) or ``"sentences"`` (windows of 1..3
            consecutive sentences, :func:`~verifai_desktop.verify.premises.sentence_windows`).
        spans: the passage's sentence offsets (``Passage.sentence_spans``); split here if None.

    Returns:
        At least one window; ``((0, len(text)),)`` for the whole passage or a text without
        sentences.

    Raises:
        ValueError: ``granularity`` is neither ``"passage"`` nor ``"sentences"``.
    """
    if granularity == "passage":
        return ((0, len(text)),)
    if granularity != "sentences":
        raise ValueError(f"unknown premise granularity {granularity!r}")
    return sentence_windows(text, spans) or ((0, len(text)),)


def deciding_window(probs: NDArray[np.float32]) -> int:
    """Index of the window that decides a passage: the highest ``max(P(SUPPORT), P(CONTRADICT))``.

    Args:
        probs: float32, shape (n_windows, 3) with n_windows >= 1, columns in :data:`LABEL_ORDER`.

    Returns:
        The row index; the first one on ties.
    """
    return int(np.argmax(probs[:, :2].max(axis=1)))


def _evidence_windows(
    text: str,
    granularity: PremiseGranularity,
    spans: Sequence[Span] | None,
    checks: Checks,
) -> tuple[tuple[Span, ...], bool]:
    """The premise windows of one passage and whether they are aims only.

    At ``"sentences"`` granularity with ``checks.aims``, windows holding a sentence of aim or
    hypothesis are left out; when every window holds one, all are kept and flagged.
    """
    windows = premise_windows(text, granularity, spans)
    if granularity != "sentences" or not checks.aims:
        return windows, False
    sentences = tuple(spans) if spans is not None else split_sentences(text)
    aims = [sentences[i] for i in aim_sentences(text, sentences)]
    if not aims:
        return windows, False
    kept = tuple(w for w in windows if not any(w[0] <= a[0] and a[1] <= w[1] for a in aims))
    return (kept, False) if kept else (windows, True)


_Decided = tuple[int, tuple[str, ...], ShownLabel, tuple[int, tuple[str, ...]] | None]
"""One part's decision: ``(row, reasons, shown label, conflict as (row, reasons))``."""


def _decide(
    probs: NDArray[np.float32],
    texts: Sequence[str],
    passage: str,
    claim: str,
    aims_only: bool,
    thresholds: VerifySettings,
    checks: Checks,
) -> _Decided:
    """The deciding window of one passage for one claim part: ``(row, reasons, shown label,
    conflict)``, the conflict as ``(row, its reasons)``.

    Each window is judged by its probabilities and the rules' findings
    (:func:`~verifai_desktop.verify.rules.findings`). With ``support_first``, the strongest
    window shown SUPPORT decides (a window shown red kept as its conflict, unless the deciding
    window writes the part's figures word for word,
    :func:`~verifai_desktop.verify.checks.figures_verbatim`: a passage that states them as the
    part does is no conflict of it through a shorter window); else the strongest
    window a rule shows red (:attr:`~verifai_desktop.verify.finding.Effect.RED`); else the
    strongest window (:func:`deciding_window`).

    Args:
        probs: float32, shape (n_windows, 3): the passage's windows.
        texts: the windows' texts.
        passage: the passage the windows are cut from.
        claim: the hypothesis (one claim part).
        aims_only: every window states an aim (:data:`AIM_FLAG`).
        thresholds: the per-label thresholds.
        checks: which checks and which window rule.
    """
    if aims_only:
        best = deciding_window(probs)
        return best, (AIM_FLAG,), ShownLabel.NO_EVIDENCE, None
    found: dict[int, tuple[Finding, ...]] = {}
    shown: dict[int, ShownLabel] = {}

    def judge(row: int) -> ShownLabel:
        if row not in shown:
            p = probs[row]
            guess = LABEL_ORDER[int(np.argmax(p))]
            found[row] = findings(claim, texts[row], passage, guess, checks)
            shown[row] = shown_with(float(p[0]), float(p[1]), float(p[2]), found[row], thresholds)
        return shown[row]

    def red_by_rule(row: int) -> bool:
        return judge(row) is ShownLabel.CONTRADICT and any(
            f.effect is Effect.RED for f in found[row]
        )

    strength = probs[:, :2].max(axis=1)
    order = [int(r) for r in np.argsort(-strength, kind="stable")]
    if checks.support_first:
        for index in np.argsort(-probs[:, 0], kind="stable"):
            row = int(index)
            if probs[row, 0] < thresholds.support_threshold:
                break
            if judge(row) is ShownLabel.SUPPORT:
                contra = [r for r in order if judge(r) is ShownLabel.CONTRADICT]
                other = max(contra, key=lambda r: float(probs[r, 1]), default=None)
                if other is None or figures_verbatim(claim, texts[row]):
                    return row, (), ShownLabel.SUPPORT, None
                why = reasons(found[other], ShownLabel.CONTRADICT)
                return row, (), ShownLabel.SUPPORT, (other, why)
    red = next((r for r in order if red_by_rule(r)), None)
    best = deciding_window(probs) if red is None else red
    label = judge(best)
    return best, reasons(found[best], label), label, None


PART_WORDS = {
    ShownLabel.SUPPORT: "supported",
    ShownLabel.CONTRADICT: "contradicted",
    ShownLabel.NO_EVIDENCE: "no evidence",
    ShownLabel.UNSURE: "unsure",
}
"""How a claim part's shown label is named in a verdict's reasons."""


def _combine(decided: Sequence[_Decided], parts: Sequence[ClaimPart]) -> _Decided:
    """One passage's verdict on a claim from its parts' verdicts: red when a part is red,
    green when every part is green, else unsure when a part is unsure, else no evidence.

    Returns:
        ``(row, reasons, shown label, conflict)`` of the deciding part; with more than one
        part, the reasons list each part with its shown label first.
    """
    if len(decided) == 1:
        return decided[0]
    labels = [d[2] for d in decided]
    if ShownLabel.CONTRADICT in labels:
        k = labels.index(ShownLabel.CONTRADICT)
        label = ShownLabel.CONTRADICT
    elif all(lab is ShownLabel.SUPPORT for lab in labels):
        k, label = 0, ShownLabel.SUPPORT
    elif ShownLabel.UNSURE in labels:
        k, label = labels.index(ShownLabel.UNSURE), ShownLabel.UNSURE
    else:
        k, label = labels.index(ShownLabel.NO_EVIDENCE), ShownLabel.NO_EVIDENCE
    lines = tuple(
        f'{PART_REASON_PREFIX}{n + 1} of {len(parts)}, "{p.text}": {PART_WORDS[d[2]]}'
        for n, (p, d) in enumerate(zip(parts, decided, strict=True))
    )
    conflict = next((d[3] for d in decided if d[3] is not None), None)
    row, why = decided[k][0], decided[k][1]
    return row, lines + why, label, conflict if label is ShownLabel.SUPPORT else None


def verify_pairs(
    verifier: Verifier,
    items: Sequence[tuple[str, str]],
    *,
    granularity: PremiseGranularity = "passage",
    sentence_spans: Sequence[Sequence[Span] | None] | None = None,
    thresholds: VerifySettings | None = None,
    checks: Checks = ALL_CHECKS,
) -> PairResults:
    """Verify ``(passage text, claim)`` items: every premise window in one ``classify`` call.

    Args:
        verifier: any :class:`Verifier`.
        items: ``(passage_text, claim)`` pairs.
        granularity: premise granularity (see the module docstring).
        sentence_spans: optional sentence offsets per item's passage text (split here when
            None or when an entry is None).
        thresholds: the per-label thresholds of the shown labels; defaults if None.
        checks: the checks and the window rule (all on in the app).

    Returns:
        Per item the deciding window's probabilities, span, flags and shown label.

    Raises:
        ValueError: unknown ``granularity``.
    """
    if not items:
        return PairResults(np.zeros((0, 3), dtype=np.float32), ())
    thresholds = thresholds or VerifySettings()
    owners: list[tuple[int, int]] = []  # (item, part) per batch row
    windows: list[Span] = []
    batch: list[tuple[str, str]] = []
    aims_only: list[bool] = []
    item_parts: list[tuple[ClaimPart, ...]] = []
    # a passage checked against several claims (re-citation) is split and scanned once
    premises: dict[tuple[str, tuple[Span, ...] | None], tuple[tuple[Span, ...], bool]] = {}
    for n, (text, claim) in enumerate(items):
        spans = sentence_spans[n] if sentence_spans is not None else None
        key = (text, None if spans is None else tuple(spans))
        if key not in premises:
            premises[key] = _evidence_windows(text, granularity, spans, checks)
        kept, only_aims = premises[key]
        aims_only.append(only_aims)
        parts = claim_parts(claim) if checks.parts else (ClaimPart(claim, (0, len(claim))),)
        item_parts.append(parts)
        for k, part in enumerate(parts):
            for start, end in kept:
                owners.append((n, k))
                windows.append((start, end))
                batch.append((text[start:end], part.text))
    probs = _classify_gated(verifier, batch, checks)
    out = np.zeros((len(items), 3), dtype=np.float32)
    chosen: list[Span] = []
    flags: list[tuple[str, ...]] = []
    shown: list[ShownLabel] = []
    conflicts: list[tuple[NDArray[np.float32], Span, tuple[str, ...]] | None] = []
    rows_of: dict[tuple[int, int], list[int]] = {}
    for r, owner in enumerate(owners):
        rows_of.setdefault(owner, []).append(r)
    for n in range(len(items)):
        decided = []
        for k, part in enumerate(item_parts[n]):
            rows = rows_of[(n, k)]
            texts = [batch[r][0] for r in rows]
            best, why, label, other = _decide(
                probs[rows], texts, items[n][0], part.text, aims_only[n], thresholds, checks
            )
            decided.append(
                (rows[best], why, label, None if other is None else (rows[other[0]], other[1]))
            )
        row, why, label, other = _combine(decided, item_parts[n])
        out[n] = probs[row]
        chosen.append(windows[row])
        flags.append(why)
        shown.append(label)
        conflicts.append(None if other is None else (probs[other[0]], windows[other[0]], other[1]))
    return PairResults(out, tuple(chosen), tuple(flags), tuple(shown), tuple(conflicts))


NO_WORD_IN_COMMON = np.array([0.0, 0.0, 1.0], dtype=np.float32)
"""The probabilities of a window the gate keeps from the verifier (NO_EVIDENCE)."""


def _classify_gated(
    verifier: Verifier, batch: Sequence[tuple[str, str]], checks: Checks
) -> NDArray[np.float32]:
    """:func:`_classify` of the ``(window, part)`` pairs that share a content word; with
    ``checks.gate``, the others get :data:`NO_WORD_IN_COMMON` without the verifier."""
    if not checks.gate:
        return _classify(verifier, batch, checks)
    parts: dict[str, frozenset[str]] = {}
    asked: list[int] = []
    for r, (window, part) in enumerate(batch):
        if part not in parts:
            parts[part] = content_stems(part)
        if parts[part] & content_stems(window):
            asked.append(r)
    probs = np.tile(NO_WORD_IN_COMMON, (len(batch), 1))
    if asked:
        probs[asked] = _classify(verifier, [batch[r] for r in asked], checks)
    return probs


def _classify(
    verifier: Verifier, batch: Sequence[tuple[str, str]], checks: Checks
) -> NDArray[np.float32]:
    """Probabilities of ``(window, part)`` pairs, float32, shape (len(batch), 3): one
    ``classify`` call (with ``checks.numbers``, each part's figures written as its window
    writes them, :func:`~verifai_desktop.verify.written.as_written`), then one more for the
    pairs whose part and matching window clause both negate, read in their positive forms
    (:func:`~verifai_desktop.verify.negation.positive_pair`), whose rows replace the first
    ones."""
    if checks.numbers:
        batch = [(w, as_written(c, w)) for w, c in batch]
    probs = np.asarray(verifier.classify(batch), dtype=np.float32).reshape(-1, 3)
    if not checks.negation:
        return probs
    positive = {r: positive_pair(c, w) for r, (w, c) in enumerate(batch)}
    both = [r for r, pair in positive.items() if pair is not None]
    if both:
        pairs = [pair for pair in positive.values() if pair is not None]
        probs[both] = np.asarray(verifier.classify(pairs), dtype=np.float32).reshape(-1, 3)
    return probs


def verify_claims(
    verifier: Verifier,
    claims: Sequence[tuple[Claim, Passage]],
    *,
    granularity: PremiseGranularity = "sentences",
    thresholds: VerifySettings | None = None,
    checks: Checks = ALL_CHECKS,
) -> tuple[Verdict, ...]:
    """Verdicts for (claim, cited passage) pairs through :func:`verify_pairs` (one batch).

    Each verdict's ``evidence`` is the window that decided it (the whole passage at
    ``"passage"`` granularity), ``evidence_span`` its offsets into ``passage.text``.

    Raises:
        ValueError: unknown ``granularity``.
    """
    result = verify_pairs(
        verifier,
        [(passage.text, claim.text) for claim, passage in claims],
        granularity=granularity,
        sentence_spans=[passage.sentence_spans or None for _, passage in claims],
        thresholds=thresholds,
        checks=checks,
    )
    return tuple(
        result.verdict(n, passage.text, claim.passage_number)
        for n, (claim, passage) in enumerate(claims)
    )
