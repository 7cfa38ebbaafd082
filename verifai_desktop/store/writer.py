"""Ingest runs: files (or pre-parsed documents) -> chunks -> embeddings -> catalog and indexes.

Every file is committed to the catalog in one SQLite transaction holding all its chunks and
vectors, so a run killed at any moment loses at most the file in flight; already committed files
are skipped by hash on the next run. Indexes are flushed every couple of seconds, less often
when a flush is slow (at most a tenth of the run: ``ingest_run.FLUSH_SHARE``), and at the end
(see :mod:`verifai_desktop.store.indexes` for how they are reconciled after a crash). A run
of paths also remembers them as the collection's roots (:mod:`verifai_desktop.store.roots`).

The entry points are :meth:`Collection.add_paths` and :meth:`Collection.add_documents`, which
call :func:`ingest_paths` and :func:`ingest_documents` here; they take any store that can be
written (:class:`~verifai_desktop.store.target.IngestTarget`, e.g. the PostgreSQL store). Files
are read in a parser worker of this process, or on a :class:`Cluster` (a Ray cluster:
:mod:`verifai_desktop.store.spread`, which reads them with :func:`read_file` too).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from verifai_desktop.domain import Chunk, DocStatus, Document
from verifai_desktop.errors import Cancelled, EncryptedDocument, NeedsOcr, ParseError
from verifai_desktop.hashing import not_regular_reason, os_error_reason
from verifai_desktop.ingest.ocr import (
    TIME_LIMIT_REASON,
    OcrOptions,
    time_limit_reason,
    unread_summary,
    worth_retrying,
)
from verifai_desktop.ingest.parse import ParserPool
from verifai_desktop.store.catalog import CommitItem, DocumentMeta
from verifai_desktop.store.ingest_run import IngestRun, lookahead
from verifai_desktop.store.ingest_run import ProgressFn as ProgressFn
from verifai_desktop.store.outcomes import FileOutcome as FileOutcome
from verifai_desktop.store.outcomes import IngestReport as IngestReport
from verifai_desktop.store.outcomes import Outcome as Outcome
from verifai_desktop.store.records import DocumentRecord
from verifai_desktop.store.retries import fits_now, longer_limit_now, too_large_reason
from verifai_desktop.store.roots import remember_roots
from verifai_desktop.store.walk import Walk, expand_paths, is_gone

if TYPE_CHECKING:
    # The stores call into this module (Collection.add_paths); the type is enough here.
    from verifai_desktop.store.target import IngestTarget

log = logging.getLogger(__name__)

DOCUMENT_BATCH_CHUNKS = 256
"""Pre-parsed documents are embedded and committed in batches of about this many chunks."""


def _password_for(
    path: Path, raw_keys: Mapping[Path, str] | None, default_password: str | None
) -> str | None:
    """The password to try for ``path``: its own in ``raw_keys`` (keys resolved), else
    ``default_password``."""
    if raw_keys:
        for key, value in raw_keys.items():
            if Path(key).expanduser().resolve() == path:
                return value
    return default_password


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
    cluster: Cluster | None = None,
    check_content: bool = False,
    remember: bool = True,
) -> IngestReport:
    """Ingest files and folders (recursively) into a collection, incrementally.

    An unchanged file (same size and mtime, or same sha256; with ``check_content``, same
    sha256 only) is skipped; a changed one replaces
    its old chunks in every index; a file gone from a folder given here is removed. Failed,
    encrypted, scanned and empty files are recorded with their status and reason, and retried
    only when they change (encrypted ones also when a password is now given, files with scanned
    pages left out also when OCR, off then or over its page limit, would now read them, or
    when the time limit per file cut their OCR short and ``timeout_s`` is larger now:
    :func:`~verifai_desktop.ingest.ocr.worth_retrying`; files the time limit stopped also
    when it is larger now). Only regular files are read: FIFOs,
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
            total, "pages", "<file name> p. <n>")`` before each scanned page is recognised,
            ``Progress("ocr", done, total, "images", "<file name>")`` before each image of a
            DOCX, PPTX or EPUB is, and ``Progress("embed", ...)`` per batch of chunks embedded.
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
        ocr: how scanned PDF pages and the images of DOCX, PPTX and EPUB files are
            recognised, in the parser worker under ``timeout_s``
            (:mod:`verifai_desktop.ingest.ocr`); ``None``: not at all (``needs_ocr``).
        cluster: read (hash, parse, chunk, embed) the files there, e.g. on Ray
            (:class:`~verifai_desktop.store.spread.RayCluster`); this process still decides,
            writes and reports every file, in the same order. ``None``: in this process.
        check_content: hash files whose size and mtime are as catalogued too: an edit that
            kept both (``cp -p``, ``rsync -t``, 2 s mtimes) is taken in (folder watching).
        remember: add ``paths`` to the collection's roots; False for the attached files of a
            reference library, which is followed as a whole (:mod:`.library`).

    Returns:
        The per-file (and per-unreadable-folder) outcomes and stage timings.

    Raises:
        Cancelled: ``cancel`` was set; every file finished before is committed.
        CollectionBusy: another process is writing the collection.
        ClusterError: ``cluster`` cannot be used, or one of its workers failed.
    """
    collection.acquire_write_lock()
    if remember:
        remember_roots(collection, paths)  # the collection follows them (folder watching)
    run = IngestRun(collection, progress, cancel, max_chunks_per_file)
    walk = expand_paths(paths, within)
    files = walk.files
    total = len(files)
    reading = cluster.reader if cluster is not None else _parser_pool_reader
    with reading(run, timeout_s=timeout_s, ocr=ocr) as reader:

        def check(path: Path) -> tuple[FileOutcome | _Refusal | FileJob, object]:
            link = None if follow_external_links else walk.external.get(path)
            password = _password_for(path, passwords, default_password)
            checked = _check_file(
                run, path, password, link=link, ocr=ocr, timeout_s=timeout_s,
                check_content=check_content,
            )  # fmt: skip
            return checked, reader.start(checked) if isinstance(checked, FileJob) else None

        for done, (path, (checked, started)) in enumerate(lookahead(files, check, reader.ahead)):
            run.check_cancel("ingest")
            run.report("files", done, total, "files", path.name)
            if isinstance(checked, FileJob):
                run.outcomes.append(reader.finish(checked, started))
            else:
                run.outcomes.append(_settle(run, path, checked))
        run.report("files", total, total, "files")
    return _finish_walk(run, collection, walk)


class FileReader(Protocol):
    """Reads the files an ingest run must read (:class:`FileJob`) and makes their writes
    through the run, in the order :meth:`finish` is called: in this process's parser worker,
    or on a cluster (:class:`Cluster`)."""

    @property
    def ahead(self) -> int:
        """How many files are started (:meth:`start`) ahead of the one being written."""
        ...

    def start(self, job: FileJob) -> object:
        """Begin reading ``job``'s file; returns what :meth:`finish` takes."""
        ...

    def finish(self, job: FileJob, started: object) -> FileOutcome:
        """The file's outcome, its document (or failure) committed.

        Raises:
            Cancelled: the run's cancel was set.
        """
        ...


