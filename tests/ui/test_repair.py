"""Repairing a damaged collection from the app: the error box offers Repair (in the app's words,
no command line), the repair runs in the background with the ingest progress, and the
collection opens again with its documents; a collection whose files are all gone says why it
cannot be rebuilt and what to do instead.

The real tests build real collections (bundled embedder) from small files of docs/clean, once
per module, and damage copies of them on disk the way test_damage.py does.
"""

from __future__ import annotations

import random
import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget
from pytestqt.qtbot import QtBot

from tests.conftest import DOCS_CLEAN
from verifai_desktop.domain import Answer
from verifai_desktop.errors import IndexCorrupt, RepairImpossible
from verifai_desktop.settings import Settings, collections_dir
from verifai_desktop.store.collection import Collection
from verifai_desktop.ui.errors import (
    REPAIR_IMPOSSIBLE,
    REPAIR_IN_PANEL,
    REPAIR_OFFERED,
    describe_error,
    show_error,
)
from verifai_desktop.ui.library_panel import LibraryPanel
from verifai_desktop.ui.main_window import MainWindow
from verifai_desktop.ui.tasks import TaskRunner

PAGE = 4096
WORK_FILES = ("deep_rules_02_intro.md", "scifact_data_description.md", "scifact_covid_claims.txt")
GONE_FILES = ("scifact_covid_claims.txt",)
REPAIR_TIMEOUT_MS = 600_000  # a real ingest on a loaded machine


def _boxes(parent: QWidget) -> list[QMessageBox]:
    """The error boxes open on ``parent``, oldest first."""
    return [b for b in parent.findChildren(QMessageBox, "errorBox") if b.isVisible()]


def _repair_button(box: QMessageBox) -> QPushButton:
    button = box.findChild(QPushButton, "repairButton")
    assert button is not None
    return button


def _button_texts(box: QMessageBox) -> list[str]:
    return sorted(b.text().replace("&", "") for b in box.buttons())


# ----- the box, without the core -------------------------------------------------------------


def test_damage_box_offers_repair_in_the_apps_words(qtbot: QtBot) -> None:
    damaged = IndexCorrupt(
        "/h/collections/work/catalog.sqlite", "disk I/O error", collection="work"
    )
    asked: list[str] = []
    box = show_error(None, damaged, context="Reading 'work'", repair=asked.append)
    qtbot.addWidget(box)
    assert box.windowTitle() == "Damaged collection"
    assert box.text() == (
        "Reading 'work': /h/collections/work/catalog.sqlite is damaged (disk I/O error)."
    )
    assert box.informativeText() == REPAIR_OFFERED
    assert _button_texts(box) == ["Cancel", "Repair"]
    assert box.defaultButton() is _repair_button(box)
    _repair_button(box).click()
    assert asked == ["work"]
    assert not box.isVisible()

    # Collection unknown, or no way to repair from here: no button, the panel is named.
    for exc, repair in ((IndexCorrupt("/x/catalog.sqlite", "bad"), asked.append), (damaged, None)):
        plain = show_error(None, exc, repair=repair)
        qtbot.addWidget(plain)
        assert plain.findChild(QPushButton, "repairButton") is None
        assert _button_texts(plain) == ["OK"]
        assert plain.informativeText() == REPAIR_IN_PANEL
        plain.close()
    assert asked == ["work"]
    for text in (REPAIR_OFFERED, REPAIR_IN_PANEL, REPAIR_IMPOSSIBLE):
        assert "verifai" not in text and "`" not in text and "--" not in text

    impossible = describe_error(RepairImpossible("work", "its catalog names no file that exists"))
    assert impossible.title == "Cannot repair the collection"
    assert impossible.message == (
        "Collection 'work' cannot be rebuilt: its catalog names no file that exists."
    )
    assert impossible.remedy == REPAIR_IMPOSSIBLE


class _NoAnswers:
    """An ask session that must not be reached: the damaged collection fails to open first."""

    def ask(self, *args: object, **kwargs: object) -> Answer:
        raise AssertionError("asked a collection that could not be opened")


