"""Choose the verifier's per-label threshold presets on dev and write them into its model card.

    .venv/bin/python models/choose_thresholds.py [--model DIR] [--write]

Every SciFact dev pair (claim, cited abstract) and HealthVer dev pair goes once through the
app's verification path (:func:`verifai_desktop.verify.check.verify_pairs`: sentence windows,
aims left out, the checks, support-first aggregation); the verifier's probabilities are
memoised, so each candidate threshold costs no further forward pass. For each preset the
smallest threshold on a grid (``--step``, 0.05) whose SciFact dev precision reaches the
preset's target (with at least :data:`MIN_SHOWN` pairs shown with that label) is chosen,
SUPPORT first (with CONTRADICT at 0.5), then CONTRADICT with the SUPPORT threshold chosen; no
threshold reaching it means the label is never shown under that preset (threshold
:data:`NEVER`). SciFact dev decides (claim against a scientific abstract is the app's task);
HealthVer dev is reported beside it. Test splits are not read.

``--write`` stores the presets, with their dev precision and coverage, under ``presets`` in
the card's ``model_card.json`` (and the table in ``MODEL_CARD.md``).
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.evaluate.shown import SHOWN_ORDER, shown_metrics
from verifai_desktop.evaluate.verifier import EvalPair, load_healthver, load_scifact
from verifai_desktop.settings import VerifySettings
from verifai_desktop.verify.check import LABEL_ORDER, Verifier, verify_pairs
from verifai_desktop.verify.nli import get_verifier

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TARGETS: dict[str, tuple[float, float]] = {
    "strict": (0.90, 0.80),
    "balanced": (0.80, 0.50),
    "lenient": (0.70, 0.40),
}
"""Preset -> (SUPPORT precision, CONTRADICT precision) it must reach on SciFact dev."""
STEP = 0.05
"""Grid step of the thresholds (``--step``). A coarse grid moves a preset a long way when the
model's probabilities shift: with a prior shift of +1 on SUPPORT, 0.65 and 0.70 stand for
P(SUPPORT) 0.41 and 0.46 before the shift."""


def grid(step: float = STEP) -> tuple[float, ...]:
    """Candidate thresholds from 0.40 to 0.95, ``step`` apart."""
    n = round(0.55 / step)
    return tuple(round(0.4 + step * i, 4) for i in range(n + 1))


MIN_SHOWN = 5
"""Fewest pairs shown with a label for its dev precision to count."""
NEVER = 1.01
"""A threshold no probability reaches: the label is never shown under that preset."""


class Memo:
    """A verifier whose probabilities are memoised per (premise, hypothesis), optionally kept
    in a pickle file between runs (``--cache``; delete it when the model changes)."""

    def __init__(self, inner: Verifier, path: Path | None = None) -> None:
        self.inner = inner
        self.path = path
        self.cache: dict[tuple[str, str], NDArray[np.float32]] = {}
        if path is not None and path.is_file():
            with path.open("rb") as fh:
                self.cache = pickle.load(fh)

    def save(self) -> None:
        """Write the memo to its file (no-op without one)."""
        if self.path is not None:
            with self.path.open("wb") as fh:
                pickle.dump(self.cache, fh)

    def load(self) -> None:
        self.inner.load()

    def classify(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        todo = [p for p in dict.fromkeys(pairs) if p not in self.cache]
        for start in range(0, len(todo), 256):
            part = todo[start : start + 256]
            for pair, row in zip(part, self.inner.classify(part), strict=True):
                self.cache[pair] = row
        return np.asarray([self.cache[p] for p in pairs], dtype=np.float32).reshape(-1, 3)


def shown_report(
    verifier: Verifier, pairs: Sequence[EvalPair], support: float, contradict: float
) -> dict[str, object]:
    """:func:`shown_metrics` of ``pairs`` through the app's path at these thresholds."""
    thresholds = VerifySettings(support_threshold=support, contradict_threshold=contradict)
    result = verify_pairs(
        verifier,
        [(p.premise, p.hypothesis) for p in pairs],
        granularity="sentences",
        thresholds=thresholds,
    )
    gold = [LABEL_ORDER.index(p.label) for p in pairs]
    return shown_metrics(gold, [SHOWN_ORDER.index(s) for s in result.shown])


