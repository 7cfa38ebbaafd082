"""Retrieval evaluation on BEIR datasets: ingest the corpus once, run every search mode, score.

``verifai eval retrieval`` goes through :func:`evaluate_modes`, which calls the real
:class:`verifai_desktop.retrieve.Retriever` once per query and mode, turns the returned chunks
into a document ranking (a document scores by its best chunk) and computes nDCG@10,
Recall@100, MAP@10 and P@10 (:mod:`verifai_desktop.evaluate.metrics`, BEIR/trec_eval rules).

The weight sweep (VerifAI's Table I: lexical weight 0.0 .. 1.0; Bojic et al., 2024) uses
:func:`collect_candidates` + :func:`fuse_weighted`: each engine's candidate list is fetched
once per query, then the weighted fusion of VerifAI's hybrid retriever (each engine's scores
divided by its top score, ``w * lexical + (1 - w) * semantic``, missing scores 0) is recomputed
in numpy for every weight. :func:`check_fusion_agrees` compares that replica with the real
hybrid path at one weight.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.domain import Passage, Progress
from verifai_desktop.errors import Cancelled, VerifaiError
from verifai_desktop.evaluate.beir import (
    BeirDataset,
    corpus_fingerprint,
    doc_id_from_key,
    iter_documents,
    rank_documents,
)
from verifai_desktop.evaluate.metrics import Qrels, RetrievalMetrics, evaluate_run
from verifai_desktop.settings import SEARCH_MODES, SearchMode, Settings, collections_dir

if TYPE_CHECKING:
    from verifai_desktop.store.collection import Collection
    from verifai_desktop.index.embedder import Embedder
    from verifai_desktop.retrieve import Retriever

log = logging.getLogger(__name__)

ProgressFn = Callable[[Progress], None]

DOC_DEPTH = 100
"""Documents ranked per query: Recall@100 needs 100."""

CHUNK_DEPTH = 300
"""Chunks fetched per query and engine before aggregating to documents; SciFact abstracts
average ~1.5 chunks, so 300 chunks cover at least 100 distinct documents."""

SWEEP_WEIGHTS: tuple[float, ...] = tuple(round(0.1 * i, 1) for i in range(11))
"""Lexical weights of VerifAI's Table I sweep: 0.0, 0.1, ..., 1.0."""

FINGERPRINT_FILE = "beir_corpus.json"
"""File in a collection folder recording which BEIR corpus it holds."""


