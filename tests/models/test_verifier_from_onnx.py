"""A trainable model rebuilt from the shipped int8 ONNX verifier (``models/verifier_from_onnx.py``)
gives the shipped model's probabilities on real pairs, and a graph missing a weight is refused."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
import verifier_from_onnx as vfo

from verifai_desktop.offline import import_onnxruntime

BUNDLED = Path(vfo.__file__).resolve().parents[1] / "verifai_desktop" / "bundled" / "verifier"
DEV = Path(vfo.__file__).resolve().parent / "data" / "paraphrase_dev.jsonl"


def test_the_rebuilt_model_gives_the_shipped_probabilities(tmp_path: Path) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    hf = vfo.rebuild(BUNDLED, tmp_path / "hf")
    tok = AutoTokenizer.from_pretrained(str(hf))
    model = AutoModelForSequenceClassification.from_pretrained(str(hf)).eval()
    rows = [json.loads(line) for line in DEV.open(encoding="utf-8")][:48]
    enc = tok([r["premise"][:600] for r in rows], [r["hypothesis"] for r in rows],
              truncation=True, max_length=192, padding=True, return_tensors="pt")  # fmt: skip
    with torch.no_grad():
        rebuilt = torch.softmax(model(**enc).logits, -1).numpy()
    ort = import_onnxruntime()
    session = ort.InferenceSession(str(BUNDLED / "model.onnx"), providers=["CPUExecutionProvider"])
    feeds = {i.name: enc[i.name].numpy() for i in session.get_inputs()}
    logits = session.run(None, feeds)[0]
    shipped = np.exp(logits - logits.max(1, keepdims=True))
    shipped /= shipped.sum(1, keepdims=True)
    diff = np.abs(rebuilt - shipped)
    assert diff.mean() < 0.01 and diff.max() < 0.06, (diff.mean(), diff.max())
    # The shipped graph multiplies in int8, each token's activations rounded on their own scale
    # (issue 40): 45 of these 48 pairs keep their argmax (47 with float32 activations, before).
    assert (rebuilt.argmax(1) == shipped.argmax(1)).mean() >= 0.9
    # a random model would not: the weights did come from the graph
    assert len({int(a) for a in shipped.argmax(1)}) > 1


def test_a_graph_without_a_weight_is_refused(tmp_path: Path) -> None:
    model = onnx.load(str(BUNDLED / "model.onnx"))
    gone = next(i for i in model.graph.initializer if i.name.endswith("pooler.dense.bias"))
    model.graph.initializer.remove(gone)
    export = tmp_path / "export"
    export.mkdir()
    onnx.save(model, str(export / "model.onnx"))
    (export / "config.json").write_bytes((BUNDLED / "config.json").read_bytes())
    with pytest.raises(ValueError, match=r"pooler\.dense\.bias"):
        vfo.rebuild(export, tmp_path / "hf")
