"""Hybrid retrieval over a collection: BM25 (Tantivy) + dense (usearch HNSW), fused.

Modes:
    ``hybrid``: VerifAI's formula (Bojic et al., "VerifAI", 2024): each engine's scores are
        divided by that engine's top score for the query, then
        ``lexical_weight * lexical + semantic_weight * semantic`` (a passage missing from one
        engine's list scores 0 there). Defaults 0.7 / 0.3, VerifAI's chosen row.
    ``rrf``: reciprocal rank fusion, ``sum 1 / (rrf_k + rank)`` with rank from 1 and
        ``rrf_k = 60`` (Cormack, Clarke & Buettcher, SIGIR 2009).
    ``lexical`` / ``semantic``: one engine alone.

The dense engine finds candidates in the int8 HNSW graph, then rescores them with the exact
float32 cosine kept in the catalog. Ties are broken by ascending chunk id.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from verifai_desktop.store.collection import Collection
from verifai_desktop.domain import ChunkId, DocId, Passage
from verifai_desktop.errors import SettingsError
from verifai_desktop.index.embedder import Embedder
from verifai_desktop.settings import SEARCH_MODES, SearchMode

log = logging.getLogger(__name__)

Scored = tuple[int, float]
"""``(chunk_id, score)``."""


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


def normalise_by_top(hits: Sequence[Scored]) -> dict[int, float]:
    """Divide every score by the list's top score (VerifAI); all 0 when the top is not > 0."""
    if not hits:
        return {}
    top = max(score for _, score in hits)
    if top <= 0.0:
        return {cid: 0.0 for cid, _ in hits}
    return {cid: score / top for cid, score in hits}


def _ranked(items: list[Fused], k: int) -> list[Fused]:
    items.sort(key=lambda f: (-f.fused, f.chunk_id))
    return items[:k]


