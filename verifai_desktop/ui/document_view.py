"""Opens a cited passage where it is: a PDF page rendered with PyMuPDF with the evidence
highlighted, a text file (TXT, Markdown) whole and scrolled to the passage with its evidence
highlighted (:mod:`~verifai_desktop.ui.source_view`), or, for other formats, the passage text;
a button opens the file in the system viewer.

The highlight covers exactly the evidence's characters (the verifier's deciding window, by its
offsets into the passage), a rectangle per text line it touches, across line breaks and
columns (:mod:`verifai_desktop.ingest.pdf_layout` maps the offsets to the page). A PDF page is
fitted to the panel's width unless the user zooms (Ctrl+= / Ctrl+- / Ctrl+0), re-fitted when
the panel is resized, and scrolled so the highlighted evidence is in view.
"""

from __future__ import annotations

import html
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QRect, QRectF, Qt, QTimer, QUrl, Signal, Slot
from PySide6.QtGui import (
    QAction,
    QColor,
    QDesktopServices,
    QImage,
    QKeySequence,
    QPainter,
    QPixmap,
    QResizeEvent,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QStackedWidget,
    QStyle,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from verifai_desktop.domain import Passage
from verifai_desktop.ingest.pdf_layout import PageLayout, Rect, locate_span, page_layout, span_rects
from verifai_desktop.ui.resources import icon, tool_button
from verifai_desktop.ui.source_view import SourceSpan, locate_passage, show_source

if TYPE_CHECKING:
    import pymupdf

log = logging.getLogger(__name__)

MIN_ZOOM = 0.25  # pixels per PDF point; zooming out stops here
MAX_ZOOM = 4.0  # 72 dpi * 4 = 288 dpi
ZOOM_STEP = 1.25  # one Ctrl+= / Ctrl+- press
PAGE_MARGIN_PX = 4  # free pixels between a fitted page and the panel's edges
HIGHLIGHT_CONTEXT = 1 / 3  # the evidence's top sits this far down the visible page
REFIT_DELAY_MS = 60  # re-render a fitted page once a resize settles, not on every step
HIGHLIGHT_RGBA = (255, 213, 0, 110)
EMPTY_HEADER = "Click a citation or a source to open it here."


class DocumentView(QWidget):
    """Shows one passage in its document.

    Attributes:
        zoom: pixels per PDF point of the shown page (1.0 = 72 dpi).
        fit_width: True while the page follows the panel's width (the default; zooming in or
            out turns it off, :attr:`fit_width_action` turns it back on).

    Signals:
        page_shown(int): a PDF page was rendered (0-based page index).
    """

    page_shown = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.passage: Passage | None = None
        self.evidence = ""  # the highlighted text of the passage
        self.evidence_span = (0, 0)  # its offsets into the passage text
        self.source_span: SourceSpan | None = None  # where it is in a text file shown whole
        self.page_index = -1
        self.highlight_count = 0  # rectangles drawn on the current page (text lines)
        self.zoom = 1.0
        self.fit_width = True
        self._pdf: pymupdf.Document | None = None
        self._evidence_page = -1
        self._evidence_rects: tuple[Rect, ...] = ()  # on the evidence page, PDF points
        self._layouts: dict[int, PageLayout] = {}  # page index -> text positions
        self._highlight_pt: QRectF | None = None  # union of the highlight, PDF points
        self._first_line_pt: QRectF | None = None  # where the evidence starts, PDF points
        self._page_width_pt = 0.0
        self._scroll_pending = False  # scroll to the evidence once the page is laid out
        self._refit_timer = QTimer(self)
        self._refit_timer.setSingleShot(True)
        self._refit_timer.setInterval(REFIT_DELAY_MS)

        self.header = QLabel(EMPTY_HEADER)
        self.header.setWordWrap(True)
        self.header.setObjectName("documentHeader")
        self.header.setContentsMargins(4, 4, 4, 0)
        self.zoom_in_action = self._action(
            "zoom-in", "Zoom in", (QKeySequence("Ctrl+="), QKeySequence.StandardKey.ZoomIn)
        )
        self.zoom_out_action = self._action(
            "zoom-out", "Zoom out", (QKeySequence("Ctrl+-"), QKeySequence.StandardKey.ZoomOut)
        )
        self.fit_width_action = self._action("fit-width", "Fit width", (QKeySequence("Ctrl+0"),))
        self.fit_width_action.setCheckable(True)
        self.fit_width_action.setChecked(True)
        self.prev_button = tool_button("page-prev", "Previous page")
        self.next_button = tool_button("page-next", "Next page")
        self.page_label = QLabel("")
        self.zoom_label = QLabel("")
        self.zoom_label.setObjectName("zoomLabel")
        self.zoom_out_button = QToolButton()
        self.zoom_out_button.setDefaultAction(self.zoom_out_action)
        self.zoom_in_button = QToolButton()
        self.zoom_in_button.setDefaultAction(self.zoom_in_action)
        self.fit_width_button = QToolButton()
        self.fit_width_button.setDefaultAction(self.fit_width_action)
        self.open_button = tool_button("open-external", "Open the file in your system's viewer")
        for w in (self.prev_button, self.next_button, self.open_button):
            w.setEnabled(False)
        self._set_zoom_enabled(False)
        bar = QHBoxLayout()
        bar.setSpacing(2)
        bar.addWidget(self.prev_button)
        bar.addWidget(self.page_label)
        bar.addWidget(self.next_button)
        bar.addSpacing(8)
        bar.addWidget(self.zoom_out_button)
        bar.addWidget(self.zoom_label)
        bar.addWidget(self.zoom_in_button)
        bar.addWidget(self.fit_width_button)
        bar.addStretch(1)
        bar.addWidget(self.open_button)

        self.page_image = QLabel()
        self.page_image.setObjectName("pageImage")
        self.page_scroll = QScrollArea()
        self.page_scroll.setWidget(self.page_image)
        # The label takes the page's size; the scroll area centres a page narrower than itself.
        self.page_scroll.setWidgetResizable(False)
        self.page_scroll.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
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

    def _action(
        self, icon_name: str, text: str, keys: tuple[QKeySequence | QKeySequence.StandardKey, ...]
    ) -> QAction:
        action = QAction(icon(icon_name), text, self)
        sequences: list[QKeySequence] = []
        for k in keys:
            bound = QKeySequence.keyBindings(k) if isinstance(k, QKeySequence.StandardKey) else [k]
            for seq in bound:
                if seq not in sequences:
                    sequences.append(seq)
        action.setShortcuts(sequences)
        # Active while this view is visible in the active window, wherever the focus is.
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        native = sequences[0].toString(QKeySequence.SequenceFormat.NativeText)
        action.setToolTip(f"{text} ({native})")
        self.addAction(action)
        return action

    def _connect_signals(self) -> None:
        self.prev_button.clicked.connect(self.on_prev_clicked)
        self.next_button.clicked.connect(self.on_next_clicked)
        self.open_button.clicked.connect(self.on_open_clicked)
        self.zoom_in_action.triggered.connect(self.on_zoom_in_triggered)
        self.zoom_out_action.triggered.connect(self.on_zoom_out_triggered)
        self.fit_width_action.triggered.connect(self.on_fit_width_triggered)
        self._refit_timer.timeout.connect(self.on_refit_timeout)

    @property
    def showing_pdf_page(self) -> bool:
        """True when a rendered PDF page (not passage text) is shown."""
        return self.stack.currentWidget() is self.page_scroll

    def show_passage(
        self,
        passage: Passage,
        evidence_span: tuple[int, int] = (0, 0),
        *,
        password: str | None = None,
    ) -> None:
        """Open ``passage`` at its location and highlight its evidence.

        Args:
            passage: the passage to show.
            evidence_span: ``(start, end)`` offsets into ``passage.text`` of the text to
                highlight (``Verdict.evidence_span``); an empty span highlights the passage's
                first sentence.
            password: the PDF's password, if it is encrypted.
        """
        self._close_pdf()
        self.passage = passage
        start, end = max(0, evidence_span[0]), min(len(passage.text), evidence_span[1])
        if start >= end:
            start, end = passage.sentence_spans[0] if passage.sentence_spans else (0, 0)
        self.evidence_span = (start, end)
        self.evidence = passage.text[start:end]
        loc = passage.location.label()
        where = passage.path.name if loc == passage.title else passage.source_label()
        self.header.setText(f"<b>{html.escape(passage.title)}</b><br>{html.escape(where)}")
        self.open_button.setEnabled(passage.path.exists())
        if (
            passage.path.suffix.lower() == ".pdf"
            and passage.path.exists()
            and self._open_pdf(passage.path, password)
        ):
            self._locate_evidence(max(0, (passage.location.number or 1) - 1))
            self.render_page(self._evidence_page)
        else:
            self._show_text()

    def clear(self) -> None:
        """Show nothing (a new question started): forget the passage and close its file."""
        self._close_pdf()
        self.passage = None
        self.evidence = ""
        self.evidence_span = (0, 0)
        self.highlight_count = 0
        self.header.setText(EMPTY_HEADER)
        self.page_image.clear()
        self.page_image.resize(0, 0)
        self.text.clear()
        self.page_label.setText("")
        self.zoom_label.setText("")
        for w in (self.prev_button, self.next_button, self.open_button):
            w.setEnabled(False)
        self._set_zoom_enabled(False)
        self.stack.setCurrentWidget(self.text)

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

    def _layout(self, index: int) -> PageLayout:
        assert self._pdf is not None
        if index not in self._layouts:
            self._layouts[index] = page_layout(self._pdf[index])
        return self._layouts[index]

    def _locate_evidence(self, start_page: int) -> None:
        """Find the evidence's page and its rectangles there (the passage's page and no
        highlight when the evidence is not found). On a page read by OCR the rectangles are
        the boxes of the recognised words the evidence spans (``Passage.ocr``)."""
        assert self._pdf is not None and self.passage is not None
        count = self._pdf.page_count
        self._evidence_page = min(start_page, count - 1)
        self._evidence_rects = ()
        ocr = self.passage.ocr
        if ocr is not None:  # a scanned page: the recognised words' boxes (no text layer)
            start, end = self.evidence_span
            self._evidence_rects = tuple(
                Rect(w.x0, w.y0, w.x1, w.y1)
                for w in ocr.words
                if w.char_start < end and w.char_end > start
            )
            return
        try:
            found = locate_span(
                self._layout, count, self._evidence_page, self.passage.text, self.evidence_span
            )
        except (RuntimeError, ValueError) as exc:  # a page MuPDF cannot read
            log.warning("cannot read the text of %s: %s", self.passage.path, exc)
            return
        if found is not None:
            self._evidence_page = found.page_index
            self._evidence_rects = span_rects(
                self._layout(found.page_index), found.char_start, found.char_end
            )

    @property
    def highlight_rects(self) -> tuple[Rect, ...]:
        """The highlight on the shown page: a rectangle per text line of the evidence, in
        PDF points, in reading order (``()`` on another page or without evidence)."""
        return self._evidence_rects if self.page_index == self._evidence_page else ()

    def fit_zoom(self, page_width_pt: float) -> float:
        """The zoom that fits a page ``page_width_pt`` wide to the panel, scroll bar included.

        The width is the page stack's (which the scroll area fills), not the viewport's: the
        stack is laid out even while the text is shown, and the fit does not change when the
        vertical scroll bar appears or goes.
        """
        scroll = self.page_scroll
        bar_px = scroll.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, scroll)
        width = self.stack.contentsRect().width()
        avail = width - 2 * scroll.frameWidth() - bar_px - 2 * PAGE_MARGIN_PX
        return max(MIN_ZOOM, min(MAX_ZOOM, avail / max(1.0, page_width_pt)))

    def render_page(self, index: int, *, keep_view: bool = False) -> None:
        """Render PDF page ``index`` (0-based) at the current zoom (fitted to the width by
        default) and highlight the evidence on its page.

        Args:
            index: the page, clamped to the document.
            keep_view: keep the same part of the page in view (a zoom or a resize); otherwise
                scroll to the evidence on its page, or to the top of another page.
        """
        if self._pdf is None:
            return
        import pymupdf  # lazy: keeps start-up free of it

        index = max(0, min(index, self._pdf.page_count - 1))
        page = self._pdf[index]
        view_center = self._view_center_fraction() if keep_view else None
        self._page_width_pt = page.rect.width
        if self.fit_width:
            self.zoom = self.fit_zoom(page.rect.width)
        zoom = self.zoom
        # Render at the screen's pixel density so the text stays sharp on HiDPI screens.
        dpr = self.devicePixelRatioF()
        matrix = pymupdf.Matrix(zoom * dpr, zoom * dpr)  # type: ignore[no-untyped-call]
        pix = page.get_pixmap(matrix=matrix, alpha=False)
        image = QImage(
            pix.samples, pix.width, pix.height, pix.stride, QImage.Format.Format_RGB888
        ).copy()
        rects = self._evidence_rects if index == self._evidence_page else ()
        self._highlight_pt = self._first_line_pt = None
        if rects:
            painter = QPainter(image)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(*HIGHLIGHT_RGBA))
            painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Multiply)
            for r in rects:
                box = QRectF(r.x0, r.y0, r.x1 - r.x0, r.y1 - r.y0)
                painter.drawRect(QRectF(box.topLeft() * zoom * dpr, box.size() * zoom * dpr))
                self._highlight_pt = box if self._highlight_pt is None else self._highlight_pt | box
                if self._first_line_pt is None:
                    self._first_line_pt = box
            painter.end()
        self.highlight_count = len(rects)
        pixmap = QPixmap.fromImage(image)
        pixmap.setDevicePixelRatio(dpr)
        # Show the page widget and give it its place first: a hidden label's resize would not
        # reach the scroll area, whose scroll bar ranges and viewport size must be up to date
        # before scrolling to the evidence.
        self.stack.setCurrentWidget(self.page_scroll)
        stack_layout = self.stack.layout()
        if stack_layout is not None:
            stack_layout.setGeometry(self.stack.contentsRect())
        self.page_image.setPixmap(pixmap)
        self.page_image.resize(round(pix.width / dpr), round(pix.height / dpr))
        self.page_index = index
        self.page_label.setText(f"page {index + 1} of {self._pdf.page_count}")
        self.prev_button.setEnabled(index > 0)
        self.next_button.setEnabled(index < self._pdf.page_count - 1)
        self._set_zoom_enabled(True)
        self.zoom_label.setText(f"{round(zoom * 100)}%")
        self.fit_width_action.setChecked(self.fit_width)
        if view_center is not None:
            self._restore_view_center(view_center)
        else:
            self.scroll_to_highlight()
        self.page_shown.emit(index)

    def _to_pixels(self, r: QRectF | None) -> QRect | None:
        if r is None or self.page_index != self._evidence_page:
            return None
        return QRectF(r.topLeft() * self.zoom, r.size() * self.zoom).toAlignedRect()

    def highlight_rect(self) -> QRect | None:
        """The whole highlighted evidence on the shown page (the box around all its lines),
        in page-image pixels (None if none)."""
        return self._to_pixels(self._highlight_pt)

    def scroll_to_highlight(self) -> None:
        """Scroll so the highlighted evidence is in view: all of it a third of the way down
        the panel, or as much as fits; evidence taller than the panel (or running on in the
        next column) from its first line (the top of the page when nothing is highlighted)."""
        hbar = self.page_scroll.horizontalScrollBar()
        vbar = self.page_scroll.verticalScrollBar()
        whole = self.highlight_rect()
        first = self._to_pixels(self._first_line_pt)
        if whole is None or first is None:
            hbar.setValue(0)
            vbar.setValue(0)
            self._scroll_pending = False
            return
        viewport = self.page_scroll.viewport()
        if not self.page_scroll.isVisible():
            self._scroll_pending = True  # ranges are stale until the view is laid out
            return
        height = viewport.height()
        if whole.height() <= height * (1 - HIGHLIGHT_CONTEXT):
            vbar.setValue(round(whole.top() - height * HIGHLIGHT_CONTEXT))
        elif whole.height() <= height - 2 * PAGE_MARGIN_PX:
            vbar.setValue(whole.top() - PAGE_MARGIN_PX)
        else:
            vbar.setValue(round(first.top() - height * HIGHLIGHT_CONTEXT))
        target = whole if whole.width() <= viewport.width() else first
        if target.left() < hbar.value() or target.right() > hbar.value() + viewport.width():
            hbar.setValue(target.left() - PAGE_MARGIN_PX)
        self._scroll_pending = False

    def _view_center_fraction(self) -> tuple[float, float] | None:
        size = self.page_image.size()
        if self.page_image.pixmap().isNull() or size.isEmpty():
            return None
        viewport = self.page_scroll.viewport()
        x = self.page_scroll.horizontalScrollBar().value() + viewport.width() / 2
        y = self.page_scroll.verticalScrollBar().value() + viewport.height() / 2
        return x / size.width(), y / size.height()

    def _restore_view_center(self, fraction: tuple[float, float] | None) -> None:
        if fraction is None:
            self.scroll_to_highlight()
            return
        size = self.page_image.size()
        viewport = self.page_scroll.viewport()
        self.page_scroll.horizontalScrollBar().setValue(
            round(fraction[0] * size.width() - viewport.width() / 2)
        )
        self.page_scroll.verticalScrollBar().setValue(
            round(fraction[1] * size.height() - viewport.height() / 2)
        )

    def set_zoom(self, zoom: float) -> None:
        """Show the page at ``zoom`` pixels per PDF point (clamped), leaving fit-width."""
        self.fit_width = False
        self.zoom = max(MIN_ZOOM, min(MAX_ZOOM, zoom))
        self.render_page(self.page_index, keep_view=True)

    def _set_zoom_enabled(self, enabled: bool) -> None:
        for a in (self.zoom_in_action, self.zoom_out_action, self.fit_width_action):
            a.setEnabled(enabled)

    def _show_text(self) -> None:
        assert self.passage is not None
        p = self.passage
        start, end = self.evidence_span
        self.source_span = locate_passage(p, (start, end))
        if self.source_span is not None:  # a text file: shown whole at the passage
            self.header.setText(
                f"<b>{html.escape(p.title)}</b><br>"
                f"{html.escape(p.path.name)}, line {self.source_span.line}"
                + (f", {html.escape(p.location.label())}" if p.location.label() else "")
            )
            show_source(self.text, self.source_span)
            self._text_shown()
            self.highlight_count = 1
            return
        self.text.setExtraSelections([])
        if start < end:
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
        self._text_shown()
        self.highlight_count = 1 if start < end else 0

    def _text_shown(self) -> None:
        self.page_label.setText("")
        self.zoom_label.setText("")
        self.prev_button.setEnabled(False)
        self.next_button.setEnabled(False)
        self._set_zoom_enabled(False)
        self.stack.setCurrentWidget(self.text)

    def _close_pdf(self) -> None:
        if self._pdf is not None:
            self._pdf.close()  # type: ignore[no-untyped-call]
            self._pdf = None
        self.page_index = -1
        self._evidence_page = -1
        self._evidence_rects = ()
        self._layouts.clear()
        self._highlight_pt = self._first_line_pt = None
        self._scroll_pending = False

    # ----- events --------------------------------------------------------------------------

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        if self._pdf is not None:
            self._refit_timer.start()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt override)
        super().showEvent(event)
        if self._pdf is not None:
            self._refit_timer.start()

    @Slot()
    def on_refit_timeout(self) -> None:
        """After a resize or show: re-fit the page to the new width, then finish a scroll to
        the evidence that waited for the view to be laid out."""
        if self._pdf is None or self.page_index < 0:
            return
        if self.fit_width and abs(self.fit_zoom(self._page_width_pt) - self.zoom) > 0.005:
            self.render_page(self.page_index, keep_view=not self._scroll_pending)
        elif self._scroll_pending:
            self.scroll_to_highlight()

    @Slot()
    def on_prev_clicked(self) -> None:
        """Show the previous page."""
        self.render_page(self.page_index - 1)

    @Slot()
    def on_next_clicked(self) -> None:
        """Show the next page."""
        self.render_page(self.page_index + 1)

    @Slot()
    def on_zoom_in_triggered(self) -> None:
        """Enlarge the page by one step."""
        if self._pdf is not None:
            self.set_zoom(self.zoom * ZOOM_STEP)

    @Slot()
    def on_zoom_out_triggered(self) -> None:
        """Shrink the page by one step."""
        if self._pdf is not None:
            self.set_zoom(self.zoom / ZOOM_STEP)

    @Slot()
    def on_fit_width_triggered(self) -> None:
        """Fit the page to the panel's width again (and keep fitting it on resize)."""
        self.fit_width = True
        if self._pdf is not None:
            self.render_page(self.page_index, keep_view=True)
        self.fit_width_action.setChecked(True)

    @Slot()
    def on_open_clicked(self) -> None:
        """Open the file in the system viewer."""
        if self.passage is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.passage.path)))
