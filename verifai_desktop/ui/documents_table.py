"""The documents table of the library panel: one row per catalog document, status and reason."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from verifai_desktop.domain import DocStatus
from verifai_desktop.names import printable
from verifai_desktop.store.catalog import DocumentRecord

DOC_COLUMNS = ("File", "Status", "Chunks", "Reason")
STATUS_TEXT = {
    DocStatus.INDEXED: "indexed",
    DocStatus.NEEDS_OCR: "needs OCR",
    DocStatus.ENCRYPTED: "encrypted 🔒",
    DocStatus.EMPTY: "empty",
    DocStatus.FAILED: "failed",
}


@dataclass(frozen=True, slots=True)
class DocumentRow:
    """One row of the documents table.

    Attributes:
        source: absolute path of the file.
        status: catalog status.
        reason: why it is not indexed ('' when indexed).
        chunk_count: chunks indexed.
    """

    source: str
    status: DocStatus
    reason: str
    chunk_count: int

    @property
    def name(self) -> str:
        """The file name, control characters and undecodable bytes escaped."""
        return printable(Path(self.source).name)


def document_rows(records: Sequence[DocumentRecord]) -> list[DocumentRow]:
    """Table rows for catalog records, in their order."""
    return [DocumentRow(r.source, r.status, r.reason, r.chunk_count) for r in records]


class DocumentsTable(QTableWidget):
    """Read-only table of :class:`DocumentRow`; non-indexed rows in dark red."""

    def __init__(self) -> None:
        super().__init__(0, len(DOC_COLUMNS))
        self.setObjectName("documentTable")
        self.setHorizontalHeaderLabels(list(DOC_COLUMNS))
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.verticalHeader().setVisible(False)
        header = self.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.setColumnWidth(0, 140)
        self.setToolTip("Double-click an encrypted PDF to enter its password.")

    def set_rows(self, rows: Sequence[DocumentRow]) -> None:
        """Replace the table's contents with ``rows``."""
        self.setRowCount(len(rows))
        for i, r in enumerate(rows):
            items = (
                QTableWidgetItem(r.name),
                QTableWidgetItem(STATUS_TEXT.get(r.status, r.status.value)),
                QTableWidgetItem(str(r.chunk_count)),
                QTableWidgetItem(printable(r.reason)),
            )
            items[0].setToolTip(printable(r.source))
            items[2].setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            items[3].setToolTip(printable(r.reason))
            if r.status is not DocStatus.INDEXED:
                for it in items:
                    it.setForeground(Qt.GlobalColor.darkRed)
            for col, it in enumerate(items):
                self.setItem(i, col, it)

    def cell_texts(self) -> list[tuple[str, str, str, str]]:
        """The cell texts (file, status, chunks, reason) of every row."""

        def cell(row: int, col: int) -> str:
            item = self.item(row, col)
            return item.text() if item is not None else ""

        return [(cell(i, 0), cell(i, 1), cell(i, 2), cell(i, 3)) for i in range(self.rowCount())]
