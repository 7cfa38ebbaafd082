"""Screenshots of issue 42, item 1 under Xvfb: two collections, a question running in one.

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python docs/make_job_screenshots.py
    xvfb-run -a -s "-screen 0 1366x768x24" .venv/bin/python docs/make_job_screenshots.py

Everything is real: the sample collection ("sample") and a second one ("notes", one of the
sample's Markdown files) are ingested, and a question is asked in "sample" with the bundled
models. While it is being answered, "notes" is chosen (``issue42_jobs_other_<size>.png``: its
own documents, no Stop and no progress of the question, a line naming "sample"), then
"sample" again (``issue42_jobs_own_<size>.png``: the question's progress and Stop). Files go
to docs/; VERIFAI_HOME is a temporary folder.
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
from PySide6.QtWidgets import QApplication  # noqa: E402

from verifai_desktop.settings import Settings  # noqa: E402
from verifai_desktop.store.collection import Collection  # noqa: E402
from verifai_desktop.ui.app import create_app  # noqa: E402
from verifai_desktop.ui.main_window import MainWindow  # noqa: E402
from verifai_desktop.ui.resources import sample_files  # noqa: E402

QUESTION = "How can overfitting be detected when training deep learning models?"
OUT = ROOT / "docs"


def wait_until(done: Callable[[], bool], timeout_s: float = 900.0) -> None:
    end = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > end:
            raise TimeoutError("the app did not get there in time")
        QApplication.processEvents()
        time.sleep(0.02)


def shot(scene: str, size: str) -> Path:
    end = time.monotonic() + 0.5
    wait_until(lambda: time.monotonic() > end)
    path = OUT / f"issue42_jobs_{scene}_{size}.png"
    QGuiApplication.primaryScreen().grabWindow(0).save(str(path))
    print(path)
    return path


def main() -> None:
    files = sample_files()
    with Collection.open("sample", create=True, settings=Settings()) as col:
        col.add_paths(files)
    with Collection.open("notes", create=True, settings=Settings()) as col:
        col.add_paths([f for f in files if f.suffix == ".md"][:1])
    app = create_app([])
    geo = QGuiApplication.primaryScreen().availableGeometry()
    size = f"{geo.width()}x{geo.height()}"
    window = MainWindow(offer_sample=False)
    window.setGeometry(geo)
    window.show()
    library = window.library
    library.refresh_collections(select="sample")
    wait_until(lambda: library.current == "sample" and bool(library.rows))
    window.reading_layout.reset()

    window.question.setText(QUESTION)
    window.ask_button.click()
    wait_until(lambda: window.read_bar.isVisible() or bool(window.run_streamed))
    library.refresh_collections(select="notes")  # as a click on it in the list
    wait_until(lambda: library.current == "notes" and bool(library.rows))
    shot("other", size)
    library.refresh_collections(select="sample")
    wait_until(lambda: bool(window.run_streamed))
    shot("own", size)
    window.on_stop_clicked()
    task = window.ask_task
    wait_until(lambda: task is None or not task.is_running)
    window.close()
    app.quit()


if __name__ == "__main__":
    main()
