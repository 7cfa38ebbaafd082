"""Hybrid retrieval over a collection: BM25 (Tantivy) + dense (usearch HNSW), fused.

Modes:
    ``hybrid``: VerifAI's formula (Bojic et al., "VerifAI", 2024): each engine's scores are
        divided by that engine's top score for the query, then
        ``lexical_weight * lexical + semantic_weight * semantic`` (a passage missing from one
        engine's list scores 0 there). Defaults 0.7 / 0.3, VerifAI's chosen row.
    ``rrf``: reciprocal rank fusion, ``sum 1 / (rrf_k + rank)`` with rank from 1 and
        ``rrf_k = 60`` (Cormack, Clarke & Buettcher, SIGIR 2009).
    ``lexical`` / ``semantic``: one engine alone.

Both engines are the store's (:class:`~verifai_desktop.store.base.CollectionStore`): its BM25
search and its vector search, which in the embedded store finds candidates in the int8 HNSW
graph and rescores them with the exact float32 cosine kept in the catalog. A store that runs
both in one round trip (:class:`~verifai_desktop.store.base.HybridSearch`, e.g. PostgreSQL)
is asked once for the fused modes; its hits are fused here all the same. Ties are broken by
ascending chunk id. A passage carries what the store recorded about its chunk at ingest: the
reference-list tag and the prompt-injection cues
(:attr:`~verifai_desktop.store.records.ChunkRecord.instruction_cues`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.domain import ChunkId, DocId, Passage
from verifai_desktop.index.embedder import Embedder
from verifai_desktop.index.fields import fields_only, split_fields
from verifai_desktop.settings import RetrievalSettings, SearchMode, check_retrieval
from verifai_desktop.store.base import CollectionStore, HybridSearch, ScoredChunk
from verifai_desktop.store.records import ChunkRecord

log = logging.getLogger(__name__)

FIELD_CANDIDATES = 100_000
"""Most chunks a query's ``author:``/``year:``/``title:`` terms let through to the semantic
engine (:mod:`verifai_desktop.index.fields`)."""
FIELD_WIDEN = 20
"""With metadata terms, the semantic engine is asked for this many times the candidates, so
that enough of its hits fall in the documents the terms let through."""
REFETCH_FACTOR = 4
"""When reference-list chunks are left out and too few other passages are among the
candidates, each engine is asked for this many times as many hits."""


@dataclass(frozen=True, slots=True)
class Candidates:
    """Both engines' hits for one query, aligned on the union of their chunks.

    Every array has shape (n,), one entry per distinct chunk, lexical hits first in their
    order, then the semantic hits BM25 did not return.

    Attributes:
        chunk_ids: catalog chunk ids, int64.
        lexical: raw BM25 score, float64; 0 where BM25 did not return the chunk.
        semantic: raw cosine, float64; 0 where the dense engine did not return the chunk.
        lexical_rank: 1-based rank in the BM25 list, int64; 0 where absent.
        semantic_rank: 1-based rank in the dense list, int64; 0 where absent.
    """

    chunk_ids: NDArray[np.int64]
    lexical: NDArray[np.float64]
    semantic: NDArray[np.float64]
    lexical_rank: NDArray[np.int64]
    semantic_rank: NDArray[np.int64]

    @classmethod
    def from_hits(
        cls, lexical: Sequence[ScoredChunk], semantic: Sequence[ScoredChunk]
    ) -> Candidates:
        """Align two ``(chunk_id, score)`` lists (each best first, ids unique within a list)."""
        index: dict[int, int] = {}
        for cid, _ in (*lexical, *semantic):
            index.setdefault(int(cid), len(index))
        n = len(index)
        lex = np.zeros(n)
        sem = np.zeros(n)
        lex_rank = np.zeros(n, dtype=np.int64)
        sem_rank = np.zeros(n, dtype=np.int64)
        for rank, (cid, score) in enumerate(lexical, start=1):
            lex[index[int(cid)]] = score
            lex_rank[index[int(cid)]] = rank
        for rank, (cid, score) in enumerate(semantic, start=1):
            sem[index[int(cid)]] = score
            sem_rank[index[int(cid)]] = rank
        chunk_ids = np.fromiter(index, dtype=np.int64, count=n)
        return cls(chunk_ids, lex, sem, lex_rank, sem_rank)


def normalised(c: Candidates) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Each engine's scores divided by its top score for the query (VerifAI).

    Returns:
        ``(lexical, semantic)``, float64, shape (n,); an engine whose top score is not > 0
        gives all zeros; a chunk the engine did not return gets 0.
    """

    def by_top(scores: NDArray[np.float64], ranks: NDArray[np.int64]) -> NDArray[np.float64]:
        present = ranks > 0
        top = float(scores[present].max()) if present.any() else 0.0
        if top <= 0.0:
            return np.zeros_like(scores)
        return np.where(present, scores / top, 0.0)

    return by_top(c.lexical, c.lexical_rank), by_top(c.semantic, c.semantic_rank)


