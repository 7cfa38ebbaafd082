"""Opens a cited passage where it is: a PDF page rendered with PyMuPDF with the evidence
sentence highlighted, or, for other formats, the passage text with a button that opens the
file in the system viewer."""

from __future__ import annotations

import html
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QRectF, Qt, QUrl, Signal, Slot
from PySide6.QtGui import QColor, QDesktopServices, QImage, QPainter, QPixmap
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from verifai_desktop.domain import Passage

if TYPE_CHECKING:
    import pymupdf

log = logging.getLogger(__name__)

MIN_ZOOM = 0.8  # below this text is unreadable; the page scrolls sideways instead
MAX_ZOOM = 2.0  # pixmap scale cap: 72 dpi * 2 = 144 dpi
HIGHLIGHT_RGBA = (255, 213, 0, 110)
WORDS_PER_PROBE = 5  # fallback search for sentences broken across lines or hyphenated


def find_highlight_rects(page: pymupdf.Page, sentence: str) -> list[pymupdf.Rect]:
    """Rectangles on ``page`` covering ``sentence`` (PDF points).

    Tries the whole sentence with ``page.search_for``; when line breaks or hyphenation
    defeat that, searches consecutive runs of :data:`WORDS_PER_PROBE` words and keeps the hits.
    """
    sentence = " ".join(sentence.split())
    if not sentence:
        return []
    hits = page.search_for(sentence)
    if hits:
        return list(hits)
    words = sentence.split(" ")
    rects: list[pymupdf.Rect] = []
    for i in range(0, len(words), WORDS_PER_PROBE):
        probe = " ".join(words[i : i + WORDS_PER_PROBE])
        if len(probe) >= 8:
            rects.extend(page.search_for(probe))
    return rects