class Cluster(Protocol):
    """Where else an ingest's files can be read (``ingest_paths(..., cluster=...)``), e.g. a
    Ray cluster (:class:`verifai_desktop.store.spread.RayCluster`)."""

    def reader(
        self, run: IngestRun, *, timeout_s: float, ocr: OcrOptions | None
    ) -> AbstractContextManager[FileReader]:
        """A reader for ``run``'s files, ready while the block runs."""
        ...


class _PoolReader:
    """Files read one at a time in this process's parser worker (:func:`read_file`)."""

    ahead = 1

    def __init__(self, run: IngestRun, pool: ParserPool) -> None:
        self._run = run
        self._pool = pool

    def start(self, job: FileJob) -> None:
        """Nothing to start: the file is read when its turn comes."""

    def finish(self, job: FileJob, started: object) -> FileOutcome:
        return read_file(self._run, self._pool, job)


@contextmanager
def _parser_pool_reader(
    run: IngestRun, *, timeout_s: float, ocr: OcrOptions | None
) -> Iterator[FileReader]:
    with ParserPool(timeout_s=timeout_s, ocr=ocr) as pool:
        yield _PoolReader(run, pool)


def _finish_walk(run: IngestRun, collection: IngestTarget, walk: Walk) -> IngestReport:
    """End a run over the files of ``walk``: record the folders that could not be listed as
    failed, remove the documents of files gone from its folders, and report.

    Returns:
        The run's report (:meth:`IngestRun.finish`).
    """
    for folder, reason in walk.unreadable:
        log.warning("%s: %s", folder, reason)
        run.outcomes.append(FileOutcome(str(folder), Outcome.FAILED, reason))
    # Files that disappeared from a folder ingested in this run (not: could not be listed).
    seen = {str(f) for f in walk.files}
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


@dataclass(frozen=True, slots=True)
class FileJob:
    """A file an ingest run must read: hash it, then parse, chunk and embed it unless its
    hash is unchanged (:func:`read_file`).

    Attributes:
        path: the file.
        password: the password to try if it is an encrypted PDF.
        record: its catalog entry from an earlier run, if any.
        retry: read it even if its hash is unchanged (a password or OCR now, a larger limit).
        size_bytes: its size when checked.
        mtime_ns: its modification time when checked.
    """

    path: Path
    password: str | None
    record: DocumentRecord | None
    retry: bool
    size_bytes: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class _Refusal:
    """A file recorded as failed without being read (:func:`_settle`): a link not followed,
    a FIFO, socket or device."""

    reason: str


