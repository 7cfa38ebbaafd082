"""One screen per collection and mode: what the middle panel shows (the question, the answer or
claim check with its place in the history, the note over a reopened one) is kept for each
collection and each mode of the question box, so switching never leaves another's answer,
question or button on screen, and switching back shows that collection's and mode's last state.

:class:`ShownStates`, a part of :class:`~verifai_desktop.ui.main_window.MainWindow` built on
:class:`~verifai_desktop.ui.window_base.WindowBase` (below
:class:`~verifai_desktop.ui.asking.Asking`), takes a snapshot of the screen
(:class:`ShownState`) when it switches away (:meth:`ShownStates.switch_shown`) and shows the
snapshot of the screen it switches to. A question or check still running for a screen that is
not on show keeps its result for that screen (:meth:`ShownStates.is_on_show`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from PySide6.QtWidgets import QWidget

from verifai_desktop.check_view import check_summary
from verifai_desktop.domain import Answer, CheckResult, Passage
from verifai_desktop.presentation import NOT_FOUND_TEXT, passages_given_text
from verifai_desktop.settings import Settings
from verifai_desktop.store.history import Feedback
from verifai_desktop.ui.ask_stages import previous_note
from verifai_desktop.ui.window_base import ASK_MODE, WindowBase

ScreenKey = tuple[str, str]
"""(collection folder name, mode of the question box): whose screen it is."""

CHECK_SOURCES_TEXT = "The passages of the check are listed in the answer area."
"""The sources panel's caption while a claim check (not an answer) is on show."""

NOT_SUPPORTED_SUMMARY = "Not supported"  # summary line of an answer refused by evidence


@dataclass(frozen=True, slots=True)
class ShownState:
    """What one screen (a collection in one mode) shows.

    Attributes:
        question: the question box's text.
        answer: the answer on show, or the answer a shown sentence check came from.
        history_ref: (collection folder, history id) of ``answer``; None when not kept.
        marks: the reader's marks on ``answer``.
        generated_shown: the generated text of a refused ``answer`` is on show.
        check: the claim check on show, if any (over ``answer`` when it came from one of its
            sentences).
        check_ref: (collection folder, history id) of ``check``; None when not kept.
        note: the note over a reopened answer or check ('' when none).
        note_style: the note's style sheet.
        note_tip: the note's tooltip (the full paths of the documents it names).
    """

    question: str = ""
    answer: Answer | None = None
    history_ref: tuple[str, int] | None = None
    marks: tuple[Feedback, ...] = ()
    generated_shown: bool = False
    check: CheckResult | None = None
    check_ref: tuple[str, int] | None = None
    note: str = ""
    note_style: str = ""
    note_tip: str = ""

    def without_refs(self, collection: str, ids: tuple[int, ...] | None) -> ShownState:
        """This state with its history places in ``collection`` among ``ids`` (None: all)
        forgotten: those entries were deleted from the history."""

        def gone(ref: tuple[str, int] | None) -> bool:
            return ref is not None and ref[0] == collection and (ids is None or ref[1] in ids)

        state = self
        if gone(state.history_ref):
            state = replace(state, history_ref=None, marks=())
        if gone(state.check_ref):
            state = replace(state, check_ref=None)
        return state


def answer_summary(answer: Answer) -> str:
    """``"3 supported, 1 contradicted · 6 of 10 passages given (reading budget) · retrieve
    0.2 s · generate 9.1 s · verify 1.3 s"`` (:func:`passages_given_text`); an abstention
    leads with why: ``"Not found in your documents · retrieve 0.2 s"``,
    ``"Not supported: 2 no evidence, 1 contradicted · 10 passages given · …"``."""
    t = answer.timings_ms
    counts = answer.label_counts()
    summary = ", ".join(f"{n} {label.value.replace('_', ' ')}" for label, n in counts.items() if n)
    if answer.refused_by_evidence:
        summary = f"{NOT_SUPPORTED_SUMMARY}: {summary}" if summary else NOT_SUPPORTED_SUMMARY
    elif answer.abstained:
        summary = NOT_FOUND_TEXT
    times = " · ".join(
        f"{k} {t[k] / 1000:.1f} s" for k in ("retrieve", "generate", "verify") if k in t
    )
    return " · ".join(x for x in (summary, passages_given_text(answer), times) if x)


