"""Temperature scaling and expected calibration error for the verifier's probabilities.

Temperature scaling (Guo et al., "On Calibration of Modern Neural Networks", ICML 2017)
divides the logits by one scalar T fitted by minimising the negative log-likelihood on a
held-out set (SciFact dev here; the fitting is ``models/fitting.py``). It changes confidence,
never the argmax. The runtime keeps only the measure, expected calibration error.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray


def expected_calibration_error(
    probs: NDArray[np.floating[Any]], labels: Sequence[int], *, n_bins: int = 15
) -> float:
    """Expected calibration error of the top-class confidence (Naeini et al. 2015).

    Args:
        probs: shape (n, k), rows sum to 1.
        labels: gold class index per row.
        n_bins: equal-width confidence bins over [0, 1].

    Returns:
        ECE in [0, 1]: the bin-size weighted mean of |accuracy - confidence|.
    """
    p = np.asarray(probs, dtype=np.float64)
    y = np.asarray(labels)
    if len(y) == 0:
        return 0.0
    conf = p.max(axis=1)
    correct = (p.argmax(axis=1) == y).astype(np.float64)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    ece = 0.0
    for lo, hi in itertools.pairwise(edges):
        in_bin = (conf > lo) & (conf <= hi) if lo > 0 else (conf >= lo) & (conf <= hi)
        if in_bin.any():
            ece += in_bin.mean() * abs(correct[in_bin].mean() - conf[in_bin].mean())
    return float(ece)
