"""The shown-label report of `verifai eval verifier` (what the app would show)."""

from __future__ import annotations

import pytest

from verifai_desktop.evaluate.shown import SHOWN_ORDER, format_shown, shown_metrics


def test_matrix_precision_and_coverage() -> None:
    # gold: S S S C C N ; shown: S U C C U N
    report = shown_metrics([0, 0, 0, 1, 1, 2], [0, 3, 1, 1, 3, 2])
    assert report["shown_labels"] == [s.value for s in SHOWN_ORDER]
    assert report["shown_confusion"] == [[1, 1, 0, 1], [0, 1, 0, 1], [0, 0, 1, 0]]
    per = report["shown_per_label"]
    assert per["SUPPORT"] == {"shown": 1, "precision": 1.0, "coverage": pytest.approx(1 / 3)}
    assert per["CONTRADICT"] == {"shown": 2, "precision": 0.5, "coverage": 0.5}
    assert per["NO_EVIDENCE"] == {"shown": 1, "precision": 1.0, "coverage": 1.0}
    assert per["UNSURE"] == {"shown": 2, "precision": None, "coverage": None}
    assert report["unsure_share"] == pytest.approx(2 / 6)
    f1_s = 2 * 1.0 * (1 / 3) / (1 + 1 / 3)
    f1_c = 0.5
    assert report["shown_macro_f1"] == pytest.approx((f1_s + f1_c + 1.0) / 3)
    text = "\n".join(format_shown(report))
    assert "unsure 33.3%" in text and "UNSURE" in text


def test_a_label_never_shown_has_no_precision() -> None:
    report = shown_metrics([0, 1], [3, 3])
    assert report["shown_per_label"]["SUPPORT"]["precision"] is None
    assert report["shown_macro_f1"] == 0.0 and report["unsure_share"] == 1.0


def test_lengths_must_match() -> None:
    with pytest.raises(ValueError, match="2 gold labels but 1 shown"):
        shown_metrics([0, 1], [0])
