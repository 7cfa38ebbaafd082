"""What an ingest run reports: :class:`Outcome` per source, :class:`FileOutcome` and
:class:`IngestReport` (:mod:`verifai_desktop.store.writer` runs the ingest)."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from verifai_desktop.domain import DocFormat, DocStatus


class Outcome(enum.StrEnum):
    """What one ingest run did with one source: wrote it with a :class:`DocStatus`, or not.

    The five written outcomes ARE the document statuses (same names, same values, see
    :meth:`written`); a run adds only ``SKIPPED`` (unchanged since the last run, nothing written)
    and ``REMOVED`` (gone from a folder that was ingested again).
    """

    INDEXED = DocStatus.INDEXED.value
    SKIPPED = "skipped"
    FAILED = DocStatus.FAILED.value
    ENCRYPTED = DocStatus.ENCRYPTED.value
    NEEDS_OCR = DocStatus.NEEDS_OCR.value
    EMPTY = DocStatus.EMPTY.value
    REMOVED = "removed"

    @classmethod
    def written(cls, status: DocStatus) -> Outcome:
        """The outcome of writing a document with ``status`` to the catalog."""
        return cls(status.value)


@dataclass(frozen=True, slots=True)
class FileOutcome:
    """The result for one source.

    Attributes:
        source: absolute path (or benchmark key, :mod:`verifai_desktop.store.sources`).
        status: what happened in this run.
        reason: why it was not indexed ('' when indexed or skipped).
        chunk_count: chunks now indexed for it (for skipped files: as before).
        section_count: pages, slides, chapters or sections parsed in this run (0 if not parsed).
        format: detected format, ``None`` if unknown or not parsed.
        stored_status: the status now in the catalog (``None`` once removed).
    """

    source: str
    status: Outcome
    reason: str = ""
    chunk_count: int = 0
    section_count: int = 0
    format: DocFormat | None = None
    stored_status: DocStatus | None = None


@dataclass(frozen=True, slots=True)
class IngestReport:
    """Outcome of an ingest run, with the wall time spent in each stage.

    Attributes:
        outcomes: one per source seen, in processing order (removed sources last).
        elapsed_ms: total wall time.
        parse_ms: reading, hashing and parsing files.
        chunk_ms: sentence splitting and chunking (token counting and reference tagging
            included).
        embed_ms: computing embeddings.
        index_ms: SQLite commits (the prompt-injection cues of each chunk are found there)
            and Tantivy/usearch updates and saves.
        load_ms: loading the embedding model (once per process).
        counts: number of sources per outcome value.
    """

    outcomes: tuple[FileOutcome, ...]
    elapsed_ms: float
    parse_ms: float = 0.0
    chunk_ms: float = 0.0
    embed_ms: float = 0.0
    index_ms: float = 0.0
    load_ms: float = 0.0
    counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def chunks_indexed(self) -> int:
        """Chunks written in this run."""
        return sum(o.chunk_count for o in self.outcomes if o.status is Outcome.INDEXED)

    @property
    def sections_parsed(self) -> int:
        """Pages/slides/chapters/sections parsed in this run."""
        return sum(o.section_count for o in self.outcomes)

    def count(self, status: Outcome) -> int:
        """Number of sources with the given outcome."""
        return sum(1 for o in self.outcomes if o.status is status)
