"""Screenshot of a kept answer reopened in the window, cited author-year with its references
(issue 43; docs/library_author_year.png).

The answer is the newest of collection ``papers``'s history in ``$VERIFAI_HOME``: ask it first
with the real models (``verifai ingest library.bib -c papers``, ``verifai ask ... -c papers``;
tests/e2e/test_library_ask.py does both). Then::

    PYTHONPATH=. VERIFAI_HOME=... xvfb-run -a -s "-screen 0 1600x1000x24" \
        python benchmarks/library_screenshot.py shot.png
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QTimer
from PySide6.QtGui import QGuiApplication

from verifai_desktop.store.folders import existing_path
from verifai_desktop.store.history import History
from verifai_desktop.ui.app import create_app
from verifai_desktop.ui.main_window import MainWindow

app = create_app([])
window = MainWindow(offer_sample=False)
screen = QGuiApplication.primaryScreen()
window.setGeometry(screen.availableGeometry())
window.library.refresh_collections(select="papers")
window.show()
with History(existing_path("papers")) as history:
    saved = history.answers()[0]
answer = saved.answer()


def show() -> None:
    window.answer = answer
    window.question.setText(answer.question)
    window._show_answer(answer)
    window.sources.set_answer(answer)
    window.tabs.setCurrentWidget(window.sources)
    window._set_answer_actions(True)
    QTimer.singleShot(1500, grab)


def grab() -> None:
    screen.grabWindow(0).save(sys.argv[1])
    print(window.answer_view.toPlainText())  # what the picture shows, as text
    window.close()
    app.quit()


QTimer.singleShot(2500, show)
app.exec()