def fused_scores(
    c: Candidates,
    *,
    mode: SearchMode,
    lexical_weight: float = 0.7,
    semantic_weight: float = 0.3,
    rrf_k: int = 60,
) -> NDArray[np.float64]:
    """The ranking score of every candidate under ``mode`` (float64, shape (n,)).

    ``hybrid``: ``lexical_weight * lexical / top + semantic_weight * semantic / top``;
    ``rrf``: ``sum 1 / (rrf_k + rank)`` over the engines that returned the chunk;
    ``lexical`` / ``semantic``: that engine's normalised score. This is the one fusion formula:
    the search path and the evaluation sweep (:mod:`verifai_desktop.evaluate.retrieval`) both
    call it.
    """
    lex, sem = normalised(c)
    if mode == "hybrid":
        return lexical_weight * lex + semantic_weight * sem
    if mode == "rrf":
        return np.where(c.lexical_rank > 0, 1.0 / (rrf_k + c.lexical_rank), 0.0) + np.where(
            c.semantic_rank > 0, 1.0 / (rrf_k + c.semantic_rank), 0.0
        )
    return lex if mode == "lexical" else sem


def ranking(c: Candidates, scores: NDArray[np.float64]) -> NDArray[np.intp]:
    """Candidate positions by descending score, ties by ascending chunk id."""
    return np.lexsort((c.chunk_ids, -scores))


@dataclass(frozen=True, slots=True)
class Fused:
    """One fused result before it is turned into a Passage.

    Attributes:
        chunk_id: catalog chunk id.
        fused: the ranking score.
        lexical: BM25 / top BM25 of the query (0 when absent).
        semantic: cosine / top cosine of the query (0 when absent).
        raw_lexical: BM25 score, ``None`` when the lexical engine did not return the chunk.
        raw_semantic: cosine, ``None`` when the dense engine did not return the chunk.
    """

    chunk_id: int
    fused: float
    lexical: float
    semantic: float
    raw_lexical: float | None
    raw_semantic: float | None


def normalise_by_top(hits: Sequence[ScoredChunk]) -> dict[int, float]:
    """Divide every score by the list's top score (VerifAI); all 0 when the top is not > 0."""
    c = Candidates.from_hits(hits, ())
    lex, _ = normalised(c)
    return {int(cid): float(v) for cid, v in zip(c.chunk_ids, lex, strict=True)}


