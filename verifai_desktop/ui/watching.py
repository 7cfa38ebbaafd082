"""Folder watching in the app: the open collection follows the folders it was built from.

:class:`FolderFollower` runs a :class:`~verifai_desktop.store.watch.FolderWatcher` on the
current collection's roots (as the library panel reads them) while ``settings.watch.enabled``.
Each debounced batch of changed paths crosses to the UI thread by a queued signal and is
synced through the library panel's single-writer path, like an ingest
(:meth:`LibraryPanel.sync`): never a second writer. While a write is queued or running (an
ingest, a repair, an earlier sync) batches are gathered and synced as one when it ends. When a
collection is opened its folders are rescanned once, catching up with what changed while
nobody watched.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from verifai_desktop.settings import Settings
from verifai_desktop.store.roots import Root
from verifai_desktop.store.watch import FolderWatcher
from verifai_desktop.ui.library_panel import LibraryPanel
from verifai_desktop.ui.watched_roots import WatchedRoot

log = logging.getLogger(__name__)


class FolderFollower(QObject):
    """Watches the current collection's folders and syncs what changes.

    Signals:
        batch_arrived(str, object): a batch of changed paths (a set of ``Path``) of the named
            collection; emitted on the watcher's thread, received on the UI thread.
    """

    batch_arrived = Signal(str, object)

    def __init__(
        self,
        library: LibraryPanel,
        settings: Callable[[], Settings],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.library = library
        self._settings = settings
        self.collection = ""  # the collection whose folders are followed
        self.watcher: FolderWatcher | None = None
        self.pending: set[Path] = set()  # changes waiting for the writer
        self.catch_up = False  # a rescan of every folder is waiting for the writer
        self._paths: tuple[Path, ...] = ()  # the roots the watcher was started on
        self._connect_signals()

    def _connect_signals(self) -> None:
        self.batch_arrived.connect(self.on_batch_arrived)
        self.library.collection_changed.connect(self.on_collection_changed)
        self.library.roots_changed.connect(self.on_roots_changed)
        self.library.busy_changed.connect(self.on_busy_changed)

    @property
    def watching(self) -> list[Path]:
        """The roots being watched now (none when off or unavailable)."""
        return self.watcher.watched if self.watcher is not None else []

    # ----- following the library -----------------------------------------------------------

    @Slot(str)
    def on_collection_changed(self, name: str) -> None:
        """Another collection: stop watching the old one's folders and forget its changes
        (they are caught up with when it is opened again)."""
        if name != self.collection:
            self.stop()
            self.collection = ""

    @Slot(str, object)
    def on_roots_changed(self, name: str, roots: list[WatchedRoot]) -> None:
        """The current collection's roots were read: watch them (anew when they changed); on
        a collection just opened, catch up with its folders first."""
        if not self._settings().watch.enabled or name != self.library.current:
            self.stop()
            return
        paths = tuple(r.root.path for r in roots)
        opened = name != self.collection
        if not opened and paths == self._paths and self.watcher is not None:
            return
        self.stop()
        self.collection = name
        if not roots:
            return
        self.start([r.root for r in roots])
        if opened:
            self.catch_up = True
            self.flush()

    def apply_settings(self) -> None:
        """Follow ``settings.watch.enabled`` (switched in the settings dialog)."""
        if not self._settings().watch.enabled:
            self.stop()
            self.collection = ""
        elif self.watcher is None and self.library.roots:
            self.on_roots_changed(self.library.current, self.library.roots)
        self.library.show_roots()

    # ----- watching ------------------------------------------------------------------------

    def start(self, roots: list[Root]) -> None:
        """Watch ``roots`` of :attr:`collection` (returns at once: watchdog lists the folders
        on its own threads)."""
        name = self.collection
        debounce_s = self._settings().watch.debounce_s

        def on_batch(paths: set[Path]) -> None:  # the watcher's thread
            self.batch_arrived.emit(name, set(paths))

        def on_error(exc: BaseException) -> None:  # the watcher's thread
            log.warning("folder watching of %s: %s", name, exc)

        watcher = FolderWatcher(roots, on_batch, debounce_s=debounce_s, on_error=on_error)
        watcher.start()
        self.watcher = watcher
        self._paths = tuple(r.path for r in roots)
        log.info("watching %d of %d roots of %s", len(watcher.watched), len(roots), name)

    def stop(self) -> None:
        """Stop watching; changes not yet synced are dropped (caught up on next opening)."""
        watcher, self.watcher = self.watcher, None
        self._paths = ()
        self.pending.clear()
        self.catch_up = False
        if watcher is not None:
            watcher.stop()

    # ----- syncing -------------------------------------------------------------------------

    @Slot(str, object)
    def on_batch_arrived(self, name: str, paths: set[Path]) -> None:
        """A batch of changes: sync it now, or when the running write ends."""
        if name != self.collection or self.watcher is None:
            return  # a batch of a collection no longer followed
        self.pending |= paths
        self.flush()

    @Slot(bool)
    def on_busy_changed(self, busy: bool) -> None:
        """A write ended: sync what gathered meanwhile."""
        if not busy:
            self.flush()

    def flush(self) -> None:
        """Sync the gathered changes (or the catch-up rescan) through the library's single
        writer, unless a write is queued or running (then this runs again when it ends)."""
        if self.library.busy or not self.collection or self.collection != self.library.current:
            return
        if self.catch_up:
            self.catch_up = False
            self.pending.clear()  # the rescan covers them
            self.library.sync(None, self.collection)
        elif self.pending:
            batch, self.pending = self.pending, set()
            self.library.sync(batch, self.collection)
