"""The main window: library on the left, question and verified answer in the middle, sources,
the document view and the history of past questions on the right, model status in the status
bar.

:class:`MainWindow` is made of parts, each a module: the widgets, menus and shared state
(:mod:`~verifai_desktop.ui.window_base`), questions and claim checks run on the worker
(:mod:`~verifai_desktop.ui.asking`), which collection the running one belongs to and what the
question box says of it (:mod:`~verifai_desktop.ui.running`), copying and saving answers and
audit records (:mod:`~verifai_desktop.ui.exporting`). Here: the one place the signals are
wired, and what follows the library, the sources, the history and the settings.

No model or index library is imported here: the pipeline is imported on the first question,
so the window opens at once and models load, with a visible status, on the first question.
Collection work goes through one :class:`~verifai_desktop.ui.operations.CollectionHost` (one
open collection, ops run on the worker, results on the UI thread); window state is assigned on
the UI thread only.

The History tab reopens past answers as they were verified, and the answer's context menu
takes the reader's marks on its verdicts. While ``settings.watch.enabled``, the open
collection follows its folders (:class:`~verifai_desktop.ui.watching.FolderFollower`).
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

from PySide6.QtCore import QByteArray, Slot
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QMessageBox, QWidget

from verifai_desktop.domain import Evidence, Passage
from verifai_desktop.generate.openai_server import leaves_machine_warning
from verifai_desktop.settings import Settings, save_settings
from verifai_desktop.store.history import Feedback
from verifai_desktop.ui.asking import Asking
from verifai_desktop.ui.evidence_popup import evidence_span
from verifai_desktop.ui.exporting import Exporting
from verifai_desktop.ui.history_panel import OpenedAnswer, changes_note, changes_tip
from verifai_desktop.ui.models_dialog import ModelsDialog
from verifai_desktop.ui.questions import PasswordQuestion, prompt_password
from verifai_desktop.ui.reading_layout import DEFAULT_WINDOW, panel_widths, window_size
from verifai_desktop.ui.settings_dialog import SettingsDialog
from verifai_desktop.ui.shown_state import ShownState
from verifai_desktop.ui.window_base import ASK_MODE, CHECK_MODE

log = logging.getLogger(__name__)

NOTE_STYLE = "color:#334;background:#eef2f8;padding:4px;border-radius:3px"
CHANGED_STYLE = "color:#7a3e00;background:#fff1d6;padding:4px;border-radius:3px"


class MainWindow(Asking, Exporting):
    """The VerifAI Desktop window.

    Signals are those of its parts; :attr:`ask_task` is the running question, if any, and
    :attr:`check_task` the running claim check.

    Args:
        settings: the settings in effect; read from ``settings.toml`` if None (defaults, with
            an error shown, when it is invalid).
        offer_sample: the library offers the sample documents while it has no collection.
        parent: the parent widget.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        offer_sample: bool = True,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(settings, offer_sample, parent)
        # the colour check verifies with the window's session: one verifier in memory
        self.library.self_check.session_factory = lambda _settings: self._ask_session()
        self._connect_signals()
        self._show_server_warning()
        self._restore_state()

    def _connect_signals(self) -> None:
        self.question.returnPressed.connect(self.on_question_return_pressed)
        self.ask_button.clicked.connect(self.on_ask_clicked)
        self.mode_group.buttonToggled.connect(self.on_mode_toggled)
        self.stop_button.clicked.connect(self.on_stop_clicked)
        self.copy_button.clicked.connect(self.on_copy_clicked)
        self.export_button.clicked.connect(self.on_export_clicked)
        self.copy_action.triggered.connect(self.on_copy_clicked)
        self.copy_bibtex_action.triggered.connect(self.on_copy_bibtex)
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
        self.sources.source_activated.connect(self.on_source_activated)
        self.sources.conflict_activated.connect(self.on_evidence_activated)
        self.answer_view.feedback_given.connect(self.on_feedback_given)
        self.answer_view.feedback_withdrawn.connect(self.on_feedback_withdrawn)
        self.audit_action.triggered.connect(self.on_audit_clicked)
        self.history_action.triggered.connect(lambda: self.tabs.setCurrentWidget(self.history))
        self.history.answer_opened.connect(self.on_history_opened)
        self.history.answers_deleted.connect(self.on_answers_deleted)
        self.history.feedback_changed.connect(self.on_feedback_changed)
        self.legend.help_requested.connect(self.help_menu.show_colours)
        self.library.self_check.help_requested.connect(self.help_menu.show_colours)

    def _restore_state(self) -> None:
        ui = self.settings.ui
        if not (ui.window_geometry and self.restoreGeometry(_from_base64(ui.window_geometry))):
            screen = self.screen()
            self.resize(
                window_size(screen.availableGeometry().size()) if screen else DEFAULT_WINDOW
            )
        restored = bool(ui.splitter_state) and self.splitter.restoreState(
            _from_base64(ui.splitter_state)
        )
        if ui.splitter_state and not restored:
            log.warning("ignoring saved panel widths that do not fit this window's panels")
        if not restored:
            self.splitter.setSizes(panel_widths(self.width()))
        if not ui.library_shown:
            self.reading_layout.set_library_shown(False)
        self.library.refresh_collections(select=ui.last_collection)
        self._update_ask_button()

    # ----- sources and documents -----------------------------------------------------------

    @Slot(object)
    def on_evidence_activated(self, evidence: Evidence) -> None:
        """Open a passage of a claim check or a conflicting passage at its evidence."""
        self._open_passage(evidence.passage, evidence_span(evidence.passage, evidence.verdict))

    @Slot(int)
    def on_citation_activated(self, number: int) -> None:
        """Open passage ``number`` in the document view at its evidence: the window that
        decided the verdict of the focused (or hovered, or first) sentence citing it."""
        if self.answer is None or not 1 <= number <= len(self.answer.passages):
            return
        passage = self.answer.passages[number - 1]
        span = (0, 0)
        preferred = [self.answer_view.focused_index, self.answer_view.hovered_index]
        candidates = [
            self.answer.sentences[i] for i in preferred if 0 <= i < len(self.answer.sentences)
        ]
        candidates += list(self.answer.sentences)
        for sentence in candidates:
            for verdict in sentence.verdicts:
                if verdict.passage_number == number and verdict.evidence:
                    span = evidence_span(passage, verdict)
                    break
            if span != (0, 0):
                break
        self._open_passage(passage, span)

    @Slot(int)
    def on_source_activated(self, number: int) -> None:
        """Open passage ``number`` of the sources panel: the answer's at its evidence, or one
        that a running question found (nothing verified yet)."""
        passages = self.sources.passages
        if self.answer is not None and passages == self.answer.passages:
            self.on_citation_activated(number)
        elif 1 <= number <= len(passages):
            self._open_passage(passages[number - 1], (0, 0))

    def _open_passage(self, passage: Passage, span: tuple[int, int]) -> None:
        """Open ``passage`` in the document view with the evidence at ``span`` (offsets into
        its text) highlighted, its first sentence when the span is empty."""
        password = self.library.passwords.get(str(passage.path))
        self.answer_view.popup.hide()  # a hover card would cover the page being opened
        # Shown first so the page is fitted to the panel's real width and scrolled to the
        # evidence as laid out.
        self.tabs.setCurrentWidget(self.document_view)
        self.document_view.show_passage(passage, span, password=password)

    # ----- library events ------------------------------------------------------------------

    @Slot(str)
    def on_collection_changed(self, name: str) -> None:
        """Follow the current collection: its own screen (:meth:`show_screen`), its history
        listed."""
        shown = self.library.display_name(name)
        self.setWindowTitle(f"VerifAI Desktop — {shown}" if name else "VerifAI Desktop")
        self._update_ask_button()
        self._update_placeholder()
        self.show_screen()
        self.history.set_collection(name, shown)

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

    # ----- history and feedback ------------------------------------------------------------

    @Slot(object)
    def on_history_opened(self, opened: OpenedAnswer) -> None:
        """Show a past answer or claim check as it was verified, in its own mode (Ask or
        Check): colours, hover cards, sources, the reader's marks; a note says when it was
        made and which quoted documents changed since."""
        if self.working:
            self.statusBar().showMessage(
                "Wait for the running question or check to end, then choose it again.", 8000
            )
            return
        saved = opened.saved
        ref = (opened.collection, saved.answer_id)
        note = changes_note(saved.when(), opened.changes, saved.kind)
        style = CHANGED_STYLE if opened.changes else NOTE_STYLE
        if opened.check is not None:
            self.set_mode(CHECK_MODE)
            state = ShownState(saved.question, check=opened.check, check_ref=ref)
        else:
            self.set_mode(ASK_MODE)
            state = ShownState(saved.question, opened.answer, ref, opened.feedback)
        tip = changes_tip(opened.changes)
        self.show_state(dataclasses.replace(state, note=note, note_style=style, note_tip=tip))
        what = "Claim check" if opened.check is not None else "Answer"
        self.statusBar().showMessage(f"{what} of {saved.when()} reopened as it was verified.", 8000)

    @Slot(str, object)
    def on_answers_deleted(self, name: str, answer_ids: tuple[int, ...] | None) -> None:
        """Entries were deleted from a history: the shown answer or check, if among them, is
        no longer kept (no marks, no audit record); it stays on screen. Other screens forget
        them too."""
        self.forget_kept_refs(name, answer_ids)
        shown = self.shown_state()
        kept = shown.without_refs(name, answer_ids)
        if kept == shown:
            return
        self.history_ref, self._marks, self.check_ref = kept.history_ref, kept.marks, kept.check_ref
        self.reopened_note.hide()
        if self.history_ref is None:
            self.answer_view.set_history(None)
        self._set_answer_actions(self.answer is not None or self.check_result is not None)
        what = "claim check" if shown.check_ref != kept.check_ref else "answer"
        self.statusBar().showMessage(f"The {what} on show was deleted from the history.", 8000)

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
        self.apply_citations()
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
            library_shown=self.reading_layout.library_shown,
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


def _to_base64(data: QByteArray) -> str:
    return bytes(data.toBase64().data()).decode("ascii")


def _from_base64(text: str) -> QByteArray:
    return QByteArray.fromBase64(text.encode("ascii"))
