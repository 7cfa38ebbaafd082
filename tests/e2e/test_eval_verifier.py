"""`verifai eval verifier` on a slice of SciFact dev with the real shipped verifier."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

N = 30


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    from tests.conftest import SHARED_DATA

    home = tmp_path_factory.mktemp("home")
    out = subprocess.run(
        [
            str(Path(sys.executable).parent / "verifai"),
            "eval",
            "verifier",
            "--scifact",
            str(SHARED_DATA / "scifact" / "original"),
            "--split",
            "dev",
            "--limit",
            str(N),
            "--granularity",
            "passage",
            "--preset",
            "lenient",
            "--plot",
            str(home / "verifier.png"),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={"VERIFAI_HOME": str(home), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
        cwd=Path(__file__).resolve().parents[2],
    )
    assert out.returncode == 0, out.stderr
    data: dict[str, object] = json.loads(out.stdout)
    data["_plot"] = (home / "verifier.png").read_bytes()
    return data


def test_metrics_are_consistent_with_the_confusion_matrix(report: dict[str, object]) -> None:
    cm = report["confusion"]
    assert isinstance(cm, list) and len(cm) == 3 and all(len(r) == 3 for r in cm)
    assert report["n"] == N == sum(sum(r) for r in cm)
    assert report["labels"] == ["SUPPORT", "CONTRADICT", "NO_EVIDENCE"]
    per_class = report["per_class"]
    assert isinstance(per_class, dict)
    f1s, supports = [], []
    for k, label in enumerate(report["labels"]):
        tp = cm[k][k]
        predicted = sum(r[k] for r in cm)
        gold = sum(cm[k])
        p = tp / predicted if predicted else 0.0
        r = tp / gold if gold else 0.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        m = per_class[label]
        assert m["support"] == gold
        assert m["precision"] == pytest.approx(p) and m["recall"] == pytest.approx(r)
        assert m["f1"] == pytest.approx(f1) and 0.0 <= f1 <= 1.0
        f1s.append(f1)
        supports.append(gold)
    assert report["macro_f1"] == pytest.approx(sum(f1s) / 3)
    assert report["weighted_f1"] == pytest.approx(
        sum(f * s for f, s in zip(f1s, supports, strict=True)) / N
    )
    assert report["accuracy"] == pytest.approx(sum(cm[k][k] for k in range(3)) / N)
    assert 0.0 <= float(report["ece"]) <= 1.0  # type: ignore[arg-type]
    assert report["granularity"] == "passage" and report["dataset"] == f"scifact_dev[:{N}]"


def test_what_the_app_shows_agrees_with_the_verifier(report: dict[str, object]) -> None:
    """Shown SUPPORT only where that is the verifier's best guess, and every pair shown exactly
    once, per gold label (rows as the confusion matrix's). CONTRADICT may be shown where it is
    not the best guess: a rule shows a figure bound to another value, or a negation one side
    drops, red whatever the verifier guessed (issue 39)."""
    cm, shown = report["confusion"], report["shown_confusion"]
    assert isinstance(cm, list) and isinstance(shown, list)
    assert report["shown_labels"] == ["SUPPORT", "CONTRADICT", "NO_EVIDENCE", "UNSURE"]
    for gold_row, shown_row in zip(cm, shown, strict=True):
        assert sum(shown_row) == sum(gold_row)
        assert shown_row[0] <= gold_row[0]
    per = report["shown_per_label"]
    assert isinstance(per, dict)
    for k, label in enumerate(("SUPPORT", "CONTRADICT", "NO_EVIDENCE")):
        n_shown = sum(r[k] for r in shown)
        assert per[label]["shown"] == n_shown
        if n_shown:
            assert per[label]["precision"] == pytest.approx(shown[k][k] / n_shown)
    assert report["unsure_share"] == pytest.approx(sum(r[3] for r in shown) / N)


def test_the_plot_is_a_png(report: dict[str, object]) -> None:
    png = report["_plot"]
    assert isinstance(png, bytes) and png.startswith(b"\x89PNG") and len(png) > 10_000
