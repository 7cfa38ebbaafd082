"""Retrieval evaluation on BEIR datasets: ingest the corpus once, run every search mode, score.

``verifai eval retrieval`` goes through :func:`evaluate_modes`, which calls the real
:class:`verifai_desktop.retrieve.Retriever` once per query and mode, turns the returned chunks
into a document ranking (a document scores by its best chunk) and computes nDCG@10,
Recall@100, MAP@10 and P@10 (:mod:`verifai_desktop.evaluate.metrics`, BEIR/trec_eval rules).

The weight sweep (VerifAI's Table I: lexical weight 0.0 .. 1.0; Bojic et al., 2024) uses
:func:`collect_candidates` + :func:`fuse_weighted`: each engine's candidate list is fetched
once per query, then the weighted fusion of VerifAI's hybrid retriever (each engine's scores
divided by its top score, ``w * lexical + (1 - w) * semantic``, missing scores 0) is recomputed
for every weight by the retriever's own fusion (:func:`verifai_desktop.retrieve.fused_scores`).
:func:`check_fusion_agrees` compares the replay with the real hybrid path at one weight.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.domain import Passage, Progress
from verifai_desktop.errors import BeirCollectionMismatch, Cancelled
from verifai_desktop.evaluate.beir import (
    BeirDataset,
    corpus_fingerprint,
    doc_id_from_key,
    iter_documents,
    rank_documents,
)
from verifai_desktop.evaluate.metrics import Qrels, RetrievalMetrics, evaluate_run
from verifai_desktop.index.embedder import Embedder
from verifai_desktop.retrieve import Candidates, Retriever, fused_scores, ranking
from verifai_desktop.settings import SEARCH_MODES, RetrievalSettings, SearchMode, Settings
from verifai_desktop.store.base import CollectionStore
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.folders import collection_metadata, list_collections

log = logging.getLogger(__name__)

ProgressFn = Callable[[Progress], None]

DOC_DEPTH = 100
"""Documents ranked per query: Recall@100 needs 100."""

CHUNK_DEPTH = 300
"""Chunks fetched per query and engine before aggregating to documents; SciFact abstracts
average ~1.5 chunks, so 300 chunks cover at least 100 distinct documents."""

SWEEP_WEIGHTS: tuple[float, ...] = tuple(round(0.1 * i, 1) for i in range(11))
"""Lexical weights of VerifAI's Table I sweep: 0.0, 0.1, ..., 1.0."""

FINGERPRINT_KEY = "beir_corpus"
"""Collection metadata record (``beir_corpus.json``) naming the BEIR corpus it holds."""


# --------------------------------------------------------------------------------------------
# Collection set-up


