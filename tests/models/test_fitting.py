"""Fitting the verifier's calibration (``models/fitting.py``): the temperature and the feature
layers (plain and routed by premise length), and reading them back as the runtime does."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "models"))

from fitting import fit_feature_layer, fit_temperature  # noqa: E402

from verifai_desktop.verify.features import (  # noqa: E402
    SHORT_PREMISE_MAX_WORDS,
    FeatureLayer,
    RoutedFeatureLayer,
    feature_layer_from_dict,
)


def test_temperature_undoes_a_known_sharpening() -> None:
    rng = np.random.default_rng(3)
    n = 4000
    logits = rng.normal(size=(n, 3))
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    gold = [int(rng.choice(3, p=row)) for row in probs]  # calibrated at T = 1
    assert fit_temperature(logits, gold) == pytest.approx(1.0, abs=0.1)
    assert fit_temperature(logits * 4.0, gold) == pytest.approx(4.0, rel=0.1)


def _toy_data(
    rng: np.random.Generator, n: int, words: int, flip: bool
) -> tuple[np.ndarray, list[tuple[str, str]], list[int]]:
    """Model probabilities that predict the gold class, or (``flip``) a fixed wrong one."""
    gold = [int(g) for g in rng.integers(0, 3, size=n)]
    probs = np.full((n, 3), 0.1, dtype=np.float32)
    for i, g in enumerate(gold):
        probs[i, (g + 1) % 3 if flip else g] = 0.8
    pairs = [(" ".join(["evidence"] * words), f"claim {i}") for i in range(n)]
    return probs, pairs, gold


def test_routed_layer_sends_each_premise_to_its_own_layer() -> None:
    rng = np.random.default_rng(0)
    # Short premises: the model is right. Long premises: it is consistently off by one class,
    # which only a layer fitted on long premises can undo.
    sp, spairs, sgold = _toy_data(rng, 300, 20, flip=False)
    lp, lpairs, lgold = _toy_data(rng, 300, SHORT_PREMISE_MAX_WORDS + 50, flip=True)
    routed = RoutedFeatureLayer(
        short=fit_feature_layer(sp, spairs, sgold, c=1.0),
        long=fit_feature_layer(lp, lpairs, lgold, c=1.0),
    )
    probs = np.concatenate([sp[:50], lp[:50]])
    pairs = spairs[:50] + lpairs[:50]
    out = routed.apply(probs, pairs)
    assert out.shape == (100, 3) and out.dtype == np.float32
    np.testing.assert_allclose(out.sum(axis=1), 1.0, atol=1e-5)
    assert (out.argmax(axis=1) == np.array(sgold[:50] + lgold[:50])).mean() > 0.95
    # One layer fitted on both kinds together cannot serve both.
    both = fit_feature_layer(np.concatenate([sp, lp]), spairs + lpairs, sgold + lgold, c=1.0)
    assert (
        both.apply(probs, pairs).argmax(axis=1) == np.array(sgold[:50] + lgold[:50])
    ).mean() < 0.9
    # Rows are routed independently: one pair alone gets the same probabilities.
    np.testing.assert_allclose(routed.apply(probs[60:61], pairs[60:61]), out[60:61], atol=1e-6)


def test_layers_round_trip_through_verifier_json() -> None:
    rng = np.random.default_rng(1)
    p, pairs, gold = _toy_data(rng, 120, 10, flip=False)
    plain = fit_feature_layer(p, pairs, gold, c=0.5)
    routed = RoutedFeatureLayer(short=plain, long=fit_feature_layer(p, pairs, gold, c=5.0))
    for layer in (plain, routed):
        back = feature_layer_from_dict(json.loads(json.dumps(layer.to_dict())))
        assert back == layer
        np.testing.assert_array_equal(back.apply(p, pairs), layer.apply(p, pairs))
    legacy = plain.to_dict()
    del legacy["kind"]  # layers written before routing existed carry no kind
    assert isinstance(feature_layer_from_dict(legacy), FeatureLayer)


def test_unknown_layer_kind_or_features_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown feature layer kind"):
        feature_layer_from_dict({"kind": "forest"})
    rng = np.random.default_rng(2)
    p, pairs, gold = _toy_data(rng, 60, 10, flip=False)
    data = fit_feature_layer(p, pairs, gold).to_dict()
    data["feature_names"] = ["something", "else"]
    with pytest.raises(ValueError, match="fitted on features"):
        feature_layer_from_dict(data)
