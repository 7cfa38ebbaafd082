"""Per-row int8 MatMuls (issue 40 item 7): the arithmetic, row independence, the pair limit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from verifai_desktop.offline import import_onnxruntime
from verifai_desktop.onnx_tools import (
    ROW_INT8_PAIR_LIMIT,
    _int8_columns,
    matmul_activations,
    quantize_matmuls_per_row,
)

onnx = pytest.importorskip("onnx")
K, N, M = 64, 48, 32


def _two_layer_graph(path: Path, w1: NDArray[np.float32], w2: NDArray[np.float32]) -> None:
    """x (batch, tokens, K) -> MatMul w1 -> Relu -> MatMul w2 (and w1 again, read twice)."""
    from onnx import TensorProto, helper, numpy_helper

    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"]),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("MatMul", ["r", "w2"], ["y"]),
        helper.make_node("MatMul", ["x", "w1b"], ["z"]),  # a second reader of x
        helper.make_node("Add", ["h", "z"], ["hz"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "t", K])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, ["b", "t", N]),
            helper.make_tensor_value_info("hz", TensorProto.FLOAT, ["b", "t", M]),
        ],
        [
            numpy_helper.from_array(w1, "w1"),
            numpy_helper.from_array(w2, "w2"),
            numpy_helper.from_array(w1[:, ::-1].copy(), "w1b"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, str(path))


def _run(path: Path, x: NDArray[np.float32]) -> list[NDArray[np.float32]]:
    ort = import_onnxruntime()
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})


def _row_int8_matmul(x: NDArray[np.float32], w: NDArray[np.float32]) -> NDArray[np.float32]:
    """The documented arithmetic in numpy: rows symmetric uint8 (zero point 128), columns int8."""
    scale = np.maximum(np.abs(x).max(axis=-1, keepdims=True), 1e-8) / 127
    rows = np.clip(np.rint(x / scale), -127, 127).astype(np.int64)
    w_int8, w_scale = _int8_columns(w)
    products = (rows @ w_int8.astype(np.int64)).astype(np.float32)
    return products * scale.astype(np.float32) * w_scale


@pytest.fixture
def weights() -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    rng = np.random.default_rng(3)
    return (
        rng.standard_normal((K, M)).astype(np.float32),
        rng.standard_normal((M, N)).astype(np.float32),
    )


def test_quantized_graph_follows_the_row_arithmetic_and_stays_close_to_float(
    tmp_path: Path, weights: tuple[NDArray[np.float32], NDArray[np.float32]]
) -> None:
    w1, w2 = weights
    src, dst = tmp_path / "float.onnx", tmp_path / "rows.onnx"
    _two_layer_graph(src, w1, w2)
    assert quantize_matmuls_per_row(src, dst) == 3
    ops = [node.op_type for node in onnx.load(str(dst)).graph.node]
    assert ops.count("MatMulIntegerToFloat") == 3 and "MatMul" not in ops
    assert ops.count("QuantizeLinear") == 2  # x quantized once for its two readers
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 5, K)).astype(np.float32)
    x[0, 2, 7] = 40.0  # one outlier: only its own row's scale grows
    y, hz = _run(dst, x)
    h = _row_int8_matmul(x, w1)
    expected_y = _row_int8_matmul(np.maximum(h, 0), w2)
    np.testing.assert_allclose(y, expected_y, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(
        hz, h + _row_int8_matmul(x, w1[:, ::-1].copy()), rtol=1e-4, atol=1e-4
    )
    y_float, _ = _run(src, x)
    cosine = np.sum(y * y_float, -1) / np.linalg.norm(y, axis=-1) / np.linalg.norm(y_float, axis=-1)
    assert cosine.min() > 0.995, cosine.min()


def test_a_row_gets_the_same_result_alone_and_beside_any_rows(
    tmp_path: Path, weights: tuple[NDArray[np.float32], NDArray[np.float32]]
) -> None:
    src, dst = tmp_path / "float.onnx", tmp_path / "rows.onnx"
    _two_layer_graph(src, *weights)
    quantize_matmuls_per_row(src, dst)
    rng = np.random.default_rng(5)
    batch = rng.standard_normal((4, 6, K)).astype(np.float32)
    batch[1] *= 30  # a loud neighbour
    together = _run(dst, batch)[0]
    for i in range(len(batch)):
        assert np.array_equal(_run(dst, batch[i : i + 1])[0][0], together[i])


def test_no_two_neighbouring_weights_pass_the_pair_limit() -> None:
    rng = np.random.default_rng(6)
    w = rng.standard_normal((65, 16)).astype(np.float32)  # odd K: the last weight has no pair
    w[10, :] = w[11, :] = 5.0  # two large neighbours in every column
    q, scale = _int8_columns(w)
    assert q.dtype == np.int8 and scale.dtype == np.float32 and scale.shape == (16,)
    pairs = np.abs(q[0:64:2].astype(int)) + np.abs(q[1:64:2].astype(int))
    assert pairs.max() <= ROW_INT8_PAIR_LIMIT
    assert 255 * pairs.max() <= 32767  # vpmaddubsw's int16 sum cannot saturate
    np.testing.assert_allclose(q * scale, w, atol=float(scale.max()) / 2 + 1e-7)


def test_smoothing_moves_an_outlier_channel_into_the_weights(
    tmp_path: Path, weights: tuple[NDArray[np.float32], NDArray[np.float32]]
) -> None:
    w1, w2 = weights
    src = tmp_path / "float.onnx"
    _two_layer_graph(src, w1, w2)
    assert matmul_activations(src) == ["x", "r"]
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 8, K)).astype(np.float32)
    x[..., 3] *= 50  # a channel with outliers in every token, as LayerNorm outputs have
    peaks = {"x": np.abs(x).reshape(-1, K).max(axis=0)}
    plain, smooth = tmp_path / "plain.onnx", tmp_path / "smooth.onnx"
    quantize_matmuls_per_row(src, plain)
    quantize_matmuls_per_row(src, smooth, smoothing=peaks)
    y_float = _run(src, x)[1]
    err_plain = np.abs(_run(plain, x)[1] - y_float).mean()
    err_smooth = np.abs(_run(smooth, x)[1] - y_float).mean()
    assert err_smooth < err_plain / 2, (err_smooth, err_plain)


def test_a_graph_without_constant_matmuls_is_refused(tmp_path: Path) -> None:
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, K])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, K])],
    )
    src = tmp_path / "relu.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(src))
    with pytest.raises(ValueError, match="no MatMul by a constant weight"):
        quantize_matmuls_per_row(src, tmp_path / "out.onnx")


def test_a_two_dimensional_activation_is_quantized_per_row(tmp_path: Path) -> None:
    """A classifier head reads a pooled (batch, K) vector, not (batch, tokens, K): the row
    scales and zero points then have rank 2 (a rank-3 zero point once failed at run time)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(8)
    w = rng.standard_normal((K, 3)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "head",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", K])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["b", 3])],
        [numpy_helper.from_array(w, "w")],
    )
    src, dst = tmp_path / "head.onnx", tmp_path / "rows.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(src))
    quantize_matmuls_per_row(src, dst)
    x = rng.standard_normal((4, K)).astype(np.float32)
    np.testing.assert_allclose(_run(dst, x)[0], _row_int8_matmul(x, w), rtol=1e-4, atol=1e-4)
