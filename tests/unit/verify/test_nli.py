"""The shipped ONNX verifier: label map, batching, truncation, lookup, model card.

Premise granularity and the deciding window are tested in test_check.py (one verification path).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from verifai_desktop.domain import NliLabel
from verifai_desktop.errors import ModelLoadError, ModelNotFound
from verifai_desktop.verify.check import LABEL_ORDER
from verifai_desktop.verify.nli import (
    BUNDLED_NAME,
    OnnxVerifier,
    bundled_dir,
    get_verifier,
    load_model_card,
    parse_label,
)

PAIRS = [
    (
        "Aspirin lowered the risk of stroke by 17 percent in women over ten years.",
        "Aspirin reduces stroke risk in women.",
    ),
    (
        "Mice lacking the receptor gained weight on a high-fat diet.",
        "The receptor prevents obesity.",
    ),
    ("The trial was stopped early.", "Vitamin D supplementation does not prevent fractures."),
    (
        "Smoking increased the incidence of lung cancer tenfold in the cohort.",
        "Smoking decreases lung cancer incidence.",
    ),
]


@pytest.fixture(scope="module")
def verifier() -> OnnxVerifier:
    v = OnnxVerifier()
    v.load()
    return v


def _copy_small_files(dst: Path) -> Path:
    dst.mkdir()
    for f in bundled_dir().iterdir():
        if f.is_file() and f.suffix != ".onnx":
            shutil.copy2(f, dst / f.name)
    return dst


def test_parse_label_accepts_checkpoint_spellings() -> None:
    assert parse_label("entailment") is NliLabel.SUPPORT
    assert parse_label("NO_EVIDENCE") is NliLabel.NO_EVIDENCE
    assert parse_label("Contradiction") is NliLabel.CONTRADICT
    with pytest.raises(ValueError):
        parse_label("maybe")


def test_permuted_label_order_gives_permuted_back_probabilities(
    verifier: OnnxVerifier, tmp_path: Path
) -> None:
    """A checkpoint whose logits come in another order, declared in config.json, gives the
    same domain-order probabilities; a config that only renames the columns permutes them."""
    cfg_name = json.loads((bundled_dir() / "verifier.json").read_text("utf-8"))["onnx_file"]
    perm = [2, 0, 1]  # new logit k = old logit perm[k]
    model = onnx.load(str(bundled_dir() / cfg_name))
    old_out = model.graph.output[0].name
    for node in model.graph.node:
        node.output[:] = [f"{old_out}_orig" if o == old_out else o for o in node.output]
    model.graph.initializer.append(numpy_helper.from_array(np.array(perm, np.int64), "perm_idx"))
    model.graph.node.append(
        helper.make_node("Gather", [f"{old_out}_orig", "perm_idx"], [old_out], axis=1)
    )
    permuted = _copy_small_files(tmp_path / "permuted")
    onnx.save(model, str(permuted / cfg_name))
    config = json.loads((bundled_dir() / "config.json").read_text("utf-8"))
    old = {int(k): v for k, v in config["id2label"].items()}
    config["id2label"] = {str(k): old[perm[k]] for k in range(3)}
    config["label2id"] = {v: k for k, v in config["id2label"].items()}
    (permuted / "config.json").write_text(json.dumps(config), encoding="utf-8")

    np.testing.assert_allclose(
        OnnxVerifier(permuted).classify(PAIRS), verifier.classify(PAIRS), atol=1e-6
    )

    # Same weights, only the label names rotated: the columns must move accordingly.
    renamed = _copy_small_files(tmp_path / "renamed")
    (renamed / cfg_name).symlink_to(bundled_dir() / cfg_name)
    config["id2label"] = {str(k): old[perm[k]] for k in range(3)}
    (renamed / "config.json").write_text(json.dumps(config), encoding="utf-8")
    base = OnnxVerifier(calibrated=False).logits(PAIRS)
    moved = OnnxVerifier(renamed, calibrated=False).logits(PAIRS)
    for j, lab in enumerate(LABEL_ORDER):
        # Renamed folder: label ``lab`` is read from raw column k with old[perm[k]] == lab;
        # that raw column carries the original label old[k].
        k = next(k for k in range(3) if parse_label(old[perm[k]]) is lab)
        np.testing.assert_allclose(
            moved[:, j], base[:, LABEL_ORDER.index(parse_label(old[k]))], atol=1e-6
        )
    assert not np.allclose(moved, base)


def test_one_batch_equals_one_by_one(verifier: OnnxVerifier) -> None:
    together = verifier.classify(PAIRS)
    alone = np.stack([verifier.classify([p])[0] for p in PAIRS])
    assert together.shape == (len(PAIRS), 3) and together.dtype == np.float32
    np.testing.assert_allclose(together, alone, atol=1e-5)
    np.testing.assert_allclose(together.sum(axis=1), 1.0, atol=1e-5)


def test_long_premise_is_cut_and_claim_kept_whole(verifier: OnnxVerifier) -> None:
    claim = "Metformin use is associated with a lower incidence of colorectal cancer in adults."
    premise = " ".join(["Patients were followed for a median of seven years."] * 200)
    ((ids, type_ids),) = verifier.encode([(premise, claim)])
    assert len(ids) == verifier.max_length
    tok = verifier._tokenizer
    claim_ids = tok.encode(claim, add_special_tokens=False).ids
    sep = tok.token_to_id("[SEP]")
    assert ids[-1] == sep and ids[-1 - len(claim_ids) - 1] == sep
    assert ids[-1 - len(claim_ids) : -1] == claim_ids
    assert type_ids[-1 - len(claim_ids) : -1] == [1] * len(claim_ids)
    probs = verifier.classify([(premise, claim)])
    assert np.isfinite(probs).all()


def test_class_offsets_shift_the_priors_as_documented(tmp_path: Path) -> None:
    """``class_offsets`` in verifier.json multiply each class's calibrated probability by
    exp(b) and renormalise; an explicit override replaces the file's; a malformed entry is a
    clear load error, not a wrong colour."""
    cfg_name = json.loads((bundled_dir() / "verifier.json").read_text("utf-8"))["onnx_file"]
    folder = _copy_small_files(tmp_path / "shifted")
    (folder / cfg_name).symlink_to(bundled_dir() / cfg_name)
    config = json.loads((folder / "verifier.json").read_text("utf-8"))
    config["class_offsets"] = {"SUPPORT": 0.0, "CONTRADICT": 0.0, "NO_EVIDENCE": 0.0}
    config.pop("class_offsets_long", None)
    (folder / "verifier.json").write_text(json.dumps(config), encoding="utf-8")
    plain = OnnxVerifier(folder).classify(PAIRS).astype(np.float64)

    config["class_offsets"] = {"SUPPORT": 1.5, "CONTRADICT": -0.5}  # NO_EVIDENCE: 0
    (folder / "verifier.json").write_text(json.dumps(config), encoding="utf-8")
    shifted = OnnxVerifier(folder)
    np.testing.assert_allclose(shifted.class_offsets, [1.5, -0.5, 0.0])
    expected = plain * np.exp([1.5, -0.5, 0.0])
    expected /= expected.sum(axis=1, keepdims=True)
    got = shifted.classify(PAIRS)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert (got[:, 0] > plain[:, 0]).all() and (got[:, 1] < plain[:, 1]).all()

    # A premise over 100 words is a whole passage: it gets class_offsets_long, here none.
    long_pairs = [(" ".join([premise] * 30), claim) for premise, claim in PAIRS]
    np.testing.assert_allclose(
        shifted.classify(long_pairs), OnnxVerifier(folder, class_offsets=(0, 0, 0)).classify(
            long_pairs), atol=1e-6)  # fmt: skip
    config["class_offsets_long"] = {"CONTRADICT": 2.0}
    (folder / "verifier.json").write_text(json.dumps(config), encoding="utf-8")
    routed = OnnxVerifier(folder)
    np.testing.assert_allclose(routed.class_offsets_long, [0.0, 2.0, 0.0])
    np.testing.assert_allclose(routed.classify(PAIRS), got, atol=1e-6)
    assert (routed.classify(long_pairs)[:, 1] > shifted.classify(long_pairs)[:, 1]).all()

    override = OnnxVerifier(folder, class_offsets=(0.0, 0.0, 0.0))
    np.testing.assert_allclose(override.classify(PAIRS), plain, atol=1e-6)
    uncalibrated = OnnxVerifier(folder, calibrated=False)
    assert not uncalibrated.class_offsets.any()

    config["class_offsets"] = {"SUPPORT": "a lot"}
    (folder / "verifier.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ModelLoadError, match="class_offsets"):
        OnnxVerifier(folder).load()
    with pytest.raises(ValueError, match="3 finite"):
        OnnxVerifier(folder, class_offsets=(1.0, float("nan"), 0.0))


def test_model_card_has_figures_and_production_pointer() -> None:
    card = load_model_card()
    assert card.name == "verifai-minilm-nli"
    assert card.production_verifier == "MilosKosRad/TextualEntailment_DeBERTa_preprocessedSciFACT"
    assert {"scifact_dev", "healthver_test"} <= set(card.figures)
    for figures in card.figures.values():
        assert all(0.0 <= v <= 1.0 for k, v in figures.items() if k.endswith("f1"))
    assert "SciFact dev macro F1" in card.summary()


def test_model_card_matches_the_shipped_files() -> None:
    """The card vouches for the exact files shipped (sha256) and the calibration they run."""
    card = json.loads((bundled_dir() / "model_card.json").read_text("utf-8"))
    config = json.loads((bundled_dir() / "verifier.json").read_text("utf-8"))
    assert set(card["files"]) >= {config["onnx_file"], "verifier.json", "tokenizer.json"}
    for name, meta in card["files"].items():
        data = (bundled_dir() / name).read_bytes()
        assert (hashlib.sha256(data).hexdigest(), len(data)) == (meta["sha256"], meta["bytes"])
    assert card["settings"]["temperature"] == pytest.approx(config["temperature"])
    assert card["settings"]["onnx_bytes"] == (bundled_dir() / config["onnx_file"]).stat().st_size
    assert card["settings"]["onnx_bytes"] <= 30 * 1024 * 1024


def test_get_verifier_by_name_folder_or_models_dir(tmp_path: Path) -> None:
    assert get_verifier(BUNDLED_NAME).model_dir == bundled_dir()
    assert get_verifier(str(bundled_dir())).model_dir == bundled_dir()
    with pytest.raises(ModelNotFound, match="no-such-verifier"):
        get_verifier("no-such-verifier")
    with pytest.raises(ModelNotFound):
        OnnxVerifier(tmp_path / "missing")
