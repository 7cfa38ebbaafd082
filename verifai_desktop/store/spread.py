"""Ingest spread over a Ray cluster (``verifai ingest ... --ray [ADDRESS]``): files hashed,
parsed, chunked and embedded by Ray tasks, written by this process.

:class:`RayCluster` is a :class:`~verifai_desktop.store.writer.Cluster` for
:func:`~verifai_desktop.store.writer.ingest_paths`, which still walks the folders, decides
every file (skipped by size, mtime or hash, refused, read), writes, reports and removes, as
in a single-process run. Each Ray task runs the embedded ingest's own per-file step
(:func:`~verifai_desktop.store.writer.read_file`: the parser worker with its time limit, the
chunker, the collection's embedder) against a stand-in that keeps the file's writes instead
of making them (:class:`_Kept`); this process makes them through the store. So:

- outcomes, statuses and reasons (broken, encrypted, scanned files), resume by hash and the
  removal of files gone are those of the single-process ingest;
- each document is committed in its own transaction, whole or not at all, in walk order, so
  a store gives the same ids as in a single-process run;
- files are started at most :func:`window` ahead of the one being written
  (:func:`~verifai_desktop.store.ingest_run.lookahead`), which bounds the results waiting in
  the cluster's object store;
- progress is reported per file and per document's chunks as they are written (OCR page
  progress stays on the workers); a cancel is seen within :data:`POLL_S`, and the tasks in
  flight are then stopped (their workers killed).

Ray is the ``cluster`` extra, imported only here, when a :class:`RayCluster` is made. Without
an address a local cluster is started on this machine (and stopped at the end); with one, the
cluster at that address is joined (its workers need this package and the collection's
embedder). When Ray is already initialised in this process, that cluster is used and left
running.
"""

from __future__ import annotations

import functools
import logging
import socket
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from verifai_desktop.errors import ClusterError, MissingExtra, ParseError
from verifai_desktop.index.embedder import Embedder, get_embedder
from verifai_desktop.ingest.ocr import OcrOptions
from verifai_desktop.ingest.parse import ParserPool
from verifai_desktop.store.catalog import CommitItem
from verifai_desktop.store.ingest_run import IngestRun, StageTimer
from verifai_desktop.store.outcomes import FileOutcome
from verifai_desktop.store.records import DocumentRecord
from verifai_desktop.store.writer import FileJob, FileReader, read_file

POLL_S = 0.2
"""How often the run looks at its cancel event while it waits for a file, seconds."""

LOCAL = "local"
"""The address shown for a cluster started on this machine."""


@dataclass(frozen=True, slots=True)
class FileRead:
    """What a Ray task made of one file, for this process to write.

    Attributes:
        outcome: the file's outcome, as :func:`~verifai_desktop.store.writer.read_file` gave it.
        touched_mtime_ns: the new mtime to record for an unchanged file (same sha256), or
            None.
        items: the documents to commit (one: the file's, with its chunks and float32 vectors
            of shape (chunks, dim), or its failure), or none.
        timer: the task's seconds per stage.
        worker_error: the parser worker itself failed (no verdict on this file): its reason.
    """

    outcome: FileOutcome | None
    touched_mtime_ns: int | None
    items: tuple[CommitItem, ...]
    timer: StageTimer
    worker_error: str = ""


class _Kept:
    """A Ray task's stand-in for the collection (a :class:`~verifai_desktop.store.target.
    RunTarget`): it keeps the one file's writes for the driver and gives the collection's
    embedder, loaded once per worker process."""

    def __init__(self, embedder_name: str, record: DocumentRecord | None) -> None:
        self.embedder_name = embedder_name
        self._record = record
        self.items: list[CommitItem] = []
        self.touched_mtime_ns: int | None = None

    @property
    def catalog(self) -> _Kept:
        return self

    def document(self, source: str) -> DocumentRecord | None:
        """The file's catalog entry, as the driver found it."""
        return self._record

    def touch(self, source: str, mtime_ns: int) -> None:
        self.touched_mtime_ns = mtime_ns

    def sources_under(self, folder: Path) -> list[str]:
        """None: a task reads one file and walks no folder."""
        return []

    def embedder(self) -> Embedder:
        return get_embedder(self.embedder_name)

    def commit(self, items: Sequence[CommitItem]) -> int:
        self.items.extend(items)
        return 0

    def flush(self) -> None:
        """Nothing to flush: the driver writes."""


