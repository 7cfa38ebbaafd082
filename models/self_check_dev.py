"""Each step of issue 26 on its own, on dev texts: perturbed sentences caught, unchanged kept.

    .venv/bin/python models/self_check_dev.py [--n 60] [--json OUT.json] [--model DIR]

Dev texts: the self-check dev part of the SciFact corpus abstracts cited by *train* claims only
(never an abstract of a dev or test claim, never ``docs/clean``): the train-cited abstracts are
split once by a hash of the doc id (``perturb_data.is_self_check_dev``), the other part may be
trained on by stage 3 of ``train_verifier.py``, this part never is. Perturbation pairs
(:mod:`verifai_desktop.verify.perturb`) go through ``verifai eval self-check``'s path
(:func:`verifai_desktop.evaluate.selfcheck.run_self_check`) with the checks switched on one at
a time and all together, at the plain 0.5 / 0.5 thresholds and at each preset of the
verifier's card. The verifier's probabilities are memoised (``choose_thresholds.Memo``), so
each row costs no further forward pass.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from choose_thresholds import Memo
from perturb_data import self_check_dev_abstracts

from verifai_desktop.evaluate.selfcheck import SelfCheck, run_self_check
from verifai_desktop.settings import VerifySettings
from verifai_desktop.verify.checks import NO_CHECKS, Checks
from verifai_desktop.verify.nli import get_verifier
from verifai_desktop.verify.perturb import PerturbKind
from verifai_desktop.verify.presets import effective_thresholds

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact" / "original"

STEPS: tuple[tuple[str, Checks], ...] = (
    ("none (aggregation by maximum)", NO_CHECKS),
    ("aims only", replace(NO_CHECKS, aims=True)),
    ("numbers only", replace(NO_CHECKS, numbers=True)),
    ("negation only", replace(NO_CHECKS, negation=True)),
    ("word-for-word alignment only", replace(NO_CHECKS, aligned=True)),
    ("support-first only", replace(NO_CHECKS, support_first=True)),
    ("all checks", Checks()),
)


def dev_abstracts() -> list[tuple[str, str]]:
    """(doc id, abstract) of the self-check dev part of the SciFact abstracts cited by train
    claims only (``perturb_data.self_check_dev_abstracts``; never trained on)."""
    return self_check_dev_abstracts(DATA)


def row(name: str, report: SelfCheck) -> dict[str, object]:
    """One table row: per kind, the share caught (unchanged: the share kept green)."""
    out: dict[str, object] = {"step": name}
    for k in report.kinds:
        share = k.green / k.n if k.kind is PerturbKind.UNCHANGED else k.caught / k.n
        out[k.kind.value] = round(share, 3)
        out[f"{k.kind.value}_n"] = k.n
    changed = [k for k in report.kinds if k.kind is not PerturbKind.UNCHANGED]
    out["changed_caught"] = round(sum(k.caught for k in changed) / sum(k.n for k in changed), 3)
    out["unsure_share"] = round(
        sum(k.shown.get("UNSURE", 0) for k in report.kinds) / sum(k.n for k in report.kinds), 3
    )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=60, help="pairs per kind (default: 60)")
    ap.add_argument("--json", type=Path, default=None, help="write the rows as JSON")
    ap.add_argument("--cache", type=Path, default=None, help="memo file of probabilities")
    ap.add_argument("--model", default="bundled", help="verifier folder (default: bundled)")
    args = ap.parse_args()
    inner = get_verifier(args.model)
    verifier = Memo(inner, args.cache)
    passages = dev_abstracts()
    plain = VerifySettings(preset="custom")
    rows = []
    t0 = time.perf_counter()
    for name, checks in STEPS:
        report = run_self_check(verifier, passages, plain, n_per_kind=args.n, checks=checks)
        rows.append(row(f"{name}, 0.5/0.5", report))
    for preset, values in inner.card.presets.items():
        thresholds = effective_thresholds(replace(plain, preset=preset), inner.card.presets)  # type: ignore[arg-type]
        report = run_self_check(verifier, passages, thresholds, n_per_kind=args.n)
        label = (
            f"all checks, {preset} ({values['support_threshold']}/{values['contradict_threshold']})"
        )
        rows.append(row(label, report))
    kinds = [k.value for k in PerturbKind]
    print(f"{len(passages)} train-cited dev abstracts; pairs per kind: "
          + ", ".join(f"{k} {rows[0].get(k + '_n', 0)}" for k in kinds))  # fmt: skip
    print(f"{'step':<52} " + " ".join(f"{k[:10]:>10}" for k in kinds) + "  changed  unsure")
    for r in rows:
        cells = " ".join(f"{r.get(k, float('nan')):10.2f}" for k in kinds)
        print(f"{r['step']:<52} {cells}  {r['changed_caught']:7.2f}  {r['unsure_share']:6.2f}")
    print("(unchanged: share shown green; every other kind: share NOT shown green)")
    print(f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    verifier.save()
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
