"""The actions the answer view adds to its context menu for a sentence: "Check across my
documents", showing or hiding the generated text of a refused answer, and the reader's
feedback on the sentence's verdicts ("[2] verdict is wrong ▸ Should be: Supports", "Flag this
sentence…").

The actions only call back; :class:`~verifai_desktop.ui.answer_view.AnswerView` turns them into
its signals, and the history keeps the marks (:class:`~verifai_desktop.store.history.Feedback`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from verifai_desktop.domain import AnswerSentence, NliLabel
from verifai_desktop.store.history import Feedback, FeedbackVerdict
from verifai_desktop.ui.answer_render import HIDE_GENERATED_TEXT, SHOW_GENERATED_TEXT
from verifai_desktop.ui.evidence_popup import LABEL_NAMES

if TYPE_CHECKING:
    from verifai_desktop.ui.answer_view import AnswerView

LINK_COPY_ACTION = "link-copy"
"""Object name of the "Copy Link Location" action Qt's standard text menu adds over a link."""

CHECK_ACTION_TEXT = "Check across my documents"
CHECK_ACTION_TIP = (
    "Search every document of this collection for passages that support or contradict this sentence"
)
FLAG_ACTION_TEXT = "Flag this sentence…"
CLEAR_FEEDBACK_TEXT = "Clear my marks on this sentence"
NOT_SURE_TEXT = "Not sure"
FEEDBACK_OFF_TIP = (
    "Marks are kept with the answer in the collection's history: turn on "
    "“Keep every verified answer” in Settings"
)

Judge = Callable[[int, str, FeedbackVerdict, NliLabel | None], None]
"""Called with (passage number, label shown, "right" or "wrong", the label it should be)."""


def lead_with(menu: QMenu, action: QAction) -> None:
    """Put ``action`` first in ``menu``, set off by a separator from the actions below it."""
    if menu.actions():
        first = menu.actions()[0]
        menu.insertAction(first, action)
        menu.insertSeparator(first)
    else:
        menu.addAction(action)


def generated_toggle(menu: QMenu, shown: bool, toggle: Callable[[], None]) -> QAction:
    """The action that hides (``shown``) or shows the generated text of a refused answer."""
    action = QAction(HIDE_GENERATED_TEXT if shown else SHOW_GENERATED_TEXT, menu)
    action.setObjectName("toggleGeneratedAction")
    action.triggered.connect(toggle)
    return action


def check_action(menu: QMenu, check: Callable[[], None]) -> QAction:
    """The "Check across my documents" action, calling ``check`` when chosen."""
    action = QAction(CHECK_ACTION_TEXT, menu)
    action.setObjectName("checkSentenceAction")
    action.setToolTip(CHECK_ACTION_TIP)
    action.setStatusTip(CHECK_ACTION_TIP)
    action.triggered.connect(check)
    return action


