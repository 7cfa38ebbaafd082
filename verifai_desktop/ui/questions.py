"""Questions the UI asks the user, as objects answered by signal (qutebrowser's
``usertypes.Question``): whoever raises one emits it, whoever can answer it (a prompt widget,
a test) connects to it and calls :meth:`Question.answer` or :meth:`Question.cancel`.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QInputDialog, QLineEdit, QWidget


class Question(QObject):
    """A question waiting for its answer.

    Signals:
        answered(str): the user answered (emitted once).
        cancelled(): the user declined (emitted once).
        completed(): after ``answered`` or ``cancelled``.
    """

    answered = Signal(str)
    cancelled = Signal()
    completed = Signal()

    def __init__(self, title: str, text: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self.text = text
        self.answer_text: str | None = None
        self.is_done = False

    def answer(self, value: str) -> None:
        """Answer with ``value``; an empty value counts as cancelled."""
        if self.is_done:
            return
        self.is_done = True
        if value:
            self.answer_text = value
            self.answered.emit(value)
        else:
            self.cancelled.emit()
        self.completed.emit()

    def cancel(self) -> None:
        """Decline to answer."""
        if self.is_done:
            return
        self.is_done = True
        self.cancelled.emit()
        self.completed.emit()


class PasswordQuestion(Question):
    """The password of an encrypted PDF.

    Attributes:
        path: the PDF.
        wrong: True when a password given for it before was wrong.
    """

    def __init__(self, path: Path, *, wrong: bool = False, parent: QObject | None = None) -> None:
        text = (
            f"The password for {path.name} was wrong. Try again:"
            if wrong
            else f"{path.name} is encrypted. Enter its password to index it:"
        )
        super().__init__("Password needed", text, parent)
        self.path = path
        self.wrong = wrong


def prompt_password(parent: QWidget, question: PasswordQuestion) -> QInputDialog:
    """Answer ``question`` with a window-modal password dialog (opened, not exec'd)."""
    dialog = QInputDialog(parent)
    dialog.setWindowTitle(question.title)
    dialog.setLabelText(question.text)
    dialog.setTextEchoMode(QLineEdit.EchoMode.Password)
    dialog.textValueSelected.connect(question.answer)
    dialog.rejected.connect(question.cancel)
    dialog.open()
    return dialog
