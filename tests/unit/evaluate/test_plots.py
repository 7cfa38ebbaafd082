"""`verifai eval verifier --plot`: the reliability bins, the precision/coverage points, the PNG."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from verifai_desktop.errors import ExportFailed
from verifai_desktop.evaluate.plots import (
    THRESHOLDS,
    plot_verifier,
    precision_coverage,
    reliability,
)
from verifai_desktop.evaluate.verifier import VerifierEval, compute_metrics
from verifai_desktop.settings import VerifySettings

PROBS = np.array(
    [[0.9, 0.05, 0.05], [0.55, 0.4, 0.05], [0.1, 0.8, 0.1], [0.15, 0.2, 0.65], [0.7, 0.2, 0.1]]
)
GOLD = np.array([0, 1, 1, 2, 2])


def test_reliability_bins_hold_accuracy_against_confidence() -> None:
    mean_conf, accuracy, count = reliability(PROBS, GOLD, n_bins=10)
    assert count.sum() == 5 and count[9] == 1 and count[5] == 1
    assert mean_conf[9] == pytest.approx(0.9) and accuracy[9] == 1.0  # right at 0.9
    assert accuracy[5] == 0.0  # the 0.55 SUPPORT was a CONTRADICT
    assert np.isnan(accuracy[0]) and count[0] == 0


def test_precision_and_coverage_follow_the_threshold() -> None:
    precision, coverage = precision_coverage(PROBS, GOLD, 0)
    # t = 0.34: three SUPPORT guesses, one right -> 1/3 precision, 1/1 coverage
    assert precision[0] == pytest.approx(1 / 3) and coverage[0] == 1.0
    # above 0.70 only the right one is left
    assert precision[-1] == 1.0 and len(precision) == sum(t <= 0.9 for t in THRESHOLDS)


def test_the_png_is_written_whole(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    gold = tuple(int(g) for g in GOLD)
    pred = tuple(int(p) for p in PROBS.argmax(axis=1))
    result = VerifierEval("toy", "test", "sentences", compute_metrics(gold, pred), 0.1, pred,
                          gold, PROBS.astype(np.float32), 0.0, (0, 3, 1, 2, 3))  # fmt: skip
    out = tmp_path / "plot.png"
    plot_verifier(result, out, VerifySettings())
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 10_000
    assert not list(tmp_path.glob("*.tmp"))
    with pytest.raises(ExportFailed, match="folder"):
        plot_verifier(result, tmp_path, VerifySettings())
