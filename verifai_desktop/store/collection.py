"""The embedded store: an opened collection, a folder holding a SQLite catalog and search indexes.

:class:`Collection` implements the store's contract
(:class:`~verifai_desktop.store.base.CollectionStore`) over a collection folder (its layout:
:mod:`verifai_desktop.store.folders`): the catalog, the single source of truth
(:mod:`verifai_desktop.store.catalog`); the BM25 and HNSW indexes derived from it
(:mod:`verifai_desktop.store.indexes`, which also says how they are kept in step after a
crash); the write lock held by the one process writing it (:mod:`verifai_desktop.store.lock`);
the answer history (:mod:`verifai_desktop.store.history`); metadata records such as the roots
it follows (:mod:`verifai_desktop.store.roots`). Ingest runs are
:mod:`verifai_desktop.store.writer`'s; listing, renaming and deleting collections, without
opening them, :mod:`verifai_desktop.store.folders`'.

Importing this module loads no native index library (Tantivy and usearch load when a
collection's indexes are first used), so opening a collection to list its documents stays cheap.
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.domain import Document
from verifai_desktop.errors import (
    CollectionBusy,
    CollectionExists,
    CollectionNotFound,
    EmbedderMismatch,
    IndexCorrupt,
)
from verifai_desktop.index.embedder import Embedder, canonical_name, get_embedder
from verifai_desktop.index.lexical import LexicalIndex
from verifai_desktop.index.vector import VectorIndex
from verifai_desktop.ingest.ocr import OcrOptions
from verifai_desktop.private import tighten, write_private_text
from verifai_desktop.reference import Reference
from verifai_desktop.settings import Settings, collections_dir
from verifai_desktop.store.base import Closes, ScoredChunk
from verifai_desktop.store.catalog import Catalog, CommitItem
from verifai_desktop.store.folders import (
    CATALOG_FILE,
    LOCK_FILE,
    delete_collection,
    make_private_parents,
    metadata_path,
    read_metadata,
    write_new_config,
)
from verifai_desktop.store.history import History
from verifai_desktop.store.indexes import SearchIndexes
from verifai_desktop.store.lock import FileLock
from verifai_desktop.store.naming import CONFIG_FILE, find, folder_for_new, read_config
from verifai_desktop.store.records import ChunkRecord, DocumentRecord
from verifai_desktop.store.roots import forget_roots
from verifai_desktop.store.sources import is_file_source
from verifai_desktop.store.writer import (
    IngestReport,
    ProgressFn,
    ingest_documents,
    ingest_paths,
)

log = logging.getLogger(__name__)

REBUILD_WAIT_S = 60.0  # an ingest waits this long for a reader's index rebuild (seconds)


class Collection(Closes):
    """An opened collection of the embedded store (implements
    :class:`~verifai_desktop.store.base.CollectionStore`). Use :meth:`open`; close it (or use
    ``with``) when done.

    Attributes:
        name: the collection's folder name (what commands and settings store).
        display_name: the name the user gave it (``name`` when none was recorded).
        path: its folder.
        embedder_name: the sentence-transformers model its vectors come from.
        catalog: the SQLite catalog (for the store's own modules and tests: the layers above
            read through the :class:`~verifai_desktop.store.base.CollectionStore` methods).
    """

    def __init__(self, name: str, path: Path, embedder_name: str, *, new: bool = False) -> None:
        self.name = name
        self.display_name = name
        self.path = path
        self.embedder_name = embedder_name
        self.catalog = Catalog(path / CATALOG_FILE, create=new)
        # The indexes open on first use: listing a collection (`verifai status`, `collections`)
        # reads the catalog only.
        self._indexes = SearchIndexes(path)
        self._lock = FileLock(path / LOCK_FILE)
        self._pending_generation: int | None = None
        self._seen_generation = -1
        self._closed = False

    @property
    def lexical(self) -> LexicalIndex:
        """The Tantivy index (opened on first use)."""
        return self._indexes.lexical

    @property
    def vectors(self) -> VectorIndex:
        """The usearch vector index (loaded on first use)."""
        return self._indexes.vectors

    # -- opening -------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        name: str,
        *,
        create: bool = False,
        settings: Settings | None = None,
        embedder: str | None = None,
        reconcile: bool = True,
    ) -> Collection:
        """Open a collection by name, reconciling its indexes with the catalog if needed.

        Args:
            name: the collection's folder or display name; a new collection's name may be
                any printable text (see :mod:`verifai_desktop.store.naming`).
            create: create it when missing.
            settings: settings a new collection takes its embedder from
                (``settings.models.embedder``); ``None`` means the defaults (the bundled
                all-MiniLM-L6-v2). The settings file is never read here: callers pass theirs.
            embedder: the embedder (name or path) the collection must be built with: a new
                collection is created with it, over ``settings``; an existing one built with
                another raises :class:`~verifai_desktop.errors.EmbedderMismatch`.
            reconcile: open both indexes and rebuild those behind the catalog; False opens
                the catalog only, for reading the documents and their status (the indexes
                still open if used). An existing collection only.

        Raises:
            InvalidCollectionName: bad name.
            CollectionNotFound: it does not exist and ``create`` is False.
            EmbedderMismatch: ``embedder`` differs from the one the collection was built with.
            IndexCorrupt: its configuration or catalog cannot be read, its catalog is missing or
                empty (0 bytes), or fails SQLite's quick check.
            ModelNotFound: a new collection's embedder is not on this machine (nothing is
                created).
        """
        found = find(name)
        if found is not None:
            return cls._open_folder(
                found.folder, collections_dir() / found.folder, embedder, reconcile=reconcile
            )
        folder, display = folder_for_new(name)  # InvalidCollectionName before "not found"
        if not create:
            raise CollectionNotFound(name)
        return cls._create_folder(
            folder,
            collections_dir() / folder,
            embedder or (settings or Settings()).models.embedder,
            embedder,
            display_name=display,
        )

    @classmethod
    def create(
        cls,
        name: str,
        *,
        settings: Settings | None = None,
        embedder: str | None = None,
        replace: bool = False,
    ) -> Collection:
        """Create an empty collection and open it.

        Args:
            name: its name: a folder name, or any printable text (then recorded as its
                display name, see :mod:`verifai_desktop.store.naming`).
            settings: settings to take the embedder from; ``None`` means the defaults.
            embedder: embedder name or path, over ``settings``.
            replace: delete an existing collection of that name first (all its files).

        Raises:
            InvalidCollectionName: bad name.
            CollectionExists: it exists and ``replace`` is False.
            CollectionBusy: ``replace`` and another process is writing it.
            ModelNotFound: the embedder is not on this machine (nothing is created).
        """
        found = find(name)
        if found is not None:
            if not replace:
                raise CollectionExists(name)
            delete_collection(found.folder)
        folder, display = folder_for_new(name)
        return cls._create_folder(
            folder,
            collections_dir() / folder,
            embedder or (settings or Settings()).models.embedder,
            None,
            display_name=display,
        )

    @classmethod
    def create_at(
        cls, name: str, path: Path, embedder: str, *, display_name: str | None = None
    ) -> Collection:
        """Create an empty collection in ``path`` (any folder, e.g. a repair's staging folder).

        Raises:
            ModelNotFound: the embedder is not on this machine (nothing is created).
        """
        return cls._create_folder(name, path, embedder, None, display_name=display_name)

    @classmethod
    def _create_folder(
        cls,
        name: str,
        path: Path,
        embedder: str,
        asked: str | None,
        *,
        display_name: str | None = None,
    ) -> Collection:
        """Create and open a new collection; on any failure no folder is left behind."""
        existed = path.exists()
        try:
            write_new_config(path, embedder, display_name)
            return cls._open_folder(name, path, asked, new=True)
        except BaseException:
            if not existed:
                shutil.rmtree(path, ignore_errors=True)
            raise

    @classmethod
    def _open_folder(
        cls,
        name: str,
        path: Path,
        embedder: str | None,
        *,
        new: bool = False,
        reconcile: bool = True,
    ) -> Collection:
        config_path = path / CONFIG_FILE
        try:
            config_data = read_config(path)
            embedder_name = str(config_data["embedder"])
        except (OSError, tomllib.TOMLDecodeError, KeyError) as exc:
            raise IndexCorrupt(
                config_path, f"collection.toml unreadable: {exc}", collection=name
            ) from exc
        if embedder is not None and canonical_name(embedder) != embedder_name:
            raise EmbedderMismatch(name, embedder_name, embedder)
        try:
            collection = cls(name, path, embedder_name, new=new)
        except IndexCorrupt as exc:
            raise IndexCorrupt(exc.path, exc.reason, collection=name) from exc
        display = config_data.get("display_name")
        if isinstance(display, str) and display:
            collection.display_name = display
        if reconcile:
            collection.reconcile()
        collection._seen_generation = collection.catalog.generation()
        make_private_parents()
        tighten(path)  # collections made before files were kept private, or by another tool
        return collection

    def close(self) -> None:
        """Flush pending index changes, release the write lock and close the catalog."""
        if self._closed:
            return
        try:
            if self._lock.held:
                self.flush()
                self._indexes.close()
        finally:
            self._lock.release()
            self.catalog.close()
            self._closed = True

    # -- reading (the CollectionStore contract) ------------------------------------------
    def embedder(self) -> Embedder:
        """The embedder this collection's vectors come from (shared per process)."""
        return get_embedder(self.embedder_name)

    def documents(self) -> list[DocumentRecord]:
        """Every document in the catalog with its status and reason, ordered by source."""
        return self.catalog.documents()

    def document(self, source: str) -> DocumentRecord | None:
        """The catalogued document of ``source`` (absolute path or benchmark key), or None."""
        return self.catalog.document(source)

    def num_chunks(self) -> int:
        """Number of chunks in the catalog."""
        return self.catalog.num_chunks()

    def document_chunk_ids(self, doc_id: int) -> list[int]:
        """The chunk ids of one document, by ordinal
        (:meth:`CollectionStore.document_chunk_ids`)."""
        return self.catalog.chunk_ids_of(doc_id)

    def chunks(self, chunk_ids: Sequence[int]) -> dict[int, ChunkRecord]:
        """The catalogued chunks of ``chunk_ids`` that exist, by id, with their document's
        source and title (:meth:`CollectionStore.chunks`)."""
        return self.catalog.chunk_records(chunk_ids)

    def lexical_search(self, query: str, limit: int) -> list[ScoredChunk]:
        """BM25 top ``limit`` ``(chunk_id, score)``, best first, ties by ascending chunk id;
        stop words and punctuation of ``query`` are ignored (:meth:`LexicalIndex.search`)."""
        return self.lexical.search(query, limit)

    def num_vectors(self) -> int:
        """Vectors in the HNSW index (0: :meth:`vector_search` returns nothing)."""
        return len(self.vectors)

    def vector_search(self, query: NDArray[np.float32], limit: int) -> list[ScoredChunk]:
        """Top ``limit`` ``(chunk_id, cosine)`` for a query vector (float32, shape (dim,),
        L2-normalised), best first, ties by ascending chunk id.

        VerifAI's memory recipe: the HNSW graph holds int8 vectors and only finds the
        candidates; they are rescored with the exact float32 cosine of the vectors in the
        catalog (a candidate no longer catalogued is dropped).
        """
        approx = self.vectors.search(query, limit)
        exact = self.catalog.vectors([cid for cid, _ in approx])
        hits = [(cid, float(np.dot(vec, query))) for cid, vec in exact.items()]
        hits.sort(key=lambda h: (-h[1], h[0]))
        return hits

    def history(self) -> History:
        """The collection's answer history (``history.sqlite``, created on first use), opened;
        the caller closes it.

        Raises:
            IndexCorrupt: the history file is damaged.
            BadRecord: another writer kept it locked too long.
        """
        return History(self.path)

    # -- state ---------------------------------------------------------------------------
    def check(self) -> None:
        """Run the full integrity check of the catalog (reads every page; seconds on big ones).

        Raises:
            IndexCorrupt: the catalog is damaged.
        """
        try:
            self.catalog.check()
        except IndexCorrupt as exc:
            raise IndexCorrupt(exc.path, exc.reason, collection=self.name) from exc

    def generation(self) -> int:
        """The catalog generation."""
        return self.catalog.generation()

    def is_consistent(self) -> bool:
        """True when both saved indexes reflect the catalog's current generation (read from
        their sidecar files: neither index is opened)."""
        return self._indexes.saved_at(self.catalog.generation())

    def metadata(self, key: str) -> dict[str, object]:
        """The metadata record ``key`` (a JSON object); empty when never written or unreadable.

        Raises:
            ValueError: ``key`` is not lowercase letters, digits and ``_`` (at most 40), or
                names an index sidecar.
        """
        return read_metadata(self.path, key)

    def set_metadata(self, key: str, data: Mapping[str, object]) -> None:
        """Record a JSON object under ``key`` (``<key>.json`` in the folder, written atomically).

        Raises:
            CollectionBusy: another process is writing the collection.
            ValueError: bad ``key`` (see :meth:`metadata`).
        """
        path = metadata_path(self.path, key)
        self.acquire_write_lock()
        write_private_text(path, json.dumps(dict(data), indent=2))

    # -- ingesting -----------------------------------------------------------------------
    def add_paths(
        self,
        paths: Sequence[Path],
        *,
        passwords: Mapping[Path, str] | None = None,
        default_password: str | None = None,
        progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
        timeout_s: float = 60.0,
        follow_external_links: bool = False,
        max_chunks_per_file: int | None = None,
        within: Sequence[Path] = (),
        ocr: OcrOptions | None = None,
        check_content: bool = False,
    ) -> IngestReport:
        """Ingest files and folders, incrementally (:func:`.writer.ingest_paths`; ``ocr``:
        how scanned PDF pages are recognised, ``None`` not at all; ``check_content``: hash
        files whose size and mtime are unchanged too).

        Raises:
            Cancelled: ``cancel`` was set; every file finished before is committed.
            CollectionBusy: another process is writing the collection.
        """
        return ingest_paths(
            self,
            paths,
            passwords=passwords,
            default_password=default_password,
            progress=progress,
            cancel=cancel,
            timeout_s=timeout_s,
            follow_external_links=follow_external_links,
            max_chunks_per_file=max_chunks_per_file,
            within=within,
            ocr=ocr,
            check_content=check_content,
        )

    def add_documents(
        self,
        docs: Iterable[tuple[str, Document]],
        *,
        progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
        total: int | None = None,
    ) -> IngestReport:
        """Ingest pre-parsed documents by source key (:func:`.writer.ingest_documents`).

        Raises:
            Cancelled: ``cancel`` was set; committed batches stay.
            CollectionBusy: another process is writing the collection.
        """
        return ingest_documents(self, docs, progress=progress, cancel=cancel, total=total)

    # -- writing -------------------------------------------------------------------------
    def acquire_write_lock(self) -> None:
        """Become the collection's single writer.

        Waits up to :data:`REBUILD_WAIT_S` while a reader rebuilds the indexes.

        Raises:
            CollectionBusy: another process holds the lock (saying whether it is an ingest or
                a rebuild still running after the wait).
        """
        holder = self._lock.acquire_after_rebuild(REBUILD_WAIT_S)
        if holder is not None:
            raise CollectionBusy(self.name, rebuilding=holder == "rebuild")

    def reconcile(self) -> bool:
        """Rebuild every index whose generation differs from the catalog's.

        Needs the write lock; when another process holds it, the indexes are left as they are
        (that process keeps them up to date). Returns True when something was rebuilt.
        """
        return self._indexes.reconcile(self.catalog, self._lock, self.name)

    def commit(self, items: Sequence[CommitItem]) -> int:
        """Write documents to the catalog (one transaction), then to the in-memory indexes.

        Index changes become durable at the next :meth:`flush`. Returns the new generation.
        """
        self.acquire_write_lock()
        generation, results = self.catalog.write_documents(items)
        refs = self.catalog.references_by_doc([doc_id for doc_id, _, new in results if new])
        self._indexes.apply(items, results, refs)
        self._pending_generation = generation
        return generation

    def set_references(self, items: Sequence[tuple[str, Reference]]) -> None:
        """Keep the reference-manager entries of sources (issue 43): in the catalog, and as
        the lexical metadata fields of the documents already indexed; flushes.

        Args:
            items: ``(source, entry)`` pairs; an unchanged entry is not written.
        """
        self.acquire_write_lock()
        before = self.catalog.generation()
        generation, changed = self.catalog.set_references(items)
        if generation != before:
            self._indexes.relabel(self.catalog, changed)
            self._pending_generation = generation
        self.flush()

    def references_of(self, library: str) -> dict[str, Reference]:
        """The entries kept for the sources of one library (its path as text), by source."""
        return self.catalog.references_of(library)

    def remove_sources(self, sources: Sequence[str]) -> list[str]:
        """Remove documents (by source) from the catalog and every index; flushes.

        Returns:
            The sources that were present.
        """
        self.acquire_write_lock()
        present = [s for s in sources if self.catalog.document(s) is not None]
        generation, removed = self.catalog.remove(present)
        self._indexes.drop(removed)
        if removed:
            self._pending_generation = generation
        self.flush()
        return present

    def remove(self, path: Path | str) -> bool:
        """Remove one file (or every file under a folder) from the collection, and stop
        following it (folder watching).

        Returns:
            True when something was removed.
        """
        is_file = is_file_source(str(path))
        source = str(Path(path).expanduser().absolute()) if is_file else str(path)
        sources = [source] if self.catalog.document(source) else []
        if not sources and is_file:
            sources = self.catalog.sources_under(Path(source))
        forgotten = is_file and forget_roots(self, Path(source))  # no longer followed
        return bool(self.remove_sources(sources)) or forgotten

    def flush(self) -> None:
        """Commit the lexical index and save the vector index, then their generation sidecars."""
        if self._pending_generation is None:
            return
        self._indexes.save(self._pending_generation)
        self._pending_generation = None
        tighten(self.path)  # new Tantivy segments and SQLite -wal/-shm files

    def refresh(self) -> None:
        """Pick up changes another process committed since this collection was opened.

        Cheap when nothing changed (one SQLite read); otherwise reloads the index files, and
        rebuilds them if they are behind and nobody else is writing.
        """
        if self._lock.held:
            return
        gen = self.catalog.generation()
        if gen == self._seen_generation:
            return
        self.reconcile()
        self._indexes.reload()
        self._seen_generation = gen
