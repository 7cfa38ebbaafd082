"""Calibrate, evaluate and describe a trained verifier (after ``models/train_verifier.py``).

    R=/tmp/verifier_v2                                     # the training run folder
    .venv/bin/verifai models export-verifier $R/hf $R/export --int8
    .venv/bin/python models/calibrate_verifier.py --out $R --calibrate $R/export --evaluate
    .venv/bin/python models/calibrate_verifier.py --out $R --card $R/export

``--calibrate`` fits the softmax temperature (Guo et al. 2017) on the dev sets and chooses
between no feature layer and the logistic feature layers of ``verify/features.py`` (fitted on
the run's held-out SciFact train claims) on dev only: SciFact dev, HealthVer dev and LingNLI
dev (see :func:`calibrate`). ``--evaluate`` then scores every evaluation of the model card;
``--card`` writes ``model_card.json`` and ``MODEL_CARD.md``. Test splits are reported, never
used to choose.

Then, on the exported folder: ``choose_prior_shift.py --write`` (class offsets so that every
class is predicted on every dev set), ``choose_thresholds.py --write`` (the presets) and
``refresh_card_figures.py`` (the card's calibrated figures and file hashes again).

The logits cache is in ``logits_cache.py``, the held-out SciFact pairs in ``scifact_split.py``,
the dev sets in ``dev_data.py``, the evaluations in ``verifier_evals.py``, the card in
``model_card.py``, the fitting in ``fitting.py``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import verifier_data as vd
from dev_data import lingnli_dev
from fitting import fit_feature_layer, fit_temperature
from logits_cache import cached_verifier, load_cache, save_cache
from model_card import write_card
from scifact_split import held_out_pairs
from verifier_evals import evaluate_all

log = logging.getLogger("calibrate_verifier")
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


DEV_CRITERIA = ("scifact_dev_macro_f1", "healthver_dev_weighted_f1", "lingnli_dev_macro_f1")
"""The dev rule of verifier v2, fixed before any v2 model was scored: a candidate must beat
the lexical-overlap baseline on each criterion and on SciFact dev with sentence-window
premises; among those, the best mean of the three criteria wins."""


def calibrate(args: argparse.Namespace, model_dir: Path) -> int:
    """Fit the temperature and choose the feature layer on dev; decide the premise granularity.

    Temperature: fitted on the logits of the three dev sets together (SciFact dev, HealthVer
    dev, LingNLI dev). Candidates: temperature only, or a logistic feature layer fitted on the
    run's held-out SciFact train claims (all pairs / claim + whole abstract / routed by premise
    length; C in {0.05, 0.5, 5}); chosen by :data:`DEV_CRITERIA`. The layer is kept only if it
    beats temperature-only on that rule.

    Granularity: the chosen candidate's mean macro F1 on SciFact dev and HealthVer dev with
    whole-passage premises vs 1-3 sentence windows; the better one is reported as the app's
    default (``recommended_granularity``).

    Writes ``temperature`` and ``feature_layer`` (or null) into ``model_dir/verifier.json``
    and the figures into ``args.out/calibration.json``.
    """
    from verifai_desktop.evaluate.verifier import (
        LexicalOverlapVerifier,
        compute_metrics,
        load_healthver,
        load_scifact,
    )
    from verifai_desktop.verify.calibration import expected_calibration_error
    from verifai_desktop.verify.check import LABEL_ORDER, verify_pairs
    from verifai_desktop.verify.features import (
        FeatureLayer,
        RoutedFeatureLayer,
        short_premise_mask,
    )
    from verifai_desktop.verify.nli import softmax

    t0 = time.monotonic()
    sci = args.data / "scifact" / "original"
    corpus = vd.load_corpus(sci / "corpus.jsonl")
    claims = vd.load_claims(sci / "claims_train.jsonl")
    cache = load_cache(args.out)
    verifier = cached_verifier(model_dir, cache, threads=args.threads, calibrated=False)
    label_idx = {lab.value: i for i, lab in enumerate(LABEL_ORDER)}

    dev = load_scifact(sci, "dev")
    d_pairs = [(p.premise, p.hypothesis) for p in dev]
    d_gold = [LABEL_ORDER.index(p.label) for p in dev]
    hv = load_healthver(args.data / "healthver" / "healthver_dev.csv")
    hv_pairs = [(p.premise, p.hypothesis) for p in hv]
    hv_gold = [LABEL_ORDER.index(p.label) for p in hv]
    ling = lingnli_dev(args.data)
    l_pairs = [p for p, _ in ling]
    l_gold = [g for _, g in ling]
    all_logits = verifier.logits(d_pairs + hv_pairs + l_pairs)
    all_gold = d_gold + hv_gold + l_gold
    save_cache(args.out, cache)
    log.info("dev sets scored: %d pairs (%.0fs)", len(all_gold), time.monotonic() - t0)
    temperature = fit_temperature(all_logits, all_gold)
    d_logits = all_logits[: len(d_pairs)]

    held = held_out_pairs(args.out, claims, corpus, seed=args.seed)
    h_pairs = [(p.premise, p.hypothesis) for p in held]
    h_gold = [label_idx[p.label] for p in held]
    h_probs = softmax(verifier.logits(h_pairs), temperature)
    save_cache(args.out, cache)
    log.info("held-out: %d pairs scored (%.0fs)", len(h_pairs), time.monotonic() - t0)

    def dev_scores(layer: object | None) -> dict[str, float]:
        scorer = cached_verifier(
            model_dir, cache, threads=args.threads, calibrated=False,
            calibration=(temperature, layer),
        )  # fmt: skip
        out: dict[str, float] = {}
        p_probs = scorer.classify(d_pairs)
        m = compute_metrics(d_gold, p_probs.argmax(axis=1).tolist())
        out["scifact_dev_macro_f1"] = m.macro_f1
        out["scifact_dev_contradict_f1"] = m.per_class[1].f1
        out["scifact_dev_ece"] = expected_calibration_error(p_probs, d_gold)
        s_probs = verify_pairs(scorer, d_pairs, granularity="sentences").probs
        out["scifact_dev_sentences_macro_f1"] = compute_metrics(
            d_gold, s_probs.argmax(axis=1).tolist()
        ).macro_f1
        hm = compute_metrics(hv_gold, scorer.classify(hv_pairs).argmax(axis=1).tolist())
        out["healthver_dev_weighted_f1"] = hm.weighted_f1
        out["healthver_dev_macro_f1"] = hm.macro_f1
        lm = compute_metrics(l_gold, scorer.classify(l_pairs).argmax(axis=1).tolist())
        out["lingnli_dev_macro_f1"] = lm.macro_f1
        out["selection_score"] = sum(out[k] for k in DEV_CRITERIA) / len(DEV_CRITERIA)
        return out

    report: dict[str, object] = {
        "temperature": temperature,
        "temperature_fitted_on": ["scifact_dev", "healthver_dev", f"lingnli_dev[:{len(ling)}]"],
        "dev_ece_passage_before": expected_calibration_error(softmax(d_logits), d_gold),
        "dev_ece_passage_after": expected_calibration_error(softmax(d_logits, temperature), d_gold),
        "held_out_pairs": len(h_pairs),
        "rule": DEV_CRITERIA,
    }
    candidates: dict[str, object | None] = {"temperature_only": None}
    abstracts = np.array([p.source == "held_abstract" for p in held])
    short = short_premise_mask([p.premise for p in held])

    def fit_on(mask: np.ndarray, c: float) -> FeatureLayer:
        idx = np.flatnonzero(mask)
        return fit_feature_layer(
            h_probs[idx], [h_pairs[i] for i in idx], [h_gold[i] for i in idx], c=c
        )

    for c in (0.05, 0.5, 5.0):
        candidates[f"feature_layer_C{c}"] = fit_on(np.ones(len(held), bool), c)
        candidates[f"feature_layer_abstracts_C{c}"] = fit_on(abstracts, c)
        candidates[f"routed_C{c}"] = RoutedFeatureLayer(
            short=fit_on(short, c), long=fit_on(~short, c)
        )
    scores = {}
    for name, layer in candidates.items():
        scores[name] = dev_scores(layer)
        log.info("%s: %s (%.0fs)", name, scores[name], time.monotonic() - t0)
    save_cache(args.out, cache)
    lex = LexicalOverlapVerifier()

    def lex_f1(pairs: list[tuple[str, str]], gold: list[int], gran: str = "passage") -> object:
        probs = verify_pairs(lex, pairs, granularity=gran).probs  # type: ignore[arg-type]
        return compute_metrics(gold, probs.argmax(axis=1).tolist())

    baseline = {
        "scifact_dev_macro_f1": lex_f1(d_pairs, d_gold).macro_f1,  # type: ignore[attr-defined]
        "scifact_dev_sentences_macro_f1": lex_f1(d_pairs, d_gold, "sentences").macro_f1,  # type: ignore[attr-defined]
        "healthver_dev_weighted_f1": lex_f1(hv_pairs, hv_gold).weighted_f1,  # type: ignore[attr-defined]
        "lingnli_dev_macro_f1": lex_f1(l_pairs, l_gold).macro_f1,  # type: ignore[attr-defined]
    }
    eligible = [k for k, v in scores.items() if all(v[m] > baseline[m] for m in baseline)]
    if not eligible:
        log.warning("no candidate beats the lexical baseline on every dev criterion")
    best = max(eligible or scores, key=lambda k: scores[k]["selection_score"])
    # Granularity of the app, decided on dev with the chosen calibration.
    scorer = cached_verifier(
        model_dir, cache, threads=args.threads, calibrated=False,
        calibration=(temperature, candidates[best]),
    )  # fmt: skip
    gran: dict[str, float] = {}
    for g in ("passage", "sentences"):
        sp = verify_pairs(scorer, d_pairs, granularity=g).probs
        hp = verify_pairs(scorer, hv_pairs, granularity=g).probs
        gran[f"scifact_dev_{g}_macro_f1"] = compute_metrics(d_gold, sp.argmax(1).tolist()).macro_f1
        gran[f"healthver_dev_{g}_macro_f1"] = compute_metrics(
            hv_gold, hp.argmax(1).tolist()
        ).macro_f1
    save_cache(args.out, cache)
    mean = {g: (gran[f"scifact_dev_{g}_macro_f1"] + gran[f"healthver_dev_{g}_macro_f1"]) / 2
            for g in ("passage", "sentences")}  # fmt: skip
    report["granularity_dev"] = gran
    report["recommended_granularity"] = max(mean, key=lambda g: mean[g])
    report["dev_scores"] = scores
    report["baseline_lexical_dev"] = baseline
    report["eligible"] = eligible
    report["chosen"] = best
    log.info("calibration: T=%.3f, chosen %s: %s; granularity %s %s",
             temperature, best, scores[best], report["recommended_granularity"], gran)  # fmt: skip
    cfg_path = model_dir / "verifier.json"
    cfg = json.loads(cfg_path.read_text("utf-8")) if cfg_path.is_file() else {}
    cfg["temperature"] = temperature
    layer = candidates[best]
    cfg["feature_layer"] = layer.to_dict() if layer is not None else None  # type: ignore[attr-defined]
    cfg_path.write_text(json.dumps(cfg, indent=2), encoding="utf-8")
    (args.out / "calibration.json").write_text(json.dumps(report, indent=2))
    if args.evaluate:
        evaluate_all(args, model_dir, cache, only=set(args.only) if args.only else None)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="the training run folder")
    ap.add_argument("--data", type=Path, default=DATA, help="shared data folder")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--calibrate",
        type=Path,
        default=None,
        metavar="MODEL_DIR",
        help="fit temperature and choose the feature layer for the exported verifier "
        "folder MODEL_DIR (uses --out's held-out claim ids)",
    )
    ap.add_argument(
        "--oof",
        type=Path,
        nargs="+",
        default=None,
        metavar="FOLD_RUN",
        help="with --calibrate: fit the feature layer on the held-out claims of these "
        "fold runs, each scored by its own exported model (FOLD_RUN/model)",
    )
    ap.add_argument(
        "--evaluate", action="store_true", help="with --calibrate: then run every evaluation"
    )
    ap.add_argument(
        "--only", nargs="+", default=None, metavar="KEY", help="with --evaluate: these keys"
    )
    ap.add_argument(
        "--card",
        type=Path,
        default=None,
        metavar="MODEL_DIR",
        help="write the model card of MODEL_DIR from --evals",
    )
    ap.add_argument(
        "--evals",
        type=Path,
        default=None,
        metavar="DIR",
        help="folder of `verifai eval verifier --json` outputs for --card (default OUT/evals)",
    )
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    if args.card is not None:
        return write_card(args, args.card, args.evals or args.out / "evals")
    if args.calibrate is not None:
        return calibrate(args, args.calibrate)
    ap.error("give --calibrate MODEL_DIR or --card MODEL_DIR")
    return 2


if __name__ == "__main__":
    sys.exit(main())
