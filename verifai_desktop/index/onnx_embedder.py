"""Sentence embeddings with ONNX Runtime: what runs every embedder, without PyTorch.

An embedder folder (written by :func:`verifai_desktop.index.export.export_embedder`; the bundled
one is ``verifai_desktop/bundled/embedder/all-MiniLM-L6-v2``) holds::

    model.onnx      inputs input_ids, attention_mask [, token_type_ids]: int64 (batch, tokens);
                    output sentence_embedding: float32 (batch, dim), pooled and L2-normalised
                    inside the graph, as the sentence-transformers pipeline does
    tokenizer.json  the model's fast tokenizer (Hugging Face ``tokenizers``)
    embedder.json   name, dim, max_tokens, pooling, int8, the sha256 of every file, the command
                    that made it, source and licence

Only ``onnxruntime``, ``tokenizers`` and numpy are used here, and nothing else of ``index/``:
:mod:`~verifai_desktop.index.export` writes the folders this runs, and
:mod:`~verifai_desktop.index.embedder` picks it for a name.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.errors import MissingExtra, ModelLoadError, ModelNotFound
from verifai_desktop.hardware import choose_providers
from verifai_desktop.offline import import_onnxruntime

log = logging.getLogger(__name__)

CARD_FILE = "embedder.json"
TOKENIZER_FILE = "tokenizer.json"
OUTPUT_NAME = "sentence_embedding"
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
"""Graph inputs an export may have, in this order (token_type_ids only for BERT-like models)."""
EMBED_BATCH_SIZE = 64
"""Texts per ONNX Runtime run (sorted by length first, so a batch holds little padding)."""
SMALL_BATCH = 8
"""Inputs of at most this many texts (queries) are embedded on one thread: intra-op threads
cost more than they give on tiny inputs, and on a busy CPU they spin (10x slower measured on
2 loaded cores: ~100 ms vs ~1 s per query)."""
PAD_MULTIPLE = 8
"""Batches are padded to a width that is a multiple of this. ONNX Runtime's float32 MatMul
(mean pooling sums over tokens with one) adds the last few products of a row in another order
when its length is not a multiple of 4, so a text alone and the same text padded in a batch
came out up to 3e-8 apart; with widths a multiple of 4 or 8 they are bit-identical (measured,
ONNX Runtime 1.32 on x86-64)."""


@dataclass(frozen=True, slots=True)
class EmbedderCard:
    """What ``embedder.json`` says about an embedder folder.

    Attributes:
        name: model name (e.g. ``all-MiniLM-L6-v2``).
        dim: vector dimension.
        max_tokens: tokens per input, [CLS]/[SEP] included; longer inputs are truncated.
        pooling: ``"mean"`` or ``"cls"`` (done inside the graph).
        int8: weights quantized to int8.
        lowercase: texts are lowercased before tokenizing (sentence-transformers
            ``do_lower_case``).
        pad_token_id: id used to pad a batch.
        onnx_file: the model file, relative to the folder.
        source_fingerprint: fingerprint of the source model folder (exports made on first use).
    """

    name: str
    dim: int
    max_tokens: int
    pooling: str
    int8: bool
    lowercase: bool
    pad_token_id: int
    onnx_file: str
    source_fingerprint: str


def read_card(folder: Path) -> EmbedderCard:
    """Read ``folder/embedder.json``.

    Raises:
        ModelNotFound: the folder has no ``embedder.json``.
        ModelLoadError: the file is not valid JSON or lacks a field.
    """
    path = Path(folder) / CARD_FILE
    if not path.is_file():
        raise ModelNotFound(
            str(folder), f"the folder has no {CARD_FILE}; export a model into it first"
        )
    try:
        raw = json.loads(path.read_text("utf-8"))
        return EmbedderCard(
            name=str(raw["name"]),
            dim=int(raw["dim"]),
            max_tokens=int(raw["max_tokens"]),
            pooling=str(raw["pooling"]),
            int8=bool(raw["int8"]),
            lowercase=bool(raw.get("lowercase", False)),
            pad_token_id=int(raw.get("pad_token_id", 0)),
            onnx_file=str(raw.get("onnx_file", "model.onnx")),
            source_fingerprint=str(raw.get("source_fingerprint", "")),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise ModelLoadError(path, f"not a valid embedder card ({exc!r})") from exc


def _all_cores() -> int:
    """Intra-op threads for big inputs: ``OMP_NUM_THREADS`` when set, else every core."""
    pinned = os.environ.get("OMP_NUM_THREADS", "")
    if pinned.isdigit() and int(pinned) > 0:
        return int(pinned)
    return max(1, os.cpu_count() or 1)


@dataclass(frozen=True, slots=True)
class _Loaded:
    card: EmbedderCard
    folder: Path
    counter: Any  # tokenizers.Tokenizer: no truncation, no special tokens asked
    encoder: Any  # tokenizers.Tokenizer: truncated to max_tokens


class OnnxEmbedder:
    """An :class:`~verifai_desktop.index.embedder.Embedder` over an exported ONNX model.

    Constructing it reads nothing; the card and tokenizer load on first use, and two ONNX
    Runtime sessions are created when first needed: one on a single intra-op thread for small
    inputs (at most :data:`SMALL_BATCH` texts: queries), one on every core for big ones
    (ingest). Thread-safe.

    Args:
        folder: the embedder folder, or a function returning it, called once on first use
            (where a model is exported on first use, see
            :func:`verifai_desktop.index.embedder.get_embedder`).
        name: the name this embedder is known by; default: the folder's path (required
            when ``folder`` is a function).
        providers: ONNX Runtime providers for big inputs, in order of preference (default
            CUDA when available, then CPU). Small inputs always run on the CPU.
    """

    def __init__(
        self,
        folder: Path | Callable[[], Path],
        *,
        name: str | None = None,
        providers: Sequence[str] | None = None,
    ) -> None:
        self._locate: Callable[[], Path] | None = None
        self._folder: Path | None = None
        if callable(folder):
            if name is None:
                raise ValueError("an embedder whose folder is found on first use needs a name")
            self._locate = folder
            self.name = name
        else:
            self._folder = Path(folder)
            self.name = name if name is not None else str(folder)
        self._providers = tuple(providers) if providers else None
        self._lock = threading.Lock()
        self._loaded: _Loaded | None = None
        self._sessions: dict[bool, Any] = {}

    # -- loading ---------------------------------------------------------------------------

    def _load(self) -> _Loaded:
        with self._lock:
            if self._loaded is None:
                self._loaded = self._read()
            return self._loaded

    def _read(self) -> _Loaded:
        if self._folder is None:
            assert self._locate is not None
            self._folder = Path(self._locate())
        folder = self._folder
        card = read_card(folder)
        from tokenizers import Tokenizer  # deferred: native, loaded with the model

        tok_path = folder / TOKENIZER_FILE
        try:
            counter = Tokenizer.from_file(str(tok_path))
            encoder = Tokenizer.from_file(str(tok_path))
        except Exception as exc:  # tokenizers raises a bare Exception for a bad file
            raise ModelLoadError(tok_path, f"cannot read the tokenizer ({exc})") from exc
        counter.no_truncation()
        counter.no_padding()
        # sentence-transformers: truncation="longest_first", max_length=max_seq_length.
        encoder.enable_truncation(max_length=card.max_tokens, strategy="longest_first")
        encoder.no_padding()
        return _Loaded(card, folder, counter, encoder)

    def _session(self, small: bool) -> tuple[Any, tuple[str, ...]]:
        """The session for small (one thread, CPU) or big inputs, created on first use."""
        loaded = self._load()
        with self._lock:
            session = self._sessions.get(small)
            if session is None:
                session = self._create_session(loaded, small)
                self._sessions[small] = session
        inputs = tuple(i.name for i in session.get_inputs())
        return session, inputs

    def _create_session(self, loaded: _Loaded, small: bool) -> Any:
        try:
            ort = import_onnxruntime()  # deferred: native; the app starts without it
        except ImportError as exc:
            raise MissingExtra(
                f"the embedder {self.name!r}", "cpu", "ONNX Runtime (or the 'gpu' extra)"
            ) from exc
        path = loaded.folder / loaded.card.onnx_file
        if not path.is_file():
            raise ModelLoadError(path, "file missing from the embedder folder; export it again")
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        opts.inter_op_num_threads = 1
        if small:
            # Intra-op threads cost more than they give on a query, and spin on a busy CPU.
            opts.intra_op_num_threads = 1
            providers = ["CPUExecutionProvider"]
        else:
            opts.intra_op_num_threads = _all_cores()
            # Threads sleep between ops instead of spinning: the parser process works beside
            # the ingest's embedding, and spinning threads took its CPU (docs/clean ingest
            # 63.7 s spinning, 52.4 s not, int8 compute; issue 40 item 7).
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
            providers = choose_providers(ort.get_available_providers(), self._providers)
        try:
            session = ort.InferenceSession(str(path), opts, providers=providers)
        except Exception as exc:  # onnxruntime raises its own exception types
            raise ModelLoadError(path, str(exc)) from exc
        names = {i.name for i in session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= names or not names <= set(INPUT_NAMES):
            raise ModelLoadError(path, f"unexpected graph inputs {sorted(names)}")
        log.info(
            "embedder %s loaded from %s (%s, %s)",
            self.name,
            path,
            session.get_providers()[0],
            "1 thread" if small else f"{opts.intra_op_num_threads} threads",
        )
        return session

    def load(self) -> None:
        """Load the card, the tokenizer and the query session now (otherwise on first use).

        Raises:
            ModelNotFound: the folder (or the model to export) is not on this machine.
            ModelLoadError: a file is missing or cannot be read.
            MissingExtra: ONNX Runtime is not installed, or a model to export needs PyTorch.
        """
        self._session(small=True)

    @property
    def folder(self) -> Path:
        """The embedder folder (exports the model first where that is how it is made)."""
        return self._load().folder

    @property
    def card(self) -> EmbedderCard:
        """The folder's ``embedder.json``."""
        return self._load().card

    # -- the Embedder protocol -------------------------------------------------------------

    @property
    def dim(self) -> int:
        """Vector dimension (384 for all-MiniLM-L6-v2)."""
        return self.card.dim

    @property
    def max_tokens(self) -> int:
        """Tokens per input, [CLS]/[SEP] included (256 for all-MiniLM-L6-v2)."""
        return self.card.max_tokens

    def _texts(self, texts: Sequence[str]) -> list[str]:
        return [t.lower() for t in texts] if self.card.lowercase else list(texts)

    def count_tokens(self, text: str) -> int:
        """Number of word pieces in ``text``, special tokens excluded, nothing truncated."""
        return self.count_tokens_batch([text])[0]

    def count_tokens_batch(self, texts: Sequence[str]) -> list[int]:
        """Word-piece counts of many texts in one tokenizer call, special tokens excluded."""
        if not texts:
            return []
        encodings = self._load().counter.encode_batch(self._texts(texts), add_special_tokens=False)
        return [len(e.ids) for e in encodings]

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed texts, truncated to :attr:`max_tokens` as sentence-transformers does.

        Texts are run in batches of :data:`EMBED_BATCH_SIZE` sorted by length (less padding).
        A text's vector does not depend on the other texts: pooling is masked, int8 weights are
        quantized per block, never per batch, and widths are rounded up to :data:`PAD_MULTIPLE`
        so a text alone and in a batch is summed in the same order (bit-identical vectors).

        Returns:
            float32, shape (len(texts), dim), rows L2-normalised, in the order of ``texts``.
        """
        loaded = self._load()
        if not texts:
            return np.zeros((0, loaded.card.dim), dtype=np.float32)
        session, inputs = self._session(small=len(texts) <= SMALL_BATCH)
        encodings = loaded.encoder.encode_batch(self._texts(texts))
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(texts))
        order = np.argsort(lengths, kind="stable")
        out = np.empty((len(texts), loaded.card.dim), dtype=np.float32)
        for start in range(0, len(texts), EMBED_BATCH_SIZE):
            rows = order[start : start + EMBED_BATCH_SIZE]
            width = -(-int(lengths[rows].max()) // PAD_MULTIPLE) * PAD_MULTIPLE
            ids = np.full((len(rows), width), loaded.card.pad_token_id, dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            types = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                enc = encodings[i]
                n = len(enc.ids)
                ids[r, :n] = enc.ids
                mask[r, :n] = 1
                types[r, :n] = enc.type_ids
            arrays = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            feeds = {name: arrays[name] for name in inputs}
            out[rows] = session.run([OUTPUT_NAME], feeds)[0]
        return out