def fuse(
    lexical: Sequence[ScoredChunk],
    semantic: Sequence[ScoredChunk],
    *,
    mode: SearchMode,
    k: int,
    lexical_weight: float = 0.7,
    semantic_weight: float = 0.3,
    rrf_k: int = 60,
) -> list[Fused]:
    """Fuse the two engines' hit lists (each best first) and return the top ``k``.

    Args:
        lexical: ``(chunk_id, BM25)`` pairs, best first.
        semantic: ``(chunk_id, cosine)`` pairs, best first.
        mode: ``hybrid``, ``rrf``, ``lexical`` or ``semantic`` (:func:`fused_scores`); the
            single-engine modes keep only that engine's chunks.
        k: how many to return.
        lexical_weight: hybrid weight of the normalised BM25 score.
        semantic_weight: hybrid weight of the normalised cosine.
        rrf_k: the RRF constant.

    Returns:
        Fused results, best first, ties by ascending chunk id.
    """
    if k <= 0:
        return []
    c = Candidates.from_hits(lexical, semantic)
    scores = fused_scores(
        c, mode=mode, lexical_weight=lexical_weight, semantic_weight=semantic_weight, rrf_k=rrf_k
    )
    lex, sem = normalised(c)
    out: list[Fused] = []
    for i in ranking(c, scores):
        in_lex, in_sem = bool(c.lexical_rank[i] > 0), bool(c.semantic_rank[i] > 0)
        if (mode == "lexical" and not in_lex) or (mode == "semantic" and not in_sem):
            continue
        out.append(
            Fused(
                int(c.chunk_ids[i]),
                float(scores[i]),
                float(lex[i]),
                float(sem[i]),
                float(c.lexical[i]) if in_lex else None,
                float(c.semantic[i]) if in_sem else None,
            )
        )
        if len(out) == k:
            break
    return out


class PassageRetriever(Protocol):
    """Finds passages for a query in one collection: everything the pipeline and the
    contradiction search ask of retrieval (:class:`Retriever` over a
    :class:`~verifai_desktop.store.base.CollectionStore` is the implementation)."""

    def search(self, query: str, *, k: int, include_references: bool = True) -> tuple[Passage, ...]:
        """The top-k passages, best first; without reference-list chunks when
        ``include_references`` is False (still k of them when the collection has them)."""
        ...

    def lexical_hits(self, query: str, limit: int) -> list[ScoredChunk]:
        """BM25 top ``limit`` ``(chunk_id, score)``, best first."""
        ...

    def semantic_hits(self, query: str, limit: int) -> list[ScoredChunk]:
        """Dense top ``limit`` ``(chunk_id, cosine)``, best first."""
        ...

    def passages(
        self, fused: Sequence[Fused], k: int, *, include_references: bool = True
    ) -> tuple[Passage, ...]:
        """The first ``k`` of ``fused`` (any ranking of chunk ids) as passages."""
        ...