def add_feedback_actions(
    menu: QMenu,
    sentence: AnswerSentence,
    marks: Sequence[Feedback],
    *,
    enabled: bool,
    judge: Judge,
    flag: Callable[[], None],
    withdraw: Callable[[], None],
) -> None:
    """Put the feedback actions for ``sentence`` after "Check across my documents" (the
    menu's first action): per cited verdict "[n] verdict is right" and "[n] verdict is wrong
    ▸ Should be: …", then "Flag this sentence…", and "Clear my marks on this sentence" when
    there are marks. The reader's current marks are checked.

    Args:
        menu: the context menu, led by the check action (:func:`lead_with`).
        sentence: the sentence under the mouse or focused.
        marks: the reader's judgements of this sentence (passage 0: a flag).
        enabled: the answer is kept in the history; else the actions are disabled and their
            tip says how to keep answers (:data:`FEEDBACK_OFF_TIP`).
        judge: a verdict was marked right or wrong.
        flag: "Flag this sentence…" was chosen.
        withdraw: "Clear my marks on this sentence" was chosen.
    """
    after = menu.actions()[1] if len(menu.actions()) > 1 else None
    added: list[QAction] = []
    if after is None:
        menu.addSeparator()

    def add(action: QAction) -> None:
        action.setEnabled(enabled)
        if not enabled:
            action.setToolTip(FEEDBACK_OFF_TIP)
            action.setStatusTip(FEEDBACK_OFF_TIP)
        if after is not None:
            menu.insertAction(after, action)
        else:
            menu.addAction(action)
        added.append(action)

    for verdict in sentence.verdicts:
        n = verdict.passage_number
        mine = next((f for f in marks if f.passage == n), None)
        shown = verdict.label
        right = QAction(f"[{n}] verdict is right", menu)
        right.setObjectName(f"feedbackRight{n}")
        right.setCheckable(True)
        right.setChecked(mine is not None and mine.verdict == "right")
        right.triggered.connect(
            lambda _c=False, n=n, shown=shown: judge(n, shown.value, "right", None)
        )
        add(right)
        wrong_menu = QMenu(f"[{n}] verdict is wrong", menu)
        wrong_menu.setObjectName(f"feedbackWrong{n}")
        choices: list[tuple[str, NliLabel | None]] = [
            (f"Should be: {LABEL_NAMES[label]}", label) for label in NliLabel
        ]
        choices.append((NOT_SURE_TEXT, None))
        for text, label in choices:
            choice = QAction(text, wrong_menu)
            choice.setObjectName(f"feedbackWrong{n}_{label.value if label else 'unsure'}")
            choice.setCheckable(True)
            choice.setChecked(mine is not None and mine.verdict == "wrong" and mine.label == label)
            choice.setEnabled(label is not shown)  # "wrong, should be what it is" is no mark
            choice.triggered.connect(
                lambda _c=False, n=n, shown=shown, label=label: judge(
                    n, shown.value, "wrong", label
                )
            )
            wrong_menu.addAction(choice)
        wrong_menu.menuAction().setObjectName(f"feedbackWrong{n}Action")
        add(wrong_menu.menuAction())
    flagged = next((f for f in marks if f.passage == 0), None)
    flag_action = QAction(FLAG_ACTION_TEXT, menu)
    flag_action.setObjectName("feedbackFlag")
    flag_action.setCheckable(True)
    flag_action.setChecked(flagged is not None and flagged.verdict == "flagged")
    flag_action.triggered.connect(flag)
    add(flag_action)
    if marks:
        clear = QAction(CLEAR_FEEDBACK_TEXT, menu)
        clear.setObjectName("feedbackClear")
        clear.triggered.connect(withdraw)
        add(clear)
    if after is not None:
        menu.insertSeparator(added[0])


def sentence_menu(view: AnswerView, pos: QPoint, *, keyboard: bool = False) -> QMenu:
    """The context menu at viewport point ``pos``: the standard text actions (without "Copy
    Link Location"), led by "Check across my documents" when there is a sentence to check.

    Args:
        pos: viewport point; the sentence under it is checked.
        keyboard: the menu was opened from the keyboard; the focused sentence is checked.
    """
    scroll = QPoint(view.horizontalScrollBar().value(), view.verticalScrollBar().value())
    menu = view.createStandardContextMenu(pos + scroll)  # takes document coordinates
    # Sentences and citations are links inside the app (sent:, cite:): Qt's "Copy Link
    # Location" would copy those internal addresses.
    for action in menu.actions():
        if action.objectName() == LINK_COPY_ACTION:
            menu.removeAction(action)
    index = view.focused_index if keyboard else view.sentence_at(pos)
    if index < 0:
        index = view.focused_index
    if view.answer is not None and view.answer.refused_by_evidence:
        shown = view.generated_shown
        lead_with(menu, generated_toggle(menu, shown, lambda: view.set_generated_shown(not shown)))
    if view.answer is not None and 0 <= index < view.sentence_count():
        claim = view.answer.sentences[index].claim
        lead_with(menu, check_action(menu, lambda: view.claim_check_requested.emit(claim)))
        add_feedback_actions(
            menu,
            view.answer.sentences[index],
            [f for f in view.feedback if f.sentence == index],
            enabled=view.history_id is not None,
            judge=lambda n, shown, verdict, label: _judge(view, index, n, shown, verdict, label),
            flag=lambda: _flag(view, index),
            withdraw=lambda: view.feedback_withdrawn.emit(index, -1),
        )
    return menu


def _judge(
    view: AnswerView,
    index: int,
    passage: int,
    shown: str,
    verdict: FeedbackVerdict,
    label: NliLabel | None = None,
) -> None:
    if view.history_id is None:
        return
    mine = view.feedback_of(index, passage)
    if mine is not None and mine.verdict == verdict and mine.label == label:
        view.feedback_withdrawn.emit(index, passage)  # chosen again: taken back
        return
    view.feedback_given.emit(Feedback(view.history_id, index, passage, shown, verdict, label))


def _flag(view: AnswerView, index: int) -> None:
    if view.history_id is None or view.answer is None:
        return
    note = view.ask_note(index)
    if note is None:
        return
    shown = view.answer.sentences[index].label.value
    view.feedback_given.emit(Feedback(view.history_id, index, 0, shown, "flagged", note=note))
