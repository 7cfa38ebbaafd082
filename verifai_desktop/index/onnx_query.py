"""Single-query embedding through ONNX Runtime on one thread (search latency).

A search embeds one short query; PyTorch's per-call overhead dominates there. The model's
transformer is exported once to ONNX (``models_dir()/embedders/<name>/query.onnx``) and run by
ONNX Runtime with one intra-op thread, then mean-pooled and L2-normalised exactly as the
sentence-transformers pipeline does. Measured on the loaded 2-core box (EVAL-RETRIEVAL, 150
SciFact claims): p50 15 ms vs 36 ms through sentence-transformers, max |1 - cos| 7e-8.

Only models whose pipeline is Transformer -> mean Pooling (-> Normalize) are exported; anything
else, or any failure, leaves query embedding on PyTorch.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.offline import import_onnxruntime
from verifai_desktop.private import make_private_dir
from verifai_desktop.settings import models_dir

log = logging.getLogger(__name__)

DISABLE_ENV = "VERIFAI_ONNX_QUERY"
"""Set to ``0`` to keep query embedding on PyTorch."""

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_CHECK_TEXT = "Vitamin D deficiency is associated with a higher risk of respiratory infection."


class OnnxQueryEncoder:
    """Embeds one text with an exported ONNX transformer plus mean pooling.

    Args:
        session: an ``onnxruntime.InferenceSession`` of the exported transformer.
        tokenizer: the model's Hugging Face tokenizer.
        input_names: the tokenizer outputs the graph takes.
        max_length: the model's ``max_seq_length`` (inputs are truncated to it, as in
            sentence-transformers).
    """

    def __init__(
        self, session: Any, tokenizer: Any, input_names: tuple[str, ...], max_length: int
    ) -> None:
        self._session = session
        self._tokenizer = tokenizer
        self._inputs = input_names
        self._max_length = max_length

    def embed_one(self, text: str) -> NDArray[np.float32]:
        """float32, shape (1, dim), L2-normalised."""
        batch = self._tokenizer(
            [text], return_tensors="np", truncation=True, max_length=self._max_length
        )
        feeds = {n: np.asarray(batch[n], dtype=np.int64) for n in self._inputs}
        hidden = self._session.run(None, feeds)[0]
        mask = np.asarray(batch["attention_mask"], dtype=np.float32)[..., None]
        pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        norm = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.ascontiguousarray(pooled / np.maximum(norm, 1e-12), dtype=np.float32)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "model"


def _mean_pooled(model: Any) -> bool:
    """True for Transformer -> mean Pooling (-> Normalize) pipelines."""
    modules = [type(m).__name__ for m in model]
    if modules not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        return False
    pooling = model[1]
    mode = getattr(pooling, "pooling_mode", None)
    if mode is None and hasattr(pooling, "get_pooling_mode_str"):
        mode = pooling.get_pooling_mode_str()
    return mode == "mean"


def _export(model: Any, input_names: tuple[str, ...], path: Path) -> None:
    import torch  # deferred: heavy; only needed for the one-off export

    hf = model[0].auto_model.eval()

    class _Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.hf = hf

        def forward(self, *args: torch.Tensor) -> torch.Tensor:
            out = self.hf(**dict(zip(input_names, args, strict=True)))
            hidden: torch.Tensor = out.last_hidden_state
            return hidden

    sample = model.tokenizer(["hello world"], return_tensors="pt")
    make_private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".onnx.tmp")
    os.close(fd)
    try:
        with warnings.catch_warnings(), torch.inference_mode():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _Hidden(),
                tuple(sample[n] for n in input_names),
                tmp,
                input_names=list(input_names),
                output_names=["last_hidden_state"],
                opset_version=17,
                dynamo=False,
                dynamic_axes={
                    n: {0: "batch", 1: "tokens"} for n in (*input_names, "last_hidden_state")
                },
            )
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def build_query_encoder(name: str, model: Any) -> OnnxQueryEncoder | None:
    """An ONNX query encoder for a loaded sentence-transformers model, or ``None``.

    Exports the transformer on first use (a few seconds, ~90 MB for all-MiniLM-L6-v2) and
    checks the result against PyTorch on one sentence; returns ``None`` (PyTorch stays in use)
    when disabled by ``VERIFAI_ONNX_QUERY=0``, ONNX Runtime is missing, the pipeline is not
    mean-pooled, or anything fails.
    """
    if os.environ.get(DISABLE_ENV, "1") == "0":
        return None
    try:
        ort = import_onnxruntime()  # deferred: optional and native
    except ImportError:
        return None
    try:
        if not _mean_pooled(model):
            return None
        sample = model.tokenizer(["hello world"], return_tensors="np")
        input_names = tuple(n for n in _INPUTS if n in sample)
        path = models_dir() / "embedders" / _slug(name) / "query.onnx"
        if not path.exists():
            log.info("exporting %s to ONNX for query embedding: %s", name, path)
            _export(model, input_names, path)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        encoder = OnnxQueryEncoder(session, model.tokenizer, input_names, int(model.max_seq_length))
        reference = model.encode(
            [_CHECK_TEXT], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        cosine = float(np.dot(encoder.embed_one(_CHECK_TEXT)[0], reference[0]))
        if cosine < 0.9999:
            log.warning("ONNX query encoder for %s disagrees with PyTorch (cos %.5f)", name, cosine)
            return None
        return encoder
    except Exception as exc:
        log.warning("ONNX query embedding unavailable for %s (%s); using PyTorch", name, exc)
        return None
