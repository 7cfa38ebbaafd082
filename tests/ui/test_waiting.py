"""The wait for an answer: the sources as soon as the search returns, the previous answer until
the new one streams, and a status bar that names the stage running.

The real :class:`~verifai_desktop.pipeline.AskSession` runs with the fakes behind its
protocols of tests/unit/test_pipeline.py (control flow only), gated so that each stage can be
looked at while it runs.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCharFormat, QTextCursor
from pytestqt.qtbot import QtBot

from tests.ui.test_screens import _switch
from tests.unit.test_pipeline import (
    ANSWER_PIECES,
    PASSAGES,
    FakeGenerator,
    FakeRetriever,
    FakeVerifier,
    _splitter,
)
from verifai_desktop.domain import Answer, Passage, Progress
from verifai_desktop.errors import Cancelled
from verifai_desktop.generate.prompt import ChatMessage
from verifai_desktop.pipeline import AskSession
from verifai_desktop.settings import Settings, VerifySettings
from verifai_desktop.ui.answer_view import DIM_COLOR, AnswerView
from verifai_desktop.ui.ask_stages import (
    CONFLICTS_TEXT,
    RERANK_TEXT,
    SEARCHING_CAPTION,
    previous_kept_note,
    previous_note,
    stage_text,
)
from verifai_desktop.ui.asking import ANSWER_STATUS
from verifai_desktop.ui.main_window import MainWindow
from verifai_desktop.ui.tasks import Task

TIMEOUT_MS = 30_000
GATE_S = 30


def _wait(gate: threading.Event, cancel: threading.Event | None) -> None:
    while not gate.wait(0.02):
        if cancel is not None and cancel.is_set():
            raise Cancelled("question")


class _GatedRetriever(FakeRetriever):
    """Searches once :attr:`gate` is set."""

    def __init__(self, passages: Sequence[Passage]) -> None:
        super().__init__(passages)
        self.gate = threading.Event()

    def search(self, query: str, *, k: int, include_references: bool = True) -> tuple[Passage, ...]:
        self.gate.wait(GATE_S)
        return super().search(query, k=k, include_references=include_references)


class _GatedGenerator(FakeGenerator):
    """Reads the prompt (600 tokens), writes the first piece once :attr:`first` is set and
    the rest once :attr:`rest` is; Stop is heard while it waits."""

    def __init__(self) -> None:
        super().__init__(ANSWER_PIECES, read_tokens=600)
        self.first = threading.Event()
        self.rest = threading.Event()

    def stream(self, messages: Sequence[ChatMessage], **options: Any) -> Iterator[str]:
        cancel = options.get("cancel")
        for i, piece in enumerate(super().stream(messages, **options)):
            _wait(self.first if i == 0 else self.rest, cancel)
            yield piece


class _GatedVerifier(FakeVerifier):
    """Classifies a batch (one answer sentence's pairs) per release of :attr:`gate`."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Semaphore(0)

    def classify(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        assert self.gate.acquire(timeout=GATE_S)
        return super().classify(pairs)


class _Gates:
    """The gated fakes behind the window's session, and the status bar's messages."""

    def __init__(self) -> None:
        self.retriever = _GatedRetriever(PASSAGES)
        self.generator = _GatedGenerator()
        self.verifier = _GatedVerifier()
        self.messages: list[str] = []
        self.previous_text = ""  # the answer view's text before the question


def _window(qtbot: QtBot, previous: Answer) -> tuple[MainWindow, _Gates]:
    """A window on collection "papers" showing ``previous``, asking through the real session
    with gated fakes."""
    window = MainWindow(Settings(), offer_sample=False)
    qtbot.addWidget(window)
    window.resize(1000, 700)
    window.show()
    qtbot.waitExposed(window)
    window.library.create_collection("papers")
    qtbot.waitUntil(
        lambda: window.library.current == "papers" and not window.runner.running,
        timeout=TIMEOUT_MS,
    )
    gates = _Gates()
    window._session = AskSession(
        Settings(verify=VerifySettings(premise="sentences", abstain_threshold=0.25)),
        generator=gates.generator,
        verifier=gates.verifier,
        retriever_factory=lambda c, s: gates.retriever,
        splitter=_splitter,
    )
    window._models_ready = True
    window.on_answer_ready(previous)
    gates.previous_text = window.answer_view.toPlainText()
    window.statusBar().messageChanged.connect(gates.messages.append)
    return window, gates


def _found(qtbot: QtBot, window: MainWindow, gates: _Gates) -> Task[Answer]:
    """Ask on the window, and wait until the passages found are listed."""
    task = window.ask("Do cats sleep?")
    assert task is not None
    gates.retriever.gate.set()
    qtbot.waitUntil(lambda: window.sources.passages == PASSAGES)
    return task


def test_sources_fill_before_the_answer_the_previous_stays_until_it_streams_and_stages_show(
    qtbot: QtBot, hand_answer: Answer
) -> None:
    window, gates = _window(qtbot, hand_answer)
    retriever, generator, verifier = gates.retriever, gates.generator, gates.verifier
    view, sources = window.answer_view, window.sources
    previous_text = gates.previous_text
    assert hand_answer.passages != PASSAGES
    task = window.ask("Do cats sleep?")
    assert task is not None

    # Searching: the previous answer stays, marked as the previous question's.
    qtbot.waitUntil(lambda: window.statusBar().currentMessage() == "Searching your documents…")
    assert view.toPlainText() == previous_text and window.answer == hand_answer
    assert window.answer_info.text() == previous_note(hand_answer.question)
    assert window.copy_button.isEnabled()
    assert not sources.passages and sources.caption.text() == SEARCHING_CAPTION

    # Found: the passages are listed while the generator reads them, before any piece.
    retriever.gate.set()
    reading = "Reading the passages… 600 of 600 tokens"
    qtbot.waitUntil(lambda: window.statusBar().currentMessage() == reading)
    assert sources.passages == PASSAGES
    assert [r[1].split("\n")[0] for r in sources.row_texts()] == ["doc 1", "doc 2", "doc 3"]
    assert sources.caption.text() == "3 passages given to the generator. Click one to open it."
    assert window.read_bar.isVisible() and window.read_bar.value() == 600
    assert view.toPlainText() == previous_text and window.answer == hand_answer
    assert generator.calls and not window.run_streamed
    # A passage found opens before the answer is written.
    sources.on_cell_clicked(1, 1)
    assert window.document_view.passage == PASSAGES[1]

    # The first piece replaces the previous answer.
    generator.first.set()
    qtbot.waitUntil(lambda: view.toPlainText() == ANSWER_PIECES[0])
    assert window.answer is None and window.answer_info.text() == ""
    assert not window.copy_button.isEnabled()
    assert window.statusBar().currentMessage() == "Writing the answer… 1 tokens"
    assert sources.passages == PASSAGES and not window.read_bar.isVisible()

    # Checking, sentence by sentence; the fourth ("Fish swim.") shares no word with any
    # passage, so it is decided without the verifier (issue 40's gate).
    generator.rest.set()
    for i in range(1, 4):
        qtbot.waitUntil(
            lambda i=i: window.statusBar().currentMessage() == f"Checking sentence {i} of 4…"
        )
        verifier.gate.release()
    qtbot.waitUntil(lambda: not task.is_running, timeout=TIMEOUT_MS)
    assert window.answer is not None and window.answer.question == "Do cats sleep?"
    assert window.answer.passages == PASSAGES

    stages: list[str] = []
    for m in gates.messages:
        m = "Writing the answer…" if m.startswith("Writing the answer…") else m
        if m and (not stages or stages[-1] != m):
            stages.append(m)
    # sentence 4 needs no verifier call: its stage may pass within one status update
    stages = [m for m in stages if m != "Checking sentence 4 of 4…"]
    assert stages == [
        "Searching your documents…",
        "Found 3 passages. Giving the passages to the generator…",
        "Reading the passages…",
        reading,
        "Writing the answer…",
        "Checking sentence 1 of 4…",
        "Checking sentence 2 of 4…",
        "Checking sentence 3 of 4…",
        "Checked 4 of 4 sentences.",
        "Searching the collection for conflicts…",
        ANSWER_STATUS,
    ]


def test_a_question_stopped_before_its_answer_leaves_the_previous_answer_whole(
    qtbot: QtBot, hand_answer: Answer
) -> None:
    window, gates = _window(qtbot, hand_answer)
    task = _found(qtbot, window, gates)
    assert window.copy_button.isEnabled()  # Copy and Export act on the answer on show

    window.stop_button.click()
    qtbot.waitUntil(lambda: not task.is_running, timeout=TIMEOUT_MS)
    assert task.outcome == "cancelled"
    assert window.answer_view.toPlainText() == gates.previous_text and window.answer == hand_answer
    assert window.sources.passages == hand_answer.passages  # the sources of the answer on show
    assert window.answer_info.text() == previous_kept_note(hand_answer.question, "cancelled")
    assert window.answer_info.text() == (
        "Previous answer, to “What is overfitting?”. "
        "The new question was stopped before its answer began."
    )
    assert window.statusBar().currentMessage() == (
        "Stopped before the answer began; the previous answer is still shown."
    )
    assert window.copy_button.isEnabled() and window.ask_button.isEnabled()


def test_the_waiting_screen_comes_back_as_left_and_its_first_word_replaces_it_unseen(
    qtbot: QtBot, hand_answer: Answer
) -> None:
    window, gates = _window(qtbot, hand_answer)
    window.library.create_collection("empty")
    qtbot.waitUntil(lambda: window.library.current == "empty", timeout=TIMEOUT_MS)
    _switch(qtbot, window, "papers")
    assert window.answer_view.toPlainText() == gates.previous_text
    task = _found(qtbot, window, gates)

    # Away and back while the passages are read: the previous answer, marked, and the
    # passages found.
    _switch(qtbot, window, "empty", settle=False)
    assert window.answer_view.toPlainText() == "" and not window.sources.passages
    _switch(qtbot, window, "papers", settle=False)
    assert window.answer_view.toPlainText() == gates.previous_text and window.answer == hand_answer
    assert window.answer_info.text() == previous_note(hand_answer.question)
    assert window.sources.passages == PASSAGES

    # The first word comes while another screen is on show: back, the new answer streams.
    _switch(qtbot, window, "empty", settle=False)
    gates.generator.first.set()
    qtbot.waitUntil(lambda: window.run_streamed == ANSWER_PIECES[0])
    assert window.answer_view.toPlainText() == ""
    _switch(qtbot, window, "papers", settle=False)
    assert window.answer_view.toPlainText() == ANSWER_PIECES[0] and window.answer is None
    assert window.answer_info.text() == "" and not window.copy_button.isEnabled()
    gates.generator.rest.set()
    for _ in range(4):
        gates.verifier.gate.release()
    qtbot.waitUntil(lambda: not task.is_running, timeout=TIMEOUT_MS)
    assert window.answer is not None and window.answer.question == "Do cats sleep?"


def test_each_stage_of_a_question_has_its_own_status_text() -> None:
    texts = [
        stage_text(Progress("rerank", 0, 1, "steps")),
        stage_text(Progress("retrieve", 0, 1, "steps")),
        stage_text(Progress("conflicts", 0, 1, "steps")),
    ]
    assert texts == [RERANK_TEXT, "Searching your documents…", CONFLICTS_TEXT]
    assert stage_text(Progress("verify", 1, 3, "sentences")) == "Checking sentence 2 of 3…"


def _formats(view: AnswerView) -> list[QTextCharFormat]:
    """The character format of every run of text in the view's document."""
    out = []
    block = view.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            out.append(it.fragment().charFormat())
            it += 1
        block = block.next()
    return out


def test_the_previous_answer_is_greyed_and_detached_from_the_new_sources_until_the_first_word(
    qtbot: QtBot, hand_answer: Answer
) -> None:
    window, gates = _window(qtbot, hand_answer)
    view = window.answer_view
    coloured = view.sentence_labels()
    assert len(coloured) == len(hand_answer.sentences)
    task = _found(qtbot, window, gates)  # the new passages are listed

    # Readable, but grey: no label, citation link or sentence (card) of the old answer left,
    # since its [n] would name the new passages listed beside it.
    assert window.sources.passages == PASSAGES
    assert view.toPlainText() == gates.previous_text and view.dimmed
    formats = _formats(view)
    assert formats and {f.foreground().color().name() for f in formats} == {DIM_COLOR}
    assert not any(f.isAnchor() for f in formats)
    assert view.sentence_labels() == [] and view.sentence_count() == 0
    citations: list[int] = []
    view.citation_activated.connect(citations.append)
    point = view.cursorRect(QTextCursor(view.document().find("[1]"))).center()
    qtbot.mouseMove(view.viewport(), point)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert citations == [] and view.popup.isHidden() and view.hovered_index == -1
    assert window.answer_info.text() == previous_note(hand_answer.question)

    # Stopped before the first word: the previous answer comes back in its colours.
    window.stop_button.click()
    qtbot.waitUntil(lambda: not task.is_running, timeout=TIMEOUT_MS)
    assert view.sentence_labels() == coloured and not view.dimmed
    assert window.sources.passages == hand_answer.passages

    # Asked again: grey until the first word, which replaces it.
    task = _found(qtbot, window, gates)
    assert view.dimmed and view.sentence_labels() == []
    gates.generator.first.set()
    qtbot.waitUntil(lambda: view.toPlainText() == ANSWER_PIECES[0])
    assert not view.dimmed
    assert {f.foreground().color().name() for f in _formats(view)} != {DIM_COLOR}
    gates.generator.rest.set()
    for _ in range(4):
        gates.verifier.gate.release()
    qtbot.waitUntil(lambda: not task.is_running, timeout=TIMEOUT_MS)