class DocumentView(QWidget):
    """Shows one passage in its document.

    Signals:
        page_shown(int): a PDF page was rendered (0-based page index).
    """

    page_shown = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.passage: Passage | None = None
        self.evidence = ""
        self.page_index = -1
        self.highlight_count = 0  # rectangles drawn on the current page
        self.zoom = 1.0  # pixmap pixels per PDF point of the current page
        self._pdf: pymupdf.Document | None = None
        self._evidence_page = -1

        self.header = QLabel("Click a citation or a source to open it here.")
        self.header.setWordWrap(True)
        self.header.setObjectName("documentHeader")
        self.prev_button = QPushButton("◀ Page")
        self.next_button = QPushButton("Page ▶")
        self.page_label = QLabel("")
        self.open_button = QPushButton("Open in system viewer")
        self.open_button.setToolTip("Open the file with the application your system uses for it")
        for b in (self.prev_button, self.next_button, self.open_button):
            b.setEnabled(False)
        bar = QHBoxLayout()
        bar.addWidget(self.prev_button)
        bar.addWidget(self.page_label)
        bar.addWidget(self.next_button)
        bar.addStretch(1)
        bar.addWidget(self.open_button)

        self.page_image = QLabel()
        self.page_image.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self.page_scroll = QScrollArea()
        self.page_scroll.setWidget(self.page_image)
        self.page_scroll.setWidgetResizable(True)
        self.text = QTextBrowser()
        self.text.setObjectName("passageText")
        self.stack = QStackedWidget()
        self.stack.addWidget(self.text)
        self.stack.addWidget(self.page_scroll)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.header)
        layout.addLayout(bar)
        layout.addWidget(self.stack, 1)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self.prev_button.clicked.connect(self.on_prev_clicked)
        self.next_button.clicked.connect(self.on_next_clicked)
        self.open_button.clicked.connect(self.on_open_clicked)

    @property
    def showing_pdf_page(self) -> bool:
        """True when a rendered PDF page (not passage text) is shown."""
        return self.stack.currentWidget() is self.page_scroll

    def show_passage(
        self, passage: Passage, evidence: str = "", *, password: str | None = None
    ) -> None:
        """Open ``passage`` at its location and highlight ``evidence`` (default: first sentence).

        Args:
            passage: the passage to show.
            evidence: the sentence to highlight, a substring of ``passage.text``.
            password: the PDF's password, if it is encrypted.
        """
        self._close_pdf()
        self.passage = passage
        if not evidence and passage.sentence_spans:
            s, e = passage.sentence_spans[0]
            evidence = passage.text[s:e]
        self.evidence = evidence
        loc = passage.location.label()
        where = passage.path.name if loc == passage.title else passage.source_label()
        self.header.setText(f"<b>{html.escape(passage.title)}</b><br>{html.escape(where)}")
        self.open_button.setEnabled(passage.path.exists())
        if (
            passage.path.suffix.lower() == ".pdf"
            and passage.path.exists()
            and self._open_pdf(passage.path, password)
        ):
            start = max(0, (passage.location.number or 1) - 1)
            self._evidence_page = self._locate_evidence_page(start)
            self.render_page(self._evidence_page)
        else:
            self._show_text()

    def _open_pdf(self, path: Path, password: str | None) -> bool:
        import pymupdf  # lazy: keeps start-up free of it

        try:
            doc = pymupdf.open(path)  # type: ignore[no-untyped-call]
            ok = doc.authenticate(password or "") if doc.needs_pass else True  # type: ignore[no-untyped-call]
            if not ok:
                doc.close()  # type: ignore[no-untyped-call]
                return False
        except Exception as exc:  # any MuPDF failure: fall back to the passage text
            log.warning("cannot render %s: %s", path, exc)
            return False
        self._pdf = doc
        return True

    def _locate_evidence_page(self, start: int) -> int:
        assert self._pdf is not None
        start = min(start, self._pdf.page_count - 1)
        for index in (start, start + 1, start - 1):
            if 0 <= index < self._pdf.page_count and find_highlight_rects(
                self._pdf[index], self.evidence
            ):
                return index
        return start

    def render_page(self, index: int) -> None:
        """Render PDF page ``index`` (0-based); highlight the evidence on its page."""
        if self._pdf is None:
            return
        import pymupdf  # lazy: keeps start-up free of it

        index = max(0, min(index, self._pdf.page_count - 1))
        page = self._pdf[index]
        # Fit the page to the panel width so a page reads without sideways scrolling.
        avail = self.page_scroll.viewport().width() - 4
        zoom = max(MIN_ZOOM, min(MAX_ZOOM, avail / max(1.0, page.rect.width)))
        self.zoom = zoom
        matrix = pymupdf.Matrix(zoom, zoom)  # type: ignore[no-untyped-call]
        pix = page.get_pixmap(matrix=matrix, alpha=False)
        image = QImage(
            pix.samples, pix.width, pix.height, pix.stride, QImage.Format.Format_RGB888
        ).copy()
        rects = find_highlight_rects(page, self.evidence) if index == self._evidence_page else []
        if rects:
            painter = QPainter(image)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(*HIGHLIGHT_RGBA))
            painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Multiply)
            for r in rects:
                painter.drawRect(
                    QRectF(
                        r.x0 * zoom,
                        r.y0 * zoom,
                        r.width * zoom,
                        r.height * zoom,
                    )
                )
            painter.end()
        self.highlight_count = len(rects)
        self.page_image.setPixmap(QPixmap.fromImage(image))
        self.page_index = index
        self.page_label.setText(f"page {index + 1} of {self._pdf.page_count}")
        self.prev_button.setEnabled(index > 0)
        self.next_button.setEnabled(index < self._pdf.page_count - 1)
        self.stack.setCurrentWidget(self.page_scroll)
        if rects:
            y = int(min(r.y0 for r in rects) * zoom) - 80
            self.page_scroll.verticalScrollBar().setValue(max(0, y))
        self.page_shown.emit(index)

    def _show_text(self) -> None:
        assert self.passage is not None
        p = self.passage
        start = p.text.find(self.evidence) if self.evidence else -1
        if start >= 0:
            end = start + len(self.evidence)
            body = (
                html.escape(p.text[:start])
                + '<span style="background-color:#fff176;font-weight:600;">'
                + html.escape(p.text[start:end])
                + "</span>"
                + html.escape(p.text[end:])
            )
        else:
            body = html.escape(p.text)
        self.text.setHtml(f"<p style='line-height:140%'>{body}</p>")
        self.page_label.setText("")
        self.prev_button.setEnabled(False)
        self.next_button.setEnabled(False)
        self.highlight_count = 1 if start >= 0 else 0
        self.stack.setCurrentWidget(self.text)

    def _close_pdf(self) -> None:
        if self._pdf is not None:
            self._pdf.close()  # type: ignore[no-untyped-call]
            self._pdf = None
        self.page_index = -1
        self._evidence_page = -1

    @Slot()
    def on_prev_clicked(self) -> None:
        """Show the previous page."""
        self.render_page(self.page_index - 1)

    @Slot()
    def on_next_clicked(self) -> None:
        """Show the next page."""
        self.render_page(self.page_index + 1)

    @Slot()
    def on_open_clicked(self) -> None:
        """Open the file in the system viewer."""
        if self.passage is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.passage.path)))
