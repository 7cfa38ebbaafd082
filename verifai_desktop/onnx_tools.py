"""ONNX helpers shared by the model exporters: the opset and int8 quantisation.

Used by :mod:`verifai_desktop.index.export` (embedders) and :mod:`verifai_desktop.verify.export`
(verifiers), which sit in different layers; this module sits below both (model files layer).
``onnx`` and ``onnxruntime.quantization`` are imported inside the functions: only exporting
needs them (the ``torch`` extra).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from verifai_desktop.offline import import_onnxruntime

OPSET = 17
"""ONNX opset of every export (torch.onnx)."""
ROW_INT8_OPSET = 21
"""Default-domain opset of a graph quantized by :func:`quantize_matmuls_per_row`: a
QuantizeLinear with one scale per row of its input (``block_size``) is opset 21."""
ROW_INT8_PAIR_LIMIT = 128
"""Largest ``|w[2i]| + |w[2i+1]|`` of two int8 weights next to each other along the reduced
dimension. On x86-64 without VNNI, ONNX Runtime multiplies uint8 activations by int8 weights
with ``vpmaddubsw``, which adds two products in a saturating int16; 255 x 128 = 32,640 fits, so
no sum saturates on any CPU (ONNX Runtime's quantization guide names this saturation; its
``reduce_range``, 7-bit weights, avoids it at twice the weight step)."""


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


def optimise_graph(src: Path, dst: Path) -> None:
    """ONNX Runtime's offline graph optimisation (``ORT_ENABLE_EXTENDED``) of ``src`` into
    ``dst``, for the CPU execution provider."""
    ort = import_onnxruntime()
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    opts.optimized_model_filepath = str(dst)
    opts.log_severity_level = 3
    ort.InferenceSession(str(src), opts, providers=["CPUExecutionProvider"])


def quantize_matmuls_per_row(
    src: Path, dst: Path, *, smoothing: Mapping[str, Any] | None = None
) -> int:
    """Dynamic int8 quantization of each MatMul by a constant weight, one scale per row.

    Every ``MatMul(x, W)`` whose ``W`` is a float32 (K, N) initializer becomes
    ``MatMulIntegerToFloat(QuantizeLinear(x), W_int8)``: each row of ``x`` (one token's K
    values) is quantized at run time with its own scale ``max|row| / 127`` (symmetric, uint8
    with zero point 128), ``W`` once per output column (symmetric int8, with
    :data:`ROW_INT8_PAIR_LIMIT` on neighbouring weights). The products are integer and exact, so
    a row's result depends on that row alone: a text gets the same vector alone and in any
    batch, as with float32. An activation read by several MatMuls (query, key, value) is
    quantized once.

    With ``smoothing`` (SmoothQuant, Xiao et al. 2023, arXiv:2211.10438), the channels of an
    activation are divided by ``s_k = sqrt(peak_k / max_n |W[k, n]|)`` before quantizing and the
    weights' rows multiplied by it, which moves a few channels' outliers into the weights.

    Args:
        src: an ONNX graph (opset 17, float32 MatMuls), ideally already optimised.
        dst: where to write the quantized graph (opset :data:`ROW_INT8_OPSET`).
        smoothing: per activation name, float32 (K,) peaks ``max |x_k|`` measured on
            calibration texts (:func:`matmul_activations` names them); activations missing from
            it are not smoothed.

    Returns:
        The number of MatMuls quantized.

    Raises:
        ValueError: the graph has no MatMul by a constant 2-D weight.
    """
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper, version_converter

    model = version_converter.convert_version(onnx.load(str(src)), ROW_INT8_OPSET)
    graph = model.graph
    targets = _constant_matmuls(graph)
    wanted = {n.input[1] for n in targets}
    weights = {i.name: numpy_helper.to_array(i) for i in graph.initializer if i.name in wanted}
    target_outputs = {n.output[0] for n in targets}
    if not targets:
        raise ValueError(f"{src}: no MatMul by a constant weight to quantize")
    smoothing = smoothing or {}
    scales: dict[str, Any] = {}  # activation -> smoothing factors s_k
    for x in {n.input[0] for n in targets} & set(smoothing):
        readers = [weights[n.input[1]] for n in targets if n.input[0] == x]
        w_peak = np.abs(np.concatenate(readers, axis=1)).max(axis=1)
        peak = np.asarray(smoothing[x], dtype=np.float32)
        scales[x] = np.clip(np.sqrt(peak / np.maximum(w_peak, 1e-8)), 1e-3, 1e3).astype(np.float32)
    added = [
        numpy_helper.from_array(np.array(1 / 127, np.float32), "rowq_inv127"),
        numpy_helper.from_array(np.array(1e-8, np.float32), "rowq_eps"),
        numpy_helper.from_array(np.array(128, np.uint8), "rowq_zp"),
        numpy_helper.from_array(np.array([-1], np.int64), "rowq_last"),
    ]
    quantized: dict[str, tuple[str, str]] = {}  # activation -> (uint8 rows, row scales)
    nodes = []
    for node in graph.node:
        if node.op_type != "MatMul" or node.output[0] not in target_outputs:
            nodes.append(node)
            continue
        x, w_name = node.input
        w = weights[w_name].astype(np.float32)
        if x in scales:
            w = w * scales[x][:, None]
        if x not in quantized:
            p = f"rowq{len(quantized)}_"
            src_x = x
            if x in scales:
                added.append(numpy_helper.from_array(1 / scales[x], p + "smooth"))
                nodes.append(helper.make_node("Mul", [x, p + "smooth"], [p + "x"], p + "smooth"))
                src_x = p + "x"
            nodes += [
                helper.make_node("Abs", [src_x], [p + "abs"], p + "abs"),
                helper.make_node("ReduceMax", [p + "abs", "rowq_last"], [p + "peak"], p + "peak"),
                helper.make_node("Max", [p + "peak", "rowq_eps"], [p + "peak_eps"], p + "floor"),
                helper.make_node(
                    "Mul", [p + "peak_eps", "rowq_inv127"], [p + "scale"], p + "scale"
                ),
                helper.make_node("Shape", [p + "scale"], [p + "shape"], p + "shape"),
                helper.make_node("Expand", ["rowq_zp", p + "shape"], [p + "zp"], p + "zp"),
                helper.make_node(
                    "QuantizeLinear",
                    [src_x, p + "scale", p + "zp"],
                    [p + "q"],
                    p + "quantize",
                    axis=-1,
                    block_size=int(w.shape[0]),
                ),
            ]
            quantized[x] = (p + "q", p + "scale")
        rows, row_scale = quantized[x]
        w_int8, w_scale = _int8_columns(w)
        added += [
            numpy_helper.from_array(w_int8, f"{w_name}_rowq_int8"),
            numpy_helper.from_array(w_scale, f"{w_name}_rowq_scale"),
        ]
        nodes.append(
            helper.make_node(
                "MatMulIntegerToFloat",  # no bias input: with one, row scales are misapplied
                [rows, f"{w_name}_rowq_int8", row_scale, f"{w_name}_rowq_scale", "rowq_zp"],
                [node.output[0]],
                (node.name or node.output[0]) + "_rowq",
                domain="com.microsoft",
            )
        )
    del graph.node[:]
    graph.node.extend(nodes)
    graph.initializer.extend(added)
    used = {name for node in graph.node for name in node.input}
    kept = [init for init in graph.initializer if init.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(model, str(dst))
    return len(targets)


def _int8_columns(w: Any) -> tuple[Any, Any]:
    """Symmetric int8 weights (K, N) and float32 scales (N,), one per output column, with no
    two weights neighbouring along K summing past :data:`ROW_INT8_PAIR_LIMIT` in magnitude."""
    import numpy as np

    k = w.shape[0] - w.shape[0] % 2
    peak = np.abs(w).max(axis=0) / 127
    pairs = (np.abs(w[0:k:2]) + np.abs(w[1:k:2])).max(axis=0) / (ROW_INT8_PAIR_LIMIT - 1)
    scale = np.maximum(np.maximum(peak, pairs), 1e-12).astype(np.float32)
    q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
    sums = np.abs(q[0:k:2].astype(np.int32)) + np.abs(q[1:k:2].astype(np.int32))
    assert sums.max(initial=0) <= ROW_INT8_PAIR_LIMIT, "rounding kept the pair limit"
    return q, scale


def matmul_activations(path: Path) -> list[str]:
    """Names of the inputs ``x`` of the MatMuls :func:`quantize_matmuls_per_row` would quantize
    in the graph at ``path``, in graph order (to measure their peaks for ``smoothing``)."""
    import onnx

    return list(dict.fromkeys(n.input[0] for n in _constant_matmuls(onnx.load(str(path)).graph)))


def _constant_matmuls(graph: Any) -> list[Any]:
    """The MatMul nodes of ``graph`` whose second input is a float32 2-D initializer, in graph
    order: those :func:`quantize_matmuls_per_row` quantizes."""
    from onnx import TensorProto

    constant = {
        i.name for i in graph.initializer if i.data_type == TensorProto.FLOAT and len(i.dims) == 2
    }
    return [n for n in graph.node if n.op_type == "MatMul" and n.input[1] in constant]


def quantize_embedding_tables(src: Path, dst: Path) -> None:
    """Int8 embedding tables, one scale per row (see :func:`quantize_weights_int8`)."""
    import onnx

    onnx.save(_quantize_gather_rows(onnx.load(str(src))), str(dst))


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
