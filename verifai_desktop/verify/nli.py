"""The NLI verifier: an exported sequence-classification model run with ONNX Runtime.

A verifier folder (made by ``verifai models export-verifier`` or shipped in
``verifai_desktop/bundled/verifier``) holds:

* ``model.onnx`` (or the file named in ``verifier.json``): inputs ``input_ids``,
  ``attention_mask`` and, for BERT-like models, ``token_type_ids``; output ``logits`` (n, k).
* ``tokenizer.json`` (Hugging Face fast tokenizer) plus its configuration files.
* ``config.json``: the Hugging Face config whose ``id2label`` says which logit is which class,
  so any label order works (VerifAI's DeBERTa uses NO_EVIDENCE / SUPPORT / CONTRADICT).
* ``verifier.json`` (optional): ``onnx_file``, ``max_length``, ``temperature`` (fitted on
  SciFact dev, Guo et al. 2017) and ``feature_layer`` (see :mod:`verifai_desktop.verify.features`).
* ``model_card.json`` (optional): base model, data, licences and measured figures.

Probabilities are always returned in domain order ``(SUPPORT, CONTRADICT, NO_EVIDENCE)``.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.domain import Claim, NliLabel, Passage, Verdict
from verifai_desktop.errors import ModelLoadError, ModelNotFound
from verifai_desktop.verify.premises import Granularity, sentence_windows

log = logging.getLogger(__name__)

LABEL_ORDER: tuple[NliLabel, ...] = (NliLabel.SUPPORT, NliLabel.CONTRADICT, NliLabel.NO_EVIDENCE)
"""Column order of every probability array the verifier returns."""

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
    )


class Verifier(Protocol):
    """An NLI verifier: (premise, hypothesis) pairs in, class probabilities out."""

    def classify(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        """Probabilities, float32, shape (n, 3), columns in :data:`LABEL_ORDER`."""
        ...


def softmax(logits: NDArray[np.floating[Any]], temperature: float = 1.0) -> NDArray[np.float32]:
    """Row-wise softmax of ``logits / temperature``; float32, same shape."""
    z: NDArray[np.float64] = np.asarray(logits, dtype=np.float64) / temperature
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    out: NDArray[np.float32] = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    return out


def aggregate_windows(probs: NDArray[np.float32]) -> tuple[NDArray[np.float32], int]:
    """Aggregate sentence-window probabilities by maximum.

    The window with the highest evidence probability ``max(P(SUPPORT), P(CONTRADICT))``
    decides: its distribution is the passage's.

    Args:
        probs: float32, shape (n_windows, 3), columns in :data:`LABEL_ORDER`.

    Returns:
        The chosen window's probabilities (shape (3,)) and its index.
    """
    best = int(np.argmax(probs[:, :2].max(axis=1)))
    return probs[best], best


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
        calibrated: apply the temperature and feature layer of ``verifier.json``.
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
        self._card: ModelCard | None = None
        if not self.model_dir.is_dir():
            raise ModelNotFound(
                str(self.model_dir), "export one with `verifai models export-verifier`"
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
            import onnxruntime as ort
            from tokenizers import Tokenizer

            cfg_path = self.model_dir / "verifier.json"
            self._config = json.loads(cfg_path.read_text("utf-8")) if cfg_path.is_file() else {}
            onnx_path = self.model_dir / str(self._config.get("onnx_file", "model.onnx"))
            tok_path = self.model_dir / "tokenizer.json"
            for needed in (onnx_path, tok_path, self.model_dir / "config.json"):
                if not needed.is_file():
                    raise ModelLoadError(
                        needed,
                        "file missing from the verifier folder; "
                        "re-export it with `verifai models export-verifier`",
                    )
            self._columns = self._label_columns()
            available = ort.get_available_providers()
            wanted = self._providers or ("CUDAExecutionProvider", "CPUExecutionProvider")
            providers = [p for p in wanted if p in available] or ["CPUExecutionProvider"]
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
                from verifai_desktop.verify.features import feature_layer_from_dict

                self._feature_layer = feature_layer_from_dict(self._config["feature_layer"])
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
            Temperature-scaled and passed through the feature layer when ``calibrated``.
        """
        probs = softmax(self.logits(pairs), self.temperature)
        if self._feature_layer is not None and len(pairs):
            probs = self._feature_layer.apply(probs, pairs)
        return probs

    def classify_passages(
        self,
        items: Sequence[tuple[str, str]],
        *,
        granularity: Granularity = "passage",
        sentence_spans: Sequence[Sequence[tuple[int, int]] | None] | None = None,
    ) -> tuple[NDArray[np.float32], tuple[tuple[int, int], ...]]:
        """Probabilities for (passage text, claim) items at a premise granularity.

        Args:
            items: ``(passage_text, claim)`` pairs.
            granularity: ``"passage"`` (whole text as premise) or ``"sentences"`` (1-3
                sentence windows, aggregated by maximum, all windows in one batch).
            sentence_spans: optional sentence offsets per passage (split here when None).

        Returns:
            Probabilities, float32, shape (n, 3) in :data:`LABEL_ORDER`, and per item the
            ``(char_start, char_end)`` of the deciding premise inside the passage text.
        """
        if granularity == "passage":
            return self.classify(items), tuple((0, len(t)) for t, _ in items)
        if granularity != "sentences":
            raise ValueError(f"unknown premise granularity {granularity!r}")
        windows: list[tuple[int, int]] = []
        owners: list[int] = []
        flat: list[tuple[str, str]] = []
        for n, (text, claim) in enumerate(items):
            spans = sentence_spans[n] if sentence_spans is not None else None
            for start, end in sentence_windows(text, spans) or ((0, len(text)),):
                windows.append((start, end))
                owners.append(n)
                flat.append((text[start:end], claim))
        probs = self.classify(flat)
        owner_arr = np.asarray(owners)
        out = np.zeros((len(items), 3), dtype=np.float32)
        chosen: list[tuple[int, int]] = []
        for n in range(len(items)):
            rows = np.flatnonzero(owner_arr == n)
            agg, best = aggregate_windows(probs[rows])
            out[n] = agg
            chosen.append(windows[int(rows[best])])
        return out, tuple(chosen)

    def verify(
        self,
        claims: Sequence[tuple[Claim, Passage]],
        *,
        granularity: Granularity = "sentences",
    ) -> tuple[Verdict, ...]:
        """Verdicts for (claim, cited passage) pairs, all scored in one batch.

        In ``"sentences"`` mode the verdict's ``evidence`` is the deciding sentence window.
        """
        items = [(p.text, c.text) for c, p in claims]
        spans = [p.sentence_spans or None for _, p in claims]
        probs, chosen = self.classify_passages(items, granularity=granularity, sentence_spans=spans)
        verdicts = []
        for (claim, passage), row, (start, end) in zip(claims, probs, chosen, strict=True):
            label = LABEL_ORDER[int(np.argmax(row))]
            evidence = passage.text[start:end] if granularity == "sentences" else ""
            verdicts.append(
                Verdict(
                    passage_number=claim.passage_number,
                    label=label,
                    p_support=float(row[0]),
                    p_contradict=float(row[1]),
                    p_no_evidence=float(row[2]),
                    evidence=evidence,
                    evidence_span=(start, end) if evidence else (0, 0),
                )
            )
        return tuple(verdicts)


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
    try:
        from verifai_desktop.settings import models_dir

        candidate = models_dir() / name_or_path
        if candidate.is_dir():
            return OnnxVerifier(candidate)
    except Exception:  # settings may be unavailable in stripped-down tools
        log.debug("models_dir lookup failed", exc_info=True)
    raise ModelNotFound(
        name_or_path,
        "give a verifier folder made by "
        "`verifai models export-verifier`, or use 'verifai-minilm-nli'",
    )
