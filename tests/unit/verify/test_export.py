"""Export parity: a tiny random DeBERTa-v2 classifier exported to ONNX gives PyTorch's logits."""

from __future__ import annotations

import json
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
