"""The main window: library on the left, question and verified answer in the middle, sources
and the document view on the right, model status in the status bar.

No model or index library is imported here: the pipeline is imported on the first question,
so the window opens at once and models load, with a visible status, on the first question.
Collection work goes through one :class:`~verifai_desktop.ui.operations.CollectionHost` (one
open collection, ops run on the worker, results on the UI thread); window state is assigned on
the UI thread only.
"""

from __future__ import annotations

import dataclasses
import logging
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
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from verifai_desktop.domain import Answer, Progress
from verifai_desktop.errors import SettingsError, VerifaiError
from verifai_desktop.serialize import (
    EXPORT_FORMATS,
    answer_to_html,
    answer_to_markdown,
    format_for_path,
    write_answer,
)
from verifai_desktop.settings import Settings, load_settings, save_settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.ui.answer_view import AnswerView, LegendView
from verifai_desktop.ui.document_view import DocumentView
from verifai_desktop.ui.errors import show_error
from verifai_desktop.ui.library_panel import LibraryPanel
from verifai_desktop.ui.operations import CollectionHost
from verifai_desktop.ui.questions import PasswordQuestion, prompt_password
from verifai_desktop.ui.resources import icon
from verifai_desktop.ui.settings_dialog import SettingsDialog
from verifai_desktop.ui.sources_panel import SourcesPanel
from verifai_desktop.ui.tasks import Task, TaskContext, TaskRunner
from verifai_desktop.verify.labels import label_counts

if TYPE_CHECKING:
    from verifai_desktop.pipeline import AskSession

log = logging.getLogger(__name__)

STAGE_TEXT = {
    "retrieve": "Searching your documents…",
    "generate": "Writing the answer…",
    "verify": "Checking every sentence against its sources…",
}


