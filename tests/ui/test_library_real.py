"""The library panel on the real core: ingest a folder from docs/clean through the UI, an
encrypted PDF asks for its password (a question answered by signal), remove a document, and a
real ingest is cancelled."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from tests.conftest import DOCS_CLEAN, DOCS_NASTY
from verifai_desktop.settings import Settings
from verifai_desktop.store.folders import list_collections as list_collection_names
from verifai_desktop.store.writer import IngestReport
from verifai_desktop.ui.library_panel import LibraryPanel
from verifai_desktop.ui.questions import PasswordQuestion
from verifai_desktop.ui.resources import sample_files
from verifai_desktop.ui.tasks import TaskRunner

pytestmark = pytest.mark.slow

FOLDER_FILES = ("deep_rules_03_when_to_use_dl.md", "scifact_data_description.md")
ENCRYPTED = "encrypted_aes128_password_foo.pdf"
INGEST_TIMEOUT_MS = 240_000


@pytest.fixture
def panel(qtbot: QtBot) -> LibraryPanel:
    runner = TaskRunner()
    p = LibraryPanel(runner, Settings, offer_sample=True)
    qtbot.addWidget(p)
    p.confirm = lambda title, text: True  # type: ignore[method-assign]
    return p


def _wait_idle(qtbot: QtBot, panel: LibraryPanel) -> None:
    qtbot.waitUntil(lambda: not panel.runner.running, timeout=INGEST_TIMEOUT_MS)


def test_ingest_folder_password_and_remove(
    qtbot: QtBot, panel: LibraryPanel, tmp_path: Path, shared_data: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in FOLDER_FILES:
        shutil.copy(DOCS_CLEAN / name, folder / name)
    shutil.copy(DOCS_NASTY / ENCRYPTED, folder / ENCRYPTED)
    asked: list[tuple[str, bool]] = []

    def password(question: PasswordQuestion) -> None:
        asked.append((question.path.name, question.wrong))
        question.answer("foo")

    panel.password_requested.connect(password)

    # First run offers the sample collection shipped in resources/.
    assert panel.sample_banner.isVisibleTo(panel)
    panel.sample_button.click()
    _wait_idle(qtbot, panel)
    assert list_collection_names() == ["sample"] and panel.current == "sample"
    assert not panel.sample_banner.isVisibleTo(panel)
    assert sorted(r[:2] for r in panel.table_rows()) == [
        (p.name, "indexed") for p in sample_files()
    ]

    panel.create_collection("papers")
    _wait_idle(qtbot, panel)
    assert list_collection_names() == ["papers", "sample"] and panel.current == "papers"
    assert panel.table_rows() == []

    reports: list[IngestReport] = []
    panel.ingest_finished.connect(reports.append)
    panel.ingest([folder])
    # First run: three files indexed, the PDF encrypted -> password asked -> second run indexes it.
    qtbot.waitUntil(
        lambda: len(reports) == 2 and not panel.runner.running, timeout=INGEST_TIMEOUT_MS
    )
    assert asked == [(ENCRYPTED, False)]
    first, second = reports
    assert {Path(o.source).name: o.status.value for o in first.outcomes} == {
        **{n: "indexed" for n in FOLDER_FILES},
        ENCRYPTED: "encrypted",
    }
    assert [(Path(o.source).name, o.status.value) for o in second.outcomes] == [
        (ENCRYPTED, "indexed")
    ]
    rows = {r[0]: r for r in panel.table_rows()}
    assert sorted(rows) == sorted((*FOLDER_FILES, ENCRYPTED))
    assert all(r[1] == "indexed" and int(r[2]) > 0 and r[3] == "" for r in rows.values())
    assert panel.passwords == {str((folder / ENCRYPTED).resolve()): "foo"}

    # Remove one document through the table selection.
    row = [r[0] for r in panel.table_rows()].index(FOLDER_FILES[0])
    panel.table.selectRow(row)
    panel.on_remove_clicked()
    _wait_idle(qtbot, panel)
    assert sorted(r[0] for r in panel.table_rows()) == sorted((*FOLDER_FILES[1:], ENCRYPTED))

    # Rename and delete the collection.
    panel.rename_current("papers2")
    _wait_idle(qtbot, panel)
    assert list_collection_names() == ["papers2", "sample"] and panel.current == "papers2"
    panel.on_delete_clicked()
    _wait_idle(qtbot, panel)
    assert list_collection_names() == ["sample"] and panel.current == "sample"


def test_cancel_stops_a_real_ingest(qtbot: QtBot, panel: LibraryPanel, shared_data: Path) -> None:
    all_files = sorted(p for p in DOCS_CLEAN.iterdir() if p.is_file())
    panel.create_collection("clean")
    _wait_idle(qtbot, panel)
    task = panel.ingest([DOCS_CLEAN])
    assert task is not None
    failed: list[object] = []
    task.failed.connect(failed.append)
    # Cancel once the second file is being read.
    qtbot.waitUntil(lambda: panel.files_bar.value() >= 1, timeout=INGEST_TIMEOUT_MS)
    with qtbot.waitSignal(task.cancelled, timeout=INGEST_TIMEOUT_MS):
        panel.cancel_button.click()
    _wait_idle(qtbot, panel)
    assert task.outcome == "cancelled" and failed == []
    assert panel.progress_label.text() == "Cancelled; files finished before stay indexed."
    assert 1 <= len(panel.table_rows()) < len(all_files)


def test_collections_are_listed_and_renamed_by_their_display_names(
    qtbot: QtBot, panel: LibraryPanel
) -> None:
    panel.create_collection("Lab book 2026")
    _wait_idle(qtbot, panel)
    listed = [panel.collections.item(i).text() for i in range(panel.collections.count())]
    assert "Lab book 2026" in listed
    assert panel.current == "Lab-book-2026"
    assert panel.docs_title.text() == "Documents in “Lab book 2026”"

    panel.ask_text = lambda title, label, text="": "Lab notes · 2026"  # type: ignore[method-assign]
    panel.on_rename_clicked()
    _wait_idle(qtbot, panel)
    listed = [panel.collections.item(i).text() for i in range(panel.collections.count())]
    assert "Lab notes · 2026" in listed and "Lab book 2026" not in listed
    assert panel.current == "Lab-notes-2026"
    assert panel.display_name() == "Lab notes · 2026"
    assert "Lab-notes-2026" in list_collection_names()