class BeirCollectionMismatchError(VerifaiError):
    """A collection named for reuse holds something other than the BEIR corpus."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(
            f"collection {name!r} does not hold this BEIR corpus ({reason}); pass another "
            "--collection name, or none to use a dedicated beir-<dataset> collection"
        )


# --------------------------------------------------------------------------------------------
# Collection set-up


def default_collection_name(dataset: BeirDataset, *, include_title: bool = True) -> str:
    """Name of the dedicated collection for a dataset, e.g. ``"beir-scifact"``.

    Without titles the name gets ``-notitle``, so the two variants never overwrite each other.
    """
    return f"beir-{dataset.name}{'' if include_title else '-notitle'}".lower()


def _fingerprint_path(name: str) -> Path:
    return collections_dir() / name / FINGERPRINT_FILE


def _read_fingerprint(name: str) -> dict[str, object]:
    path = _fingerprint_path(name)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _collection_exists(name: str) -> bool:
    from verifai_desktop.store.collection import list_collections

    return name in list_collections()


def open_beir_collection(
    dataset: BeirDataset,
    name: str | None = None,
    *,
    include_title: bool = True,
    settings: Settings | None = None,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
) -> Collection:
    """Open the collection holding ``dataset``'s corpus, ingesting it if needed.

    A collection is reused as it is when its recorded corpus fingerprint
    (:func:`corpus_fingerprint`) and document count match the dataset. Otherwise the corpus is
    ingested through ``ingest_documents`` (incremental: unchanged documents are skipped), which
    takes minutes for SciFact's 5,183 abstracts on a laptop CPU.

    Args:
        dataset: the loaded BEIR dataset.
        name: collection name; ``None`` uses :func:`default_collection_name`.
        include_title: index ``title + text`` (BEIR convention) rather than the text alone.
        settings: settings for a new collection (embedder); ``None`` loads the user's.
        progress: ingest progress callback.
        cancel: set to stop ingesting (raises ``Cancelled``).

    Returns:
        The open collection; the caller closes it.

    Raises:
        BeirCollectionMismatchError: ``name`` was given explicitly and that collection holds
            documents that are not in this corpus.
    """
    from verifai_desktop.store.collection import Collection
    from verifai_desktop.store.writer import ingest_documents

    explicit = name is not None
    name = name or default_collection_name(dataset, include_title=include_title)
    fingerprint = corpus_fingerprint(dataset.corpus, include_title=include_title)
    exists = _collection_exists(name)
    if exists:
        collection = Collection.open(name, settings=settings)
        n_docs = len(collection.documents())
        if _read_fingerprint(name).get("fingerprint") == fingerprint and n_docs == len(
            dataset.corpus
        ):
            log.info("reusing collection %s (%d documents)", name, n_docs)
            return collection
        keys = {_record_key(r) for r in collection.documents()}
        corpus_ids = {d.doc_id for d in dataset.corpus}
        foreign = {k for k in keys if doc_id_from_key(k) not in corpus_ids}
        if explicit and foreign:
            collection.close()
            raise BeirCollectionMismatchError(
                name, f"{len(foreign)} documents are not in the corpus"
            )
        if foreign:
            collection.close()
            from verifai_desktop.store.collection import delete_collection

            log.warning("collection %s holds %d foreign documents; rebuilding", name, len(foreign))
            delete_collection(name)
            collection = Collection.open(name, create=True, settings=settings)
    else:
        if explicit:
            log.info("collection %s does not exist; creating it", name)
        collection = Collection.open(name, create=True, settings=settings)
    try:
        ingest_documents(
            collection,
            iter_documents(dataset.corpus, include_title=include_title),
            total=len(dataset.corpus),
            progress=progress,
            cancel=cancel,
        )
    except BaseException:
        collection.close()
        raise
    path = _fingerprint_path(name)
    path.write_text(
        json.dumps(
            {
                "dataset": dataset.name,
                "documents": len(dataset.corpus),
                "include_title": include_title,
                "fingerprint": fingerprint,
            },
            indent=2,
        ),
        encoding="utf-8",
    )
    return collection


def collection_is_current(
    dataset: BeirDataset, name: str | None = None, *, include_title: bool = True
) -> bool:
    """True when collection ``name`` (default ``beir-<dataset>``) holds exactly this corpus.

    Compares the corpus fingerprint recorded at the last complete ingest; cheap (no opening).
    """
    name = name or default_collection_name(dataset, include_title=include_title)
    recorded = _read_fingerprint(name)
    return _collection_exists(name) and recorded.get("fingerprint") == corpus_fingerprint(
        dataset.corpus, include_title=include_title
    )


def _record_key(record: object) -> str:
    """The source key of a catalog record (``beir:<id>``), whatever field holds it."""
    for attr in ("source", "key", "path"):
        value = getattr(record, attr, None)
        if value is not None:
            return str(value)
    return ""


def passage_doc_id(passage: Passage) -> str | None:
    """BEIR corpus id of a retrieved passage (its document path is the ``beir:<id>`` key)."""
    return doc_id_from_key(str(passage.path))


# --------------------------------------------------------------------------------------------
# Query embeddings computed in one batch


class PrimedEmbedder:
    """An :class:`~verifai_desktop.index.embedder.Embedder` that serves query vectors computed
    ahead in batches.

    Queries are embedded once, before any search is timed, so evaluation runs time the index
    work alone and the sweep can reuse vectors. Texts not primed are embedded on demand.

    Args:
        base: the collection's embedder.
    """

    def __init__(self, base: Embedder) -> None:
        self.base = base
        self.name = base.name
        self._cache: dict[str, NDArray[np.float32]] = {}

    def prime(self, texts: Iterable[str]) -> None:
        """Embed every text not cached yet.

        Uses the wrapped embedder's own query path (``embed_query``, e.g. ONNX Runtime) when it
        has one, so the vectors are exactly those an interactive search gets; otherwise one
        batched :meth:`embed` call.
        """
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if not todo:
            return
        embed_query = getattr(self.base, "embed_query", None)
        if embed_query is not None:
            for text in todo:
                self._cache[text] = np.asarray(embed_query(text), dtype=np.float32)
            return
        vectors = self.base.embed(todo)
        self._cache.update(zip(todo, vectors, strict=True))

    @property
    def dim(self) -> int:
        """Vector dimension of the wrapped embedder."""
        return self.base.dim

    @property
    def max_tokens(self) -> int:
        """Word pieces per text of the wrapped embedder."""
        return self.base.max_tokens

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Cached vectors (float32, shape (len(texts), dim), L2-normalised)."""
        self.prime(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts]).astype(np.float32, copy=False)

    def count_tokens(self, text: str) -> int:
        """Word pieces in ``text`` (wrapped embedder)."""
        return self.base.count_tokens(text)

    def count_tokens_batch(self, texts: Sequence[str]) -> list[int]:
        """Word pieces of many texts (wrapped embedder)."""
        return self.base.count_tokens_batch(texts)


