"""The contradiction features (fitting the layers: ``tests/models/test_fitting.py``)."""

from __future__ import annotations

from verifai_desktop.verify.features import FEATURE_NAMES, pair_features

HAND = FEATURE_NAMES[3:]


def features(premise: str, claim: str) -> dict[str, float]:
    return dict(zip(HAND, pair_features(premise, claim), strict=True))


def test_negation_number_and_direction_cues() -> None:
    f = features("Aspirin did not reduce mortality.", "Aspirin reduces mortality.")
    assert f["neg_mismatch"] == 1.0 and f["neg_premise"] == 1.0 and f["neg_claim"] == 0.0
    f = features("Mortality fell by 12% in the treated group.", "Mortality fell by 40%.")
    assert f["number_mismatch"] == 1.0 and f["number_match"] == 0.0
    f = features("Mortality fell by 12% in the treated group.", "Mortality fell by 12%.")
    assert f["number_match"] == 1.0 and f["number_mismatch"] == 0.0
    f = features("Exercise decreased blood pressure.", "Exercise increases blood pressure.")
    assert f["direction_conflict"] == 1.0 and f["direction_agree"] == 0.0
    f = features("Exercise decreased blood pressure.", "Exercise reduces blood pressure.")
    assert f["direction_agree"] == 1.0 and f["direction_conflict"] == 0.0
