"""The sources panel: the retrieved passages with their lexical, semantic and fused scores."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from verifai_desktop.domain import Passage
from verifai_desktop.serialize import injection_warning

COLUMNS = ("#", "Source", "Lexical", "Semantic", "Fused")


class SourcesPanel(QWidget):
    """Table of passages; activating a row opens that passage in the document view.

    Signals:
        source_activated(int): 1-based passage number clicked or activated with Enter.
    """

    source_activated = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.passages: tuple[Passage, ...] = ()
        self.caption = QLabel("Retrieved passages appear here after a question.")
        self.caption.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("sourcesTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for col in (2, 3, 4):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.caption)
        layout.addWidget(self.table)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self.table.cellClicked.connect(self.on_cell_clicked)
        self.table.cellActivated.connect(self.on_cell_clicked)

    def set_passages(self, passages: tuple[Passage, ...], *, abstained: bool = False) -> None:
        """Show ``passages`` (``passages[i]`` is citation ``[i + 1]``)."""
        self.passages = passages
        self.caption.setText(
            "Closest passages (not close enough to answer):"
            if abstained
            else f"{len(passages)} passages given to the generator. Click one to open it."
        )
        self.table.setRowCount(len(passages))
        for row, p in enumerate(passages):
            number = f"[{row + 1}]" + (" ⚠" if p.instruction_cues else "")
            items = (
                QTableWidgetItem(number),
                QTableWidgetItem(f"{p.title}\n{p.source_label()}"),
                QTableWidgetItem(f"{p.lexical_score:.2f}"),
                QTableWidgetItem(f"{p.semantic_score:.2f}"),
                QTableWidgetItem(f"{p.fused_score:.3f}"),
            )
            preview = p.text[:600] + ("…" if len(p.text) > 600 else "")
            if p.instruction_cues:
                preview = f"⚠ {injection_warning(p)}\n\n{preview}"
            for col, item in enumerate(items):
                item.setToolTip(preview)
                if col >= 2:
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.table.setItem(row, col, item)
            self.table.setRowHeight(row, 2 * self.table.fontMetrics().lineSpacing() + 16)

    def clear(self) -> None:
        """Forget the passages."""
        self.set_passages(())
        self.caption.setText("Retrieved passages appear here after a question.")

    def row_texts(self) -> list[tuple[str, ...]]:
        """The table's cell texts, row by row (for tests and export checks)."""
        return [
            tuple(
                item.text() if (item := self.table.item(r, c)) is not None else ""
                for c in range(len(COLUMNS))
            )
            for r in range(self.table.rowCount())
        ]

    @Slot(int, int)
    def on_cell_clicked(self, row: int, _column: int) -> None:
        """Open the clicked passage."""
        if 0 <= row < len(self.passages):
            self.source_activated.emit(row + 1)
