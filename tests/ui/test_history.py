"""Answer history in the window: answers kept after a question, listed newest first, reopened
exactly as verified with a note on documents changed since, deleted one or all; the reader's
marks on verdicts from the context menu, shown on the hover card; audit export."""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMenu, QMessageBox
from pytestqt.qtbot import QtBot

from tests.ui.conftest import UNSURE_FLAG, make_answer, make_unsure_answer
from verifai_desktop.domain import Answer, NliLabel, SentenceLabel
from verifai_desktop.errors import HistoryNotFound, IndexCorrupt
from verifai_desktop.hashing import sha256_file
from verifai_desktop.settings import HistorySettings, Settings, VerifySettings
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.folders import existing_path
from verifai_desktop.store.history import Feedback, History
from verifai_desktop.ui.answer_menu import FEEDBACK_OFF_TIP
from verifai_desktop.ui.asking import answer_status
from verifai_desktop.ui.evidence_popup import FEEDBACK_HINT
from verifai_desktop.ui.history_panel import EMPTY_TEXT
from verifai_desktop.ui.main_window import MainWindow

TIMEOUT_MS = 10_000
ROW_SUMMARY = "1 supported, 1 partially supported, 1 contradicted, 1 no evidence, 1 unreferenced"


@pytest.fixture(autouse=True)
def papers() -> None:
    """An empty collection "papers" (its history starts empty)."""
    with Collection.open("papers", create=True):
        pass


def _answer_on_files(folder: Path) -> Answer:
    """:func:`make_answer` with its two passages in real files of ``folder``."""
    answer = make_answer()
    md, pdf = answer.passages
    (folder / "overfitting.md").write_text(md.text, encoding="utf-8")
    (folder / "trauma.pdf").write_text(pdf.text, encoding="utf-8")  # only hashed, never parsed
    passages = (
        dataclasses.replace(md, path=folder / "overfitting.md"),
        dataclasses.replace(pdf, path=folder / "trauma.pdf"),
    )
    return dataclasses.replace(answer, passages=passages)


def _keep(answer: Answer, *, created: float, question: str | None = None) -> int:
    """Save ``answer`` in collection "papers"'s history with the files' real sha256 (none
    for the hand-built answer's made-up paths)."""
    if question is not None:
        answer = dataclasses.replace(answer, question=question)
    documents = {
        str(p.path): sha256_file(p.path) if p.path.exists() else "" for p in answer.passages
    }
    with History(existing_path("papers")) as history:
        return history.add(answer, Settings(), documents, created=created)


def _window(qtbot: QtBot, settings: Settings | None = None) -> MainWindow:
    window = MainWindow(settings if settings is not None else Settings(), offer_sample=False)
    qtbot.addWidget(window)
    window.resize(1000, 700)
    window.show()
    qtbot.waitExposed(window)
    return window


def _feedback(answer_id: int) -> list[tuple[int, int, str, str, NliLabel | None, str]]:
    with History(existing_path("papers")) as history:
        return [
            (f.sentence, f.passage, f.shown, f.verdict, f.label, f.note)
            for f in history.feedback(answer_id)
        ]


