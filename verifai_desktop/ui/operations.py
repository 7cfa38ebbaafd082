"""UI operations that take a collection, after Anki's ``QueryOp`` / ``CollectionOp``.

The window holds one :class:`CollectionHost`; widgets submit ``op(col, ctx)`` callables to it
and get a :class:`~verifai_desktop.ui.tasks.Task` whose signals arrive on the UI thread. The
host keeps ONE open :class:`~verifai_desktop.store.collection.Collection` and hands it to every
op. Every op runs on the task runner's single writer thread, and only there is the open
collection touched (opened, refreshed, closed): it is thread-confined to that worker, so no
widget state is ever assigned off the UI thread.

A quick read of one collection's catalog (its documents, the folders it follows, its
metadata: :meth:`CollectionHost.read`) does not queue behind that thread: it opens the
collection's catalog on a reader thread of its own, as another program would, so the
documents of one collection show while another collection is being written or answered from
(issue 42).

A write (:meth:`CollectionHost.collection_op`) closes the collection when it ends, so the
write lock is held only while writing (the CLI may write between two app writes); the next op
reopens it. When a write succeeds the host emits :attr:`CollectionHost.documents_changed` on
the UI thread, the change notice widgets refresh from.

A collection is named by its folder, or, for a team collection, by its key (``URL#NAME``,
:mod:`verifai_desktop.store.pg.team`): the host opens that one as a
:class:`~verifai_desktop.store.pg.store.PgStore` (:func:`~verifai_desktop.store.pg.team.
open_team`, the command line's ``--store`` path), with the password given in this session
when libpq and the system keyring have none (:func:`~verifai_desktop.ui.team_dialog.
session_password`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from PySide6.QtCore import QObject, Signal

from verifai_desktop.settings import Settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.pg.store import PgStore
from verifai_desktop.store.pg.team import is_team_key, open_team
from verifai_desktop.ui.tasks import T, Task, TaskContext, TaskRunner
from verifai_desktop.ui.team_dialog import session_password

log = logging.getLogger(__name__)

OpenCollection = Collection | PgStore
"""An open collection: on this machine, or a team collection on a PostgreSQL server."""

CollectionFn = Callable[[OpenCollection, TaskContext], T]


def remove_documents(col: OpenCollection, sources: Sequence[str]) -> int:
    """Remove documents (absolute paths) from ``col``; returns how many were. A file on this
    machine also stops being followed (:meth:`Collection.remove`)."""
    if isinstance(col, Collection):
        return sum(1 for s in sources if col.remove(s))
    return len(col.remove_sources(sources))


class CollectionHost(QObject):
    """One open collection shared by the window's operations.

    Signals:
        documents_changed(str): a write op on the named collection succeeded.
    """

    documents_changed = Signal(str)

    def __init__(
        self,
        runner: TaskRunner,
        settings: Callable[[], Settings],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.runner = runner
        self._settings = settings
        # Touched only on the runner's single writer thread (see the module docstring), or on
        # the UI thread by close() after the runner has shut down.
        self._col: OpenCollection | None = None
        self._name = ""  # what the open collection was opened by (a folder or a team key)

    # ----- worker side (writer thread only) ------------------------------------------------

    def _collection(self, name: str, settings: Settings, *, create: bool) -> OpenCollection:
        col = self._col
        if col is not None and self._name != name:
            col.close()
            col = self._col = None
        if col is None:
            col = self._col = (
                open_team(name, create=create, settings=settings, password_prompt=session_password)
                if is_team_key(name)
                else Collection.open(name, create=create, settings=settings)
            )
            self._name = name
        else:
            col.refresh()  # pick up writes another process committed meanwhile
        return col

    def _release(self) -> None:
        if self._col is not None:
            self._col.close()
            self._col = None

    # ----- UI side -------------------------------------------------------------------------

    def query(
        self, task_name: str, collection: str, op: CollectionFn[T], *, throttle_ms: int = 50
    ) -> Task[T]:
        """Run ``op(col, ctx)`` reading collection ``collection``; nothing is written.

        Returns:
            The task; its ``succeeded`` carries ``op``'s return value on the UI thread.
        """
        settings = self._settings()

        def work(ctx: TaskContext) -> T:
            return op(self._collection(collection, settings, create=False), ctx)

        return self.runner.submit(task_name, work, writes_index=True, throttle_ms=throttle_ms)

    def read(self, task_name: str, collection: str, op: CollectionFn[T]) -> Task[T]:
        """Run ``op(col, ctx)`` on collection ``collection`` opened for this op alone, its
        catalog only (:meth:`Collection.open` with ``reconcile=False``), on the reader pool:
        it does not wait for the writer thread's ops (an ingest, a question) to end. For
        quick reads of the catalog and metadata; ``op`` must not search or write. A team
        collection is read through :meth:`query` (its connection is the host's).

        Returns:
            The task; its ``succeeded`` carries ``op``'s return value on the UI thread.
        """
        if is_team_key(collection):
            return self.query(task_name, collection, op)
        settings = self._settings()

        def work(ctx: TaskContext) -> T:
            col = Collection.open(collection, settings=settings, reconcile=False)
            try:
                return op(col, ctx)
            finally:
                col.close()

        return self.runner.submit(task_name, work)

    def collection_op(
        self, task_name: str, collection: str, op: CollectionFn[T], *, create: bool = False
    ) -> Task[T]:
        """Run ``op(col, ctx)`` that writes collection ``collection`` (created if ``create``).

        The collection is closed when ``op`` ends (the write lock released); on success
        :attr:`documents_changed` is emitted with ``collection`` on the UI thread.
        """
        settings = self._settings()

        def work(ctx: TaskContext) -> T:
            try:
                return op(self._collection(collection, settings, create=create), ctx)
            finally:
                self._release()

        task = self.runner.submit(task_name, work, writes_index=True)
        task.succeeded.connect(lambda _r: self.documents_changed.emit(collection))
        return task

    def folder_op(self, task_name: str, fn: Callable[[TaskContext], T]) -> Task[T]:
        """Run ``fn(ctx)`` that changes collection folders (rename, delete) with none open."""

        def work(ctx: TaskContext) -> T:
            self._release()
            return fn(ctx)

        return self.runner.submit(task_name, work, writes_index=True)

    def close(self) -> None:
        """Close the open collection; call only once the runner has shut down (no worker)."""
        self._release()
