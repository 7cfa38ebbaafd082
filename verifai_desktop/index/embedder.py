"""Sentence embedders: the ``Embedder`` protocol and which implementation a name gets.

Every embedder runs on ONNX Runtime (:class:`~verifai_desktop.index.onnx_embedder.OnnxEmbedder`),
without PyTorch. The default model, all-MiniLM-L6-v2 (Reimers & Gurevych, Sentence-BERT, EMNLP
2019; 384 dimensions, 256 word pieces), ships exported in ``verifai_desktop/bundled/embedder/``
(``models/export_embedder.py``). Any other sentence-transformers model can be named by hub id
or local folder, e.g. VerifAI's MS MARCO bi-encoder
``sentence-transformers/msmarco-distilbert-base-tas-b``: it is exported to ONNX on first use
into ``models_dir()/embedders/<name>/``, which needs the ``torch`` extra once.

Imports in ``index/`` go one way: this module uses
:mod:`~verifai_desktop.index.onnx_embedder` (the runtime, its folder format and batch sizes)
and :mod:`~verifai_desktop.index.export` (first-use exports), which uses the runtime too.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from verifai_desktop import modelstore
from verifai_desktop.errors import MissingExtra, ModelLoadError, ModelNotFound
from verifai_desktop.index.onnx_embedder import CARD_FILE, OnnxEmbedder, read_card
from verifai_desktop.private import make_private_dir, tighten
from verifai_desktop.settings import models_dir

log = logging.getLogger(__name__)

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
BUNDLED_NAMES = frozenset({"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"})


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

    def load(self) -> None:
        """Load the model now (otherwise on first use); a no-op where nothing loads lazily.

        Raises:
            ModelNotFound, ModelLoadError, MissingExtra: the model cannot be loaded here.
        """
        ...

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed texts. Returns float32, shape (len(texts), dim), each row L2-normalised."""
        ...

    def count_tokens(self, text: str) -> int:
        """Number of word pieces in ``text`` (special tokens excluded)."""
        ...

    def count_tokens_batch(self, texts: Sequence[str]) -> list[int]:
        """:meth:`count_tokens` for many texts at once (one tokenizer call)."""
        ...


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


def exported_folder(name: str) -> Path:
    """Where a non-bundled embedder is exported on first use: ``models_dir()/embedders/<slug>``."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "model"
    return models_dir() / "embedders" / slug


def _export_is_current(source: Path, folder: Path) -> bool:
    """Whether ``folder`` holds a complete export of ``source`` as it is now."""
    from verifai_desktop.index.export import source_fingerprint  # torch-free at import

    if not (folder / CARD_FILE).is_file():
        return False
    try:
        card = read_card(folder)
    except (ModelNotFound, ModelLoadError) as exc:  # a damaged card: export again
        log.warning("embedder export %s is unreadable (%s); exporting again", folder, exc)
        return False
    return card.source_fingerprint == source_fingerprint(source)


def _is_onnx_folder(path: Path) -> bool:
    """Whether ``path`` is already an ONNX embedder folder (it has an ``embedder.json``)."""
    return (path / CARD_FILE).is_file()


def _torch_needed(name: str) -> MissingExtra:
    return MissingExtra(
        f"using the embedder {name!r} (exported to ONNX on first use)",
        "torch",
        "PyTorch and sentence-transformers",
    )


def _exported(name: str) -> Path:
    """The ONNX folder of a non-bundled embedder, exported now unless current.

    Raises:
        ModelNotFound: the model is not on this machine.
        MissingExtra: it has to be exported and the ``torch`` extra is not installed.
        ModelLoadError: the export failed or disagrees with sentence-transformers.
    """
    from verifai_desktop.index.export import export_embedder, torch_available

    source = _local_folder(name)
    if _is_onnx_folder(source):  # exported before, e.g. by models/export_embedder.py
        return source
    folder = exported_folder(name)
    if _export_is_current(source, folder):
        return folder
    if not torch_available():
        raise _torch_needed(name)
    log.info("exporting embedder %s to ONNX (first use): %s", name, folder)
    make_private_dir(folder.parent)
    export_embedder(
        source,
        folder,
        name=name,
        command=f"first use of the embedder {name!r} (verifai_desktop.index.embedder)",
        origin=f"{name} ({source})",
    )
    (folder / "query.onnx").unlink(missing_ok=True)  # the query-only export of earlier versions
    tighten(folder)
    return folder


def check_embedder(name_or_path: str) -> None:
    """Check that an embedder can be used on this machine, without loading or exporting it.

    Cheap (no ONNX Runtime, no torch, no network): collections are created only with an
    embedder that can run.

    Args:
        name_or_path: as for :func:`get_embedder`.

    Raises:
        ModelNotFound: the model is not on this machine; the message says how to get it.
        MissingExtra: it still has to be exported to ONNX and the ``torch`` extra is missing.
    """
    key = canonical_name(name_or_path)
    with _CACHE_LOCK:
        if key in _CACHE:
            return
    if key == DEFAULT_EMBEDDER:
        if not (modelstore.BUNDLED_EMBEDDER_DIR / "embedder.json").is_file():
            raise ModelNotFound(
                key,
                f"the bundled embedder is missing from {modelstore.BUNDLED_EMBEDDER_DIR}; "
                "reinstall VerifAI Desktop",
            )
        return
    from verifai_desktop.index.export import torch_available

    source = _local_folder(key)
    if _is_onnx_folder(source) or _export_is_current(source, exported_folder(key)):
        return
    if not torch_available():
        raise _torch_needed(key)


_CACHE: dict[str, Embedder] = {}
_CACHE_LOCK = threading.Lock()


def canonical_name(name_or_path: str) -> str:
    """The name an embedder is cached and recorded under (bundled aliases collapse to one)."""
    return DEFAULT_EMBEDDER if name_or_path in BUNDLED_NAMES else name_or_path


def get_embedder(name_or_path: str = DEFAULT_EMBEDDER) -> Embedder:
    """The process-wide embedder for a model name or path (created cheaply, loaded lazily).

    Args:
        name_or_path: ``"all-MiniLM-L6-v2"`` (bundled ONNX export), an ONNX embedder folder
            (``models/export_embedder.py``), or a sentence-transformers hub id or local folder
            (exported to ONNX on first use, see :func:`exported_folder`; needs the ``torch``
            extra that once).

    Returns:
        The same :class:`Embedder` instance for the same name on every call; an
        :class:`~verifai_desktop.index.onnx_embedder.OnnxEmbedder`.
    """
    key = canonical_name(name_or_path)
    with _CACHE_LOCK:
        embedder = _CACHE.get(key)
        if embedder is None:
            if key == DEFAULT_EMBEDDER:
                embedder = OnnxEmbedder(modelstore.BUNDLED_EMBEDDER_DIR, name=key)
            else:
                embedder = OnnxEmbedder(lambda: _exported(key), name=key)
            _CACHE[key] = embedder
        return embedder