def test_history_lists_reopens_notes_changes_and_deletes(qtbot: QtBot, tmp_path: Path) -> None:
    answer = _answer_on_files(tmp_path)
    first = _keep(answer, created=1_700_000_000.0)
    second = _keep(answer, created=1_700_000_600.0, question="How is DVT prevented?")
    window = _window(qtbot)
    panel = window.history
    qtbot.waitUntil(lambda: len(panel.row_texts()) == 2, timeout=TIMEOUT_MS)
    with History(existing_path("papers")) as history:
        when = {a.answer_id: a.when() for a in history.answers()}
    assert panel.row_texts() == [
        f"How is DVT prevented?\n{when[second]} · {ROW_SUMMARY}",
        f"What is overfitting?\n{when[first]} · {ROW_SUMMARY}",
    ]
    assert panel.title.text() == "Past questions in “papers”"

    # Choosing the older one reopens it as verified: labels, sources, hover cards.
    panel.list.setCurrentRow(1)
    qtbot.waitUntil(lambda: window.history_ref == ("papers", first), timeout=TIMEOUT_MS)
    view = window.answer_view
    assert window.answer == answer
    assert view.sentence_labels() == [(s.text, s.label) for s in answer.sentences]
    assert window.sources.row_texts()[1] == (
        "[2]",
        "DVT prophylaxis review\ntrauma.pdf, p. 3",
        "0.50",
        "0.60",
        "0.530",
    )
    assert "Supported — probability 0.93" in view.hover_text(0)
    assert FEEDBACK_HINT in view.hover_text(0)
    assert window.question.text() == "What is overfitting?"
    assert window.reopened_note.isVisibleTo(window)
    assert window.reopened_note.text() == (
        f"Answer of {when[first]} from the history, shown as it was verified then."
    )
    assert window.audit_action.isEnabled()

    # A quoted document is edited, another deleted: the reopened answer says so.
    (tmp_path / "overfitting.md").write_text("Rewritten since.", encoding="utf-8")
    (tmp_path / "trauma.pdf").unlink()
    panel.list.setCurrentRow(0)
    qtbot.waitUntil(lambda: window.history_ref == ("papers", second), timeout=TIMEOUT_MS)
    assert window.reopened_note.text() == (
        f"Answer of {when[second]} from the history, shown as it was verified then. "
        "2 documents it quotes have changed since: overfitting.md (changed); trauma.pdf "
        "(missing). The verdicts were made on the text as it was then; ask again for an "
        "answer from the documents as they are now."
    )
    assert view.sentence_labels() == [(s.text, s.label) for s in answer.sentences]

    # Delete the shown one (confirmed): it stays on show, no longer kept.
    asked: list[str] = []

    def confirm(title: str, text: str) -> bool:
        asked.append(text)
        return True

    panel.confirm = confirm  # type: ignore[method-assign]
    panel.delete_button.click()
    qtbot.waitUntil(lambda: len(panel.row_texts()) == 1, timeout=TIMEOUT_MS)
    assert asked == ["Forget the answer to “How is DVT prevented?” and the marks given on it?"]
    assert window.history_ref is None and not window.audit_action.isEnabled()
    assert view.history_id is None and FEEDBACK_HINT not in view.hover_text(0)
    assert window.answer == dataclasses.replace(answer, question="How is DVT prevented?")

    # Delete all (confirmed).
    panel.delete_all_button.click()
    qtbot.waitUntil(lambda: panel.row_texts() == [], timeout=TIMEOUT_MS)
    assert asked[-1].startswith("Forget all 1 answers kept for this collection")
    with History(existing_path("papers")) as history:
        assert history.answers() == []
    assert panel.note.text() == EMPTY_TEXT