def primed_retriever(collection: Collection, queries: Iterable[str]) -> Retriever:
    """A real :class:`~verifai_desktop.retrieve.Retriever` with query vectors computed up front."""
    from verifai_desktop.retrieve import Retriever

    embedder = PrimedEmbedder(collection.embedder())
    embedder.prime(queries)
    return Retriever(collection, embedder=embedder)


# --------------------------------------------------------------------------------------------
# Real-path evaluation


@dataclass(frozen=True, slots=True)
class ModeResult:
    """Evaluation of one search mode.

    Attributes:
        mode: the search mode.
        metrics: averaged metrics.
        lexical_weight: lexical weight used (hybrid only, else ``None``).
        semantic_weight: semantic weight used (hybrid only, else ``None``).
        latency_ms: wall time of each query's search call, milliseconds, in query order.
        run: query id -> ranked corpus ids (at most 100).
    """

    mode: SearchMode
    metrics: RetrievalMetrics
    lexical_weight: float | None
    semantic_weight: float | None
    latency_ms: tuple[float, ...] = ()
    run: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def latency_percentile_ms(self, q: float) -> float:
        """Latency percentile ``q`` (0..100) in milliseconds; 0.0 without timings."""
        if not self.latency_ms:
            return 0.0
        return float(np.percentile(np.asarray(self.latency_ms), q))

    def as_dict(self) -> dict[str, object]:
        """JSON-ready summary (no run)."""
        return {
            "mode": self.mode,
            **self.metrics.as_dict(),
            "lexical_weight": self.lexical_weight,
            "semantic_weight": self.semantic_weight,
            "latency_ms_p50": self.latency_percentile_ms(50),
            "latency_ms_p95": self.latency_percentile_ms(95),
        }


def search_passages(
    retriever: Retriever,
    query: str,
    *,
    mode: SearchMode,
    depth: int,
    lexical_weight: float,
    semantic_weight: float,
    rrf_k: int,
) -> tuple[Passage, ...]:
    """One real search call asking each engine for ``depth`` chunks and returning them all."""
    passages: tuple[Passage, ...] = retriever.search(
        query,
        k=depth,
        mode=mode,
        lexical_weight=lexical_weight,
        semantic_weight=semantic_weight,
        rrf_k=rrf_k,
        candidates=depth,
    )
    return tuple(passages)


def evaluate_modes(
    collection: Collection,
    dataset: BeirDataset,
    *,
    modes: Sequence[SearchMode] = SEARCH_MODES,
    lexical_weight: float = 0.7,
    semantic_weight: float = 0.3,
    rrf_k: int = 60,
    chunk_depth: int = CHUNK_DEPTH,
    doc_depth: int = DOC_DEPTH,
    retriever: Retriever | None = None,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
) -> tuple[ModeResult, ...]:
    """Search every judged query in every mode through the real retriever and score the runs.

    Args:
        collection: collection holding the corpus (keys ``beir:<id>``).
        dataset: the BEIR split (queries and qrels).
        modes: search modes to run.
        lexical_weight: hybrid lexical weight.
        semantic_weight: hybrid semantic weight.
        rrf_k: RRF constant (Cormack et al., SIGIR 2009).
        chunk_depth: chunks asked of each engine per query (``k`` and ``candidates``).
        doc_depth: documents kept per query after max-aggregation.
        retriever: a retriever to reuse; ``None`` makes one whose query vectors are computed
            up front (:func:`primed_retriever`), so ``latency_ms`` then excludes
            query embedding (``benchmarks/search.py`` measures true per-query latency).
        progress: called after each query with stage ``"search:<mode>"``.
        cancel: set to stop; raises ``Cancelled``.

    Returns:
        One :class:`ModeResult` per mode, in ``modes`` order.

    Raises:
        Cancelled: ``cancel`` was set.
    """
    if retriever is None:
        retriever = primed_retriever(collection, dataset.queries.values())
    results: list[ModeResult] = []
    items = list(dataset.queries.items())
    for mode in modes:
        run: dict[str, tuple[str, ...]] = {}
        latency: list[float] = []
        for i, (qid, text) in enumerate(items):
            if cancel is not None and cancel.is_set():
                raise Cancelled("retrieval evaluation")
            start = time.perf_counter()
            passages = search_passages(
                retriever,
                text,
                mode=mode,
                depth=chunk_depth,
                lexical_weight=lexical_weight,
                semantic_weight=semantic_weight,
                rrf_k=rrf_k,
            )
            latency.append((time.perf_counter() - start) * 1000.0)
            run[qid] = tuple(rank_documents(passages, doc_key=passage_doc_id, depth=doc_depth))
            if progress is not None:
                progress(Progress(f"search:{mode}", i + 1, len(items), "queries"))
        metrics = evaluate_run(run, dataset.qrels)
        hybrid = mode == "hybrid"
        results.append(
            ModeResult(
                mode=mode,
                metrics=metrics,
                lexical_weight=lexical_weight if hybrid else None,
                semantic_weight=semantic_weight if hybrid else None,
                latency_ms=tuple(latency),
                run=run,
            )
        )
        log.info(
            "%s: nDCG@10 %.4f Recall@100 %.4f", mode, metrics.ndcg_at_10, metrics.recall_at_100
        )
    return tuple(results)


