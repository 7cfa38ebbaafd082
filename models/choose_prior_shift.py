"""Choose the verifier's class offsets (a prior shift) on the dev mix and write them.

    .venv/bin/python models/choose_prior_shift.py [--granularity sentences|passage]
        [--model DIR] [--cache FILE] [--write]

The calibrated verifier all but never said SUPPORT on HealthVer (3% of HealthVer dev pairs
predicted SUPPORT against 28% gold). A prior shift (Saerens, Latinne & Decaestecker 2002)
multiplies each class's probability by ``exp(b_k)`` and renormalises: it moves the decision
boundaries without retraining. ``b_NO_EVIDENCE`` is fixed at 0; ``b_SUPPORT`` and
``b_CONTRADICT`` are searched on a 0.25 grid.

Offsets are chosen per premise granularity, because the model's probabilities mean different
things for a sentence window and a whole abstract: ``class_offsets`` for sentence windows (the
app's default premise), ``class_offsets_long`` for whole passages (premises over
``SHORT_PREMISE_MAX_WORDS`` words). Every SciFact dev pair (claim, cited abstract) and
HealthVer dev pair goes through the app's verification path
(:func:`~verifai_desktop.verify.check.verify_pairs` at that granularity: aims left out, the
checks, support-first aggregation), the verifier's probabilities memoised, so a candidate costs
no forward pass. The rule, :data:`RULE`: a candidate is eligible when, on each
dev set, every class is the best guess for at least :data:`MIN_SHARE` of the pairs and for at
least a quarter of its gold share; among eligible candidates the best mean macro F1 over the
two dev sets wins (ties: the smaller shift). Test splits are not read.

``--write`` stores the offsets in the folder's ``verifier.json`` and the choice, with the dev
figures before and after, under ``calibration.prior_shift.<granularity>`` in
``model_card.json``.
Choose the threshold presets again afterwards (``models/choose_thresholds.py --write``): the
probabilities they threshold have changed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent))
from choose_thresholds import DATA, Memo

from verifai_desktop.evaluate.verifier import (
    EvalPair,
    compute_metrics,
    load_healthver,
    load_scifact,
)
from verifai_desktop.settings import PremiseGranularity
from verifai_desktop.verify.check import LABEL_ORDER, Verifier, verify_pairs
from verifai_desktop.verify.nli import OnnxVerifier, get_verifier, shift_priors

GRID_SUPPORT = tuple(round(-0.5 + 0.25 * i, 2) for i in range(13))  # -0.50 .. 2.50
GRID_CONTRADICT = tuple(round(-1.0 + 0.25 * i, 2) for i in range(11))  # -1.00 .. 1.50
MIN_SHARE = 0.05
"""Smallest share of a dev set's pairs each class must be the best guess for."""
RULE = (
    "eligible: on SciFact dev and HealthVer dev, every class the best guess for >= "
    f"{MIN_SHARE:.0%} of pairs and >= 1/4 of its gold share; chosen: best mean macro F1 of "
    "the two (app path at the granularity: checks, support-first); b_NO_EVIDENCE = 0"
)


