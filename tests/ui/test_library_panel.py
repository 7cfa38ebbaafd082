"""Library panel control flow without the core: drag and drop, progress display, errors."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from pytestqt.qtbot import QtBot

from verifai_desktop.domain import Progress
from verifai_desktop.errors import EncryptedDocument, ModelNotFound
from verifai_desktop.settings import Settings
from verifai_desktop.ui.errors import describe_error, show_error
from verifai_desktop.ui.library_panel import LibraryPanel
from verifai_desktop.ui.questions import PasswordQuestion
from verifai_desktop.ui.tasks import TaskRunner


def _panel(qtbot: QtBot) -> LibraryPanel:
    panel = LibraryPanel(TaskRunner(), Settings, offer_sample=False)
    qtbot.addWidget(panel)
    return panel


def test_dropped_files_and_folders_are_ingested(qtbot: QtBot, tmp_path: Path) -> None:
    panel = _panel(qtbot)
    calls: list[list[Path]] = []

    def ingest(paths: Sequence[Path], *, passwords: dict[Path, str] | None = None) -> None:
        calls.append(list(paths))

    panel.ingest = ingest  # type: ignore[method-assign]
    (tmp_path / "a.md").write_text("# A\n\nText.", encoding="utf-8")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(tmp_path / "a.md")), QUrl.fromLocalFile(str(tmp_path))])
    event = QDropEvent(
        QPointF(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    panel.dropEvent(event)
    assert calls == [[tmp_path / "a.md", tmp_path]]


def test_progress_shows_files_and_chunks(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    panel.on_ingest_progress(Progress("files", 3, 12, "files", "paper.pdf"))
    panel.on_ingest_progress(Progress("embed", 1536, None, "chunks"))
    assert (panel.files_bar.value(), panel.files_bar.maximum()) == (3, 12)
    assert panel.progress_label.text() == "Reading paper.pdf"
    assert panel.chunks_label.text() == "1,536 chunks embedded"


def test_errors_say_what_to_do(qtbot: QtBot) -> None:
    report = describe_error(EncryptedDocument("/d/secret.pdf"))
    assert report.title == "Password needed"
    assert report.message.startswith("could not read secret.pdf: it is encrypted")
    assert describe_error(ModelNotFound("qwen")).remedy == (
        "Open Models (Edit → Models…) to download it or choose another installed model."
    )
    crash = describe_error(RuntimeError("boom"))
    assert crash.title == "Unexpected error" and "verifai.log" in crash.remedy
    box = show_error(None, ModelNotFound("qwen"), context="Answering the question")
    qtbot.addWidget(box)
    assert box.windowTitle() == "Model missing"
    assert box.text().startswith("Answering the question: model 'qwen' is not available")
    box.close()


def test_password_question_is_asked_again_when_wrong(qtbot: QtBot, tmp_path: Path) -> None:
    panel = _panel(qtbot)
    ingested: list[tuple[list[Path], dict[Path, str] | None]] = []

    def ingest(paths: Sequence[Path], *, passwords: dict[Path, str] | None = None) -> None:
        ingested.append((list(paths), passwords))

    panel.ingest = ingest  # type: ignore[method-assign]
    pdf = tmp_path / "secret.pdf"
    asked: list[tuple[str, bool, str]] = []
    answers = iter(("", "foo"))

    def answer(question: PasswordQuestion) -> None:
        asked.append((question.path.name, question.wrong, question.text))
        question.answer(next(answers))

    panel.password_requested.connect(answer)
    # No password given: nothing is ingested.
    panel.request_passwords([pdf])
    assert ingested == []
    # A password tried before came back encrypted: asked again, marked wrong, then ingested.
    panel.request_passwords([pdf], tried={pdf: "bar"})
    assert asked == [
        ("secret.pdf", False, "secret.pdf is encrypted. Enter its password to index it:"),
        ("secret.pdf", True, "The password for secret.pdf was wrong. Try again:"),
    ]
    assert ingested == [([pdf], {pdf: "foo"})]
