"""The main window: library on the left, question and verified answer in the middle, sources,
the document view and the history of past questions on the right, model status in the status
bar.

The question box has two modes: Ask (a verified answer) and Check a claim (what every document
of the collection says about a statement, :meth:`AskSession.check_claim`); an answer sentence's
context menu checks that sentence the same way.

No model or index library is imported here: the pipeline is imported on the first question,
so the window opens at once and models load, with a visible status, on the first question.
Collection work goes through one :class:`~verifai_desktop.ui.operations.CollectionHost` (one
open collection, ops run on the worker, results on the UI thread); window state is assigned on
the UI thread only.

Each verified answer is kept in its collection's history (``settings.history.keep``) on the
worker that answered it; the History tab reopens past answers as they were verified, the
answer's context menu takes the reader's marks on its verdicts, and File → Export audit record
writes the shown answer's audit record. While ``settings.watch.enabled``, the open collection
follows its folders (:class:`~verifai_desktop.ui.watching.FolderFollower`).
"""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QMimeData, Qt, Slot
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDragEnterEvent,
    QDropEvent,
    QGuiApplication,
    QKeySequence,
)
from PySide6.QtWidgets import (
    QAbstractButton,
    QButtonGroup,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from verifai_desktop.domain import Answer, Evidence, Progress
from verifai_desktop.errors import Cancelled, SettingsError, VerifaiError
from verifai_desktop.generate.openai_server import leaves_machine_warning
from verifai_desktop.hardware import Hardware
from verifai_desktop.serialize import (
    CHECK_VERDICT_TEXT,
    EXPORT_FORMATS,
    NOT_FOUND_TEXT,
    UNSUPPORTED_TEXT,
    answer_to_html,
    answer_to_markdown,
    format_for_path,
    write_answer,
)
from verifai_desktop.settings import Settings, load_settings, save_settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.history import Feedback, keep_answer
from verifai_desktop.ui.answer_view import (
    ANSWER_HINT,
    CHECK_HINT,
    AnswerView,
    LegendView,
    refused_by_evidence,
)
from verifai_desktop.ui.document_view import DocumentView
from verifai_desktop.ui.errors import show_error
from verifai_desktop.ui.history_panel import HistoryPanel, OpenedAnswer, changes_note
from verifai_desktop.ui.library_panel import LibraryPanel
from verifai_desktop.ui.models_dialog import ModelsDialog
from verifai_desktop.ui.operations import CollectionHost
from verifai_desktop.ui.questions import PasswordQuestion, prompt_password
from verifai_desktop.ui.resources import icon
from verifai_desktop.ui.settings_dialog import SettingsDialog
from verifai_desktop.ui.sources_panel import SourcesPanel
from verifai_desktop.ui.tasks import Task, TaskContext, TaskRunner
from verifai_desktop.ui.watching import FolderFollower
from verifai_desktop.verify.claims import strip_citations
from verifai_desktop.verify.conflicts import CheckResult
from verifai_desktop.verify.labels import label_counts

if TYPE_CHECKING:
    from verifai_desktop.pipeline import AskSession

log = logging.getLogger(__name__)

STAGE_TEXT = {
    "retrieve": "Searching your documents…",
    "generate": "Writing the answer…",
    "verify": "Checking every sentence against its sources…",
}
PREPARING_TEXT = "Preparing the answer…"
"""Answer pane note between the search and prompt reading (the generator loads, the prompt
is built)."""


def reading_text(done: int, total: int | None) -> str:
    """What the answer pane and status bar say while the generator reads the prompt."""
    of = f" of {total:,}" if total is not None else ""
    return f"Reading the passages… {done:,}{of} tokens"


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
RUN_TEXT = {ASK_MODE: "Ask", CHECK_MODE: "Check"}
ANSWER_STATUS = "Answer verified. Hover or Tab through sentences for evidence."
NOT_SUPPORTED_SUMMARY = "Not supported"  # summary line of an answer refused by evidence
CHECKING_TEXT = "Searching your documents for passages that support or contradict the claim…"
AUDIT_TIP = (
    "Save the shown answer's audit record: every sentence with its verdicts, every quoted span "
    "with its document's sha256 and offsets, the models and settings (JSON, with an HTML view)"
)
AUDIT_OFF_TIP = (
    "Only answers kept in the history have an audit record: turn on “Keep every verified "
    "answer” in Settings"
)
NOTE_STYLE = "color:#334;background:#eef2f8;padding:4px;border-radius:3px"
CHANGED_STYLE = "color:#7a3e00;background:#fff1d6;padding:4px;border-radius:3px"
WARNING_STYLE = "color:#8a4b00;background:#fff4e0;padding:4px;border-radius:3px"


class MainWindow(QMainWindow):
    """The VerifAI Desktop window.

    Signals are those of its parts; :attr:`ask_task` is the running question, if any, and
    :attr:`check_task` the running claim check.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        offer_sample: bool = True,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("VerifAI Desktop")
        self.setWindowIcon(icon("app"))
        self.setAcceptDrops(True)  # files dropped anywhere go to the library
        self.settings = settings if settings is not None else self._load_settings()
        self.runner = TaskRunner(self)
        self.answer: Answer | None = None
        self.ask_task: Task[Answer] | None = None
        self.check_task: Task[CheckResult] | None = None
        self.check_result: CheckResult | None = None
        # The generated text of a refused answer was on show when one of its sentences was
        # checked; back from the check, it is shown again.
        self._generated_shown = False
        self._session: AskSession | None = None
        self._models_ready = False  # set on the UI thread once a question was answered
        # (collection folder, answer id) of the shown answer in its history; None when the
        # answer on show is not kept (history off, or deleted since).
        self.history_ref: tuple[str, int] | None = None
        self._marks: tuple[Feedback, ...] = ()  # the reader's marks on the shown answer
        self.host = CollectionHost(self.runner, lambda: self.settings, self)

        self.library = LibraryPanel(
            self.runner, lambda: self.settings, host=self.host, offer_sample=offer_sample
        )
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
        self.answer_view = AnswerView()
        # Over a reopened answer: when it was verified and which documents changed since.
        self.reopened_note = QLabel("")
        self.reopened_note.setObjectName("reopenedNote")
        self.reopened_note.setWordWrap(True)
        self.reopened_note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.reopened_note.hide()
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
        ml.addWidget(self.reopened_note)
        ml.addWidget(self.answer_view, 1)
        ml.addWidget(self.legend)
        ml.addLayout(out_row)

        self.sources = SourcesPanel()
        self.document_view = DocumentView()
        self.tabs = QTabWidget()
        self.tabs.addTab(self.sources, "Sources")
        self.tabs.addTab(self.document_view, "Document")
        self.history = HistoryPanel(self.runner)
        self.tabs.addTab(self.history, "History")
        self.history.keeping = self.settings.history.keep
        self.follower = FolderFollower(self.library, lambda: self.settings, self)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.library)
        splitter.addWidget(middle)
        splitter.addWidget(self.tabs)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 3)
        splitter.setStretchFactor(2, 2)
        splitter.setSizes([370, 590, 440])
        self.splitter = splitter
        self.setCentralWidget(splitter)

        self.model_status = QLabel("Models: not loaded (they load on the first question)")
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
        self.models_dialog: ModelsDialog | None = None
        self._build_actions()
        self._connect_signals()
        self._show_server_warning()
        self._restore_state()

    # ----- construction --------------------------------------------------------------------

    def _load_settings(self) -> Settings:
        try:
            return load_settings()
        except SettingsError as exc:
            show_error(self, exc, context="Reading settings (defaults are used)")
            return Settings()

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
        edit_menu.addAction(self.settings_action)
        edit_menu.addAction(self.models_action)
        self.copy_action.setEnabled(False)
        self.export_action.setEnabled(False)
        self.audit_action.setEnabled(False)

    def _connect_signals(self) -> None:
        self.question.returnPressed.connect(self.on_question_return_pressed)
        self.ask_button.clicked.connect(self.on_ask_clicked)
        self.mode_group.buttonToggled.connect(self.on_mode_toggled)
        self.stop_button.clicked.connect(self.on_stop_clicked)
        self.copy_button.clicked.connect(self.on_copy_clicked)
        self.export_button.clicked.connect(self.on_export_clicked)
        self.copy_action.triggered.connect(self.on_copy_clicked)
        self.export_action.triggered.connect(self.on_export_clicked)
        self.settings_action.triggered.connect(self.on_settings_clicked)
        self.models_action.triggered.connect(self.on_models_clicked)
        self.new_action.triggered.connect(self.library.on_new_clicked)
        self.add_files_action.triggered.connect(self.library.on_add_files_clicked)
        self.add_folder_action.triggered.connect(self.library.on_add_folder_clicked)
        self.quit_action.triggered.connect(self.close)
        self.library.collection_changed.connect(self.on_collection_changed)
        self.library.documents_changed.connect(self.on_documents_changed)
        self.library.busy_changed.connect(self.on_library_busy)
        self.library.password_requested.connect(self.on_password_requested)
        self.answer_view.citation_activated.connect(self.on_citation_activated)
        self.answer_view.claim_check_requested.connect(self.on_claim_check_requested)
        self.answer_view.evidence_activated.connect(self.on_evidence_activated)
        self.answer_view.back_requested.connect(self.on_back_requested)
        self.sources.source_activated.connect(self.on_citation_activated)
        self.sources.conflict_activated.connect(self.on_evidence_activated)
        self.answer_view.feedback_given.connect(self.on_feedback_given)
        self.answer_view.feedback_withdrawn.connect(self.on_feedback_withdrawn)
        self.audit_action.triggered.connect(self.on_audit_clicked)
        self.history_action.triggered.connect(lambda: self.tabs.setCurrentWidget(self.history))
        self.history.answer_opened.connect(self.on_history_opened)
        self.history.answers_deleted.connect(self.on_answers_deleted)
        self.history.feedback_changed.connect(self.on_feedback_changed)

    def _restore_state(self) -> None:
        ui = self.settings.ui
        if not (ui.window_geometry and self.restoreGeometry(_from_base64(ui.window_geometry))):
            self.resize(1400, 860)
        if ui.splitter_state and not self.splitter.restoreState(_from_base64(ui.splitter_state)):
            log.warning("ignoring saved panel widths that do not fit this window's panels")
        self.library.refresh_collections(select=ui.last_collection)
        self._update_ask_button()

    # ----- ask -----------------------------------------------------------------------------

    @property
    def mode(self) -> str:
        """The question box's mode: :data:`ASK_MODE` or :data:`CHECK_MODE`."""
        return CHECK_MODE if self.mode_buttons[CHECK_MODE].isChecked() else ASK_MODE

    def set_mode(self, mode: str) -> None:
        """Switch the question box to ``mode`` (:data:`ASK_MODE` or :data:`CHECK_MODE`)."""
        if mode not in self.mode_buttons:
            raise ValueError(f"unknown mode {mode!r}")
        self.mode_buttons[mode].setChecked(True)

    @Slot(QAbstractButton, bool)
    def on_mode_toggled(self, _button: QAbstractButton, checked: bool) -> None:
        """Follow the mode in the run button, the placeholder and the empty view's hint."""
        if not checked:
            return
        self.ask_button.setText(RUN_TEXT[self.mode])
        self.answer_view.hint_text = CHECK_HINT if self.mode == CHECK_MODE else ANSWER_HINT
        self.answer_view.viewport().update()
        self._update_placeholder()

    def _update_placeholder(self) -> None:
        name = self.library.current
        shown = self.library.display_name(name) if name else ""
        if not name:
            text = "Create a collection and add documents first"
        elif self.mode == CHECK_MODE:
            text = f"Type a statement to check against the documents in “{shown}”…"
        else:
            text = f"Ask a question about the documents in “{shown}”…"
        self.question.setPlaceholderText(text)

    @Slot()
    def on_ask_clicked(self) -> None:
        """Run the box's text in the current mode: ask the question or check the claim."""
        q = self.question.text().strip()
        if not q:
            return
        if self.mode == CHECK_MODE:
            self.check(q)
        else:
            self.ask(q)

    @Slot()
    def on_question_return_pressed(self) -> None:
        """Enter in the question box is the run button: nothing while it is disabled."""
        if self.ask_button.isEnabled():
            self.on_ask_clicked()

    @property
    def working(self) -> bool:
        """A question or a claim check is running."""
        return any(t is not None and t.is_running for t in (self.ask_task, self.check_task))

    def _update_ask_button(self) -> None:
        """Ask (and Check) are enabled with a collection, no question or check running and no
        index write going on."""
        running = self.working
        busy = self.library.busy
        self.ask_button.setEnabled(bool(self.library.current) and not busy and not running)
        self.ask_button.setToolTip(
            "Wait for the documents to finish indexing"
            if busy
            else "Create or pick a collection first"
            if not self.library.current
            else ""
        )

    def ask(self, question: str) -> Task[Answer] | None:
        """Answer ``question`` from the current collection in the background.

        Tokens stream into the answer view; when the answer is verified each sentence takes
        its label style and the sources panel lists the passages.
        """
        name = self.library.current
        if not name:
            self.statusBar().showMessage(
                "Create or pick a collection first, then add documents.", 8000
            )
            return None
        if self.working:
            return None
        session = self._ask_session()
        prepare = not self._models_ready
        settings = self.settings
        kept: list[int] = []  # the answer's history id, written on the worker before it ends

        def op(col: Collection, ctx: TaskContext) -> Answer:
            if prepare:
                _load_models(session, ctx)
            answer = session.ask(
                col, question, on_token=ctx.on_token, progress=ctx.progress, cancel=ctx.cancel
            )
            if settings.history.keep:
                kept.extend(_keep(col, answer, settings))
            return answer

        self.answer = None
        self.check_result = None
        self._forget_history_ref()
        self.answer_view.begin_stream()
        self.sources.clear()
        # The previous answer's page would read as a source of the new one.
        self.document_view.clear()
        self.tabs.setCurrentWidget(self.sources)
        self._set_answer_actions(False)
        self.answer_info.setText("")
        task = self.host.query("ask", name, op)
        self.ask_task = task
        self._update_ask_button()
        self.stop_button.setEnabled(True)
        task.text_streamed.connect(self.answer_view.append_stream)
        task.progressed.connect(self.on_ask_progress)
        task.status_changed.connect(self.on_model_status)
        task.succeeded.connect(
            lambda answer: self.on_answer_ready(answer, kept=(name, kept[0]) if kept else None)
        )
        task.failed.connect(
            lambda exc: show_error(
                self, exc, context="Answering the question", repair=self.library.repair
            )
        )
        task.cancelled.connect(lambda: self.statusBar().showMessage("Stopped.", 5000))
        task.finished.connect(self.on_ask_finished)
        return task

    def _ask_session(self) -> AskSession:
        if self._session is None:
            # Deferred on purpose: the pipeline pulls in onnxruntime and the model libraries,
            # which the window must not import before the first question.
            from verifai_desktop.pipeline import AskSession

            self._session = AskSession(self.settings)
        return self._session

    @Slot(object)
    def on_ask_progress(self, p: Progress) -> None:
        """Show the stage of the running question in the status bar and, until the answer
        streams, in the answer pane; prompt reading also as a bar of tokens read."""
        text = STAGE_TEXT.get(p.stage, p.stage)
        if p.stage == "read":
            text = reading_text(p.done, p.total)
            if p.total:
                self.read_bar.setRange(0, p.total)
                self.read_bar.setValue(p.done)
                self.read_bar.show()
            self.answer_view.show_progress(text)
        else:
            self.read_bar.hide()
            if p.stage == "retrieve":
                self.answer_view.show_progress(text)
            elif p.stage == "generate" and not p.done:
                text = PREPARING_TEXT
                self.answer_view.show_progress(text)
        if p.stage == "generate" and p.done:
            text = f"Writing the answer… {p.done} tokens"
        self.statusBar().showMessage(text)

    @Slot(str)
    def on_model_status(self, message: str) -> None:
        """Show model loading in the permanent status label."""
        self.model_status.setText(f"Models: {message}")

    def on_answer_ready(self, answer: Answer, *, kept: tuple[str, int] | None = None) -> None:
        """Render the verified answer and its sources; after the first, show the devices.

        Args:
            answer: the answer.
            kept: (collection folder, history id) when it was kept in the history.
        """
        self.answer = answer
        first = not self._models_ready
        self._models_ready = True
        if first:
            self.detect_devices()
        self.history_ref = kept
        self._marks = ()
        self.reopened_note.hide()
        self._show_answer(answer)
        self.sources.set_answer(answer)
        if kept is not None and kept[0] == self.history.collection:
            self.history.refresh(select=kept[1])
        self._set_answer_actions(True)
        self.answer_info.setText(answer_summary(answer))
        names = [str(m.get("name", "")) for m in answer.models.values() if m.get("name")]
        if names:
            self.model_status.setText("Models: " + " · ".join(Path(n).name for n in names))
        self.statusBar().showMessage(answer_status(answer), 10000)

    @Slot()
    def on_ask_finished(self) -> None:
        """Re-enable asking."""
        self.read_bar.hide()
        self._update_ask_button()
        self.stop_button.setEnabled(False)

    @Slot()
    def on_stop_clicked(self) -> None:
        """Stop the running question or claim check."""
        for task in (self.ask_task, self.check_task):
            if task is not None and task.is_running:
                task.cancel()

    # ----- check a claim -------------------------------------------------------------------

    def check(self, claim: str, *, from_answer: bool = False) -> Task[CheckResult] | None:
        """Check ``claim`` against every document of the current collection in the background.

        The result (:meth:`AnswerView.show_check`) replaces the answer area: what each
        document says, then the supporting and the contradicting passages.

        Args:
            claim: any statement (citation markers are ignored).
            from_answer: the claim is a sentence of the shown answer; the answer and its
                sources are kept and the result links back to them.

        Returns:
            The running task, or ``None`` when nothing was started (no collection, a question
            or check already running, documents being indexed, a claim without words).
        """
        name = self.library.current
        if not name:
            self.statusBar().showMessage(
                "Create or pick a collection first, then add documents.", 8000
            )
            return None
        if self.working:
            return None
        if self.library.busy:
            self.statusBar().showMessage("Wait for the documents to finish indexing.", 5000)
            return None
        text = strip_citations(claim)
        if not any(ch.isalnum() for ch in text):
            self.statusBar().showMessage("Type a statement to check.", 5000)
            return None
        session = self._ask_session()
        prepare = not self._models_ready

        def op(col: Collection, ctx: TaskContext) -> CheckResult:
            if prepare:
                ctx.status("loading the verifier…")
                load = getattr(session.verifier, "load", None)
                if callable(load):
                    load()
            if ctx.cancel.is_set():
                raise Cancelled("check")
            result = session.check_claim(col, text)
            # The search cannot be interrupted; Stop drops its result.
            if ctx.cancel.is_set():
                raise Cancelled("check")
            return result

        keep = from_answer and self.answer is not None
        self._generated_shown = keep and self.answer_view.generated_shown
        self.check_result = None
        if not keep:
            self.answer = None
            self._forget_history_ref()
            self.sources.clear("The passages of the check are listed in the answer area.")
            self.document_view.clear()
            self.tabs.setCurrentWidget(self.sources)
        self._set_answer_actions(False)
        self.answer_view.show_pending(f"Checking “{text}” across your documents…")
        self.answer_info.setText("")
        self.statusBar().showMessage(CHECKING_TEXT)
        task = self.host.query("check", name, op)
        self.check_task = task
        self._update_ask_button()
        self.stop_button.setEnabled(True)
        task.status_changed.connect(self.on_model_status)
        task.succeeded.connect(lambda result: self.on_check_ready(result, back=keep))
        task.failed.connect(
            lambda exc: show_error(
                self, exc, context="Checking the claim", repair=self.library.repair
            )
        )
        task.cancelled.connect(lambda: self.statusBar().showMessage("Stopped.", 5000))
        task.finished.connect(self.on_check_finished)
        return task

    @Slot(str)
    def on_claim_check_requested(self, claim: str) -> None:
        """ "Check across my documents" on an answer sentence: check its claim."""
        if self.check(claim, from_answer=True) is None and self.working:
            self.statusBar().showMessage("Wait for the running question or check to end.", 5000)

    def on_check_ready(self, result: CheckResult, *, back: bool = False) -> None:
        """Show the claim check in the answer area.

        Args:
            result: the check.
            back: the shown answer is kept; link back to it.
        """
        self.check_result = result
        self.answer_view.show_check(result, back=back and self.answer is not None)
        self.answer_info.setText(check_summary(result))
        self.statusBar().showMessage("Claim checked. Click a passage to open it.", 10000)

    @Slot()
    def on_check_finished(self) -> None:
        """Re-enable asking; after a failed or stopped check, show the answer again."""
        self._update_ask_button()
        self.stop_button.setEnabled(False)
        if self.check_result is None:
            if self.answer is not None:
                self.on_back_requested()
            else:
                self.answer_view.clear_answer()

    @Slot()
    def on_back_requested(self) -> None:
        """Leave a sentence's check for the answer it came from."""
        if self.answer is None:
            return
        self.check_result = None
        self._show_answer(self.answer, show_generated=self._generated_shown)
        self._set_answer_actions(True)
        self.answer_info.setText(answer_summary(self.answer))

    @Slot(object)
    def on_evidence_activated(self, evidence: Evidence) -> None:
        """Open a passage of a claim check or a conflicting passage at its evidence."""
        passage = evidence.passage
        password = self.library.passwords.get(str(passage.path))
        self.tabs.setCurrentWidget(self.document_view)
        self.document_view.show_passage(passage, evidence.verdict.evidence, password=password)

    # ----- sources and documents -----------------------------------------------------------

    @Slot(int)
    def on_citation_activated(self, number: int) -> None:
        """Open passage ``number`` in the document view at its evidence sentence."""
        if self.answer is None or not 1 <= number <= len(self.answer.passages):
            return
        passage = self.answer.passages[number - 1]
        evidence = ""
        preferred = [self.answer_view.focused_index, self.answer_view.hovered_index]
        candidates = [
            self.answer.sentences[i] for i in preferred if 0 <= i < len(self.answer.sentences)
        ]
        candidates += list(self.answer.sentences)
        for sentence in candidates:
            for verdict in sentence.verdicts:
                if verdict.passage_number == number and verdict.evidence:
                    evidence = verdict.evidence
                    break
            if evidence:
                break
        password = self.library.passwords.get(str(passage.path))
        # Shown first so the page is fitted to the panel's real width and scrolled to the
        # evidence as laid out.
        self.tabs.setCurrentWidget(self.document_view)
        self.document_view.show_passage(passage, evidence, password=password)

    # ----- export --------------------------------------------------------------------------

    def _set_answer_actions(self, enabled: bool) -> None:
        for w in (self.copy_button, self.export_button):
            w.setEnabled(enabled)
        self.copy_action.setEnabled(enabled)
        self.export_action.setEnabled(enabled)
        audit = enabled and self.history_ref is not None
        self.audit_action.setEnabled(audit)
        self.audit_action.setToolTip(AUDIT_TIP if audit or not enabled else AUDIT_OFF_TIP)

    def export_audit(self, path: Path) -> tuple[Path, Path]:
        """Write the shown answer's audit record to ``path`` (JSON) and beside it (HTML).

        Returns:
            The JSON and HTML files written.

        Raises:
            HistoryNotFound: the answer is no longer in its history.
            OSError: the files cannot be written.
        """
        assert self.history_ref is not None
        name, answer_id = self.history_ref
        return self.history.export_audit(name, answer_id, path)

    @Slot()
    def on_audit_clicked(self) -> None:
        """Ask where to save the shown answer's audit record and write it (JSON and HTML)."""
        if self.history_ref is None or self.answer is None:
            return
        path, _ = QFileDialog.getSaveFileName(
            self,
            "Export audit record",
            str(Path.home() / f"audit-{self.history_ref[1]}.json"),
            "Audit record (*.json)",
        )
        if not path:
            return
        target = Path(path)
        if target.suffix.lower() != ".json":
            target = target.with_name(target.name + ".json")
        try:
            json_path, html_path = self.export_audit(target)
        except (OSError, VerifaiError) as exc:
            show_error(self, exc, context=f"Saving the audit record {target.name}")
            return
        self.statusBar().showMessage(
            f"Audit record saved: {json_path} (readable view: {html_path.name})", 15000
        )

    @Slot()
    def on_copy_clicked(self) -> None:
        """Put the answer on the clipboard as Markdown (text) and HTML."""
        if self.answer is None:
            return
        mime = QMimeData()
        mime.setText(answer_to_markdown(self.answer))
        mime.setHtml(answer_to_html(self.answer))
        QGuiApplication.clipboard().setMimeData(mime)
        self.statusBar().showMessage("Answer copied (Markdown and HTML).", 5000)

    def export_answer(self, path: Path) -> Path:
        """Write the answer to ``path`` in the format its suffix names (``serialize``).

        Raises:
            UnsupportedExportFormat: the suffix names no export format.
        """
        assert self.answer is not None
        return write_answer(self.answer, path)

    @Slot()
    def on_export_clicked(self) -> None:
        """Ask where to save and export the answer."""
        if self.answer is None:
            return
        formats = list(EXPORT_FORMATS.values())
        path, chosen = QFileDialog.getSaveFileName(
            self,
            "Export answer",
            str(Path.home() / f"answer{formats[0].suffix}"),
            ";;".join(f.file_filter for f in formats),
        )
        if not path:
            return
        target = Path(path)
        if not target.suffix:
            fmt = next((f for f in formats if f.file_filter == chosen), formats[0])
            target = target.with_suffix(fmt.suffix)
        try:
            format_for_path(target)
            self.export_answer(target)
        except (OSError, VerifaiError) as exc:
            show_error(self, exc, context=f"Saving {target.name}")
            return
        self.statusBar().showMessage(f"Saved {target}", 8000)

    # ----- library events ------------------------------------------------------------------

    @Slot(str)
    def on_collection_changed(self, name: str) -> None:
        """Follow the current collection (its history is listed)."""
        shown = self.library.display_name(name)
        self.setWindowTitle(f"VerifAI Desktop — {shown}" if name else "VerifAI Desktop")
        self._update_ask_button()
        self._update_placeholder()
        self.history.set_collection(name, shown)

    # ----- history and feedback ------------------------------------------------------------

    def _show_answer(self, answer: Answer, *, show_generated: bool = False) -> None:
        """Render ``answer`` with its history id (feedback on or off) and its marks."""
        self.answer_view.show_answer(answer, show_generated=show_generated)
        ref = self.history_ref
        marks = self._marks if ref is not None else ()
        self.answer_view.set_history(ref[1] if ref is not None else None, marks)

    def _forget_history_ref(self) -> None:
        self.history_ref = None
        self._marks = ()
        self.reopened_note.hide()
        self.audit_action.setEnabled(False)

    @Slot(object)
    def on_history_opened(self, opened: OpenedAnswer) -> None:
        """Show a past answer as it was verified: colours, hover cards, sources, the reader's
        marks; a note says when it was made and which quoted documents changed since."""
        if self.working:
            self.statusBar().showMessage(
                "Wait for the running question or check to end, then choose it again.", 8000
            )
            return
        self.answer = opened.answer
        self.check_result = None
        self._generated_shown = False
        self.history_ref = (opened.collection, opened.saved.answer_id)
        self._marks = opened.feedback
        self._show_answer(opened.answer)
        self.sources.set_answer(opened.answer)
        self.document_view.clear()
        self._set_answer_actions(True)
        self.answer_info.setText(answer_summary(opened.answer))
        self.reopened_note.setText(changes_note(opened.saved.when(), opened.changes))
        self.reopened_note.setStyleSheet(CHANGED_STYLE if opened.changes else NOTE_STYLE)
        self.reopened_note.show()
        self.question.setText(opened.saved.question)
        self.statusBar().showMessage(
            f"Answer of {opened.saved.when()} reopened as it was verified.", 8000
        )

    @Slot(str, object)
    def on_answers_deleted(self, name: str, answer_ids: tuple[int, ...] | None) -> None:
        """Answers were deleted from a history: the shown one, if among them, is no longer
        kept (no marks, no audit record); it stays on screen."""
        ref = self.history_ref
        if ref is None or ref[0] != name or (answer_ids is not None and ref[1] not in answer_ids):
            return
        self._forget_history_ref()
        self.answer_view.set_history(None)
        self._set_answer_actions(self.answer is not None and self.check_result is None)
        self.statusBar().showMessage("The answer on show was deleted from the history.", 8000)

    @Slot(object)
    def on_feedback_given(self, feedback: Feedback) -> None:
        """Keep the reader's mark with the shown answer in its history."""
        if self.history_ref is None:
            return
        name, answer_id = self.history_ref
        self.history.store_feedback(name, dataclasses.replace(feedback, answer_id=answer_id))

    @Slot(int, int)
    def on_feedback_withdrawn(self, sentence: int, passage: int) -> None:
        """Forget the reader's marks on a sentence (``passage`` -1: all of them)."""
        if self.history_ref is None:
            return
        name, answer_id = self.history_ref
        self.history.withdraw_feedback(name, answer_id, sentence, passage)

    @Slot(str, int, object)
    def on_feedback_changed(self, name: str, answer_id: int, marks: tuple[Feedback, ...]) -> None:
        """The marks of an answer changed: the shown answer's cards show them."""
        if self.history_ref != (name, answer_id):
            return
        self._marks = marks
        self.answer_view.set_history(answer_id, marks)
        self.statusBar().showMessage("Your marks are kept with the answer.", 5000)

    @Slot(str)
    def on_documents_changed(self, name: str) -> None:
        """An ingest or removal changed the index; the host's collection already sees it."""
        log.debug("documents changed in %s", name)

    @Slot(object)
    def on_password_requested(self, question: PasswordQuestion) -> None:
        """Answer an encrypted PDF's password question with a dialog."""
        prompt_password(self, question)

    @Slot(bool)
    def on_library_busy(self, busy: bool) -> None:
        """Asking waits while the index is being written."""
        self._update_ask_button()

    # ----- settings and state --------------------------------------------------------------

    @Slot()
    def on_settings_clicked(self) -> None:
        """Edit the settings; models reload on the next question."""
        dialog = SettingsDialog(self.settings, self)
        if dialog.exec() and dialog.result_settings is not None:
            self.apply_settings(dialog.result_settings)
            if self.device_status.text():  # GPU layers may have changed
                self.detect_devices()

    @Slot()
    def on_models_clicked(self) -> None:
        """Open the Models dialog (window-modal, not blocking: downloads report progress)."""
        dialog = self.models_dialog
        if dialog is None:
            dialog = ModelsDialog(self.runner, self.settings, self)
            dialog.settings_changed.connect(self.on_models_settings_changed)
            dialog.hardware_detected.connect(self.on_hardware_detected)
            self.models_dialog = dialog
        else:
            dialog.settings = self.settings
            dialog.refresh()
            dialog.detect_hardware()
        dialog.open()

    @Slot(object)
    def on_models_settings_changed(self, settings: Settings) -> None:
        """A model was made active (or an active one deleted) in the Models dialog."""
        self.apply_settings(dataclasses.replace(self.settings, models=settings.models))

    def detect_devices(self) -> Task[Hardware]:
        """Find where the generator, verifier and embedder run, on a worker; the status bar
        shows it (:meth:`on_hardware_detected`). A verifier already loaded reports its own
        ONNX Runtime provider."""
        from verifai_desktop import hardware

        models = self.settings.models
        session = self._session if self._models_ready else None

        def work(ctx: TaskContext) -> Hardware:
            provider = getattr(session.verifier, "provider", None) if session else None
            return hardware.detect(
                models, verifier_provider=provider if isinstance(provider, str) else None
            )

        task = self.runner.submit("detect devices", work)
        task.succeeded.connect(self.on_hardware_detected)
        task.failed.connect(lambda exc: log.warning("cannot detect the devices: %s", exc))
        return task

    @Slot(object)
    def on_hardware_detected(self, hw: Hardware) -> None:
        """Show the device of each model in the status bar (details in its tooltip)."""
        self.device_status.setText(f"Devices: {hw.summary()}")
        self.device_status.setToolTip("\n".join(hw.lines()))

    def apply_settings(self, settings: Settings) -> None:
        """Use ``settings`` from now on (a new ask session, so changed models load afresh);
        folder watching, the history note and the server warning follow them."""
        self.settings = dataclasses.replace(settings, ui=self.settings.ui)
        if not self.working:
            self._session = None  # the next question builds AskSession(settings) afresh
            self._models_ready = False
            self.model_status.setText("Models: not loaded (settings changed)")
        self.follower.apply_settings()
        self.history.set_keeping(self.settings.history.keep)
        self._show_server_warning()

    def _show_server_warning(self) -> None:
        warning = leaves_machine_warning(self.settings.server.base_url)
        self.server_warning.setText(f"⚠ {warning}" if warning else "")
        self.server_warning.setVisible(bool(warning))

    def save_state(self) -> Path:
        """Save window geometry, panel widths and the current collection with the settings
        (TOML)."""
        ui = dataclasses.replace(
            self.settings.ui,
            window_geometry=_to_base64(self.saveGeometry()),
            splitter_state=_to_base64(self.splitter.saveState()),
            last_collection=self.library.current or self.settings.ui.last_collection,
        )
        self.settings = dataclasses.replace(self.settings, ui=ui)
        return save_settings(self.settings)

    def dragEnterEvent(self, e: QDragEnterEvent) -> None:  # noqa: N802 (Qt override)
        self.library.dragEnterEvent(e)

    def dropEvent(self, e: QDropEvent) -> None:  # noqa: N802 (Qt override)
        self.library.dropEvent(e)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt override)
        if self.library.busy_with_user_work and not self._confirm_quit():
            event.ignore()
            return
        try:
            self.save_state()
        except OSError as exc:
            log.warning("could not save window state: %s", exc)
        self.follower.stop()
        self.runner.shutdown(timeout_ms=10000)
        self.host.close()
        self.answer_view.popup.hide()
        super().closeEvent(event)

    def _confirm_quit(self) -> bool:
        answer = QMessageBox.question(
            self,
            "Quit",
            "Documents are still being indexed. Stop and quit? Finished files stay indexed.",
        )
        return answer == QMessageBox.StandardButton.Yes


