"""The library panel's writes in flight: how many are queued or running on the single writer,
and what each one is doing to which collection, in the words of its context ("Adding files
to “papers”"), so that the question box can say which collection is busy and why (issue 42).

:class:`LibraryWrites` is the :class:`~verifai_desktop.ui.library_runs.Write` path of
:class:`~verifai_desktop.ui.library_panel.LibraryPanel`: every write the panel or its runs
submit to the collection host goes through :meth:`LibraryWrites.write`.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from verifai_desktop.ui.tasks import T, Task


class LibraryWrites(QObject):
    """Counts the writes queued or running and keeps what each is doing.

    Args:
        show_failure: shows a failed write's error with its context (a dialog).
        parent: the Qt parent.

    Signals:
        busy_changed(bool): a write started with none running (True), or the last one ended
            (False).
        changed(): a write started or ended.
    """

    busy_changed = Signal(bool)
    changed = Signal()

    def __init__(
        self,
        show_failure: Callable[[BaseException, str], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._show_failure = show_failure
        self._contexts: dict[int, str] = {}  # id(task) -> its context, in the order started

    def write(self, task: Task[T], *, context: str, report_errors: bool = True) -> Task[T]:
        """Count ``task`` (a write just submitted to the host) as busy until it finishes,
        doing ``context`` (e.g. "Adding files to “papers”"); a failure is shown unless
        ``report_errors`` is False."""
        key = id(task)
        self._contexts[key] = context
        if len(self._contexts) == 1:
            self.busy_changed.emit(True)
        if report_errors:
            task.failed.connect(lambda exc: self._show_failure(exc, context))
        task.finished.connect(lambda: self._on_finished(key))
        self.changed.emit()
        return task

    def _on_finished(self, key: int) -> None:
        self._contexts.pop(key, None)
        if not self._contexts:
            self.busy_changed.emit(False)
        self.changed.emit()

    @property
    def count(self) -> int:
        """Writes queued or running."""
        return len(self._contexts)

    @property
    def doing(self) -> str:
        """What the first write queued or running is doing (the writer runs them in order, so
        it is the one running), e.g. "Adding files to “papers”"; ``""`` when none is."""
        return next(iter(self._contexts.values()), "")
