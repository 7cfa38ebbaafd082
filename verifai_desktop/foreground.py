"""Answers first: while an answer is being written, background work waits its turn (issue 40).

On a two-core machine the generator decodes on both cores; an ingest, a watcher sync or the
self-check running beside it in the same process took the cores from it (the app's first word
came after 50-56 s against the CLI's 15 s). :data:`FOREGROUND` is the process's one gate:
:meth:`Foreground.answering` marks an answer in progress (the pipeline's ``ask``), and
background loops call :meth:`Foreground.wait_turn` between units of work (a file, an
embedding batch, a batch of self-check pairs) and sleep there until no answer is being
written. Work already started in this process finishes its unit; the parser worker process
runs at a lower priority (:func:`lower_priority`) and is suspended while an answer is written
(:meth:`Foreground.hold`; its time limits stand still meanwhile,
:mod:`verifai_desktop.ingest.clock`): even at nice 10 it took a share of the cores that cost
llama.cpp's two decoding threads far more than that share.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import Protocol

import psutil

from verifai_desktop.errors import Cancelled

log = logging.getLogger(__name__)


class PauseCounter(Protocol):
    """A float shared with a background process (``multiprocessing.Value("d")``): the seconds
    it was held suspended (:meth:`Foreground.hold`)."""

    value: float


POLL_S = 0.2
"""How often a waiting loop looks at its cancel event (seconds)."""


class Foreground:
    """Counts the answers in progress; background work waits while there are any."""

    def __init__(self) -> None:
        self._answers = 0
        self._idle = threading.Condition()
        self._held: dict[int, tuple[psutil.Process, PauseCounter]] = {}
        self._suspended: dict[int, float] = {}  # pid -> monotonic time it was suspended

    def hold(self, pid: int, paused: PauseCounter) -> None:
        """Suspend background process ``pid`` while answers are written (now, if one is);
        the seconds it spends suspended are added to ``paused``, the counter its deadlines
        leave out (:mod:`verifai_desktop.ingest.clock`)."""
        try:
            # psutil refuses to signal a process whose pid was reused by another one
            process = psutil.Process(pid)
        except (psutil.Error, OSError) as exc:
            log.info("could not hold process %s: %s", pid, exc)
            return
        with self._idle:
            self._held[pid] = (process, paused)
            if self._answers > 0:
                self._suspend(pid)

    def release(self, pid: int) -> None:
        """Resume ``pid`` if it is suspended and stop holding it (before it is stopped)."""
        with self._idle:
            self._resume(pid)
            self._held.pop(pid, None)

    def paused_seconds(self, pid: int) -> float:
        """Seconds ``pid`` has been held suspended so far, the current suspension included
        (what a deadline set before it leaves out)."""
        with self._idle:
            held = self._held.get(pid)
            total = 0.0 if held is None else held[1].value
            since = self._suspended.get(pid)
            return total + (0.0 if since is None else time.monotonic() - since)

    def _suspend(self, pid: int) -> None:
        try:
            self._held[pid][0].suspend()
        except (psutil.Error, OSError) as exc:
            log.info("could not suspend process %s: %s", pid, exc)
            if isinstance(exc, psutil.NoSuchProcess):
                self._held.pop(pid, None)  # gone (or its pid now another process's)
            return
        self._suspended[pid] = time.monotonic()

    def _resume(self, pid: int) -> None:
        since = self._suspended.pop(pid, None)
        if since is None:
            return
        held = self._held.get(pid)
        if held is None:
            return
        held[1].value += time.monotonic() - since
        try:
            held[0].resume()
        except (psutil.Error, OSError) as exc:
            log.info("could not resume process %s: %s", pid, exc)

    @property
    def busy(self) -> bool:
        """Whether an answer is being written now."""
        with self._idle:
            return self._answers > 0

    @contextlib.contextmanager
    def answering(self) -> Iterator[None]:
        """Mark an answer in progress for the ``with`` block (nestable, any thread)."""
        with self._idle:
            self._answers += 1
            if self._answers == 1:
                for pid in list(self._held):
                    self._suspend(pid)
        try:
            yield
        finally:
            with self._idle:
                self._answers -= 1
                if self._answers == 0:
                    for pid in list(self._suspended):
                        self._resume(pid)
                    self._idle.notify_all()

    def wait_turn(self, cancel: threading.Event | None = None, what: str = "work") -> float:
        """Block while an answer is being written.

        Args:
            cancel: looked at every :data:`POLL_S` seconds while waiting.
            what: names the work in :class:`~verifai_desktop.errors.Cancelled`.

        Returns:
            Seconds waited (0.0 when no answer was in progress).

        Raises:
            Cancelled: ``cancel`` was set while waiting.
        """
        t0 = time.perf_counter()
        with self._idle:
            if self._answers == 0:
                return 0.0
            while self._answers > 0:
                if cancel is not None and cancel.is_set():
                    raise Cancelled(what)
                self._idle.wait(POLL_S)
        waited = time.perf_counter() - t0
        if waited > POLL_S:
            log.info("%s waited %.1f s for an answer to be written", what, waited)
        return waited


FOREGROUND = Foreground()
"""The process's gate (one per process: the app runs its jobs as threads of one process)."""


def lower_priority(pid: int | None = None) -> None:
    """Run process ``pid`` (this one if None) at a lower CPU priority: nice 10 on POSIX,
    below normal on Windows. Failures are logged, never raised (a priority is a courtesy)."""
    try:
        process = psutil.Process(pid if pid is not None else os.getpid())
        if sys.platform == "win32":
            process.nice(psutil.BELOW_NORMAL_PRIORITY_CLASS)
        else:
            process.nice(max(process.nice(), 10))
    except (psutil.Error, OSError) as exc:
        log.info("could not lower the priority of process %s: %s", pid, exc)
