"""The clock a parser's time limit runs on: wall time, less the time its process was suspended.

While an answer is being written the app suspends its parser process (issue 40:
:meth:`verifai_desktop.foreground.Foreground.hold`), so that the generator has the cores to
itself. A file's time limit must not run while the parser is held: every deadline of
:mod:`verifai_desktop.ingest` is a value of :func:`now`, which leaves out the seconds the
process spent suspended, as the parent has counted them into a shared counter
(:func:`count_pauses_in`; ``multiprocessing.Value("d")``). A process that was never suspended
reads plain ``time.monotonic()``.
"""

from __future__ import annotations

import time

from verifai_desktop.foreground import PauseCounter

__all__ = ["PauseCounter", "count_pauses_in", "now"]

_paused: PauseCounter | None = None


def count_pauses_in(counter: PauseCounter | None) -> None:
    """Read this process's suspended seconds from ``counter`` from now on (None: none)."""
    global _paused
    _paused = counter


def now() -> float:
    """Seconds on a monotonic clock that stands still while this process is suspended."""
    return time.monotonic() - (0.0 if _paused is None else _paused.value)