def test_ask_on_an_emptied_catalog_offers_repair_that_cannot_rebuild(qtbot: QtBot) -> None:
    with Collection.open("papers", create=True):
        pass
    catalog = collections_dir() / "papers" / "catalog.sqlite"
    catalog.write_bytes(b"")
    for side in catalog.parent.glob("catalog.sqlite-*"):
        side.unlink()

    window = MainWindow(offer_sample=False)
    qtbot.addWidget(window)
    window.library.confirm = lambda title, text: True  # type: ignore[method-assign]
    # Selecting the collection at start reads it: the damage is reported with Repair.
    qtbot.waitUntil(lambda: len(_boxes(window)) == 1, timeout=30_000)
    (reading,) = _boxes(window)
    assert reading.text() == (
        f"Reading 'papers': {catalog} is damaged (the catalog file is empty (0 bytes))."
    )
    assert _button_texts(reading) == ["Cancel", "Repair"]
    reading.button(QMessageBox.StandardButton.Cancel).click()
    # The history list, read beside the documents when the collection is selected, may still
    # be running when the box shows: wait for it, then nothing is left and no repair started.
    qtbot.waitUntil(lambda: not window.runner.running, timeout=30_000)
    assert _boxes(window) == [] and window.library.repair_task is None

    # A question on it reports it too, from the window.
    window._session = _NoAnswers()  # type: ignore[assignment]
    window._models_ready = True
    assert window.ask("What is overfitting?") is not None
    qtbot.waitUntil(lambda: len(_boxes(window)) == 1, timeout=30_000)
    (asking,) = _boxes(window)
    assert asking.text().startswith(f"Answering the question: {catalog} is damaged")
    assert asking.informativeText() == REPAIR_OFFERED
    _repair_button(asking).click()
    task = window.library.repair_task
    assert task is not None
    assert window.library.busy and not window.ask_button.isEnabled()
    qtbot.waitUntil(lambda: not task.is_running, timeout=30_000)
    assert task.outcome == "failed" and isinstance(task.error, RepairImpossible)
    (cannot,) = _boxes(window)
    assert cannot.windowTitle() == "Cannot repair the collection"
    assert cannot.text() == (
        "Repairing “papers”: Collection 'papers' cannot be rebuilt: no source file can be read "
        "from its catalog."
    )
    assert cannot.informativeText() == REPAIR_IMPOSSIBLE
    assert _button_texts(cannot) == ["OK"]
    assert catalog.stat().st_size == 0  # left as it was
    cannot.close()

    # The panel's Repair collection button (confirmed) runs the same repair.
    assert window.library.repair_button.isEnabled()
    window.library.repair_button.click()
    second = window.library.repair_task
    assert second is not None and second is not task
    qtbot.waitUntil(lambda: not second.is_running, timeout=30_000)
    assert isinstance(second.error, RepairImpossible)
    assert [b.windowTitle() for b in _boxes(window)] == ["Cannot repair the collection"]
    _boxes(window)[0].close()


# ----- real collections ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Built:
    """Collections built once per module: copy ``home/collections`` into a test's home.

    Attributes:
        home: the VERIFAI_HOME they were built in.
        docs: their source files, by collection name (absolute paths).
        rows: the documents table of each, as the panel shows it (file, status, chunks, reason).
    """

    home: Path
    docs: dict[str, tuple[Path, ...]]
    rows: dict[str, list[tuple[str, str, str, str]]]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Iterator[Built]:
    root = tmp_path_factory.mktemp("repair_built")
    home = root / "home"
    docs: dict[str, tuple[Path, ...]] = {}
    rows: dict[str, list[tuple[str, str, str, str]]] = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VERIFAI_HOME", str(home))
        for name, files in (("work", WORK_FILES), ("gone", GONE_FILES)):
            folder = root / "docs" / name
            folder.mkdir(parents=True)
            for f in files:
                shutil.copy(DOCS_CLEAN / f, folder / f)
            docs[name] = tuple(folder / f for f in files)
            with Collection.open(name, create=True, settings=Settings()) as col:
                report = col.add_paths([folder])
                assert [o.status.value for o in report.outcomes] == ["indexed"] * len(files)
                rows[name] = sorted(
                    (Path(d.source).name, d.status.value, str(d.chunk_count), "")
                    for d in col.documents()
                )
            db = sqlite3.connect(collections_dir() / name / "catalog.sqlite")
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            db.close()
    yield Built(home, docs, rows)