class Shifted:
    """A verifier giving ``inner``'s probabilities times ``exp(offsets)``, renormalised: the
    short premises' offsets for premises of at most ``SHORT_PREMISE_MAX_WORDS`` words, the long
    ones' for the rest (as :meth:`OnnxVerifier.classify` applies them)."""

    def __init__(self, inner: Verifier, short: Sequence[float], long: Sequence[float]) -> None:
        self.inner = inner
        self.short = np.asarray(short, dtype=np.float64)
        self.long = np.asarray(long, dtype=np.float64)

    def load(self) -> None:
        self.inner.load()

    def classify(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        return shift_priors(self.inner.classify(pairs), pairs, self.short, self.long)


@dataclass(frozen=True)
class DevScore:
    """One candidate on one dev set: best-guess macro F1 and per-class shares (LABEL_ORDER)."""

    macro_f1: float
    predicted_share: tuple[float, float, float]
    gold_share: tuple[float, float, float]


def _shares(labels: NDArray[np.intp]) -> tuple[float, float, float]:
    s, c, n = (np.bincount(labels, minlength=3) / len(labels)).tolist()
    return float(s), float(c), float(n)


def score(
    verifier: Verifier, pairs: Sequence[EvalPair], granularity: PremiseGranularity
) -> DevScore:
    """Best-guess macro F1 and each class's predicted and gold share through the app's path."""
    result = verify_pairs(
        verifier, [(p.premise, p.hypothesis) for p in pairs], granularity=granularity
    )
    guess = result.probs.argmax(axis=1)
    gold = np.array([LABEL_ORDER.index(p.label) for p in pairs])
    metrics = compute_metrics(gold.tolist(), guess.tolist())
    return DevScore(metrics.macro_f1, _shares(guess), _shares(gold))


def eligible(scores: dict[str, DevScore]) -> bool:
    """Whether every class is predicted often enough on every dev set (:data:`RULE`)."""
    return all(
        p >= max(MIN_SHARE, g / 4)
        for sc in scores.values()
        for p, g in zip(sc.predicted_share, sc.gold_share, strict=True)
    )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="bundled", help="verifier folder (default: bundled)")
    ap.add_argument("--write", action="store_true", help="store the offsets in the folder")
    ap.add_argument("--cache", type=Path, default=None, help="memo file of probabilities")
    ap.add_argument(
        "--granularity",
        choices=("sentences", "passage"),
        default="sentences",
        help="premises the offsets are for: sentence windows (class_offsets, the app's "
        "default) or whole passages (class_offsets_long)",
    )
    args = ap.parse_args(argv)
    shipped = get_verifier(args.model)
    folder = shipped.model_dir
    key = "class_offsets" if args.granularity == "sentences" else "class_offsets_long"
    base = Memo(OnnxVerifier(folder, class_offsets=(0.0, 0.0, 0.0)), args.cache)
    sets = {
        "scifact_dev": load_scifact(DATA / "scifact" / "original", "dev"),
        "healthver_dev": load_healthver(DATA / "healthver" / "healthver_dev.csv"),
    }
    rows = []
    for b_s in GRID_SUPPORT:
        for b_c in GRID_CONTRADICT:
            candidate = (b_s, b_c, 0.0)
            shifted = (
                Shifted(base, candidate, shipped.class_offsets_long.tolist())
                if args.granularity == "sentences"
                else Shifted(base, shipped.class_offsets.tolist(), candidate)
            )
            figures = {
                name: score(shifted, pairs, args.granularity) for name, pairs in sets.items()
            }
            mean = float(np.mean([f.macro_f1 for f in figures.values()]))
            rows.append((mean, b_s, b_c, figures))
    base.save()
    ok = [r for r in rows if eligible(r[3])]
    if not ok:
        print("no candidate keeps every class predicted on every dev set", file=sys.stderr)
        return 1
    best = max(ok, key=lambda r: (r[0], -abs(r[1]) - abs(r[2])))
    before = next(r for r in rows if r[1] == 0.0 and r[2] == 0.0)
    print(f"{'b_S':>5} {'b_C':>5} {'mean':>5}  SciFact dev F1 (S/C/NE predicted)  "
          "HealthVer dev F1 (S/C/NE predicted)  eligible")  # fmt: skip
    shown = sorted(rows, key=lambda r: -r[0])[:12]
    for mean, b_s, b_c, figures in [*shown, *([best] if best not in shown else []), before]:
        cells = "  ".join(
            f"{f.macro_f1:.3f} ({'/'.join(f'{x:.2f}' for x in f.predicted_share)})"
            for f in figures.values()
        )
        mark = "chosen" if (b_s, b_c) == (best[1], best[2]) else str(eligible(figures))
        print(f"{b_s:+5.2f} {b_c:+5.2f} {mean:5.3f}  {cells}  {mark}")
    if args.write:
        offsets = {"SUPPORT": best[1], "CONTRADICT": best[2], "NO_EVIDENCE": 0.0}
        cfg_path = folder / "verifier.json"
        cfg = json.loads(cfg_path.read_text("utf-8"))
        cfg[key] = offsets
        cfg_path.write_text(json.dumps(cfg, indent=2) + "\n", encoding="utf-8")
        card_path = folder / "model_card.json"
        card = json.loads(card_path.read_text("utf-8")) if card_path.is_file() else {}
        shifts = card.setdefault("calibration", {}).setdefault("prior_shift", {})
        shifts[args.granularity] = {
            key: offsets,
            "rule": RULE,
            "script": "models/choose_prior_shift.py",
            "dev_before": {name: asdict(sc) for name, sc in before[3].items()},
            "dev_after": {name: asdict(sc) for name, sc in best[3].items()},
        }
        card_path.write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
        print(f"{key} {offsets} written to {cfg_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
