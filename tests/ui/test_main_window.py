"""Main window: starts without model libraries, remembers state, settings dialog, export,
document view on a real PDF page, and a rendered answer read back from the window."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.conftest import DOCS_CLEAN
from verifai_desktop.domain import (
    Answer,
    ChunkId,
    DocId,
    Location,
    LocationKind,
    Passage,
    Progress,
)
from verifai_desktop.settings import VerifySettings, load_settings
from verifai_desktop.ui.document_view import DocumentView
from verifai_desktop.ui.main_window import MainWindow
from verifai_desktop.ui.settings_dialog import SettingsDialog

HEAVY_MODULES = (
    "torch",
    "llama_cpp",
    "sentence_transformers",
    "transformers",
    "onnxruntime",
    "tantivy",
    "usearch",
)


def test_window_opens_without_importing_models(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from verifai_desktop.ui.app import create_app\n"
        "from verifai_desktop.ui.main_window import MainWindow\n"
        "app = create_app(); w = MainWindow(); w.show(); app.processEvents()\n"
        f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY_MODULES!r})\n"
        "print('heavy=' + ','.join(heavy)); print('title=' + w.windowTitle())\n"
    )
    env = {
        "QT_QPA_PLATFORM": "offscreen",
        "VERIFAI_HOME": str(tmp_path / "home"),
        "PATH": "/usr/bin:/bin",
    }
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert "heavy=\n" in out.stdout
    assert "title=VerifAI Desktop\n" in out.stdout


def test_answer_in_window_sources_and_export(
    qtbot: QtBot, hand_answer: Answer, tmp_path: Path
) -> None:
    window = MainWindow(offer_sample=False)
    qtbot.addWidget(window)
    window.on_answer_ready(hand_answer)
    assert window.answer_view.sentence_labels() == [
        (s.text, s.label) for s in hand_answer.sentences
    ]
    assert window.sources.row_texts()[1] == (
        "[2]",
        "DVT prophylaxis review\nbmc_trauma.pdf, p. 3",
        "0.50",
        "0.60",
        "0.530",
    )
    # Clicking source [2] opens it at its passage, the contradicted sentence's evidence marked.
    table = window.sources.table
    cell = table.visualRect(table.model().index(1, 1)).center()
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=cell)
    assert window.tabs.currentWidget() is window.document_view
    assert window.document_view.passage == hand_answer.passages[1]
    assert window.document_view.evidence == "Low molecular weight heparin reduced DVT."
    assert window.document_view.highlight_count == 1 and not window.document_view.showing_pdf_page
    md = window.export_answer(tmp_path / "a.md").read_text(encoding="utf-8")
    page = window.export_answer(tmp_path / "a.html").read_text(encoding="utf-8")
    assert md.startswith("# What is overfitting?") and page.startswith("<!DOCTYPE html>")
    window.on_copy_clicked()
    from PySide6.QtGui import QGuiApplication

    mime = QGuiApplication.clipboard().mimeData()
    assert mime.text() == md and "<mark>" in mime.html()
    # Qt's offscreen platform segfaults at interpreter exit if the clipboard still owns data.
    QGuiApplication.clipboard().clear()


def test_state_and_settings_are_saved_as_toml(qtbot: QtBot) -> None:
    window = MainWindow(offer_sample=False)
    qtbot.addWidget(window)
    dialog = SettingsDialog(window.settings, window)
    qtbot.addWidget(dialog)
    dialog.k.setValue(7)
    dialog.mode.setCurrentText("rrf")
    dialog.abstain_threshold.setValue(0.31)
    dialog.gpu_layers.setCurrentIndex(dialog.gpu_layers.findData("none"))
    dialog.accept()
    assert dialog.result_settings is not None
    window.apply_settings(dialog.result_settings)
    saved = load_settings()
    assert (
        saved.retrieval.k,
        saved.retrieval.mode,
        saved.verify.abstain_threshold,
        saved.models.n_gpu_layers,
    ) == (7, "rrf", 0.31, 0)
    window.resize(711, 477)  # the offscreen screen is 800x600
    window.library.current = "papers"
    window.save_state()
    ui = load_settings().ui
    assert ui.last_collection == "papers" and ui.window_geometry
    again = MainWindow(offer_sample=False)
    qtbot.addWidget(again)
    assert (again.width(), again.height()) == (711, 477)
    assert again.settings.retrieval.k == 7


@pytest.mark.parametrize("page_number", [2])
def test_document_view_renders_pdf_page_with_evidence(
    qtbot: QtBot, page_number: int, shared_data: Path
) -> None:
    import pymupdf

    path = DOCS_CLEAN / "bmc_trauma_2010_dvt_prophylaxis_review.pdf"
    with pymupdf.open(path) as doc:
        page_text = doc[page_number - 1].get_text()
        page_width_pt = doc[page_number - 1].rect.width
    # A sentence that sits on one line of that page.
    evidence = next(line.strip() for line in page_text.splitlines() if len(line.strip()) > 60)
    passage = Passage(
        ChunkId(1),
        DocId(1),
        path,
        "DVT review",
        evidence,
        0,
        len(evidence),
        Location(LocationKind.PAGE, page_number),
        ((0, len(evidence)),),
    )
    view = DocumentView()
    qtbot.addWidget(view)
    view.show_passage(passage, (0, len(evidence)))
    assert view.showing_pdf_page and view.page_index == page_number - 1
    assert view.highlight_count >= 1
    assert abs(view.page_image.pixmap().width() - page_width_pt * view.zoom) <= 1
    assert view.open_button.isEnabled()

    md_path = DOCS_CLEAN / "deep_rules_09_overfitting.md"
    text = "Overfitting is a challenge. It is common."
    md = Passage(
        ChunkId(2),
        DocId(2),
        md_path,
        "Deep rules",
        text,
        0,
        len(text),
        Location(LocationKind.SECTION, None, "Tip 7"),
        ((0, 27), (28, 41)),
    )
    view.show_passage(md, (28, 41))
    assert not view.showing_pdf_page and view.highlight_count == 1
    assert view.text.toPlainText() == text


def test_panel_widths_are_restored(qtbot: QtBot) -> None:
    window = MainWindow(offer_sample=False)
    qtbot.addWidget(window)
    window.resize(790, 560)
    window.show()
    qtbot.waitExposed(window)
    before = window.splitter.sizes()
    # The user drags the answer's edge to the left: the document side gets the room.
    window.splitter.setSizes([before[0], before[1] - 40, before[2] + 40])
    sizes = window.splitter.sizes()
    assert sizes == [before[0], before[1] - 40, before[2] + 40]
    window.save_state()
    assert load_settings().ui.splitter_state

    again = MainWindow(offer_sample=False)
    qtbot.addWidget(again)
    again.show()
    qtbot.waitExposed(again)
    assert again.splitter.sizes() == sizes


class _HeldSession:
    """Stands in for AskSession (control flow only): answers once released."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.release = threading.Event()
        self.questions: list[str] = []

    def ask(self, collection: object, question: str, **_kwargs: object) -> Answer:
        self.questions.append(question)
        self.release.wait(30)
        return self.answer

    def thresholds(self) -> VerifySettings:
        return VerifySettings()


