"""Rebuild a trainable Hugging Face folder from an int8 ONNX verifier export.

    .venv/bin/python models/verifier_from_onnx.py verifai_desktop/bundled/verifier OUT/hf
    .venv/bin/python models/train_verifier.py --out OUT --licensed-only \
        --paraphrase models/data/paraphrase_train.jsonl --init OUT/hf

The shipped verifier is kept only as ONNX (``verifai models export-verifier --int8``), in
either int8 scheme of :mod:`verifai_desktop.verify.export`:

* ``blocks``: MatMul weights as ``MatMulNBits`` (8 bits, symmetric, zero point 128, one float
  scale per block of 32 along the reduced dimension) and embedding tables as int8 with one
  scale and zero point per tensor (``DequantizeLinear``);
* ``rows`` (shipped since issue 40): MatMul weights as the int8 (K, N) input of
  ``MatMulIntegerToFloat`` with one scale per column (divided back by a SmoothQuant factor when
  the graph has one), embedding tables as int8 rows with one scale per row.

Every such weight is dequantized, every float initializer (biases, LayerNorm) copied, into a
``BertForSequenceClassification`` of the folder's ``config.json``; node and initializer names
carry the PyTorch module path (``inner.`` is the export's wrapper). A third training stage can
then start from the shipped model without training stages 1-2 again (about 130 minutes on this
CPU). The rebuilt model differs from the one exported by int8 rounding only: on real pairs its
probabilities were within about 0.004 of the ``blocks`` export's on average, and are within
about 0.01 of the ``rows`` export's, which also rounds each token's activations.

Needs the ``torch`` extra (PyTorch, transformers, onnx).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

WRAPPER = "inner."
"""Prefix of the module names in an export of :func:`verifai_desktop.verify.export`."""
COPIED = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")


def dequantized_weights(model: Any) -> dict[str, NDArray[np.float32]]:
    """The PyTorch state-dict entries held by an ONNX verifier graph, as float32.

    Args:
        model: an ``onnx.ModelProto`` written by ``verifai models export-verifier --int8``
            (either scheme).

    Returns:
        State-dict key (``bert.encoder.layer.0.attention.self.query.weight``) -> array;
        MatMul weights shaped (out_features, in_features) as ``nn.Linear`` keeps them.

    Raises:
        ValueError: a MatMulNBits node with other than 8 bits or with zero points, or a name
            outside the export's wrapper.
    """
    import onnx
    from onnx import numpy_helper

    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    out: dict[str, NDArray[np.float32]] = {}
    for node in model.graph.node:
        if node.op_type == "MatMulIntegerToFloat":
            # inputs: rows, W int8 (K, N), row scales, column scales (N,), zero point
            weight = inits[node.input[1]].astype(np.float32) * inits[node.input[3]]
            smooth = inits.get(node.input[0].removesuffix("q") + "smooth")  # rowqN_q -> _smooth
            if smooth is not None:  # W was multiplied by s_k, the graph divides x by it
                weight = weight * smooth.astype(np.float32)[:, None]
            out[_module(node.name.removesuffix("_rowq")) + ".weight"] = np.ascontiguousarray(
                weight.T
            )
            continue
        if node.op_type != "MatMulNBits":
            continue
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        if attrs.get("bits") != 8 or len(node.input) != 3:
            raise ValueError(f"{node.name}: only 8-bit blocks without zero points are read")
        q = inits[node.input[1]].astype(np.float32)  # (N, blocks, block_size), uint8
        scales = inits[node.input[2]].astype(np.float32).reshape(q.shape[0], q.shape[1])
        weight = ((q - 128.0) * scales[:, :, None]).reshape(q.shape[0], -1)[:, : attrs["K"]]
        out[_module(node.name) + ".weight"] = np.ascontiguousarray(weight)
    for name, arr in inits.items():
        if not name.startswith(WRAPPER):
            continue
        key = name[len(WRAPPER) :]
        if key.endswith(".weight_quantized"):
            base = key[: -len("_quantized")]
            scale = inits[f"{WRAPPER}{base}_scale"].astype(np.float32)
            zero = inits[f"{WRAPPER}{base}_zero_point"].astype(np.float32)
            out[base] = (arr.astype(np.float32) - zero) * scale
        elif key.endswith("_int8") and f"{name[:-5]}_scale" in inits:  # a table, row scales
            out[key[:-5]] = arr.astype(np.float32) * inits[f"{name[:-5]}_scale"]
        elif not key.endswith(("_scale", "_zero_point")):
            out[key] = arr.astype(np.float32)
    return out


def _module(node_name: str) -> str:
    """The PyTorch module path of a MatMul node (``/inner/bert/.../query/MatMul`` ->
    ``bert....query``).

    Raises:
        ValueError: the node is outside the export's wrapper.
    """
    module = node_name.strip("/").rsplit("/", 1)[0].replace("/", ".")
    if not module.startswith(WRAPPER):
        raise ValueError(f"{node_name}: not a module of the export's wrapper")
    return module[len(WRAPPER) :]


def rebuild(export_dir: Path, out_dir: Path) -> Path:
    """Write a Hugging Face model folder (weights, config, tokenizer) rebuilt from
    ``export_dir``'s ``model.onnx`` and ``config.json``.

    Raises:
        ValueError: the graph lacks a weight of the model, or a shape differs.
        FileNotFoundError: ``model.onnx`` or ``config.json`` is missing.
    """
    import onnx
    import torch
    from transformers import AutoConfig, AutoModelForSequenceClassification

    config = AutoConfig.from_pretrained(str(export_dir))
    model = AutoModelForSequenceClassification.from_config(config)
    wanted = model.state_dict()
    found = dequantized_weights(onnx.load(str(export_dir / "model.onnx")))
    state = {}
    for key, tensor in wanted.items():
        if key not in found:
            if key.endswith("position_ids"):  # a buffer, not a weight
                state[key] = tensor
                continue
            raise ValueError(f"{export_dir}: the graph holds no {key}")
        if tuple(found[key].shape) != tuple(tensor.shape):
            raise ValueError(f"{key}: shape {found[key].shape} in the graph, {tensor.shape} wanted")
        state[key] = torch.from_numpy(found[key].copy())
    model.load_state_dict(state, strict=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out_dir))
    for name in COPIED:
        if (export_dir / name).is_file():
            shutil.copyfile(export_dir / name, out_dir / name)
    return out_dir


def main(argv: list[str] | None = None) -> int:
    """Command line; returns the exit code."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("export", type=Path, help="exported verifier folder (model.onnx, config)")
    ap.add_argument("out", type=Path, help="Hugging Face folder to write")
    args = ap.parse_args(argv)
    print(f"wrote {rebuild(args.export, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
