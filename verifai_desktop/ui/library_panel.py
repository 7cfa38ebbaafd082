"""The library side panel: collections (create, rename, delete, repair), their documents with
status and reason, adding files by dialog or drag and drop, background ingest and repair with
progress and cancel.

Collection work is submitted as operations on the window's
:class:`~verifai_desktop.ui.operations.CollectionHost` (one open collection, the single writer
thread); results and the host's ``documents_changed`` notice arrive on the UI thread. An
encrypted PDF's password is asked by emitting a
:class:`~verifai_desktop.ui.questions.PasswordQuestion` (:attr:`LibraryPanel.password_requested`).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from verifai_desktop.domain import DocStatus, Progress
from verifai_desktop.errors import IndexCorrupt
from verifai_desktop.settings import Settings
from verifai_desktop.store.collection import (
    Collection,
    delete_collection,
    list_collections,
    rename_collection,
)
from verifai_desktop.store.naming import CollectionName, list_names
from verifai_desktop.store.repair import RepairReport, repair_collection
from verifai_desktop.store.watch import Root, SyncReport, roots_of, sync_changes, unavailable_reason
from verifai_desktop.store.writer import IngestReport, Outcome, ingest_paths
from verifai_desktop.ui.documents_table import DocumentRow, DocumentsTable, document_rows
from verifai_desktop.ui.errors import show_error
from verifai_desktop.ui.operations import CollectionHost
from verifai_desktop.ui.questions import PasswordQuestion
from verifai_desktop.ui.resources import SAMPLE_COLLECTION, icon, sample_files, tool_button
from verifai_desktop.ui.tasks import T, Task, TaskContext, TaskRunner

log = logging.getLogger(__name__)

PROGRESS_DELAY_MS = 600  # show progress only for work that is not instant (STYLE.md)
MAX_LISTED_MISSING = 8  # file names listed in a repair summary; the tooltip has them all
MAX_LISTED_ROOTS = 6  # folders listed under the documents; the tooltip has them all
WATCHING_TITLE = "Watching for changes:"
NOT_WATCHING_TITLE = "Built from (watching is off in Settings):"


@dataclass(frozen=True, slots=True)
class WatchedRoot:
    """A folder or file the current collection was built from, as the panel lists it.

    Attributes:
        root: the root as the collection remembers it (path, last sync, last status).
        unavailable: why it cannot be reached now ('' when it can), from
            :func:`~verifai_desktop.store.watch.unavailable_reason`.
    """

    root: Root
    unavailable: str = ""


def sync_time(iso: str, *, today: dt.date | None = None) -> str:
    """Local time of an ISO 8601 stamp: ``"14:03"`` today, else ``"2026-11-25 14:03"``;
    ``""`` when empty or unreadable."""
    try:
        moment = dt.datetime.fromisoformat(iso).astimezone()
    except ValueError:
        return ""
    if moment.date() == (today or dt.date.today()):
        return moment.strftime("%H:%M")
    return moment.strftime("%Y-%m-%d %H:%M")


def root_line(watched: WatchedRoot) -> str:
    """One line of the folders list: ``"/docs (synced 14:03)"``, ``"/docs (not synced yet)"``
    or ``"/mnt/usb: missing (a disk or share not connected, or the folder moved?)"``."""
    root = watched.root
    reason = watched.unavailable or (root.status if root.status != "ok" else "")
    if reason:
        return f"{root.path}: {reason}"
    when = sync_time(root.last_sync)
    return f"{root.path} (synced {when})" if when else f"{root.path} (not synced yet)"


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
            from were read (a list of :class:`WatchedRoot`), after every change of its
            documents.
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
        self._names: list[CollectionName] = []
        self.rows: list[DocumentRow] = []
        self.passwords: dict[str, str] = {}  # source -> PDF password given in this session
        self.ingest_task: Task[IngestReport] | None = None
        self.repair_task: Task[RepairReport] | None = None
        # The ingest or repair whose progress the progress area shows (and Cancel stops).
        self._progress_task: Task[IngestReport] | Task[RepairReport] | None = None
        self._repairing: set[str] = set()  # collections whose repair is queued or running
        self._writes = 0
        self._syncs = 0  # of the writes, syncs with the folders (run unasked)
        self._chunks_done = 0
        self.roots: list[WatchedRoot] = []
        self.sync_task: Task[SyncReport] | None = None
        self.sync_note = ""  # the last sync's outcome, under the folders

        title = QLabel("Collections")
        title.setObjectName("sectionTitle")
        self.collections = QListWidget()
        self.collections.setObjectName("collectionList")
        self.collections.setMaximumHeight(150)
        self.new_button = tool_button("new-collection", "New collection")
        self.rename_button = tool_button("rename", "Rename collection")
        self.delete_button = tool_button("delete", "Delete collection")
        self.repair_button = tool_button(
            "repair", "Repair collection (rebuild it from its source files)"
        )
        coll_bar = QHBoxLayout()
        for b in (self.new_button, self.rename_button, self.repair_button, self.delete_button):
            coll_bar.addWidget(b)
        coll_bar.addStretch(1)

        self.sample_banner = QFrame()
        self.sample_banner.setObjectName("sampleBanner")
        banner_text = QLabel(
            "New here? Load a small sample collection of open-licence papers and ask a "
            "question within a minute."
        )
        banner_text.setWordWrap(True)
        self.sample_button = QPushButton("Load sample collection")
        banner_layout = QVBoxLayout(self.sample_banner)
        banner_layout.addWidget(banner_text)
        banner_layout.addWidget(self.sample_button)
        self.sample_banner.setVisible(
            offer_sample and not list_collections() and bool(sample_files())
        )

        self.docs_title = QLabel("Documents")
        self.docs_title.setObjectName("sectionTitle")
        self.table = DocumentsTable()

        self.add_files_button = QPushButton(icon("add-file"), "Add files…")
        self.add_folder_button = QPushButton(icon("add-folder"), "Add folder…")
        self.remove_button = QPushButton(icon("remove"), "Remove")
        self.remove_button.setToolTip("Remove the selected documents from the collection")
        docs_bar = QHBoxLayout()
        docs_bar.addWidget(self.add_files_button)
        docs_bar.addWidget(self.add_folder_button)
        docs_bar.addStretch(1)
        docs_bar.addWidget(self.remove_button)

        self.progress_frame = QFrame()
        self.progress_label = QLabel("")
        self.progress_label.setWordWrap(True)
        self.files_bar = QProgressBar()
        self.files_bar.setObjectName("filesProgress")
        self.files_bar.setFormat("%v / %m files")
        self.chunks_label = QLabel("")
        self.cancel_button = QPushButton(icon("cancel"), "Cancel")
        pl = QVBoxLayout(self.progress_frame)
        pl.setContentsMargins(0, 4, 0, 0)
        pl.addWidget(self.progress_label)
        row = QHBoxLayout()
        row.addWidget(self.files_bar, 1)
        row.addWidget(self.cancel_button)
        pl.addLayout(row)
        pl.addWidget(self.chunks_label)
        self.progress_frame.setVisible(False)
        # The last ingest's summary stays until dismissed: a status-bar message is gone before
        # a user who looked away has read which files failed.
        self.summary_frame = QFrame()
        self.summary_frame.setObjectName("ingestSummary")
        self.summary_label = QLabel("")
        self.summary_label.setObjectName("ingestSummaryText")
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary_close_button = QToolButton()
        self.summary_close_button.setIcon(
            self.style().standardIcon(QStyle.StandardPixmap.SP_TitleBarCloseButton)
        )
        self.summary_close_button.setToolTip("Dismiss")
        self.summary_close_button.setAccessibleName("Dismiss the ingest summary")
        sl = QHBoxLayout(self.summary_frame)
        sl.setContentsMargins(6, 4, 2, 4)
        sl.addWidget(self.summary_label, 1)
        sl.addWidget(self.summary_close_button, 0, Qt.AlignmentFlag.AlignTop)
        self.summary_frame.setVisible(False)
        self.drop_hint = QLabel("Drop files or folders here to add them.")
        self.drop_hint.setStyleSheet("color:#667")
        # The folders (and files) the collection follows, each with its last sync or why it
        # cannot be reached.
        self.roots_label = QLabel("")
        self.roots_label.setObjectName("watchedRoots")
        self.roots_label.setWordWrap(True)
        self.roots_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.roots_label.setVisible(False)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(title)
        layout.addWidget(self.collections)
        layout.addLayout(coll_bar)
        layout.addWidget(self.sample_banner)
        layout.addWidget(self.docs_title)
        layout.addWidget(self.table, 1)
        layout.addLayout(docs_bar)
        layout.addWidget(self.roots_label)
        layout.addWidget(self.drop_hint)
        layout.addWidget(self.progress_frame)
        layout.addWidget(self.summary_frame)
        self._connect_signals()
        self._update_buttons()

    def _connect_signals(self) -> None:
        self.host.documents_changed.connect(self.on_documents_changed)
        self.collections.currentRowChanged.connect(self._on_row_changed)
        self.new_button.clicked.connect(self.on_new_clicked)
        self.rename_button.clicked.connect(self.on_rename_clicked)
        self.delete_button.clicked.connect(self.on_delete_clicked)
        self.repair_button.clicked.connect(self.on_repair_clicked)
        self.sample_button.clicked.connect(self.on_sample_clicked)
        self.add_files_button.clicked.connect(self.on_add_files_clicked)
        self.add_folder_button.clicked.connect(self.on_add_folder_clicked)
        self.remove_button.clicked.connect(self.on_remove_clicked)
        self.cancel_button.clicked.connect(self.cancel_ingest)
        self.summary_close_button.clicked.connect(self.on_summary_closed)
        self.table.cellDoubleClicked.connect(self.on_row_double_clicked)
        self.table.itemSelectionChanged.connect(self._update_buttons)

    # ----- collections ---------------------------------------------------------------------

    def refresh_collections(self, select: str | None = None) -> None:
        """Re-read the collections (listed by display name); select ``select`` (a folder or
        display name; default: keep the current one)."""
        self._names = list_names()
        target = select if select is not None else self.current
        self.collections.blockSignals(True)
        self.collections.clear()
        for entry in self._names:
            self.collections.addItem(entry.display)
            item = self.collections.item(self.collections.count() - 1)
            item.setData(Qt.ItemDataRole.UserRole, entry.folder)
            if entry.display != entry.folder:
                item.setToolTip(f"{entry.display}\nfolder: {entry.folder}")
        row = self._row_of(target)
        if row is not None:
            self.collections.setCurrentRow(row)
        elif self._names:
            self.collections.setCurrentRow(0)
        # Signals stay blocked until the row is set: _set_current below reads the collection
        # once (a row-change signal would read it twice, and report a damaged one twice).
        self.collections.blockSignals(False)
        current = self.collections.currentRow()
        self._set_current(self._names[current].folder if 0 <= current < len(self._names) else "")
        if self._names:
            self.sample_banner.setVisible(False)

    def _row_of(self, name: str) -> int | None:
        """Row of the collection with this folder name, else with this display name."""
        folders = [entry.folder for entry in self._names]
        if name in folders:
            return folders.index(name)
        displays = [entry.display for entry in self._names]
        return displays.index(name) if name in displays else None

    def display_name(self, folder: str | None = None) -> str:
        """The display name of a collection (default: the current one)."""
        folder = self.current if folder is None else folder
        for entry in self._names:
            if entry.folder == folder:
                return entry.display
        return folder

    def _set_current(self, name: str) -> None:
        changed = name != self.current
        self.current = name
        shown = self.display_name(name)
        self.docs_title.setText(f"Documents in “{shown}”" if name else "Documents")
        if changed:
            self.rows = []
            self._fill_table()
            self.roots = []
            self.sync_note = ""
            self.show_roots()
            self.collection_changed.emit(name)
        if name:
            self.reload_documents()
        self._update_buttons()

    @Slot(int)
    def _on_row_changed(self, row: int) -> None:
        if 0 <= row < len(self._names):
            self.on_collection_clicked(self._names[row].folder)

    def on_collection_clicked(self, name: str) -> None:
        """Switch to a collection (its folder or display name)."""
        row = self._row_of(name)
        if row is not None:
            self._set_current(self._names[row].folder)

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
        """Confirm and delete the current collection."""
        if self.current and self.confirm(
            "Delete collection",
            f"Delete the collection “{self.display_name()}” and its index? "
            "Your files are not touched.",
        ):
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

        task = self.host.query("list documents", name, _document_rows)
        task.succeeded.connect(lambda rows: self._on_rows(name, rows))
        task.failed.connect(
            lambda exc: show_error(
                self.window(), exc, context=f"Reading {name!r}", repair=self.repair
            )
        )
        return task

    def _on_rows(self, name: str, rows: list[DocumentRow]) -> None:
        if name != self.current:
            return
        self.rows = rows
        self._fill_table()
        self.reload_roots()

    # ----- folders followed ----------------------------------------------------------------

    def reload_roots(self) -> Task[list[WatchedRoot]] | None:
        """Read the folders and files the current collection was built from, and whether each
        can be reached now (queued behind any write); :attr:`roots_changed` carries them."""
        name = self.current
        if not name:
            return None
        task = self.host.query("list roots", name, _watched_roots)
        task.succeeded.connect(lambda roots: self._on_roots(name, roots))
        # The documents were just read from the same collection; a failure here is logged.
        task.failed.connect(lambda exc: log.warning("cannot read the roots of %s: %s", name, exc))
        return task

    def _on_roots(self, name: str, roots: list[WatchedRoot]) -> None:
        if name != self.current:
            return
        self.roots = roots
        self.show_roots()
        self.roots_changed.emit(name, roots)

    def show_roots(self) -> None:
        """List the folders followed under the documents: watched or not (the setting), each
        with its last sync time or why it cannot be reached; then the last sync's outcome."""
        if not self.roots:
            self.roots_label.setText("")
            self.roots_label.setVisible(False)
            return
        watching = self._settings().watch.enabled
        lines = [root_line(r) for r in self.roots]
        shown = lines[:MAX_LISTED_ROOTS]
        if len(lines) > len(shown):
            shown.append(f"and {len(lines) - len(shown)} more")
        if self.sync_note:
            shown.append(self.sync_note)
        title = WATCHING_TITLE if watching else NOT_WATCHING_TITLE
        self.roots_label.setText("\n".join([title, *shown]))
        self.roots_label.setToolTip("\n".join(lines))
        self.roots_label.setVisible(True)

    def roots_text(self) -> list[str]:
        """The folders list's lines as shown (title first)."""
        text = self.roots_label.text()
        return text.split("\n") if text else []

    def sync(self, changed: Iterable[Path] | None, name: str | None = None) -> Task[SyncReport]:
        """Bring collection ``name`` (default: the current one) in step with its folders, on
        the single writer like an ingest: added and changed files among ``changed`` are
        indexed, deleted ones removed; ``None`` rescans every folder. A folder that cannot be
        reached is reported and nothing under it removed. A failure is shown under the
        folders, not in a dialog (syncs run unasked)."""
        name = self.current if name is None else name
        paths = None if changed is None else sorted({Path(p) for p in changed})
        ingest_settings = self._settings().ingest
        passwords = {Path(source): pw for source, pw in self.passwords.items()}

        def op(col: Collection, ctx: TaskContext) -> SyncReport:
            return sync_changes(
                col,
                paths,
                progress=ctx.progress,
                cancel=ctx.cancel,
                passwords=passwords,
                follow_external_links=ingest_settings.follow_external_links,
                max_chunks_per_file=ingest_settings.max_chunks_per_file,
            )

        task = self._write(
            self.host.collection_op("sync folders", name, op),
            context=f"Syncing “{self.display_name(name)}” with its folders",
            report_errors=False,
        )
        self.sync_task = task
        self._syncs += 1
        task.finished.connect(self._on_sync_finished)
        task.succeeded.connect(lambda report: self._on_synced(name, report))
        task.failed.connect(lambda exc: self._on_sync_failed(name, exc))
        return task

    def _on_sync_finished(self) -> None:
        self._syncs -= 1

    def _on_synced(self, name: str, report: SyncReport) -> None:
        if name == self.current:
            self.sync_note = f"Last sync {sync_time(report.finished)}: {report.summary()}"
            self.show_roots()
        self.synced.emit(name, report)

    def _on_sync_failed(self, name: str, exc: BaseException) -> None:
        log.warning("syncing %s with its folders failed: %s", name, exc)
        if name == self.current:
            self.sync_note = f"Last sync failed: {exc}"
            self.show_roots()

    def _fill_table(self) -> None:
        self.table.set_rows(self.rows)
        self._update_buttons()

    def table_rows(self) -> list[tuple[str, str, str, str]]:
        """The documents table's cell texts (file, status, chunks, reason)."""
        return self.table.cell_texts()

    @Slot(str)
    def on_documents_changed(self, name: str) -> None:
        """A write to collection ``name`` ended: refresh its table and tell the window."""
        if name == self.current:
            self.reload_documents()
        self.documents_changed.emit(name)

    def ingest(
        self, paths: Sequence[Path], *, passwords: dict[Path, str] | None = None
    ) -> Task[IngestReport] | None:
        """Ingest files and folders into the current collection in the background.

        Creates a collection named ``default`` when none is selected. Encrypted PDFs found in
        the run are asked for their password afterwards and ingested again with it.
        """
        if not paths:
            return None
        name = self.current or "default"
        if not self.current:
            self.create_collection(name)
        paths = [Path(p) for p in paths]
        pw = dict(passwords or {})
        ingest_settings = self._settings().ingest

        def op(col: Collection, ctx: TaskContext) -> IngestReport:
            return ingest_paths(
                col,
                paths,
                passwords=pw,
                progress=ctx.progress,
                cancel=ctx.cancel,
                follow_external_links=ingest_settings.follow_external_links,
                max_chunks_per_file=ingest_settings.max_chunks_per_file,
            )

        task = self._write(
            self.host.collection_op("ingest", name, op, create=True),
            context=f"Adding files to “{self.display_name(name)}”",
        )
        self.ingest_task = task
        self._track_progress(task, f"Adding {len(paths)} item(s) to “{self.display_name(name)}”…")
        task.succeeded.connect(lambda report: self._on_ingest_done(name, report, pw))
        task.cancelled.connect(lambda: self._on_ingest_cancelled(name))
        task.finished.connect(lambda: self._on_ingest_finished(task))
        return task

    def _track_progress(self, task: Task[IngestReport] | Task[RepairReport], label: str) -> None:
        """Show ``task``'s files and chunks in the progress area (after a delay) until it ends."""
        self._progress_task = task
        self._chunks_done = 0
        self.summary_frame.setVisible(False)  # the new run's summary replaces it when done
        self.progress_label.setText(label)
        self.files_bar.setRange(0, 0)
        self.chunks_label.setText("")
        self.cancel_button.setEnabled(True)
        QTimer.singleShot(PROGRESS_DELAY_MS, lambda: self._show_progress(task))
        task.progressed.connect(self.on_ingest_progress)
        task.finished.connect(lambda: self._on_progress_finished(task))

    def _show_progress(self, task: Task[IngestReport] | Task[RepairReport]) -> None:
        if task.is_running and task is self._progress_task:
            self.progress_frame.setVisible(True)

    def _on_progress_finished(self, task: Task[IngestReport] | Task[RepairReport]) -> None:
        if task is self._progress_task:
            self.progress_frame.setVisible(False)
            self._progress_task = None

    @Slot(object)
    def on_ingest_progress(self, p: Progress) -> None:
        """Update the files bar (files) and the chunks line (chunks embedded)."""
        if p.unit == "files":
            self.files_bar.setRange(0, p.total or 0)
            self.files_bar.setValue(p.done)
            if p.message:
                self.progress_label.setText(f"Reading {p.message}")
        elif p.unit == "chunks":
            self._chunks_done = p.done
            self.chunks_label.setText(f"{p.done:,} chunks embedded")

    @Slot()
    def cancel_ingest(self) -> None:
        """Stop the running ingest (files finished so far stay indexed) or repair (the
        collection is left as it was)."""
        task = self._progress_task
        if task is not None and task.is_running:
            task.cancel()
            self.cancel_button.setEnabled(False)
            self.progress_label.setText("Cancelling…")

    def _on_ingest_cancelled(self, name: str) -> None:
        self.progress_label.setText("Cancelled; files finished before stay indexed.")
        self.show_summary(
            f"Adding files to “{self.display_name(name)}” was cancelled; files finished before "
            "stay indexed."
        )
        self.on_documents_changed(name)

    def _on_ingest_finished(self, task: Task[IngestReport]) -> None:
        # Files finished before the failure stay indexed; a damaged collection was already
        # reported (reading it again would report it twice).
        if task.outcome == "failed" and self.current and not isinstance(task.error, IndexCorrupt):
            self.reload_documents()

    def _on_ingest_done(self, name: str, report: IngestReport, given: dict[Path, str]) -> None:
        # The host's documents_changed notice (connected first) has refreshed the table.
        for path, password in given.items():
            self.passwords[str(Path(path).expanduser().resolve())] = password
        self.ingest_finished.emit(report)
        self.show_summary(ingest_summary(self.display_name(name), report))
        encrypted = [Path(o.source) for o in report.outcomes if o.status is Outcome.ENCRYPTED]
        if encrypted and name == self.current:
            QTimer.singleShot(0, lambda: self.request_passwords(encrypted, given))

    def show_summary(self, text: str, *, details: str = "") -> None:
        """Show ``text`` above the progress area until the user dismisses it (or the next
        ingest or repair starts); ``details`` is its tooltip."""
        self.summary_label.setText(text)
        self.summary_label.setToolTip(details)
        self.summary_frame.setVisible(True)

    @Slot()
    def on_summary_closed(self) -> None:
        """Dismiss the ingest summary."""
        self.summary_frame.setVisible(False)

    def request_passwords(
        self, paths: Sequence[Path], tried: dict[Path, str] | None = None
    ) -> list[PasswordQuestion]:
        """Ask each encrypted PDF's password by :attr:`password_requested`.

        When every question is answered or cancelled, the files given a password are ingested
        again with it (a wrong one comes back encrypted and is asked again, ``wrong=True``).

        Returns:
            The questions, in the order of ``paths``.
        """
        tried_keys = {Path(p).resolve() for p in (tried or {})}
        questions = [
            PasswordQuestion(Path(p), wrong=Path(p).resolve() in tried_keys, parent=self)
            for p in paths
        ]
        for q in questions:
            q.completed.connect(lambda: self._on_password_answered(questions))
        for q in questions:
            self.password_requested.emit(q)
        return questions

    def _on_password_answered(self, questions: Sequence[PasswordQuestion]) -> None:
        if not all(q.is_done for q in questions) or any(q.parent() is None for q in questions):
            return
        passwords = {q.path: q.answer_text for q in questions if q.answer_text}
        for q in questions:
            q.setParent(None)  # answered: the round is over, never ingest twice
            q.deleteLater()
        if passwords:
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
        if not name or name in self._repairing:
            return None
        self._repairing.add(name)
        settings = self._settings()
        passwords = {Path(source): pw for source, pw in self.passwords.items()}
        shown = self.display_name(name)

        def work(ctx: TaskContext) -> RepairReport:
            return repair_collection(
                name,
                settings=settings,
                passwords=passwords,
                progress=ctx.progress,
                cancel=ctx.cancel,
            )

        # A folder op: the host closes its open collection first (the repair swaps the folder).
        task = self._write(
            self.host.folder_op("repair collection", work), context=f"Repairing “{shown}”"
        )
        self.repair_task = task
        self._track_progress(task, f"Rebuilding “{shown}” from its source files…")
        task.succeeded.connect(lambda report: self._on_repair_done(name, report))
        task.cancelled.connect(
            lambda: self.show_summary(
                f"Repairing “{self.display_name(name)}” was cancelled; the collection was left "
                "as it was."
            )
        )
        task.finished.connect(lambda: self._repairing.discard(name))
        return task

    def _on_repair_done(self, name: str, report: RepairReport) -> None:
        self.on_documents_changed(name)  # a folder op: the host sends no change notice
        self.show_summary(
            repair_summary(self.display_name(name), report), details="\n".join(report.missing)
        )
        outcomes = report.ingest.outcomes
        encrypted = [Path(o.source) for o in outcomes if o.status is Outcome.ENCRYPTED]
        if encrypted and name == self.current:
            QTimer.singleShot(0, lambda: self.request_passwords(encrypted))

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

        def op(col: Collection, ctx: TaskContext) -> int:
            return sum(1 for s in targets if col.remove(s))

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
        files, _ = QFileDialog.getOpenFileNames(
            self,
            "Add documents",
            str(Path.home()),
            "Documents (*.pdf *.docx *.pptx *.epub *.md *.markdown *.txt);;All files (*)",
        )
        self.ingest([Path(f) for f in files])

    @Slot()
    def on_add_folder_clicked(self) -> None:
        """Pick a folder with a dialog and ingest it (recursively)."""
        folder = QFileDialog.getExistingDirectory(
            self, "Add a folder of documents", str(Path.home())
        )
        if folder:
            self.ingest([Path(folder)])

    # ----- drag and drop -------------------------------------------------------------------

    def dragEnterEvent(self, e: QDragEnterEvent) -> None:  # noqa: N802 (Qt override)
        if e.mimeData().hasUrls() and any(u.isLocalFile() for u in e.mimeData().urls()):
            e.acceptProposedAction()
        else:
            e.ignore()

    def dropEvent(self, e: QDropEvent) -> None:  # noqa: N802 (Qt override)
        paths = [Path(u.toLocalFile()) for u in e.mimeData().urls() if u.isLocalFile()]
        if paths:
            e.acceptProposedAction()
            self.ingest(paths)

    # ----- plumbing ------------------------------------------------------------------------

    def _write(self, task: Task[T], *, context: str, report_errors: bool = True) -> Task[T]:
        """Count ``task`` (a write just submitted to the host) as busy until it finishes; a
        failure is shown in a dialog unless ``report_errors`` is False."""
        self._writes += 1
        if self._writes == 1:
            self.busy_changed.emit(True)
        if report_errors:
            task.failed.connect(
                lambda exc: show_error(self.window(), exc, context=context, repair=self.repair)
            )
        task.finished.connect(self._on_write_finished)
        self._update_buttons()
        return task

    def _on_write_finished(self) -> None:
        self._writes -= 1
        if self._writes == 0:
            self.busy_changed.emit(False)
        self._update_buttons()

    @property
    def busy(self) -> bool:
        """True while a write (create, ingest, remove, rename, delete, sync) is queued or
        running."""
        return self._writes > 0

    @property
    def busy_with_user_work(self) -> bool:
        """True while a write the user asked for is queued or running (a sync with the
        folders, run unasked, stops at quit without asking: it catches up next time)."""
        return self._writes > self._syncs

    def _update_buttons(self) -> None:
        has = bool(self.current)
        self.rename_button.setEnabled(has and not self.busy)
        self.delete_button.setEnabled(has and not self.busy)
        self.repair_button.setEnabled(has and not self.busy)
        self.remove_button.setEnabled(has and bool(self.table.selectedIndexes()))