class ShownStates(WindowBase):
    """The window's part that keeps one screen per collection and mode.

    :attr:`shown_key` is the screen on show; :attr:`check_ref` the history place of the
    claim check on show (:attr:`history_ref` is the answer's).
    """

    def __init__(
        self, settings: Settings | None, offer_sample: bool, parent: QWidget | None
    ) -> None:
        super().__init__(settings, offer_sample, parent)
        self.shown_key: ScreenKey = ("", ASK_MODE)  # no collection yet, Ask mode
        self._states: dict[ScreenKey, ShownState] = {}  # the screens not on show
        # The screen a question or check runs for (None: none runs), what it streamed so
        # far, its progress note, the passages it found with their caption, and whether the
        # screen's previous answer stays until the stream begins: shown again when its
        # screen is switched back to.
        self.run_key: ScreenKey | None = None
        self.run_streamed = ""
        self.run_note = ""
        self.run_passages: tuple[Passage, ...] = ()
        self.run_caption = ""
        self.run_keeps_previous = False
        self.run_status = ""  # its last status-bar text, said again on switching screens

    def shown_state(self) -> ShownState:
        """A snapshot of the screen on show."""
        view = self.answer_view
        # The view knows while it shows the answer; under a sentence's check (or while one
        # runs) the window keeps it.
        generated = view.generated_shown if view.answer is not None else self._generated_shown
        note = self.reopened_note
        return ShownState(
            self.question.text(),
            self.answer,
            self.history_ref,
            self._marks,
            generated_shown=generated,
            check=self.check_result,
            check_ref=self.check_ref,
            note=note.text() if not note.isHidden() else "",
            note_style=note.styleSheet(),
            note_tip=note.toolTip(),
        )

    def is_on_show(self, key: ScreenKey) -> bool:
        """Whether screen ``key`` is the one on show."""
        return key == self.shown_key

    def switch_shown(self, key: ScreenKey, *, known: Iterable[str] | None = None) -> None:
        """Show screen ``key``: the screen on show is kept, and ``key``'s last state shown
        (empty the first time).

        Args:
            key: the collection and mode to show.
            known: the collections that exist now; kept screens of others are forgotten (a
                collection deleted and made again starts empty).
        """
        if key == self.shown_key:
            return
        left = self._states[self.shown_key] = self.shown_state()
        if known is not None:
            names = {"", *known}
            self._states = {k: s for k, s in self._states.items() if k[0] in names}
        # Text typed before there was a collection is meant for the first one chosen.
        carried = left.question if self.shown_key == ("", key[1]) else ""
        self.shown_key = key
        self.show_state(self._states.pop(key, ShownState(carried)))
        if key == self.run_key:  # its question or check is still running
            if self.run_keeps_previous and self.answer is not None:
                self.answer_view.dim()  # its citations would point at the passages found
                self.answer_info.setText(previous_note(self.answer.question))
            else:
                self.answer_view.begin_stream()
                if self.run_streamed:
                    self.answer_view.append_stream(self.run_streamed)
                elif self.run_note:
                    self.answer_view.show_progress(self.run_note)
            if self.run_passages:
                self.sources.set_passages(self.run_passages, caption=self.run_caption)
            self._set_answer_actions(self.run_keeps_previous and self.answer is not None)

    def keep_for(self, key: ScreenKey, state: ShownState) -> None:
        """Keep ``state`` as screen ``key``'s (not on show), e.g. the answer a question asked
        there gave while another screen was on show."""
        self._states[key] = state

    def kept_state(self, key: ScreenKey) -> ShownState:
        """Screen ``key``'s state: the one on show, or as kept."""
        return self.shown_state() if key == self.shown_key else self._states.get(key, ShownState())

    def forget_kept_refs(self, collection: str, ids: tuple[int, ...] | None) -> None:
        """Entries ``ids`` (None: all) of ``collection``'s history were deleted: the kept
        screens no longer point at them."""
        self._states = {k: s.without_refs(collection, ids) for k, s in self._states.items()}

    def show_state(self, state: ShownState) -> None:
        """Put ``state`` on screen: question, answer or check, sources, note, actions; the
        document view is emptied (its page belonged to the screen left)."""
        self.answer = state.answer
        self.history_ref = state.history_ref
        self._marks = state.marks
        self.check_result = state.check
        self.check_ref = state.check_ref
        self._generated_shown = state.generated_shown
        self.question.setText(state.question)
        if state.check is not None:
            self.answer_view.show_check(state.check, back=state.answer is not None)
            self.answer_info.setText(check_summary(state.check))
        elif state.answer is not None:
            self._show_answer(state.answer, show_generated=state.generated_shown)
            self.answer_info.setText(answer_summary(state.answer))
        else:
            self.answer_view.clear_answer()
            self.answer_info.setText("")
        if state.answer is not None:
            self.sources.set_answer(state.answer)
        elif state.check is not None:
            self.sources.clear(CHECK_SOURCES_TEXT)
        else:
            self.sources.clear()
        self.document_view.clear()
        self.reopened_note.setText(state.note)
        self.reopened_note.setStyleSheet(state.note_style)
        self.reopened_note.setToolTip(state.note_tip)
        self.reopened_note.setVisible(bool(state.note))
        self._set_answer_actions(state.answer is not None or state.check is not None)
