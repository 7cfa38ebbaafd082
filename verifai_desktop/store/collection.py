"""Named collections: a catalog (SQLite) plus the lexical and vector indexes derived from it.

Layout of ``collections_dir()/<folder>/``: ``catalog.sqlite`` (WAL, the single source of truth),
``lexical/`` (Tantivy) with ``lexical.json``, ``vectors.usearch`` with ``vectors.json`` (the
sidecars record the catalog generation each index reflects), ``collection.toml`` (embedder name,
creation time), ``write.lock`` (held by the one process writing the collection) and
``<key>.json`` metadata records written through :meth:`Collection.set_metadata` (e.g.
``beir_corpus.json``, the BEIR corpus fingerprint).

Crash safety: a change is committed to SQLite first; the indexes are updated afterwards and
record the generation they reflect. On open, an index whose generation differs from the
catalog's is rebuilt from SQLite, so a process killed at any moment leaves a collection that
opens, answers searches and resumes.

Importing this module loads no native index library (Tantivy and usearch load when a
collection is opened), so listing, renaming and deleting collections stays cheap.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import re
import shutil
import threading
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType

from verifai_desktop.domain import Document
from verifai_desktop.errors import (
    CollectionBusy,
    CollectionExists,
    CollectionNotFound,
    EmbedderMismatch,
    IndexCorrupt,
)
from verifai_desktop.index.embedder import (
    Embedder,
    canonical_name,
    check_embedder,
    get_embedder,
)
from verifai_desktop.index.lexical import LexicalIndex
from verifai_desktop.index.lexical import saved_generation as lexical_generation
from verifai_desktop.index.vector import VectorIndex
from verifai_desktop.index.vector import saved_generation as vector_generation
from verifai_desktop.private import make_private_dir, tighten, write_private_text
from verifai_desktop.settings import Settings, collections_dir, data_root
from verifai_desktop.store.catalog import Catalog, CommitItem, DocumentRecord
from verifai_desktop.store.lock import FileLock
from verifai_desktop.store.naming import (
    CONFIG_FILE,
    find,
    folder_for_new,
    is_folder_name,
    list_folders,
    read_config,
    slug,
    validate_display_name,
    validate_name,
    write_config,
)
from verifai_desktop.store.writer import (
    IngestReport,
    ProgressFn,
    ingest_documents,
    ingest_paths,
)

__all__ = [
    "Collection",
    "collection_metadata",
    "delete_collection",
    "existing_path",
    "list_collections",
    "rename_collection",
    "validate_name",
]

log = logging.getLogger(__name__)

_METADATA_KEY_RE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_RESERVED_KEYS = frozenset({"lexical", "vectors"})  # the index sidecars
CATALOG_FILE = "catalog.sqlite"
REBUILD_WAIT_S = 60.0  # an ingest waits this long for a reader's index rebuild (seconds)


def _write_config(path: Path, embedder: str, display_name: str | None = None) -> None:
    """Create the folder and its ``collection.toml`` (atomically: temp file, then rename).

    Raises:
        ModelNotFound: the embedder is not on this machine; nothing is created.
    """
    check_embedder(embedder)
    _private_parents()
    make_private_dir(path)
    config: dict[str, object] = {
        "embedder": canonical_name(embedder),
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "format": 1,
    }
    if display_name is not None:
        config["display_name"] = display_name
    write_config(path, config)


def _private_parents() -> None:
    """Make the data root and the collections folder user-only (created if missing)."""
    make_private_dir(data_root())
    make_private_dir(collections_dir())


def _metadata_path(folder: Path, key: str) -> Path:
    if not _METADATA_KEY_RE.match(key) or key in _RESERVED_KEYS:
        raise ValueError(f"invalid collection metadata key {key!r}")
    return folder / f"{key}.json"


def _read_json_object(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class Collection:
    """An opened collection. Use :meth:`open`; close it (or use ``with``) when done.

    Attributes:
        name: the collection's folder name (what commands and settings store).
        display_name: the name the user gave it (``name`` when none was recorded).
        path: its folder.
        embedder_name: the sentence-transformers model its vectors come from.
        catalog: the SQLite catalog.
    """

    def __init__(self, name: str, path: Path, embedder_name: str, *, new: bool = False) -> None:
        self.name = name
        self.display_name = name
        self.path = path
        self.embedder_name = embedder_name
        self.catalog = Catalog(path / CATALOG_FILE, create=new)
        # The indexes open on first use: listing a collection (`verifai status`, `collections`)
        # reads the catalog only, and usearch would load ONNX Runtime first (index/vector.py).
        self._lexical: LexicalIndex | None = None
        self._vectors: VectorIndex | None = None
        self._lock = FileLock(path / "write.lock")
        self._pending_generation: int | None = None
        self._seen_generation = -1
        self._closed = False

    @property
    def lexical(self) -> LexicalIndex:
        """The Tantivy index (opened on first use)."""
        if self._lexical is None:
            self._lexical = LexicalIndex(self.path / "lexical", self.path / "lexical.json")
        return self._lexical

    @property
    def vectors(self) -> VectorIndex:
        """The usearch vector index (loaded on first use)."""
        if self._vectors is None:
            self._vectors = VectorIndex(self.path / "vectors.usearch", self.path / "vectors.json")
        return self._vectors

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
            _write_config(path, embedder, display_name)
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
        _private_parents()
        tighten(path)  # collections made before files were kept private, or by another tool
        return collection

    def __enter__(self) -> Collection:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Flush pending index changes, release the write lock and close the catalog."""
        if self._closed:
            return
        try:
            if self._lock.held:
                self.flush()
                if self._lexical is not None:
                    self._lexical.close()
        finally:
            self._lock.release()
            self.catalog.close()
            self._closed = True

    # -- state ---------------------------------------------------------------------------
    def embedder(self) -> Embedder:
        """The embedder this collection's vectors come from (shared per process)."""
        return get_embedder(self.embedder_name)

    def documents(self) -> list[DocumentRecord]:
        """Every document in the catalog with its status and reason, ordered by source."""
        return self.catalog.documents()

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
        gen = self.catalog.generation()
        return (
            lexical_generation(self.path / "lexical.json") == gen
            and vector_generation(self.path / "vectors.json") == gen
        )

    def metadata(self, key: str) -> dict[str, object]:
        """The metadata record ``key`` (a JSON object); empty when never written or unreadable.

        Raises:
            ValueError: ``key`` is not lowercase letters, digits and ``_`` (at most 40), or
                names an index sidecar.
        """
        return _read_json_object(_metadata_path(self.path, key))

    def set_metadata(self, key: str, data: Mapping[str, object]) -> None:
        """Record a JSON object under ``key`` (``<key>.json`` in the folder, written atomically).

        Raises:
            CollectionBusy: another process is writing the collection.
            ValueError: bad ``key`` (see :meth:`metadata`).
        """
        path = _metadata_path(self.path, key)
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
    ) -> IngestReport:
        """Ingest files and folders, incrementally (:func:`.writer.ingest_paths`).

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
        gen = self.catalog.generation()
        stale_lex = self.lexical.generation() != gen
        stale_vec = self.vectors.generation() != gen
        if not (stale_lex or stale_vec):
            self.lexical.reload()
            return False
        had_lock = self._lock.held
        if not self._lock.try_acquire(purpose="rebuild"):
            log.info(
                "collection %s: indexes behind the catalog; another process is writing", self.name
            )
            return False
        try:
            if stale_lex:
                log.info(
                    "collection %s: rebuilding the lexical index (generation %d)", self.name, gen
                )
                self.lexical.rebuild(self.catalog.iter_chunk_texts(), gen)
                if not had_lock:
                    self.lexical.close()
            if stale_vec:
                log.info(
                    "collection %s: rebuilding the vector index (generation %d)", self.name, gen
                )
                ids, mat = self.catalog.all_vectors()
                self.vectors.rebuild(ids, mat, gen)
        finally:
            if not had_lock:
                self._lock.release()
        return True

    def commit(self, items: Sequence[CommitItem]) -> int:
        """Write documents to the catalog (one transaction), then to the in-memory indexes.

        Index changes become durable at the next :meth:`flush`. Returns the new generation.
        """
        self.acquire_write_lock()
        generation, results = self.catalog.write_documents(items)
        for (_, _, _, chunks, vectors), (doc_id, removed, new_ids) in zip(
            items, results, strict=True
        ):
            if removed:
                self.lexical.delete_document(doc_id)
                self.vectors.remove(removed)
            if new_ids:
                assert vectors is not None
                self.lexical.add(new_ids, doc_id, [c.text for c in chunks])
                self.vectors.add(new_ids, vectors)
        self._pending_generation = generation
        return generation

    def remove_sources(self, sources: Sequence[str]) -> list[str]:
        """Remove documents (by source) from the catalog and every index; flushes.

        Returns:
            The sources that were present.
        """
        self.acquire_write_lock()
        present = [s for s in sources if self.catalog.document(s) is not None]
        generation, removed = self.catalog.remove(present)
        for doc_id, chunk_ids in removed:
            self.lexical.delete_document(doc_id)
            self.vectors.remove(chunk_ids)
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
        source = (
            str(path) if str(path).startswith("beir:") else str(Path(path).expanduser().absolute())
        )
        sources = [source] if self.catalog.document(source) else []
        if not sources and not source.startswith("beir:"):
            sources = self.catalog.sources_under(Path(source))
        forgotten = False
        if not source.startswith("beir:"):
            from verifai_desktop.store.watch import forget_roots

            forgotten = forget_roots(self, Path(source))  # no longer followed
        return bool(self.remove_sources(sources)) or forgotten

    def flush(self) -> None:
        """Commit the lexical index and save the vector index, then their generation sidecars."""
        if self._pending_generation is None:
            return
        gen = self._pending_generation
        self.lexical.commit(gen)
        self.vectors.save(gen)
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
        self.lexical.reload()
        self._vectors = None  # reloaded from the saved file on next use
        self._seen_generation = gen


def list_collections() -> list[str]:
    """Folder names of the existing collections, sorted (:func:`naming.list_names` gives
    their display names too)."""
    return sorted(p.name for p in list_folders())


def collection_metadata(name: str, key: str) -> dict[str, object]:
    """:meth:`Collection.metadata` of a collection without opening it (empty if it is missing).

    Raises:
        InvalidCollectionName: bad name.
        ValueError: bad ``key``.
    """
    found = find(name)
    if found is None:
        folder_for_new(name)  # InvalidCollectionName for a name no collection can have
        return {}
    return _read_json_object(_metadata_path(collections_dir() / found.folder, key))


def existing_path(name: str) -> Path:
    """The folder of an existing collection, named by its folder or display name.

    Raises:
        InvalidCollectionName: bad name.
        CollectionNotFound: no such collection.
    """
    found = find(name)
    if found is None:
        folder_for_new(name)  # InvalidCollectionName first
        raise CollectionNotFound(name)
    return collections_dir() / found.folder


def delete_collection(name: str) -> None:
    """Delete a collection and all its files.

    Raises:
        CollectionNotFound: no such collection.
        CollectionBusy: it is being written.
    """
    path = existing_path(name)
    lock = FileLock(path / "write.lock")
    if not lock.try_acquire():
        raise CollectionBusy(name)
    try:
        shutil.rmtree(path)
    finally:
        lock.release()


def rename_collection(old: str, new: str) -> str:
    """Give a collection a new name; returns its folder name afterwards.

    The folder follows the name where it can: a valid folder name becomes the folder, any
    other name gets a folder made from it (:func:`naming.slug`) and is recorded as the display
    name. The catalog, indexes and settings inside the folder are untouched.

    Raises:
        CollectionNotFound: ``old`` does not exist.
        InvalidCollectionName: ``new`` cannot name a collection.
        CollectionExists: another collection has that name (folder or display name).
        CollectionBusy: it is being written.
    """
    path = existing_path(old)
    display = validate_display_name(new)
    other = find(display)
    if other is not None and other.folder != path.name:
        raise CollectionExists(new)
    if is_folder_name(display):
        folder, recorded = display, None
    elif slug(display) == path.name:
        folder, recorded = path.name, display
    else:
        folder, recorded = folder_for_new(display)
    target = collections_dir() / folder
    if folder != path.name and target.exists():
        raise CollectionExists(new)
    lock = FileLock(path / "write.lock")
    if not lock.try_acquire():
        raise CollectionBusy(old)
    try:
        config = read_config(path)
        config.pop("display_name", None)
        if recorded is not None:
            config["display_name"] = recorded
        write_config(path, config)
        if folder != path.name:
            os.rename(path, target)
    finally:
        lock.release()
    return folder
