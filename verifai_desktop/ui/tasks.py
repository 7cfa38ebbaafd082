"""The one place that owns threads in the desktop app.

Core functions are synchronous and take keyword-only ``progress`` and ``cancel`` (see
``STYLE.md``). :class:`TaskRunner` runs them on a worker pool and hands results, progress and
streamed tokens back to the UI thread by queued signals. Progress and tokens are throttled: the
worker only stores them, and a UI-thread timer emits what accumulated every ``throttle_ms``,
so a fast token stream never floods the event loop. Index writes (ingest, remove) go through a
separate pool with one thread, the single writer, so two writes never overlap.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal, Slot

from verifai_desktop.domain import Progress
from verifai_desktop.errors import Cancelled, VerifaiError

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_THROTTLE_MS = 50


class TaskContext:
    """What a task function receives: callbacks to report through and the cancel event.

    Pass ``ctx.progress`` and ``ctx.cancel`` straight to core functions; ``ctx.on_token`` to a
    generator's token callback. All three are safe to call from the worker thread.
    """

    def __init__(self) -> None:
        self.cancel = threading.Event()
        self._lock = threading.Lock()
        self._progress: dict[str, Progress] = {}  # latest per stage, in last-seen order
        self._tokens: list[str] = []
        self._status: str | None = None

    def progress(self, p: Progress) -> None:
        """Record the latest progress of ``p.stage``; the UI sees it at the next throttle tick,
        after the stages reported less recently (so the stage running now comes last)."""
        with self._lock:
            self._progress.pop(p.stage, None)
            self._progress[p.stage] = p

    def on_token(self, token: str) -> None:
        """Append streamed text; the UI receives the concatenation at the next tick."""
        with self._lock:
            self._tokens.append(token)

    def status(self, message: str) -> None:
        """Set a one-line status (e.g. "Loading the generator…") for the status bar."""
        with self._lock:
            self._status = message

    def report_status(self, p: Progress) -> None:
        """Set ``p.message`` as the status line; a report without one changes nothing. Pass
        it as ``progress`` to core work whose reports are steps worth naming (loading the
        models, :meth:`AskSession.prepare`)."""
        if p.message:
            self.status(p.message)

    def take(self) -> tuple[tuple[Progress, ...], str, str | None]:
        """Pop what accumulated since the last call: (latest progress per stage, text, status)."""
        with self._lock:
            p, text, st = tuple(self._progress.values()), "".join(self._tokens), self._status
            self._progress, self._tokens, self._status = {}, [], None
        return p, text, st


class Task(QObject, Generic[T]):
    """A running core callable. Lives in the UI thread; its signals arrive there.

    Signals:
        progressed(Progress): throttled progress, the latest of each stage per tick.
        text_streamed(str): text streamed since the previous emission (throttled).
        status_changed(str): a status line set by the task function.
        succeeded(object): the function's return value.
        failed(object): the exception it raised (never :class:`Cancelled`).
        cancelled(): the function raised :class:`Cancelled`; the UI swallows it.
        finished(): after exactly one of the three outcome signals.
    """

    progressed = Signal(object)
    text_streamed = Signal(str)
    status_changed = Signal(str)
    succeeded = Signal(object)
    failed = Signal(object)
    cancelled = Signal()
    finished = Signal()
    _worker_done = Signal(str, object)

    def __init__(
        self,
        name: str,
        fn: Callable[[TaskContext], T],
        *,
        throttle_ms: int = DEFAULT_THROTTLE_MS,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.name = name
        self.fn = fn
        self.context = TaskContext()
        self.outcome: str = "pending"  # pending, running, succeeded, failed, cancelled
        self.result: T | None = None
        self.error: BaseException | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(throttle_ms)
        self._timer.timeout.connect(self._flush)
        self._worker_done.connect(self._on_worker_done)

    def cancel(self) -> None:
        """Ask the task to stop; the core function raises :class:`Cancelled` at its next check."""
        self.context.cancel.set()

    @property
    def is_running(self) -> bool:
        """True until an outcome signal was emitted."""
        return self.outcome in ("pending", "running")

    def _start_timer(self) -> None:
        self.outcome = "running"
        self._timer.start()

    def _run_in_worker(self) -> None:
        try:
            result = self.fn(self.context)
        except Cancelled as exc:
            self._worker_done.emit("cancelled", exc)
        except VerifaiError as exc:
            log.warning("task %s failed: %s", self.name, exc)
            self._worker_done.emit("failed", exc)
        except Exception as exc:
            log.exception("task %s crashed", self.name)
            self._worker_done.emit("failed", exc)
        else:
            self._worker_done.emit("succeeded", result)

    @Slot()
    def _flush(self) -> None:
        progress, text, st = self.context.take()
        if st is not None:
            self.status_changed.emit(st)
        for p in progress:
            self.progressed.emit(p)
        if text:
            self.text_streamed.emit(text)

    @Slot(str, object)
    def _on_worker_done(self, kind: str, payload: object) -> None:
        self._timer.stop()
        self._flush()
        self.outcome = kind
        if kind == "succeeded":
            self.result = payload  # type: ignore[assignment]
            self.succeeded.emit(payload)
        elif kind == "cancelled":
            log.info("task %s cancelled", self.name)
            self.cancelled.emit()
        else:
            assert isinstance(payload, BaseException)
            self.error = payload
            self.failed.emit(payload)
        self.finished.emit()


class _Runnable(QRunnable):
    def __init__(self, task: Task[object]) -> None:
        super().__init__()
        self._task = task

    def run(self) -> None:
        self._task._run_in_worker()


class TaskRunner(QObject):
    """Runs core callables off the UI thread: a small pool for reads, one writer for the index.

    Signals:
        task_started(Task): a task was submitted.
        task_finished(Task): a task emitted its outcome.
    """

    task_started = Signal(object)
    task_finished = Signal(object)

    def __init__(self, parent: QObject | None = None, *, max_readers: int = 2) -> None:
        super().__init__(parent)
        self._readers = QThreadPool(self)
        self._readers.setMaxThreadCount(max_readers)
        self._writer = QThreadPool(self)
        self._writer.setMaxThreadCount(1)
        self._tasks: set[Task[object]] = set()

    def submit(
        self,
        name: str,
        fn: Callable[[TaskContext], T],
        *,
        writes_index: bool = False,
        throttle_ms: int = DEFAULT_THROTTLE_MS,
    ) -> Task[T]:
        """Start ``fn(ctx)`` on a worker thread and return its :class:`Task` at once.

        Args:
            name: short name for logs ("ingest", "ask").
            fn: the work; receives a :class:`TaskContext`.
            writes_index: queue on the single writer thread (ingest, remove) instead of the
                reader pool.
            throttle_ms: period of progress/token emissions, milliseconds.
        """
        # No Qt parent: the set below keeps the task alive until it finishes, callers may keep it
        # longer (its outcome attributes stay readable).
        task: Task[T] = Task(name, fn, throttle_ms=throttle_ms)
        self._tasks.add(task)  # type: ignore[arg-type]
        task.finished.connect(lambda: self._on_task_finished(task))  # type: ignore[arg-type]
        task._start_timer()
        self.task_started.emit(task)
        pool = self._writer if writes_index else self._readers
        pool.start(_Runnable(task))  # type: ignore[arg-type]
        return task

    def _on_task_finished(self, task: Task[object]) -> None:
        self._tasks.discard(task)
        self.task_finished.emit(task)

    @property
    def running(self) -> tuple[Task[object], ...]:
        """Tasks submitted and not yet finished."""
        return tuple(self._tasks)

    def shutdown(self, timeout_ms: int = 5000) -> bool:
        """Cancel every task and wait for the worker threads; True if all stopped in time."""
        for task in self._tasks:
            task.cancel()
        ok_r = self._readers.waitForDone(timeout_ms)
        ok_w = self._writer.waitForDone(timeout_ms)
        return bool(ok_r and ok_w)