class _Session:
    """Stands in for AskSession (control flow only): answers at once."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer

    def ask(self, collection: object, question: str, **_kwargs: object) -> Answer:
        return dataclasses.replace(self.answer, question=question)

    def thresholds(self) -> VerifySettings:
        return VerifySettings()


def test_an_answer_is_kept_after_the_question_only_when_history_is_on(
    qtbot: QtBot, hand_answer: Answer
) -> None:
    window = _window(qtbot)
    qtbot.waitUntil(lambda: window.history.collection == "papers", timeout=TIMEOUT_MS)
    window._session = _Session(hand_answer)  # type: ignore[assignment]
    window._models_ready = True
    task = window.ask("What is overfitting?")
    assert task is not None
    qtbot.waitUntil(lambda: not task.is_running, timeout=TIMEOUT_MS)
    with History(existing_path("papers")) as history:
        (saved,) = history.answers()
    assert window.history_ref == ("papers", saved.answer_id)
    assert saved.answer() == hand_answer and saved.question == "What is overfitting?"
    qtbot.waitUntil(lambda: len(window.history.row_texts()) == 1, timeout=TIMEOUT_MS)
    assert window.history.current_id() == saved.answer_id  # listed and selected, not reopened
    assert window.answer_view.history_id == saved.answer_id
    assert window.audit_action.isEnabled()

    off = dataclasses.replace(window.settings, history=HistorySettings(keep=False))
    window.apply_settings(off)
    window._session = _Session(hand_answer)  # type: ignore[assignment]
    window._models_ready = True
    second = window.ask("What is a test set?")
    assert second is not None
    qtbot.waitUntil(lambda: not second.is_running, timeout=TIMEOUT_MS)
    assert window.answer is not None and window.answer.question == "What is a test set?"
    with History(existing_path("papers")) as history:
        assert [a.question for a in history.answers()] == ["What is overfitting?"]
    assert window.history_ref is None and window.answer_view.history_id is None
    assert not window.audit_action.isEnabled()
    # Feedback actions are there but disabled, with the reason.
    menu = window.answer_view.context_menu(window.answer_view.sentence_point(0))
    right = next(a for a in menu.actions() if a.objectName() == "feedbackRight1")
    assert not right.isEnabled() and right.toolTip() == FEEDBACK_OFF_TIP
    assert FEEDBACK_HINT not in window.answer_view.hover_text(0)


def _action(menu: QMenu, name: str) -> object:
    for action in menu.actions():
        if action.objectName() == name:
            return action
    sub = menu.findChild(QMenu, name.split("_")[0])
    assert sub is not None, name
    return next(a for a in sub.actions() if a.objectName() == name)


def test_marks_on_verdicts_are_kept_and_shown_on_the_card(
    qtbot: QtBot, hand_answer: Answer
) -> None:
    window = _window(qtbot)
    answer_id = _keep(hand_answer, created=1_700_000_000.0)
    window.on_answer_ready(hand_answer, kept=("papers", answer_id))
    view = window.answer_view
    point = view.sentence_point(3)  # cites [1] and [2], both "no evidence"
    menu = view.context_menu(point)
    names = [a.objectName() for a in menu.actions() if a.objectName().startswith("feedback")]
    texts = [a.text() for a in menu.actions() if a.objectName().startswith("feedback")]
    assert names == [
        "feedbackRight1",
        "feedbackWrong1Action",
        "feedbackRight2",
        "feedbackWrong2Action",
        "feedbackFlag",
    ]
    assert texts == [
        "[1] verdict is right",
        "[1] verdict is wrong",
        "[2] verdict is right",
        "[2] verdict is wrong",
        "Flag this sentence…",
    ]
    assert all(a.isEnabled() for a in menu.actions() if a.objectName().startswith("feedback"))
    assert menu.actions()[0].objectName() == "checkSentenceAction"
    wrong2 = menu.findChild(QMenu, "feedbackWrong2")
    assert wrong2 is not None and wrong2.title() == "[2] verdict is wrong"
    assert [(a.text(), a.isEnabled()) for a in wrong2.actions()] == [
        ("Should be: Supports", True),
        ("Should be: Contradicts", True),
        ("Should be: No evidence", False),  # what it says already
        ("Not sure", True),
    ]

    _action(menu, "feedbackRight1").trigger()  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: len(view.feedback) == 1, timeout=TIMEOUT_MS)
    _action(view.context_menu(point), "feedbackWrong2_SUPPORT").trigger()  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: len(view.feedback) == 2, timeout=TIMEOUT_MS)
    view.ask_note = lambda index: "heparin is not mechanical"  # type: ignore[method-assign]
    _action(view.context_menu(point), "feedbackFlag").trigger()  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: len(view.feedback) == 3, timeout=TIMEOUT_MS)
    assert _feedback(answer_id) == [
        (3, 0, "no_evidence", "flagged", None, "heparin is not mechanical"),
        (3, 1, "NO_EVIDENCE", "right", None, ""),
        (3, 2, "NO_EVIDENCE", "wrong", NliLabel.SUPPORT, ""),
    ]
    card = view.hover_text(3)
    assert (
        "You flagged this sentence: heparin is not mechanical\n"
        "You marked [1] right\n"
        "You marked [2] wrong: should be Supports\n" in card
    )
    assert card.endswith(FEEDBACK_HINT)
    assert "You marked" not in view.hover_text(0)
    # The menu shows the marks given; choosing "right" again takes it back.
    again = view.context_menu(point)
    assert _action(again, "feedbackRight1").isChecked()  # type: ignore[attr-defined]
    assert _action(again, "feedbackWrong2_SUPPORT").isChecked()  # type: ignore[attr-defined]
    _action(again, "feedbackRight1").trigger()  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: len(view.feedback) == 2, timeout=TIMEOUT_MS)
    assert [row[:2] for row in _feedback(answer_id)] == [(3, 0), (3, 2)]
    # Clear every mark on the sentence; the history list counts marks.
    _action(view.context_menu(point), "feedbackClear").trigger()  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: view.feedback == (), timeout=TIMEOUT_MS)
    assert _feedback(answer_id) == []
    assert "You marked" not in view.hover_text(3)


def test_marks_of_a_reopened_answer_show_and_its_audit_record_is_written(
    qtbot: QtBot, hand_answer: Answer, tmp_path: Path
) -> None:
    answer_id = _keep(hand_answer, created=1_700_000_000.0)
    with History(existing_path("papers")) as history:
        history.set_feedback(
            Feedback(answer_id, 2, 2, "CONTRADICT", "wrong", NliLabel.SUPPORT, "misread")
        )
    window = _window(qtbot)
    panel = window.history
    qtbot.waitUntil(lambda: len(panel.row_texts()) == 1, timeout=TIMEOUT_MS)
    assert panel.row_texts()[0].endswith(f"{ROW_SUMMARY} · 1 mark")
    assert not window.audit_action.isEnabled()
    panel.list.setCurrentRow(0)
    qtbot.waitUntil(lambda: window.history_ref == ("papers", answer_id), timeout=TIMEOUT_MS)
    assert "You marked [2] wrong: should be Supports — “misread”" in window.answer_view.hover_text(
        2
    )

    assert window.audit_action.isEnabled()
    json_path, html_path = window.export_audit(tmp_path / "audit.json")
    assert (json_path, html_path) == (
        tmp_path / "audit.json",
        tmp_path / "audit.html",
    )
    record = json.loads(json_path.read_text(encoding="utf-8"))
    assert (record["schema"], record["collection"], record["answer_id"]) == (
        "verifai.audit/1",
        "papers",
        answer_id,
    )
    assert [s["label"] for s in record["sentences"]] == [
        s.label.value for s in hand_answer.sentences
    ]
    page = html_path.read_text(encoding="utf-8")
    assert page.lstrip().lower().startswith("<!doctype html>") and "What is overfitting?" in page


def test_a_history_row_chosen_while_a_question_runs_waits(
    qtbot: QtBot, hand_answer: Answer
) -> None:
    answer_id = _keep(hand_answer, created=1_700_000_000.0)
    window = _window(qtbot)
    qtbot.waitUntil(lambda: len(window.history.row_texts()) == 1, timeout=TIMEOUT_MS)
    release = threading.Event()

    class Held(_Session):
        def ask(self, collection: object, question: str, **kwargs: object) -> Answer:
            release.wait(30)
            return super().ask(collection, question, **kwargs)

    window._session = Held(hand_answer)  # type: ignore[assignment]
    window._models_ready = True
    task = window.ask("Another question?")
    assert task is not None
    opened = window.history.open_answer(answer_id)
    qtbot.waitUntil(lambda: not opened.is_running, timeout=TIMEOUT_MS)
    assert window.answer is None and window.history_ref is None
    assert window.statusBar().currentMessage().startswith("Wait for the running question")
    release.set()
    qtbot.waitUntil(lambda: not task.is_running, timeout=TIMEOUT_MS)
    assert window.answer is not None and window.answer.question == "Another question?"


def _error_boxes(window: MainWindow) -> list[QMessageBox]:
    return [b for b in window.findChildren(QMessageBox, "errorBox") if b.isVisible()]


def test_an_answer_its_history_cannot_keep_is_shown_with_a_warning(
    qtbot: QtBot, hand_answer: Answer
) -> None:
    (existing_path("papers") / "history.sqlite").write_bytes(b"not a database" * 100)
    with pytest.raises(IndexCorrupt) as damage:
        History(existing_path("papers"))
    window = _window(qtbot)
    qtbot.waitUntil(lambda: len(_error_boxes(window)) == 1, timeout=TIMEOUT_MS)  # the list
    _error_boxes(window)[0].close()
    window._session = _Session(hand_answer)  # type: ignore[assignment]
    window._models_ready = True
    task = window.ask("What is overfitting?")
    assert task is not None
    qtbot.waitUntil(lambda: not task.is_running, timeout=TIMEOUT_MS)
    assert task.outcome == "succeeded" and window.answer == hand_answer
    assert window.history_ref is None and not window.audit_action.isEnabled()
    assert window.statusBar().currentMessage() == (
        f"{answer_status(hand_answer)} Warning: the answer was not kept in the history of "
        f"collection 'papers': {damage.value}"
    )
    assert _error_boxes(window) == []


def test_the_audit_record_is_written_on_the_worker_and_a_failure_shown(
    qtbot: QtBot, hand_answer: Answer, tmp_path: Path
) -> None:
    answer_id = _keep(hand_answer, created=1_700_000_000.0)
    window = _window(qtbot)
    qtbot.waitUntil(lambda: len(window.history.row_texts()) == 1, timeout=TIMEOUT_MS)
    window.history.list.setCurrentRow(0)
    qtbot.waitUntil(lambda: window.history_ref == ("papers", answer_id), timeout=TIMEOUT_MS)

    task = window.save_audit(tmp_path / "audit.json")
    qtbot.waitUntil(lambda: not task.is_running, timeout=TIMEOUT_MS)
    assert task.result == (tmp_path / "audit.json", tmp_path / "audit.html")
    assert json.loads((tmp_path / "audit.json").read_text(encoding="utf-8"))["answer_id"] == (
        answer_id
    )
    assert window.statusBar().currentMessage() == (
        f"Audit record saved: {tmp_path / 'audit.json'} (readable view: audit.html)"
    )

    with History(existing_path("papers")) as history:
        assert history.delete(answer_id)
    failed = window.save_audit(tmp_path / "gone.json")
    qtbot.waitUntil(lambda: not failed.is_running, timeout=TIMEOUT_MS)
    (box,) = _error_boxes(window)
    assert box.text() == (
        f"Saving the audit record gone.json: {HistoryNotFound('papers', answer_id)}"
    )
    assert not (tmp_path / "gone.json").exists()


def test_an_audit_record_that_cannot_be_written_is_shown_and_leaves_no_file(
    qtbot: QtBot, hand_answer: Answer, tmp_path: Path
) -> None:
    """Issue 30, row 10 in the app: the HTML view's path is a folder; the error names it and
    what to do, and the JSON is not written either."""
    answer_id = _keep(hand_answer, created=1_700_000_000.0)
    window = _window(qtbot)
    qtbot.waitUntil(lambda: len(window.history.row_texts()) == 1, timeout=TIMEOUT_MS)
    window.history.list.setCurrentRow(0)
    qtbot.waitUntil(lambda: window.history_ref == ("papers", answer_id), timeout=TIMEOUT_MS)
    (tmp_path / "audit.html").mkdir()

    failed = window.save_audit(tmp_path / "audit.json")
    qtbot.waitUntil(lambda: not failed.is_running, timeout=TIMEOUT_MS)
    (box,) = _error_boxes(window)
    assert box.text() == (
        "Saving the audit record audit.json: could not write the audit record to "
        f"{str(tmp_path / 'audit.html')!r}: it is a folder; give a file name inside it "
        "(no file was changed)"
    )
    assert not (tmp_path / "audit.json").exists()


def test_an_unsure_answer_reopens_unsure_with_its_best_guess_and_flag(qtbot: QtBot) -> None:
    """Issue 26: the history keeps the shown label and the flags of every verdict; the
    reopened answer is unsure where it was, and its card says why."""
    answer = make_unsure_answer()
    kept = _keep(answer, created=1_700_000_000.0)
    window = _window(qtbot)
    panel = window.history
    qtbot.waitUntil(lambda: len(panel.row_texts()) == 1, timeout=TIMEOUT_MS)
    assert panel.row_texts()[0].endswith(f" · {ROW_SUMMARY}, 1 unsure")
    panel.list.setCurrentRow(0)
    qtbot.waitUntil(lambda: window.history_ref == ("papers", kept), timeout=TIMEOUT_MS)
    assert window.answer == answer
    view = window.answer_view
    assert view.sentence_labels()[-1] == (answer.sentences[-1].text, SentenceLabel.UNSURE)
    card = view.hover_text(len(answer.sentences) - 1).splitlines()
    assert card[0] == "≈ Unsure — best guess: supported, p 0.72"
    assert f"Held back: {UNSURE_FLAG}" in card