@functools.cache
def _parser_pool(timeout_s: float, ocr: OcrOptions | None) -> ParserPool:
    """The worker process's parser pool (one per Ray worker, started on its first file)."""
    return ParserPool(timeout_s=timeout_s, ocr=ocr)


def read_on_worker(
    job: FileJob,
    embedder_name: str,
    timeout_s: float,
    ocr: OcrOptions | None,
    max_chunks: int | None,
) -> FileRead:
    """Read one file as the single-process ingest does, keeping its writes (the Ray task).

    Args:
        job: the file, as :func:`~verifai_desktop.store.writer.ingest_paths` found it.
        embedder_name: the collection's embedder.
        timeout_s: the time limit for hashing the file, and for parsing it.
        ocr: how scanned pages, and pictures in DOCX, PPTX and EPUB files, are recognised
            (``None``: not at all).
        max_chunks: the chunk limit per file (``None``: none).

    Returns:
        What the driver writes and reports for the file.
    """
    kept = _Kept(embedder_name, job.record)
    run = IngestRun(kept, None, None, max_chunks)
    try:
        outcome = read_file(run, _parser_pool(timeout_s, ocr), job)
    except ParseError as err:  # the parser worker itself failed
        return FileRead(None, None, (), run.timer, worker_error=str(err))
    return FileRead(outcome, kept.touched_mtime_ns, tuple(kept.items), run.timer)


def window(cpus: float) -> int:
    """How many files are started ahead of the one being written: two per CPU of the
    cluster, so every worker has the next file while the driver writes."""
    return max(2, 2 * int(cpus))


def import_ray() -> ModuleType:
    """The ``ray`` module.

    Raises:
        MissingExtra: Ray is not installed (the ``cluster`` extra).
    """
    try:
        import ray
    except ImportError as exc:
        raise MissingExtra("ingest --ray", "cluster", "Ray") from exc
    return ray


REACH_TIMEOUT_S = 10.0
"""How long joining a cluster waits for its address to accept a connection, seconds (Ray's
own ``init`` retries an address that does not answer for minutes, deaf to Ctrl-C)."""


def check_reachable(address: str, timeout_s: float = REACH_TIMEOUT_S) -> None:
    """Check that a cluster address accepts a TCP connection, before Ray is asked to join it.

    Args:
        address: ``HOST:PORT`` (the GCS, port 6379 when none is given), ``ray://HOST:PORT``
            (Ray Client, port 10001) or ``auto`` (a cluster on this machine: not checked).
        timeout_s: how long to wait for the connection, seconds.

    Raises:
        ClusterError: the address is malformed, or nothing accepts a connection there within
            ``timeout_s`` (the reason: refused, timed out, unknown host...).
    """
    if address == "auto":
        return
    client = address.startswith("ray://")
    target = address.removeprefix("ray://").split("/", 1)[0]
    host, sep, port_text = target.rpartition(":")
    if not sep or "]" in port_text:  # no port, or an IPv6 address without one
        host, port_text = target, "10001" if client else "6379"
    host = host.strip("[]")
    if not host or not port_text.isdigit():
        raise ClusterError(
            address, "not a cluster address; give HOST:PORT, ray://HOST:PORT or auto"
        )
    port = int(port_text)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except TimeoutError:
        raise ClusterError(
            address, f"cannot be reached: no answer from {host} port {port} in {timeout_s:g} s"
        ) from None
    except OSError as exc:
        raise ClusterError(
            address,
            f"cannot be reached: {exc.strerror or exc} ({host} port {port}; is the Ray head "
            "running there, and open to this machine?)",
        ) from None


def _connect(ray: ModuleType, address: str | None, num_cpus: int | None) -> bool:
    """Join the cluster at ``address`` (checked to answer first, :func:`check_reachable`), or
    start a local one; True when this call started or joined it (and the run is to shut it
    down)."""
    if ray.is_initialized():
        return False
    if address:
        check_reachable(address)
    try:
        if address:
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
        else:
            ray.init(
                num_cpus=num_cpus,
                include_dashboard=False,
                logging_level=logging.WARNING,
                log_to_driver=False,
            )
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ClusterError(address or LOCAL, f"cannot be used: {exc}") from exc
    return True


