"""The state of one ingest run (:class:`IngestRun`): what it writes into, its outcomes so far,
its stage times (:class:`StageTimer`), progress reports, cancel checks, chunking and embedding
with the collection's embedder, commits and timed index flushes.

The entry points that drive a run are in :mod:`verifai_desktop.store.writer` (files, read in
this process or on a Ray cluster: :mod:`verifai_desktop.store.spread`; pre-parsed documents).
:func:`lookahead` starts files ahead of the one being written.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.domain import Chunk, Document, Progress
from verifai_desktop.errors import Cancelled
from verifai_desktop.foreground import FOREGROUND
from verifai_desktop.index.embedder import Embedder
from verifai_desktop.index.onnx_embedder import EMBED_BATCH_SIZE
from verifai_desktop.ingest.chunking import CachedTokenCounter, chunk_document
from verifai_desktop.ingest.references import tag_references
from verifai_desktop.store.catalog import CommitItem
from verifai_desktop.store.outcomes import FileOutcome, IngestReport

if TYPE_CHECKING:
    from verifai_desktop.store.target import RunTarget

ProgressFn = Callable[[Progress], None]

T = TypeVar("T")
S = TypeVar("S")

FLUSH_INTERVAL_S = 2.0
"""Index flush period: SQLite commits every file; Tantivy/usearch are saved at most this often."""

FLUSH_SHARE = 0.1
"""Most of a run's time that index flushes may take. Saving the vector index rewrites the whole
file (usearch), so its cost grows with the collection; after a flush of ``d`` seconds the next
waits at least ``d * (1 / FLUSH_SHARE - 1)`` seconds, so a large collection is not rewritten
every :data:`FLUSH_INTERVAL_S` (``benchmarks/scale.py --flush-share 1.0`` builds the old way:
the same time at 100k chunks). Index files left behind by a crash are rebuilt from the catalog,
which commits every file (:meth:`Collection.refresh`)."""

ANSWER_SLICE = 16
"""Chunks per embedder run inside an embedding batch of ``EMBED_BATCH_SIZE``. An answer asked
meanwhile waits for the slice in flight (about 0.5 s on two cores), not for the whole batch
(issue 40, item 5); Cancel still acts between batches. A chunk's vector does not depend on the
other texts of its run, so the vectors are the same."""


@dataclass
class StageTimer:
    """Seconds spent per stage of an ingest run."""

    parse: float = 0.0
    chunk: float = 0.0
    embed: float = 0.0
    load: float = 0.0
    index: float = 0.0

    def add(self, other: StageTimer) -> None:
        """Add another run's times (a worker's, when files are read elsewhere)."""
        self.parse += other.parse
        self.chunk += other.chunk
        self.embed += other.embed
        self.load += other.load
        self.index += other.index


class IngestRun:
    """State shared by the ingest entry points: what the run writes into, its outcomes so
    far, its stage times, progress and cancel."""

    def __init__(
        self,
        collection: RunTarget,
        progress: ProgressFn | None,
        cancel: threading.Event | None,
        max_chunks: int | None = None,
    ) -> None:
        self.collection = collection
        self.max_chunks = max_chunks
        self.progress = progress
        self.cancel = cancel
        self.timer = StageTimer()
        self.outcomes: list[FileOutcome] = []
        self.started = time.perf_counter()
        self.last_flush = time.monotonic()
        self.flush_wait = FLUSH_INTERVAL_S
        """Seconds from the end of one flush to the next: at least ``FLUSH_INTERVAL_S``, more
        when flushes are slow (``FLUSH_SHARE``)."""
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
        self.yield_turn(what)  # an answer being written goes first
        if self.cancel is not None and self.cancel.is_set():
            self.flush(force=True)
            raise Cancelled(what)

    def yield_turn(self, what: str) -> None:
        """Wait while an answer is being written (:data:`FOREGROUND`); Cancel is left to the
        next :meth:`check_cancel`."""
        with contextlib.suppress(Cancelled):
            FOREGROUND.wait_turn(self.cancel, what)

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
        """Embed in batches, reporting chunks and checking ``cancel`` between batches; an
        answer goes first between slices of :data:`ANSWER_SLICE` chunks."""
        t0 = time.perf_counter()
        parts: list[NDArray[np.float32]] = []
        try:
            for start in range(0, len(texts), EMBED_BATCH_SIZE):
                if start:
                    self.check_cancel(what)
                stop = min(start + EMBED_BATCH_SIZE, len(texts))
                for s in range(start, stop, ANSWER_SLICE):
                    if s > start:
                        self.yield_turn(what)
                    parts.append(self.embedder.embed(texts[s : min(s + ANSWER_SLICE, stop)]))
                self.chunks_done += stop - start
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
        if not force and time.monotonic() - self.last_flush < self.flush_wait:
            return
        t0 = time.perf_counter()
        self.collection.flush()
        took = time.perf_counter() - t0
        self.timer.index += took
        self.last_flush = time.monotonic()
        self.flush_wait = max(FLUSH_INTERVAL_S, took * (1.0 / FLUSH_SHARE - 1.0))

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


def lookahead(items: Iterable[T], start: Callable[[T], S], ahead: int) -> Iterator[tuple[T, S]]:
    """``(item, start(item))`` in the order of ``items``, each item started when it comes
    within ``ahead`` of the one being yielded (so at most ``ahead`` are started and not yet
    consumed; 1: each is started when it is yielded).

    Raises:
        ValueError: ``ahead`` < 1.
    """
    if ahead < 1:
        raise ValueError(f"ahead must be 1 or more, not {ahead}")
    pending: deque[tuple[T, S]] = deque()
    for item in items:
        pending.append((item, start(item)))
        if len(pending) >= ahead:
            yield pending.popleft()
    while pending:
        yield pending.popleft()