def _precision(report: dict[str, object], label: str) -> tuple[float | None, int]:
    per = report["shown_per_label"]
    assert isinstance(per, dict)
    return per[label]["precision"], int(per[label]["shown"])


def choose(
    verifier: Verifier, dev: Sequence[EvalPair], step: float = STEP
) -> dict[str, tuple[float, float]]:
    """Per preset, ``(support_threshold, contradict_threshold)`` by :data:`TARGETS`."""
    out: dict[str, tuple[float, float]] = {}
    for name, (s_target, c_target) in TARGETS.items():
        support = contradict = NEVER
        for t in grid(step):
            precision, shown = _precision(shown_report(verifier, dev, t, 0.5), "SUPPORT")
            if precision is not None and shown >= MIN_SHOWN and precision >= s_target:
                support = t
                break
        for t in grid(step):  # with the SUPPORT threshold just chosen (support-first windows)
            precision, shown = _precision(shown_report(verifier, dev, support, t), "CONTRADICT")
            if precision is not None and shown >= MIN_SHOWN and precision >= c_target:
                contradict = t
                break
        out[name] = (support, contradict)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="bundled", help="verifier folder (default: bundled)")
    ap.add_argument("--write", action="store_true", help="store the presets in the card")
    ap.add_argument("--cache", type=Path, default=None, help="memo file of probabilities")
    ap.add_argument("--step", type=float, default=STEP, help="threshold grid step")
    args = ap.parse_args(argv)
    inner = get_verifier(args.model)
    verifier = Memo(inner, args.cache)
    sets = {
        "scifact_dev": load_scifact(DATA / "scifact" / "original", "dev"),
        "healthver_dev": load_healthver(DATA / "healthver" / "healthver_dev.csv"),
    }
    t0 = time.perf_counter()
    chosen = choose(verifier, sets["scifact_dev"], args.step)
    presets: dict[str, dict[str, float]] = {}
    print(f"{'preset':<9} {'S thr':>5} {'C thr':>5}  " + "  ".join(
        f"{name}: S prec/cov, C prec/cov, unsure" for name in sets))  # fmt: skip
    for name, (support, contradict) in chosen.items():
        row: dict[str, float] = {"support_threshold": support, "contradict_threshold": contradict}
        cells = []
        for set_name, pairs in sets.items():
            rep = shown_report(verifier, pairs, support, contradict)
            per = rep["shown_per_label"]
            assert isinstance(per, dict)
            for label in ("SUPPORT", "CONTRADICT"):
                if per[label]["precision"] is not None:  # absent: never shown
                    row[f"{set_name}_{label.lower()}_precision"] = per[label]["precision"]
                row[f"{set_name}_{label.lower()}_coverage"] = per[label]["coverage"]
            row[f"{set_name}_unsure_share"] = float(rep["unsure_share"])  # type: ignore[arg-type]
            row[f"{set_name}_shown_macro_f1"] = float(rep["shown_macro_f1"])  # type: ignore[arg-type]
            sp = row.get(f"{set_name}_support_precision", float("nan"))
            cp = row.get(f"{set_name}_contradict_precision", float("nan"))
            sc, cc = row[f"{set_name}_support_coverage"], row[f"{set_name}_contradict_coverage"]
            cells.append(
                f"{sp:.2f}/{sc:.2f}, {cp:.2f}/{cc:.2f}, {row[f'{set_name}_unsure_share']:.2f}"
            )
        presets[name] = row
        print(f"{name:<9} {support:5.2f} {contradict:5.2f}  " + "  ".join(cells))
    print(f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    verifier.save()
    if args.write:
        card_dir = inner.model_dir
        path = card_dir / "model_card.json"
        card = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        card["presets"] = presets
        card["presets_rule"] = (
            f"smallest threshold on a {args.step} grid from 0.40 whose SciFact dev precision "
            f"reaches the preset's target with at least {MIN_SHOWN} pairs shown; targets (SUPPORT, "
            f"CONTRADICT): {TARGETS}; {NEVER} = never shown (models/choose_thresholds.py)"
        )
        path.write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
        print(f"presets written to {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