def fuse(
    lexical: Sequence[Scored],
    semantic: Sequence[Scored],
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
        mode: ``hybrid``, ``rrf``, ``lexical`` or ``semantic``.
        k: how many to return.
        lexical_weight: hybrid weight of the normalised BM25 score.
        semantic_weight: hybrid weight of the normalised cosine.
        rrf_k: the RRF constant.

    Returns:
        Fused results, best first, ties by ascending chunk id.
    """
    lex_norm = normalise_by_top(lexical)
    sem_norm = normalise_by_top(semantic)
    lex_raw = dict(lexical)
    sem_raw = dict(semantic)
    if mode == "lexical":
        ids: Sequence[int] = list(lex_raw)
    elif mode == "semantic":
        ids = list(sem_raw)
    else:
        ids = list(dict.fromkeys([*lex_raw, *sem_raw]))
    lex_rank = {cid: rank for rank, (cid, _) in enumerate(lexical, start=1)}
    sem_rank = {cid: rank for rank, (cid, _) in enumerate(semantic, start=1)}
    out: list[Fused] = []
    for cid in ids:
        lex = lex_norm.get(cid, 0.0)
        sem = sem_norm.get(cid, 0.0)
        if mode == "hybrid":
            score = lexical_weight * lex + semantic_weight * sem
        elif mode == "rrf":
            score = 0.0
            if cid in lex_rank:
                score += 1.0 / (rrf_k + lex_rank[cid])
            if cid in sem_rank:
                score += 1.0 / (rrf_k + sem_rank[cid])
        elif mode == "lexical":
            score = lex
        else:
            score = sem
        out.append(Fused(cid, score, lex, sem, lex_raw.get(cid), sem_raw.get(cid)))
    return _ranked(out, k)


class Retriever:
    """Searches one collection repeatedly, keeping the embedder and indexes loaded.

    Args:
        collection: an opened collection (it stays owned by the caller).
        embedder: the query embedder; defaults to the collection's own.
    """

    def __init__(self, collection: Collection, *, embedder: Embedder | None = None) -> None:
        self.collection = collection
        self._embedder = embedder
        self._loaded = False
        self.last_timings_ms: dict[str, float] = {}
        """Wall time of the last search per step (ms): ``lexical``, ``embed``, ``semantic``
        (embedding included), ``fuse``, ``total``; ``load`` (model loading, excluded from the
        others) on the first semantic search."""

    @property
    def embedder(self) -> Embedder:
        """The query embedder (loaded on first semantic search)."""
        if self._embedder is None:
            self._embedder = self.collection.embedder()
        return self._embedder

    def lexical_hits(self, query: str, limit: int) -> list[Scored]:
        """BM25 top ``limit`` ``(chunk_id, score)``, stop words removed from the query."""
        return self.collection.lexical.search(query, limit)

    def semantic_hits(self, query: str, limit: int) -> list[Scored]:
        """Dense top ``limit`` ``(chunk_id, exact cosine)``: HNSW candidates rescored in float32."""
        if len(self.collection.vectors) == 0:
            return []
        embedder = self.embedder
        embed_query = getattr(embedder, "embed_query", None)
        if not self._loaded:
            t_load = time.perf_counter()
            _ = embedder.dim  # loads the model: timed apart from the query
            prepare = getattr(embedder, "prepare_query", None)
            if prepare is not None:
                prepare()  # the ONNX query encoder (exported once per data root)
            self.last_timings_ms["load"] = (time.perf_counter() - t_load) * 1000.0
            self._loaded = True
        t0 = time.perf_counter()
        q = embed_query(query) if embed_query is not None else embedder.embed([query])[0]
        t1 = time.perf_counter()
        approx = self.collection.vectors.search(q, limit)
        exact = self.collection.catalog.vectors([cid for cid, _ in approx])
        hits = [(cid, float(np.dot(vec, q))) for cid, vec in exact.items()]
        hits.sort(key=lambda h: (-h[1], h[0]))
        self.last_timings_ms["embed"] = (t1 - t0) * 1000.0
        return hits

    def search(
        self,
        query: str,
        *,
        k: int = 10,
        mode: SearchMode = "hybrid",
        lexical_weight: float = 0.7,
        semantic_weight: float = 0.3,
        rrf_k: int = 60,
        candidates: int = 100,
    ) -> tuple[Passage, ...]:
        """Top ``k`` passages for ``query``.

        Args:
            query: free text; punctuation and operators are harmless.
            k: passages to return.
            mode: ``hybrid`` (default), ``rrf``, ``lexical`` or ``semantic``.
            lexical_weight: hybrid weight of BM25 / top BM25.
            semantic_weight: hybrid weight of cosine / top cosine.
            rrf_k: RRF constant (60, Cormack et al. 2009).
            candidates: hits taken from each engine before fusion.

        Returns:
            Passages best first, each with its lexical, semantic, fused and raw scores.

        Raises:
            SettingsError: unknown ``mode``.
        """
        if mode not in SEARCH_MODES:
            raise SettingsError("retrieval.mode", f"{mode!r}; use one of {', '.join(SEARCH_MODES)}")
        self.last_timings_ms = {}
        if k <= 0 or not query.strip():
            return ()
        self.collection.refresh()
        limit = max(candidates, k)
        t0 = time.perf_counter()
        lexical = self.lexical_hits(query, limit) if mode != "semantic" else []
        t1 = time.perf_counter()
        semantic = self.semantic_hits(query, limit) if mode != "lexical" else []
        t2 = time.perf_counter()
        load_s = self.last_timings_ms.get("load", 0.0) / 1000.0
        # Over-fetch a little so that chunks missing from a stale index can be skipped.
        fused = fuse(
            lexical,
            semantic,
            mode=mode,
            k=k + 8,
            lexical_weight=lexical_weight,
            semantic_weight=semantic_weight,
            rrf_k=rrf_k,
        )
        records = self.collection.catalog.chunk_records([f.chunk_id for f in fused])
        passages: list[Passage] = []
        for f in fused:
            rec = records.get(f.chunk_id)
            if rec is None:
                continue
            c = rec.chunk
            passages.append(
                Passage(
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
                )
            )
            if len(passages) == k:
                break
        t3 = time.perf_counter()
        self.last_timings_ms.update(
            lexical=(t1 - t0) * 1000.0,
            semantic=(t2 - t1 - load_s) * 1000.0,
            fuse=(t3 - t2) * 1000.0,
            total=(t3 - t0 - load_s) * 1000.0,
        )
        return tuple(passages)


def search(
    collection: Collection,
    query: str,
    *,
    k: int = 10,
    mode: SearchMode = "hybrid",
    lexical_weight: float = 0.7,
    semantic_weight: float = 0.3,
    rrf_k: int = 60,
    candidates: int = 100,
) -> tuple[Passage, ...]:
    """Top ``k`` passages of a collection for ``query``; see :meth:`Retriever.search`."""
    return Retriever(collection).search(
        query,
        k=k,
        mode=mode,
        lexical_weight=lexical_weight,
        semantic_weight=semantic_weight,
        rrf_k=rrf_k,
        candidates=candidates,
    )
