"""The ingest progress line while a scanned page or a picture is recognised (issue 28)."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from verifai_desktop.domain import Progress
from verifai_desktop.ui.ingest_progress import ProgressFrame


def test_the_page_being_recognised_is_named(qtbot: QtBot) -> None:
    frame = ProgressFrame()
    qtbot.addWidget(frame)
    frame.show_progress(Progress("files", 3, 10, "files", "scan.pdf"))
    assert frame.label.text() == "Reading scan.pdf"
    frame.show_progress(Progress("ocr", 1, 2, "pages", "scan.pdf p. 2"))
    assert frame.label.text() == "Recognising the text of scan.pdf p. 2 (scanned page 2 of 2)"
    assert frame.files_bar.value() == 3  # the files bar is left as it was


def test_the_picture_being_recognised_is_named(qtbot: QtBot) -> None:
    frame = ProgressFrame()
    qtbot.addWidget(frame)
    frame.show_progress(Progress("files", 0, 1, "files", "report.docx"))
    frame.show_progress(Progress("ocr", 0, 3, "images", "report.docx"))
    assert frame.label.text() == "Recognising the text of report.docx image 1 of 3"
