"""The main window's question box at work: a question asked, or a claim checked, on the worker.

The box has two modes: Ask (a verified answer, :meth:`AskSession.ask`) and Check a claim
(what every document of the collection says about a statement, :meth:`AskSession.check_claim`);
an answer sentence's context menu checks that sentence the same way. :class:`Asking`, a part
of :class:`~verifai_desktop.ui.main_window.MainWindow` built on
:class:`~verifai_desktop.ui.window_base.WindowBase`, runs either through the window's
:class:`~verifai_desktop.ui.operations.CollectionHost` (the op on the worker, its results on
the UI thread): it streams the answer's pieces and the stages' progress to the answer pane and
the status bar, and Stop cancels it. A claim is validated by the pipeline's
:func:`~verifai_desktop.pipeline.claim_to_check` before a check starts.

The pipeline is imported on the first question or check, and the models are resolved then, on
the worker, with a visible status (:meth:`AskSession.prepare`). Each verified answer and each
claim check is kept in its collection's history on the worker that made it
(:func:`~verifai_desktop.keep.keep_in_history`); when it cannot be, the status bar says so.

A question or check belongs to the screen (collection and mode,
:mod:`~verifai_desktop.ui.shown_state`) it was started on: its stream and result are shown
there only, and kept for it while another screen is on show; the question box of another
screen says where it runs (:mod:`~verifai_desktop.ui.running`).
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QAbstractButton

from verifai_desktop.check_view import check_summary
from verifai_desktop.domain import Answer, CheckResult, Progress
from verifai_desktop.errors import Cancelled, EmptyClaim
from verifai_desktop.hardware import Hardware
from verifai_desktop.keep import Kept, keep_in_history
from verifai_desktop.presentation import NOT_FOUND_TEXT, UNSUPPORTED_TEXT
from verifai_desktop.ui.answer_view import ANSWER_HINT, CHECK_HINT
from verifai_desktop.ui.ask_stages import (
    LOADING_GENERATOR_TEXT,
    MODELS_LOADED_TEXT,
    SEARCHING_CAPTION,
    previous_kept_note,
    previous_note,
    sources_caption,
    stage_text,
)
from verifai_desktop.ui.operations import OpenCollection
from verifai_desktop.ui.running import Running
from verifai_desktop.ui.shown_state import (
    CHECK_SOURCES_TEXT,
    ScreenKey,
    ShownState,
    answer_summary,
)
from verifai_desktop.ui.tasks import Task, TaskContext
from verifai_desktop.ui.window_base import ASK_MODE, CHECK_MODE

if TYPE_CHECKING:
    from verifai_desktop.pipeline import AskSession

log = logging.getLogger(__name__)

RUN_TEXT = {ASK_MODE: "Ask", CHECK_MODE: "Check"}
ANSWER_STATUS = "Answer verified. Hover or Tab through sentences for evidence."
CHECKING_TEXT = "Searching your documents for passages that support or contradict the claim…"


class Asking(Running):
    """The window's part that runs questions and claim checks.

    :attr:`ask_task` is the running question, if any, and :attr:`check_task` the running
    claim check.
    """

    # ----- the question box ----------------------------------------------------------------

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
        """Follow the mode in the run button, the placeholder and the empty view's hint, and
        show the mode's own screen (:meth:`switch_shown`)."""
        if not checked:
            return
        self.ask_button.setText(RUN_TEXT[self.mode])
        self.answer_view.hint_text = CHECK_HINT if self.mode == CHECK_MODE else ANSWER_HINT
        self.answer_view.viewport().update()
        self._update_placeholder()
        self.show_screen()

    def show_screen(self) -> None:
        """Show the screen of the current collection and mode (:meth:`switch_shown`); the
        prompt reading bar only on the screen of the question reading; the question box's
        buttons and busy line for it."""
        known = [n.folder for n in self.library.collection_list.names]
        self.switch_shown((self.library.current, self.mode), known=known)
        if self.run_key != self.shown_key:
            self.read_bar.hide()
        self._update_ask_button()
        self.say_run_status()

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

    # ----- ask -----------------------------------------------------------------------------

    def ask(self, question: str) -> Task[Answer] | None:
        """Answer ``question`` from the current collection in the background.

        The sources panel lists the passages as soon as the search finds them; the answer
        on show (if any) stays, greyed and detached from its citations and cards
        (:meth:`AnswerView.dim`: they would point at the new passages) and marked as the
        previous question's, until the new answer's first piece replaces it
        (:meth:`on_text_streamed`), and comes back whole when the question is stopped or
        fails before then (:meth:`on_ask_finished`). Tokens stream
        into the answer view; when the answer is verified each sentence takes its label
        style. The status bar names the stage running (:func:`stage_text`).
        """
        name = self._collection_to_run()
        if not name:
            return None
        session = self._ask_session()
        prepare = not self._models_ready
        settings = self.settings
        kept: list[Kept] = []  # the answer's place in the history, written before the op ends

        def op(col: OpenCollection, ctx: TaskContext) -> Answer:
            if prepare:
                session.prepare(progress=ctx.report_status, cancel=ctx.cancel)
                ctx.status(LOADING_GENERATOR_TEXT)
            answer = session.ask(
                col, question, on_token=ctx.on_token, progress=ctx.progress, cancel=ctx.cancel
            )
            # recorded with the thresholds the preset applied
            applied = dataclasses.replace(settings, verify=session.thresholds())
            kept.append(keep_in_history(col, answer, applied))
            return answer

        key = (name, self.mode)

        def answered(answer: Answer) -> None:
            k = kept[0] if kept else Kept()
            ref = (name, k.answer_id) if k.answer_id is not None else None
            self.on_answer_ready(answer, kept=ref, warning=k.warning, key=key)

        previous = self.answer
        if previous is None:
            self._replace_shown()
        else:
            if self.answer_view.answer is not None:
                self._generated_shown = self.answer_view.generated_shown
            self.answer_view.dim()
            self.answer_info.setText(previous_note(previous.question))
        self.sources.clear(SEARCHING_CAPTION)
        # The previous answer's page would read as a source of the new one.
        self.document_view.clear()
        self.tabs.setCurrentWidget(self.sources)
        self._set_answer_actions(previous is not None)  # Copy and Export act on it meanwhile
        task = self.host.query("ask", name, op)
        self.ask_task = task
        self._start_run(key)
        self.run_keeps_previous = previous is not None
        task.text_streamed.connect(self.on_text_streamed)
        task.progressed.connect(self.on_ask_progress)
        task.succeeded.connect(answered)
        self._follow(task, "Answering the question", self.on_ask_finished)
        return task

    def _replace_shown(self) -> None:
        """Forget the answer or check on show and start the new answer's stream."""
        self.answer = None
        self.check_result = None
        self._forget_history_ref()
        self.answer_view.begin_stream()
        self.answer_info.setText("")
        self._set_answer_actions(False)

    @Slot(str)
    def on_text_streamed(self, piece: str) -> None:
        """A piece of the answer being written: shown while its screen is; the first replaces
        the previous answer (on show, or kept for the run's screen)."""
        self.run_streamed += piece
        key = self.run_key
        if key is None:
            return
        on_show = self.is_on_show(key)
        if self.run_keeps_previous:
            self.run_keeps_previous = False
            if on_show:
                self._replace_shown()
            else:
                self.keep_for(key, ShownState(self.kept_state(key).question))
        if on_show:
            self.answer_view.append_stream(piece)

    def _show_previous(self) -> None:
        """Show again, in its colours, the answer (or the check over it) that a question
        stopped or failed before its answer began had greyed out."""
        if self.check_result is not None:
            self.answer_view.show_check(self.check_result, back=self.answer is not None)
        elif self.answer is not None:
            self._show_answer(self.answer, show_generated=self._generated_shown)

    def _show_progress(self, text: str) -> None:
        """The running question's stage, in the answer pane while its screen is on show."""
        self.run_note = text
        if self.run_key is not None and self.is_on_show(self.run_key):
            self.answer_view.show_progress(text)

    def _ask_session(self) -> AskSession:
        if self._session is None:
            # Deferred on purpose: the pipeline pulls in onnxruntime and the model libraries,
            # which the window must not import before the first question.
            from verifai_desktop.pipeline import AskSession

            self._session = AskSession(self.settings)
        return self._session

    @Slot(object)
    def on_ask_progress(self, p: Progress) -> None:
        """Show the stage of the running question in the status bar (:func:`stage_text`)
        and, until the answer streams, in an empty answer pane; prompt reading also as a bar
        of tokens read. The passages found, then those given to the generator, go to the
        sources panel at once."""
        text = stage_text(p, first_answer=not self._models_ready)
        on_show = self.run_key is not None and self.is_on_show(self.run_key)
        if p.stage == "read" and p.total and on_show:
            self.read_bar.setRange(0, p.total)
            self.read_bar.setValue(p.done)
            self.read_bar.show()
        else:
            self.read_bar.hide()
        if p.stage in ("rerank", "retrieve", "prompt", "read") or (
            p.stage == "generate" and not p.done
        ):
            self._show_progress(text)
        if p.stage == "prompt" and not self._models_ready:
            self.model_status.setText(f"Models: {MODELS_LOADED_TEXT}")
        if p.passages and p.stage in ("retrieve", "prompt"):
            self.run_passages, self.run_caption = p.passages, sources_caption(p)
            if on_show:
                self.sources.set_passages(p.passages, caption=self.run_caption)
        self._run_message(text)

    def on_answer_ready(
        self,
        answer: Answer,
        *,
        kept: tuple[str, int] | None = None,
        warning: str = "",
        key: ScreenKey | None = None,
    ) -> None:
        """Render the verified answer and its sources; after the first, show the devices.

        Args:
            answer: the answer.
            kept: (collection folder, history id) when it was kept in the history.
            warning: why it was not kept (:attr:`Kept.warning`), shown in the status bar.
            key: the screen it was asked on (None: the one on show); another screen keeps
                it until it is switched to.
        """
        first = not self._models_ready
        self._models_ready = True
        if first:
            self.detect_devices()
        names = [str(m.get("name", "")) for m in answer.models.values() if m.get("name")]
        if names:
            self.model_status.setText("Models: " + " · ".join(Path(n).name for n in names))
        if key is not None and not self.is_on_show(key):
            state = ShownState(self.kept_state(key).question, answer, kept)
            self._keep_result(key, state, f"The answer to “{answer.question}”", warning)
            return
        self.answer = answer
        self.check_result = None  # a check over the previous answer, kept until now
        self.check_ref = None
        self.history_ref = kept
        self._marks = ()
        self.reopened_note.hide()
        self._show_answer(answer)
        self.sources.set_answer(answer)
        if kept is not None and kept[0] == self.history.collection:
            self.history.refresh(select=kept[1])
        self._set_answer_actions(True)
        self.answer_info.setText(answer_summary(answer))
        if warning:
            self.statusBar().showMessage(f"{answer_status(answer)} Warning: {warning}", 20000)
        else:
            self.statusBar().showMessage(answer_status(answer), 10000)

    def _keep_result(self, key: ScreenKey, state: ShownState, what: str, warning: str) -> None:
        """A result for screen ``key``, not on show: kept as its state, listed in the
        history, and the status bar says where it is."""
        self.keep_for(key, state)
        ref = state.check_ref if state.check is not None else state.history_ref
        if ref is not None and ref[0] == self.history.collection:
            self.history.refresh()
        shown = self.library.display_name(key[0])
        mode = "Check a claim" if key[1] == CHECK_MODE else "Ask a question"
        text = f"{what} is ready in “{shown}” ({mode})."
        self.statusBar().showMessage(f"{text} Warning: {warning}" if warning else text, 20000)

    @Slot()
    def on_ask_finished(self) -> None:
        """Re-enable asking. A question stopped or failed before its answer began leaves the
        previous answer whole (its sources and actions back, a line saying so) or, with none,
        an empty answer pane."""
        key, self.run_key = self.run_key, None
        self.read_bar.hide()
        self._update_ask_button()
        self.stop_button.setEnabled(False)
        task = self.ask_task
        if key is None or task is None or task.outcome == "succeeded":
            return
        if not self.is_on_show(key) or self.run_streamed:
            return
        if self.run_keeps_previous and self.answer is not None:
            self._show_previous()
            self.sources.set_answer(self.answer)
            self.answer_info.setText(previous_kept_note(self.answer.question, task.outcome))
            if task.outcome == "cancelled":
                self.statusBar().showMessage(
                    "Stopped before the answer began; the previous answer is still shown.", 8000
                )
        else:
            self.answer_view.clear_answer()

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
        name = self._collection_to_run()
        if not name:
            return None
        if self.library.busy:
            self.statusBar().showMessage("Wait for the documents to finish indexing.", 5000)
            return None
        # Deferred like the session (_ask_session), which this check creates next anyway.
        from verifai_desktop.pipeline import claim_to_check

        try:
            text = claim_to_check(claim)
        except EmptyClaim:
            self.statusBar().showMessage("Type a statement to check.", 5000)
            return None
        session = self._ask_session()
        prepare = not self._models_ready
        settings = self.settings
        kept: list[Kept] = []  # the check's place in the history, written before the op ends

        def op(col: OpenCollection, ctx: TaskContext) -> CheckResult:
            if prepare:
                session.prepare(generator=False, progress=ctx.report_status, cancel=ctx.cancel)
            if ctx.cancel.is_set():
                raise Cancelled("check")
            # Stop is heard between verifier batches; the search itself is quick.
            result = session.check_claim(col, text, cancel=ctx.cancel)
            if ctx.cancel.is_set():
                raise Cancelled("check")
            # recorded with the thresholds the preset applied
            applied = dataclasses.replace(settings, verify=session.thresholds())
            kept.append(keep_in_history(col, result, applied))
            return result

        keep = from_answer and self.answer is not None
        key = (name, self.mode)

        def checked(result: CheckResult) -> None:
            k = kept[0] if kept else Kept()
            ref = (name, k.answer_id) if k.answer_id is not None else None
            self.on_check_ready(result, back=keep, kept=ref, warning=k.warning, key=key)

        self._generated_shown = keep and self.answer_view.generated_shown
        self.check_result = None
        self.check_ref = None
        if not keep:
            self.answer = None
            self._forget_history_ref()
            self.sources.clear(CHECK_SOURCES_TEXT)
            self.document_view.clear()
            self.tabs.setCurrentWidget(self.sources)
        self._set_answer_actions(False)
        pending = f"Checking “{text}” across your documents…"
        self.answer_view.show_pending(pending)
        self.answer_info.setText("")
        self.statusBar().showMessage(CHECKING_TEXT)
        task = self.host.query("check", name, op)
        self.check_task = task
        self._start_run(key, pending)
        task.succeeded.connect(checked)
        self._follow(task, "Checking the claim", self.on_check_finished)
        return task

    @Slot(str)
    def on_claim_check_requested(self, claim: str) -> None:
        """ "Check across my documents" on an answer sentence: check its claim."""
        if self.check(claim, from_answer=True) is None and self.working:
            self.statusBar().showMessage("Wait for the running question or check to end.", 5000)

    def on_check_ready(
        self,
        result: CheckResult,
        *,
        back: bool = False,
        kept: tuple[str, int] | None = None,
        warning: str = "",
        key: ScreenKey | None = None,
    ) -> None:
        """Show the claim check in the answer area; Copy, Export and (when it was kept in
        the history) its audit record act on it.

        Args:
            result: the check.
            back: the shown answer is kept; link back to it.
            kept: (collection folder, history id) when it was kept in the history.
            warning: why it was not kept (:attr:`Kept.warning`), shown in the status bar.
            key: the screen it was made on (None: the one on show); another screen keeps it
                until it is switched to.
        """
        if key is not None and not self.is_on_show(key):
            state = dataclasses.replace(self.kept_state(key), check=result, check_ref=kept)
            self._keep_result(key, state, f"The check of “{result.claim}”", warning)
            return
        self.check_result = result
        self.check_ref = kept
        self.answer_view.show_check(result, back=back and self.answer is not None)
        self.answer_info.setText(check_summary(result))
        self._set_answer_actions(True)
        if kept is not None and kept[0] == self.history.collection:
            self.history.refresh(select=kept[1])
        text = "Claim checked. Click a passage to open it."
        self.statusBar().showMessage(f"{text} Warning: {warning}" if warning else text, 10000)

    @Slot()
    def on_check_finished(self) -> None:
        """Re-enable asking; after a failed or stopped check, show the answer again."""
        key, self.run_key = self.run_key, None
        self._update_ask_button()
        self.stop_button.setEnabled(False)
        if key is not None and not self.is_on_show(key):
            return  # its screen keeps what it showed before the check
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
        self.check_ref = None
        self._show_answer(self.answer, show_generated=self._generated_shown)
        self._set_answer_actions(True)
        self.answer_info.setText(answer_summary(self.answer))

    # ----- devices -------------------------------------------------------------------------

    def detect_devices(self) -> Task[Hardware]:
        """Find where the generator, verifier and embedder run, on a worker; the status bar
        shows it (:meth:`on_hardware_detected`). A verifier already loaded reports its own
        ONNX Runtime provider."""
        from verifai_desktop import hardware
        from verifai_desktop.verify.nli import OnnxVerifier

        models = self.settings.models
        session = self._session if self._models_ready else None

        def work(ctx: TaskContext) -> Hardware:
            verifier = session.verifier if session else None
            provider = verifier.provider if isinstance(verifier, OnnxVerifier) else None
            return hardware.detect(models, verifier_provider=provider)

        task = self.runner.submit("detect devices", work)
        task.succeeded.connect(self.on_hardware_detected)
        task.failed.connect(lambda exc: log.warning("cannot detect the devices: %s", exc))
        return task

    @Slot(object)
    def on_hardware_detected(self, hw: Hardware) -> None:
        """Show the device of each model in the status bar (details in its tooltip)."""
        self.device_status.setText(f"Devices: {hw.summary()}")
        self.device_status.setToolTip("\n".join(hw.lines()))


def answer_status(answer: Answer) -> str:
    """The status-bar message for a new answer: verified, not found (nothing close enough
    retrieved) or not supported (no sentence of the generated answer supported)."""
    if answer.refused_by_evidence:
        return f"{UNSUPPORTED_TEXT}: no sentence of the generated answer is supported."
    if answer.abstained:
        return f"{NOT_FOUND_TEXT}."
    return ANSWER_STATUS
