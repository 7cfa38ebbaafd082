"""The sources panel: the retrieved passages with their lexical, semantic and fused scores,
then the passages elsewhere in the documents that contradict the answer (conflicting
evidence)."""

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

from verifai_desktop.citation_settings import CitationSettings
from verifai_desktop.domain import Answer, Evidence, Passage
from verifai_desktop.errors import VerifaiError
from verifai_desktop.ingest.source_text import passage_line
from verifai_desktop.names import printable
from verifai_desktop.presentation import (
    CONFLICT_COLOR,
    CONFLICT_GLYPH,
    CONFLICT_TITLE,
    CollectionConflict,
    collection_conflicts,
    injection_warning,
    ocr_note,
)
from verifai_desktop.ui.answer_render import CLOSEST_PASSAGES

COLUMNS = ("#", "Source", "Lex.", "Sem.", "Fused", "Evid.")
# Short score headers leave the width to the source; the header tooltips say what they are.
COLUMN_TIPS = (
    "Citation number in the answer",
    "Document title, and the file with its page or section",
    "Lexical (BM25) score",
    "Semantic (cosine similarity) score",
    "Fused score: the retrieval ranking",
    "Evidence: the verifier's probability that the passage supports or contradicts the "
    "question, which reranked it (shown when reranking is on)",
)
EVIDENCE_COLUMN = 5
SOURCE_COLUMN = 1
TITLE_ROLE = int(Qt.ItemDataRole.UserRole) + 1  # str: the passage's document title
FILE_ROLE = int(Qt.ItemDataRole.UserRole) + 2  # str: the file name, "file.pdf"
WHERE_ROLE = int(Qt.ItemDataRole.UserRole) + 3  # str: the location label, "p. 3" ('' if none)
QUOTE_ROLE = int(Qt.ItemDataRole.UserRole) + 4  # str: a third line, the contradicting sentence
CONFLICT_COLUMNS = ("Source", "Contr.")
CONFLICT_COLUMN_TIPS = (
    "Document title, file and page, and the sentence that contradicts the answer",
    "Probability that the passage contradicts the answer's sentence",
)
CONFLICT_HELP = (
    "Passages elsewhere in your documents that contradict a sentence of the answer. "
    "Click one to open it."
)
NOT_FOUND_CAPTION = (
    "The {n} nearest passages; none is close enough to the question to answer it. "
    "Click one to open it."
)
"""Over the passages of an answer not found (:data:`CLOSEST_PASSAGES` at most: the rest of
the search is unrelated text)."""
UNSUPPORTED_CAPTION = (
    "{n} passages given to the generator; none supports a sentence of its answer. "
    "Click one to open it."
)
CELL_PADDING_PX = 6  # left and right, like the style's item padding
ROW_PADDING_PX = 10  # above and below the two lines
SEPARATOR = ", "  # between file name and location, as in Passage.source_label()
OCR_MARK = " · recognised text (OCR)"
"""After the location of a passage read from a page image (the tooltip gives the engine and
its confidence, :func:`~verifai_desktop.presentation.ocr_note`)."""


def title_line(title: str, fm: QFontMetrics, width_px: int) -> str:
    """The title cut at its end ("…") to ``width_px`` pixels of font ``fm``."""
    return fm.elidedText(title, Qt.TextElideMode.ElideRight, width_px)


