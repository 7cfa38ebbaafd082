"""The usearch HNSW index: build, search, remove, save/load with its generation, rebuild."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from verifai_desktop.index.vector import VectorIndex

DIM = 16


def _unit(rows: NDArray[np.float64]) -> NDArray[np.float32]:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    out: NDArray[np.float32] = (np.asarray(rows) / norms).astype(np.float32)
    return out


def _known() -> tuple[list[int], NDArray[np.float32], NDArray[np.float32]]:
    """Five chunks whose exact cosines with the query are 1.0, 0.8, 0.6, 0.0 and -0.6."""
    q = np.zeros(DIM)
    q[0] = 1.0
    rows = []
    for cos in (1.0, 0.8, 0.6, 0.0, -0.6):
        v = np.zeros(DIM)
        v[0] = cos
        v[1] = np.sqrt(1.0 - cos * cos)
        rows.append(v)
    return [105, 7, 42, 3, 900], _unit(np.array(rows)), _unit(q[None, :])[0]


def _index(tmp_path: Path) -> VectorIndex:
    return VectorIndex(tmp_path / "vectors.usearch", tmp_path / "vectors.json")


def test_search_orders_by_cosine_and_reports_it(tmp_path: Path) -> None:
    ids, vectors, query = _known()
    index = _index(tmp_path)
    assert len(index) == 0 and index.search(query, 10) == [] and index.generation() == -1
    index.add(ids, vectors)
    assert len(index) == 5
    hits = index.search(query, 10)
    assert [cid for cid, _ in hits] == [105, 7, 42, 3, 900]
    # int8 quantised graph: cosines are approximate (the retriever rescores them exactly).
    assert [cos for _, cos in hits] == pytest.approx([1.0, 0.8, 0.6, 0.0, -0.6], abs=0.02)
    assert [cid for cid, _ in index.search(query, 2)] == [105, 7]
    assert index.search(query, 0) == []


def test_remove_save_load_and_generation(tmp_path: Path) -> None:
    ids, vectors, query = _known()
    index = _index(tmp_path)
    index.add(ids, vectors)
    index.remove([105, 12345])  # an absent id is ignored
    assert [cid for cid, _ in index.search(query, 10)] == [7, 42, 3, 900]
    index.save(generation=4)
    assert index.generation() == 4
    assert not (tmp_path / "vectors.usearch.tmp").exists()

    reopened = _index(tmp_path)
    assert len(reopened) == 4 and reopened.generation() == 4
    assert [cid for cid, _ in reopened.search(query, 10)] == [7, 42, 3, 900]


def test_rebuild_replaces_everything(tmp_path: Path) -> None:
    ids, vectors, query = _known()
    index = _index(tmp_path)
    index.add(ids, vectors)
    index.save(1)
    index.rebuild(np.array([3, 42], dtype=np.int64), vectors[[3, 2]], generation=2)
    assert len(index) == 2 and index.generation() == 2
    assert [cid for cid, _ in _index(tmp_path).search(query, 10)] == [42, 3]
    index.rebuild(np.zeros(0, dtype=np.int64), np.zeros((0, DIM), dtype=np.float32), 3)
    assert len(index) == 0
    assert not (tmp_path / "vectors.usearch").exists() and index.generation() == -1


def test_unreadable_file_is_dropped_for_a_rebuild(tmp_path: Path) -> None:
    ids, vectors, _ = _known()
    index = _index(tmp_path)
    index.add(ids, vectors)
    index.save(5)
    (tmp_path / "vectors.usearch").write_bytes(b"garbage")
    damaged = _index(tmp_path)
    assert len(damaged) == 0
    assert damaged.generation() == -1  # the sidecar is removed: the collection rebuilds it
