"""The sources panel: the retrieved passages with their lexical, semantic and fused scores."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt, Signal, Slot
from PySide6.QtGui import QFont, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHeaderView,
    QLabel,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from verifai_desktop.domain import Passage
from verifai_desktop.serialize import injection_warning

COLUMNS = ("#", "Source", "Lex.", "Sem.", "Fused")
# Short score headers leave the width to the source; the header tooltips say what they are.
COLUMN_TIPS = (
    "Citation number in the answer",
    "Document title, and the file with its page or section",
    "Lexical (BM25) score",
    "Semantic (cosine similarity) score",
    "Fused score: the retrieval ranking",
)
SOURCE_COLUMN = 1
TITLE_ROLE = int(Qt.ItemDataRole.UserRole) + 1  # str: the passage's document title
FILE_ROLE = int(Qt.ItemDataRole.UserRole) + 2  # str: the file name, "file.pdf"
WHERE_ROLE = int(Qt.ItemDataRole.UserRole) + 3  # str: the location label, "p. 3" ('' if none)
CELL_PADDING_PX = 6  # left and right, like the style's item padding
ROW_PADDING_PX = 10  # above and below the two lines
SEPARATOR = ", "  # between file name and location, as in Passage.source_label()


def title_line(title: str, fm: QFontMetrics, width_px: int) -> str:
    """The title cut at its end ("…") to ``width_px`` pixels of font ``fm``."""
    return fm.elidedText(title, Qt.TextElideMode.ElideRight, width_px)


def location_line(file_name: str, where: str, fm: QFontMetrics, width_px: int) -> str:
    """``"file.pdf, p. 3"`` fitted to ``width_px`` pixels of font ``fm``.

    When it does not fit, the location keeps the width the file name leaves it, and at least
    half (a page label stays whole); the file name is cut in its middle, so its start and its
    extension stay visible.
    """
    if not where:
        return fm.elidedText(file_name, Qt.TextElideMode.ElideMiddle, width_px)
    full = f"{file_name}{SEPARATOR}{where}"
    if fm.horizontalAdvance(full) <= width_px:
        return full
    name_need_px = fm.horizontalAdvance(file_name + SEPARATOR)
    where_px = min(fm.horizontalAdvance(where), max(width_px // 2, width_px - name_need_px))
    where = fm.elidedText(where, Qt.TextElideMode.ElideRight, where_px)
    name_px = width_px - fm.horizontalAdvance(SEPARATOR + where)
    name = fm.elidedText(file_name, Qt.TextElideMode.ElideMiddle, max(0, name_px))
    return f"{name}{SEPARATOR}{where}"


class SourceDelegate(QStyledItemDelegate):
    """Paints a source cell as two single lines: the title (bold) over "file, p. N"."""

    def title_font(self, option: QStyleOptionViewItem) -> QFont:
        """The font of the title line: the view's font, bold."""
        font = QFont(option.font)
        font.setBold(True)
        return font

    def lines(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> tuple[str, str]:
        """The title and label lines as painted in ``option.rect`` (for paint and tests)."""
        width = option.rect.width() - 2 * CELL_PADDING_PX
        title = str(index.data(TITLE_ROLE) or "")
        file_name = str(index.data(FILE_ROLE) or "")
        where = str(index.data(WHERE_ROLE) or "")
        return (
            title_line(title, QFontMetrics(self.title_font(option)), width),
            location_line(file_name, where, QFontMetrics(option.font), width),
        )

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        widget = opt.widget
        style = widget.style() if widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        title, label = self.lines(opt, index)
        rect: QRect = opt.rect
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        palette: QPalette = opt.palette
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        line_px = QFontMetrics(opt.font).lineSpacing()
        top = rect.top() + (rect.height() - 2 * line_px) // 2
        text_rect = QRect(
            rect.left() + CELL_PADDING_PX, top, rect.width() - 2 * CELL_PADDING_PX, line_px
        )
        painter.save()
        painter.setPen(palette.color(role))
        painter.setFont(self.title_font(opt))
        flags = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        painter.drawText(text_rect, flags, title)
        painter.setFont(opt.font)
        if not selected:
            painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
        painter.drawText(text_rect.translated(0, line_px), flags, label)
        painter.restore()

    def sizeHint(  # noqa: N802 (Qt override)
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        line_px = QFontMetrics(option.font).lineSpacing()
        return QSize(120, 2 * line_px + ROW_PADDING_PX)


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
        self.caption.setContentsMargins(4, 4, 4, 4)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("sourcesTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        for col, tip in enumerate(COLUMN_TIPS):
            header_item = self.table.horizontalHeaderItem(col)
            if header_item is not None:
                header_item.setToolTip(tip)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        # One line each for the title and "file, p. N": a wrapped title would push the file
        # and page out of the row, and every row would read the same.
        self.table.setWordWrap(False)
        self.source_delegate = SourceDelegate(self.table)
        self.table.setItemDelegateForColumn(SOURCE_COLUMN, self.source_delegate)
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
        row_px = 2 * self.table.fontMetrics().lineSpacing() + ROW_PADDING_PX
        for row, p in enumerate(passages):
            number = f"[{row + 1}]" + (" ⚠" if p.instruction_cues else "")
            label = p.source_label()
            source = QTableWidgetItem(f"{p.title}\n{label}")
            source.setData(TITLE_ROLE, p.title)
            source.setData(FILE_ROLE, p.path.name)
            source.setData(WHERE_ROLE, p.location.label())
            items = (
                QTableWidgetItem(number),
                source,
                QTableWidgetItem(f"{p.lexical_score:.2f}"),
                QTableWidgetItem(f"{p.semantic_score:.2f}"),
                QTableWidgetItem(f"{p.fused_score:.3f}"),
            )
            # The full title and file lead the tooltip: the cell shows them cut to one line.
            preview = f"{p.title}\n{label}\n\n" + p.text[:600] + ("…" if len(p.text) > 600 else "")
            if p.instruction_cues:
                preview = f"⚠ {injection_warning(p)}\n\n{preview}"
            for col, item in enumerate(items):
                item.setToolTip(preview)
                if col >= 2:
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.table.setItem(row, col, item)
            self.table.setRowHeight(row, row_px)

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

    def source_cell_lines(self, row: int) -> tuple[str, str]:
        """The two lines painted in row ``row``'s Source cell at the column's current width."""
        index = self.table.model().index(row, SOURCE_COLUMN)
        option = QStyleOptionViewItem()
        option.initFrom(self.table.viewport())
        option.rect = self.table.visualRect(index)
        option.font = self.table.font()
        return self.source_delegate.lines(option, index)

    @Slot(int, int)
    def on_cell_clicked(self, row: int, _column: int) -> None:
        """Open the clicked passage."""
        if 0 <= row < len(self.passages):
            self.source_activated.emit(row + 1)