def _check_file(
    run: IngestRun,
    path: Path,
    password: str | None,
    *,
    link: Path | None = None,
    ocr: OcrOptions | None = None,
    timeout_s: float | None = None,
    check_content: bool = False,
) -> FileOutcome | _Refusal | FileJob:
    """What to do with one file, decided from its stat and catalog entry; nothing written.

    Args:
        run: the run (its catalog, its chunk limit).
        path: the file.
        password: the password to try if it is an encrypted PDF.
        link: where ``path`` leads when it is a link outside the folders given that is not
            to be followed.
        ocr: the run's OCR options (a file left unread by OCR is retried when they would now
            read it).
        timeout_s: the run's time limit per file, seconds (a file it cut short before, OCR
            or parsing, is retried when it is larger now).
        check_content: never skip a file by its size and mtime: :func:`read_file` hashes it.

    Returns:
        The outcome when it is settled already (unchanged: skipped; stat failed), a
        :class:`_Refusal`, or the :class:`FileJob` reading it.
    """
    source = str(path)
    if link is not None:
        return _Refusal(
            f"a link to {link}, outside the folders chosen; not followed "
            "(setting ingest.follow_external_links)"
        )
    t0 = time.perf_counter()
    try:
        try:
            st = path.stat()
        except OSError as exc:
            return FileOutcome(source, Outcome.FAILED, os_error_reason(exc))
        not_regular = not_regular_reason(st.st_mode)
        if not_regular is not None:
            # Never opened: reading a FIFO blocks until a writer comes, a device may never end.
            return _Refusal(not_regular)
        record = run.collection.catalog.document(source)
        retry = (
            (record is not None and record.status is DocStatus.ENCRYPTED and password is not None)
            or fits_now(record, run.max_chunks)
            or (record is not None and worth_retrying(record.reason, ocr, timeout_s))
            or longer_limit_now(record, timeout_s)
        )
        same_stat = record is not None and _unchanged(record, st.st_size, st.st_mtime_ns)
        if record is not None and same_stat and not retry and not check_content:
            return _skipped(record)
        return FileJob(path, password, record, retry, st.st_size, st.st_mtime_ns)
    finally:
        run.timer.parse += time.perf_counter() - t0


def _settle(run: IngestRun, path: Path, checked: FileOutcome | _Refusal) -> FileOutcome:
    """The outcome of a file :func:`_check_file` settled, a refusal recorded."""
    if isinstance(checked, _Refusal):
        return _refuse(run, path, checked.reason)
    return checked


def read_file(run: IngestRun, pool: ParserPool, job: FileJob) -> FileOutcome:
    """Hash a file in ``pool``'s worker, then (hash changed or ``job.retry``) parse it there,
    chunk, embed and commit it; a parse failure is committed with its status and reason.

    Raises:
        Cancelled: ``run.cancel`` was set.
        ParseError: the parser worker itself failed (no verdict on this file).
    """
    path, record, retry = job.path, job.record, job.retry
    source = str(path)
    meta = DocumentMeta(source, path.name, "", job.size_bytes, job.mtime_ns, None)
    t0 = time.perf_counter()
    try:
        # In the worker, time-limited like parsing: a read that stalls cannot hang the run.
        sha = pool.sha256(path)
        if record is not None and record.sha256 == sha and not retry:
            run.collection.catalog.touch(source, job.mtime_ns)
            run.timer.parse += time.perf_counter() - t0
            return _skipped(record)
        meta = DocumentMeta(source, path.name, sha, job.size_bytes, job.mtime_ns, None)

        def on_page(done: int, total: int, number: int, unit: str) -> None:
            where = f"{path.name} p. {number}" if unit == "pages" else path.name
            run.report("ocr", done, total, unit, where)

        doc = pool.parse(path, job.password, on_page=on_page, cancel=run.cancel)
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
    return _index_document(run, meta, doc, pool.timeout_s)


def _refuse(run: IngestRun, path: Path, reason: str) -> FileOutcome:
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


def _index_document(
    run: IngestRun, meta: DocumentMeta, doc: Document, timeout_s: float | None = None
) -> FileOutcome:
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
        reason = too_large_reason(len(chunks), run.max_chunks)
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
    reason = unread_summary(doc.unrecognised, doc.unread_images)  # pages, images left out
    if timeout_s is not None:  # cut short: a run with a larger limit reads the rest
        reason = reason.replace(TIME_LIMIT_REASON, time_limit_reason(timeout_s))
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
    run = IngestRun(collection, progress, cancel)
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