# --------------------------------------------------------------------------------------------
# Sweep: candidates fetched once, fusion recomputed in numpy


@dataclass(frozen=True, slots=True)
class QueryCandidates:
    """Both engines' candidate chunks for one query, aligned on the union of their chunks.

    Attributes:
        chunk_ids: catalog chunk id of each candidate, int64, shape (n,) (ties go to the lower).
        doc_ids: corpus id of each candidate chunk, shape (n,).
        lexical: raw BM25 score, float64, shape (n,); 0 where BM25 did not return the chunk.
        semantic: raw cosine similarity, float64, shape (n,); 0 where the vector engine did not.
        lexical_rank: 1-based rank in the BM25 list, int64, shape (n,); 0 where absent.
        semantic_rank: 1-based rank in the vector list, int64, shape (n,); 0 where absent.
    """

    chunk_ids: NDArray[np.int64]
    doc_ids: tuple[str, ...]
    lexical: NDArray[np.float64]
    semantic: NDArray[np.float64]
    lexical_rank: NDArray[np.int64]
    semantic_rank: NDArray[np.int64]


def _merge(lexical: Sequence[Passage], semantic: Sequence[Passage]) -> QueryCandidates:
    index: dict[int, int] = {}
    doc_ids: list[str] = []
    for p in (*lexical, *semantic):
        if int(p.chunk_id) not in index:
            index[int(p.chunk_id)] = len(doc_ids)
            doc_ids.append(passage_doc_id(p) or "")
    n = len(doc_ids)
    lex = np.zeros(n)
    sem = np.zeros(n)
    lex_rank = np.zeros(n, dtype=np.int64)
    sem_rank = np.zeros(n, dtype=np.int64)
    for rank, p in enumerate(lexical, start=1):
        i = index[int(p.chunk_id)]
        lex[i] = p.raw_lexical if p.raw_lexical is not None else p.lexical_score
        lex_rank[i] = rank
    for rank, p in enumerate(semantic, start=1):
        i = index[int(p.chunk_id)]
        sem[i] = p.raw_semantic if p.raw_semantic is not None else p.semantic_score
        sem_rank[i] = rank
    chunk_ids = np.fromiter(index, dtype=np.int64, count=n)
    return QueryCandidates(chunk_ids, tuple(doc_ids), lex, sem, lex_rank, sem_rank)


def collect_candidates(
    retriever: Retriever,
    queries: Mapping[str, str],
    *,
    chunk_depth: int = CHUNK_DEPTH,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
) -> dict[str, QueryCandidates]:
    """Fetch each engine's top ``chunk_depth`` chunks once per query (lexical and semantic modes).

    Returns:
        Query id -> :class:`QueryCandidates`.

    Raises:
        Cancelled: ``cancel`` was set.
    """
    out: dict[str, QueryCandidates] = {}
    for i, (qid, text) in enumerate(queries.items()):
        if cancel is not None and cancel.is_set():
            raise Cancelled("candidate collection")
        kwargs = {"depth": chunk_depth, "lexical_weight": 1.0, "semantic_weight": 0.0, "rrf_k": 60}
        lexical = search_passages(retriever, text, mode="lexical", **kwargs)  # type: ignore[arg-type]
        semantic = search_passages(retriever, text, mode="semantic", **kwargs)  # type: ignore[arg-type]
        out[qid] = _merge(lexical, semantic)
        if progress is not None:
            progress(Progress("candidates", i + 1, len(queries), "queries"))
    return out