def answer_status(answer: Answer) -> str:
    """The status-bar message for a new answer: verified, not found (nothing close enough
    retrieved) or not supported (no sentence of the generated answer supported)."""
    if refused_by_evidence(answer):
        return f"{UNSUPPORTED_TEXT}: no sentence of the generated answer is supported."
    if answer.abstained:
        return f"{NOT_FOUND_TEXT}."
    return ANSWER_STATUS


def answer_summary(answer: Answer) -> str:
    """``"3 supported, 1 contradicted · retrieve 0.2 s · generate 9.1 s · verify 1.3 s"``;
    an abstention leads with why: ``"Not found in your documents · retrieve 0.2 s"``,
    ``"Not supported: 2 no evidence, 1 contradicted · retrieve 0.2 s · …"``."""
    t = answer.timings_ms
    counts = label_counts(s.label for s in answer.sentences)
    summary = ", ".join(f"{n} {label.value.replace('_', ' ')}" for label, n in counts.items() if n)
    if refused_by_evidence(answer):
        summary = f"{NOT_SUPPORTED_SUMMARY}: {summary}" if summary else NOT_SUPPORTED_SUMMARY
    elif answer.abstained:
        summary = NOT_FOUND_TEXT
    times = " · ".join(
        f"{k} {t[k] / 1000:.1f} s" for k in ("retrieve", "generate", "verify") if k in t
    )
    return " · ".join(x for x in (summary, times) if x)


