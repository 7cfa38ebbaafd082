"""One screen per collection and mode (issue 29): switching collection or mode never leaves the
other's answer, question, banner or button on screen, and switching back shows that
collection's and mode's last state. One test per case the issue lists (a reopened question
beside a "Check" button; the previous collection's answer after switching to an empty
collection; an "Added to …" banner on another collection), and a question whose answer
arrives while another collection is on show.

Real collections with real histories in ``VERIFAI_HOME``; a stand-in session answers (control
flow only: no model runs), except for the real ingest behind the banner.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from tests.ui.test_conflicts import _check_result
from verifai_desktop.domain import Answer, CheckResult
from verifai_desktop.settings import Settings, VerifySettings
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.folders import existing_path
from verifai_desktop.store.history import History
from verifai_desktop.ui.answer_view import ANSWER_HINT, CHECK_HINT
from verifai_desktop.ui.main_window import MainWindow
from verifai_desktop.ui.window_base import ASK_MODE, CHECK_MODE

TIMEOUT_MS = 30_000


@pytest.fixture(autouse=True)
def collections() -> None:
    """Two empty collections, "papers" and "empty" (their histories start empty)."""
    for name in ("papers", "empty"):
        with Collection.open(name, create=True):
            pass


class _Session:
    """Stands in for AskSession (control flow only): streams a first piece, then answers
    once released."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.release = threading.Event()
        self.release.set()

    def ask(
        self, collection: object, question: str, *, on_token: Callable[[str], None], **_kw: object
    ) -> Answer:
        on_token("Overfitting means")
        self.release.wait(30)
        return dataclasses.replace(self.answer, question=question)

    def check_claim(self, collection: object, claim: str, **_kw: object) -> CheckResult:
        self.release.wait(30)
        return _check_result(self.answer, claim)

    def thresholds(self) -> VerifySettings:
        return VerifySettings()


def _window(qtbot: QtBot, answer: Answer) -> tuple[MainWindow, _Session]:
    window = MainWindow(Settings(), offer_sample=False)
    qtbot.addWidget(window)
    window.resize(1000, 700)
    window.show()
    qtbot.waitExposed(window)
    session = _Session(answer)
    window._session = session  # type: ignore[assignment]
    window._models_ready = True
    _switch(qtbot, window, "papers")
    return window, session


def _switch(qtbot: QtBot, window: MainWindow, name: str, *, settle: bool = True) -> None:
    """Choose collection ``name``; with ``settle``, wait until its documents and history are
    read (no task left to call back after the test)."""
    window.library.on_collection_clicked(name)
    qtbot.waitUntil(
        lambda: (
            window.library.current == name
            and window.history.collection == name
            and not (settle and window.runner.running)
        ),
        timeout=TIMEOUT_MS,
    )


def _ask(qtbot: QtBot, window: MainWindow, question: str) -> None:
    window.question.setText(question)
    task = window.ask(question)
    assert task is not None
    qtbot.waitUntil(lambda: not task.is_running, timeout=TIMEOUT_MS)


def _shows_nothing(window: MainWindow, hint: str = ANSWER_HINT) -> None:
    """The middle panel is empty: no answer or check, no question, no note, no sources."""
    view = window.answer_view
    assert window.answer is None and window.check_result is None
    assert view.answer is None and view.check is None and view.showing_hint
    assert view.toPlainText() == "" and view.hint_text == hint
    assert window.question.text() == "" and window.answer_info.text() == ""
    assert not window.reopened_note.isVisibleTo(window)
    assert window.sources.row_texts() == []
    assert not window.copy_button.isEnabled() and not window.audit_action.isEnabled()


def test_a_reopened_answer_comes_back_in_ask_mode_and_check_mode_keeps_its_own(
    qtbot: QtBot, hand_answer: Answer
) -> None:
    with History(existing_path("papers")) as history:
        answer_id = history.add(hand_answer, Settings(), {}, created=1_700_000_000.0)
    window, _session = _window(qtbot, hand_answer)
    qtbot.waitUntil(lambda: len(window.history.row_texts()) == 1, timeout=TIMEOUT_MS)
    # The last mode was Check a claim, with a claim typed.
    window.set_mode(CHECK_MODE)
    window.question.setText("Heparin reduces DVT.")

    # Reopening the past answer shows it in Ask mode, beside an "Ask" button.
    window.history.list.setCurrentRow(0)
    qtbot.waitUntil(lambda: window.history_ref == ("papers", answer_id), timeout=TIMEOUT_MS)
    assert window.mode == ASK_MODE and window.mode_buttons[ASK_MODE].isChecked()
    assert window.ask_button.text() == "Ask"
    assert window.question.text() == "What is overfitting?"
    assert window.answer_view.answer == hand_answer
    assert window.reopened_note.isVisibleTo(window)

    # Check mode has its own screen: its claim, the Check button, no answer.
    window.set_mode(CHECK_MODE)
    assert window.ask_button.text() == "Check"
    assert window.question.text() == "Heparin reduces DVT."
    window.question.clear()
    _shows_nothing(window, CHECK_HINT)

    # Back in Ask mode: the reopened answer as it was, with its note and history place.
    window.set_mode(ASK_MODE)
    assert window.ask_button.text() == "Ask"
    assert window.question.text() == "What is overfitting?"
    assert window.answer == hand_answer and window.history_ref == ("papers", answer_id)
    labels = [(s.text, s.label) for s in hand_answer.sentences]
    assert window.answer_view.sentence_labels() == labels
    assert window.reopened_note.isVisibleTo(window) and window.audit_action.isEnabled()
    assert len(window.sources.row_texts()) == 2
    # The check screen kept its (now empty) question.
    window.set_mode(CHECK_MODE)
    assert window.question.text() == ""


