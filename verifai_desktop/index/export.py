"""Export a sentence-transformers model to an ONNX embedder folder (needs the ``torch`` extra).

The folder is what :class:`~verifai_desktop.index.onnx_embedder.OnnxEmbedder` runs: the model's
transformer followed by its pooling (mean over the attention mask, or the [CLS] vector) and L2
normalisation, computed inside the graph as sentence-transformers' ``Pooling`` and
``Normalize`` modules do (torch.onnx, opset 17, dynamic batch and length; attention exported
in its eager form, which ONNX Runtime's optimiser fuses better than the SDPA one). The graph is
then optimised offline by ONNX Runtime (``ORT_ENABLE_EXTENDED``: constant folding, LayerNorm,
GELU and SkipLayerNorm fusions, no hardware-specific layouts). With ``int8=True`` it is
quantized in one of two ways (:data:`INT8_SCHEMES`):

- ``"rows"`` (the default since issue 40): embedding tables int8 per row, then every MatMul by a
  weight multiplied in int8 with each token's activations quantized on their own at run time
  (:func:`verifai_desktop.onnx_tools.quantize_matmuls_per_row`), smoothed (SmoothQuant) by the
  peaks of ``calibration`` texts when given. Twice the chunks/s of float32 compute.
- ``"blocks"``: weight-only MatMulNBits 8-bit blocks of 32
  (:func:`verifai_desktop.onnx_tools.quantize_weights_int8`), computed in int8 per row block
  (``accuracy_level`` 4) or in float32 (0).

Every export is loaded back on the CPU and checked against sentence-transformers on a few
texts before it is kept. torch and sentence-transformers are imported inside the functions: the
app runs embedders without them.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import inspect
import json
import logging
import os
import re
import shutil
import tempfile
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from verifai_desktop.domain import Progress
from verifai_desktop.errors import MissingExtra, ModelLoadError
from verifai_desktop.hashing import sha256_file
from verifai_desktop.index.onnx_embedder import (
    CARD_FILE,
    INPUT_NAMES,
    OUTPUT_NAME,
    TOKENIZER_FILE,
    OnnxEmbedder,
)
from verifai_desktop.offline import import_onnxruntime
from verifai_desktop.onnx_tools import (
    OPSET,
    ROW_INT8_OPSET,
    matmul_activations,
    optimise_graph,
    quantize_embedding_tables,
    quantize_matmuls_per_row,
    quantize_weights_int8,
)

log = logging.getLogger(__name__)

ONNX_FILE = "model.onnx"
INT8_SCHEMES = ("rows", "blocks")
"""How an int8 export multiplies (module docstring)."""
INT8_SCHEME = "rows"
"""The int8 scheme of exports (issue 40 item 7). Chosen on SciFact BEIR train
(``models/export_embedder.py --check-ndcg``): nDCG@10 within :data:`INT8_TOLERANCE` of fp32 at
twice the chunks/s of the float32-compute export that shipped before."""
MIN_COSINE = {"fp32": 0.9999, "blocks": 0.999, "rows": 0.995}
"""Smallest cosine to sentence-transformers an export may show on :data:`CHECK_TEXTS`, by
quantization. It catches a broken export; whether an int8 export is good enough is decided by
retrieval (nDCG@10 on SciFact train). Per-row int8 is furthest on the shortest texts (a
one-word query: 0.998 smoothed, 0.996 not)."""
INT8_ACCURACY_LEVEL = 4
"""MatMulNBits ``accuracy_level`` of int8 exports: 4 quantizes each row's activations per
block of 32 at run time and multiplies in int8 (1.5 times the chunks/s of float32 compute,
level 0, on docs/clean chunks; a text's vector still does not depend on its batch). Chosen
on SciFact BEIR train: nDCG@10 0.6737 against fp32 0.6735 (level 0: 0.6740); issue 40 item 7."""
CHECK_TEXTS = (
    "Vitamin D deficiency is associated with a higher risk of respiratory infection.",
    "  COVID-19: (why?) transmission in hospitals ",
    "statins",
    "Mean pooling averages the token vectors of a sentence; " * 30,  # over 256 word pieces
)
_TORCH_PACKAGES = "PyTorch and sentence-transformers"


def _compute(accuracy_level: int) -> str:
    """How an int8 export multiplies, in words (recorded in ``embedder.json``)."""
    named = {0: "float32 compute", 4: "int8 compute, activations per row block of 32"}
    return named.get(accuracy_level, f"accuracy level {accuracy_level}")


@dataclass(frozen=True, slots=True)
class EmbedderExport:
    """What :func:`export_embedder` wrote.

    Attributes:
        folder: the embedder folder.
        onnx_path: the model file.
        size_bytes: size of ``onnx_path``.
        dim: vector dimension.
        max_tokens: tokens per input, special tokens included.
        pooling: ``"mean"`` or ``"cls"``.
        int8: whether the weights were quantized.
        min_cosine: smallest cosine between the export's and sentence-transformers' vectors
            of :data:`CHECK_TEXTS`.
    """

    folder: Path
    onnx_path: Path
    size_bytes: int
    dim: int
    max_tokens: int
    pooling: str
    int8: bool
    min_cosine: float


def torch_available() -> bool:
    """Whether PyTorch and sentence-transformers are installed (without importing them)."""
    return all(importlib.util.find_spec(m) is not None for m in ("torch", "sentence_transformers"))


def require_torch(what: str) -> None:
    """Raise :class:`MissingExtra` naming the ``torch`` extra unless it is installed.

    Args:
        what: the task that needs it, for the message (``"exporting the embedder 'x'"``).
    """
    if not torch_available():
        raise MissingExtra(what, "torch", _TORCH_PACKAGES)


def source_fingerprint(folder: Path) -> str:
    """A cheap fingerprint of a model folder: SHA-256 over every file's path, size and mtime.

    An export made on first use records it; a different fingerprint means the source changed
    and the model is exported again.
    """
    digest = hashlib.sha256()
    folder = Path(folder)
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        st = path.stat()  # follows the Hugging Face cache's symbolic links to the blobs
        digest.update(f"{path.relative_to(folder)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _licence_of(source: Path) -> str:
    """The ``license:`` of a model card's front matter (README.md), or ``""``."""
    readme = source / "README.md"
    if not readme.is_file():
        return ""
    match = re.search(r"^license:\s*(\S+)\s*$", readme.read_text("utf-8", "replace"), re.M)
    return match.group(1) if match else ""


def _versions() -> dict[str, str]:
    out = {}
    for dist in ("torch", "sentence-transformers", "transformers", "onnx", "onnxruntime"):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def _pooling_mode(pooling: Any) -> str:
    mode = getattr(pooling, "pooling_mode", None)  # sentence-transformers >= 5
    if mode is None and hasattr(pooling, "get_pooling_mode_str"):
        mode = pooling.get_pooling_mode_str()
    return str(mode)


def export_embedder(
    source: Path,
    out_dir: Path,
    *,
    name: str | None = None,
    int8: bool = False,
    accuracy_level: int = INT8_ACCURACY_LEVEL,
    int8_scheme: str = INT8_SCHEME,
    calibration: Sequence[str] = (),
    command: str = "",
    origin: str = "",
    licence: str = "",
    extra_files: Sequence[Path] = (),
    progress: Callable[[Progress], None] | None = None,
) -> EmbedderExport:
    """Export the sentence-transformers model in ``source`` to the embedder folder ``out_dir``.

    Writes ``model.onnx``, ``tokenizer.json``, copies of ``extra_files`` (licence, attribution)
    and, last, ``embedder.json``; files of ``out_dir`` with other names are left alone.

    Args:
        source: a sentence-transformers model folder (Transformer -> mean or CLS Pooling
            [-> Normalize]).
        out_dir: the embedder folder to write (created if missing).
        name: the model name recorded in ``embedder.json``; default ``source``'s folder name.
        int8: quantize the weights to int8 (about 4 times smaller).
        accuracy_level: MatMulNBits ``accuracy_level`` of a ``"blocks"`` export: 4 multiplies
            in int8 (:data:`INT8_ACCURACY_LEVEL`), 0 in float32 (the export before issue 40).
        int8_scheme: ``"rows"`` or ``"blocks"`` (:data:`INT8_SCHEMES`).
        calibration: texts whose activation peaks smooth a ``"rows"`` export (SmoothQuant);
            none: no smoothing.
        command: the command that made the export, recorded in ``embedder.json``.
        origin: where the model comes from, in words (recorded as ``source``).
        licence: the model's licence; default the ``license:`` of its README.md.
        extra_files: more files to copy into the folder (and list with their sha256).
        progress: called with stage ``"export"`` after each step.

    Returns:
        What was written, with the check's smallest cosine to sentence-transformers.

    Raises:
        MissingExtra: PyTorch or sentence-transformers is not installed.
        ModelLoadError: ``source`` cannot be loaded, has another pipeline, no fast tokenizer,
            or the export disagrees with sentence-transformers.
        ValueError: ``int8_scheme`` is not one of :data:`INT8_SCHEMES`.
    """
    if int8_scheme not in INT8_SCHEMES:
        raise ValueError(f"int8_scheme must be one of {INT8_SCHEMES}, not {int8_scheme!r}")
    source = Path(source)
    out_dir = Path(out_dir)
    name = name or source.name
    require_torch(f"exporting the embedder {name!r} to ONNX")

    def step(n: int, message: str) -> None:
        log.info("export %s: %s", name, message)
        if progress is not None:
            progress(Progress(stage="export", done=n, total=5, unit="steps", message=message))

    model = _load_sentence_transformer(source)
    kinds = [type(m).__name__ for m in model]
    if kinds[:2] != ["Transformer", "Pooling"] or kinds[2:] not in ([], ["Normalize"]):
        raise ModelLoadError(
            source,
            f"its pipeline is {' -> '.join(kinds)}; only Transformer -> Pooling (-> Normalize) "
            "sentence-transformers models can be exported",
        )
    pooling = _pooling_mode(model[1])
    if pooling not in ("mean", "cls"):
        raise ModelLoadError(source, f"pooling {pooling!r} is not supported (mean or cls)")
    tokenizer = model.tokenizer
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        raise ModelLoadError(source, "its tokenizer has no fast (tokenizer.json) form")
    getter = getattr(model, "get_embedding_dimension", None) or (
        model.get_sentence_embedding_dimension
    )
    dim = int(getter())
    max_tokens = int(model.max_seq_length)
    lowercase = bool(getattr(model[0], "do_lower_case", False))
    reference = model.encode(
        list(CHECK_TEXTS),
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    step(1, f"loaded {' -> '.join(kinds)} ({pooling} pooling, {dim}-d, {max_tokens} tokens)")

    out_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.export-", dir=out_dir.parent))
    try:
        raw = staging / "raw.onnx"
        inputs = _export_graph(model, pooling, raw)
        step(2, f"exported the graph (inputs {', '.join(inputs)})")
        tok = _runtime_tokenizer(backend)
        if int8 and int8_scheme == "rows":
            tables = staging / "tables.onnx"
            quantize_embedding_tables(raw, tables)
            optimise_graph(tables, staging / "float.onnx")
            step(3, "quantized the embedding tables to int8 and optimised the graph")
            peaks = (
                _activation_peaks(staging / "float.onnx", tok, lowercase, max_tokens, calibration)
                if calibration
                else None
            )
            quantize_matmuls_per_row(staging / "float.onnx", staging / ONNX_FILE, smoothing=peaks)
            step(4, "quantized every MatMul to int8, one scale per token")
        else:
            graph = raw
            if int8:
                graph = staging / "int8.onnx"
                quantize_weights_int8(raw, graph, gather="row", accuracy_level=accuracy_level)
                step(3, "quantized the weights to int8")
            optimise_graph(graph, staging / ONNX_FILE)
            step(4, "optimised the graph (ORT_ENABLE_EXTENDED)")
        for leftover in ("raw.onnx", "int8.onnx", "tables.onnx", "float.onnx"):
            (staging / leftover).unlink(missing_ok=True)

        tok.save(str(staging / TOKENIZER_FILE), pretty=False)
        for extra in extra_files:
            shutil.copyfile(extra, staging / Path(extra).name)
        files = sorted(p.name for p in staging.iterdir() if p.is_file())
        card = {
            "name": name,
            "dim": dim,
            "max_tokens": max_tokens,
            "pooling": pooling,
            "normalize": True,
            "lowercase": lowercase,
            "int8": int8,
            "quantization": _quantization(int8, int8_scheme, accuracy_level, len(calibration)),
            "optimization": "onnxruntime ORT_ENABLE_EXTENDED, offline, CPU",
            "onnx_file": ONNX_FILE,
            "inputs": list(inputs),
            "output": OUTPUT_NAME,
            "opset": ROW_INT8_OPSET if int8 and int8_scheme == "rows" else OPSET,
            "pad_token_id": int(tokenizer.pad_token_id or 0),
            "source": origin or str(source),
            "source_fingerprint": source_fingerprint(source),
            "licence": licence or _licence_of(source),
            "command": command,
            "exported_with": _versions(),
            "files": {f: sha256_file(staging / f) for f in files},
        }
        (staging / CARD_FILE).write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
        check = OnnxEmbedder(staging, name=name).embed(list(CHECK_TEXTS))
        min_cosine = float(np.min(np.sum(check * reference, axis=1)))
        floor = MIN_COSINE[int8_scheme if int8 else "fp32"]
        if min_cosine < floor:
            raise ModelLoadError(
                source,
                f"the ONNX export disagrees with sentence-transformers (cosine {min_cosine:.5f} "
                f"< {floor})",
            )
        for f in [*files, CARD_FILE]:  # the card last: a folder with a card is complete
            os.replace(staging / f, out_dir / f)
        step(5, f"checked against sentence-transformers (min cosine {min_cosine:.6f})")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    onnx_path = out_dir / ONNX_FILE
    return EmbedderExport(
        folder=out_dir,
        onnx_path=onnx_path,
        size_bytes=onnx_path.stat().st_size,
        dim=dim,
        max_tokens=max_tokens,
        pooling=pooling,
        int8=int8,
        min_cosine=min_cosine,
    )


def _quantization(int8: bool, scheme: str, accuracy_level: int, calibrated: int) -> str:
    """The ``quantization`` entry of ``embedder.json``, in words."""
    if not int8:
        return "none (float32)"
    if scheme == "blocks":
        return (
            f"int8: MatMulNBits 8-bit blocks of 32 ({_compute(accuracy_level)}), "
            "embedding tables per row"
        )
    smoothed = f"SmoothQuant on {calibrated} calibration texts" if calibrated else "no smoothing"
    return (
        "int8: MatMulIntegerToFloat, activations one scale per token at run time, weights one "
        f"scale per column ({smoothed}), embedding tables per row"
    )


def _runtime_tokenizer(backend: Any) -> Any:
    """The fast tokenizer as the runtime uses it: no truncation (the runtime truncates to
    ``max_tokens`` itself; counting must not), no padding."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(backend.to_str())
    tok.no_truncation()
    tok.no_padding()
    return tok


def _activation_peaks(
    graph: Path, tokenizer: Any, lowercase: bool, max_tokens: int, texts: Sequence[str]
) -> dict[str, Any]:
    """Per activation :func:`~verifai_desktop.onnx_tools.matmul_activations` names, the float32
    (K,) peaks ``max |x_k|`` over every token of ``texts``, each text run alone (no padding)."""
    import onnx

    ort = import_onnxruntime()
    names = matmul_activations(graph)
    model = onnx.load(str(graph))
    for name in names:
        model.graph.output.append(
            onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None)
        )
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    wanted = {i.name for i in session.get_inputs()}
    encoder = type(tokenizer).from_str(tokenizer.to_str())
    encoder.enable_truncation(max_tokens)  # special tokens kept, as the runtime does
    peaks: dict[str, Any] = {}
    for text in texts:
        ids = encoder.encode(text.lower() if lowercase else text).ids
        batch = np.asarray([ids], dtype=np.int64)
        feeds = {
            "input_ids": batch,
            "attention_mask": np.ones_like(batch),
            "token_type_ids": np.zeros_like(batch),
        }
        outputs = session.run(names, {k: v for k, v in feeds.items() if k in wanted})
        for name, value in zip(names, outputs, strict=True):
            peak = np.abs(value.reshape(-1, value.shape[-1])).max(axis=0)
            peaks[name] = peak if name not in peaks else np.maximum(peaks[name], peak)
    return peaks


def _load_sentence_transformer(source: Path) -> Any:
    from sentence_transformers import SentenceTransformer  # deferred: the torch extra
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # "Loading weights"
    try:
        return SentenceTransformer(str(source), device="cpu", local_files_only=True)
    except Exception as exc:  # sentence-transformers and transformers raise many types
        raise ModelLoadError(source, f"not a loadable sentence-transformers model ({exc})") from exc


def _export_graph(model: Any, pooling: str, path: Path) -> tuple[str, ...]:
    """torch.onnx export of transformer + pooling + L2 normalisation; returns the inputs."""
    import torch  # deferred: the torch extra

    hf = model[0].auto_model.eval()
    try:
        hf.set_attn_implementation("eager")
    except (AttributeError, ValueError) as exc:  # older transformers, or no eager attention
        log.debug("keeping the default attention implementation: %s", exc)
    sample = model.tokenizer(
        ["hello world", "a longer sentence for the export"], padding=True, return_tensors="pt"
    )
    accepted = inspect.signature(hf.forward).parameters
    inputs = tuple(n for n in INPUT_NAMES if n in sample and n in accepted)

    class _Embed(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.hf = hf

        def forward(self, *args: torch.Tensor) -> torch.Tensor:
            features = dict(zip(inputs, args, strict=True))
            hidden: torch.Tensor = self.hf(**features).last_hidden_state
            if pooling == "cls":
                pooled = hidden[:, 0]
            else:  # sentence-transformers' mean pooling over the attention mask
                # The masked sum as a (batch, 1, tokens) @ (batch, tokens, dim) MatMul, not a
                # ReduceSum: ONNX Runtime reduces a batch of one in another order than a
                # bigger batch (up to 6e-8 apart), a MatMul row the same way in every batch.
                mask = features["attention_mask"].to(hidden.dtype)
                total = torch.matmul(mask.unsqueeze(1), hidden).squeeze(1)
                pooled = total / torch.clamp(mask.sum(1, keepdim=True), min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2.0, dim=1)

    dynamic = {n: {0: "batch", 1: "tokens"} for n in inputs}
    dynamic[OUTPUT_NAME] = {0: "batch"}
    with warnings.catch_warnings(), torch.inference_mode():
        warnings.simplefilter("ignore")  # tracer warnings about Python control flow
        torch.onnx.export(
            _Embed(),
            tuple(sample[n] for n in inputs),
            str(path),
            input_names=list(inputs),
            output_names=[OUTPUT_NAME],
            dynamic_axes=dynamic,
            opset_version=OPSET,
            do_constant_folding=True,
            dynamo=False,
        )
    return inputs
