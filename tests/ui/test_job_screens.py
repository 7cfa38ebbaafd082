"""One collection's job on screen (issue 42, item 1): while one collection is being written,
answered from or colour-checked, choosing another shows that collection's own documents and
none of the job (no progress, Cancel, Stop or status of it), Ask is held back with a line naming
the busy collection, the job keeps running, and coming back shows its progress again.

The ingest is the real one on real documents (the sample's Markdown files), held at its start
until the test lets it go; the question runs through the real ask session with the gated fakes
of tests/ui/test_waiting.py (control flow only); the colour check with the fake verifier of
tests/ui/test_self_check.py.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from tests.ui.test_screens import _switch
from tests.ui.test_self_check import SentenceInPassage
from tests.ui.test_waiting import _found, _window
from tests.unit.test_pipeline import ANSWER_PIECES, PASSAGES
from verifai_desktop.domain import Answer
from verifai_desktop.pipeline import AskSession
from verifai_desktop.settings import Settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.ui import library_runs
from verifai_desktop.ui.library_panel import LibraryPanel
from verifai_desktop.ui.main_window import MainWindow
from verifai_desktop.ui.resources import sample_files
from verifai_desktop.ui.tasks import TaskRunner

TIMEOUT_MS = 60_000
HOLD_S = 120


def _collections() -> list[Path]:
    """Collections "papers" (two sample Markdown files) and "notes" (one); returns the third
    file, not yet in "papers"."""
    files = sorted(f for f in sample_files() if f.suffix == ".md")
    assert len(files) == 3
    with Collection.open("papers", create=True, settings=Settings()) as col:
        col.add_paths(files[:2])
    with Collection.open("notes", create=True, settings=Settings()) as col:
        col.add_paths(files[2:])
    return files


def test_another_collection_shows_its_own_documents_while_one_is_ingesting(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _collections()
    started, release = threading.Event(), threading.Event()
    real_ingest = library_runs.ingest_sources

    def held_ingest(*args: Any, **kwargs: Any) -> Any:  # the real ingest, started late
        started.set()
        assert release.wait(HOLD_S)
        return real_ingest(*args, **kwargs)

    monkeypatch.setattr(library_runs, "ingest_sources", held_ingest)
    window = MainWindow(Settings(), offer_sample=False)
    qtbot.addWidget(window)
    window.show()
    library, frame = window.library, window.library.progress_frame
    _switch(qtbot, window, "papers")
    assert [Path(r.source).name for r in library.rows] == [f.name for f in files[:2]]

    task = library.ingest([files[2]])
    assert task is not None
    try:
        qtbot.waitUntil(started.is_set, timeout=TIMEOUT_MS)
        qtbot.waitUntil(frame.isVisible, timeout=TIMEOUT_MS)
        assert frame.title.text() == "Adding 1 item(s) to “papers”…"
        assert frame.cancel_button.toolTip() == (
            "Stop adding files to “papers”; files finished before stay indexed"
        )

        # Another collection: its own documents, read while the ingest holds the writer; none
        # of the ingest on screen; Ask held back by a line naming the collection written.
        library.on_collection_clicked("notes")
        qtbot.waitUntil(
            lambda: [Path(r.source).name for r in library.rows] == [files[2].name],
            timeout=TIMEOUT_MS,
        )
        assert library.docs_title.text() == "Documents in “notes”"
        assert not frame.isVisible() and task.is_running
        assert not window.ask_button.isEnabled() and not window.stop_button.isEnabled()
        assert window.busy_note.isVisible()
        assert window.busy_note.text() == "Adding files to “papers”: questions wait until it ends."

        # Back: the ingest's progress again, still running.
        library.on_collection_clicked("papers")
        assert frame.isVisible() and frame.cancel_button.isEnabled()
    finally:
        release.set()  # a failure above must not leave the writer held
        qtbot.waitUntil(lambda: not task.is_running, timeout=TIMEOUT_MS)
    assert task.outcome == "succeeded"
    qtbot.waitUntil(
        lambda: len(library.rows) == 3 and not window.runner.running, timeout=TIMEOUT_MS
    )
    assert not frame.isVisible() and window.busy_note.isHidden()
    assert window.ask_button.isEnabled()


def test_a_question_of_one_collection_shows_none_of_itself_on_another(
    qtbot: QtBot, hand_answer: Answer
) -> None:
    window, gates = _window(qtbot, hand_answer)
    window.library.create_collection("notes")
    qtbot.waitUntil(lambda: window.library.current == "notes", timeout=TIMEOUT_MS)
    _switch(qtbot, window, "papers")
    task = _found(qtbot, window, gates)  # reading the passages found
    assert window.stop_button.isEnabled()
    assert window.stop_button.toolTip() == "Stop the question running in “papers”"
    assert window.read_bar.isVisible() and window.busy_note.isHidden()

    _switch(qtbot, window, "notes", settle=False)
    # Nothing of the question of "papers": no Stop, bar, passages or text; a line says where
    # it runs, and Ask waits for it.
    assert not window.stop_button.isEnabled() and not window.ask_button.isEnabled()
    assert not window.read_bar.isVisible()
    assert window.sources.passages == () and window.answer_view.toPlainText() == ""
    assert window.statusBar().currentMessage() == (
        "“papers”: Reading the passages… 600 of 600 tokens"
    )
    assert window.busy_note.isVisible()
    assert window.busy_note.text() == (
        "A question is being answered in “papers”. Ask here when it ends, or go back to "
        "“papers” to stop it."
    )
    # It keeps running; its status names its collection.
    gates.generator.first.set()
    qtbot.waitUntil(lambda: window.run_streamed == ANSWER_PIECES[0], timeout=TIMEOUT_MS)
    qtbot.waitUntil(
        lambda: window.statusBar().currentMessage() == "“papers”: Writing the answer… 1 tokens",
        timeout=TIMEOUT_MS,
    )
    assert window.answer_view.toPlainText() == ""

    # Back: its stream, Stop, and no line.
    _switch(qtbot, window, "papers", settle=False)
    assert window.answer_view.toPlainText() == ANSWER_PIECES[0]
    assert window.sources.passages == PASSAGES
    assert window.stop_button.isEnabled() and window.busy_note.isHidden()
    window.stop_button.click()
    qtbot.waitUntil(lambda: not task.is_running, timeout=TIMEOUT_MS)
    assert task.outcome == "cancelled"
    assert window.ask_button.isEnabled() and not window.stop_button.isEnabled()


def test_a_colour_check_shows_only_under_its_own_collection(qtbot: QtBot) -> None:
    _collections()
    verifier = SentenceInPassage(hold=True)
    panel = LibraryPanel(TaskRunner(), Settings, offer_sample=False)
    qtbot.addWidget(panel)
    panel.show()
    check = panel.self_check
    check.session_factory = lambda s: AskSession(s, verifier=verifier)
    check.n_per_kind = 3
    panel.refresh_collections(select="papers")
    qtbot.waitUntil(lambda: not panel.runner.running, timeout=TIMEOUT_MS)
    check.run()
    qtbot.waitUntil(verifier.started.is_set, timeout=TIMEOUT_MS)
    assert check.cancel_button.isVisible() and check.cancel_button.text() == "Cancel check"
    assert check.cancel_button.toolTip() == "Stop the colour check of “papers”; nothing is kept"
    assert check.progress_label.text().startswith("“papers”: ")

    # Under "notes": its own (unchecked) summary, no Cancel or progress of the check of
    # "papers", and why it cannot be checked now.
    panel.on_collection_clicked("notes")
    assert check.collection == "notes" and check.running_collection == "papers"
    assert check.cancel_button.isHidden() and check.progress_label.text() == ""
    assert not check.check_button.isEnabled()
    assert check.check_button.toolTip() == (
        "The colours of “papers” are being checked; check these documents when it ends."
    )

    # Back: its progress and Cancel again.
    panel.on_collection_clicked("papers")
    assert check.cancel_button.isVisible() and check.cancel_button.isEnabled()
    assert check.progress_label.text().startswith("“papers”: ")
    verifier.release.set()
    qtbot.waitUntil(lambda: not check.running, timeout=TIMEOUT_MS)
    assert check.cancel_button.isHidden() and check.check_button.isEnabled()
    qtbot.waitUntil(lambda: not panel.runner.running, timeout=TIMEOUT_MS)
