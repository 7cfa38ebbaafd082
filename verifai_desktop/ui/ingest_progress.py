"""The library panel's progress area: the running ingest or repair with its files, chunks and a
Cancel button (:class:`ProgressFrame`), and the last run's summary, which stays until dismissed
(:class:`SummaryFrame`, worded by :func:`ingest_summary` and :func:`repair_summary`).

The runs are :class:`~verifai_desktop.ui.library_runs.CollectionRuns`; the panel showing both
frames is :class:`~verifai_desktop.ui.library_panel.LibraryPanel`.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from verifai_desktop.domain import Progress
from verifai_desktop.store.repair import RepairReport
from verifai_desktop.store.writer import IngestReport, Outcome
from verifai_desktop.ui.elided_label import ElidedLabel, keep_column_width
from verifai_desktop.ui.resources import icon
from verifai_desktop.ui.tasks import Task

PROGRESS_DELAY_MS = 600  # show progress only for work that is not instant (STYLE.md)
MAX_LISTED_MISSING = 8  # file names listed in a repair summary; the tooltip has them all
NOT_INDEXED = frozenset({Outcome.FAILED, Outcome.ENCRYPTED, Outcome.NEEDS_OCR, Outcome.EMPTY})
"""Outcomes of files that a run did not index; the documents table lists them with a reason."""
NOT_INDEXED_NOTE = " Files not indexed are listed in red with the reason."


class ProgressFrame(QFrame):
    """The running ingest or repair, named with its collection, what it is reading, its files
    bar, the chunks embedded so far and Cancel; shown only once the run has taken
    :data:`PROGRESS_DELAY_MS`, and only while its collection is the one on show
    (:meth:`show_collection`): another collection shows none of it (issue 42).

    Attributes:
        task: the ingest or repair whose progress is shown (and Cancel stops), or None.
        collection: the collection it runs on (folder name).
        shown: the collection on show.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("runProgress")
        self.task: Task[IngestReport] | Task[RepairReport] | None = None
        self.collection = ""
        self.shown = ""
        self._delayed = False  # the run has taken PROGRESS_DELAY_MS
        # One line each, cut (a file name keeps its extension): a long name or collection
        # never widens the library column.
        self.title = ElidedLabel()  # what runs, naming its collection
        self.title.setObjectName("runTitle")
        self.title.setStyleSheet("font-weight:600")
        self.label = ElidedLabel(mode=Qt.TextElideMode.ElideMiddle)
        self.files_bar = QProgressBar()
        self.files_bar.setObjectName("filesProgress")
        self.files_bar.setFormat("%v / %m files")
        self.chunks_label = ElidedLabel()
        self.cancel_button = QPushButton(icon("cancel"), "Cancel")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.label)
        row = QHBoxLayout()
        row.addWidget(self.files_bar, 1)
        row.addWidget(self.cancel_button)
        layout.addLayout(row)
        layout.addWidget(self.chunks_label)
        self.setVisible(False)
        self.cancel_button.clicked.connect(self.cancel)

    def track(
        self,
        task: Task[IngestReport] | Task[RepairReport],
        label: str,
        *,
        collection: str = "",
        stop_tip: str = "",
    ) -> None:
        """Show ``task``'s progress under ``label`` (what it does, naming its collection)
        after the delay, while ``collection`` is on show, until it ends; ``stop_tip`` is
        Cancel's tooltip (what it stops, in which collection)."""
        self.task = task
        self.collection = collection
        self._delayed = False
        self.title.setText(label)
        self.label.setText("")
        self.label.setVisible(False)
        self.files_bar.setRange(0, 0)
        self.chunks_label.setText("")
        self.cancel_button.setEnabled(True)
        self.cancel_button.setToolTip(stop_tip)
        self.cancel_button.setAccessibleName(stop_tip or "Cancel")
        QTimer.singleShot(PROGRESS_DELAY_MS, lambda: self._after_delay(task))
        task.finished.connect(lambda: self._on_finished(task))

    def show_collection(self, name: str) -> None:
        """Collection ``name`` is on show: the run is shown only if it runs on it."""
        self.shown = name
        self._update_visible()

    def _update_visible(self) -> None:
        task = self.task
        running = task is not None and task.is_running and self._delayed
        self.setVisible(running and self.collection == self.shown)

    def _after_delay(self, task: Task[IngestReport] | Task[RepairReport]) -> None:
        if task is self.task:
            self._delayed = True
            self._update_visible()

    def _on_finished(self, task: Task[IngestReport] | Task[RepairReport]) -> None:
        if task is self.task:
            self.task = None
            self._update_visible()

    def set_detail(self, text: str) -> None:
        """Show ``text`` (what the run is doing now) under its title."""
        self.label.setText(text)
        self.label.setVisible(bool(text))

    def show_progress(self, p: Progress) -> None:
        """Update the files bar (files), the chunks line (chunks embedded) and, while a
        scanned page or an embedded image is recognised (OCR, unit ``pages`` or ``images``), the
        line above the bar."""
        if p.unit == "files":
            self.files_bar.setRange(0, p.total or 0)
            self.files_bar.setValue(p.done)
            if p.message:
                self.set_detail(f"Reading {p.message}")
        elif p.unit == "chunks":
            self.chunks_label.setText(f"{p.done:,} chunks embedded")
        elif p.unit == "pages":  # OCR: p.message is "file p. N", p.done the scans read so far
            self.set_detail(
                f"Recognising the text of {p.message} (scanned page {p.done + 1} of {p.total})"
            )
        elif p.unit == "images":  # OCR of a DOCX, PPTX or EPUB's images: p.message is "file"
            self.set_detail(f"Recognising the text of {p.message} image {p.done + 1} of {p.total}")

    @Slot()
    def cancel(self) -> None:
        """Stop the running ingest (files finished so far stay indexed) or repair (the
        collection is left as it was)."""
        task = self.task
        if task is not None and task.is_running:
            task.cancel()
            self.cancel_button.setEnabled(False)
            self.set_detail("Cancelling…")


