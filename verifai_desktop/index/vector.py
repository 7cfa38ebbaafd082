"""The HNSW vector index (usearch) over L2-normalised chunk embeddings.

VerifAI's memory recipe: the graph stores int8-quantised vectors (a quarter of float32) and is
used only to find candidates; the float32 vectors stay in the catalog (SQLite) and the top
candidates are rescored by exact cosine (see :mod:`verifai_desktop.retrieve`). HNSW: Malkov &
Yashunin, IEEE TPAMI 2020.

usearch is imported when the first index is created or loaded (:func:`_new_index`), so importing
this module stays cheap.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.offline import import_onnxruntime
from verifai_desktop.private import FILE_MODE, write_private_text

if TYPE_CHECKING:
    from usearch.index import Index

log = logging.getLogger(__name__)

QUANTIZATION = "i8"
CONNECTIVITY = 16  # HNSW "M"
EXPANSION_ADD = 128  # efConstruction
EXPANSION_SEARCH = 160  # ef at query time; >= the 100 candidates asked for


def _new_index(dim: int) -> Index:
    """An empty int8 cosine HNSW index of dimension ``dim`` (the one place usearch is imported)."""
    # onnxruntime must be loaded before usearch: the other order segfaults (usearch 2.26 with
    # onnxruntime 1.x in one process). The verifier and the query encoder load onnxruntime
    # later, so it is loaded here first whenever it is installed.
    with contextlib.suppress(ImportError):
        import_onnxruntime()
    from usearch.index import Index  # deferred: a native library, loaded with the first index

    return Index(
        ndim=dim,
        metric="cos",
        dtype=QUANTIZATION,
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )


def _read_sidecar(sidecar: Path) -> dict[str, int] | None:
    try:
        data = json.loads(sidecar.read_text(encoding="utf-8"))
        return {"generation": int(data["generation"]), "dim": int(data["dim"])}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def saved_generation(sidecar: Path) -> int:
    """Catalog generation recorded in a vector index's ``sidecar``; -1 when unknown.

    Reads the JSON file only: neither usearch nor ONNX Runtime is loaded.
    """
    meta = _read_sidecar(sidecar)
    return -1 if meta is None else meta["generation"]


class VectorIndex:
    """A usearch HNSW index keyed by ``chunk_id``, saved to one file plus a generation sidecar.

    Args:
        path: the ``.usearch`` file.
        sidecar: JSON file recording the catalog generation and dimension the saved file holds.
    """

    def __init__(self, path: Path, sidecar: Path) -> None:
        self.path = path
        self.sidecar = sidecar
        self._index: Index | None = None
        self._dirty = False
        meta = self._read_sidecar()
        if meta is not None and path.exists():
            try:
                self._index = self._new(int(meta["dim"]))
                self._index.load(str(path))
            except (RuntimeError, ValueError, KeyError, OSError) as exc:
                log.warning("vector index %s unreadable (%s); it will be rebuilt", path, exc)
                self._index = None
                self.sidecar.unlink(missing_ok=True)

    @staticmethod
    def _new(dim: int) -> Index:
        return _new_index(dim)

    def _read_sidecar(self) -> dict[str, int] | None:
        return _read_sidecar(self.sidecar)

    def generation(self) -> int:
        """Catalog generation of the saved file; -1 when unknown."""
        return saved_generation(self.sidecar)

    def __len__(self) -> int:
        return 0 if self._index is None else len(self._index)

    def add(self, chunk_ids: Sequence[int], vectors: NDArray[np.float32]) -> None:
        """Add vectors (float32, shape (n, dim), L2-normalised) under their chunk ids."""
        if len(chunk_ids) == 0:
            return
        if self._index is None:
            self._index = self._new(int(vectors.shape[1]))
        self._index.add(np.asarray(chunk_ids, dtype=np.uint64), vectors)
        self._dirty = True

    def remove(self, chunk_ids: Sequence[int]) -> None:
        """Remove chunks by id (ids not present are ignored)."""
        if self._index is None or len(chunk_ids) == 0:
            return
        self._index.remove(np.asarray(chunk_ids, dtype=np.uint64))
        self._dirty = True

    def save(self, generation: int) -> None:
        """Write the index to a temp file, ``os.replace`` it, then the sidecar (same way)."""
        if self._index is None:
            if self.path.exists() or self.generation() != -1:
                self.path.unlink(missing_ok=True)
                self.sidecar.unlink(missing_ok=True)
            return
        if self._dirty or not self.path.exists():
            tmp = self.path.with_suffix(".usearch.tmp")
            self._index.save(str(tmp))
            os.chmod(tmp, FILE_MODE)
            os.replace(tmp, self.path)
            self._dirty = False
        if self.generation() != generation:
            write_private_text(
                self.sidecar, json.dumps({"generation": generation, "dim": int(self._index.ndim)})
            )

    def rebuild(
        self, chunk_ids: NDArray[np.int64], vectors: NDArray[np.float32], generation: int
    ) -> None:
        """Replace the whole index with the given vectors and save it."""
        self._index = None
        if len(chunk_ids):
            self._index = self._new(int(vectors.shape[1]))
            self._index.add(chunk_ids.astype(np.uint64), vectors)
        self._dirty = True
        self.sidecar.unlink(missing_ok=True)
        self.save(generation)

    def search(self, query: NDArray[np.float32], limit: int) -> list[tuple[int, float]]:
        """Approximate nearest neighbours of one query vector (float32, shape (dim,)).

        Returns:
            ``(chunk_id, approximate cosine)`` pairs, best first.
        """
        if self._index is None or len(self._index) == 0 or limit <= 0:
            return []
        matches = self._index.search(query, min(limit, len(self._index)))
        return [
            (int(k), 1.0 - float(d)) for k, d in zip(matches.keys, matches.distances, strict=True)
        ]
