"""Score the shipped verifier folder again after its calibration changed, and update its card.

    .venv/bin/python models/refresh_card_figures.py [--model DIR] [--out DIR] [--only KEY ...]

``calibrate_verifier.py --evaluate`` / ``--card`` need the training run's folder; a change made
afterwards to the calibration of the shipped folder (the prior shift of
``choose_prior_shift.py``) changes only the calibrated figures. This script scores every
evaluation of :data:`verifier_evals.EVALS` with the folder's calibrated verifier (the shown
labels at the default preset's thresholds; raw logits
memoised in ``OUT/logits_cache.pkl``; the uncalibrated and lexical-baseline figures do not
depend on the calibration and are kept), then rewrites in ``model_card.json``: those figures,
``bars_met``, the sha256 of every shipped file (:data:`model_card.CARD_FILES`) and
``settings.class_offsets``; ``--plot`` draws the SciFact dev reliability diagram and
precision/coverage curves (``docs/verifier_scifact_dev.png``).

``--model-changed`` is for a new export of the same model (another int8 scheme, issue 40): the
uncalibrated figures (SciFact, HealthVer) and the calibrated LLM-judge slices
(``slice80_*``, the first :data:`verifier_evals.JUDGE_SLICE` pairs) are scored again too,
``settings.onnx`` / ``settings.onnx_bytes`` describe the new file, and the rows of every
figure scored are rewritten in ``MODEL_CARD.md``'s evaluation table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from logits_cache import cached_verifier, load_cache, save_cache
from model_card import ONNX_SCHEMES, shipped_files
from verifier_evals import EVALS, JUDGE_SLICE, eval_pairs

from verifai_desktop.evaluate import verifier as ev
from verifai_desktop.settings import VerifySettings
from verifai_desktop.verify.nli import get_verifier
from verifai_desktop.verify.presets import effective_thresholds

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def figures_of(result: dict[str, object]) -> dict[str, float]:
    """The card's figure keys from one ``eval verifier --json`` result."""
    fig = {k: float(result[k]) for k in ("macro_f1", "weighted_f1", "accuracy", "ece")}  # type: ignore[arg-type]
    fig["n"] = int(result["n"])  # type: ignore[call-overload]
    per_class = result["per_class"]
    assert isinstance(per_class, dict)
    for label, m in per_class.items():
        fig[f"{label.lower()}_f1"] = float(m["f1"])
    return fig


def _score_again(
    key: str,
    pairs: Sequence[Any],
    granularity: str,
    verifiers: tuple[Any, Any],
    name: str,
    card: dict[str, Any],
) -> dict[str, tuple[str, str]]:
    """Score ``key``'s figures that depend on the model's logits and not only on its
    calibration: uncalibrated (SciFact, HealthVer) and the judge slice (SciFact dev, HealthVer
    test), with ``verifiers`` = (calibrated, uncalibrated) sharing one logits cache. Returns
    figure key -> (system, premise) for :func:`_rewrite_md_rows`."""
    calibrated, raw = verifiers
    runs = []
    if key.startswith(("scifact", "healthver")):
        runs.append((f"uncalibrated_{key}", raw, pairs, f"{name} (uncalibrated)"))
    if key in ("scifact_dev", "healthver_test"):
        runs.append((f"slice{JUDGE_SLICE}_{key}", calibrated, pairs[:JUDGE_SLICE], name))
    done = {}
    for figure, verifier, subset, system in runs:
        result = ev.evaluate_pairs(
            verifier, subset, dataset=figure, system=system,
            granularity=granularity,  # type: ignore[arg-type]
        )  # fmt: skip
        card["figures"][figure] = figures_of(result.as_dict())
        done[figure] = (system, granularity)
    return done