def check_summary(result: CheckResult) -> str:
    """``"1 document supports, 2 contradict, 1 without evidence · 30 passages checked"``."""
    singular = {"SUPPORT": "supports", "CONTRADICT": "contradicts", "NO_EVIDENCE": ""}
    plural = {"SUPPORT": "support", "CONTRADICT": "contradict", "NO_EVIDENCE": ""}
    counts = {label: 0 for label in CHECK_VERDICT_TEXT}
    for doc in result.documents:
        counts[doc.label] += 1
    parts: list[str] = []
    for label, n in counts.items():
        if not n:
            continue
        verb = (singular if n == 1 else plural)[label] or "without evidence"
        noun = "" if parts else (" document" if n == 1 else " documents")
        parts.append(f"{n}{noun} {verb}")
    checked = f"{result.candidates} {'passage' if result.candidates == 1 else 'passages'} checked"
    return " · ".join(x for x in (", ".join(parts), checked) if x)


def _to_base64(data: QByteArray) -> str:
    return bytes(data.toBase64().data()).decode("ascii")


def _from_base64(text: str) -> QByteArray:
    return QByteArray.fromBase64(text.encode("ascii"))


def _keep(col: Collection, answer: Answer, settings: Settings) -> list[int]:
    """Keep ``answer`` in ``col``'s history (on the worker that answered); ``[id]``, or ``[]``
    when it could not be kept (logged: the answer is still shown)."""
    try:
        return [keep_answer(col, answer, settings)]
    except (VerifaiError, OSError, sqlite3.Error) as exc:
        log.warning("could not keep the answer in the history: %s", exc)
        return []


def _load_models(session: AskSession, ctx: TaskContext) -> None:
    """Resolve every model before the first question so a missing one fails fast.

    Runs on the worker; touches only the session's own lazily loaded models. The verifier
    loads here, the generator on its first prompt (sized to it).
    """
    ctx.status("locating the generator…")
    _ = session.generator
    ctx.status("loading the verifier…")
    load = getattr(session.verifier, "load", None)
    if callable(load):
        load()
    ctx.status("loading the generator (first answer)…")