class RayCluster:
    """A Ray cluster to read an ingest's files on (``ingest_paths(..., cluster=...)``).

    Args:
        address: the cluster to join (``ray.init(address=...)``: ``"auto"``,
            ``"HOST:6379"``, ``"ray://HEAD:10001"``); ``None``: start a local cluster on this
            machine for each run.
        num_cpus: CPUs of a local cluster (``None``: all of this machine's).

    Raises:
        MissingExtra: Ray is not installed (the ``cluster`` extra).
    """

    def __init__(self, address: str | None = None, *, num_cpus: int | None = None) -> None:
        self._ray = import_ray()
        self.address = address
        self.num_cpus = num_cpus

    @contextmanager
    def reader(
        self, run: IngestRun, *, timeout_s: float, ocr: OcrOptions | None
    ) -> Iterator[FileReader]:
        """Connect (or start a local cluster), yield the reader of ``run``'s files; at the end
        stop the tasks still in flight, and a cluster this call started or joined.

        Raises:
            ClusterError: the cluster cannot be started, or reached within
                :data:`REACH_TIMEOUT_S` (the message names the address and the reason).
        """
        ray = self._ray
        owned = _connect(ray, self.address, self.num_cpus)
        try:
            reader = _RayReader(ray, run, self.address or LOCAL, timeout_s, ocr)
            try:
                yield reader
            finally:
                reader.stop()
        finally:
            if owned:
                ray.shutdown()


class _RayReader:
    """Starts a Ray task per file, waits for each in turn and makes its writes."""

    def __init__(
        self,
        ray: ModuleType,
        run: IngestRun,
        address: str,
        timeout_s: float,
        ocr: OcrOptions | None,
    ) -> None:
        self._ray = ray
        self._run = run
        self._address = address
        self._task = ray.remote(num_cpus=1)(read_on_worker)
        self._args = (run.collection.embedder_name, timeout_s, ocr, run.max_chunks)
        self._in_flight: set[object] = set()
        self.ahead = window(ray.cluster_resources().get("CPU", 1))

    def start(self, job: FileJob) -> object:
        ref: object = self._task.remote(job, *self._args)
        self._in_flight.add(ref)
        return ref

    def finish(self, job: FileJob, started: object) -> FileOutcome:
        read = _wait(self._ray, started, self._run, self._address, job.path)
        self._in_flight.discard(started)
        return _write(self._run, job.path, read)

    def stop(self) -> None:
        """Stop the tasks still running (after a cancel or a failure)."""
        for ref in self._in_flight:
            self._ray.cancel(ref, force=True)
        self._in_flight.clear()


def _wait(ray: ModuleType, ref: object, run: IngestRun, address: str, path: Path) -> FileRead:
    """The task's result, looking at the run's cancel event every :data:`POLL_S`."""
    while True:
        run.check_cancel("ingest")
        ready, _ = ray.wait([ref], timeout=POLL_S)
        if ready:
            break
    try:
        read: FileRead = ray.get(ref)
    except ray.exceptions.RayError as exc:
        run.check_cancel("ingest")  # a task stopped by the cancel is no verdict either
        raise ClusterError(address, f"a worker failed on {path}: {exc}") from exc
    return read


def _write(run: IngestRun, path: Path, read: FileRead) -> FileOutcome:
    """Make the writes a task kept for ``path``, report its chunks, return its outcome."""
    run.timer.add(read.timer)
    if read.outcome is None:
        run.check_cancel("ingest")
        raise ParseError("parser worker", f"on a Ray worker, reading {path}: {read.worker_error}")
    if read.touched_mtime_ns is not None:
        run.collection.catalog.touch(str(path), read.touched_mtime_ns)
    if read.items:
        chunks = sum(len(item[3]) for item in read.items)
        if chunks:
            run.chunks_done += chunks
            run.report("embed", run.chunks_done, None, "chunks")
        run.commit(read.items)
    return read.outcome
