"""The shown-label report of `verifai eval verifier` (what the app would show)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifai_desktop.domain import NliLabel
from verifai_desktop.evaluate.shown import (
    SHOWN_ORDER,
    format_kinds,
    format_shown,
    kind_metrics,
    shown_metrics,
)
from verifai_desktop.evaluate.verifier import load_nli


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


def test_per_kind_table_counts_what_each_kind_is_shown() -> None:
    # kinds: two right figures (S), three wrong figures (C), one row without a kind
    kinds = ["correct_figure", "correct_figure", "wrong_figure", "wrong_figure", "wrong_figure", ""]
    gold = [0, 0, 1, 1, 1, 2]
    shown = [0, 3, 0, 1, 3, 2]  # S U | S C U | N
    report = kind_metrics(kinds, gold, shown)
    assert list(report) == [
        "correct_figure", "wrong_figure", "(none)",
        "all SUPPORT", "all CONTRADICT", "all NO_EVIDENCE",
    ]  # fmt: skip
    right = report["correct_figure"]
    assert right["gold"] == "SUPPORT" and right["n"] == 2
    assert right["right"] == 0.5 and right["green"] == 0.5 and right["unsure"] == 0.5
    wrong = report["wrong_figure"]
    assert wrong["gold"] == "CONTRADICT" and wrong["n"] == 3
    assert wrong["right"] == pytest.approx(2 / 3)  # caught: not shown green
    assert wrong["red"] == pytest.approx(1 / 3) and wrong["green"] == pytest.approx(1 / 3)
    assert report["(none)"]["no_evidence"] == 1.0
    lines = format_kinds(report)
    assert lines[2].split() == ["correct_figure", "SUPPORT", "2", "0.50", "0.50", "0.00",
                                "0.50", "0.00"]  # fmt: skip
    with pytest.raises(ValueError):
        kind_metrics(kinds[:2], gold, shown)


def test_nli_rows_keep_their_kind(tmp_path: Path) -> None:
    path = tmp_path / "dev.jsonl"
    rows = [
        {"premise": "P.", "hypothesis": "H.", "label": "SUPPORT", "kind": "correct_plain"},
        {"premise": "P.", "hypothesis": "H2.", "label": "CONTRADICT"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    pairs = load_nli(path)
    assert [(p.kind, p.label) for p in pairs] == [
        ("correct_plain", NliLabel.SUPPORT),
        ("", NliLabel.CONTRADICT),
    ]
