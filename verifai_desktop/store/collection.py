"""Named collections: a catalog (SQLite) plus the lexical and vector indexes derived from it.

Layout of ``collections_dir()/<name>/``: ``catalog.sqlite`` (WAL, the single source of truth),
``lexical/`` (Tantivy) with ``lexical.json``, ``vectors.usearch`` with ``vectors.json`` (the
sidecars record the catalog generation each index reflects), ``collection.toml`` (embedder name,
creation time) and ``write.lock`` (held by the one process writing the collection).

Crash safety: a change is committed to SQLite first; the indexes are updated afterwards and
record the generation they reflect. On open, an index whose generation differs from the
catalog's is rebuilt from SQLite, so a process killed at any moment leaves a collection that
opens, answers searches and resumes.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import shutil
import tomllib
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import IO

import numpy as np
import tomli_w
from numpy.typing import NDArray

from verifai_desktop.domain import Chunk, DocStatus
from verifai_desktop.errors import (
    CollectionBusy,
    CollectionNotFound,
    IndexCorrupt,
    InvalidCollectionName,
)
from verifai_desktop.index.embedder import Embedder, canonical_name, get_embedder
from verifai_desktop.index.lexical import LexicalIndex
from verifai_desktop.index.vector import VectorIndex
from verifai_desktop.store.catalog import Catalog, DocumentMeta, DocumentRecord
from verifai_desktop.settings import Settings, collections_dir, load_settings

__all__ = [
    "Collection",
    "CollectionBusy",
    "DocumentRecord",
    "InvalidCollectionName",
    "delete_collection",
    "list_collections",
    "rename_collection",
    "validate_name",
]

log = logging.getLogger(__name__)

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")

CommitItem = tuple[DocumentMeta, DocStatus, str, Sequence[Chunk], NDArray[np.float32] | None]


def validate_name(name: str) -> str:
    """Return ``name`` if it is a valid collection name.

    Raises:
        InvalidCollectionName: it is not.
    """
    if not _NAME_RE.match(name) or name in {".", ".."}:
        raise InvalidCollectionName(name)
    return name


class _FileLock:
    """An exclusive advisory lock on a file; released by the OS when the process dies."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh: IO[bytes] | None = None

    @property
    def held(self) -> bool:
        return self._fh is not None

    def try_acquire(self) -> bool:
        if self._fh is not None:
            return True
        fh = open(self.path, "a+b")  # noqa: SIM115 - kept open while the lock is held
        try:
            if os.name == "nt":  # pragma: no cover - Windows
                import msvcrt

                msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined,unused-ignore]
            else:
                import fcntl

                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            return False
        self._fh = fh
        return True

    def release(self) -> None:
        if self._fh is None:
            return
        try:
            if os.name == "nt":  # pragma: no cover - Windows
                import msvcrt

                msvcrt.locking(self._fh.fileno(), msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined,unused-ignore]
            else:
                import fcntl

                fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
        finally:
            self._fh.close()
            self._fh = None


