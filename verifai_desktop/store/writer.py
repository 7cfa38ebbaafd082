"""Ingest runs: files (or pre-parsed documents) -> chunks -> embeddings -> catalog and indexes.

Every file is committed to the catalog in one SQLite transaction holding all its chunks and
vectors, so a run killed at any moment loses at most the file in flight; already committed files
are skipped by hash on the next run. Indexes are flushed every couple of seconds and at the end
(see :mod:`verifai_desktop.store.indexes` for how they are reconciled after a crash). A run
of paths also remembers them as the collection's roots (:mod:`verifai_desktop.store.roots`).

The entry points are :meth:`Collection.add_paths` and :meth:`Collection.add_documents`, which
call :func:`ingest_paths` and :func:`ingest_documents` here; they take any store that can be
written (:class:`~verifai_desktop.store.target.IngestTarget`, e.g. the PostgreSQL store).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.domain import Chunk, DocStatus, Document, Progress
from verifai_desktop.errors import Cancelled, EncryptedDocument, NeedsOcr, ParseError
from verifai_desktop.hashing import not_regular_reason, os_error_reason
from verifai_desktop.index.embedder import Embedder
from verifai_desktop.index.onnx_embedder import EMBED_BATCH_SIZE
from verifai_desktop.ingest.chunking import CachedTokenCounter, chunk_document
from verifai_desktop.ingest.ocr import OcrOptions, unread_summary, worth_retrying
from verifai_desktop.ingest.parse import ParserPool
from verifai_desktop.ingest.references import tag_references
from verifai_desktop.store.catalog import CommitItem, DocumentMeta
from verifai_desktop.store.outcomes import FileOutcome as FileOutcome
from verifai_desktop.store.outcomes import IngestReport as IngestReport
from verifai_desktop.store.outcomes import Outcome as Outcome
from verifai_desktop.store.records import DocumentRecord
from verifai_desktop.store.roots import remember_roots
from verifai_desktop.store.walk import expand_paths, is_gone

if TYPE_CHECKING:
    # The stores call into this module (Collection.add_paths); the type is enough here.
    from verifai_desktop.store.target import IngestTarget

log = logging.getLogger(__name__)

ProgressFn = Callable[[Progress], None]

FLUSH_INTERVAL_S = 2.0
"""Index flush period: SQLite commits every file; Tantivy/usearch are saved at most this often."""

DOCUMENT_BATCH_CHUNKS = 256
"""Pre-parsed documents are embedded and committed in batches of about this many chunks."""


@dataclass
class _Timer:
    parse: float = 0.0
    chunk: float = 0.0
    embed: float = 0.0
    load: float = 0.0
    index: float = 0.0


class _Run:
    """State shared by the two ingest entry points."""

    def __init__(
        self,
        collection: IngestTarget,
        progress: ProgressFn | None,
        cancel: threading.Event | None,
        max_chunks: int | None = None,
    ) -> None:
        self.collection = collection
        self.max_chunks = max_chunks
        self.progress = progress
        self.cancel = cancel
        self.timer = _Timer()
        self.outcomes: list[FileOutcome] = []
        self.started = time.perf_counter()
        self.last_flush = time.monotonic()
        self.chunks_done = 0
        self._embedder: Embedder | None = None
        self._counter: CachedTokenCounter | None = None

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            t0 = time.perf_counter()
            embedder = self.collection.embedder()
            _ = embedder.dim  # load the model now so its start-up is not billed to a stage
            self.timer.load += time.perf_counter() - t0
            self._embedder = embedder
        return self._embedder

    def report(self, what: str, done: int, total: int | None, unit: str, message: str = "") -> None:
        if self.progress is not None:
            self.progress(Progress(what, done, total, unit, message))

    def check_cancel(self, what: str) -> None:
        if self.cancel is not None and self.cancel.is_set():
            self.flush(force=True)
            raise Cancelled(what)

    def chunk(self, doc: Document) -> tuple[Chunk, ...]:
        embedder = self.embedder
        t0 = time.perf_counter()
        if self._counter is None:
            # One word-level token cache per run: repeated words are tokenised once.
            self._counter = CachedTokenCounter(
                embedder.count_tokens, count_batch=embedder.count_tokens_batch
            )
        chunks = chunk_document(doc, count_tokens=self._counter, max_tokens=embedder.max_tokens)
        chunks = tag_references(chunks)
        self.timer.chunk += time.perf_counter() - t0
        return chunks

    def embed(self, texts: Sequence[str], what: str) -> NDArray[np.float32]:
        """Embed in batches, reporting chunks and checking ``cancel`` between batches."""
        t0 = time.perf_counter()
        parts: list[NDArray[np.float32]] = []
        try:
            for start in range(0, len(texts), EMBED_BATCH_SIZE):
                if start:
                    self.check_cancel(what)
                parts.append(self.embedder.embed(texts[start : start + EMBED_BATCH_SIZE]))
                self.chunks_done += len(parts[-1])
                self.report("embed", self.chunks_done, None, "chunks")
        finally:
            self.timer.embed += time.perf_counter() - t0
        if not parts:
            return np.zeros((0, 1), dtype=np.float32)
        return np.concatenate(parts, axis=0)

    def commit(self, items: Sequence[CommitItem]) -> None:
        t0 = time.perf_counter()
        self.collection.commit(items)
        self.timer.index += time.perf_counter() - t0
        self.flush(force=False)

    def flush(self, *, force: bool) -> None:
        if not force and time.monotonic() - self.last_flush < FLUSH_INTERVAL_S:
            return
        t0 = time.perf_counter()
        self.collection.flush()
        self.timer.index += time.perf_counter() - t0
        self.last_flush = time.monotonic()

    def finish(self) -> IngestReport:
        self.flush(force=True)
        counts: dict[str, int] = {}
        for o in self.outcomes:
            counts[o.status.value] = counts.get(o.status.value, 0) + 1
        return IngestReport(
            outcomes=tuple(self.outcomes),
            elapsed_ms=(time.perf_counter() - self.started) * 1000.0,
            parse_ms=self.timer.parse * 1000.0,
            chunk_ms=self.timer.chunk * 1000.0,
            embed_ms=self.timer.embed * 1000.0,
            index_ms=self.timer.index * 1000.0,
            load_ms=self.timer.load * 1000.0,
            counts=counts,
        )


def _password_for(
    path: Path, raw_keys: Mapping[Path, str] | None, default_password: str | None
) -> str | None:
    if raw_keys:
        for key, value in raw_keys.items():
            if Path(key).expanduser().resolve() == path:
                return value
    return default_password


def _too_large_reason(chunks: int, limit: int) -> str:
    return (
        f"too large: {chunks:,} chunks, over the limit of {limit:,} per file "
        "(setting ingest.max_chunks_per_file); nothing indexed"
    )


_TOO_LARGE = re.compile(r"^too large: ([\d,]+) chunks")


def _fits_now(record: DocumentRecord | None, limit: int | None) -> bool:
    """True for a file refused as too large that the current limit would take (retried
    although unchanged)."""
    if record is None or record.status is not DocStatus.FAILED:
        return False
    m = _TOO_LARGE.match(record.reason)
    return m is not None and (limit is None or int(m.group(1).replace(",", "")) <= limit)


def _unchanged(record: DocumentRecord | None, size: int, mtime_ns: int) -> bool:
    return record is not None and record.size_bytes == size and record.mtime_ns == mtime_ns


def _failure(err: ParseError) -> tuple[DocStatus, str]:
    if isinstance(err, EncryptedDocument):
        return DocStatus.ENCRYPTED, err.reason
    if isinstance(err, NeedsOcr):
        return DocStatus.NEEDS_OCR, err.reason
    return DocStatus.FAILED, err.reason


def _section_count(doc: Document) -> int:
    numbered = {(s.location.kind, s.location.number) for s in doc.sections}
    return len(numbered)


def ingest_paths(
    collection: IngestTarget,
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
) -> IngestReport:
    """Ingest files and folders (recursively) into a collection, incrementally.

    An unchanged file (same size and mtime, or same sha256) is skipped; a changed one replaces
    its old chunks in every index; a file gone from a folder given here is removed. Failed,
    encrypted, scanned and empty files are recorded with their status and reason, and retried
    only when they change (encrypted ones also when a password is now given, files with scanned
    pages left out also when OCR, off then or over its page limit, would now read them:
    :func:`~verifai_desktop.ingest.ocr.worth_retrying`). Only regular files are read: FIFOs,
    sockets and devices are recorded as failed, never opened. A folder
    that cannot be listed gets a failed outcome (not stored in the catalog) and the files
    catalogued under it are kept as they are. A symbolic link found in a folder is followed
    only to a file inside the folders given, unless ``follow_external_links``; other links
    are recorded as failed with their target, never read. The paths are remembered as the
    collection's roots (:func:`verifai_desktop.store.roots.remember_roots`), which folder
    watching follows.

    Args:
        collection: an opened collection; this process becomes its writer.
        paths: files and folders; folders are walked for PDF/DOCX/PPTX/EPUB/MD/TXT files.
        passwords: per-file PDF passwords.
        default_password: password tried for every encrypted PDF without its own.
        progress: called with ``Progress("files", ...)`` per file, ``Progress("ocr", done,
            total, "pages", "<file name> p. <n>")`` before each scanned page is recognised and
            ``Progress("embed", ...)`` per batch of chunks embedded.
        cancel: when set, the run stops between files or embedding batches, or in the middle
            of a page being recognised.
        timeout_s: wall-clock limit in seconds for hashing one file, and for parsing it.
        follow_external_links: also index links that lead outside the folders given
            (setting ``ingest.follow_external_links``).
        max_chunks_per_file: a file making more chunks is recorded as failed with its chunk
            count and never embedded (setting ``ingest.max_chunks_per_file``); ``None``: no
            limit.
        within: folders the collection follows that ``paths`` are parts of (folder watching):
            a path under one is ingested only when walking that folder would reach it, links
            are judged against them too (:func:`~verifai_desktop.store.walk.expand_paths`).
        ocr: how scanned PDF pages are recognised, in the parser worker under ``timeout_s``
            (:mod:`verifai_desktop.ingest.ocr`); ``None``: not at all (``needs_ocr``).

    Returns:
        The per-file (and per-unreadable-folder) outcomes and stage timings.

    Raises:
        Cancelled: ``cancel`` was set; every file finished before is committed.
        CollectionBusy: another process is writing the collection.
    """
    collection.acquire_write_lock()
    remember_roots(collection, paths)  # the collection follows them (folder watching)
    run = _Run(collection, progress, cancel, max_chunks_per_file)
    walk = expand_paths(paths, within)
    files = walk.files
    seen = {str(f) for f in files}
    total = len(files)
    with ParserPool(timeout_s=timeout_s, ocr=ocr) as pool:
        for done, path in enumerate(files):
            run.check_cancel("ingest")
            run.report("files", done, total, "files", path.name)
            target = walk.external.get(path)
            if target is not None and not follow_external_links:
                reason = (
                    f"a link to {target}, outside the folders chosen; not followed "
                    "(setting ingest.follow_external_links)"
                )
                run.outcomes.append(_refuse(run, path, reason))
                continue
            run.outcomes.append(
                _ingest_file(run, pool, path, _password_for(path, passwords, default_password))
            )
        run.report("files", total, total, "files")
    for folder, reason in walk.unreadable:
        log.warning("%s: %s", folder, reason)
        run.outcomes.append(FileOutcome(str(folder), Outcome.FAILED, reason))
    # Files that disappeared from a folder ingested in this run (not: could not be listed).
    unreadable = [folder for folder, _ in walk.unreadable]
    gone = sorted(
        s
        for s in {s for folder in walk.folders for s in collection.catalog.sources_under(folder)}
        if s not in seen and is_gone(s, unreadable)
    )
    if gone:
        t0 = time.perf_counter()
        collection.remove_sources(gone)
        run.timer.index += time.perf_counter() - t0
        run.outcomes.extend(FileOutcome(s, Outcome.REMOVED) for s in gone)
    return run.finish()


def _ingest_file(run: _Run, pool: ParserPool, path: Path, password: str | None) -> FileOutcome:
    catalog = run.collection.catalog
    source = str(path)
    t0 = time.perf_counter()
    try:
        st = path.stat()
    except OSError as exc:
        run.timer.parse += time.perf_counter() - t0
        return FileOutcome(source, Outcome.FAILED, os_error_reason(exc))
    not_regular = not_regular_reason(st.st_mode)
    if not_regular is not None:
        # Never opened: reading a FIFO blocks until a writer comes, a device may never end.
        run.timer.parse += time.perf_counter() - t0
        return _refuse(run, path, not_regular)
    record = catalog.document(source)
    retry = (
        (record is not None and record.status is DocStatus.ENCRYPTED and password is not None)
        or _fits_now(record, run.max_chunks)
        or (record is not None and worth_retrying(record.reason, pool.ocr))
    )
    if _unchanged(record, st.st_size, st.st_mtime_ns) and not retry:
        run.timer.parse += time.perf_counter() - t0
        assert record is not None
        return _skipped(record)
    meta = DocumentMeta(source, path.name, "", st.st_size, st.st_mtime_ns, None)
    try:
        # In the worker, time-limited like parsing: a read that stalls cannot hang the run.
        sha = pool.sha256(path)
        if record is not None and record.sha256 == sha and not retry:
            catalog.touch(source, st.st_mtime_ns)
            run.timer.parse += time.perf_counter() - t0
            return _skipped(record)
        meta = DocumentMeta(source, path.name, sha, st.st_size, st.st_mtime_ns, None)

        def on_page(done: int, total: int, page: int) -> None:
            run.report("ocr", done, total, "pages", f"{path.name} p. {page}")

        doc = pool.parse(path, password, on_page=on_page, cancel=run.cancel)
    except Cancelled:  # in the middle of a page being recognised
        run.check_cancel("ingest")
        raise
    except ParseError as err:
        run.timer.parse += time.perf_counter() - t0
        if err.path != path:
            raise  # the parser worker itself failed: no verdict on this file
        # Ctrl-C in a terminal also hits the parser worker; its death is then no verdict either.
        run.check_cancel("ingest")
        status, reason = _failure(err)
        log.info("%s: %s (%s)", path.name, status.value, reason)
        run.commit([(meta, status, reason, (), None)])
        return FileOutcome(source, Outcome.written(status), reason, stored_status=status)
    run.timer.parse += time.perf_counter() - t0
    return _index_document(run, meta, doc)


def _refuse(run: _Run, path: Path, reason: str) -> FileOutcome:
    """Record a file that is not read at all as failed with ``reason`` (once: an unchanged
    refusal is skipped, nothing written). Any chunks it had are dropped."""
    source = str(path)
    record = run.collection.catalog.document(source)
    if record is not None and (record.status, record.reason) == (DocStatus.FAILED, reason):
        return _skipped(record)
    try:
        st = os.lstat(path)
        size, mtime_ns = st.st_size, st.st_mtime_ns
    except OSError:
        size, mtime_ns = 0, 0
    meta = DocumentMeta(source, path.name, "", size, mtime_ns, None)
    run.commit([(meta, DocStatus.FAILED, reason, (), None)])
    return FileOutcome(source, Outcome.FAILED, reason, stored_status=DocStatus.FAILED)


def _skipped(record: DocumentRecord) -> FileOutcome:
    return FileOutcome(
        record.source,
        Outcome.SKIPPED,
        record.reason,
        record.chunk_count,
        format=record.format,
        stored_status=record.status,
    )


def _index_document(run: _Run, meta: DocumentMeta, doc: Document) -> FileOutcome:
    meta = DocumentMeta(
        meta.source,
        doc.title or meta.title,
        meta.sha256,
        meta.size_bytes,
        meta.mtime_ns,
        doc.format,
    )
    sections = _section_count(doc)
    chunks = run.chunk(doc) if doc.text.strip() else ()
    if run.max_chunks is not None and len(chunks) > run.max_chunks:
        reason = _too_large_reason(len(chunks), run.max_chunks)
        run.commit([(meta, DocStatus.FAILED, reason, (), None)])
        return FileOutcome(
            meta.source, Outcome.FAILED, reason, 0, sections, doc.format, DocStatus.FAILED
        )
    if not chunks:
        reason = "no text in the document"
        run.commit([(meta, DocStatus.EMPTY, reason, (), None)])
        return FileOutcome(
            meta.source, Outcome.EMPTY, reason, 0, sections, doc.format, DocStatus.EMPTY
        )
    vectors = run.embed([c.text for c in chunks], "ingest")
    reason = unread_summary(doc.unrecognised)  # scanned pages left out, if any
    run.commit([(meta, DocStatus.INDEXED, reason, chunks, vectors)])
    return FileOutcome(
        meta.source, Outcome.INDEXED, reason, len(chunks), sections, doc.format, DocStatus.INDEXED
    )


def ingest_documents(
    collection: IngestTarget,
    docs: Iterable[tuple[str, Document]],
    *,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
    total: int | None = None,
) -> IngestReport:
    """Ingest pre-parsed documents keyed by a source key (e.g. a benchmark key
    ``"beir:<doc id>"``, :data:`~verifai_desktop.store.sources.BENCHMARK_SOURCE_PREFIX`).

    A key whose text hash is unchanged is skipped. Documents are chunked, then embedded and
    committed in batches of about 256 chunks (one SQLite transaction per batch).

    Args:
        collection: an opened collection; this process becomes its writer.
        docs: ``(source key, Document)`` pairs; keys must be unique.
        progress: called with ``Progress("documents", ...)`` per batch and ``"embed"`` per
            batch of chunks.
        cancel: when set, the run stops between batches (committed batches stay).
        total: number of documents, for progress reports only.

    Returns:
        The per-document outcomes and stage timings.

    Raises:
        Cancelled: ``cancel`` was set.
    """
    collection.acquire_write_lock()
    run = _Run(collection, progress, cancel)
    catalog = collection.catalog
    pending: list[tuple[int, DocumentMeta, Document, tuple[Chunk, ...]]] = []
    slots: list[FileOutcome | None] = []  # outcomes in input order, filled when committed
    pending_chunks = 0
    done = 0

    def flush_pending() -> None:
        nonlocal pending_chunks
        if not pending:
            return
        run.check_cancel("ingest")
        texts = [c.text for _, _, _, chunks in pending for c in chunks]
        vectors = run.embed(texts, "ingest") if texts else None
        items: list[CommitItem] = []
        offset = 0
        for slot, meta, doc, chunks in pending:
            if chunks:
                assert vectors is not None
                vecs = vectors[offset : offset + len(chunks)]
                offset += len(chunks)
                items.append((meta, DocStatus.INDEXED, "", chunks, vecs))
                outcome = FileOutcome(
                    meta.source,
                    Outcome.INDEXED,
                    "",
                    len(chunks),
                    _section_count(doc),
                    doc.format,
                    DocStatus.INDEXED,
                )
            else:
                reason = "no text in the document"
                items.append((meta, DocStatus.EMPTY, reason, (), None))
                outcome = FileOutcome(
                    meta.source, Outcome.EMPTY, reason, 0, 0, doc.format, DocStatus.EMPTY
                )
            slots[slot] = outcome
        run.commit(items)
        run.outcomes[:] = [o for o in slots if o is not None]
        pending.clear()
        pending_chunks = 0
        run.report("documents", done, total, "documents")

    for source, doc in docs:
        done += 1
        t0 = time.perf_counter()
        sha = hashlib.sha256(doc.text.encode("utf-8")).hexdigest()
        record = catalog.document(source)
        run.timer.parse += time.perf_counter() - t0
        if record is not None and record.sha256 == sha:
            slots.append(_skipped(record))
            continue
        meta = DocumentMeta(source, doc.title, sha, len(doc.text), 0, doc.format)
        chunks = run.chunk(doc) if doc.text.strip() else ()
        slots.append(None)
        pending.append((len(slots) - 1, meta, doc, chunks))
        pending_chunks += len(chunks)
        if pending_chunks >= DOCUMENT_BATCH_CHUNKS:
            flush_pending()
    flush_pending()
    run.outcomes[:] = [o for o in slots if o is not None]
    return run.finish()