class MainWindow(QMainWindow):
    """The VerifAI Desktop window.

    Signals are those of its parts; :attr:`ask_task` is the running question, if any.
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
        self._session: AskSession | None = None
        self._models_ready = False  # set on the UI thread once a question was answered
        self.host = CollectionHost(self.runner, lambda: self.settings, self)

        self.library = LibraryPanel(
            self.runner, lambda: self.settings, host=self.host, offer_sample=offer_sample
        )
        self.question = QLineEdit()
        self.question.setObjectName("questionBox")
        self.question.setPlaceholderText("Ask a question about your documents…")
        self.question.setClearButtonEnabled(True)
        self.ask_button = QPushButton(icon("ask"), "Ask")
        self.ask_button.setObjectName("askButton")
        self.stop_button = QPushButton(icon("stop"), "Stop")
        self.stop_button.setEnabled(False)
        ask_row = QHBoxLayout()
        ask_row.addWidget(self.question, 1)
        ask_row.addWidget(self.ask_button)
        ask_row.addWidget(self.stop_button)
        self.answer_view = AnswerView()
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
        ml.addLayout(ask_row)
        ml.addWidget(self.answer_view, 1)
        ml.addWidget(self.legend)
        ml.addLayout(out_row)

        self.sources = SourcesPanel()
        self.document_view = DocumentView()
        self.tabs = QTabWidget()
        self.tabs.addTab(self.sources, "Sources")
        self.tabs.addTab(self.document_view, "Document")

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
        self.statusBar().addPermanentWidget(self.model_status)
        self._build_actions()
        self._connect_signals()
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
        self.settings_action = QAction(icon("settings"), "Settings…", self)
        self.settings_action.setShortcut(QKeySequence.StandardKey.Preferences)
        self.quit_action = QAction("Quit", self)
        self.quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        for a in (self.new_action, self.add_files_action, self.add_folder_action):
            tb.addAction(a)
        tb.addSeparator()
        tb.addAction(self.copy_action)
        tb.addAction(self.export_action)
        tb.addSeparator()
        tb.addAction(self.settings_action)
        file_menu = self.menuBar().addMenu("&File")
        for a in (
            self.new_action,
            self.add_files_action,
            self.add_folder_action,
            self.export_action,
        ):
            file_menu.addAction(a)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        edit_menu = self.menuBar().addMenu("&Edit")
        edit_menu.addAction(self.copy_action)
        edit_menu.addAction(self.settings_action)
        self.copy_action.setEnabled(False)
        self.export_action.setEnabled(False)

    def _connect_signals(self) -> None:
        self.question.returnPressed.connect(self.on_question_return_pressed)
        self.ask_button.clicked.connect(self.on_ask_clicked)
        self.stop_button.clicked.connect(self.on_stop_clicked)
        self.copy_button.clicked.connect(self.on_copy_clicked)
        self.export_button.clicked.connect(self.on_export_clicked)
        self.copy_action.triggered.connect(self.on_copy_clicked)
        self.export_action.triggered.connect(self.on_export_clicked)
        self.settings_action.triggered.connect(self.on_settings_clicked)
        self.new_action.triggered.connect(self.library.on_new_clicked)
        self.add_files_action.triggered.connect(self.library.on_add_files_clicked)
        self.add_folder_action.triggered.connect(self.library.on_add_folder_clicked)
        self.quit_action.triggered.connect(self.close)
        self.library.collection_changed.connect(self.on_collection_changed)
        self.library.documents_changed.connect(self.on_documents_changed)
        self.library.busy_changed.connect(self.on_library_busy)
        self.library.password_requested.connect(self.on_password_requested)
        self.answer_view.citation_activated.connect(self.on_citation_activated)
        self.sources.source_activated.connect(self.on_citation_activated)

    def _restore_state(self) -> None:
        ui = self.settings.ui
        if not (ui.window_geometry and self.restoreGeometry(_from_base64(ui.window_geometry))):
            self.resize(1400, 860)
        if ui.splitter_state and not self.splitter.restoreState(_from_base64(ui.splitter_state)):
            log.warning("ignoring saved panel widths that do not fit this window's panels")
        self.library.refresh_collections(select=ui.last_collection)
        self._update_ask_button()

    # ----- ask -----------------------------------------------------------------------------

    @Slot()
    def on_ask_clicked(self) -> None:
        """Ask the question in the box."""
        q = self.question.text().strip()
        if q:
            self.ask(q)

    @Slot()
    def on_question_return_pressed(self) -> None:
        """Enter in the question box is the Ask button: nothing while it is disabled."""
        if self.ask_button.isEnabled():
            self.on_ask_clicked()

    def _update_ask_button(self) -> None:
        """Ask is enabled with a collection, no answer running and no index write going on."""
        running = self.ask_task is not None and self.ask_task.is_running
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
        if self.ask_task is not None and self.ask_task.is_running:
            return None
        session = self._ask_session()
        prepare = not self._models_ready

        def op(col: Collection, ctx: TaskContext) -> Answer:
            if prepare:
                _load_models(session, ctx)
            return session.ask(
                col, question, on_token=ctx.on_token, progress=ctx.progress, cancel=ctx.cancel
            )

        self.answer = None
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
        task.succeeded.connect(self.on_answer_ready)
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
        """Show the stage of the running question in the status bar."""
        text = STAGE_TEXT.get(p.stage, p.stage)
        if p.stage == "generate" and p.done:
            text = f"Writing the answer… {p.done} tokens"
        self.statusBar().showMessage(text)

    @Slot(str)
    def on_model_status(self, message: str) -> None:
        """Show model loading in the permanent status label."""
        self.model_status.setText(f"Models: {message}")

    @Slot(object)
    def on_answer_ready(self, answer: Answer) -> None:
        """Render the verified answer and its sources."""
        self.answer = answer
        self._models_ready = True
        self.answer_view.show_answer(answer)
        self.sources.set_passages(answer.passages, abstained=answer.abstained)
        self._set_answer_actions(True)
        t = answer.timings_ms
        counts = label_counts(s.label for s in answer.sentences)
        summary = ", ".join(
            f"{n} {label.value.replace('_', ' ')}" for label, n in counts.items() if n
        )
        times = " · ".join(
            f"{k} {t[k] / 1000:.1f} s" for k in ("retrieve", "generate", "verify") if k in t
        )
        self.answer_info.setText(" · ".join(x for x in (summary, times) if x))
        names = [str(m.get("name", "")) for m in answer.models.values() if m.get("name")]
        if names:
            self.model_status.setText("Models: " + " · ".join(Path(n).name for n in names))
        self.statusBar().showMessage(
            "Not found in your documents."
            if answer.abstained
            else "Answer verified. Hover or Tab through sentences for evidence.",
            10000,
        )

    @Slot()
    def on_ask_finished(self) -> None:
        """Re-enable asking."""
        self._update_ask_button()
        self.stop_button.setEnabled(False)

    @Slot()
    def on_stop_clicked(self) -> None:
        """Stop the running question."""
        if self.ask_task is not None:
            self.ask_task.cancel()

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
        """Follow the current collection."""
        shown = self.library.display_name(name)
        self.setWindowTitle(f"VerifAI Desktop — {shown}" if name else "VerifAI Desktop")
        self._update_ask_button()
        self.question.setPlaceholderText(
            f"Ask a question about the documents in “{shown}”…"
            if name
            else "Create a collection and add documents first"
        )

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

    def apply_settings(self, settings: Settings) -> None:
        """Use ``settings`` from now on (a new ask session, so changed models load afresh)."""
        self.settings = dataclasses.replace(settings, ui=self.settings.ui)
        if self.ask_task is None or not self.ask_task.is_running:
            self._session = None  # the next question builds AskSession(settings) afresh
            self._models_ready = False
            self.model_status.setText("Models: not loaded (settings changed)")

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
        if self.library.busy and not self._confirm_quit():
            event.ignore()
            return
        try:
            self.save_state()
        except OSError as exc:
            log.warning("could not save window state: %s", exc)
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


def _to_base64(data: QByteArray) -> str:
    return bytes(data.toBase64().data()).decode("ascii")


def _from_base64(text: str) -> QByteArray:
    return QByteArray.fromBase64(text.encode("ascii"))


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
