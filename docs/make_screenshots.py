"""Screenshots of issue 42 under Xvfb: the layout before, during and after a colour check, a
long hover card near the window's bottom, the colours' help page, the empty Team dialog, a text
source opened whole, at one screen size.

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python docs/make_screenshots.py
    xvfb-run -a -s "-screen 0 1366x768x24" .venv/bin/python docs/make_screenshots.py

Everything is real (the sample collection ingested, a question answered by the bundled models,
a colour check of 5 pairs per kind so that it ends in a minute) except the hover card's answer,
made by hand to be longer than the window (tests/ui/test_hover_cards.py). Files go to docs/ as
``issue42_<scene>_<width>x<height>.png``; VERIFAI_HOME is a temporary folder.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["VERIFAI_HOME"] = tempfile.mkdtemp(prefix="verifai-shots-")

from PySide6.QtGui import QGuiApplication  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication, QMessageBox  # noqa: E402

from tests.ui.test_hover_cards import long_card_answer  # noqa: E402
from tests.ui.test_text_sources import MANUAL, _passage  # noqa: E402
from verifai_desktop.ui.app import create_app  # noqa: E402
from verifai_desktop.ui.main_window import MainWindow  # noqa: E402
from verifai_desktop.ui.resources import sample_files  # noqa: E402
from verifai_desktop.ui.self_check import START_TITLE, start_text  # noqa: E402

QUESTION = "How can overfitting be detected when training deep learning models?"
OUT = ROOT / "docs"


def wait_until(done: Callable[[], bool], timeout_s: float = 600.0) -> None:
    end = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > end:
            raise TimeoutError("the app did not get there in time")
        QApplication.processEvents()
        time.sleep(0.02)


def pause(seconds: float) -> None:
    end = time.monotonic() + seconds
    wait_until(lambda: time.monotonic() > end)


def shot(scene: str, size: str) -> Path:
    pause(0.4)
    screen = QGuiApplication.primaryScreen()
    path = OUT / f"issue42_{scene}_{size}.png"
    screen.grabWindow(0).save(str(path))
    print(path)
    return path


def main() -> None:
    app = create_app([])
    screen = QGuiApplication.primaryScreen()
    geo = screen.availableGeometry()
    size = f"{geo.width()}x{geo.height()}"
    window = MainWindow(offer_sample=False)
    window.setGeometry(geo)
    window.show()
    library = window.library
    library.ingest(sample_files(), new_name="sample")
    wait_until(lambda: library.current == "sample" and not library.busy and bool(library.rows))
    window.reading_layout.reset()

    # A real answer, then the colour check's confirmation: the layout before.
    window.question.setText(QUESTION)
    window.ask_button.click()
    wait_until(lambda: window.answer is not None and not window.working)
    pause(1.0)
    text = start_text("sample", 30)
    box = QMessageBox(QMessageBox.Icon.Question, START_TITLE, text, parent=window)
    box.setStandardButtons(QMessageBox.StandardButton.Ok | QMessageBox.StandardButton.Cancel)
    box.show()
    shot("before", size)
    box.close()

    # During and after a real colour check (5 pairs per kind).
    check = library.self_check
    check.n_per_kind = 5
    check.confirm_start = lambda text: True  # type: ignore[method-assign]
    check.check_button.click()
    wait_until(lambda: "Checking" in check.progress_label.text())
    shot("during", size)
    wait_until(lambda: not check.running and check.details_box is not None)
    shot("after", size)
    check.details_box.close()

    # A hover card longer than the window, over a sentence near the window's bottom.
    answer = long_card_answer()
    window.answer = answer
    view = window.answer_view
    view.show_answer(answer)
    view.verticalScrollBar().setValue(view.verticalScrollBar().maximum())
    last = len(answer.sentences) - 1
    QTest.mouseMove(view.viewport(), view.sentence_point(last))
    wait_until(view.popup.isVisible, 5)
    shot("hover_card", size)
    view.popup.hide()

    # The colours' help page, from the legend's link.
    window.legend.help_requested.emit()
    dialog = window.help_menu.dialog
    assert dialog is not None
    shot("help", size)
    dialog.close()

    # The Team dialog, empty, after Test connection.
    team = library.collection_list.on_team_clicked()
    team.test_button.click()
    shot("team", size)
    team.close()

    # A text source opened whole at its passage.
    passage = _passage(MANUAL, 0.8)
    window.tabs.setCurrentWidget(window.document_view)
    window.document_view.show_passage(passage, (0, passage.sentence_spans[0][1]))
    window.sources.set_passages((passage,))
    shot("text_source", size)
    window.close()
    app.quit()


if __name__ == "__main__":
    main()