def _install(built: Built, name: str, home: Path) -> Path:
    """Copy collection ``name`` into ``home`` and damage pages of its chunks table.

    Returns:
        Its catalog file.
    """
    target = home / "collections" / name
    shutil.copytree(built.home / "collections" / name, target)
    catalog = target / "catalog.sqlite"
    db = sqlite3.connect(catalog)
    query = "SELECT pageno FROM dbstat WHERE name='chunks' AND pagetype='leaf'"
    chunk_leaves = [r[0] for r in db.execute(query)]
    db.close()
    data = bytearray(catalog.read_bytes())
    rng = random.Random(14)
    for page in rng.sample(chunk_leaves, min(3, len(chunk_leaves))):
        data[(page - 1) * PAGE : page * PAGE] = rng.randbytes(PAGE)
    catalog.write_bytes(bytes(data))
    with pytest.raises(IndexCorrupt):
        Collection.open(name).close()
    return catalog


@pytest.fixture
def panel(qtbot: QtBot) -> LibraryPanel:
    p = LibraryPanel(TaskRunner(), Settings, offer_sample=False)
    qtbot.addWidget(p)
    return p


@pytest.mark.slow
def test_repair_from_the_error_box_rebuilds_the_collection(
    qtbot: QtBot, panel: LibraryPanel, built: Built, verifai_home: Path, shared_data: Path
) -> None:
    catalog = _install(built, "work", verifai_home)
    gone = built.docs["work"][-1]
    moved = gone.with_name("moved.txt")
    gone.rename(moved)  # one source moved away since the collection was built
    try:
        panel.refresh_collections(select="work")
        qtbot.waitUntil(lambda: len(_boxes(panel)) == 1, timeout=30_000)
        (box,) = _boxes(panel)
        assert box.windowTitle() == "Damaged collection"
        assert box.text().startswith(f"Reading 'work': {catalog} is damaged (")
        assert box.informativeText() == REPAIR_OFFERED
        assert panel.table_rows() == []

        _repair_button(box).click()
        task = panel.repair_task
        assert task is not None and panel.busy
        assert panel.progress_frame.title.text() == "Rebuilding “work” from its source files…"
        qtbot.waitUntil(lambda: panel.progress_frame.isVisibleTo(panel), timeout=30_000)
        assert panel.cancel_button.isEnabled()
        qtbot.waitUntil(lambda: not panel.runner.running, timeout=REPAIR_TIMEOUT_MS)
        assert task.outcome == "succeeded", task.error
        assert _boxes(panel) == []
        assert not panel.progress_frame.isVisibleTo(panel)
    finally:
        moved.rename(gone)

    # The table was refreshed with the documents still on disk, as they were before.
    expected = [r for r in built.rows["work"] if r[0] != gone.name]
    assert sorted(panel.table_rows()) == expected
    chunks = sum(int(r[2]) for r in expected)
    assert panel.summary_label.text() == (
        f"Rebuilt “work” from its source files: 2 indexed; {chunks:,} chunks. 1 file is no "
        f"longer on disk, so it could not be read again and is not in the collection: "
        f"{gone.name}. Add it again from where it is now."
    )
    assert panel.summary_label.toolTip() == str(gone)
    with Collection.open("work") as col:
        col.check()
        assert sorted(Path(d.source).name for d in col.documents()) == [r[0] for r in expected]
    assert sorted(p.name for p in collections_dir().iterdir()) == ["work"]  # no staging left


@pytest.mark.slow
def test_a_collection_whose_files_are_all_gone_cannot_be_repaired(
    qtbot: QtBot, panel: LibraryPanel, built: Built, verifai_home: Path, shared_data: Path
) -> None:
    catalog = _install(built, "gone", verifai_home)
    for path in built.docs["gone"]:
        path.unlink()
    damaged = catalog.read_bytes()
    panel.refresh_collections(select="gone")
    qtbot.waitUntil(lambda: len(_boxes(panel)) == 1, timeout=30_000)
    _repair_button(_boxes(panel)[0]).click()
    qtbot.waitUntil(lambda: not panel.runner.running, timeout=30_000)
    (box,) = _boxes(panel)
    assert box.windowTitle() == "Cannot repair the collection"
    assert box.text() == (
        "Repairing “gone”: Collection 'gone' cannot be rebuilt: its catalog names no file that "
        "still exists."
    )
    assert box.informativeText() == REPAIR_IMPOSSIBLE
    assert catalog.read_bytes() == damaged  # left as it was
    assert not panel.summary_frame.isVisibleTo(panel)
    box.close()
