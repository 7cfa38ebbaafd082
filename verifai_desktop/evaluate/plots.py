"""``verifai eval verifier --plot FILE.png``: how far the verifier's probabilities can be trusted.

Two panels from one :class:`~verifai_desktop.evaluate.verifier.VerifierEval`:

* a reliability diagram (DeGroot and Fienberg 1983; Guo et al. 2017): the accuracy of the
  best guess against its probability in 10 equal-width bins, beside the diagonal of a
  perfectly calibrated verifier, with the expected calibration error;
* precision/coverage curves per label (SUPPORT, CONTRADICT): for each threshold t from 0.34
  to 0.99, the precision of the pairs whose best guess is that label with probability >= t,
  against their coverage (the share of that gold label they find). The curves are over the
  deciding windows' probabilities; the thresholds in effect are marked, and the point the app
  reached, checks included (:func:`~verifai_desktop.evaluate.shown.shown_metrics`), is drawn
  beside them.

matplotlib (the ``plots`` extra) is imported only here and only when a plot is asked for.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.errors import ExportFailed, MissingExtra
from verifai_desktop.evaluate.shown import shown_metrics
from verifai_desktop.evaluate.verifier import VerifierEval
from verifai_desktop.private import export_target
from verifai_desktop.settings import VerifySettings

THRESHOLDS = tuple(round(t, 2) for t in np.arange(0.34, 1.0, 0.01))
"""Thresholds of the precision/coverage curves."""


def reliability(
    probs: NDArray[np.float64], gold: NDArray[np.int_], n_bins: int = 10
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Per equal-width bin of best-guess probability: ``(mean confidence, accuracy, count)``,
    float64 arrays of shape (n_bins,); empty bins hold NaN and count 0."""
    conf = probs.max(axis=1)
    right = (probs.argmax(axis=1) == gold).astype(np.float64)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    which = np.clip(np.digitize(conf, edges[1:-1]), 0, n_bins - 1)
    mean_conf = np.full(n_bins, np.nan)
    accuracy = np.full(n_bins, np.nan)
    count = np.zeros(n_bins)
    for b in range(n_bins):
        mask = which == b
        count[b] = mask.sum()
        if count[b]:
            mean_conf[b], accuracy[b] = conf[mask].mean(), right[mask].mean()
    return mean_conf, accuracy, count


def precision_coverage(
    probs: NDArray[np.float64], gold: NDArray[np.int_], label: int
) -> tuple[list[float], list[float]]:
    """Precision and coverage of ``label`` at each of :data:`THRESHOLDS` (points where nothing
    is shown are left out)."""
    points = [p for t in THRESHOLDS if (p := _point(probs, gold, label, t)) is not None]
    return [p for p, _ in points], [c for _, c in points]


def _point(
    probs: NDArray[np.float64], gold: NDArray[np.int_], label: int, threshold: float
) -> tuple[float, float] | None:
    """``(precision, coverage)`` of ``label`` at one threshold; None when nothing is shown."""
    shown = (probs.argmax(axis=1) == label) & (probs[:, label] >= threshold)
    if not shown.any():
        return None
    right = int((shown & (gold == label)).sum())
    return right / int(shown.sum()), right / max(int((gold == label).sum()), 1)


def plot_verifier(result: VerifierEval, path: Path, thresholds: VerifySettings) -> None:
    """Draw the reliability diagram and the precision/coverage curves into a PNG.

    Args:
        result: an evaluation (its per-pair probabilities, gold and shown labels).
        path: the PNG to write (its folder must exist).
        thresholds: the thresholds in effect (marked on the curves).

    Raises:
        MissingExtra: matplotlib is not installed (the ``plots`` extra).
        ExportFailed: ``path`` is a folder or a device, or cannot be written (the PNG is
            written beside it and renamed into place: never half-written).
    """
    target = export_target(path, "plot")
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only, never a window
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise MissingExtra("plotting", "plots", "matplotlib") from exc
    probs = np.asarray(result.probs, dtype=np.float64)
    gold = np.asarray(result.gold)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.8))
    mean_conf, accuracy, count = reliability(probs, gold)
    width = 1.0 / len(count)
    centres = (np.arange(len(count)) + 0.5) * width
    left.bar(
        centres, np.nan_to_num(accuracy), width=width * 0.9, alpha=0.6, label="share right per bin"
    )
    left.plot([0, 1], [0, 1], "k--", linewidth=1, label="calibrated")
    left.plot(mean_conf, accuracy, "o-", color="#1b6e20", label="at the bin's mean probability")
    left.set(xlim=(0, 1), ylim=(0, 1), xlabel="probability of the best guess",
             ylabel="share right", title=f"Reliability (ECE {result.ece:.3f})")  # fmt: skip
    left.legend(loc="upper left", fontsize=8)
    shown = shown_metrics(result.gold, result.shown) if result.shown else None
    colours = {0: "#1b6e20", 1: "#c62828"}
    marks = {0: thresholds.support_threshold, 1: thresholds.contradict_threshold}
    for label, name in ((0, "SUPPORT"), (1, "CONTRADICT")):
        precision, coverage = precision_coverage(probs, gold, label)
        right.plot(coverage, precision, "-", color=colours[label], label=f"{name} (threshold)")
        at = _point(probs, gold, label, marks[label])
        if at is not None:
            right.plot(at[1], at[0], "o", color=colours[label])
        if shown is not None:
            m = shown["shown_per_label"][name]
            if m["precision"] is not None:
                right.plot(m["coverage"], m["precision"], "*", markersize=12,
                           color=colours[label], label=f"{name} as shown (checks)")  # fmt: skip
    right.set(xlim=(0, 1), ylim=(0, 1), xlabel="coverage (share of the gold label shown)",
              ylabel="precision", title="Precision and coverage")  # fmt: skip
    right.legend(loc="lower left", fontsize=8)
    fig.suptitle(f"{result.system} on {result.dataset} ({len(gold)} pairs, "
                 f"premise: {result.granularity})", fontsize=10)  # fmt: skip
    fig.tight_layout()
    tmp = target.with_name(target.name + ".tmp")
    try:
        fig.savefig(tmp, dpi=120, format="png")
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ExportFailed(target, "plot", exc) from exc
    finally:
        plt.close(fig)
