"""ONNX helpers shared by the model exporters: the opset and weight-only int8 quantisation.

Used by :mod:`verifai_desktop.index.export` (embedders) and :mod:`verifai_desktop.verify.export`
(verifiers), which sit in different layers; this module sits below both (model files layer).
``onnx`` and ``onnxruntime.quantization`` are imported inside the functions: only exporting
needs them (the ``torch`` extra).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Literal

from verifai_desktop.offline import import_onnxruntime

OPSET = 17
"""ONNX opset of every export (torch.onnx)."""


def quantize_weights_int8(
    src: Path,
    dst: Path,
    *,
    block_size: int = 32,
    gather: Literal["tensor", "row"] = "tensor",
    accuracy_level: int = 4,
) -> None:
    """Weight-only int8 quantization of an ONNX transformer (activations stay float).

    MatMul weights become ``MatMulNBits`` 8-bit blocks of ``block_size`` (symmetric). Embedding
    tables (Gather) become int8 too, either with one scale per tensor (``gather="tensor"``:
    ONNX Runtime ``quantize_dynamic`` restricted to Gather, which quantizes no activation) or
    with one scale per row (``gather="row"``: each gathered row is cast back to float and
    scaled, 4 bytes more per vocabulary entry; all-MiniLM-L6-v2's per-tensor table alone cost
    up to 8e-4 of cosine on real chunks, per-row far less).

    Args:
        src: the fp32 ONNX model.
        dst: where to write the quantized model.
        block_size: MatMulNBits block length along the reduced dimension.
        gather: ``"tensor"`` or ``"row"`` scales for the embedding tables.
        accuracy_level: MatMulNBits ``accuracy_level``: 4 computes in int8 per row block
            (faster where ONNX Runtime has the kernels), 0 dequantizes the weights and computes
            in float32 (closer to fp32). Both compute every row of a batch independently of
            the others.
    """
    import tempfile

    import onnx

    import_onnxruntime()  # telemetry off before the quantizers' inference sessions
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    # One INFO line per graph node otherwise.
    logging.getLogger("onnxruntime.quantization.matmul_nbits_quantizer").setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory(dir=dst.parent) as tmp:
        if gather == "row":
            model = _quantize_gather_rows(onnx.load(str(src)))
        else:
            gather_q = Path(tmp) / "gather.onnx"
            quantize_dynamic(
                str(src),
                str(gather_q),
                weight_type=QuantType.QInt8,
                op_types_to_quantize=["Gather"],
            )
            model = onnx.load(str(gather_q))
        quantizer = MatMulNBitsQuantizer(
            model,
            bits=8,
            block_size=block_size,
            is_symmetric=True,
            accuracy_level=accuracy_level,
        )
        quantizer.process()
        quantizer.model.save_model_to_file(str(dst), False)


def _quantize_gather_rows(model: Any) -> Any:
    """Replace each Gather from a float32 (rows, width) initializer by int8 rows times a scale.

    ``Gather(table, ids)`` becomes ``Cast(Gather(table_int8, ids)) * Gather(scale, ids)`` with
    ``scale = max|row| / 127`` per row (symmetric; an all-zero row keeps scale 1).
    """
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    initializers = {init.name: init for init in graph.initializer}
    quantized: set[str] = set()
    nodes = []
    for node in graph.node:
        table = node.input[0] if node.op_type == "Gather" and node.input else ""
        axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
        weights = numpy_helper.to_array(initializers[table]) if table in initializers else None
        if (
            weights is None
            or axis != 0
            or weights.ndim != 2
            or weights.dtype != np.float32
            or weights.size < 1024  # not worth it (e.g. a 2-row token-type table)
        ):
            nodes.append(node)
            continue
        if table not in quantized:
            peak = np.abs(weights).max(axis=1, keepdims=True)
            scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
            rows = np.clip(np.rint(weights / scale), -127, 127).astype(np.int8)
            graph.initializer.append(numpy_helper.from_array(rows, f"{table}_int8"))
            graph.initializer.append(numpy_helper.from_array(scale, f"{table}_scale"))
            quantized.add(table)
        out, ids = node.output[0], node.input[1]
        base = node.name or out
        nodes += [
            helper.make_node("Gather", [f"{table}_int8", ids], [f"{out}_int8"], f"{base}_int8"),
            helper.make_node("Gather", [f"{table}_scale", ids], [f"{out}_scale"], f"{base}_scale"),
            helper.make_node(
                "Cast", [f"{out}_int8"], [f"{out}_float"], f"{base}_cast", to=TensorProto.FLOAT
            ),
            helper.make_node("Mul", [f"{out}_float", f"{out}_scale"], [out], f"{base}_mul"),
        ]
    del graph.node[:]
    graph.node.extend(nodes)
    used = {name for node in graph.node for name in node.input}
    kept = [init for init in graph.initializer if init.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    return model