def test_an_empty_collection_shows_no_answer_of_the_one_left(
    qtbot: QtBot, hand_answer: Answer
) -> None:
    window, _session = _window(qtbot, hand_answer)
    _ask(qtbot, window, "What is overfitting?")
    with History(existing_path("papers")) as history:
        (saved,) = history.answers()
    assert window.answer_view.answer == hand_answer and window.copy_button.isEnabled()

    _switch(qtbot, window, "empty")
    _shows_nothing(window)
    assert window.windowTitle() == "VerifAI Desktop — empty"
    qtbot.waitUntil(lambda: window.history.row_texts() == [], timeout=TIMEOUT_MS)

    _switch(qtbot, window, "papers")
    assert window.question.text() == "What is overfitting?"
    assert window.answer == hand_answer and window.history_ref == ("papers", saved.answer_id)
    assert window.answer_view.sentence_labels() == [
        (s.text, s.label) for s in hand_answer.sentences
    ]
    assert len(window.sources.row_texts()) == 2
    assert window.copy_button.isEnabled() and window.audit_action.isEnabled()
    assert window.answer_info.text().startswith("1 supported, 1 partially supported")


def test_an_answer_is_shown_on_the_collection_it_was_asked_of(
    qtbot: QtBot, hand_answer: Answer
) -> None:
    window, session = _window(qtbot, hand_answer)
    session.release.clear()
    window.question.setText("What is overfitting?")
    task = window.ask("What is overfitting?")
    assert task is not None
    qtbot.waitUntil(
        lambda: window.answer_view.toPlainText() == "Overfitting means", timeout=TIMEOUT_MS
    )
    # Switched away while it is written: the other collection shows none of it ...
    _switch(qtbot, window, "empty", settle=False)
    _shows_nothing(window)
    # ... and back again: the answer being written.
    _switch(qtbot, window, "papers", settle=False)
    assert window.answer_view.toPlainText() == "Overfitting means"
    assert window.question.text() == "What is overfitting?"
    _switch(qtbot, window, "empty", settle=False)
    session.release.set()
    qtbot.waitUntil(lambda: not task.is_running, timeout=TIMEOUT_MS)
    _shows_nothing(window)
    assert window.statusBar().currentMessage() == (
        "The answer to “What is overfitting?” is ready in “papers” (Ask a question)."
    )
    _switch(qtbot, window, "papers")
    assert window.answer == hand_answer and window.answer_view.answer == hand_answer
    with History(existing_path("papers")) as history:
        (saved,) = history.answers()
    assert window.history_ref == ("papers", saved.answer_id)
    assert window.question.text() == "What is overfitting?"


def test_the_added_to_banner_stays_with_its_collection(
    qtbot: QtBot, hand_answer: Answer, tmp_path: Path
) -> None:
    window, _session = _window(qtbot, hand_answer)
    library = window.library
    note = tmp_path / "overfitting.md"
    note.write_text("# Overfitting\n\nA model that memorises its data fails.\n", encoding="utf-8")
    library.ingest([note])
    qtbot.waitUntil(
        lambda: library.summary_frame.isVisibleTo(library) and not window.runner.running,
        timeout=120_000,
    )
    banner = library.summary_label.text()
    assert banner.startswith("Added to “papers”: 1 indexed;")

    _switch(qtbot, window, "empty")
    assert not library.summary_frame.isVisibleTo(library)
    _switch(qtbot, window, "papers")
    assert library.summary_frame.isVisibleTo(library) and library.summary_label.text() == banner
    # Dismissed, it stays dismissed.
    library.summary_close_button.click()
    _switch(qtbot, window, "empty")
    _switch(qtbot, window, "papers")
    assert not library.summary_frame.isVisibleTo(library)


def test_a_check_stays_with_its_mode(qtbot: QtBot, hand_answer: Answer) -> None:
    window, session = _window(qtbot, hand_answer)
    _ask(qtbot, window, "What is overfitting?")
    session.release.clear()
    window.set_mode(CHECK_MODE)
    window.question.setText("Heparin reduces DVT.")
    task = window.check("Heparin reduces DVT.")
    assert task is not None
    pending = "Checking “Heparin reduces DVT.” across your documents…"
    assert window.answer_view.toPlainText() == pending
    # The Ask screen shows its answer, not the running check; back in Check mode, the check.
    window.set_mode(ASK_MODE)
    assert window.answer_view.answer == hand_answer and window.ask_button.text() == "Ask"
    window.set_mode(CHECK_MODE)
    assert window.answer_view.toPlainText() == pending
    assert window.question.text() == "Heparin reduces DVT." and not window.copy_button.isEnabled()
    window.set_mode(ASK_MODE)
    session.release.set()
    qtbot.waitUntil(lambda: not task.is_running, timeout=TIMEOUT_MS)
    assert window.answer_view.answer == hand_answer and window.check_result is None
    window.set_mode(CHECK_MODE)
    assert window.check_result is not None and window.answer_view.check == window.check_result
    assert window.answer is None and window.copy_button.isEnabled()
    assert window.audit_action.isEnabled()  # kept in the history
