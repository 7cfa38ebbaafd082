"""The documents table and the ingest summary: full names and reasons in tooltips, columns
that use the panel's width, plain-text status, app wording for an encrypted PDF (from a real
ingest of a real encrypted PDF), and a summary that stays until dismissed."""

from __future__ import annotations

import shutil
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView
from pytestqt.qtbot import QtBot

from tests.conftest import DOCS_NASTY
from verifai_desktop.domain import DocStatus
from verifai_desktop.errors import EncryptedDocument
from verifai_desktop.settings import Settings
from verifai_desktop.ui.documents_table import (
    ENCRYPTED_REASON_APP,
    REASON_COLUMN,
    STATUS_TEXT,
    WRONG_PASSWORD_REASON_APP,
    DocumentRow,
    DocumentsTable,
    app_reason,
)
from verifai_desktop.ui.library_panel import LibraryPanel
from verifai_desktop.ui.tasks import TaskRunner

LONG_NAME = "a_very_long_file_name_of_a_systematic_review_about_dvt_prophylaxis_2010.pdf"
OCR_REASON = "it has no text layer (scanned pages); run OCR on it first"
ENCRYPTED = "encrypted_aes128_password_foo.pdf"


def _rows() -> list[DocumentRow]:
    return [
        DocumentRow(f"/docs/papers/{LONG_NAME}", DocStatus.INDEXED, "", 42),
        DocumentRow("/docs/scan.pdf", DocStatus.NEEDS_OCR, OCR_REASON, 0),
    ]


def test_columns_use_the_width_and_tooltips_hold_full_text(qtbot: QtBot) -> None:
    table = DocumentsTable()
    qtbot.addWidget(table)
    table.resize(360, 300)
    table.show()
    qtbot.waitExposed(table)
    table.set_rows(_rows())
    header = table.horizontalHeader()
    assert [header.sectionResizeMode(c) for c in range(4)] == [
        QHeaderView.ResizeMode.Stretch,
        QHeaderView.ResizeMode.ResizeToContents,
        QHeaderView.ResizeMode.ResizeToContents,
        QHeaderView.ResizeMode.Stretch,
    ]

    def widths() -> list[int]:
        return [table.columnWidth(c) for c in range(4)]

    # The columns fill the table exactly, and widening the panel widens name and reason.
    qtbot.waitUntil(lambda: sum(widths()) == table.viewport().width())
    narrow = widths()
    table.resize(760, 300)
    qtbot.waitUntil(lambda: sum(widths()) == table.viewport().width())
    wide = widths()
    assert wide[0] > narrow[0] + 150 and wide[3] > narrow[3] + 150
    assert wide[1:3] == narrow[1:3]

    # Full texts are in the tooltips, whatever the cells show.
    def tip(row: int, col: int) -> str:
        item = table.item(row, col)
        assert item is not None
        return item.toolTip()

    assert tip(0, 0) == f"/docs/papers/{LONG_NAME}"
    assert tip(1, REASON_COLUMN) == OCR_REASON
    assert tip(1, 1) == f"needs OCR: {OCR_REASON}"
    assert tip(0, 2) == "42 chunks indexed"


def test_status_is_plain_text_and_encrypted_reason_is_written_for_the_app() -> None:
    # No emoji or symbol that a minimal desktop font draws as an empty box.
    assert all(text.isascii() for text in STATUS_TEXT.values())
    core_reason = EncryptedDocument("/d/secret.pdf").reason
    wrong_reason = EncryptedDocument("/d/secret.pdf", wrong_password=True).reason
    legacy_reason = "it is encrypted; supply its password (--pdf-password) to index it"
    row = DocumentRow("/d/secret.pdf", DocStatus.ENCRYPTED, core_reason, 0)
    assert app_reason(row) == ENCRYPTED_REASON_APP
    assert app_reason(DocumentRow(row.source, row.status, legacy_reason, 0)) == (
        ENCRYPTED_REASON_APP
    )
    assert app_reason(DocumentRow(row.source, row.status, wrong_reason, 0)) == (
        WRONG_PASSWORD_REASON_APP
    )
    assert "--" not in ENCRYPTED_REASON_APP + WRONG_PASSWORD_REASON_APP
    # Other reasons are the core's own words.
    assert app_reason(DocumentRow("/d/s.pdf", DocStatus.NEEDS_OCR, OCR_REASON, 0)) == OCR_REASON


def test_real_encrypted_pdf_row_and_a_summary_that_stays(
    qtbot: QtBot, tmp_path: Path, shared_data: Path
) -> None:
    runner = TaskRunner()
    panel = LibraryPanel(runner, Settings, offer_sample=False)
    qtbot.addWidget(panel)
    panel.show()
    panel.request_passwords = lambda paths, tried=None: []  # type: ignore[method-assign,assignment]
    panel.create_collection("papers")
    qtbot.waitUntil(lambda: not runner.running and panel.current == "papers", timeout=30_000)
    shutil.copy(DOCS_NASTY / ENCRYPTED, tmp_path / ENCRYPTED)
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")

    panel.ingest([tmp_path])
    qtbot.waitUntil(lambda: len(panel.table_rows()) == 2 and not runner.running, timeout=60_000)
    rows = {r[0]: r for r in panel.table_rows()}
    assert rows[ENCRYPTED] == (ENCRYPTED, "encrypted", "0", ENCRYPTED_REASON_APP)
    assert panel.summary_frame.isVisible()
    summary = panel.summary_label.text()
    assert summary == (
        "Added to “papers”: 1 encrypted, 1 failed; 0 new chunks. "
        "Files not indexed are listed in red with the reason."
    )
    # Still there later; gone only when dismissed.
    qtbot.wait(300)
    assert panel.summary_frame.isVisible() and panel.summary_label.text() == summary
    qtbot.mouseClick(panel.summary_close_button, Qt.MouseButton.LeftButton)
    assert not panel.summary_frame.isVisible()
    assert runner.shutdown()
    panel.host.close()