def default_collection_name(dataset: BeirDataset, *, include_title: bool = True) -> str:
    """Name of the dedicated collection for a dataset, e.g. ``"beir-scifact"``.

    Without titles the name gets ``-notitle``, so the two variants never overwrite each other.
    """
    return f"beir-{dataset.name}{'' if include_title else '-notitle'}".lower()


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
        settings: settings for a new collection (its embedder); ``None`` means the defaults.
        progress: ingest progress callback.
        cancel: set to stop ingesting (raises ``Cancelled``).

    Returns:
        The open collection; the caller closes it.

    Raises:
        BeirCollectionMismatch: ``name`` was given explicitly and that collection holds
            documents that are not in this corpus.
    """
    explicit = name is not None
    name = name or default_collection_name(dataset, include_title=include_title)
    fingerprint = corpus_fingerprint(dataset.corpus, include_title=include_title)
    if name in list_collections():
        collection = Collection.open(name, settings=settings)
        n_docs = len(collection.documents())
        if collection.metadata(FINGERPRINT_KEY).get("fingerprint") == fingerprint and (
            n_docs == len(dataset.corpus)
        ):
            log.info("reusing collection %s (%d documents)", name, n_docs)
            return collection
        keys = {r.source for r in collection.documents()}
        corpus_ids = {d.doc_id for d in dataset.corpus}
        foreign = {k for k in keys if doc_id_from_key(k) not in corpus_ids}
        if explicit and foreign:
            collection.close()
            raise BeirCollectionMismatch(name, f"{len(foreign)} documents are not in the corpus")
        if foreign:
            collection.close()
            log.warning("collection %s holds %d foreign documents; rebuilding", name, len(foreign))
            collection = Collection.create(name, settings=settings, replace=True)
    else:
        if explicit:
            log.info("collection %s does not exist; creating it", name)
        collection = Collection.open(name, create=True, settings=settings)
    try:
        collection.add_documents(
            iter_documents(dataset.corpus, include_title=include_title),
            total=len(dataset.corpus),
            progress=progress,
            cancel=cancel,
        )
        collection.set_metadata(
            FINGERPRINT_KEY,
            {
                "dataset": dataset.name,
                "documents": len(dataset.corpus),
                "include_title": include_title,
                "fingerprint": fingerprint,
            },
        )
    except BaseException:
        collection.close()
        raise
    return collection


def collection_is_current(
    dataset: BeirDataset, name: str | None = None, *, include_title: bool = True
) -> bool:
    """True when collection ``name`` (default ``beir-<dataset>``) holds exactly this corpus.

    Compares the corpus fingerprint recorded at the last complete ingest; cheap (no opening).
    """
    name = name or default_collection_name(dataset, include_title=include_title)
    recorded = collection_metadata(name, FINGERPRINT_KEY)
    return name in list_collections() and recorded.get("fingerprint") == corpus_fingerprint(
        dataset.corpus, include_title=include_title
    )


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
        """Embed every text not cached yet, in one batched :meth:`embed` call.

        A text's vector does not depend on its batch
        (:class:`~verifai_desktop.index.onnx_embedder.OnnxEmbedder`), so these are the vectors
        an interactive search gets.
        """
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if not todo:
            return
        vectors = self.base.embed(todo)
        self._cache.update(zip(todo, vectors, strict=True))

    def load(self) -> None:
        """Load the wrapped embedder now."""
        self.base.load()

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


def primed_retriever(
    collection: CollectionStore,
    queries: Iterable[str],
    settings: RetrievalSettings | None = None,
) -> Retriever:
    """A real :class:`~verifai_desktop.retrieve.Retriever` with query vectors computed up front.

    Args:
        collection: the collection to search.
        queries: texts to embed now.
        settings: its retrieval settings (the defaults when ``None``); evaluation derives the
            per-mode settings from it with :meth:`Retriever.with_settings`.
    """
    embedder = PrimedEmbedder(collection.embedder())
    embedder.prime(queries)
    return Retriever(collection, settings or RetrievalSettings(), embedder=embedder)


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


def at_depth(settings: RetrievalSettings, mode: SearchMode, depth: int) -> RetrievalSettings:
    """``settings`` for one evaluation search in ``mode``: each engine asked for ``depth``
    chunks, and all of them returned."""
    return dataclasses.replace(settings, mode=mode, k=depth, candidates=depth)


def evaluate_modes(
    collection: CollectionStore,
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
    weights = RetrievalSettings(
        lexical_weight=lexical_weight, semantic_weight=semantic_weight, rrf_k=rrf_k
    )
    for mode in modes:
        mode_retriever = retriever.with_settings(at_depth(weights, mode, chunk_depth))
        run: dict[str, tuple[str, ...]] = {}
        latency: list[float] = []
        for i, (qid, text) in enumerate(items):
            if cancel is not None and cancel.is_set():
                raise Cancelled("retrieval evaluation")
            start = time.perf_counter()
            passages = mode_retriever.search(text)
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
class QueryCandidates(Candidates):
    """Both engines' candidate chunks for one query (:class:`~verifai_desktop.retrieve.Candidates`)
    plus the corpus document of each.

    Attributes:
        doc_ids: corpus id of each candidate chunk, shape (n,); ``""`` when not a BEIR key.
    """

    doc_ids: tuple[str, ...]


def _merge(lexical: Sequence[Passage], semantic: Sequence[Passage]) -> QueryCandidates:
    c = Candidates.from_hits(
        [
            (int(p.chunk_id), p.raw_lexical if p.raw_lexical is not None else p.lexical_score)
            for p in lexical
        ],
        [
            (int(p.chunk_id), p.raw_semantic if p.raw_semantic is not None else p.semantic_score)
            for p in semantic
        ],
    )
    doc_of: dict[int, str] = {}
    for p in (*lexical, *semantic):
        doc_of.setdefault(int(p.chunk_id), passage_doc_id(p) or "")
    return QueryCandidates(
        chunk_ids=c.chunk_ids,
        lexical=c.lexical,
        semantic=c.semantic,
        lexical_rank=c.lexical_rank,
        semantic_rank=c.semantic_rank,
        doc_ids=tuple(doc_of[int(cid)] for cid in c.chunk_ids),
    )


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
    lexical_retriever = retriever.with_settings(
        at_depth(retriever.settings, "lexical", chunk_depth)
    )
    semantic_retriever = retriever.with_settings(
        at_depth(retriever.settings, "semantic", chunk_depth)
    )
    out: dict[str, QueryCandidates] = {}
    for i, (qid, text) in enumerate(queries.items()):
        if cancel is not None and cancel.is_set():
            raise Cancelled("candidate collection")
        out[qid] = _merge(lexical_retriever.search(text), semantic_retriever.search(text))
        if progress is not None:
            progress(Progress("candidates", i + 1, len(queries), "queries"))
    return out


def _rank_docs(c: QueryCandidates, scores: NDArray[np.float64], depth: int) -> tuple[str, ...]:
    """Max-aggregate chunk scores to documents and return the top ``depth`` corpus ids.

    Chunks are ordered as the retriever orders them (score descending, ties by ascending chunk
    id), so the first chunk met of each document is its best one.
    """
    order = ranking(c, scores)
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
    return {
        qid: _rank_docs(
            c,
            fused_scores(
                c,
                mode="hybrid",
                lexical_weight=lexical_weight,
                semantic_weight=1.0 - lexical_weight,
            ),
            doc_depth,
        )
        for qid, c in candidates.items()
    }


def fuse_rrf(
    candidates: Mapping[str, QueryCandidates], *, rrf_k: int = 60, doc_depth: int = DOC_DEPTH
) -> dict[str, tuple[str, ...]]:
    """Reciprocal rank fusion (Cormack et al., SIGIR 2009) replayed on stored candidates.

    Returns:
        Query id -> ranked corpus ids, chunk score ``sum(1 / (rrf_k + rank))`` over engines.
    """
    return {
        qid: _rank_docs(c, fused_scores(c, mode="rrf", rrf_k=rrf_k), doc_depth)
        for qid, c in candidates.items()
    }


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
