"""The folders (and files) the library's current collection follows, listed under its
documents, and the syncs that keep the collection in step with them.

Split from :class:`~verifai_desktop.ui.library_panel.LibraryPanel`, which owns one
:class:`FollowedFolders` and forwards its signals; the list itself is a
:class:`~verifai_desktop.ui.watched_roots.RootsLabel`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path

import shiboken6
from PySide6.QtCore import QObject, Signal

from verifai_desktop.settings import Settings
from verifai_desktop.store.watch import SyncReport
from verifai_desktop.ui.library_runs import CollectionRuns
from verifai_desktop.ui.operations import CollectionHost
from verifai_desktop.ui.tasks import Task
from verifai_desktop.ui.watched_roots import RootsLabel, WatchedRoot, sync_time, watched_roots

log = logging.getLogger(__name__)


class FollowedFolders(QObject):
    """The current collection's folders, their list and their syncs.

    Attributes:
        roots: the folders and files the current collection was built from, as last read.
        sync_note: the last sync's outcome, shown under the folders ('' for none).
        label: the list shown under the documents.

    Signals:
        roots_changed(str, object): the named collection's roots were read (a list of
            :class:`~verifai_desktop.ui.watched_roots.WatchedRoot`).
        synced(str, object): a sync of the named collection ended with this ``SyncReport``.
    """

    roots_changed = Signal(str, object)
    synced = Signal(str, object)

    def __init__(
        self,
        host: CollectionHost,
        runs: CollectionRuns,
        settings: Callable[[], Settings],
        current: Callable[[], str],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._host = host
        self._runs = runs
        self._settings = settings
        self._current = current
        self.roots: list[WatchedRoot] = []
        self.sync_note = ""
        self.label = RootsLabel()

    def forget(self) -> None:
        """Another collection is on show: its folders are read afresh."""
        self.roots = []
        self.sync_note = ""
        self.show()

    def reload(self) -> Task[list[WatchedRoot]] | None:
        """Read the folders and files the current collection was built from, and whether each
        can be reached now; :attr:`roots_changed` carries them. Read on the reader pool, not
        queued behind another collection's ingest or question (issue 42)."""
        name = self._current()
        if not name:
            return None
        task = self._host.read("list roots", name, watched_roots)
        task.succeeded.connect(lambda roots: self._on_roots(name, roots))
        # The documents were just read from the same collection; a failure here is logged.
        task.failed.connect(lambda exc: log.warning("cannot read the roots of %s: %s", name, exc))
        return task

    def _closed(self) -> bool:
        """Whether the panel was closed (and its widgets deleted) while a read or sync ran:
        its outcome has nowhere to go."""
        return not (shiboken6.isValid(self) and shiboken6.isValid(self.label))

    def _on_roots(self, name: str, roots: list[WatchedRoot]) -> None:
        if self._closed() or name != self._current():
            return
        self.roots = roots
        self.show()
        self.roots_changed.emit(name, roots)

    def show(self) -> None:
        """List the folders followed: watched or not (the setting), each with its last sync
        time or why it cannot be reached; then the last sync's outcome."""
        watching = bool(self.roots) and self._settings().watch.enabled
        self.label.show_roots(self.roots, watching=watching, note=self.sync_note)

    def sync(self, changed: Iterable[Path] | None, name: str) -> Task[SyncReport]:
        """Bring collection ``name`` in step with its folders, on the single writer like an
        ingest: added and changed files among ``changed`` are indexed, deleted ones removed;
        ``None`` rescans every folder. A folder that cannot be reached is reported and nothing
        under it removed. A failure is shown under the folders, not in a dialog (syncs run
        unasked)."""
        task = self._runs.sync(name, changed)
        task.succeeded.connect(lambda report: self._on_synced(name, report))
        task.failed.connect(lambda exc: self._on_sync_failed(name, exc))
        return task

    def _on_synced(self, name: str, report: SyncReport) -> None:
        if self._closed():
            return
        if name == self._current():
            self.sync_note = f"Last sync {sync_time(report.finished)}: {report.summary()}"
            self.show()
        self.synced.emit(name, report)

    def _on_sync_failed(self, name: str, exc: BaseException) -> None:
        log.warning("syncing %s with its folders failed: %s", name, exc)
        if not self._closed() and name == self._current():
            self.sync_note = f"Last sync failed: {exc}"
            self.show()