class Retriever:
    """Searches one collection repeatedly with one set of retrieval settings.

    Keeps the query embedder loaded between searches. ``Retriever(collection,
    settings.retrieval).search(query)`` is the whole retrieval step of an answer.

    Args:
        collection: an opened collection (it stays owned by the caller).
        settings: mode, fusion weights, RRF constant, candidates per engine and default ``k``.
        embedder: the query embedder; defaults to the collection's own.

    Raises:
        SettingsError: a setting is out of range (see :func:`check_retrieval`).
    """

    def __init__(
        self,
        collection: CollectionStore,
        settings: RetrievalSettings,
        *,
        embedder: Embedder | None = None,
    ) -> None:
        check_retrieval(settings)
        self.collection = collection
        self.settings = settings
        self._embedder = embedder
        self._loaded = False
        self.last_timings_ms: dict[str, float] = {}
        """Wall time of the last search per step (ms): ``lexical``, ``embed``, ``semantic``
        (embedding included), ``fuse``, ``total``; ``load`` (model loading, excluded from the
        others) on the first semantic search."""

    def with_settings(self, settings: RetrievalSettings) -> Retriever:
        """A retriever over the same collection and query embedder, with other settings.

        Cheap: the embedder (and whether its model is loaded) is shared, so evaluation can run
        every mode and weight through one loaded model.

        Raises:
            SettingsError: a setting is out of range (see :func:`check_retrieval`).
        """
        other = Retriever(self.collection, settings, embedder=self._embedder)
        other._loaded = self._loaded
        return other

    @property
    def embedder(self) -> Embedder:
        """The query embedder (loaded on first semantic search)."""
        if self._embedder is None:
            self._embedder = self.collection.embedder()
        return self._embedder

    def lexical_hits(self, query: str, limit: int) -> list[ScoredChunk]:
        """BM25 top ``limit`` ``(chunk_id, score)``, stop words removed from the query."""
        return self.collection.lexical_search(query, limit)

    def semantic_hits(self, query: str, limit: int) -> list[ScoredChunk]:
        """Dense top ``limit`` ``(chunk_id, cosine)`` from the store's vector search (the
        cosine of the stored float32 vectors); the query is embedded first (the model loads on
        the first call, timed as ``load``)."""
        if self.collection.num_vectors() == 0:
            return []
        return self.collection.vector_search(self._query_vector(query), limit)

    def _query_vector(self, query: str) -> NDArray[np.float32]:
        """The query's embedding (float32, shape (dim,)); the model loads on the first call,
        timed as ``load``, the embedding as ``embed``."""
        embedder = self.embedder
        if not self._loaded:
            t_load = time.perf_counter()
            embedder.load()  # timed apart from the query
            self.last_timings_ms["load"] = (time.perf_counter() - t_load) * 1000.0
            self._loaded = True
        t0 = time.perf_counter()
        q: NDArray[np.float32] = embedder.embed([query])[0]
        self.last_timings_ms["embed"] = (time.perf_counter() - t0) * 1000.0
        return q

    def _both_hits(self, query: str, limit: int) -> tuple[list[ScoredChunk], list[ScoredChunk]]:
        """Both engines' hits from a store that searches them in one round trip
        (:class:`~verifai_desktop.store.base.HybridSearch`); the query is embedded first."""
        assert isinstance(self.collection, HybridSearch)
        return self.collection.hybrid_search(query, self._query_vector(query), limit)

    def search(
        self, query: str, *, k: int | None = None, include_references: bool = True
    ) -> tuple[Passage, ...]:
        """Top ``k`` passages for ``query`` under this retriever's settings.

        Each engine returns ``settings.candidates`` hits (at least ``k``) before fusion. Without
        reference-list chunks (``include_references`` False), the fused ranking is walked past
        them, and when fewer than ``k`` other passages are among the candidates both engines
        are asked again for :data:`REFETCH_FACTOR` times as many, until ``k`` are found or the
        engines run out. The ranking of the passages returned is the same either way.

        Metadata terms (``author:cohan year:2020 title:specter``,
        :mod:`verifai_desktop.index.fields`) restrict both engines to the chunks of documents
        whose reference-manager entry matches them; the rest of the query ranks them (the
        semantic engine reads only the rest, and is not asked when there is none).

        Args:
            query: free text; punctuation and operators are harmless.
            k: passages to return; ``settings.k`` when ``None``.
            include_references: False leaves out chunks tagged as reference-list entries
                (``Passage.is_reference``), as the answer prompt does by default.

        Returns:
            Passages best first, each with its lexical, semantic, fused and raw scores.
        """
        s = self.settings
        k = s.k if k is None else k
        self.last_timings_ms = {}
        if k <= 0 or not query.strip():
            return ()
        self.collection.refresh()
        limit = max(s.candidates, k)
        t0 = time.perf_counter()
        lexical_s = semantic_s = load_s = 0.0
        free, fields = split_fields(query)
        allowed = None
        if fields:
            hits = self.collection.lexical_search(fields_only(fields), FIELD_CANDIDATES)
            allowed = {cid for cid, _ in hits}
        while True:
            t_lex = time.perf_counter()
            if allowed is not None:
                lexical = self.lexical_hits(query, limit) if s.mode != "semantic" else []
                t_sem = time.perf_counter()
                wide = self.semantic_hits(free, limit * FIELD_WIDEN) if free else []
                semantic = [h for h in wide if h[0] in allowed][:limit]
                semantic = semantic if s.mode != "lexical" else []
            elif s.mode in ("hybrid", "rrf") and isinstance(self.collection, HybridSearch):
                t_sem = t_lex  # one round trip for both engines: timed as semantic
                lexical, semantic = self._both_hits(query, limit)
            else:
                lexical = self.lexical_hits(query, limit) if s.mode != "semantic" else []
                t_sem = time.perf_counter()
                semantic = self.semantic_hits(query, limit) if s.mode != "lexical" else []
            t_fuse = time.perf_counter()
            load_s = self.last_timings_ms.get("load", 0.0) / 1000.0
            lexical_s += t_sem - t_lex
            semantic_s += t_fuse - t_sem
            # Over-fetch a little so that chunks missing from a stale index can be skipped;
            # without references, keep every candidate: the walk skips the tagged ones.
            fused = fuse(
                lexical,
                semantic,
                mode=s.mode,
                k=k + 8 if include_references else len(lexical) + len(semantic),
                lexical_weight=s.lexical_weight,
                semantic_weight=s.semantic_weight,
                rrf_k=s.rrf_k,
            )
            passages = self._passages(fused, k, include_references=include_references)
            engines_full = len(lexical) >= limit or len(semantic) >= limit
            if include_references or len(passages) >= k or not engines_full:
                break
            limit *= REFETCH_FACTOR
        t3 = time.perf_counter()
        self.last_timings_ms.update(
            lexical=lexical_s * 1000.0,
            semantic=(semantic_s - load_s) * 1000.0,
            fuse=(t3 - t0 - lexical_s - semantic_s) * 1000.0,
            total=(t3 - t0 - load_s) * 1000.0,
        )
        return passages

    def passages(
        self, fused: Sequence[Fused], k: int, *, include_references: bool = True
    ) -> tuple[Passage, ...]:
        """The first ``k`` of ``fused`` (any ranking of chunk ids, e.g. the contradiction
        search's) still in the catalog, as passages with the scores given."""
        return self._passages(fused, k, include_references=include_references)

    def _passages(
        self, fused: Sequence[Fused], k: int, *, include_references: bool = True
    ) -> tuple[Passage, ...]:
        """The first ``k`` fused results still in the catalog (and not reference-list chunks
        unless ``include_references``), as passages; records are read a page at a time."""
        passages: list[Passage] = []
        page = max(2 * k, 16)
        for start in range(0, len(fused), page):
            part = fused[start : start + page]
            records = self.collection.chunks([f.chunk_id for f in part])
            for f in part:
                rec = records.get(f.chunk_id)
                if rec is None or (rec.chunk.is_reference and not include_references):
                    continue
                passages.append(self._passage(f, rec))
                if len(passages) == k:
                    return tuple(passages)
        return tuple(passages)

    @staticmethod
    def _passage(f: Fused, rec: ChunkRecord) -> Passage:
        """One fused result and its catalog row as a passage (cues and tag as stored)."""
        c = rec.chunk
        return Passage(
            chunk_id=ChunkId(f.chunk_id),
            doc_id=DocId(rec.doc_id),
            path=Path(rec.source),
            title=rec.title,
            text=c.text,
            char_start=c.char_start,
            char_end=c.char_end,
            location=c.location,
            sentence_spans=c.sentence_spans,
            lexical_score=f.lexical,
            semantic_score=f.semantic,
            fused_score=f.fused,
            raw_lexical=f.raw_lexical,
            raw_semantic=f.raw_semantic,
            instruction_cues=rec.instruction_cues,
            is_reference=c.is_reference,
            ocr=c.ocr,
            reference=rec.reference,
        )