class Collection:
    """An opened collection. Use :meth:`open`; close it (or use ``with``) when done.

    Attributes:
        name: collection name.
        path: its folder.
        embedder_name: the sentence-transformers model its vectors come from.
        catalog: the SQLite catalog.
    """

    def __init__(self, name: str, path: Path, embedder_name: str) -> None:
        self.name = name
        self.path = path
        self.embedder_name = embedder_name
        self.catalog = Catalog(path / "catalog.sqlite")
        self.lexical = LexicalIndex(path / "lexical", path / "lexical.json")
        self.vectors = VectorIndex(path / "vectors.usearch", path / "vectors.json")
        self._lock = _FileLock(path / "write.lock")
        self._pending_generation: int | None = None
        self._seen_generation = -1
        self._closed = False

    # -- opening -------------------------------------------------------------------------
    @classmethod
    def open(
        cls, name: str, *, create: bool = False, settings: Settings | None = None
    ) -> Collection:
        """Open a collection by name, reconciling its indexes with the catalog if needed.

        Args:
            name: collection name (letters, digits, ``-``, ``_``, ``.``).
            create: create it when missing (with the embedder from ``settings``).
            settings: settings to take the default embedder from; loaded when ``None``.

        Raises:
            InvalidCollectionName: bad name.
            CollectionNotFound: it does not exist and ``create`` is False.
            IndexCorrupt: its catalog cannot be read.
        """
        validate_name(name)
        path = collections_dir() / name
        config_path = path / "collection.toml"
        if not config_path.exists():
            if not create:
                raise CollectionNotFound(name)
            settings = settings or load_settings()
            path.mkdir(parents=True, exist_ok=True)
            config = {
                "embedder": canonical_name(settings.models.embedder),
                "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                "format": 1,
            }
            tmp = config_path.with_suffix(".toml.tmp")
            tmp.write_text(tomli_w.dumps(config), encoding="utf-8")
            os.replace(tmp, config_path)
        try:
            config_data = tomllib.loads(config_path.read_text(encoding="utf-8"))
            embedder_name = str(config_data["embedder"])
        except (OSError, tomllib.TOMLDecodeError, KeyError) as exc:
            raise IndexCorrupt(config_path, f"collection.toml unreadable: {exc}") from exc
        collection = cls(name, path, embedder_name)
        collection.reconcile()
        collection._seen_generation = collection.catalog.generation()
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
                self.lexical.close()
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

    def generation(self) -> int:
        """The catalog generation."""
        return self.catalog.generation()

    def is_consistent(self) -> bool:
        """True when both saved indexes reflect the catalog's current generation."""
        gen = self.catalog.generation()
        return self.lexical.generation() == gen and self.vectors.generation() == gen

    # -- writing -------------------------------------------------------------------------
    def acquire_write_lock(self) -> None:
        """Become the collection's single writer.

        Raises:
            CollectionBusy: another process holds the lock.
        """
        if not self._lock.try_acquire():
            raise CollectionBusy(self.name)

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
        if not self._lock.try_acquire():
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
        """Remove one file (or every file under a folder) from the collection.

        Returns:
            True when something was removed.
        """
        source = (
            str(path) if str(path).startswith("beir:") else str(Path(path).expanduser().absolute())
        )
        sources = [source] if self.catalog.document(source) else []
        if not sources and not source.startswith("beir:"):
            sources = self.catalog.sources_under(Path(source))
        return bool(self.remove_sources(sources))

    def flush(self) -> None:
        """Commit the lexical index and save the vector index, then their generation sidecars."""
        if self._pending_generation is None:
            return
        gen = self._pending_generation
        self.lexical.commit(gen)
        self.vectors.save(gen)
        self._pending_generation = None

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
        self.vectors = VectorIndex(self.path / "vectors.usearch", self.path / "vectors.json")
        self._seen_generation = gen


def list_collections() -> list[str]:
    """Names of the existing collections, sorted."""
    root = collections_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "collection.toml").is_file())


def _locked_path(name: str) -> Path:
    validate_name(name)
    path = collections_dir() / name
    if not (path / "collection.toml").is_file():
        raise CollectionNotFound(name)
    return path


def delete_collection(name: str) -> None:
    """Delete a collection and all its files.

    Raises:
        CollectionNotFound: no such collection.
        CollectionBusy: it is being written.
    """
    path = _locked_path(name)
    lock = _FileLock(path / "write.lock")
    if not lock.try_acquire():
        raise CollectionBusy(name)
    try:
        shutil.rmtree(path)
    finally:
        lock.release()


def rename_collection(old: str, new: str) -> None:
    """Rename a collection.

    Raises:
        CollectionNotFound: ``old`` does not exist.
        InvalidCollectionName: ``new`` is not a valid name, or already exists.
        CollectionBusy: it is being written.
    """
    path = _locked_path(old)
    validate_name(new)
    target = collections_dir() / new
    if target.exists():
        raise InvalidCollectionName(f"{new} (a collection with that name exists)")
    lock = _FileLock(path / "write.lock")
    if not lock.try_acquire():
        raise CollectionBusy(old)
    try:
        os.rename(path, target)
    finally:
        lock.release()
