"""What the store hands out about its documents and chunks: :class:`DocumentRecord` and
:class:`ChunkRecord`.

They are the value types of the store's contract
(:class:`~verifai_desktop.store.base.CollectionStore`), the same whichever implementation holds
the collection; the embedded store's SQLite catalog (:mod:`verifai_desktop.store.catalog`)
builds them from its rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from verifai_desktop.domain import Chunk, ChunkId, DocFormat, DocId, DocStatus
from verifai_desktop.reference import Reference


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    """One catalogued document and the outcome of its last ingest.

    Attributes:
        doc_id: catalog id.
        source: absolute file path, or a benchmark key (``"beir:<id>"``,
            :mod:`verifai_desktop.store.sources`) for pre-parsed corpora.
        title: document title ('' when it was never parsed).
        sha256: hex digest of the file bytes (of the text for pre-parsed documents; '' when
            the file could not be read).
        size_bytes: file size when ingested.
        mtime_ns: file modification time when ingested (ns since the epoch).
        format: file format, ``None`` when it could not be detected.
        status: outcome of the last ingest of this source.
        reason: why it is not indexed ('' when indexed).
        chunk_count: number of chunks in the indexes.
        ingested_at: when the row was written (seconds since the epoch).
    """

    doc_id: DocId
    source: str
    title: str
    sha256: str
    size_bytes: int
    mtime_ns: int
    format: DocFormat | None
    status: DocStatus
    reason: str
    chunk_count: int
    ingested_at: float

    @property
    def path(self) -> Path:
        """The source as a path (benchmark keys become a relative path of that name)."""
        return Path(self.source)


@dataclass(frozen=True, slots=True)
class ChunkRecord:
    """A chunk joined with its document, as retrieval needs it.

    Attributes:
        chunk_id: catalog id.
        doc_id: document id.
        source: document source (path or key).
        title: document title.
        chunk: the chunk (offsets into the document text, sentence spans into the chunk).
        instruction_cues: phrases in the chunk text that read as instructions to an AI
            (prompt injection), as
            :func:`verifai_desktop.ingest.injection.instruction_cues` found them when the
            chunk was written; ``()`` if none.
        reference: the document's reference-manager entry, ``None`` when it has none.
    """

    chunk_id: ChunkId
    doc_id: DocId
    source: str
    title: str
    chunk: Chunk
    instruction_cues: tuple[str, ...]
    reference: Reference | None = None
