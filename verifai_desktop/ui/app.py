"""``verifai-desktop``: start the Qt application and show the main window."""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from verifai_desktop.domain import Answer
from verifai_desktop.logs import setup_logging
from verifai_desktop.offline import stay_offline
from verifai_desktop.ui.adding import suggested_collection_name
from verifai_desktop.ui.errors import install_excepthook
from verifai_desktop.ui.main_window import MainWindow
from verifai_desktop.ui.resources import icon, stylesheet

log = logging.getLogger(__name__)


def create_app(argv: Sequence[str] = ()) -> QApplication:
    """The QApplication with the app's name, icon and style sheet (reused if one exists)."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication([sys.argv[0], *argv])
    app.setApplicationName("VerifAI Desktop")
    app.setOrganizationName("verifai-desktop")
    app.setWindowIcon(icon("app"))
    app.setStyleSheet(stylesheet())
    return app


class _Scripted(QObject):
    """``--ingest``/``--ask``/``--screenshot``: drive the real window for demos and the README
    screenshots (ingest, wait, ask, focus the first checked sentence, open its page, grab the
    screen, quit). With ``waiting``, the screen is also grabbed while the answer is being
    written, once the sources are listed. The time from asking to the first source listed and
    to the first answer word is logged (seconds, monotonic clock)."""

    def __init__(
        self,
        window: MainWindow,
        ingest: list[Path],
        question: str,
        screenshot: Path | None,
        waiting: Path | None = None,
    ) -> None:
        super().__init__(window)
        self.window = window
        self.question = question
        self.screenshot = screenshot
        self.waiting = waiting
        self._asked_at = 0.0
        self._first_source = 0.0
        self._first_word = 0.0
        if screenshot is not None:
            # The window as maximised: the whole screen (there may be no window manager).
            screen = QGuiApplication.primaryScreen()
            if screen is not None:
                window.setGeometry(screen.availableGeometry())
        if ingest:
            window.library.ingest(ingest, new_name=suggested_collection_name(ingest))
        self._poll = QTimer(self)
        self._poll.setInterval(300)
        self._poll.timeout.connect(self._tick)
        self._poll.start()

    def _tick(self) -> None:
        lib = self.window.library
        if lib.busy or not lib.current:
            return
        self._poll.stop()
        if self.question:
            self.window.question.setText(self.question)
            self.window.question.setCursorPosition(0)
            self._asked_at = time.monotonic()
            task = self.window.ask(self.question)
            if task is not None:
                task.succeeded.connect(self._on_answer)
                task.failed.connect(lambda _e: QTimer.singleShot(1500, self._grab))
                self._watch = QTimer(self)
                self._watch.setInterval(50)
                self._watch.timeout.connect(self._on_watch)
                self._watch.start()
                return
        QTimer.singleShot(1000, self._grab)

    def _on_watch(self) -> None:
        """The first source listed and the first answer word, while the answer is written."""
        now = time.monotonic() - self._asked_at
        if not self._first_source and self.window.sources.row_texts():
            self._first_source = now
            log.info("first source listed %.2f s after asking", now)
            if self.waiting is not None:
                QTimer.singleShot(500, lambda: self._save(self.waiting))
        if not self._first_word and self.window.run_streamed.strip():
            self._first_word = now
            log.info("first answer word shown %.2f s after asking", now)
        if self._first_source and self._first_word:
            self._watch.stop()

    def _on_answer(self, answer: Answer) -> None:
        self._watch.stop()
        log.info("answer complete %.2f s after asking", time.monotonic() - self._asked_at)
        checked = [i for i, s in enumerate(answer.sentences) if s.verdicts]
        if checked:
            self.window.answer_view.setFocus()
            self.window.answer_view.focus_sentence(checked[0])
            self.window.on_citation_activated(answer.sentences[checked[0]].citations[0])
        QTimer.singleShot(1200, self._grab)

    def _save(self, path: Path | None) -> None:
        if path is not None:
            screen = QGuiApplication.primaryScreen()
            image = screen.grabWindow(0) if screen is not None else self.window.grab()
            image.save(str(path))
            log.info("screenshot saved to %s", path)

    def _grab(self) -> None:
        if self.screenshot is not None:
            self._save(self.screenshot)
            self.window.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``verifai-desktop``; returns the exit status."""
    # In a frozen build (installers/verifai.spec) the ingest's parser worker is this
    # executable started again with --multiprocessing-fork: run the worker and exit here.
    multiprocessing.freeze_support()
    parser = argparse.ArgumentParser(prog="verifai-desktop", description="VerifAI Desktop")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    parser.add_argument("--collection", help="open this collection instead of the last one")
    parser.add_argument("--ingest", nargs="*", type=Path, default=[], help="add these files first")
    parser.add_argument("--ask", default="", help="ask this question once the window is up")
    parser.add_argument(
        "--screenshot", type=Path, help="after --ask, save a screenshot here and quit"
    )
    parser.add_argument(
        "--waiting-screenshot",
        type=Path,
        help="with --ask, save a screenshot here while the answer is being written",
    )
    args, qt_args = parser.parse_known_args(list(sys.argv[1:] if argv is None else argv))
    stay_offline()  # only a download asked for in the Models dialog goes online (offline.py)
    setup_logging(args.verbose)
    app = create_app(qt_args)
    install_excepthook()
    window = MainWindow()
    if args.collection:
        window.library.refresh_collections(select=args.collection)
    window.show()
    if args.ingest or args.ask or args.screenshot or args.waiting_screenshot:
        _Scripted(window, list(args.ingest), args.ask, args.screenshot, args.waiting_screenshot)
    return int(app.exec())


if __name__ == "__main__":
    sys.exit(main())