def location_line(file_name: str, where: str, fm: QFontMetrics, width_px: int) -> str:
    """``"file.pdf, p. 3"`` fitted to ``width_px`` pixels of font ``fm``.

    When it does not fit, the location keeps the width the file name leaves it, and at least
    half (a page label stays whole); the file name is cut at its end ("…"), so it reads from
    its start as written (the full path is in the row's tooltip).
    """
    if not where:
        return fm.elidedText(file_name, Qt.TextElideMode.ElideRight, width_px)
    full = f"{file_name}{SEPARATOR}{where}"
    if fm.horizontalAdvance(full) <= width_px:
        return full
    name_need_px = fm.horizontalAdvance(file_name + SEPARATOR)
    where_px = min(fm.horizontalAdvance(where), max(width_px // 2, width_px - name_need_px))
    where = fm.elidedText(where, Qt.TextElideMode.ElideRight, where_px)
    name_px = width_px - fm.horizontalAdvance(SEPARATOR + where)
    name = fm.elidedText(file_name, Qt.TextElideMode.ElideRight, max(0, name_px))
    return f"{name}{SEPARATOR}{where}"


def full_path(passage: Passage) -> str:
    """The passage's document as a full path, printable (a name that is not valid UTF-8 is
    shown escaped)."""
    return printable(str(passage.path))


def quote_line(quote: str, fm: QFontMetrics, width_px: int) -> str:
    """``“quote”`` cut at its end ("…") to ``width_px`` pixels of font ``fm``."""
    return fm.elidedText(f"\u201c{quote}\u201d", Qt.TextElideMode.ElideRight, width_px)


def author_year_labels(passages: tuple[Passage, ...], settings: CitationSettings) -> list[str]:
    """Each passage's author-year citation (``"Cohan et al., 2020, p. 3"``), or ``""`` for one
    without a reference-manager entry, or for all when the style is numeric or cannot be
    loaded (:mod:`verifai_desktop.citations`)."""
    from verifai_desktop.citations import Citer, has_author_year

    try:
        citer = Citer(passages, settings)
    except VerifaiError:
        return [""] * len(passages)
    if not citer.author_year:
        return [""] * len(passages)
    return [citer.label(p) if has_author_year(p.reference) else "" for p in passages]


class SourceDelegate(QStyledItemDelegate):
    """Paints a source cell as two single lines: the title (bold) over "file, p. N"; a cell
    with a quote (``QUOTE_ROLE``, a conflict's contradicting sentence) gets it as a third line,
    in italics."""

    def quote_font(self, option: QStyleOptionViewItem) -> QFont:
        """The font of the quote line: the view's font, italic."""
        font = QFont(option.font)
        font.setItalic(True)
        return font

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
        top = rect.top() + (rect.height() - self.line_count(index) * line_px) // 2
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
        quote = str(index.data(QUOTE_ROLE) or "")
        if quote:
            painter.setFont(self.quote_font(opt))
            line = quote_line(quote, QFontMetrics(self.quote_font(opt)), text_rect.width())
            painter.drawText(text_rect.translated(0, 2 * line_px), flags, line)
        painter.restore()

    def line_count(self, index: QModelIndex | QPersistentModelIndex) -> int:
        """Lines painted in the cell: 2, or 3 with a quote."""
        return 3 if index.data(QUOTE_ROLE) else 2

    def sizeHint(  # noqa: N802 (Qt override)
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        line_px = QFontMetrics(option.font).lineSpacing()
        return QSize(120, self.line_count(index) * line_px + ROW_PADDING_PX)


class SourcesPanel(QWidget):
    """Table of passages; activating a row opens that passage in the document view. Below it,
    when the answer has any, the passages elsewhere in the documents that contradict it.

    Signals:
        source_activated(int): 1-based passage number clicked or activated with Enter.
        conflict_activated(Evidence): a conflicting passage clicked or activated with Enter.
    """

    source_activated = Signal(int)
    conflict_activated = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.passages: tuple[Passage, ...] = ()
        self.conflicts: tuple[CollectionConflict, ...] = ()
        self.citations = CitationSettings()  # how sources are named (the window's settings)
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
        for col in (2, 3, 4, EVIDENCE_COLUMN):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setColumnHidden(EVIDENCE_COLUMN, True)
        self.conflict_heading = QLabel(
            f"<b style='color:{CONFLICT_COLOR}'>{CONFLICT_GLYPH} {CONFLICT_TITLE}</b>"
            f"<br><span style='color:#555'>{CONFLICT_HELP}</span>"
        )
        self.conflict_heading.setObjectName("conflictHeading")
        self.conflict_heading.setWordWrap(True)
        self.conflict_heading.setContentsMargins(4, 8, 4, 4)
        self.conflict_table = QTableWidget(0, len(CONFLICT_COLUMNS))
        self.conflict_table.setObjectName("conflictTable")
        self.conflict_table.setAccessibleName(CONFLICT_TITLE)
        self.conflict_table.setHorizontalHeaderLabels(list(CONFLICT_COLUMNS))
        for col, tip in enumerate(CONFLICT_COLUMN_TIPS):
            header_item = self.conflict_table.horizontalHeaderItem(col)
            if header_item is not None:
                header_item.setToolTip(tip)
        self.conflict_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.conflict_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.conflict_table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.conflict_table.verticalHeader().setVisible(False)
        self.conflict_table.setWordWrap(False)
        self.conflict_table.setItemDelegateForColumn(0, SourceDelegate(self.conflict_table))
        conflict_header = self.conflict_table.horizontalHeader()
        conflict_header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        conflict_header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.caption)
        layout.addWidget(self.table, 3)
        layout.addWidget(self.conflict_heading)
        layout.addWidget(self.conflict_table, 2)
        self._show_conflict_list(False)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self.table.cellClicked.connect(self.on_cell_clicked)
        self.table.cellActivated.connect(self.on_cell_clicked)
        self.conflict_table.cellClicked.connect(self.on_conflict_clicked)
        self.conflict_table.cellActivated.connect(self.on_conflict_clicked)

    def _show_conflict_list(self, shown: bool) -> None:
        self.conflict_heading.setVisible(shown)
        self.conflict_table.setVisible(shown)

    def set_answer(self, answer: Answer) -> None:
        """Show ``answer``'s passages and, below them, its conflicting passages from
        elsewhere in the documents (:func:`~verifai_desktop.presentation.collection_conflicts`).

        The caption says why an abstained answer's passages are shown: they were not close
        enough to answer (nothing was generated; only the nearest :data:`CLOSEST_PASSAGES`
        are listed), or they were given to the generator but support no sentence of its
        answer (whose conflicts are still listed)."""
        passages = answer.passages
        if not answer.abstained:
            caption = ""
        elif answer.refused_by_evidence:
            caption = UNSUPPORTED_CAPTION.format(n=len(passages))
        else:
            passages = passages[:CLOSEST_PASSAGES]
            caption = NOT_FOUND_CAPTION.format(n=len(passages))
        self.set_passages(passages, caption=caption)
        self.set_conflicts(answer)

    def set_conflicts(self, answer: Answer) -> None:
        """List the passages outside ``answer.passages`` that contradict its sentences: title,
        file and page, the contradicting sentence, P(CONTRADICT); hidden when there are none."""
        # An answer refused by evidence keeps its sentences and their conflicts.
        self.conflicts = collection_conflicts(answer)
        table = self.conflict_table
        table.setRowCount(len(self.conflicts))
        line_px = table.fontMetrics().lineSpacing()
        for row, conflict in enumerate(self.conflicts):
            passage, verdict = conflict.evidence.passage, conflict.evidence.verdict
            quote = verdict.evidence.strip()
            source = QTableWidgetItem(f"{passage.title}\n{passage.source_label()}\n{quote}")
            source.setData(TITLE_ROLE, passage.title)
            source.setData(FILE_ROLE, passage.path.name)
            source.setData(WHERE_ROLE, passage.location.label())
            source.setData(QUOTE_ROLE, quote)
            prob = QTableWidgetItem(f"{verdict.p_contradict:.2f}")
            prob.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            against = "\n".join(
                f"Contradicts sentence {i + 1} of the answer: "
                f"\u201c{answer.sentences[i].claim}\u201d"
                for i in conflict.sentences
            )
            tip = (
                f"{passage.title}\n{passage.source_label()}\n{full_path(passage)}\n\n"
                f"\u201c{quote}\u201d\ncontradict {verdict.p_contradict:.2f}\n\n{against}"
            )
            for col, item in enumerate((source, prob)):
                item.setToolTip(tip)
                table.setItem(row, col, item)
            table.setRowHeight(row, 3 * line_px + ROW_PADDING_PX)
        self._show_conflict_list(bool(self.conflicts))

    def conflict_texts(self) -> list[tuple[str, ...]]:
        """The conflict list's cell texts, row by row: ("title\\nfile, p. N\\nsentence",
        "P(CONTRADICT)")."""
        return [
            tuple(
                item.text() if (item := self.conflict_table.item(r, c)) is not None else ""
                for c in range(len(CONFLICT_COLUMNS))
            )
            for r in range(self.conflict_table.rowCount())
        ]

    @Slot(int, int)
    def on_conflict_clicked(self, row: int, _column: int) -> None:
        """Open the clicked conflicting passage."""
        if 0 <= row < len(self.conflicts):
            evidence: Evidence = self.conflicts[row].evidence
            self.conflict_activated.emit(evidence)

    def set_passages(self, passages: tuple[Passage, ...], *, caption: str = "") -> None:
        """Show ``passages`` (``passages[i]`` is citation ``[i + 1]``).

        Args:
            passages: the passages.
            caption: the line above them; ``""`` says they were given to the generator.
        """
        self.passages = passages
        self.caption.setText(
            caption or f"{len(passages)} passages given to the generator. Click one to open it."
        )
        self.table.setRowCount(len(passages))
        reranked = any(p.evidence is not None for p in passages)
        self.table.setColumnHidden(EVIDENCE_COLUMN, not reranked)
        row_px = 2 * self.table.fontMetrics().lineSpacing() + ROW_PADDING_PX
        cited = author_year_labels(passages, self.citations)
        for row, p in enumerate(passages):
            number = f"[{row + 1}]" + (" ⚠" if p.instruction_cues else "")
            ocr = OCR_MARK if p.ocr is not None else ""
            # A text file: the line the passage starts on, first (it survives eliding).
            line = passage_line(p.path, p.text)
            where = p.location.label()
            if line is not None:
                where = f"line {line}" + (f", {where}" if where else "")
            label = (f"{p.path.name}, {where}" if where else p.path.name) + ocr
            source = QTableWidgetItem(f"{p.title}\n{label}")
            source.setData(TITLE_ROLE, p.title)
            source.setData(FILE_ROLE, p.path.name)
            source.setData(WHERE_ROLE, where + ocr)
            if cited[row]:  # "Cohan et al., 2020, p. 3 · acl2020_specter.pdf"
                source.setText(f"{p.title}\n{cited[row]} · {label}")
                source.setData(FILE_ROLE, f"{cited[row]}{ocr} · {p.path.name}")
                source.setData(WHERE_ROLE, "")
            items = (
                QTableWidgetItem(number),
                source,
                QTableWidgetItem(f"{p.lexical_score:.2f}"),
                QTableWidgetItem(f"{p.semantic_score:.2f}"),
                QTableWidgetItem(f"{p.fused_score:.3f}"),
                QTableWidgetItem("" if p.evidence is None else f"{p.evidence:.2f}"),
            )
            # The full title, file and path lead the tooltip: the cell shows them cut to one
            # line.
            note = ocr_note(p)
            preview = (
                f"{p.title}\n{label}\n{full_path(p)}\n"
                + (f"{note}\n" if note else "")
                + "\n"
                + p.text[:600]
                + ("…" if len(p.text) > 600 else "")
            )
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

    def clear(self, caption: str = "Retrieved passages appear here after a question.") -> None:
        """Forget the passages and the conflicts; show ``caption``."""
        self.set_passages(())
        self.conflicts = ()
        self.conflict_table.setRowCount(0)
        self._show_conflict_list(False)
        self.caption.setText(caption)

    def row_texts(self) -> list[tuple[str, ...]]:
        """The shown columns' cell texts, row by row (for tests and export checks)."""
        return [
            tuple(
                item.text() if (item := self.table.item(r, c)) is not None else ""
                for c in range(len(COLUMNS))
                if not self.table.isColumnHidden(c)
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
