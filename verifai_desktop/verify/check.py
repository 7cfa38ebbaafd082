"""The one verification path: (passage, claim) items -> probabilities and the deciding window.

The app (:class:`verifai_desktop.pipeline.AskSession`), ``verifai eval verifier``
(:func:`verifai_desktop.evaluate.verifier.evaluate_pairs`) and the baselines all verify through
:func:`verify_pairs` over one :class:`Verifier` protocol, so a pair gets the same probabilities
wherever it is scored.

Premise granularity (:mod:`verifai_desktop.verify.premises`): ``"passage"`` checks the claim
against the whole passage; ``"sentences"`` against every window of 1..3 consecutive sentences,
all windows of all items in ONE ``classify`` call, and the window with the highest evidence
probability ``max(P(SUPPORT), P(CONTRADICT))`` decides (aggregation by maximum; sentence-level
premises surface contradictions a whole passage hides, Gao et al. 2024). The deciding window is
the evidence shown to the user.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.domain import Claim, NliLabel, Passage, Verdict
from verifai_desktop.settings import PremiseGranularity
from verifai_desktop.verify.premises import sentence_windows

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
    """

    probs: NDArray[np.float32]
    spans: tuple[Span, ...]

    def verdict(self, item: int, passage_text: str, passage_number: int) -> Verdict:
        """Item ``item``'s result as a :class:`Verdict` (argmax label, the three probabilities,
        the deciding window's text and offsets into ``passage_text``).

        Args:
            item: index into the batch, 0-based.
            passage_text: that item's passage text (the premise the spans index).
            passage_number: the verdict's citation number (0: not given to the generator).
        """
        row = self.probs[item]
        start, end = self.spans[item]
        return Verdict(
            passage_number=passage_number,
            label=LABEL_ORDER[int(np.argmax(row))],
            p_support=float(row[0]),
            p_contradict=float(row[1]),
            p_no_evidence=float(row[2]),
            evidence=passage_text[start:end],
            evidence_span=(start, end),
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


def verify_pairs(
    verifier: Verifier,
    items: Sequence[tuple[str, str]],
    *,
    granularity: PremiseGranularity = "passage",
    sentence_spans: Sequence[Sequence[Span] | None] | None = None,
) -> PairResults:
    """Verify ``(passage text, claim)`` items: every premise window in one ``classify`` call.

    Args:
        verifier: any :class:`Verifier`.
        items: ``(passage_text, claim)`` pairs.
        granularity: premise granularity (see the module docstring).
        sentence_spans: optional sentence offsets per item's passage text (split here when
            None or when an entry is None).

    Returns:
        Per item the deciding window's probabilities and its span.

    Raises:
        ValueError: unknown ``granularity``.
    """
    if not items:
        return PairResults(np.zeros((0, 3), dtype=np.float32), ())
    owners: list[int] = []
    windows: list[Span] = []
    batch: list[tuple[str, str]] = []
    for n, (text, claim) in enumerate(items):
        spans = sentence_spans[n] if sentence_spans is not None else None
        for start, end in premise_windows(text, granularity, spans):
            owners.append(n)
            windows.append((start, end))
            batch.append((text[start:end], claim))
    probs = np.asarray(verifier.classify(batch), dtype=np.float32)
    owner_of = np.asarray(owners)
    out = np.zeros((len(items), 3), dtype=np.float32)
    chosen: list[Span] = []
    for n in range(len(items)):
        rows = np.flatnonzero(owner_of == n)
        best = int(rows[deciding_window(probs[rows])])
        out[n] = probs[best]
        chosen.append(windows[best])
    return PairResults(out, tuple(chosen))


def verify_claims(
    verifier: Verifier,
    claims: Sequence[tuple[Claim, Passage]],
    *,
    granularity: PremiseGranularity = "sentences",
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
    )
    return tuple(
        result.verdict(n, passage.text, claim.passage_number)
        for n, (claim, passage) in enumerate(claims)
    )