def _rank_docs(c: QueryCandidates, scores: NDArray[np.float64], depth: int) -> tuple[str, ...]:
    """Max-aggregate chunk scores to documents and return the top ``depth`` corpus ids.

    Chunks are ordered as the retriever orders them (score descending, ties by ascending chunk
    id), so the first chunk met of each document is its best one.
    """
    order = np.lexsort((c.chunk_ids, -scores))
    seen: dict[str, None] = {}
    for i in order:
        doc = c.doc_ids[int(i)]
        if doc and doc not in seen:
            seen[doc] = None
            if len(seen) == depth:
                break
    return tuple(seen)


def fuse_weighted(
    candidates: Mapping[str, QueryCandidates], lexical_weight: float, *, doc_depth: int = DOC_DEPTH
) -> dict[str, tuple[str, ...]]:
    """VerifAI's hybrid fusion replayed on stored candidates.

    Each engine's raw scores are divided by that engine's top score for the query; the fused
    chunk score is ``w * lexical + (1 - w) * semantic`` (a chunk one engine did not return gets
    0 from it); documents score by their best chunk.

    Returns:
        Query id -> ranked corpus ids (at most ``doc_depth``).
    """
    run: dict[str, tuple[str, ...]] = {}
    for qid, c in candidates.items():
        lex_top = float(c.lexical.max()) if c.lexical.size else 0.0
        sem_top = float(c.semantic.max()) if c.semantic.size else 0.0
        lex = c.lexical / lex_top if lex_top > 0 else np.zeros_like(c.lexical)
        sem = c.semantic / sem_top if sem_top > 0 else np.zeros_like(c.semantic)
        fused = lexical_weight * lex + (1.0 - lexical_weight) * sem
        run[qid] = _rank_docs(c, fused, doc_depth)
    return run


def fuse_rrf(
    candidates: Mapping[str, QueryCandidates], *, rrf_k: int = 60, doc_depth: int = DOC_DEPTH
) -> dict[str, tuple[str, ...]]:
    """Reciprocal rank fusion (Cormack et al., SIGIR 2009) replayed on stored candidates.

    Returns:
        Query id -> ranked corpus ids, chunk score ``sum(1 / (rrf_k + rank))`` over engines.
    """
    run: dict[str, tuple[str, ...]] = {}
    for qid, c in candidates.items():
        fused = np.where(c.lexical_rank > 0, 1.0 / (rrf_k + c.lexical_rank), 0.0) + np.where(
            c.semantic_rank > 0, 1.0 / (rrf_k + c.semantic_rank), 0.0
        )
        run[qid] = _rank_docs(c, fused, doc_depth)
    return run


@dataclass(frozen=True, slots=True)
class SweepRow:
    """One row of the weight sweep (VerifAI Table I layout).

    Attributes:
        lexical_weight: w in ``w * lexical + (1 - w) * semantic``.
        metrics: metrics of the fused run.
    """

    lexical_weight: float
    metrics: RetrievalMetrics


def weight_sweep(
    candidates: Mapping[str, QueryCandidates],
    qrels: Qrels,
    weights: Iterable[float] = SWEEP_WEIGHTS,
    *,
    doc_depth: int = DOC_DEPTH,
) -> tuple[SweepRow, ...]:
    """Metrics of the weighted fusion for every lexical weight (default 0.0, 0.1, ..., 1.0)."""
    return tuple(
        SweepRow(w, evaluate_run(fuse_weighted(candidates, w, doc_depth=doc_depth), qrels))
        for w in weights
    )


def best_weight(rows: Sequence[SweepRow]) -> float:
    """Lexical weight with the best nDCG@10 (ties: better Recall@100, then the lower weight)."""
    best = max(
        rows, key=lambda r: (r.metrics.ndcg_at_10, r.metrics.recall_at_100, -r.lexical_weight)
    )
    return best.lexical_weight


def check_fusion_agrees(
    real: Mapping[str, Sequence[str]], replayed: Mapping[str, Sequence[str]], *, top: int = 10
) -> float:
    """Share of queries whose top-``top`` documents are identical in the real and replayed runs."""
    if not real:
        return 1.0
    same = sum(
        1 for q, docs in real.items() if tuple(docs[:top]) == tuple(replayed.get(q, ())[:top])
    )
    return same / len(real)
