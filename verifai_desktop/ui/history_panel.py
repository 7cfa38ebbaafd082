"""The history panel: the answers and claim checks kept for the current collection, newest
first (a check marked :data:`CHECK_MARK`); reopening one exactly as it was verified, deleting
one or all; the readers' judgements of verdicts.

Every read and write of the history (:class:`~verifai_desktop.store.history.History`, opened
by collection name through the store's ``collection_history``; for a team collection its
role's history on the server, :meth:`~verifai_desktop.store.pg.store.PgStore.history`) runs on
the task runner's reader pool, audit record exports included: the history takes no collection
lock, so it is read and written while an ingest or a question holds the writer. Results arrive
on the UI thread as signals.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListView,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from verifai_desktop.audit import build_record, ensure_key
from verifai_desktop.audit_view import write_record
from verifai_desktop.check_view import check_summary
from verifai_desktop.domain import Answer, CheckResult
from verifai_desktop.errors import BadRecord
from verifai_desktop.store.folders import collection_history
from verifai_desktop.store.history import (
    DocumentChange,
    EntryKind,
    Feedback,
    SavedAnswer,
    changed_documents,
)
from verifai_desktop.store.history_base import AnswerHistory
from verifai_desktop.store.pg.team import is_team_key, open_team
from verifai_desktop.ui.errors import show_error
from verifai_desktop.ui.resources import icon
from verifai_desktop.ui.tasks import T, Task, TaskContext, TaskRunner
from verifai_desktop.ui.team_dialog import session_password

log = logging.getLogger(__name__)

EMPTY_TEXT = (
    "No answers kept yet: each verified answer and claim check is listed here, newest first."
)
CHECK_MARK = "☑ Claim check:"
"""Before the claim of a claim check in the list (an answer's row starts with its question)."""
NOT_KEPT_TEXT = (
    "Answers are not being kept: turn on “Keep every verified answer” in Settings to list "
    "them here."
)
NO_COLLECTION_TEXT = "Pick a collection to see its past questions."


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One row of the list.

    Attributes:
        answer_id: the entry's id in the collection's history.
        question: the question asked, or the claim checked.
        when: local time it was answered (``"2026-11-25 14:03"``).
        summary: its labels (``"2 supported, 1 no evidence"``) or ``"not answered"``; a
            check's document verdicts (``"1 document supports · 12 passages checked"``).
        marks: how many judgements the reader gave on it.
        kind: ``"answer"`` or ``"check"``.
    """

    answer_id: int
    question: str
    when: str
    summary: str
    marks: int
    kind: EntryKind = "answer"

    def text(self) -> str:
        """The row's two lines: the question (a check's claim after :data:`CHECK_MARK`), then
        time, labels and marks."""
        marks = f" · {self.marks} {'mark' if self.marks == 1 else 'marks'}" if self.marks else ""
        lead = f"{CHECK_MARK} " if self.kind == "check" else ""
        return f"{lead}{self.question}\n{self.when} · {self.summary}{marks}"


@dataclass(frozen=True, slots=True)
class OpenedAnswer:
    """A saved answer read back to be shown again.

    Attributes:
        collection: the collection (folder name) whose history holds it.
        saved: the saved entry.
        answer: the answer as verified (:meth:`SavedAnswer.answer`); None for a claim check.
        changes: the documents it quotes that changed or went missing since.
        feedback: the reader's judgements of it.
        check: the claim check as made (:meth:`SavedAnswer.check`); None for an answer.
    """

    collection: str
    saved: SavedAnswer
    answer: Answer | None
    changes: tuple[DocumentChange, ...]
    feedback: tuple[Feedback, ...]
    check: CheckResult | None = None


def changes_note(when: str, changes: tuple[DocumentChange, ...], kind: EntryKind = "answer") -> str:
    """The note above a reopened answer or claim check (``kind``): when it was verified and,
    if any, which documents it quotes have changed or gone since (then its verdicts may no
    longer hold)."""
    what, again = ("Answer", "ask again for an answer from")
    if kind == "check":
        what, again = ("Claim check", "check it again for verdicts on")
    text = f"{what} of {when} from the history, shown as it was verified then."
    if not changes:
        return text
    listed = "; ".join(
        f"{Path(c.path).name} ({'changed' if c.reason == 'changed' else 'missing'})"
        for c in changes
    )
    n = len(changes)
    return (
        f"{text} {n} {'document it quotes has' if n == 1 else 'documents it quotes have'} "
        f"changed since: {listed}. The verdicts were made on the text as it was then; "
        f"{again} the documents as they are now."
    )


def changes_tip(changes: tuple[DocumentChange, ...]) -> str:
    """The full path of each changed or missing document, one a line (the note names files
    only)."""
    return "\n".join(f"{c.path} ({c.reason})" for c in changes)


def _summary(saved: SavedAnswer) -> str:
    if saved.kind == "check":
        try:
            return check_summary(saved.check())
        except BadRecord as exc:  # listed all the same; reopening it says why it cannot be
            return f"cannot be read: {exc.reason}"
    data = saved.data()
    counts = data.get("label_counts", {})
    parts = [
        f"{n} {str(k).replace('_', ' ')}"
        for k, n in (counts.items() if isinstance(counts, dict) else ())
        if n
    ]
    if data.get("abstained"):
        return "not answered" + (f" ({', '.join(parts)})" if parts else "")
    return ", ".join(parts) or "no sentences"


def with_history(collection: str, fn: Callable[[AnswerHistory], T]) -> T:
    """Run ``fn`` on collection ``collection``'s history (opened and closed around it); a team
    collection (its key) is opened through its store, as for a question.

    Raises:
        CollectionNotFound: no such collection.
        IndexCorrupt: its history file is damaged.
        StoreUnavailable: a team collection's server cannot be used.
    """
    if is_team_key(collection):
        with (
            open_team(collection, password_prompt=session_password) as store,
            store.history() as history,
        ):
            return fn(history)
    with collection_history(collection) as history:
        return fn(history)


def write_audit_record(
    history: AnswerHistory, collection: str, answer_id: int, output: Path
) -> tuple[Path, Path]:
    """Write the audit record of answer ``answer_id`` of collection ``collection``'s history
    (quick: no document is read).

    Args:
        history: the collection's history, open.
        collection: the collection's folder name (recorded in the record).
        answer_id: the answer.
        output: the JSON file; the HTML view is written beside it (``.html``).

    Returns:
        The JSON and the HTML file written.

    Raises:
        HistoryNotFound: the answer is no longer in the history.
        ExportFailed: the files cannot be written; neither was changed.
    """
    saved = history.require(answer_id)
    replaced = ensure_key()
    if replaced:  # the key file was deleted and made anew: in the log (the CLI prints it)
        log.warning("%s", replaced)
    return write_record(build_record(saved, collection=collection), output)


class FitWidthDelegate(QStyledItemDelegate):
    """Rows as wide as the list's viewport, their text wrapped to it: a list view in list mode
    lays a row out at its text's full width, which brought a horizontal scroll bar."""

    def sizeHint(  # noqa: N802 (Qt override)
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        view = self.parent()
        if isinstance(view, QListView):
            fitted = QStyleOptionViewItem(option)
            width = view.viewport().width() - 2 * view.spacing()
            fitted.rect = QRect(0, 0, max(1, width), option.rect.height())
            hint = super().sizeHint(fitted, index)
            return QSize(min(hint.width(), max(1, width)), hint.height())
        return super().sizeHint(option, index)


class HistoryPanel(QWidget):
    """Past questions of the current collection.

    Signals:
        answer_opened(OpenedAnswer): a past answer was chosen and read back.
        answers_deleted(str, object): answers of the named collection were deleted: a tuple
            of their ids, or None for all.
        feedback_changed(str, int, object): the judgements of answer ``int`` of the named
            collection changed; the tuple of all its judgements now.
    """

    answer_opened = Signal(object)
    answers_deleted = Signal(str, object)
    feedback_changed = Signal(str, int, object)

    def __init__(self, runner: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("historyPanel")
        self.runner = runner
        self.collection = ""  # folder name of the collection listed
        self.keeping = True  # settings.history.keep, for the empty list's note
        self.entries: list[HistoryEntry] = []
        self._generation = 0  # refreshes answered after a newer one started are dropped

        self.title = QLabel("Past questions")
        self.title.setObjectName("sectionTitle")
        self.list = QListWidget()
        self.list.setObjectName("historyList")
        self.list.setWordWrap(True)
        self.list.setAlternatingRowColors(True)
        # Rows wrap to the list's width, and what no line break fits is cut with "…": no
        # horizontal scroll bar (issue 42, item 2).
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setResizeMode(QListView.ResizeMode.Adjust)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setItemDelegate(FitWidthDelegate(self.list))
        self.list.setToolTip("Choose a past question or claim check to see it as it was verified")
        self.note = QLabel(NO_COLLECTION_TEXT)
        self.note.setObjectName("historyEmptyNote")
        self.note.setWordWrap(True)
        self.note.setStyleSheet("color:#667")
        self.delete_button = QPushButton(icon("delete"), "Delete")
        self.delete_button.setToolTip("Forget the selected answer and the marks given on it")
        self.delete_all_button = QPushButton("Delete all…")
        self.delete_all_button.setToolTip("Forget every answer kept for this collection")
        bar = QHBoxLayout()
        bar.addStretch(1)
        bar.addWidget(self.delete_button)
        bar.addWidget(self.delete_all_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.title)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.note)
        layout.addLayout(bar)
        self._connect_signals()
        self._update_buttons()

    def _connect_signals(self) -> None:
        self.list.currentRowChanged.connect(self.on_row_changed)
        self.list.itemActivated.connect(
            lambda item: self.open_answer(int(item.data(Qt.ItemDataRole.UserRole)))
        )
        self.delete_button.clicked.connect(self.on_delete_clicked)
        self.delete_all_button.clicked.connect(self.on_delete_all_clicked)

    # ----- listing -------------------------------------------------------------------------

    def set_collection(self, name: str, display: str = "") -> Task[list[HistoryEntry]] | None:
        """List collection ``name``'s answers (``display``: its name as shown)."""
        self.collection = name
        self.title.setText(f"Past questions in “{display or name}”" if name else "Past questions")
        self.entries = []
        self._fill(None)
        return self.refresh()

    def refresh(self, *, select: int | None = None) -> Task[list[HistoryEntry]] | None:
        """Read the list again; ``select`` the answer with that id (without opening it)."""
        name = self.collection
        self._generation += 1
        generation = self._generation
        if not name:
            self.entries = []
            self._fill(None)
            return None

        def read(history: AnswerHistory) -> list[HistoryEntry]:
            return [
                HistoryEntry(
                    s.answer_id,
                    s.question,
                    s.when(),
                    _summary(s),
                    len(history.feedback(s.answer_id)),
                    s.kind,
                )
                for s in history.answers()
            ]

        task = self._submit("history list", name, read)
        task.succeeded.connect(lambda entries: self._on_entries(name, generation, entries, select))
        task.failed.connect(
            lambda exc: show_error(self.window(), exc, context="Reading the answer history")
        )
        return task

    def _on_entries(
        self, name: str, generation: int, entries: list[HistoryEntry], select: int | None
    ) -> None:
        if name != self.collection or generation != self._generation:
            return
        if select is None:
            current = self.current_id()
            select = current
        self.entries = entries
        self._fill(select)

    def _fill(self, select: int | None) -> None:
        self.list.blockSignals(True)
        self.list.clear()
        for entry in self.entries:
            item = QListWidgetItem(entry.text())
            item.setData(Qt.ItemDataRole.UserRole, entry.answer_id)
            item.setToolTip(entry.question)
            self.list.addItem(item)
        ids = [e.answer_id for e in self.entries]
        self.list.setCurrentRow(ids.index(select) if select in ids else -1)
        self.list.blockSignals(False)
        if not self.collection:
            self.note.setText(NO_COLLECTION_TEXT)
        elif not self.keeping:
            self.note.setText(NOT_KEPT_TEXT)
        else:
            self.note.setText("" if self.entries else EMPTY_TEXT)
        self.note.setVisible(bool(self.note.text()))
        self._update_buttons()

    def set_keeping(self, keeping: bool) -> None:
        """Follow ``settings.history.keep`` (the note under the list says when it is off)."""
        self.keeping = keeping
        self._fill(self.current_id())

    def row_texts(self) -> list[str]:
        """The list's rows as shown."""
        return [self.list.item(i).text() for i in range(self.list.count())]

    def current_id(self) -> int | None:
        """The id of the selected answer, or None."""
        item = self.list.currentItem()
        return None if item is None else int(item.data(Qt.ItemDataRole.UserRole))

    def _update_buttons(self) -> None:
        self.delete_button.setEnabled(self.current_id() is not None)
        self.delete_all_button.setEnabled(bool(self.entries))

    # ----- reopening -----------------------------------------------------------------------

    @Slot(int)
    def on_row_changed(self, row: int) -> None:
        """The user chose a past question: read its answer back."""
        self._update_buttons()
        if 0 <= row < len(self.entries):
            self.open_answer(self.entries[row].answer_id)

    def open_answer(self, answer_id: int) -> Task[OpenedAnswer]:
        """Read answer ``answer_id`` back with the documents changed since and its marks; on
        success :attr:`answer_opened` carries it."""
        name = self.collection

        def read(history: AnswerHistory) -> OpenedAnswer:
            saved = history.require(answer_id)
            check = saved.check() if saved.kind == "check" else None
            return OpenedAnswer(
                name,
                saved,
                None if check is not None else saved.answer(),
                tuple(changed_documents(saved)),
                tuple(history.feedback(answer_id)),
                check,
            )

        task = self._submit("history open", name, read)
        task.succeeded.connect(self.answer_opened.emit)
        task.failed.connect(
            lambda exc: show_error(self.window(), exc, context="Reopening the answer")
        )
        return task

    # ----- deleting ------------------------------------------------------------------------

    def confirm(self, title: str, text: str) -> bool:
        """Ask yes/no (a dialog; tests replace this method)."""
        answer = QMessageBox.question(self, title, text)
        return answer == QMessageBox.StandardButton.Yes

    def delete(self, answer_ids: tuple[int, ...] | None) -> Task[int]:
        """Forget answers ``answer_ids`` (None: all) of the listed collection and their marks."""
        name = self.collection

        def forget(history: AnswerHistory) -> int:
            if answer_ids is None:
                return history.clear()
            return sum(1 for i in answer_ids if history.delete(i))

        task = self._submit("history delete", name, forget)
        task.succeeded.connect(lambda _n: self.answers_deleted.emit(name, answer_ids))
        task.succeeded.connect(lambda _n: self.refresh() if name == self.collection else None)
        task.failed.connect(
            lambda exc: show_error(self.window(), exc, context="Deleting from the history")
        )
        return task

    @Slot()
    def on_delete_clicked(self) -> None:
        """Confirm and forget the selected answer."""
        answer_id = self.current_id()
        row = self.list.currentRow()
        if answer_id is None or not 0 <= row < len(self.entries):
            return
        entry = self.entries[row]
        if entry.kind == "check":
            title, text = "Delete claim check", f"Forget the check of “{entry.question}”?"
        else:
            title = "Delete answer"
            text = f"Forget the answer to “{entry.question}” and the marks given on it?"
        if self.confirm(title, text):
            self.delete((answer_id,))

    @Slot()
    def on_delete_all_clicked(self) -> None:
        """Confirm and forget every answer of the collection."""
        if self.entries and self.confirm(
            "Delete all answers",
            f"Forget all {len(self.entries)} answers kept for this collection and every mark "
            "given on them? This cannot be undone.",
        ):
            self.delete(None)

    # ----- feedback ------------------------------------------------------------------------

    def store_feedback(self, collection: str, feedback: Feedback) -> Task[tuple[Feedback, ...]]:
        """Keep a judgement of answer ``feedback.answer_id`` of ``collection``; on success
        :attr:`feedback_changed` carries the answer's judgements."""

        def store(history: AnswerHistory) -> tuple[Feedback, ...]:
            history.set_feedback(feedback)
            return tuple(history.feedback(feedback.answer_id))

        return self._feedback_task(collection, feedback.answer_id, store)

    def withdraw_feedback(
        self, collection: str, answer_id: int, sentence: int, passage: int
    ) -> Task[tuple[Feedback, ...]]:
        """Forget the judgement of sentence ``sentence``'s verdict on ``passage`` (-1: every
        judgement of the sentence)."""

        def withdraw(history: AnswerHistory) -> tuple[Feedback, ...]:
            for fb in history.feedback(answer_id):
                if fb.sentence == sentence and passage in (-1, fb.passage):
                    history.clear_feedback(answer_id, sentence, fb.passage)
            return tuple(history.feedback(answer_id))

        return self._feedback_task(collection, answer_id, withdraw)

    def _feedback_task(
        self, collection: str, answer_id: int, fn: Callable[[AnswerHistory], tuple[Feedback, ...]]
    ) -> Task[tuple[Feedback, ...]]:
        task = self._submit("feedback", collection, fn)
        task.succeeded.connect(
            lambda marks: self.feedback_changed.emit(collection, answer_id, marks)
        )
        task.succeeded.connect(lambda _m: self.refresh() if collection == self.collection else None)
        task.failed.connect(lambda exc: show_error(self.window(), exc, context="Keeping your mark"))
        return task

    # ----- audit ---------------------------------------------------------------------------

    def export_audit(
        self, collection: str, answer_id: int, output: Path
    ) -> Task[tuple[Path, Path]]:
        """Write the audit record of answer ``answer_id`` of ``collection`` on the worker
        (:func:`write_audit_record`); the task's ``succeeded`` carries the JSON and the HTML
        file written, its ``failed`` the error (the caller shows it)."""
        return self._submit(
            "audit export",
            collection,
            lambda history: write_audit_record(history, collection, answer_id, output),
        )

    # ----- plumbing ------------------------------------------------------------------------

    def _submit(self, task_name: str, collection: str, fn: Callable[[AnswerHistory], T]) -> Task[T]:
        def work(ctx: TaskContext) -> T:
            return with_history(collection, fn)

        return self.runner.submit(task_name, work)
