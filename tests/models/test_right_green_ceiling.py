"""``models/right_green_ceiling.py``: its calibration is the app's, and its oracle supports a
right claim only where the passage words its note quotes stand, also as the app rewrites them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "models"))

from logits_cache import cached_verifier  # noqa: E402
from right_green_ceiling import Oracle, claim_quotes  # noqa: E402

from verifai_desktop.verify.features import feature_layer_from_dict  # noqa: E402
from verifai_desktop.verify.negation import positive_form  # noqa: E402
from verifai_desktop.verify.nli import OnnxVerifier, bundled_dir  # noqa: E402

PASSAGE = (
    "Treated hypothyroidism was not associated with any increase in maternal, fetal, or "
    "neonatal complications. In addition, hypothyroidism did not affect mode of delivery."
)
CLAIM = (
    "Treated hypothyroidism was not linked to more complications for the mother, fetus or newborn."
)


def _shipped() -> OnnxVerifier:
    config = json.loads((bundled_dir() / "verifier.json").read_text(encoding="utf-8"))
    calibration = (config["temperature"], feature_layer_from_dict(config["feature_layer"]))
    return cached_verifier(bundled_dir(), {}, calibrated=False, calibration=calibration)  # type: ignore[no-any-return]


def test_the_scripts_calibration_is_the_apps() -> None:
    pairs = [
        (PASSAGE, CLAIM),
        ("Hypothyroidism did not affect mode of delivery.", "Delivery mode was unchanged."),
        ("In 2013 the rate was 0.94 per 1000 line days.", "The rate fell to 0.94 in 2013."),
    ]
    ours = _shipped().classify(pairs)
    np.testing.assert_allclose(ours, OnnxVerifier(None).classify(pairs), atol=1e-5)


def test_the_oracle_supports_only_windows_holding_the_quote() -> None:
    quote = "Treated hypothyroidism was not associated with any increase in maternal"
    other = "Hypothyroidism was more common among women without Medicaid insurance."
    wrong = "Treated hypothyroidism was linked to more complications for the mother."
    oracle = Oracle(_shipped(), {CLAIM: [quote], wrong: None})
    rewritten = (positive_form(PASSAGE), positive_form(CLAIM))  # as the app reads both negating
    probs = oracle.classify([(PASSAGE, CLAIM), rewritten, (other, CLAIM), (PASSAGE, wrong)])
    np.testing.assert_allclose(probs[:2], [[0.9, 0.05, 0.05]] * 2, atol=1e-6)
    assert probs[2][0] < 0.9 and probs[3][0] < 0.9


def test_every_right_dev_claim_is_listed_with_its_quotes() -> None:
    claims = claim_quotes()
    right = [q for q in claims.values() if q is not None]
    assert len(right) == 163 and len(claims) == 348
    assert sum(1 for q in right if q) >= 150  # the notes quote the passage's own words
