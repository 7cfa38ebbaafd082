"""The actions the answer view adds to its context menu for a sentence: "Check across my
documents", showing or hiding the generated text of a refused answer, and the reader's
feedback on the sentence's verdicts ("[2] verdict is wrong ▸ Should be: Supports", "Flag this
sentence…").

The actions only call back; :class:`~verifai_desktop.ui.answer_view.AnswerView` turns them into
its signals, and the history keeps the marks (:class:`~verifai_desktop.store.history.Feedback`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from verifai_desktop.domain import AnswerSentence, NliLabel
from verifai_desktop.store.history import Feedback, FeedbackVerdict
from verifai_desktop.ui.answer_render import HIDE_GENERATED_TEXT, SHOW_GENERATED_TEXT
from verifai_desktop.ui.evidence_popup import LABEL_NAMES

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
