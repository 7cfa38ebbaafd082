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
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import random
import sys
import time
from pathlib import Path
from typing import cast

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pool as pl
import verifier_data as vd
from fitting import fit_feature_layer, fit_temperature

log = logging.getLogger("calibrate_verifier")
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def load_cache(out: Path) -> dict[tuple[str, str], np.ndarray]:
    """Raw logits per (premise, hypothesis) saved by earlier runs on the same checkpoint."""
    import pickle

    path = out / "logits_cache.pkl"
    if path.is_file():
        with path.open("rb") as fh:
            return dict(pickle.load(fh))
    return {}


def save_cache(out: Path, cache: dict[tuple[str, str], np.ndarray]) -> None:
    import pickle

    with (out / "logits_cache.pkl").open("wb") as fh:
        pickle.dump(cache, fh)


def cached_verifier(  # type: ignore[no-untyped-def]
    model_dir: Path,
    cache: dict[tuple[str, str], np.ndarray],
    *,
    threads: int = 2,
    calibrated: bool = True,
    calibration: tuple[float, object | None] | None = None,
):
    """An OnnxVerifier whose raw logits are memoised per pair (calibration and every evaluation
    of one run share them; the calibrated output is a function of logits and pair).

    ``calibration``: ``(temperature, feature layer or None)`` to apply instead of those in
    ``verifier.json`` (used to score calibration candidates before one is written)."""
    from verifai_desktop.verify.nli import OnnxVerifier, softmax

    class _Cached(OnnxVerifier):
        def logits(self, pairs):  # type: ignore[no-untyped-def]
            missing = [p for p in dict.fromkeys(pairs) if p not in cache]
            if missing:
                for p, row in zip(missing, super().logits(missing), strict=True):
                    cache[p] = row
            if not pairs:
                return np.zeros((0, 3), dtype=np.float32)
            return np.stack([cache[p] for p in pairs]).astype(np.float32)

        def classify(self, pairs):  # type: ignore[no-untyped-def]
            if calibration is None:
                return super().classify(pairs)
            temperature, layer = calibration
            probs = softmax(self.logits(pairs), temperature)  # type: ignore[no-untyped-call]
            if layer is not None and len(pairs):
                probs = layer.apply(probs, pairs)  # type: ignore[attr-defined]
            return probs

    return _Cached(model_dir, threads=threads, calibrated=calibrated)


JUDGE_SLICE = 80
EVALS = (
    # (key, loader, path relative to data, granularity, limit), most important first
    ("scifact_dev", "scifact", "scifact/original", "passage", None),
    ("healthver_test", "healthver", "healthver/healthver_test.csv", "passage", None),
    ("scifact_dev_sentences", "scifact", "scifact/original", "sentences", None),
    ("healthver_test_sentences", "healthver", "healthver/healthver_test.csv", "sentences", None),
    ("scifact_dev_sentences_first100", "scifact", "scifact/original", "sentences", 100),
    ("scifact_dev_first100", "scifact", "scifact/original", "passage", 100),
    ("healthver_test_first200", "healthver", "healthver/healthver_test.csv", "passage", 200),
    ("nli_snli_test_subset", "nli", "nli/snli/snli_1.0_test_subset_deltaus.jsonl", "passage", None),
    (
        "nli_mnli_mismatched_1000",
        "nli",
        "nli/mnli/mnli_dev_mismatched_1000_textfooler.tsv",
        "passage",
        None,
    ),
    (
        "nli_fever_symmetric_test",
        "nli",
        "nli/fever_symmetric/fever_symmetric_test.jsonl",
        "passage",
        None,
    ),
    ("nli_sick_first500", "nli", "nli/sick/SICK.txt", "passage", 500),
    (
        "healthver_test_sentences_first200",
        "healthver",
        "healthver/healthver_test.csv",
        "sentences",
        200,
    ),
    (
        "nli_snli_test_1000_textfooler",
        "nli",
        "nli/snli/snli_test_1000_textfooler.tsv",
        "passage",
        None,
    ),
)