class SummaryFrame(QFrame):
    """The last ingest's or repair's summary of each collection, kept until dismissed: a
    status-bar message is gone before a user who looked away has read which files failed.
    Only the summary of the collection on show is shown (:meth:`show_collection`)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ingestSummary")
        self.label = QLabel("")
        self.label.setObjectName("ingestSummaryText")
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        keep_column_width(self.label)
        self.close_button = QToolButton()
        self.close_button.setIcon(
            self.style().standardIcon(QStyle.StandardPixmap.SP_TitleBarCloseButton)
        )
        self.close_button.setToolTip("Dismiss")
        self.close_button.setAccessibleName("Dismiss the ingest summary")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 4, 2, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        self.setVisible(False)
        self.collection = ""  # the collection on show (folder name)
        self._summaries: dict[str, tuple[str, str]] = {}  # collection -> (text, details)
        self.close_button.clicked.connect(self.on_close_clicked)

    def show_summary(self, text: str, *, collection: str, details: str = "") -> None:
        """Keep ``text`` as the summary of ``collection`` until the user dismisses it, shown
        while that collection is; ``details`` is its tooltip."""
        self._summaries[collection] = (text, details)
        self._show()

    def forget(self, collection: str) -> None:
        """Drop ``collection``'s summary (a new run of it replaces it when done)."""
        self._summaries.pop(collection, None)
        self._show()

    def show_collection(self, collection: str) -> None:
        """Show ``collection``'s summary, if it has one, and no other."""
        self.collection = collection
        self._show()

    def _show(self) -> None:
        text, details = self._summaries.get(self.collection, ("", ""))
        self.label.setText(text)
        self.label.setToolTip(details)
        self.setVisible(bool(text))

    @Slot()
    def on_close_clicked(self) -> None:
        """Dismiss the summary."""
        self.forget(self.collection)


def _counts(report: IngestReport) -> str:
    """``"3 indexed, 1 encrypted"``: files per outcome, outcomes without files left out."""
    return ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in sorted(report.counts.items()) if v)


def _not_indexed_note(report: IngestReport) -> str:
    """:data:`NOT_INDEXED_NOTE` when the run left files unindexed, else ``""``."""
    return NOT_INDEXED_NOTE if any(o.status in NOT_INDEXED for o in report.outcomes) else ""


def ingest_summary(name: str, report: IngestReport) -> str:
    """One paragraph on an ingest run: files per outcome, new chunks, and where reasons are.

    Example: "Added to “papers”: 3 indexed, 1 encrypted; 412 new chunks. Files not indexed
    are listed in red with the reason."
    """
    counts = _counts(report)
    text = f"Added to “{name}”: {counts or 'nothing new'}; {report.chunks_indexed:,} new chunks."
    return text + _not_indexed_note(report)


def repair_summary(name: str, report: RepairReport) -> str:
    """One paragraph on a repair: files per outcome, chunks, and the files that were lost.

    Example: "Rebuilt “papers” from its source files: 2 indexed; 31 chunks. 1 file is no
    longer on disk, so it could not be read again and is not in the collection: old.md. Add it
    again from where it is now."
    """
    ingest = report.ingest
    text = (
        f"Rebuilt “{name}” from its source files: {_counts(ingest) or 'no files'}; "
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
    return text + _not_indexed_note(ingest)
