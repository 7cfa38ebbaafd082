"""The store's contract: :class:`CollectionStore`, what the layers above read from an open
collection.

Retrieval (:mod:`verifai_desktop.retrieve`), the ask session (:mod:`verifai_desktop.pipeline`),
evaluation and the front ends reach a collection's data only through this protocol: its
documents (:class:`~verifai_desktop.store.records.DocumentRecord`), its chunks by id
(:class:`~verifai_desktop.store.records.ChunkRecord`), lexical and vector search, the embedder
its vectors come from, its status and metadata records, and its answer history
(:class:`~verifai_desktop.store.history_base.AnswerHistory`). The embedded store,
:class:`~verifai_desktop.store.collection.Collection` (a SQLite catalog with a BM25 and an HNSW
index beside it, in one folder), is the first implementation; the PostgreSQL store
(:class:`~verifai_desktop.store.pg.store.PgStore`) is the second. Opening, creating and
ingesting stay with each implementation (:meth:`Collection.open`,
:meth:`Collection.add_paths`, ...): they depend on where the data lives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, Self, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.index.embedder import Embedder
from verifai_desktop.store.history_base import AnswerHistory
from verifai_desktop.store.records import ChunkRecord, DocumentRecord

ScoredChunk = tuple[int, float]
"""A search hit: ``(chunk_id, score)``."""


class Closes:
    """A base for store implementations: ``with store: ...`` closes it when the block ends."""

    def close(self) -> None:
        """Release what the store holds; idempotent."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class CollectionStore(Protocol):
    """An open collection, as retrieval, the ask session, evaluation and the front ends use it.

    Chunk ids are positive ints given by the store; a chunk keeps its id until its document is
    ingested again or removed. Searches see what was committed when the store was opened or
    last :meth:`refresh`-ed.

    Attributes:
        name: the collection's identifier, what commands and settings record (the embedded
            store: its folder name).
        display_name: the name the user gave it (``name`` when none was recorded).
        embedder_name: the embedder its vectors come from, as recorded when it was created (a
            canonical model name such as ``"all-MiniLM-L6-v2"``, or a path).
    """

    @property
    def name(self) -> str: ...

    @property
    def display_name(self) -> str: ...

    @property
    def embedder_name(self) -> str: ...

    def embedder(self) -> Embedder:
        """The embedder its vectors come from, to embed queries with (one instance per model
        per process; the model loads on first use, see :meth:`Embedder.load`).

        Raises:
            ModelNotFound: on first use, when the model is not on this machine.
        """
        ...

    # -- documents ----------------------------------------------------------------------

    def documents(self) -> list[DocumentRecord]:
        """Every document, with the status and reason of its last ingest, ordered by source."""
        ...

    def document(self, source: str) -> DocumentRecord | None:
        """The document of one source (absolute path or benchmark key), or None."""
        ...

    def num_chunks(self) -> int:
        """Number of chunks of all its documents (what the searches can return)."""
        ...

    def document_chunk_ids(self, doc_id: int) -> list[int]:
        """The chunk ids of one document, in reading order (empty for an unknown id)."""
        ...

    # -- chunks -------------------------------------------------------------------------

    def chunks(self, chunk_ids: Sequence[int]) -> dict[int, ChunkRecord]:
        """The chunks of the ids given that exist, each with its document's source and title.

        Args:
            chunk_ids: any number of ids, in any order, repeats allowed.

        Returns:
            chunk id -> record, for the ids still in the collection (a chunk of a document
            removed or ingested again since it was found is missing).
        """
        ...

    # -- search -------------------------------------------------------------------------

    def lexical_search(self, query: str, limit: int) -> list[ScoredChunk]:
        """BM25 top ``limit`` chunks for free text (English stop words and punctuation are
        ignored, so any text is a valid query).

        Returns:
            ``(chunk_id, BM25 score)`` pairs, scores >= 0, best first, ties by ascending
            chunk id; empty when the query has no searchable word or ``limit`` <= 0.
        """
        ...

    def num_vectors(self) -> int:
        """Chunks the vector search can return now (0: :meth:`vector_search` returns nothing,
        so a caller need not embed its query)."""
        ...

    def vector_search(self, query: NDArray[np.float32], limit: int) -> list[ScoredChunk]:
        """Top ``limit`` chunks by cosine similarity to a query vector.

        Args:
            query: float32, shape (dim,), L2-normalised, from :meth:`embedder`.
            limit: how many hits at most.

        Returns:
            ``(chunk_id, cosine)`` pairs, cosine in [-1, 1] of the stored float32 vectors,
            best first, ties by ascending chunk id. Candidates may come from an approximate
            index (the embedded store: int8 HNSW), so a chunk just outside them can be missed;
            their scores are exact.
        """
        ...

    def refresh(self) -> None:
        """Pick up changes another process committed since the store was opened (cheap when
        there are none)."""
        ...

    # -- status and metadata ------------------------------------------------------------

    def is_consistent(self) -> bool:
        """True when the search indexes reflect every committed change (cheap: nothing is
        opened or searched)."""
        ...

    def reconcile(self) -> bool:
        """Bring the search indexes up to date with the documents; True when something was
        rebuilt. Left as they are while another process writes (that process updates them).
        """
        ...

    def check(self) -> None:
        """Run the full integrity check of the stored documents (reads everything: seconds on
        a big collection).

        Raises:
            IndexCorrupt: the data is damaged.
        """
        ...

    def metadata(self, key: str) -> dict[str, object]:
        """The metadata record ``key`` (a JSON object); empty when never written or unreadable.

        Args:
            key: lowercase letters, digits and ``_``, at most 40, starting with a letter
                (e.g. ``"roots"``, ``"beir_corpus"``).

        Raises:
            ValueError: a malformed or reserved ``key``.
        """
        ...

    def set_metadata(self, key: str, data: Mapping[str, object]) -> None:
        """Record a JSON object under ``key`` (atomically), replacing the previous one.

        Raises:
            CollectionBusy: another process is writing the collection.
            ValueError: a malformed or reserved ``key`` (see :meth:`metadata`).
        """
        ...

    # -- answer history -----------------------------------------------------------------

    def history(self) -> AnswerHistory:
        """Its answer history, opened (created on first use); the caller closes it, e.g.
        ``with store.history() as history: ...``. Writing it never waits for an ingest. In a
        server store it is the connecting role's alone.

        Raises:
            IndexCorrupt: the history is damaged.
            BadRecord: another writer kept it locked too long.
            StoreUnavailable: a server store's history cannot be reached.
        """
        ...

    def close(self) -> None:
        """Save pending changes and release what the store holds; idempotent."""
        ...


@runtime_checkable
class HybridSearch(Protocol):
    """A store that runs both searches in one round trip (a server store); the retriever uses
    it for the fused modes and fuses the hits itself, as for any store."""

    def hybrid_search(
        self, query: str, vector: NDArray[np.float32], limit: int
    ) -> tuple[list[ScoredChunk], list[ScoredChunk]]:
        """``(lexical, semantic)`` hits, each as :meth:`CollectionStore.lexical_search` and
        :meth:`CollectionStore.vector_search` return them for ``limit``."""
        ...