def evaluate_all(
    args: argparse.Namespace,
    model_dir: Path,
    cache: dict[tuple[str, str], np.ndarray],
    only: set[str] | None = None,
) -> None:
    """Every evaluation of the model card, the model (calibrated and raw) and the lexical
    baseline on the same pairs; JSON per run in ``args.out/evals``."""
    from verifai_desktop.evaluate import verifier as ev

    out = args.out / "evals"
    out.mkdir(parents=True, exist_ok=True)
    systems = {
        "": cached_verifier(model_dir, cache, threads=args.threads),
        "uncalibrated_": cached_verifier(model_dir, cache, threads=args.threads, calibrated=False),
        "baseline_lexical_": ev.LexicalOverlapVerifier(),
    }
    for key, kind, rel, gran, limit in EVALS:
        if only is not None and key not in only:
            continue
        path = args.data / rel
        pairs = (
            ev.load_scifact(path, "dev")
            if kind == "scifact"
            else ev.load_healthver(path)
            if kind == "healthver"
            else ev.load_nli(path)
        )
        if limit is not None:
            pairs = pairs[:limit]
        for prefix, system in systems.items():
            if prefix == "uncalibrated_" and not key.startswith(("scifact", "healthver")):
                continue
            name = getattr(system, "name", "verifai-minilm-nli")
            if prefix == "uncalibrated_":
                name += " (uncalibrated)"
            t0 = time.monotonic()
            res = ev.evaluate_pairs(system, pairs, dataset=key, system=str(name), granularity=gran)  # type: ignore[arg-type]
            (out / f"{prefix}{key}.json").write_text(json.dumps(res.as_dict(), indent=2))
            save_cache(args.out, cache)
            log.info(
                "%s%s: macro F1 %.3f weighted F1 %.3f (%.0fs)",
                prefix,
                key,
                res.metrics.macro_f1,
                res.metrics.weighted_f1,
                time.monotonic() - t0,
            )
        # the same pairs as the LLM-judge slices
        if key in ("scifact_dev", "healthver_test"):
            for prefix, system in (
                ("", systems[""]),
                ("baseline_lexical_", systems["baseline_lexical_"]),
            ):
                res = ev.evaluate_pairs(
                    system,
                    pairs[:JUDGE_SLICE],
                    dataset=f"{key}[:{JUDGE_SLICE}]",
                    system=str(getattr(system, "name", "verifai-minilm-nli")),
                    granularity=gran,  # type: ignore[arg-type]
                )
                (out / f"{prefix}slice{JUDGE_SLICE}_{key}.json").write_text(
                    json.dumps(res.as_dict(), indent=2)
                )


def held_out_pairs(
    run_dir: Path,
    claims: list[dict[str, object]],
    corpus: dict[int, tuple[str, tuple[str, ...]]],
    *,
    seed: int,
) -> list[vd.Pair]:
    """Feature-layer pairs from the train claims ``run_dir``'s model never saw.

    The mixed pairs of :func:`verifier_data.build_scifact_pairs` (rationale sentences, windows,
    hard negatives, perturbations), then the evaluation's own form, claim + whole cited
    abstract (source ``held_abstract``): the mixed pairs alone left whole abstracts mostly
    unlabelled.
    """
    held_ids = set(json.loads((run_dir / "held_out_claim_ids.json").read_text()))
    held = [c for c in claims if int(c["id"]) in held_ids]  # type: ignore[call-overload]
    pairs = vd.build_scifact_pairs(held, corpus, rng=random.Random(seed + 1))
    return pairs + [
        vd.Pair(
            " ".join(corpus[int(d)][1]),
            str(c["claim"]),
            vd.claim_doc_label(c, int(d))[0],
            "held_abstract",
        )
        for c in held
        for d in c["cited_doc_ids"]  # type: ignore[attr-defined]
    ]


