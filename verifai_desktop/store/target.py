"""What an ingest run writes into: :class:`IngestTarget`, a store that can also be written.

The ingest runs (:mod:`verifai_desktop.store.writer`) are the same for every store: they walk,
hash, parse, chunk and embed, then hand each document to :meth:`IngestTarget.commit`. The
embedded store (:class:`~verifai_desktop.store.collection.Collection`) and the PostgreSQL store
(:class:`~verifai_desktop.store.pg.store.PgStore`) implement it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from verifai_desktop.index.embedder import Embedder
from verifai_desktop.store.base import CollectionStore
from verifai_desktop.store.catalog import CommitItem
from verifai_desktop.store.records import DocumentRecord


class CatalogReader(Protocol):
    """The catalog reads an ingest run needs to resume by hash and to find removed files."""

    def document(self, source: str) -> DocumentRecord | None:
        """The document of ``source``, or None."""
        ...

    def touch(self, source: str, mtime_ns: int) -> None:
        """Record a new mtime for an unchanged file (same sha256)."""
        ...

    def sources_under(self, folder: Path) -> list[str]:
        """Sources that are files inside ``folder`` (recursively)."""
        ...


class RunTarget(Protocol):
    """What the per-file steps of an ingest run (:class:`~verifai_desktop.store.ingest_run.
    IngestRun`) use: the embedder, the catalog, commits and flushes. Every
    :class:`IngestTarget` is one; so is what a Ray task keeps a file's writes in
    (:mod:`verifai_desktop.store.spread`)."""

    @property
    def catalog(self) -> CatalogReader: ...

    @property
    def embedder_name(self) -> str: ...

    def embedder(self) -> Embedder:
        """The embedder chunks are embedded with (and their tokens counted with): the one
        ``embedder_name`` names."""
        ...

    def commit(self, items: Sequence[CommitItem]) -> int:
        """Write documents, each whole or not at all; returns the new generation."""
        ...

    def flush(self) -> None:
        """Make pending index changes durable."""
        ...


class IngestTarget(CollectionStore, RunTarget, Protocol):
    """A collection an ingest run writes: the store contract plus the writes."""

    def acquire_write_lock(self) -> None:
        """Become the collection's writer.

        Raises:
            CollectionBusy: another process is writing it.
        """
        ...

    def remove_sources(self, sources: Sequence[str]) -> list[str]:
        """Remove documents by source; returns the sources that were present."""
        ...
