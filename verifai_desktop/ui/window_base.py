"""The main window's widgets, menus and shared state, which its parts build on.

:class:`WindowBase` lays the window out: library on the left; the question box (with its two
modes, :data:`MODES`), the verified answer and its notes in the middle; sources, the document
view and the history of past questions on the right; model status in the status bar. It holds
the state every part reads (the answer on show, its claim check, its place in the history) and
renders it. The parts add behaviour: :class:`~verifai_desktop.ui.asking.Asking` runs questions
and claim checks, :class:`~verifai_desktop.ui.exporting.Exporting` copies and saves answers
and audit records, and :class:`~verifai_desktop.ui.main_window.MainWindow` wires the signals
and follows the library, the history and the settings.

No model or index library is imported here, so the window opens at once.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QButtonGroup,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from verifai_desktop.answer_files import EXPORT_FORMATS
from verifai_desktop.domain import Answer, CheckResult
from verifai_desktop.errors import SettingsError
from verifai_desktop.settings import Settings, load_settings
from verifai_desktop.store.history import Feedback
from verifai_desktop.ui.answer_view import AnswerView
from verifai_desktop.ui.document_view import DocumentView
from verifai_desktop.ui.elided_label import ElidedLabel
from verifai_desktop.ui.errors import show_error
from verifai_desktop.ui.help_menu import HelpMenu
from verifai_desktop.ui.history_panel import HistoryPanel
from verifai_desktop.ui.legend import LegendView
from verifai_desktop.ui.library_panel import LibraryPanel
from verifai_desktop.ui.models_dialog import ModelsDialog
from verifai_desktop.ui.operations import CollectionHost
from verifai_desktop.ui.reading_layout import DEFAULT_WINDOW, ReadingLayout, panel_widths
from verifai_desktop.ui.resources import icon
from verifai_desktop.ui.sources_panel import SourcesPanel
from verifai_desktop.ui.tasks import Task, TaskRunner
from verifai_desktop.ui.watching import FolderFollower

if TYPE_CHECKING:
    from verifai_desktop.pipeline import AskSession

log = logging.getLogger(__name__)

ASK_MODE = "ask"
CHECK_MODE = "check"
MODES = (
    (
        ASK_MODE,
        "&Ask a question",
        "Get a verified answer, every sentence checked against its sources",
    ),
    (
        CHECK_MODE,
        "C&heck a claim",
        "Type a statement and see what each of your documents says about it",
    ),
)
BIBTEX_TIP = (
    "Copy the BibTeX of the entries the shown answer cites (sources ingested from a .bib file "
    "or a Zotero library; a .bib file's entries as written there)"
)
AUDIT_TIP = (
    "Save the shown answer's or claim check's audit record: every verdict, every quoted span "
    "with its document's sha256 and offsets, the models and settings (JSON, with an HTML view)"
)
AUDIT_OFF_TIP = (
    "Only answers and claim checks kept in the history have an audit record: turn on “Keep "
    "every verified answer” in Settings"
)
WARNING_STYLE = "color:#8a4b00;background:#fff4e0;padding:4px;border-radius:3px"
BUSY_STYLE = "color:#334;background:#eef2f8;padding:4px;border-radius:3px"


class WindowBase(QMainWindow):
    """The VerifAI Desktop window's widgets, actions and shared state; built with the
    arguments of :class:`~verifai_desktop.ui.main_window.MainWindow`."""

    def __init__(
        self, settings: Settings | None, offer_sample: bool, parent: QWidget | None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("VerifAI Desktop")
        self.setWindowIcon(icon("app"))
        self.setAcceptDrops(True)  # files dropped anywhere go to the library
        self.settings = settings if settings is not None else self._load_settings()
        self.runner = TaskRunner(self)
        # State, assigned on the UI thread only.
        self.answer: Answer | None = None
        self.ask_task: Task[Answer] | None = None
        self.check_task: Task[CheckResult] | None = None
        self.check_result: CheckResult | None = None
        # The generated text of a refused answer was on show when one of its sentences was
        # checked; back from the check, it is shown again.
        self._generated_shown = False
        self._session: AskSession | None = None
        self._models_ready = False  # set once a question was answered
        # (collection folder, answer id) of the shown answer in its history; None when the
        # answer on show is not kept (history off, or deleted since).
        self.history_ref: tuple[str, int] | None = None
        # The same for the claim check on show.
        self.check_ref: tuple[str, int] | None = None
        self._marks: tuple[Feedback, ...] = ()  # the reader's marks on the shown answer
        self.host = CollectionHost(self.runner, lambda: self.settings, self)

        self.library = LibraryPanel(
            self.runner, lambda: self.settings, host=self.host, offer_sample=offer_sample
        )
        self.setCentralWidget(self._build_panels())
        self._build_status_bar()
        self.models_dialog: ModelsDialog | None = None
        self._build_actions()

    # ----- construction --------------------------------------------------------------------

    def _load_settings(self) -> Settings:
        try:
            return load_settings()
        except SettingsError as exc:
            show_error(self, exc, context="Reading settings (defaults are used)")
            return Settings()

    def _build_question_box(self) -> tuple[QHBoxLayout, QHBoxLayout]:
        """The row of mode tabs and the question box's row, with its run and stop buttons."""
        self.question = QLineEdit()
        self.question.setObjectName("questionBox")
        self.question.setPlaceholderText("Ask a question about your documents…")
        self.question.setClearButtonEnabled(True)
        # Two modes, as tabs over the question box (a row of their own: the middle panel keeps
        # its narrow minimum width).
        self.mode_group = QButtonGroup(self)
        self.mode_group.setExclusive(True)
        self.mode_buttons: dict[str, QToolButton] = {}
        mode_row = QHBoxLayout()
        mode_row.setSpacing(2)
        for mode, text, tip in MODES:
            button = QToolButton()
            button.setObjectName("modeButton")
            button.setText(text)
            button.setToolTip(tip)
            button.setCheckable(True)
            button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
            self.mode_group.addButton(button)
            self.mode_buttons[mode] = button
            mode_row.addWidget(button)
        mode_row.addStretch(1)
        self.mode_buttons[ASK_MODE].setChecked(True)
        self.ask_button = QPushButton(icon("ask"), "Ask")
        self.ask_button.setObjectName("askButton")
        self.stop_button = QPushButton(icon("stop"), "Stop")
        self.stop_button.setEnabled(False)
        ask_row = QHBoxLayout()
        ask_row.addWidget(self.question, 1)
        ask_row.addWidget(self.ask_button)
        ask_row.addWidget(self.stop_button)
        return mode_row, ask_row

    def _build_middle(self) -> QWidget:
        """The middle panel: server warning, question box, answer, legend, answer actions."""
        mode_row, ask_row = self._build_question_box()
        self.answer_view = AnswerView()
        # Over a reopened answer: when it was verified and which documents changed since.
        self.reopened_note = QLabel("")
        self.reopened_note.setObjectName("reopenedNote")
        self.reopened_note.setWordWrap(True)
        self.reopened_note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.reopened_note.hide()
        # Under the question box while Ask waits for a job of another collection or mode (or
        # an index write): which collection is busy, doing what.
        self.busy_note = QLabel("")
        self.busy_note.setObjectName("busyNote")
        self.busy_note.setWordWrap(True)
        self.busy_note.setStyleSheet(BUSY_STYLE)
        self.busy_note.hide()
        # Passages leave the machine when the generation server is not local: said plainly
        # for as long as it is so.
        self.server_warning = QLabel("")
        self.server_warning.setObjectName("serverWarning")
        self.server_warning.setWordWrap(True)
        self.server_warning.setStyleSheet(WARNING_STYLE)
        self.server_warning.hide()
        self.legend = LegendView()
        self.answer_info = QLabel("")
        self.answer_info.setObjectName("answerInfo")
        self.answer_info.setWordWrap(True)
        self.answer_info.setStyleSheet("color:#556")
        self.copy_button = QPushButton(icon("copy"), "Copy")
        self.copy_button.setToolTip(
            "Copy the answer with labels, evidence and sources (Markdown and HTML)"
        )
        self.export_button = QPushButton(icon("export"), "Export…")
        self.export_button.setToolTip(
            "Save the answer as " + ", ".join(f.name for f in EXPORT_FORMATS.values())
        )
        for b in (self.copy_button, self.export_button):
            b.setEnabled(False)
        out_row = QHBoxLayout()
        out_row.addWidget(self.answer_info, 1)
        out_row.addWidget(self.copy_button)
        out_row.addWidget(self.export_button)
        middle = QWidget()
        ml = QVBoxLayout(middle)
        ml.setContentsMargins(6, 6, 6, 6)
        ml.addWidget(self.server_warning)
        ml.addLayout(mode_row)
        ml.addLayout(ask_row)
        ml.addWidget(self.busy_note)
        ml.addWidget(self.reopened_note)
        ml.addWidget(self.answer_view, 1)
        ml.addWidget(self.legend)
        ml.addLayout(out_row)
        return middle

    def _build_panels(self) -> QSplitter:
        """Library | middle panel | sources, document and history tabs."""
        middle = self._build_middle()
        self.sources = SourcesPanel()
        self.document_view = DocumentView()
        self.tabs = QTabWidget()
        self.tabs.addTab(self.sources, "Sources")
        self.tabs.addTab(self.document_view, "Document")
        self.history = HistoryPanel(self.runner)
        self.tabs.addTab(self.history, "History")
        self.history.keeping = self.settings.history.keep
        self.apply_citations()
        self.follower = FolderFollower(self.library, lambda: self.settings, self)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.library)
        splitter.addWidget(middle)
        splitter.addWidget(self.tabs)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 3)
        splitter.setStretchFactor(2, 3)
        splitter.setSizes(panel_widths(DEFAULT_WINDOW.width()))
        self.splitter = splitter
        return splitter

    def _build_status_bar(self) -> None:
        # Elided, never wider than the window leaves them: a long status does not move panels.
        self.model_status = ElidedLabel("Models: not loaded (they load on the first question)")
        self.model_status.setObjectName("modelStatus")
        # Prompt reading takes most of the wait for the first word on a CPU: shown as a bar.
        self.read_bar = QProgressBar()
        self.read_bar.setObjectName("readProgress")
        self.read_bar.setFormat("%v / %m tokens")
        self.read_bar.setMaximumWidth(220)
        self.read_bar.setToolTip("The generator reading the passages, in tokens")
        self.read_bar.hide()
        self.statusBar().addPermanentWidget(self.read_bar)
        self.statusBar().addPermanentWidget(self.model_status)
        # Where the models run; filled once they load, or by the Models dialog.
        self.device_status = QLabel("")
        self.device_status.setObjectName("deviceStatus")
        self.statusBar().addPermanentWidget(self.device_status)

    def _build_actions(self) -> None:
        tb = self.addToolBar("Main")
        tb.setObjectName("mainToolbar")
        tb.setMovable(False)
        self.new_action = QAction(icon("new-collection"), "New collection…", self)
        self.add_files_action = QAction(icon("add-file"), "Add files…", self)
        self.add_files_action.setShortcut(QKeySequence.StandardKey.Open)
        self.add_folder_action = QAction(icon("add-folder"), "Add folder…", self)
        self.copy_action = QAction(icon("copy"), "Copy answer", self)
        self.copy_action.setShortcut(QKeySequence("Ctrl+Shift+C"))
        self.copy_bibtex_action = QAction("Copy as BibTeX", self)
        self.copy_bibtex_action.setObjectName("copyBibtexAction")
        self.copy_bibtex_action.setToolTip(BIBTEX_TIP)
        self.copy_bibtex_action.setStatusTip(BIBTEX_TIP)
        self.export_action = QAction(icon("export"), "Export answer…", self)
        self.export_action.setShortcut(QKeySequence.StandardKey.Save)
        self.audit_action = QAction(icon("export"), "Export audit record…", self)
        self.audit_action.setObjectName("auditAction")
        self.audit_action.setToolTip(AUDIT_TIP)
        self.audit_action.setStatusTip(AUDIT_TIP)
        self.history_action = QAction("Past questions", self)
        self.history_action.setShortcut(QKeySequence("Ctrl+H"))
        self.history_action.setToolTip("Show the History tab: past questions of the collection")
        self.settings_action = QAction(icon("settings"), "Settings…", self)
        self.settings_action.setShortcut(QKeySequence.StandardKey.Preferences)
        self.models_action = QAction(icon("models"), "Models…", self)
        self.models_action.setToolTip(
            "Download, choose and delete models; see which device each one runs on"
        )
        self.quit_action = QAction("Quit", self)
        self.quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        for a in (self.new_action, self.add_files_action, self.add_folder_action):
            tb.addAction(a)
        tb.addSeparator()
        tb.addAction(self.copy_action)
        tb.addAction(self.export_action)
        tb.addSeparator()
        tb.addAction(self.settings_action)
        tb.addAction(self.models_action)
        file_menu = self.menuBar().addMenu("&File")
        for a in (
            self.new_action,
            self.add_files_action,
            self.add_folder_action,
            self.export_action,
            self.audit_action,
        ):
            file_menu.addAction(a)
        file_menu.addAction(self.history_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        edit_menu = self.menuBar().addMenu("&Edit")
        edit_menu.addAction(self.copy_action)
        edit_menu.addAction(self.copy_bibtex_action)
        edit_menu.addAction(self.settings_action)
        edit_menu.addAction(self.models_action)
        self.reading_layout = ReadingLayout(self, self.splitter, self.library)
        self.help_menu = HelpMenu(self)
        self.copy_action.setEnabled(False)
        self.copy_bibtex_action.setEnabled(False)
        self.export_action.setEnabled(False)
        self.audit_action.setEnabled(False)

    def apply_citations(self) -> None:
        """Name sources in the answer view and the sources panel as ``settings.citations``
        says (author-year where they have reference-manager entries, issue 43)."""
        self.answer_view.citations = self.settings.citations
        self.sources.citations = self.settings.citations

    # ----- the answer on show --------------------------------------------------------------

    def _show_answer(self, answer: Answer, *, show_generated: bool = False) -> None:
        """Render ``answer`` with its history id (feedback on or off) and its marks."""
        self.answer_view.show_answer(answer, show_generated=show_generated)
        ref = self.history_ref
        marks = self._marks if ref is not None else ()
        self.answer_view.set_history(ref[1] if ref is not None else None, marks)

    def _forget_history_ref(self) -> None:
        self.history_ref = None
        self.check_ref = None
        self._marks = ()
        self.reopened_note.hide()
        self.audit_action.setEnabled(False)

    def shown_ref(self) -> tuple[str, int] | None:
        """(collection folder, history id) of what is on show: the claim check when one is,
        else the answer; None when it is not kept."""
        return self.check_ref if self.check_result is not None else self.history_ref

    def _set_answer_actions(self, enabled: bool) -> None:
        """Copy, Export and the audit record act on the answer or claim check on show."""
        for w in (self.copy_button, self.export_button):
            w.setEnabled(enabled)
        self.copy_action.setEnabled(enabled)
        self.copy_bibtex_action.setEnabled(
            enabled and self.check_result is None and self.answer is not None
        )
        self.export_action.setEnabled(enabled)
        audit = enabled and self.shown_ref() is not None
        self.audit_action.setEnabled(audit)
        self.audit_action.setToolTip(AUDIT_TIP if audit or not enabled else AUDIT_OFF_TIP)