def lingnli_dev(data: Path, limit: int = 2000) -> list[tuple[tuple[str, str], int]]:
    """LingNLI dev (held back from every training run): the first ``limit`` pairs in a fixed
    shuffled order, as ((premise, hypothesis), gold index)."""
    ling = [p for p in pl.load_source(data / "nli_train", "lingnli") if p.split == "dev"]
    random.Random(0).shuffle(ling)
    return [((p.premise, p.hypothesis), pl.LABELS.index(p.label)) for p in ling[:limit]]


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


def training_data(info: dict[str, object]) -> list[dict[str, str]]:
    """The datasets (with licences) behind a run, from its ``train_info.json``."""
    stages = cast("dict[str, dict[str, dict[str, dict[str, int]]]]", info.get("stages", {}))
    licences = cast("dict[str, str]", info.get("licences", {}))
    out = []
    for source, licence in sorted(licences.items()):
        n = sum(sum(st["sources"].get(source, {}).values()) for st in stages.values())
        out.append({"name": f"{source} ({n:,} pairs over the stages)", "licence": licence})
    return out


def limitations(info: dict[str, object]) -> list[str]:
    """The model card's limitations, with the run's own figures."""
    return [
        f"A 22M-parameter MiniLM cross-encoder trained on {info['pairs']:,} pairs "
        "(sources whose licence allows shipping a model"
        + ("" if info.get("licensed_only") else ", and others without a clear licence")
        + "). The production DeBERTa verifier is stronger where it can be used.",
        "Premises longer than the model's maximum length (pair) are cut; sentence-window mode "
        "avoids that.",
        "NO_EVIDENCE pairs for the FEVER-style sources were synthesised (a claim with the most "
        "similar premise of another claim), so neutral evidence on the same topic is learnt "
        "only from SNLI, SciFact and those hard negatives.",
        "Temperature and the choice of feature layer were tuned on SciFact dev, HealthVer dev "
        "and LingNLI dev, so dev figures are optimistic; SciFact test, HealthVer test and the "
        "NLI evaluation files were never used for training or choosing.",
    ]


CARD_FILES = (
    "model.onnx",
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "verifier.json",
)
"""The files of a verifier folder that the model card vouches for (by sha256)."""


def shipped_files(model_dir: Path) -> dict[str, dict[str, object]]:
    """sha256 and size of every file in :data:`CARD_FILES`, as written into the model card."""
    out: dict[str, dict[str, object]] = {}
    for name in CARD_FILES:
        data = (model_dir / name).read_bytes()
        out[name] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    return out


