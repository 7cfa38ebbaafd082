"""Documents you can tell apart (issue 42, item 5): names cut in the middle with their
extension kept, rows that fill as files finish during an ingest, and a table with room for
its rows at 1366x768 beside a colour check's result and the folders followed."""

from __future__ import annotations

import shutil
from pathlib import Path

from PySide6.QtCore import QSize
from PySide6.QtGui import QFont, QFontMetrics
from pytestqt.qtbot import QtBot

from tests.conftest import DOCS_CLEAN
from tests.ui.test_self_check import STORED
from verifai_desktop.domain import DocStatus
from verifai_desktop.settings import Settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.roots import Root
from verifai_desktop.ui.documents_table import (
    MIN_VISIBLE_ROWS,
    REASON_COLUMN,
    DocumentRow,
    elide_file_name,
)
from verifai_desktop.ui.library_panel import LibraryPanel
from verifai_desktop.ui.main_window import MainWindow
from verifai_desktop.ui.reading_layout import window_size
from verifai_desktop.ui.tasks import TaskRunner
from verifai_desktop.ui.watched_roots import WatchedRoot

TIMEOUT_MS = 240_000
FILES = (
    "deep_rules_02_intro.md",
    "deep_rules_03_when_to_use_dl.md",
    "deep_rules_09_overfitting.md",
    "scifact_data_description.md",
)


def test_a_long_name_keeps_its_start_and_its_extension(qtbot: QtBot) -> None:
    fm = QFontMetrics(QFont())
    name = "acl2020_specter_document_level_representation.pdf"
    for width in (100, 140, 200):
        cut = elide_file_name(name, fm, width)
        assert cut.endswith(".pdf") and cut.startswith(name[:2]) and "…" in cut, cut
        assert fm.horizontalAdvance(cut) <= width
    assert elide_file_name("a.md", fm, 200) == "a.md"
    assert elide_file_name("pandoc_MANUAL.txt", fm, 80).endswith(".txt")


def test_rows_fill_as_files_finish(qtbot: QtBot, tmp_path: Path, shared_data: Path) -> None:
    folder = tmp_path / "rules"
    folder.mkdir()
    for name in FILES:
        shutil.copy(DOCS_CLEAN / name, folder / name)
    panel = LibraryPanel(TaskRunner(), Settings, offer_sample=False)
    qtbot.addWidget(panel)
    panel.create_collection("rules")
    qtbot.waitUntil(lambda: panel.current == "rules" and not panel.busy, timeout=TIMEOUT_MS)
    seen_while_running: list[int] = []
    task = panel.ingest([folder])
    assert task is not None
    panel.runs.rows_read.connect(
        lambda name, rows: (
            seen_while_running.append(panel.table.rowCount()) if task.is_running else None
        )
    )
    qtbot.waitUntil(lambda: not panel.busy, timeout=TIMEOUT_MS)
    # The table had rows before the run ended, fewer than at its end.
    assert seen_while_running and min(seen_while_running) < len(FILES)
    assert panel.table.rowCount() == len(FILES)
    assert panel.table.isColumnHidden(REASON_COLUMN)  # every file indexed: no reasons


def test_the_table_has_room_at_1366x768(qtbot: QtBot) -> None:
    with Collection.open("papers", create=True, settings=Settings()) as col:
        col.set_metadata("self_check", STORED)
    window = MainWindow(offer_sample=False)
    qtbot.addWidget(window)
    window.resize(window_size(QSize(1366, 728)))
    window.show()
    qtbot.waitExposed(window)
    library = window.library
    library.refresh_collections(select="papers")
    qtbot.waitUntil(lambda: library.self_check.meaning.isVisibleTo(library), timeout=TIMEOUT_MS)
    qtbot.waitUntil(lambda: not window.runner.running, timeout=TIMEOUT_MS)
    library.rows = [
        DocumentRow(f"/papers/paper_{i:02d}_with_a_long_name.pdf", DocStatus.INDEXED, "", 30)
        for i in range(20)
    ]
    library._fill_table()
    library.folders.roots = [
        WatchedRoot(Root(Path(f"/home/someone/papers/folder_{i}"), True)) for i in range(6)
    ]
    library.folders.sync_note = "Last sync 14:03: 0 added or changed, 0 removed"
    library.folders.show()
    library.summary_frame.show_summary(
        "Added to “papers”: 20 indexed; 600 new chunks.", collection="papers"
    )
    qtbot.wait(50)
    table = library.table
    shown_rows = table.viewport().height() / table.rowHeight(0)
    assert shown_rows >= MIN_VISIBLE_ROWS