def test_enter_asks_only_when_ask_is_enabled_and_a_new_question_clears_the_page(
    qtbot: QtBot, hand_answer: Answer
) -> None:
    window = MainWindow(offer_sample=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    session = _HeldSession(hand_answer)
    window._session = session  # type: ignore[assignment]
    window._models_ready = True
    window.question.setText("What is overfitting?")

    # No collection: Ask is disabled and Enter does nothing.
    assert window.library.current == "" and not window.ask_button.isEnabled()
    qtbot.keyClick(window.question, Qt.Key.Key_Return)
    assert window.ask_task is None

    window.library.create_collection("papers")
    qtbot.waitUntil(
        lambda: window.library.current == "papers" and not window.runner.running, timeout=30_000
    )
    assert window.ask_button.isEnabled()

    # An index write is going on: Ask is disabled and Enter does nothing.
    window.library.remove_documents([])
    assert window.library.busy and not window.ask_button.isEnabled()
    qtbot.keyClick(window.question, Qt.Key.Key_Return)
    assert window.ask_task is None
    qtbot.waitUntil(lambda: window.ask_button.isEnabled(), timeout=30_000)

    # The previous answer's page is open in the Document tab ...
    window.on_answer_ready(hand_answer)
    window.on_citation_activated(1)
    assert window.tabs.currentWidget() is window.document_view
    assert window.document_view.passage == hand_answer.passages[0]

    # ... Enter asks, and the new question clears it.
    qtbot.keyClick(window.question, Qt.Key.Key_Return)
    first = window.ask_task
    assert first is not None and first.is_running
    assert window.document_view.passage is None
    assert window.document_view.text.toPlainText() == ""
    assert window.tabs.currentWidget() is window.sources
    # While it runs, Ask is disabled and Enter does not start another question.
    assert not window.ask_button.isEnabled()
    qtbot.keyClick(window.question, Qt.Key.Key_Return)
    assert window.ask_task is first
    session.release.set()
    qtbot.waitUntil(lambda: not first.is_running, timeout=30_000)
    assert session.questions == ["What is overfitting?"]
    assert window.answer == hand_answer and window.ask_button.isEnabled()


class _ReadingSession:
    """Stands in for AskSession (control flow only): reports the search and prompt reading
    (1,000 tokens in two batches), streams one piece, then answers, each step once released."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.steps = [threading.Event() for _ in range(3)]

    def ask(
        self,
        collection: object,
        question: str,
        *,
        on_token: Callable[[str], None],
        progress: Callable[[Progress], None],
        **_kwargs: object,
    ) -> Answer:
        progress(Progress("retrieve", 0, 1, "steps"))
        progress(Progress("retrieve", 1, 1, "steps"))
        progress(Progress("generate", 0, 512, "tokens"))
        progress(Progress("read", 0, 1000, "tokens"))
        self.steps[0].wait(30)
        progress(Progress("read", 512, 1000, "tokens"))
        self.steps[1].wait(30)
        progress(Progress("read", 1000, 1000, "tokens"))
        on_token("Overfitting is")
        progress(Progress("generate", 1, 512, "tokens"))
        self.steps[2].wait(30)
        return self.answer

    def thresholds(self) -> VerifySettings:
        return VerifySettings()


def test_the_answer_pane_and_a_bar_show_prompt_reading_until_the_answer_streams(
    qtbot: QtBot, hand_answer: Answer
) -> None:
    window = MainWindow(offer_sample=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.library.create_collection("papers")
    qtbot.waitUntil(
        lambda: window.library.current == "papers" and not window.runner.running, timeout=30_000
    )
    session = _ReadingSession(hand_answer)
    window._session = session  # type: ignore[assignment]
    window._models_ready = True
    view, bar = window.answer_view, window.read_bar
    assert not bar.isVisible()

    task = window.ask("What is overfitting?")
    assert task is not None
    qtbot.waitUntil(lambda: view.progress_text == "Reading the passages… 0 of 1,000 tokens")
    assert (bar.isVisible(), bar.value(), bar.maximum()) == (True, 0, 1000)
    assert window.statusBar().currentMessage() == "Reading the passages… 0 of 1,000 tokens"
    assert not view.showing_hint

    session.steps[0].set()
    qtbot.waitUntil(lambda: view.progress_text == "Reading the passages… 512 of 1,000 tokens")
    assert (bar.isVisible(), bar.value()) == (True, 512)
    assert bar.text() == "512 / 1000 tokens"

    session.steps[1].set()  # read to the end, then the first piece replaces the note
    qtbot.waitUntil(lambda: view.toPlainText() == "Overfitting is")
    assert view.progress_text == "" and not bar.isVisible()
    assert window.statusBar().currentMessage() == "Writing the answer… 1 tokens"

    session.steps[2].set()
    qtbot.waitUntil(lambda: not task.is_running, timeout=30_000)
    assert window.answer == hand_answer and not bar.isVisible()
