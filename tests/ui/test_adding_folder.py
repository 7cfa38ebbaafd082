"""Add folder with no collection open (issue 42, item 6): the new collection is named after the
folder (the user is asked, the folder's name offered), never silently "default"; cancelling
adds nothing. The real library panel, a real folder and a real ingest."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from tests.conftest import DOCS_CLEAN
from verifai_desktop.settings import Settings
from verifai_desktop.store.folders import list_collections
from verifai_desktop.ui import library_panel as library_module
from verifai_desktop.ui.library_panel import LibraryPanel
from verifai_desktop.ui.tasks import TaskRunner

INGEST_TIMEOUT_MS = 240_000
FILE = "deep_rules_03_when_to_use_dl.md"


@pytest.fixture
def folder(tmp_path: Path, shared_data: Path) -> Path:
    folder = tmp_path / "Trial reports"
    folder.mkdir()
    shutil.copy(DOCS_CLEAN / FILE, folder / FILE)
    return folder


def _panel(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, folder: Path) -> LibraryPanel:
    panel = LibraryPanel(TaskRunner(), Settings, offer_sample=False)
    qtbot.addWidget(panel)
    monkeypatch.setattr(library_module, "pick_folder", lambda parent: [folder])
    return panel


def test_add_folder_without_a_collection_names_it_after_the_folder(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, folder: Path
) -> None:
    panel = _panel(qtbot, monkeypatch, folder)
    assert panel.current == "" and list_collections() == []
    asked: list[tuple[str, str, str]] = []

    def ask(title: str, label: str, text: str = "") -> str | None:
        asked.append((title, label, text))
        return text  # the user takes the name offered

    panel.ask_text = ask  # type: ignore[method-assign]
    panel.add_folder_button.click()
    qtbot.waitUntil(
        lambda: not panel.runner.running and bool(panel.rows), timeout=INGEST_TIMEOUT_MS
    )
    assert [(title, offered) for title, _label, offered in asked] == [
        ("New collection", "Trial reports")
    ]
    assert panel.display_name() == "Trial reports"
    assert "default" not in list_collections()
    assert [r[:2] for r in panel.table_rows()] == [(FILE, "indexed")]


def test_a_cancelled_name_adds_nothing(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, folder: Path
) -> None:
    panel = _panel(qtbot, monkeypatch, folder)
    panel.ask_text = lambda title, label, text="": None  # type: ignore[method-assign]
    panel.add_folder_button.click()
    qtbot.wait(100)
    assert not panel.runner.running
    assert list_collections() == [] and panel.current == ""


def test_the_name_offered_for_files_is_their_folder(tmp_path: Path) -> None:
    from verifai_desktop.ui.adding import suggested_collection_name

    a, b = tmp_path / "notes" / "a.md", tmp_path / "notes" / "b.md"
    a.parent.mkdir()
    a.write_text("A", encoding="utf-8")
    b.write_text("B", encoding="utf-8")
    other = tmp_path / "other.md"
    other.write_text("C", encoding="utf-8")
    assert suggested_collection_name([a, b]) == "notes"
    assert suggested_collection_name([a, other]) == "Documents"
    assert suggested_collection_name([a.parent]) == "notes"
