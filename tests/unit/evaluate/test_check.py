"""SciFact abstract-level label-only scoring and the loss breakdown of `verifai eval check`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifai_desktop.errors import DatasetError
from verifai_desktop.evaluate.check import (
    MAX_ABSTRACTS,
    CheckReport,
    Prediction,
    SciFactClaim,
    diagnose,
    format_report,
    load_claims,
    score,
)

CLAIMS = (
    SciFactClaim(1, "a", {"10": "SUPPORT"}),
    SciFactClaim(2, "b", {"20": "CONTRADICT", "21": "SUPPORT"}),
    SciFactClaim(3, "c", {}),  # not enough info: every prediction is wrong
)
PREDICTIONS = (
    [Prediction("10", "SUPPORT", 0.9), Prediction("11", "SUPPORT", 0.6)],
    [Prediction("20", "SUPPORT", 0.8), Prediction("21", "NO_EVIDENCE", 0.3)],
    [Prediction(str(n), "CONTRADICT", 0.7 + (n - 30) / 100) for n in range(30, 35)],
)


def test_score_counts_label_and_abstract_and_keeps_the_strongest_three() -> None:
    low = score(CLAIMS, PREDICTIONS, 0.5)
    # claim 1: 10 right, 11 wrong; claim 2: 20 has the opposite label, 21 is not predicted;
    # claim 3: only the MAX_ABSTRACTS strongest of its 5 predictions count, all wrong
    assert MAX_ABSTRACTS == 3
    assert (low.predicted, low.correct, low.gold) == (2 + 1 + 3, 1, 3)
    assert low.precision == pytest.approx(1 / 6) and low.recall == pytest.approx(1 / 3)
    assert low.f1 == pytest.approx(2 * (1 / 6) * (1 / 3) / (1 / 6 + 1 / 3))
    high = score(CLAIMS, PREDICTIONS, 0.85)
    assert (high.predicted, high.correct) == (1, 1)
    assert (high.precision, high.recall) == (1.0, pytest.approx(1 / 3))
    none = score(CLAIMS, PREDICTIONS, 0.95)
    assert (none.predicted, none.f1) == (0, 0.0)


def test_diagnosis_says_where_each_gold_pair_ends() -> None:
    d = diagnose(CLAIMS, PREDICTIONS)
    assert (d.gold, d.checked, d.right_label, d.no_evidence, d.wrong_label) == (3, 3, 1, 1, 1)
    d = diagnose(CLAIMS[:1], [[Prediction("11", "SUPPORT", 0.9)]])
    assert (d.gold, d.checked, d.right_label) == (1, 0, 0)
    report = CheckReport("dev", 3, 10, 0.5, (), score(CLAIMS, PREDICTIONS, 0.5), (), 1.0,
                         diagnose(CLAIMS, PREDICTIONS))  # fmt: skip
    table = format_report(report)
    assert "| 0 (0.0%) | 1 (33.3%) | 1 (33.3%) | 1 (33.3%) |" in table.splitlines()


def test_load_claims_reads_gold_labels_and_rejects_other_files(tmp_path: Path) -> None:
    path = tmp_path / "claims_dev.jsonl"
    rows = [
        {"id": 3, "claim": "x", "evidence": {"14": [{"sentences": [2], "label": "SUPPORT"}]}},
        {"id": 4, "claim": "y", "evidence": {}},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    assert load_claims(path) == (SciFactClaim(3, "x", {"14": "SUPPORT"}), SciFactClaim(4, "y", {}))
    path.write_text('{"claim": "no id"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match="not a SciFact claim"):
        load_claims(path)
    with pytest.raises(DatasetError, match="no such file"):
        load_claims(tmp_path / "claims_train.jsonl")
