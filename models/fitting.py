"""Fitting the verifier's calibration: the softmax temperature and the feature layer.

Training-time code (scikit-learn for the layer); the runtime package only applies what is
fitted here (``verify/nli.py`` divides logits by the temperature, ``verify/features.py`` applies
the layer stored in ``verifier.json``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.verify.features import FeatureLayer, feature_matrix


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


def fit_feature_layer(
    probs: NDArray[np.float32],
    pairs: Sequence[tuple[str, str]],
    labels: Sequence[int],
    *,
    c: float = 1.0,
    balanced: bool = True,
) -> FeatureLayer:
    """Fit the layer (scikit-learn multinomial logistic regression, L2 penalty ``1/c``).

    Args:
        probs: model probabilities on held-out pairs, shape (n, 3).
        pairs: those pairs.
        labels: gold class index per pair (0 SUPPORT, 1 CONTRADICT, 2 NO_EVIDENCE); all three
            classes must occur.
        c: inverse regularisation strength.
        balanced: weight classes by inverse frequency.
    """
    from sklearn.linear_model import LogisticRegression  # training-only dependency

    x = feature_matrix(probs, pairs)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-6] = 1.0
    clf = LogisticRegression(C=c, max_iter=2000, class_weight="balanced" if balanced else None)
    clf.fit((x - mean) / scale, np.asarray(labels))
    if list(clf.classes_) != [0, 1, 2]:
        raise ValueError(f"feature layer needs all three classes, got {list(clf.classes_)}")
    return FeatureLayer(
        weights=tuple(tuple(float(v) for v in row) for row in clf.coef_),
        bias=tuple(float(v) for v in clf.intercept_),
        mean=tuple(float(v) for v in mean),
        scale=tuple(float(v) for v in scale),
    )
