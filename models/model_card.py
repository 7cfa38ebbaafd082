"""The verifier's model card (``calibrate_verifier.py --card``): ``model_card.json`` and
``MODEL_CARD.md`` from the run's ``train_info.json``, ``calibration.json`` and evaluation files
(``verifier_evals.py``), with the sha256 of every shipped file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import cast

ONNX_SCHEMES = {
    "rows": "int8 products (MatMulIntegerToFloat: activations one scale per token at run time, "
    "weights one scale per column) + int8 embedding tables per row",
    "blocks": "int8 weight-only (MatMulNBits 8-bit, blocks of 32) + int8 embedding table",
}
"""``settings.onnx`` of the card per ``int8_scheme`` of ``verifier.json``."""


def training_data(info: dict[str, object]) -> list[dict[str, str]]:
    """The datasets (with licences) behind a run, from its ``train_info.json``."""
    stages = cast("dict[str, dict[str, dict[str, dict[str, int]]]]", info.get("stages", {}))
    licences = cast("dict[str, str]", info.get("licences", {}))
    out = []
    for source, licence in sorted(licences.items()):
        n = sum(sum(st["sources"].get(source, {}).values()) for st in stages.values())
        out.append({"name": f"{source} ({n:,} pairs over the stages)", "licence": licence})
    return out


STAGE_TEXT = {
    "general_nli": "general NLI",
    "claim_evidence": "claim-evidence pairs",
    "perturbation": "perturbed sentences of licensed abstracts",
}


def stages_text(info: dict[str, object]) -> str:
    """The run's stages in words: "two stages (general NLI, then claim-evidence pairs)"."""
    names = [STAGE_TEXT.get(n, n) for n in cast("dict[str, object]", info.get("stages", {}))]
    count = {1: "one stage", 2: "two stages", 3: "three stages"}.get(len(names))
    return f"{count or f'{len(names)} stages'} ({', then '.join(names)})"


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
        "Temperature, the choice of feature layer and the class offsets were tuned on SciFact "
        "dev, HealthVer dev and LingNLI dev, so dev figures are optimistic; SciFact test, "
        "HealthVer test and the NLI evaluation files were never used for training or choosing.",
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
            f"NO_EVIDENCE), every layer fine-tuned in {stages_text(info)} on the NLI training "
            "pool and SciFact train, exported to ONNX int8, with temperature scaling (and a "
            "logistic feature layer when it wins on dev)."
        ),
        "training_data": training_data(info),
        "settings": {
            **info,
            "onnx": ONNX_SCHEMES["blocks"],
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
