"""The NLI verifier: an exported sequence-classification model run with ONNX Runtime.

A verifier folder (made by ``verifai models export-verifier`` or shipped in
``verifai_desktop/bundled/verifier``) holds:

* ``model.onnx`` (or the file named in ``verifier.json``): inputs ``input_ids``,
  ``attention_mask`` and, for BERT-like models, ``token_type_ids``; output ``logits`` (n, k).
* ``tokenizer.json`` (Hugging Face fast tokenizer) plus its configuration files.
* ``config.json``: the Hugging Face config whose ``id2label`` says which logit is which class,
  so any label order works (VerifAI's DeBERTa uses NO_EVIDENCE / SUPPORT / CONTRADICT).
* ``verifier.json`` (optional): ``onnx_file``, ``max_length``, ``temperature`` (fitted on
  SciFact dev, Guo et al. 2017), ``feature_layer`` (see :mod:`verifai_desktop.verify.features`)
  and ``class_offsets`` / ``class_offsets_long`` (a prior shift for short and long premises,
  see :meth:`OnnxVerifier.classify`).
* ``model_card.json`` (optional): base model, data, licences and measured figures.

Probabilities are always returned in :data:`~verifai_desktop.verify.check.LABEL_ORDER`
``(SUPPORT, CONTRADICT, NO_EVIDENCE)``; :class:`OnnxVerifier` implements
:class:`~verifai_desktop.verify.check.Verifier` and is run through
:func:`~verifai_desktop.verify.check.verify_pairs` like every other verifier.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.domain import NliLabel
from verifai_desktop.errors import ModelLoadError, ModelNotFound
from verifai_desktop.hardware import choose_providers
from verifai_desktop.offline import import_onnxruntime
from verifai_desktop.settings import models_dir
from verifai_desktop.verify.check import LABEL_ORDER
from verifai_desktop.verify.features import feature_layer_from_dict, short_premise_mask

log = logging.getLogger(__name__)

BUNDLED_NAME = "verifai-minilm-nli"
PRODUCTION_VERIFIER = "MilosKosRad/TextualEntailment_DeBERTa_preprocessedSciFACT"

_LABEL_SYNONYMS: dict[str, NliLabel] = {
    "support": NliLabel.SUPPORT, "supports": NliLabel.SUPPORT, "supported": NliLabel.SUPPORT,
    "entailment": NliLabel.SUPPORT, "entails": NliLabel.SUPPORT,
    "contradict": NliLabel.CONTRADICT, "contradiction": NliLabel.CONTRADICT,
    "contradicts": NliLabel.CONTRADICT, "refutes": NliLabel.CONTRADICT,
    "refute": NliLabel.CONTRADICT,
    "no_evidence": NliLabel.NO_EVIDENCE, "noevidence": NliLabel.NO_EVIDENCE,
    "no evidence": NliLabel.NO_EVIDENCE, "neutral": NliLabel.NO_EVIDENCE,
    "not enough info": NliLabel.NO_EVIDENCE, "nei": NliLabel.NO_EVIDENCE,
}  # fmt: skip


def bundled_dir() -> Path:
    """Folder of the verifier shipped inside the package."""
    return Path(__file__).resolve().parent.parent / "bundled" / "verifier"


def parse_label(name: str) -> NliLabel:
    """Map a checkpoint's label name (``"entailment"``, ``"NO_EVIDENCE"``, ...) to a class.

    Raises:
        ValueError: the name is not a known NLI label.
    """
    key = name.strip().lower().replace("-", "_")
    if key in _LABEL_SYNONYMS:
        return _LABEL_SYNONYMS[key]
    key = key.replace("_", " ")
    if key in _LABEL_SYNONYMS:
        return _LABEL_SYNONYMS[key]
    raise ValueError(f"unknown NLI label {name!r}")


@dataclass(frozen=True, slots=True)
class ModelCard:
    """What a verifier is and how well it measured, read from ``model_card.json``.

    Attributes:
        name: short model name (``"verifai-minilm-nli"``).
        version: model version string.
        base_model: the checkpoint it was fine-tuned from.
        description: one-paragraph summary.
        training_data: ``(dataset, licence)`` pairs.
        figures: evaluation figures, ``{"scifact_dev": {"macro_f1": 0.5, ...}, ...}``.
        settings: training settings (epochs, learning rate, ...).
        production_verifier: the recommended stronger verifier for production use.
        limitations: known limits, one per entry.
        path: folder the card was read from.
        presets: per-label thresholds by preset name (``strict``, ``balanced``, ``lenient``):
            ``support_threshold``, ``contradict_threshold`` and the dev precision and coverage
            they reached (:mod:`verifai_desktop.verify.presets`); empty when the card has none.
    """

    name: str
    version: str = ""
    base_model: str = ""
    description: str = ""
    training_data: tuple[tuple[str, str], ...] = ()
    figures: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    settings: Mapping[str, str] = field(default_factory=dict)
    production_verifier: str = PRODUCTION_VERIFIER
    limitations: tuple[str, ...] = ()
    path: Path | None = None
    presets: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def summary(self) -> str:
        """One line for ``verifai models list``: name and headline figures."""
        parts = [self.name]
        sci = self.figures.get("scifact_dev")
        if sci and "macro_f1" in sci:
            parts.append(f"SciFact dev macro F1 {sci['macro_f1']:.3f}")
        hv = self.figures.get("healthver_test")
        if hv and "weighted_f1" in hv:
            parts.append(f"HealthVer test weighted F1 {hv['weighted_f1']:.3f}")
        return "; ".join(parts)


def load_model_card(model_dir: Path | None = None) -> ModelCard:
    """Read ``model_card.json`` of a verifier folder (the bundled one when None).

    A folder without a card (e.g. a fresh export) gets a card named after the folder.

    Raises:
        ModelLoadError: the card exists but is not valid JSON.
    """
    model_dir = Path(model_dir) if model_dir is not None else bundled_dir()
    path = model_dir / "model_card.json"
    if not path.is_file():
        return ModelCard(name=model_dir.name, path=model_dir)
    try:
        raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ModelLoadError(path, f"model card is not valid JSON ({exc})") from exc
    figures = {
        str(k): {str(m): float(v) for m, v in d.items() if isinstance(v, int | float)}
        for k, d in raw.get("figures", {}).items()
        if isinstance(d, dict)
    }
    return ModelCard(
        name=str(raw.get("name", model_dir.name)),
        version=str(raw.get("version", "")),
        base_model=str(raw.get("base_model", "")),
        description=str(raw.get("description", "")),
        training_data=tuple(
            (str(d.get("name", "")), str(d.get("licence", "")))
            for d in raw.get("training_data", ())
        ),
        figures=figures,
        settings={str(k): str(v) for k, v in raw.get("settings", {}).items()},
        production_verifier=str(raw.get("production_verifier", PRODUCTION_VERIFIER)),
        limitations=tuple(str(x) for x in raw.get("limitations", ())),
        path=model_dir,
        presets={
            str(k): {str(m): float(v) for m, v in d.items() if isinstance(v, int | float)}
            for k, d in raw.get("presets", {}).items()
            if isinstance(d, dict) and {"support_threshold", "contradict_threshold"} <= d.keys()
        },
    )


def softmax(logits: NDArray[np.floating[Any]], temperature: float = 1.0) -> NDArray[np.float32]:
    """Row-wise softmax of ``logits / temperature``; float32, same shape."""
    z: NDArray[np.float64] = np.asarray(logits, dtype=np.float64) / temperature
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    out: NDArray[np.float32] = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    return out


class OnnxVerifier:
    """ONNX Runtime NLI verifier reading tokenizer and label map from its model folder.

    The constructor is cheap; the session and tokenizer load on first use. Thread-safe.

    Args:
        model_dir: verifier folder; None for the bundled one.
        providers: ONNX Runtime providers in order of preference; default CUDA when
            available, then CPU.
        max_length: tokens per pair; default from ``verifier.json``, else the tokenizer's
            limit, at most 512.
        batch_size: pairs per ONNX Runtime run inside one :meth:`classify` call.
        calibrated: apply the temperature, feature layer and class offsets of ``verifier.json``.
        class_offsets: log-prior offsets per label (SUPPORT, CONTRADICT, NO_EVIDENCE) used
            for every premise instead of ``verifier.json``'s (``models/choose_prior_shift.py``
            passes zeros to score candidates); None: the file's, when ``calibrated``.
        threads: ONNX Runtime intra-op threads (default: its own choice, all cores).
    """

    def __init__(
        self,
        model_dir: Path | None = None,
        *,
        providers: Sequence[str] | None = None,
        max_length: int | None = None,
        batch_size: int = 32,
        calibrated: bool = True,
        class_offsets: Sequence[float] | None = None,
        threads: int | None = None,
    ) -> None:
        self.model_dir = Path(model_dir) if model_dir is not None else bundled_dir()
        self.batch_size = batch_size
        self.calibrated = calibrated
        self._providers = tuple(providers) if providers else None
        self._max_length_arg = max_length
        self._threads = threads
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._columns: NDArray[np.intp] | None = None
        self._config: dict[str, Any] = {}
        self._feature_layer: Any = None
        self._offsets_arg = None if class_offsets is None else _offsets_array(class_offsets)
        self._offsets: NDArray[np.float64] = np.zeros(3)
        self._offsets_long: NDArray[np.float64] = np.zeros(3)
        self._card: ModelCard | None = None
        if not self.model_dir.is_dir():
            raise ModelNotFound(
                str(self.model_dir),
                "the verifier folder does not exist; export a verifier into it or choose another",
            )

    # -- loading ---------------------------------------------------------------------------

    def load(self) -> None:
        """Load the ONNX session, tokenizer and label map now (otherwise on first use).

        Raises:
            ModelLoadError: a file is missing or cannot be read.
        """
        with self._lock:
            if self._session is not None:
                return
            # Deferred on purpose: ONNX Runtime and tokenizers load with the model, not the app.
            ort = import_onnxruntime()
            from tokenizers import Tokenizer

            cfg_path = self.model_dir / "verifier.json"
            self._config = json.loads(cfg_path.read_text("utf-8")) if cfg_path.is_file() else {}
            onnx_path = self.model_dir / str(self._config.get("onnx_file", "model.onnx"))
            tok_path = self.model_dir / "tokenizer.json"
            for needed in (onnx_path, tok_path, self.model_dir / "config.json"):
                if not needed.is_file():
                    raise ModelLoadError(
                        needed,
                        "file missing from the verifier folder; export the verifier into it again",
                    )
            self._columns = self._label_columns()
            providers = choose_providers(ort.get_available_providers(), self._providers)
            opts = ort.SessionOptions()
            opts.log_severity_level = 3
            if self._threads:
                opts.intra_op_num_threads = self._threads
            try:
                session = ort.InferenceSession(str(onnx_path), opts, providers=providers)
                tokenizer = Tokenizer.from_file(str(tok_path))
            except Exception as exc:  # onnxruntime raises its own exception types
                raise ModelLoadError(onnx_path, str(exc)) from exc
            tokenizer.no_truncation()
            tokenizer.no_padding()
            self._tokenizer = tokenizer
            self._input_names = {i.name for i in session.get_inputs()}
            limit = self._max_length_arg or int(self._config.get("max_length", 0)) or 512
            self._max_length = min(limit, self._model_max_length())
            self._pad_id = self._pad_token_id()
            if self.calibrated and self._config.get("feature_layer"):
                self._feature_layer = feature_layer_from_dict(self._config["feature_layer"])
            self._offsets = self._read_offsets("class_offsets")
            self._offsets_long = self._read_offsets("class_offsets_long")
            self._session = session
            log.info("verifier %s loaded on %s", self.model_dir, session.get_providers()[0])

    def _label_columns(self) -> NDArray[np.intp]:
        cfg = json.loads((self.model_dir / "config.json").read_text("utf-8"))
        id2label = {int(k): str(v) for k, v in cfg.get("id2label", {}).items()}
        if len(id2label) != 3:
            raise ModelLoadError(
                self.model_dir / "config.json", f"expected 3 labels in id2label, found {id2label}"
            )
        try:
            by_label = {parse_label(name): idx for idx, name in id2label.items()}
        except ValueError as exc:
            raise ModelLoadError(self.model_dir / "config.json", str(exc)) from exc
        if set(by_label) != set(LABEL_ORDER):
            wanted = [x.value for x in LABEL_ORDER]
            raise ModelLoadError(
                self.model_dir / "config.json", f"labels {id2label} do not map onto {wanted}"
            )
        return np.array([by_label[lab] for lab in LABEL_ORDER], dtype=np.intp)

    def _model_max_length(self) -> int:
        cfg = json.loads((self.model_dir / "config.json").read_text("utf-8"))
        return int(cfg.get("max_position_embeddings", 512))

    def _pad_token_id(self) -> int:
        tc = self.model_dir / "tokenizer_config.json"
        if tc.is_file():
            pad = json.loads(tc.read_text("utf-8")).get("pad_token")
            if isinstance(pad, dict):
                pad = pad.get("content")
            if isinstance(pad, str) and self._tokenizer.token_to_id(pad) is not None:
                return int(self._tokenizer.token_to_id(pad))
        return 0

    # -- public API --------------------------------------------------------------------------

    @property
    def provider(self) -> str:
        """The ONNX Runtime execution provider in use (loads the model)."""
        self.load()
        return str(self._session.get_providers()[0])

    @property
    def card(self) -> ModelCard:
        """The folder's model card (see :func:`load_model_card`)."""
        if self._card is None:
            self._card = load_model_card(self.model_dir)
        return self._card

    @property
    def max_length(self) -> int:
        """Tokens per (premise, hypothesis) pair; the premise is cut to fit."""
        self.load()
        return self._max_length

    @property
    def temperature(self) -> float:
        """Softmax temperature of the calibrated output (1.0 when uncalibrated)."""
        self.load()
        return float(self._config.get("temperature", 1.0)) if self.calibrated else 1.0

    @property
    def class_offsets(self) -> NDArray[np.float64]:
        """Log-prior offsets added to the calibrated log-probabilities of short premises (at most
        :data:`~verifai_desktop.verify.features.SHORT_PREMISE_MAX_WORDS` words: sentence
        windows), float64, shape (3,), in :data:`LABEL_ORDER`; zeros when uncalibrated or when
        ``verifier.json`` has none."""
        self.load()
        return self._offsets

    @property
    def class_offsets_long(self) -> NDArray[np.float64]:
        """The same for longer premises (whole passages): ``class_offsets_long``."""
        self.load()
        return self._offsets_long

    def _read_offsets(self, key: str) -> NDArray[np.float64]:
        if self._offsets_arg is not None:
            return self._offsets_arg
        raw = self._config.get(key) if self.calibrated else None
        if not raw:
            return np.zeros(3)
        try:
            return _offsets_array([float(raw.get(lab.value, 0.0)) for lab in LABEL_ORDER])
        except (AttributeError, TypeError, ValueError) as exc:
            raise ModelLoadError(
                self.model_dir / "verifier.json",
                f"{key} must map labels to numbers, found {raw!r}",
            ) from exc

    def encode(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[list[int], list[int]]]:
        """Token ids and token type ids per pair, premise first.

        The premise is truncated to fit ``max_length``; the hypothesis (the claim) is kept
        whole. Only a hypothesis longer than ``max_length`` minus the special tokens and 8
        premise tokens is itself cut, with a warning: there is no other way to fit it.
        """
        self.load()
        tok = self._tokenizer
        n_special = tok.num_special_tokens_to_add(is_pair=True)
        out = []
        for premise, hypothesis in pairs:
            p_enc = tok.encode(premise, add_special_tokens=False)
            h_enc = tok.encode(hypothesis, add_special_tokens=False)
            room = self._max_length - n_special - len(h_enc.ids)
            if room < 8:
                log.warning(
                    "hypothesis of %d tokens cut to fit %d", len(h_enc.ids), self._max_length
                )
                h_enc.truncate(self._max_length - n_special - 8)
                room = 8
            if len(p_enc.ids) > room:
                p_enc.truncate(room)
            merged = tok.post_process(p_enc, h_enc, add_special_tokens=True)
            out.append((list(merged.ids), list(merged.type_ids)))
        return out

    def logits(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        """Raw logits, float32, shape (n, 3), columns in :data:`LABEL_ORDER`."""
        self.load()
        assert self._columns is not None
        if not pairs:
            return np.zeros((0, 3), dtype=np.float32)
        encoded = self.encode(pairs)
        out = np.zeros((len(pairs), 3), dtype=np.float32)
        order = sorted(range(len(pairs)), key=lambda i: len(encoded[i][0]))
        for s in range(0, len(order), self.batch_size):
            idx = order[s : s + self.batch_size]
            width = max(len(encoded[i][0]) for i in idx)
            ids = np.full((len(idx), width), self._pad_id, dtype=np.int64)
            types = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for r, i in enumerate(idx):
                tok_ids, type_ids = encoded[i]
                ids[r, : len(tok_ids)] = tok_ids
                types[r, : len(type_ids)] = type_ids
                mask[r, : len(tok_ids)] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._input_names:
                feeds["token_type_ids"] = types
            raw = self._session.run(None, feeds)[0]
            out[idx] = raw[:, self._columns]
        return out

    def classify(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        """Probabilities for (premise, hypothesis) pairs, all in one call.

        Returns:
            float32, shape (n, 3), columns SUPPORT, CONTRADICT, NO_EVIDENCE; rows sum to 1.
            When ``calibrated``: temperature-scaled, passed through the feature layer, then
            shifted by :attr:`class_offsets` (:attr:`class_offsets_long` for a premise over
            :data:`~verifai_desktop.verify.features.SHORT_PREMISE_MAX_WORDS` words):
            ``p_k * exp(b_k)``, renormalised, a change of class priors (Saerens, Latinne &
            Decaestecker 2002, Neural Computation 14(1)), chosen on the dev mix per premise
            granularity so that every class is predicted on every dev set.
        """
        probs = softmax(self.logits(pairs), self.temperature)
        if self._feature_layer is not None and len(pairs):
            probs = self._feature_layer.apply(probs, pairs)
        if len(pairs) and (self._offsets.any() or self._offsets_long.any()):
            probs = shift_priors(probs, pairs, self._offsets, self._offsets_long)
        return probs


def shift_priors(
    probs: NDArray[np.floating[Any]],
    pairs: Sequence[tuple[str, str]],
    short: NDArray[np.float64],
    long: NDArray[np.float64],
) -> NDArray[np.float32]:
    """``probs`` times ``exp(offsets)``, renormalised per row (Saerens et al. 2002).

    Args:
        probs: shape (n, 3), columns in :data:`LABEL_ORDER`.
        pairs: the n (premise, hypothesis) pairs; a premise of at most
            :data:`~verifai_desktop.verify.features.SHORT_PREMISE_MAX_WORDS` words gets
            ``short``, a longer one ``long``.
        short, long: log-prior offsets, shape (3,).

    Returns:
        float32, shape (n, 3); rows sum to 1.
    """
    is_short = short_premise_mask([p for p, _ in pairs])[:, None]
    shifted = np.asarray(probs, dtype=np.float64) * np.exp(np.where(is_short, short, long))
    out: NDArray[np.float32] = (shifted / shifted.sum(axis=1, keepdims=True)).astype(np.float32)
    return out


def _offsets_array(values: Sequence[float]) -> NDArray[np.float64]:
    arr = np.asarray(values, dtype=np.float64).reshape(-1)
    if arr.shape != (3,) or not np.isfinite(arr).all():
        raise ValueError(f"class offsets must be 3 finite numbers, got {list(values)!r}")
    return arr


def get_verifier(name_or_path: str) -> OnnxVerifier:
    """A verifier by catalog name (``"verifai-minilm-nli"``) or folder path.

    Raises:
        ModelNotFound: neither a known name nor an existing folder.
    """
    if name_or_path in ("", BUNDLED_NAME, "bundled"):
        return OnnxVerifier(None)
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return OnnxVerifier(path)
    candidate = models_dir() / name_or_path
    if candidate.is_dir():
        return OnnxVerifier(candidate)
    raise ModelNotFound(
        name_or_path,
        f"give an exported verifier folder (model.onnx, tokenizer.json, config.json), "
        f"or use {BUNDLED_NAME!r}",
    )
