"""The search indexes of a collection folder, derived from its catalog, and their sidecars.

``lexical/`` is the Tantivy BM25 index (:class:`~verifai_desktop.index.lexical.LexicalIndex`)
and ``vectors.usearch`` the usearch int8 HNSW graph
(:class:`~verifai_desktop.index.vector.VectorIndex`); their sidecars ``lexical.json`` and
``vectors.json`` record the catalog generation each reflects.

Crash safety: a change is committed to the catalog (SQLite) first; the indexes are updated
afterwards and record the generation they reflect. When a collection opens, an index whose
generation differs from the catalog's is rebuilt from the catalog (:meth:`SearchIndexes.reconcile`),
so a process killed at any moment leaves a collection that opens, answers searches and resumes.

Both indexes open on first use: listing a collection reads its catalog only, and usearch would
load ONNX Runtime first (:mod:`verifai_desktop.index.vector`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from verifai_desktop.index.lexical import LexicalIndex
from verifai_desktop.index.lexical import saved_generation as lexical_generation
from verifai_desktop.index.vector import VectorIndex
from verifai_desktop.index.vector import saved_generation as vector_generation
from verifai_desktop.reference import Reference
from verifai_desktop.store.catalog import Catalog, CommitItem
from verifai_desktop.store.lock import FileLock

log = logging.getLogger(__name__)

SIDECARS = frozenset({"lexical", "vectors"})
"""Stems of the sidecar files (``<stem>.json`` in the collection folder)."""


class SearchIndexes:
    """The lexical and the vector index of one collection folder, each opened on first use.

    Args:
        folder: the collection's folder.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lexical: LexicalIndex | None = None
        self._vectors: VectorIndex | None = None

    @property
    def lexical(self) -> LexicalIndex:
        """The Tantivy index (opened on first use)."""
        if self._lexical is None:
            self._lexical = LexicalIndex(self.folder / "lexical", self.folder / "lexical.json")
        return self._lexical

    @property
    def vectors(self) -> VectorIndex:
        """The usearch vector index (loaded on first use)."""
        if self._vectors is None:
            self._vectors = VectorIndex(
                self.folder / "vectors.usearch", self.folder / "vectors.json"
            )
        return self._vectors

    def saved_at(self, generation: int) -> bool:
        """True when both saved indexes reflect catalog generation ``generation`` (read from
        their sidecar files: neither index is opened)."""
        return (
            lexical_generation(self.folder / "lexical.json") == generation
            and vector_generation(self.folder / "vectors.json") == generation
        )

    def reconcile(self, catalog: Catalog, lock: FileLock, collection: str) -> bool:
        """Rebuild every index whose generation differs from the catalog's.

        Needs the write lock (``lock``, taken for the rebuild when not held); when another
        process holds it, the indexes are left as they are (that process keeps them up to
        date).

        Args:
            catalog: the collection's catalog, which the indexes are rebuilt from.
            lock: the collection's write lock.
            collection: the collection's name, for the log.

        Returns:
            True when something was rebuilt.
        """
        gen = catalog.generation()
        stale_lex = self.lexical.generation() != gen
        stale_vec = self.vectors.generation() != gen
        if not (stale_lex or stale_vec):
            self.lexical.reload()
            return False
        had_lock = lock.held
        if not lock.try_acquire(purpose="rebuild"):
            log.info(
                "collection %s: indexes behind the catalog; another process is writing", collection
            )
            return False
        try:
            if stale_lex:
                log.info(
                    "collection %s: rebuilding the lexical index (generation %d)", collection, gen
                )
                self.lexical.rebuild(catalog.iter_chunk_texts(), gen, catalog.references_by_doc())
                if not had_lock:
                    self.lexical.close()
            if stale_vec:
                log.info(
                    "collection %s: rebuilding the vector index (generation %d)", collection, gen
                )
                ids, mat = catalog.all_vectors()
                self.vectors.rebuild(ids, mat, gen)
        finally:
            if not had_lock:
                lock.release()
        return True

    def apply(
        self,
        items: Sequence[CommitItem],
        results: Sequence[tuple[int, list[int], list[int]]],
        references: Mapping[int, Reference] | None = None,
    ) -> None:
        """Apply documents just written to the catalog to both indexes (in memory until
        :meth:`save`).

        Args:
            items: what was written (:meth:`Catalog.write_documents`).
            results: what the catalog returned for each item, in the same order:
                ``(doc_id, removed_chunk_ids, new_chunk_ids)``.
            references: the reference-manager entries of these documents, by doc_id
                (:meth:`Catalog.references_by_doc`), indexed as their metadata fields.
        """
        refs = references or {}
        for (_, _, _, chunks, vectors), (doc_id, removed, new_ids) in zip(
            items, results, strict=True
        ):
            if removed:
                self.lexical.delete_document(doc_id)
                self.vectors.remove(removed)
            if new_ids:
                assert vectors is not None
                self.lexical.add(new_ids, doc_id, [c.text for c in chunks], refs.get(doc_id))
                self.vectors.add(new_ids, vectors)

    def relabel(self, catalog: Catalog, doc_ids: Sequence[int]) -> None:
        """Rewrite the lexical entries of documents whose reference-manager entry changed
        (their chunks are unchanged; in memory until :meth:`save`)."""
        refs = catalog.references_by_doc(doc_ids)
        for doc_id in doc_ids:
            chunk_ids, texts = catalog.chunk_texts(doc_id)
            self.lexical.delete_document(doc_id)
            if chunk_ids:
                self.lexical.add(chunk_ids, doc_id, texts, refs.get(doc_id))

    def drop(self, removed: Sequence[tuple[int, list[int]]]) -> None:
        """Remove documents just removed from the catalog, ``(doc_id, chunk_ids)`` each."""
        for doc_id, chunk_ids in removed:
            self.lexical.delete_document(doc_id)
            self.vectors.remove(chunk_ids)

    def save(self, generation: int) -> None:
        """Commit the lexical index and save the vector index, then their generation sidecars."""
        self.lexical.commit(generation)
        self.vectors.save(generation)

    def reload(self) -> None:
        """Read the saved indexes again (another process changed them)."""
        self.lexical.reload()
        self._vectors = None  # reloaded from the saved file on next use

    def close(self) -> None:
        """Close the lexical index's writer, if the index was opened."""
        if self._lexical is not None:
            self._lexical.close()