def _rewrite_md_rows(path: Path, card: dict[str, Any], scored: dict[str, tuple[str, str]]) -> None:
    """Rewrite the evaluation-table rows of ``scored`` keys in ``MODEL_CARD.md`` from the card's
    figures, and its size and settings lines."""
    lines = path.read_text("utf-8").split("\n")
    for i, line in enumerate(lines):
        key = line.split(" | ")[0].removeprefix("| ").strip() if line.startswith("| ") else ""
        if key in scored:
            fig, (system, premise) = card["figures"][key], scored[key]
            f1s = "/".join(
                f"{fig[f'{c}_f1']:.2f}" for c in ("support", "contradict", "no_evidence")
            )
            lines[i] = (
                f"| {key} | {system} | {premise} | {fig['n']} | {fig['macro_f1']:.3f} | "
                f"{fig['weighted_f1']:.3f} | {fig['accuracy']:.3f} | {f1s} | {fig['ece']:.3f} |"
            )
        elif line.startswith('  "onnx": '):
            lines[i] = f'  "onnx": {json.dumps(card["settings"]["onnx"])},'
        elif line.startswith('  "onnx_bytes": '):
            lines[i] = f'  "onnx_bytes": {card["settings"]["onnx_bytes"]},'
        elif line.startswith("Base model: ") and "ONNX int8, " in line:
            size = card["settings"]["onnx_bytes"] / 1e6
            head, tail = line.split("ONNX int8, ", 1)
            lines[i] = f"{head}ONNX int8, {size:.1f} MB.{tail.split(' MB.', 1)[1]}"
    path.write_text("\n".join(lines), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="bundled", help="verifier folder (default: bundled)")
    ap.add_argument("--out", type=Path, default=Path("card_refresh"), help="cache folder")
    ap.add_argument("--only", nargs="*", default=None, help="evaluation keys to score")
    ap.add_argument(
        "--plot", type=Path, default=None, help="SciFact dev (sentence windows) plot, PNG"
    )
    ap.add_argument(
        "--model-changed",
        action="store_true",
        help="the ONNX file is a new export: score the uncalibrated figures and the judge "
        "slices too, and rewrite MODEL_CARD.md's evaluation rows",
    )
    args = ap.parse_args(argv)
    folder = get_verifier(args.model).model_dir
    args.out.mkdir(parents=True, exist_ok=True)
    cache = load_cache(args.out)
    verifier = cached_verifier(folder, cache)
    card_path = folder / "model_card.json"
    card = json.loads(card_path.read_text("utf-8"))
    thresholds = effective_thresholds(VerifySettings(), verifier.card.presets)
    confusions: dict[str, list[list[int]]] = {}
    scored: dict[str, tuple[str, str]] = {}  # figure key -> (system, premise) of its MD row
    name = card.get("name", folder.name)
    both = (
        verifier,
        cached_verifier(folder, cache, calibrated=False) if args.model_changed else None,
    )
    for key, kind, rel, granularity, limit in EVALS:
        if args.only is not None and key not in args.only:
            continue
        pairs = eval_pairs(DATA, kind, rel, limit)
        t0 = time.monotonic()
        evaluation = ev.evaluate_pairs(
            verifier, pairs, dataset=key, system=card.get("name", folder.name),
            granularity=granularity, thresholds=thresholds,  # type: ignore[arg-type]
        )  # fmt: skip
        if key == "scifact_dev_sentences" and args.plot is not None:
            from verifai_desktop.evaluate.plots import plot_verifier

            plot_verifier(evaluation, args.plot, thresholds)
        result = evaluation.as_dict()
        save_cache(args.out, cache)
        (args.out / f"{key}.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
        card["figures"][key] = figures_of(result)
        confusions[key] = [[int(x) for x in row] for row in result["confusion"]]
        if args.model_changed:
            scored.update(_score_again(key, pairs, granularity, both, name, card))
            scored[key] = (name, granularity)
        fig = card["figures"][key]
        print(
            f"{key:<36} macro F1 {fig['macro_f1']:.3f} weighted {fig['weighted_f1']:.3f} "
            f"({fig['support_f1']:.2f}/{fig['contradict_f1']:.2f}/{fig['no_evidence_f1']:.2f}) "
            f"ECE {fig['ece']:.2f}  ({time.monotonic() - t0:.0f} s)",
            flush=True,
        )
    sci, hv = card["figures"].get("scifact_dev", {}), card["figures"].get("healthver_test", {})
    bars = card.get("bars_met", {})
    bars["scifact_dev_macro_f1>=0.68"] = sci.get("macro_f1", 0.0) >= 0.68
    bars["scifact_dev_contradict_f1>=0.50"] = sci.get("contradict_f1", 0.0) >= 0.50
    bars["healthver_test_weighted_f1>=0.45"] = hv.get("weighted_f1", 0.0) >= 0.45
    if {"scifact_dev", "healthver_test"} <= set(confusions):
        bars["every_class_predicted"] = all(
            all(sum(row[k] for row in confusions[key]) > 0 for k in range(3))
            for key in ("scifact_dev", "healthver_test")
        )
    card["bars_met"] = bars
    config = json.loads((folder / "verifier.json").read_text("utf-8"))
    for offsets in ("class_offsets", "class_offsets_long"):
        card.setdefault("settings", {})[offsets] = config.get(offsets)
    if args.model_changed:
        onnx_file = folder / str(config.get("onnx_file", "model.onnx"))
        card["settings"]["onnx_bytes"] = onnx_file.stat().st_size
        card["settings"]["onnx"] = ONNX_SCHEMES.get(str(config.get("int8_scheme")), "")
        _rewrite_md_rows(folder / "MODEL_CARD.md", card, scored)
    card["files"] = shipped_files(folder)
    card_path.write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    print(f"figures, files and settings written to {card_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
