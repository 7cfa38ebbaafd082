"""The documents table of the library panel: one row per catalog document, status and reason;
the filter line above it (:attr:`DocumentsTable.filter_edit`, :mod:`.documents_filter`) hides
the rows that do not match its words and ``author:``/``year:``/``title:`` terms."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLineEdit,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
)

from verifai_desktop.domain import DocStatus
from verifai_desktop.names import printable
from verifai_desktop.reference import Reference
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.records import DocumentRecord
from verifai_desktop.ui.documents_filter import FILTER_PLACEHOLDER, matches, parse_filter

DOC_COLUMNS = ("File", "Status", "Chunks", "Reason")
NAME_COLUMN, STATUS_COLUMN, CHUNKS_COLUMN, REASON_COLUMN = range(4)
# Plain words: a lock emoji renders as an empty box on desktops without a colour-emoji font.
STATUS_TEXT = {
    DocStatus.INDEXED: "indexed",
    DocStatus.NEEDS_OCR: "needs OCR",
    DocStatus.ENCRYPTED: "encrypted",
    DocStatus.EMPTY: "empty",
    DocStatus.FAILED: "failed",
}
ENCRYPTED_REASON_APP = "password-protected: double-click this row to enter its password"
WRONG_PASSWORD_REASON_APP = (
    "password-protected: the password given was wrong; double-click this row to try again"
)


@dataclass(frozen=True, slots=True)
class DocumentRow:
    """One row of the documents table.

    Attributes:
        source: absolute path of the file.
        status: catalog status.
        reason: why it is not indexed ('' when indexed).
        chunk_count: chunks indexed.
        title: the document's title ('' unknown).
        reference: its reference-manager entry (a document ingested from a library).
    """

    source: str
    status: DocStatus
    reason: str
    chunk_count: int
    title: str = ""
    reference: Reference | None = None

    @property
    def name(self) -> str:
        """The file name, control characters and undecodable bytes escaped."""
        return printable(Path(self.source).name)


def app_reason(row: DocumentRow) -> str:
    """The reason shown in the app for ``row``.

    The catalog keeps the core's reason, which the CLI prints with its own hint (environment
    variable, ``--pdf-password-stdin``); an encrypted PDF is unlocked in the app by
    double-clicking its row, so the app says that instead. Catalogs written by older versions
    name the ``--pdf-password`` flag in the stored reason, which the app never shows.
    """
    if row.status is DocStatus.ENCRYPTED:
        return WRONG_PASSWORD_REASON_APP if "wrong" in row.reason else ENCRYPTED_REASON_APP
    return printable(row.reason)


def document_rows(
    records: Sequence[DocumentRecord], references: Mapping[int, Reference] | None = None
) -> list[DocumentRow]:
    """Table rows for catalog records, in their order, with the entries of those ingested from
    a reference library (``references``: by doc_id)."""
    refs = references or {}
    return [
        DocumentRow(r.source, r.status, r.reason, r.chunk_count, r.title, refs.get(r.doc_id))
        for r in records
    ]


def reference_line(ref: Reference) -> str:
    """``"Cohan, Feldman, Beltagy, Downey, Weld (2020). SPECTER: ..."`` for a tooltip."""
    year = f" ({ref.year})" if ref.year else ""
    return f"{', '.join(ref.authors)}{year}. {ref.title}".strip(". ")


class Catalogued(Protocol):
    """A collection whose documents can be listed (on this machine or on a server)."""

    def documents(self) -> Sequence[DocumentRecord]:
        """Its catalog records, in catalog order."""
        ...


def collection_rows(col: Catalogued, _ctx: object = None) -> list[DocumentRow]:
    """Table rows of every document of ``col`` (an op for the collection host), with their
    entries when the store keeps them (the embedded store's catalog)."""
    refs = col.catalog.references_by_doc() if isinstance(col, Collection) else {}
    return document_rows(col.documents(), refs)


MIN_VISIBLE_ROWS = 4
"""Rows the table always has room for (issue 42: about 1.5 showed at 1366x768)."""
SUFFIX_KEPT_CHARS = 8
"""A file name's extension (with its dot) up to this long is never cut."""
CELL_PADDING_PX = 8  # left and right padding of a cell's text, as the style draws it


def elide_file_name(name: str, fm: QFontMetrics, width_px: int) -> str:
    """``name`` fitted to ``width_px`` pixels of font ``fm``, cut in the middle of its stem so
    that its start and its extension stay: ``"acl2020_…ter.pdf"`` (not ``"acl202…"``).

    Returns:
        ``name`` when it fits; else the elided name, at worst ``"…" + extension``.
    """
    if fm.horizontalAdvance(name) <= width_px:
        return name
    suffix = Path(name).suffix
    if not suffix or len(suffix) > SUFFIX_KEPT_CHARS or len(suffix) == len(name):
        return fm.elidedText(name, Qt.TextElideMode.ElideMiddle, width_px)
    stem = name[: -len(suffix)]
    room = width_px - fm.horizontalAdvance(suffix)
    cut = fm.elidedText(stem, Qt.TextElideMode.ElideMiddle, max(0, room))
    return (cut or "…") + suffix


class FileNameDelegate(QStyledItemDelegate):
    """Paints a file name cut in its middle, its extension kept (:func:`elide_file_name`)."""

    def initStyleOption(  # noqa: N802 (Qt override)
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        super().initStyleOption(option, index)
        width = option.rect.width() - CELL_PADDING_PX
        option.text = elide_file_name(option.text, option.fontMetrics, width)


class DocumentsTable(QTableWidget):
    """Read-only table of :class:`DocumentRow`; non-indexed rows in dark red.

    The file and reason columns share the width left by status and chunks, so widening the
    panel widens both; every cell's full text is in its tooltip.
    """

    def __init__(self) -> None:
        super().__init__(0, len(DOC_COLUMNS))
        self.setObjectName("documentTable")
        self.setHorizontalHeaderLabels(list(DOC_COLUMNS))
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setWordWrap(False)
        self.verticalHeader().setVisible(False)
        header = self.horizontalHeader()
        header.setSectionResizeMode(NAME_COLUMN, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(STATUS_COLUMN, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(CHUNKS_COLUMN, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(REASON_COLUMN, QHeaderView.ResizeMode.Stretch)
        # The name and reason columns stretch; the last shown column must not (with the
        # reason hidden, the chunks column would take the names' width).
        header.setStretchLastSection(False)
        rows = self.verticalHeader().defaultSectionSize()
        self.setMinimumHeight(header.sizeHint().height() + MIN_VISIBLE_ROWS * rows + 4)
        # A file name too long for its column is cut in its middle, its extension kept; its
        # cell's tooltip holds the full path. The reason column shows only while a row has a
        # reason, so that the names have the width.
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setItemDelegateForColumn(NAME_COLUMN, FileNameDelegate(self))
        self.setColumnHidden(REASON_COLUMN, True)  # until a row has a reason
        self.setToolTip("Double-click an encrypted PDF to enter its password.")
        self.rows: tuple[DocumentRow, ...] = ()
        self.filter_edit = QLineEdit()
        self.filter_edit.setObjectName("documentFilter")
        self.filter_edit.setPlaceholderText(FILTER_PLACEHOLDER)
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setToolTip(
            "Show only the documents that match every term: words of the file name or title, "
            "author:name, year:2020 (or 2018-2020) and title:word for documents added from a "
            ".bib file or a Zotero library"
        )
        self.filter_edit.textChanged.connect(self.apply_filter)

    def apply_filter(self, text: str | None = None) -> None:
        """Hide the rows that do not match the filter (``text``, else the filter line's)."""
        terms = parse_filter(self.filter_edit.text() if text is None else text)
        for i, r in enumerate(self.rows):
            shown = matches(
                terms, source=r.source, title=r.title, reason=r.reason, reference=r.reference
            )
            self.setRowHidden(i, not shown)

    def shown_names(self) -> list[str]:
        """The file names of the rows the filter shows, in order."""
        return [r.name for i, r in enumerate(self.rows) if not self.isRowHidden(i)]

    def set_rows(self, rows: Sequence[DocumentRow]) -> None:
        """Replace the table's contents with ``rows`` (the filter applied)."""
        self.rows = tuple(rows)
        self.setRowCount(len(rows))
        for i, r in enumerate(rows):
            status = STATUS_TEXT.get(r.status, r.status.value)
            reason = app_reason(r)
            items = (
                QTableWidgetItem(r.name),
                QTableWidgetItem(status),
                QTableWidgetItem(str(r.chunk_count)),
                QTableWidgetItem(reason),
            )
            tip = printable(r.source)
            if r.reference is not None:
                tip += "\n" + printable(reference_line(r.reference))
            items[NAME_COLUMN].setToolTip(tip)
            items[STATUS_COLUMN].setToolTip(f"{status}: {reason}" if reason else status)
            items[CHUNKS_COLUMN].setToolTip(f"{r.chunk_count} chunks indexed")
            items[CHUNKS_COLUMN].setTextAlignment(
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
            )
            items[REASON_COLUMN].setToolTip(reason)
            if r.status is not DocStatus.INDEXED:
                for it in items:
                    it.setForeground(Qt.GlobalColor.darkRed)
            for col, it in enumerate(items):
                self.setItem(i, col, it)
        self.setColumnHidden(REASON_COLUMN, not any(app_reason(r) for r in rows))
        self.apply_filter()

    def cell_texts(self) -> list[tuple[str, str, str, str]]:
        """The cell texts (file, status, chunks, reason) of every row."""

        def cell(row: int, col: int) -> str:
            item = self.item(row, col)
            return item.text() if item is not None else ""

        return [(cell(i, 0), cell(i, 1), cell(i, 2), cell(i, 3)) for i in range(self.rowCount())]
