"""The library side panel: collections (create, rename, delete, repair), their documents with
status and reason, adding files by dialog or drag and drop, background ingest and repair with
progress and cancel, and syncing a collection with the folders it was built from.

The panel is composed of its parts: the collection list and its buttons
(:mod:`verifai_desktop.ui.collection_list`), the documents table
(:mod:`verifai_desktop.ui.documents_table`), the folders followed and their syncs
(:mod:`verifai_desktop.ui.library_folders`), the ingest, repair and sync runs
(:mod:`verifai_desktop.ui.library_runs`, shown by :mod:`verifai_desktop.ui.ingest_progress`)
and the colour check (:mod:`verifai_desktop.ui.self_check`). A team collection (a PostgreSQL
store, added by the list's "Team…" entry) is named by its key and used like the others; it is
renamed and repaired on its server, and deleting it only takes it off the list.
Collection work is submitted as operations on the window's
:class:`~verifai_desktop.ui.operations.CollectionHost` (one open collection, the single writer
thread) through :meth:`LibraryPanel._write`; results and the host's ``documents_changed``
notice arrive on the UI thread. An encrypted PDF's password is asked by emitting a
:class:`~verifai_desktop.ui.questions.PasswordQuestion` (:attr:`LibraryPanel.password_requested`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import shiboken6
from PySide6.QtCore import QTimer, Signal, Slot
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from verifai_desktop.domain import DocStatus, Progress
from verifai_desktop.errors import IndexCorrupt
from verifai_desktop.settings import Settings
from verifai_desktop.store.folders import delete_collection, rename_collection
from verifai_desktop.store.pg.team import forget_team, is_team_key
from verifai_desktop.store.repair import RepairReport
from verifai_desktop.store.watch import SyncReport
from verifai_desktop.store.writer import IngestReport
from verifai_desktop.ui.adding import (
    NEW_COLLECTION_LABEL,
    NEW_COLLECTION_TITLE,
    dropped_paths,
    pick_files,
    pick_folder,
    suggested_collection_name,
)
from verifai_desktop.ui.collection_list import CollectionList, delete_question
from verifai_desktop.ui.documents_table import DocumentRow, DocumentsTable, collection_rows
from verifai_desktop.ui.elided_label import ElidedLabel, keep_column_width
from verifai_desktop.ui.errors import show_error
from verifai_desktop.ui.library_folders import FollowedFolders
from verifai_desktop.ui.library_runs import CollectionRuns
from verifai_desktop.ui.library_writes import LibraryWrites
from verifai_desktop.ui.operations import CollectionHost, OpenCollection, remove_documents
from verifai_desktop.ui.questions import PasswordQuestion
from verifai_desktop.ui.resources import SAMPLE_COLLECTION, icon, sample_files
from verifai_desktop.ui.self_check import SelfCheckPanel
from verifai_desktop.ui.tasks import Task, TaskContext, TaskRunner
from verifai_desktop.ui.watched_roots import WatchedRoot

log = logging.getLogger(__name__)


class LibraryPanel(QWidget):
    """Collections and their documents.

    Signals:
        collection_changed(str): the current collection changed ('' when none).
        documents_changed(str): a write to the named collection finished (ingest, remove,
            repair).
        ingest_finished(object): an ingest run ended with this ``IngestReport``.
        busy_changed(bool): a write started (True) or all writes ended (False).
        password_requested(PasswordQuestion): an encrypted PDF needs its password; answer the
            question to ingest it again with it.
        roots_changed(str, object): the folders and files the named collection was built
            from were read (a list of :class:`~verifai_desktop.ui.watched_roots.WatchedRoot`),
            after every change of its documents.
        synced(str, object): a sync of the named collection with its folders ended with this
            ``SyncReport``.
    """

    collection_changed = Signal(str)
    documents_changed = Signal(str)
    ingest_finished = Signal(object)
    busy_changed = Signal(bool)
    password_requested = Signal(object)
    roots_changed = Signal(str, object)
    synced = Signal(str, object)

    def __init__(
        self,
        runner: TaskRunner,
        settings: Callable[[], Settings],
        *,
        host: CollectionHost | None = None,
        offer_sample: bool = True,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("libraryPanel")
        self.setAcceptDrops(True)
        self.runner = runner
        self._settings = settings
        self.host = host if host is not None else CollectionHost(runner, settings, self)
        self.current: str = ""  # the current collection's folder name
        self.rows: list[DocumentRow] = []
        self.writes = LibraryWrites(self._show_write_failure, self)
        self._write = self.writes.write
        self.runs = CollectionRuns(self.host, settings, self._write, self.display_name, self)
        # The folders (and files) the collection follows, each with its last sync or why it
        # cannot be reached.
        self.folders = FollowedFolders(
            self.host, self.runs, lambda: self._settings(), lambda: self.current, self
        )
        self.passwords = self.runs.passwords  # source -> PDF password given in this session

        self.collection_list = CollectionList(runner, offer_sample=offer_sample)
        self.collections = self.collection_list.list_widget
        self.sample_banner = self.collection_list.sample_banner
        self.sample_button = self.collection_list.sample_button
        self.repair_button = self.collection_list.repair_button
        self.delete_button = self.collection_list.delete_button

        self.docs_title = ElidedLabel("Documents")
        self.docs_title.setObjectName("sectionTitle")
        self.table = DocumentsTable()
        self.add_files_button = QPushButton(icon("add-file"), "Add files…")
        self.add_folder_button = QPushButton(icon("add-folder"), "Add folder…")
        # An icon only, so that the library fits a narrow column (ui/reading_layout.py).
        self.remove_button = QToolButton()
        self.remove_button.setIcon(icon("remove"))
        self.remove_button.setAccessibleName("Remove")
        self.remove_button.setToolTip("Remove the selected documents from the collection")
        docs_bar = QHBoxLayout()
        docs_bar.addWidget(self.add_files_button)
        docs_bar.addWidget(self.add_folder_button)
        docs_bar.addStretch(1)
        docs_bar.addWidget(self.remove_button)
        self.drop_hint = QLabel("Drop files or folders here to add them.")
        self.drop_hint.setStyleSheet("color:#667")
        self.drop_hint.setWordWrap(True)
        self.roots_label = self.folders.label
        self.self_check = SelfCheckPanel(self.host, settings)  # the collection's colour check
        self.self_check.display_name = self.display_name

        self.progress_frame = self.runs.progress
        self.progress_label = self.progress_frame.label
        self.files_bar = self.progress_frame.files_bar
        self.chunks_label = self.progress_frame.chunks_label
        self.cancel_button = self.progress_frame.cancel_button
        self.summary_frame = self.runs.summary
        self.summary_label = self.summary_frame.label
        self.summary_close_button = self.summary_frame.close_button

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.collection_list)
        layout.addWidget(self.docs_title)
        layout.addWidget(self.table.filter_edit)  # words, author:, year:, title: (issue 43)
        layout.addWidget(self.table, 1)
        layout.addLayout(docs_bar)
        layout.addWidget(self.roots_label)
        layout.addWidget(self.self_check)
        layout.addWidget(self.drop_hint)
        layout.addWidget(self.progress_frame)
        layout.addWidget(self.summary_frame)
        keep_column_width(self.drop_hint, self.roots_label)
        self._connect_signals()
        self._update_buttons()

    def _connect_signals(self) -> None:
        self.writes.busy_changed.connect(self.busy_changed)
        self.writes.changed.connect(self._update_buttons)
        self.host.documents_changed.connect(self.on_documents_changed)
        self.collection_list.chosen.connect(self.on_collection_clicked)
        self.collection_list.new_button.clicked.connect(self.on_new_clicked)
        self.collection_list.team_saved.connect(lambda key: self.refresh_collections(select=key))
        self.collection_list.rename_button.clicked.connect(self.on_rename_clicked)
        self.delete_button.clicked.connect(self.on_delete_clicked)
        self.repair_button.clicked.connect(self.on_repair_clicked)
        self.sample_button.clicked.connect(self.on_sample_clicked)
        self.add_files_button.clicked.connect(self.on_add_files_clicked)
        self.add_folder_button.clicked.connect(self.on_add_folder_clicked)
        self.remove_button.clicked.connect(self.on_remove_clicked)
        self.table.cellDoubleClicked.connect(self.on_row_double_clicked)
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.runs.ingest_finished.connect(self.ingest_finished)
        self.runs.rows_read.connect(self._on_rows_read)
        self.runs.encrypted_found.connect(self._on_encrypted_found)
        self.runs.password_requested.connect(self.password_requested)
        self.runs.passwords_given.connect(self._on_passwords_given)
        self.collection_changed.connect(self.self_check.show_collection)
        self.folders.roots_changed.connect(self.roots_changed)
        self.folders.synced.connect(self.synced)

    # ----- collections ---------------------------------------------------------------------

    def refresh_collections(self, select: str | None = None) -> None:
        """Re-read the collections (listed by display name); select ``select`` (a folder or
        display name; default: keep the current one)."""
        self._set_current(
            self.collection_list.refresh(select if select is not None else self.current)
        )

    def display_name(self, folder: str | None = None) -> str:
        """The display name of a collection (default: the current one)."""
        return self.collection_list.display_name(self.current if folder is None else folder)

    def _set_current(self, name: str) -> None:
        changed = name != self.current
        self.current = name
        shown = self.display_name(name)
        self.docs_title.setText(f"Documents in “{shown}”" if name else "Documents")
        if changed:
            self.rows = []
            self._fill_table()
            self.folders.forget()
            self.collection_changed.emit(name)
        self.summary_frame.show_collection(name)  # "Added to …" of this collection only
        self.progress_frame.show_collection(name)  # its own ingest or repair only
        if name:
            self.reload_documents()
        self._update_buttons()

    @Slot(str)
    def on_collection_clicked(self, name: str) -> None:
        """Switch to a collection (its folder or display name)."""
        row = self.collection_list.row_of(name)
        if row is not None:
            self._set_current(self.collection_list.names[row].folder)

    def create_collection(self, name: str) -> Task[None]:
        """Create collection ``name`` (on the writer) and select it when done."""

        task = self._write(
            self.host.collection_op("create collection", name, _create, create=True),
            context=f"Creating collection “{name}”",
        )
        task.succeeded.connect(lambda _r: self.refresh_collections(select=name))
        return task

    def rename_current(self, new: str) -> Task[None]:
        """Rename the current collection to ``new``."""
        old = self.current

        def work(ctx: TaskContext) -> None:
            rename_collection(old, new)

        task = self._write(
            self.host.folder_op("rename collection", work),
            context=f"Renaming “{self.display_name(old)}”",
        )
        task.succeeded.connect(lambda _r: self.refresh_collections(select=new))
        return task

    def delete_current(self) -> Task[None]:
        """Delete the current collection and its index files (not the documents themselves)."""
        name = self.current

        def work(ctx: TaskContext) -> None:
            delete_collection(name)

        task = self._write(
            self.host.folder_op("delete collection", work), context=f"Deleting {name!r}"
        )
        task.succeeded.connect(lambda _r: self._after_delete())
        return task

    def _after_delete(self) -> None:
        self.current = ""
        self.refresh_collections(select="")
        if not self.current:
            self.collection_changed.emit("")

    def ask_text(self, title: str, label: str, text: str = "") -> str | None:
        """Ask for a line of text (a dialog; tests replace this method)."""
        value, ok = QInputDialog.getText(self, title, label, QLineEdit.EchoMode.Normal, text)
        return value.strip() if ok and value.strip() else None

    def confirm(self, title: str, text: str) -> bool:
        """Ask yes/no (a dialog; tests replace this method)."""
        answer = QMessageBox.question(self, title, text)
        return answer == QMessageBox.StandardButton.Yes

    @Slot()
    def on_new_clicked(self) -> None:
        """Ask for a name and create the collection."""
        name = self.ask_text("New collection", "Name:")
        if name:
            self.create_collection(name)

    @Slot()
    def on_rename_clicked(self) -> None:
        """Ask for a new name and rename the current collection."""
        if not self.current:
            return
        shown = self.display_name()
        name = self.ask_text("Rename collection", f"New name for “{shown}”:", shown)
        if name and name != shown:
            self.rename_current(name)

    @Slot()
    def on_delete_clicked(self) -> None:
        """Confirm and delete the current collection; a team collection is only taken off the
        list (nothing on its server changes)."""
        team = is_team_key(self.current)
        if not self.current or not self.confirm(*delete_question(self.display_name(), team)):
            return
        if team:
            forget_team(self.current)
            self._after_delete()
        else:
            self.delete_current()

    @Slot()
    def on_sample_clicked(self) -> None:
        """Create the sample collection from ``resources/sample`` and ingest it."""
        self.sample_banner.setVisible(False)
        files = sample_files()
        task = self.create_collection(SAMPLE_COLLECTION)
        task.succeeded.connect(lambda _r: self.ingest(files))

    # ----- documents -----------------------------------------------------------------------

    def reload_documents(self) -> Task[list[DocumentRow]] | None:
        """Read the current collection's documents (queued behind any write)."""
        name = self.current
        if not name:
            return None

        # Not queued behind another collection's ingest or question (issue 42).
        task = self.host.read("list documents", name, collection_rows)
        task.succeeded.connect(lambda rows: self._on_rows(name, rows))
        task.failed.connect(
            lambda exc: show_error(
                self.window(), exc, context=f"Reading {name!r}", repair=self.repair
            )
        )
        return task

    def _on_rows(self, name: str, rows: list[DocumentRow]) -> None:
        if name != self.current or not shiboken6.isValid(self.table):  # closed while read
            return
        self.rows = rows
        self._fill_table()
        self.reload_roots()

    def _on_rows_read(self, name: str, rows: list[DocumentRow]) -> None:
        """Rows of a running ingest: the table fills as files finish."""
        if self._is_current(name):
            self.rows = rows
            self._fill_table()

    # ----- folders followed (ui/library_folders.py) ---------------------------------------

    @property
    def roots(self) -> list[WatchedRoot]:
        """The folders and files the current collection was built from, as last read."""
        return self.folders.roots

    def reload_roots(self) -> Task[list[WatchedRoot]] | None:
        """Read the current collection's folders and files (not queued behind a write);
        :attr:`roots_changed` carries them."""
        return self.folders.reload()

    def show_roots(self) -> None:
        """List the folders followed under the documents (watched or not, last sync)."""
        self.folders.show()

    def roots_text(self) -> list[str]:
        """The folders list's lines as shown (title first)."""
        return self.roots_label.lines()

    def sync(self, changed: Iterable[Path] | None, name: str | None = None) -> Task[SyncReport]:
        """Bring collection ``name`` (default: the current one) in step with its folders
        (:meth:`FollowedFolders.sync <verifai_desktop.ui.library_folders.FollowedFolders.sync>`)."""
        return self.folders.sync(changed, self.current if name is None else name)

    def _fill_table(self) -> None:
        self.table.set_rows(self.rows)
        self.drop_hint.setVisible(not self.rows)  # the table's room goes to its rows
        self._update_buttons()

    def table_rows(self) -> list[tuple[str, str, str, str]]:
        """The documents table's cell texts (file, status, chunks, reason)."""
        return self.table.cell_texts()

    def _is_current(self, name: str) -> bool:
        """``name`` names the current collection: its key, or the name the user gave it (a
        collection added to by that name before its key was known)."""
        return bool(self.current) and name in (self.current, self.display_name(self.current))

    @Slot(str)
    def on_documents_changed(self, name: str) -> None:
        """A write to collection ``name`` ended: refresh its table and tell the window."""
        if self._is_current(name):
            self.reload_documents()
        self.documents_changed.emit(name)

    def ingest(
        self,
        paths: Sequence[Path],
        *,
        passwords: dict[Path, str] | None = None,
        new_name: str | None = None,
    ) -> Task[IngestReport] | None:
        """Ingest files and folders into the current collection in the background.

        With no collection open, a new one is made, named as the user says when asked
        (offered: the folder's name, :func:`~verifai_desktop.ui.adding.
        suggested_collection_name`); nothing is added when they cancel. Encrypted PDFs found
        in the run are asked for their password afterwards and ingested again with it.
        ``new_name`` names that new collection without asking (the command line's
        ``--ingest``).
        """
        if not paths:
            return None
        name = (
            self.current
            or new_name
            or self.ask_text(
                NEW_COLLECTION_TITLE, NEW_COLLECTION_LABEL, suggested_collection_name(paths)
            )
        )
        if not name:
            return None
        if not self.current:
            self.create_collection(name)
        task = self.runs.ingest(name, [Path(p) for p in paths], dict(passwords or {}))
        task.cancelled.connect(lambda: self.on_documents_changed(name))
        task.finished.connect(lambda: self._on_ingest_finished(task))
        return task

    @Slot(object)
    def on_ingest_progress(self, p: Progress) -> None:
        """Update the files bar (files) and the chunks line (chunks embedded)."""
        self.progress_frame.show_progress(p)

    def _on_ingest_finished(self, task: Task[IngestReport]) -> None:
        # Files finished before the failure stay indexed; a damaged collection was already
        # reported (reading it again would report it twice).
        if task.outcome == "failed" and self.current and not isinstance(task.error, IndexCorrupt):
            self.reload_documents()

    @Slot(str, object, object)
    def _on_encrypted_found(self, name: str, paths: list[Path], tried: dict[Path, str]) -> None:
        if name == self.current:
            QTimer.singleShot(0, lambda: self.request_passwords(paths, tried))

    def request_passwords(
        self, paths: Sequence[Path], tried: dict[Path, str] | None = None
    ) -> list[PasswordQuestion]:
        """Ask each encrypted PDF's password by :attr:`password_requested`.

        When every question is answered or cancelled, the files given a password are ingested
        again with it (a wrong one comes back encrypted and is asked again, ``wrong=True``).

        Returns:
            The questions, in the order of ``paths``.
        """
        return self.runs.request_passwords(paths, tried)

    @Slot(object)
    def _on_passwords_given(self, passwords: dict[Path, str]) -> None:
        self.ingest(list(passwords), passwords=passwords)

    @Slot(int, int)
    def on_row_double_clicked(self, row: int, _col: int) -> None:
        """Double-click on an encrypted document asks its password and re-ingests it."""
        if 0 <= row < len(self.rows) and self.rows[row].status is DocStatus.ENCRYPTED:
            self.request_passwords([Path(self.rows[row].source)])

    # ----- repair --------------------------------------------------------------------------

    def repair(self, name: str | None = None) -> Task[RepairReport] | None:
        """Rebuild collection ``name`` (folder name; default the current one) from its source
        files in the background, with progress and Cancel.

        The rebuilt collection replaces the old one only when complete; a failed or cancelled
        repair leaves it as it was. PDF passwords given in this session are used again, and
        encrypted PDFs still without one are asked for afterwards.

        Returns:
            The task, or None when there is no collection or its repair is already queued.
        """
        name = self.current if name is None else name
        task = self.runs.repair(name)
        if task is not None:
            # A folder op: the host sends no change notice.
            task.succeeded.connect(lambda _r: self.on_documents_changed(name))
        return task

    @property
    def repair_task(self) -> Task[RepairReport] | None:
        """The last repair started."""
        return self.runs.repair_task

    @Slot()
    def on_repair_clicked(self) -> None:
        """Confirm and rebuild the current collection from its source files."""
        if self.current and self.confirm(
            "Repair collection",
            f"Rebuild “{self.display_name()}” from its source files? Every file is read and "
            "indexed again, which can take a while; files no longer on disk drop out of the "
            "collection. Your files are not touched.",
        ):
            self.repair()

    # ----- removing ------------------------------------------------------------------------

    def remove_documents(self, sources: Sequence[str]) -> Task[int]:
        """Remove documents (absolute paths) from the current collection."""
        name = self.current
        targets = list(sources)

        def op(col: OpenCollection, ctx: TaskContext) -> int:
            return remove_documents(col, targets)

        # The host's documents_changed notice refreshes the table.
        return self._write(
            self.host.collection_op("remove documents", name, op),
            context=f"Removing from {name!r}",
        )

    @Slot()
    def on_remove_clicked(self) -> None:
        """Remove the selected documents."""
        rows = sorted({i.row() for i in self.table.selectedIndexes()})
        sources = [self.rows[r].source for r in rows if r < len(self.rows)]
        if sources and self.confirm(
            "Remove documents",
            f"Remove {len(sources)} document(s) from “{self.display_name()}”?",
        ):
            self.remove_documents(sources)

    @Slot()
    def on_add_files_clicked(self) -> None:
        """Pick files with a dialog and ingest them."""
        self.ingest(pick_files(self))

    @Slot()
    def on_add_folder_clicked(self) -> None:
        """Pick a folder with a dialog and ingest it (recursively)."""
        self.ingest(pick_folder(self))

    # ----- drag and drop -------------------------------------------------------------------

    def dragEnterEvent(self, e: QDragEnterEvent) -> None:  # noqa: N802 (Qt override)
        if dropped_paths(e.mimeData()):
            e.acceptProposedAction()
        else:
            e.ignore()

    def dropEvent(self, e: QDropEvent) -> None:  # noqa: N802 (Qt override)
        paths = dropped_paths(e.mimeData())
        if paths:
            e.acceptProposedAction()
            self.ingest(paths)

    # ----- plumbing ------------------------------------------------------------------------

    def _show_write_failure(self, exc: BaseException, context: str) -> None:
        show_error(self.window(), exc, context=context, repair=self.repair)

    @property
    def busy(self) -> bool:
        """True while a write (create, ingest, remove, rename, delete, sync) is queued or
        running."""
        return self.writes.count > 0

    @property
    def busy_text(self) -> str:
        """What the write running now does, naming its collection ("Adding files to
        “papers”"); ``""`` when none runs."""
        return self.writes.doing

    @property
    def busy_with_user_work(self) -> bool:
        """True while a write the user asked for is queued or running (a sync with the
        folders, run unasked, stops at quit without asking: it catches up next time)."""
        return self.writes.count > self.runs.syncs

    def _update_buttons(self) -> None:
        has = bool(self.current)
        self.collection_list.set_actions_enabled(has and not self.busy, self.current)
        self.remove_button.setEnabled(has and bool(self.table.selectedIndexes()))


def _create(col: OpenCollection, ctx: TaskContext) -> None:
    """Opening with ``create=True`` made the collection; nothing more to do."""