def write_card(args: argparse.Namespace, model_dir: Path, evals: Path) -> int:
    """Write ``model_card.json`` and ``MODEL_CARD.md`` from evaluation JSON files.

    ``evals`` holds ``<key>.json`` outputs of ``verifai eval verifier --json`` (key e.g.
    ``scifact_dev``, ``healthver_test_sentences``, ``baseline_lexical_scifact_dev``).
    """
    info = json.loads((args.out / "train_info.json").read_text())
    calib_path = args.out / "calibration.json"
    calib = json.loads(calib_path.read_text()) if calib_path.is_file() else {}
    figures: dict[str, dict[str, float]] = {}
    rows = []
    for f in sorted(evals.glob("*.json")):
        try:
            d = json.loads(f.read_text())
        except json.JSONDecodeError:
            continue
        if "per_class" not in d:
            continue
        fig = {
            "macro_f1": d["macro_f1"],
            "weighted_f1": d["weighted_f1"],
            "accuracy": d["accuracy"],
            "ece": d["ece"],
            "n": d["n"],
        }
        for lab, m in d["per_class"].items():
            fig[f"{lab.lower()}_f1"] = m["f1"]
        figures[f.stem] = fig
        rows.append((f.stem, d))
    size = (model_dir / "model.onnx").stat().st_size
    sci, hv = figures.get("scifact_dev", {}), figures.get("healthver_test", {})
    bars_met = {
        "scifact_dev_macro_f1>=0.68": sci.get("macro_f1", 0.0) >= 0.68,
        "scifact_dev_contradict_f1>=0.50": sci.get("contradict_f1", 0.0) >= 0.50,
        "healthver_test_weighted_f1>=0.45": hv.get("weighted_f1", 0.0) >= 0.45,
        "every_class_predicted": all(
            all(sum(r[k] for r in d["confusion"]) > 0 for k in range(3))
            for key, d in rows
            if key in ("scifact_dev", "healthver_test")
        ),
    }
    card = {
        "name": "verifai-minilm-nli",
        "version": "2.0",
        "base_model": info["base_model"],
        "description": (
            "Offline default NLI verifier of VerifAI Desktop: the all-MiniLM-L6-v2 encoder as a "
            "cross-encoder (premise, claim) with a 3-class head (SUPPORT, CONTRADICT, "
            "NO_EVIDENCE), every layer fine-tuned in two stages (general NLI, then claim-evidence "
            "pairs) on the NLI training pool and SciFact train, exported to ONNX int8, with "
            "temperature scaling (and a logistic feature layer when it wins on dev)."
        ),
        "training_data": training_data(info),
        "settings": {
            **info,
            "onnx": "int8 weight-only (MatMulNBits 8-bit, blocks of 32) + int8 embedding table",
            "onnx_bytes": size,
            "temperature": calib.get("temperature"),
            "feature_layer": calib.get("chosen"),
        },
        "figures": figures,
        "calibration": calib,
        "bars": {
            "scifact_dev_macro_f1": 0.68,
            "scifact_dev_contradict_f1": 0.50,
            "healthver_test_weighted_f1": 0.45,
        },
        "bars_met": bars_met,
        "production_verifier": "MilosKosRad/TextualEntailment_DeBERTa_preprocessedSciFACT",
        "limitations": limitations(info),
        "files": shipped_files(model_dir),
    }
    (model_dir / "model_card.json").write_text(json.dumps(card, indent=2, default=str))
    md = [
        "# verifai-minilm-nli",
        "",
        card["description"],
        "",
        f"Base model: {card['base_model']}. ONNX int8, {size / 1e6:.1f} MB. "
        f"Production verifier: `{card['production_verifier']}` "
        "(export with `verifai models export-verifier`).",
        "",
        "## Training data",
        "",
        *[f"- {d['name']} ({d['licence']})" for d in training_data(info)],
        "",
        "## Settings",
        "",
        "```",
        json.dumps(card["settings"], indent=2, default=str),
        "```",
        "",
        "## Evaluation",
        "",
        "| set | system | premise | n | macro F1 | weighted F1 | acc | F1 S/C/N | ECE |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for key, d in rows:
        f1s = "/".join(f"{m['f1']:.2f}" for m in d["per_class"].values())
        md.append(
            f"| {key} | {d['system']} | {d['granularity']} | {d['n']} | "
            f"{d['macro_f1']:.3f} | {d['weighted_f1']:.3f} | {d['accuracy']:.3f} | "
            f"{f1s} | {d['ece']:.3f} |"
        )
    md += [
        "",
        "Bars (verifier v2 issue): "
        + ", ".join(f"{k}: {'met' if v else 'NOT met'}" for k, v in bars_met.items()),
        "",
        f"Temperature {calib.get('temperature', 1.0):.3f} (SciFact dev): ECE "
        f"{calib.get('dev_ece_passage_before', 0):.3f} -> "
        f"{calib.get('dev_ece_passage_after', 0):.3f}; feature layer: {calib.get('chosen')}.",
        "",
        "## Limitations",
        "",
        *[f"- {x}" for x in limitations(info)],
        "",
    ]
    (model_dir / "MODEL_CARD.md").write_text("\n".join(md))
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
