"""Export a Hugging Face sequence-classification checkpoint to an ONNX verifier folder.

Works for the DeBERTa-v2/v3 family (e.g. VerifAI's production verifier
``MilosKosRad/TextualEntailment_DeBERTa_preprocessedSciFACT``) and BERT-like models. The folder
it writes is what :class:`verifai_desktop.verify.nli.OnnxVerifier` reads: ``model.onnx``,
the tokenizer files (``tokenizer.json`` required), ``config.json`` with the label map, and
``verifier.json``. ``int8=True`` quantizes the weights to int8, about 4 times smaller, in one
of two schemes (:data:`INT8_SCHEMES`):

* ``"blocks"`` (the default): the MatMul weights as ONNX Runtime ``MatMulNBits`` (8 bits,
  blocks of 32, symmetric) and the embedding tables (Gather) per tensor; activations stay
  float32.
* ``"rows"``: every MatMul by a weight multiplied in int8, each token's activations quantized
  at run time with their own scale
  (:func:`~verifai_desktop.onnx_tools.quantize_matmuls_per_row`), embedding tables per row,
  after ONNX Runtime's offline graph optimisation; about twice as fast on a CPU. The bundled
  verifier uses it (issue 40); the shown labels it changes on the dev sets are listed by
  ``benchmarks/verifier_int8.py``.

ONNX Runtime's *dynamic* quantization (one activation scale per batch) is not used: it made a
pair's probabilities depend on the other pairs in its batch (up to 7e-3 measured). In both
schemes a pair's probabilities are the same alone and in any batch.

The quantisation and the opset are shared with the embedder export
(:mod:`verifai_desktop.onnx_tools`). torch, transformers and onnx are imported inside the
functions: the desktop app never needs torch at run time; exporting needs the ``torch`` extra,
and says so (:class:`~verifai_desktop.errors.MissingExtra`) when it is missing.
"""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verifai_desktop.domain import Progress
from verifai_desktop.errors import MissingExtra, ModelLoadError, ModelNotFound
from verifai_desktop.onnx_tools import (
    OPSET,
    optimise_graph,
    quantize_embedding_tables,
    quantize_matmuls_per_row,
    quantize_weights_int8,
)

log = logging.getLogger(__name__)

INT8_SCHEMES = ("blocks", "rows")
"""How ``int8=True`` quantizes (module docstring); the first is the default."""


@dataclass(frozen=True, slots=True)
class ExportResult:
    """What :func:`export_verifier` wrote.

    Attributes:
        out_dir: the verifier folder.
        onnx_path: the model file used at run time.
        size_bytes: size of ``onnx_path``.
        labels: label names in logit order (from ``id2label``).
        input_names: ONNX graph inputs.
        int8: whether the weights were quantized.
        int8_scheme: the scheme (:data:`INT8_SCHEMES`) when ``int8``, else ``""``.
    """

    out_dir: Path
    onnx_path: Path
    size_bytes: int
    labels: tuple[str, ...]
    input_names: tuple[str, ...]
    int8: bool
    int8_scheme: str = ""