def ingest_summary(name: str, report: IngestReport) -> str:
    """One paragraph on an ingest run: files per outcome, new chunks, and where reasons are.

    Example: "Added to “papers”: 3 indexed, 1 encrypted; 412 new chunks. Files not indexed
    are listed in red with the reason."
    """
    counts = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in sorted(report.counts.items()) if v)
    text = f"Added to “{name}”: {counts or 'nothing new'}; {report.chunks_indexed:,} new chunks."
    not_indexed = {Outcome.FAILED, Outcome.ENCRYPTED, Outcome.NEEDS_OCR, Outcome.EMPTY}
    if any(o.status in not_indexed for o in report.outcomes):
        text += " Files not indexed are listed in red with the reason."
    return text


def repair_summary(name: str, report: RepairReport) -> str:
    """One paragraph on a repair: files per outcome, chunks, and the files that were lost.

    Example: "Rebuilt “papers” from its source files: 2 indexed; 31 chunks. 1 file is no
    longer on disk, so it could not be read again and is not in the collection: old.md. Add it
    again from where it is now."
    """
    ingest = report.ingest
    counts = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in sorted(ingest.counts.items()) if v)
    text = (
        f"Rebuilt “{name}” from its source files: {counts or 'no files'}; "
        f"{ingest.chunks_indexed:,} chunks."
    )
    n = len(report.missing)
    if n:
        names = ", ".join(Path(s).name for s in report.missing[:MAX_LISTED_MISSING])
        more = f" and {n - MAX_LISTED_MISSING} more" if n > MAX_LISTED_MISSING else ""
        one = n == 1
        text += (
            f" {n} {'file is' if one else 'files are'} no longer on disk, so "
            f"{'it' if one else 'they'} could not be read again and "
            f"{'is' if one else 'are'} not in the collection: {names}{more}. Add "
            f"{'it' if one else 'them'} again from where {'it is' if one else 'they are'} now."
        )
    if not report.catalog_complete:
        text += (
            " Part of the damaged catalog could not be read, so files it named may be missing: "
            "add them again."
        )
    if report.not_files:
        text += (
            f" {report.not_files} pre-parsed documents (a BEIR corpus) are no files and were not "
            "rebuilt."
        )
    not_indexed = {Outcome.FAILED, Outcome.ENCRYPTED, Outcome.NEEDS_OCR, Outcome.EMPTY}
    if any(o.status in not_indexed for o in ingest.outcomes):
        text += " Files not indexed are listed in red with the reason."
    return text


def _create(col: Collection, ctx: TaskContext) -> None:
    """Opening with ``create=True`` made the collection; nothing more to do."""


def _document_rows(col: Collection, ctx: TaskContext) -> list[DocumentRow]:
    return document_rows(col.documents())


def _watched_roots(col: Collection, ctx: TaskContext) -> list[WatchedRoot]:
    return [WatchedRoot(r, unavailable_reason(r) or "") for r in roots_of(col)]
