"""Temperature scaling and expected calibration error for the verifier's probabilities.

Temperature scaling (Guo et al., "On Calibration of Modern Neural Networks", ICML 2017)
divides the logits by one scalar T fitted by minimising the negative log-likelihood on a
held-out set (SciFact dev here). It changes confidence, never the argmax.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray


def _nll(logits: NDArray[np.float64], labels: NDArray[np.intp], temperature: float) -> float:
    z = logits / temperature
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-log_p[np.arange(len(labels)), labels].mean())


def fit_temperature(
    logits: NDArray[np.floating[Any]],
    labels: Sequence[int],
    *,
    low: float = 0.05,
    high: float = 20.0,
) -> float:
    """The temperature minimising NLL of ``softmax(logits / T)``.

    Golden-section search over log T in ``[low, high]`` (NLL is unimodal in T).

    Args:
        logits: float, shape (n, k).
        labels: gold class index per row.

    Returns:
        T > 0 (T > 1 softens over-confident models).
    """
    x = np.asarray(logits, dtype=np.float64)
    y = np.asarray(labels, dtype=np.intp)
    a, b = np.log(low), np.log(high)
    g = (np.sqrt(5.0) - 1) / 2
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = _nll(x, y, float(np.exp(c))), _nll(x, y, float(np.exp(d)))
    for _ in range(80):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = _nll(x, y, float(np.exp(c)))
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = _nll(x, y, float(np.exp(d)))
    return float(np.exp((a + b) / 2))


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