def export_verifier(
    hf_dir: Path,
    out_dir: Path,
    *,
    int8: bool = False,
    int8_scheme: str = INT8_SCHEMES[0],
    max_length: int = 512,
    extra_config: dict[str, Any] | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> ExportResult:
    """Export ``hf_dir`` (a saved ``AutoModelForSequenceClassification``) to ``out_dir``.

    Args:
        hf_dir: folder with ``config.json``, weights and tokenizer files.
        out_dir: verifier folder to create (existing files with the same names are replaced).
        int8: quantize weights to int8 (``model.onnx`` then holds the int8 model; the fp32
            graph is kept as ``model_fp32.onnx``).
        int8_scheme: ``"blocks"`` or ``"rows"`` (:data:`INT8_SCHEMES`, module docstring).
        max_length: tokens per pair the runtime uses (capped by the model's positions).
        extra_config: more keys for ``verifier.json`` (temperature, feature layer).
        progress: called with stage ``"export"`` after each step.

    Returns:
        What was written.

    Raises:
        ModelNotFound: ``hf_dir`` is not a folder with a ``config.json``.
        ModelLoadError: the checkpoint cannot be loaded, has no ``id2label`` for 3 classes,
            or its tokenizer cannot be saved as ``tokenizer.json``.
        MissingExtra: PyTorch, transformers or onnx is not installed (the ``torch`` extra).
        ValueError: ``int8_scheme`` is not one of :data:`INT8_SCHEMES`.
    """
    if int8_scheme not in INT8_SCHEMES:
        raise ValueError(f"int8_scheme must be one of {INT8_SCHEMES}, not {int8_scheme!r}")
    try:
        import onnx  # noqa: F401 (torch.onnx.export needs it, and says so only midway)
        import torch
        from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer
    except ImportError as exc:
        raise MissingExtra(
            "exporting a verifier to ONNX", "torch", "PyTorch, transformers and onnx"
        ) from exc

    hf_dir = Path(hf_dir)
    out_dir = Path(out_dir)
    if not (hf_dir / "config.json").is_file():
        raise ModelNotFound(str(hf_dir), "give a Hugging Face model folder with config.json")

    def step(n: int, message: str) -> None:
        log.info("export: %s", message)
        if progress is not None:
            progress(Progress(stage="export", done=n, total=4, unit="steps", message=message))

    try:
        config = AutoConfig.from_pretrained(str(hf_dir))
        model = AutoModelForSequenceClassification.from_pretrained(str(hf_dir)).eval()
        tokenizer = AutoTokenizer.from_pretrained(str(hf_dir))
    except Exception as exc:  # transformers raises many types for a bad folder
        raise ModelLoadError(
            hf_dir, f"not a loadable sequence-classification model ({exc})"
        ) from exc
    labels = tuple(str(config.id2label[i]) for i in range(config.num_labels))
    if len(labels) != 3:
        raise ModelLoadError(hf_dir, f"expected a 3-class NLI head, found labels {labels}")
    step(1, f"loaded {type(model).__name__} with labels {labels}")

    out_dir.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(str(out_dir))
    if not (out_dir / "tokenizer.json").is_file():
        raise ModelLoadError(hf_dir, "tokenizer has no fast (tokenizer.json) form")
    config.save_pretrained(str(out_dir))

    sample = tokenizer(["A premise sentence for export."], ["A claim."], return_tensors="pt")
    input_names = ["input_ids", "attention_mask"]
    uses_types = "token_type_ids" in sample and getattr(config, "type_vocab_size", 0) > 0
    if uses_types:
        input_names.append("token_type_ids")

    class _Logits(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *args: torch.Tensor) -> torch.Tensor:
            kwargs = dict(zip(input_names, args, strict=True))
            return self.inner(**kwargs).logits  # type: ignore[no-any-return]

    args = tuple(sample[name] for name in input_names)
    fp32_path = out_dir / ("model_fp32.onnx" if int8 else "model.onnx")
    dynamic = {name: {0: "batch", 1: "sequence"} for name in input_names}
    dynamic["logits"] = {0: "batch"}
    with torch.no_grad():
        torch.onnx.export(
            _Logits(model),
            args,
            str(fp32_path),
            input_names=input_names,
            output_names=["logits"],
            dynamic_axes=dynamic,
            opset_version=OPSET,
            do_constant_folding=True,
            dynamo=False,
        )
    step(2, f"wrote {fp32_path.name}")

    onnx_path = fp32_path
    if int8:
        onnx_path = out_dir / "model.onnx"
        if int8_scheme == "rows":
            tables, optimised = out_dir / "model_tables.onnx", out_dir / "model_optimised.onnx"
            try:
                quantize_embedding_tables(fp32_path, tables)
                optimise_graph(tables, optimised)
                quantize_matmuls_per_row(optimised, onnx_path)
            finally:
                tables.unlink(missing_ok=True)
                optimised.unlink(missing_ok=True)
        else:
            quantize_weights_int8(fp32_path, onnx_path)
        step(3, f"quantized to {onnx_path.name} ({int8_scheme})")

    positions = int(getattr(config, "max_position_embeddings", max_length) or max_length)
    settings: dict[str, Any] = {
        "onnx_file": onnx_path.name,
        "max_length": min(max_length, positions),
        "labels": list(labels),
        "int8": int8,
        **({"int8_scheme": int8_scheme} if int8 else {}),
        "exported_from": hf_dir.name,
    }
    cfg_path = out_dir / "verifier.json"
    if cfg_path.is_file():  # keep calibration written earlier for the same folder
        old = json.loads(cfg_path.read_text("utf-8"))
        kept = ("temperature", "feature_layer", "class_offsets")
        settings = {**{k: old[k] for k in kept if k in old}, **settings}
    settings.update(extra_config or {})
    cfg_path.write_text(json.dumps(settings, indent=2), encoding="utf-8")
    step(4, f"wrote {cfg_path.name}")
    return ExportResult(
        out_dir=out_dir,
        onnx_path=onnx_path,
        size_bytes=onnx_path.stat().st_size,
        labels=labels,
        input_names=tuple(input_names),
        int8=int8,
        int8_scheme=int8_scheme if int8 else "",
    )


def copy_tokenizer_files(src: Path, dst: Path) -> None:
    """Copy tokenizer and config files of a verifier folder (used when re-packaging)."""
    for name in (
        "tokenizer.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
        "vocab.txt",
        "config.json",
        "verifier.json",
    ):
        if (src / name).is_file():
            shutil.copy2(src / name, dst / name)
