"""Export parity: a tiny random DeBERTa-v2 classifier exported to ONNX gives PyTorch's logits."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.tiny_models import tiny_deberta_nli
from verifai_desktop.verify.check import LABEL_ORDER
from verifai_desktop.verify.export import export_verifier
from verifai_desktop.verify.nli import OnnxVerifier

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def tiny_deberta(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised 2-layer DeBERTa-v2 classifier (``tests/tiny_models.py``)."""
    return tiny_deberta_nli(tmp_path_factory.mktemp("tiny_deberta"))


PAIRS = [
    ("the trial showed the drug reduces risk of stroke in patients .", "the drug reduces stroke ."),
    ("mice cells .", "cancer not in mice ."),
    ("a dose", "the drug increases risk of cancer in patients ."),
]


def test_fp32_export_matches_pytorch(tiny_deberta: Path, tmp_path: Path) -> None:
    result = export_verifier(tiny_deberta, tmp_path / "onnx", int8=False)
    assert result.onnx_path.name == "model.onnx"
    assert result.labels == ("NO_EVIDENCE", "SUPPORT", "CONTRADICT")
    assert "token_type_ids" not in result.input_names  # DeBERTa-v3 style: no segment embedding
    for name in ("tokenizer.json", "config.json", "verifier.json"):
        assert (tmp_path / "onnx" / name).is_file()

    tok = transformers.AutoTokenizer.from_pretrained(str(tiny_deberta))
    model = transformers.AutoModelForSequenceClassification.from_pretrained(str(tiny_deberta))
    with torch.no_grad():
        enc = tok([p for p, _ in PAIRS], [h for _, h in PAIRS], padding=True, return_tensors="pt")
        expected = model.eval()(
            input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]
        ).logits.numpy()

    verifier = OnnxVerifier(tmp_path / "onnx", calibrated=False)
    got = verifier.logits(PAIRS)
    # Runtime columns are in domain order; the checkpoint's are NO_EVIDENCE, SUPPORT, CONTRADICT.
    order = [("NO_EVIDENCE", "SUPPORT", "CONTRADICT").index(lab.value) for lab in LABEL_ORDER]
    np.testing.assert_allclose(got, expected[:, order], atol=1e-4)
    assert verifier.provider == "CPUExecutionProvider"


def test_int8_export_writes_quantized_model(tiny_deberta: Path, tmp_path: Path) -> None:
    export_verifier(tiny_deberta, tmp_path / "q", int8=True)
    settings = json.loads((tmp_path / "q" / "verifier.json").read_text("utf-8"))
    assert settings["onnx_file"] == "model.onnx" and settings["int8"] is True
    assert (tmp_path / "q" / "model_fp32.onnx").is_file()
    probs = OnnxVerifier(tmp_path / "q").classify(PAIRS)
    assert probs.shape == (3, 3)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)


def test_rows_export_multiplies_in_int8_and_keeps_a_pair_independent_of_its_batch(
    tiny_deberta: Path, tmp_path: Path
) -> None:
    """``int8_scheme="rows"``: every MatMul by a weight becomes MatMulIntegerToFloat, the
    logits stay near float32's, and a pair's probabilities do not depend on its batch (each
    token's activations have their own scale)."""
    import onnx

    result = export_verifier(tiny_deberta, tmp_path / "r", int8=True, int8_scheme="rows")
    assert result.int8_scheme == "rows"
    settings = json.loads((tmp_path / "r" / "verifier.json").read_text("utf-8"))
    assert settings["int8_scheme"] == "rows"
    assert sorted(p.name for p in (tmp_path / "r").glob("*.onnx")) == [
        "model.onnx",
        "model_fp32.onnx",
    ]
    graph = onnx.load(str(result.onnx_path)).graph
    constants = {i.name for i in graph.initializer if len(i.dims) == 2}
    ops = [n.op_type for n in graph.node]
    assert ops.count("MatMulIntegerToFloat") == 2 * 6  # per layer: Q, K, V, out, FFN x2
    assert not [n for n in graph.node if n.op_type == "MatMul" and n.input[1] in constants]

    shutil.copytree(tmp_path / "r", tmp_path / "f")  # the same folder reading the fp32 graph
    (tmp_path / "f" / "verifier.json").write_text(
        json.dumps({**settings, "onnx_file": "model_fp32.onnx"}), encoding="utf-8"
    )
    rows = OnnxVerifier(tmp_path / "r", calibrated=False)
    fp32 = OnnxVerifier(tmp_path / "f", calibrated=False)
    np.testing.assert_allclose(rows.logits(PAIRS), fp32.logits(PAIRS), atol=0.05)
    alone = np.concatenate([rows.classify([pair]) for pair in PAIRS])
    np.testing.assert_allclose(rows.classify(PAIRS), alone, atol=1e-6)
    with pytest.raises(ValueError, match="int8_scheme"):
        export_verifier(tiny_deberta, tmp_path / "x", int8=True, int8_scheme="tables")
