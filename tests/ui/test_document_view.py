"""The PDF view on real papers from docs/clean: the page fits the panel's width (and follows
it), the highlight is exactly the evidence (across lines, a column break, a ligature and a
hyphenated line end) and is scrolled into view, zoom by shortcut, and clearing."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest
from PySide6.QtCore import QRect, QRectF, Qt
from PySide6.QtWidgets import QLabel, QStyle, QTabWidget
from pytestqt.qtbot import QtBot

from tests.conftest import DOCS_CLEAN
from tests.pdf_evidence import CASES, Case, passage_and_span, text_under, words
from verifai_desktop.domain import ChunkId, DocId, Location, LocationKind, Passage
from verifai_desktop.ui.document_view import (
    EMPTY_HEADER,
    PAGE_MARGIN_PX,
    ZOOM_STEP,
    DocumentView,
)

PAPER = DOCS_CLEAN / "bmc_trauma_2010_dvt_prophylaxis_review.pdf"
# A reference entry at the foot of page 3's right-hand column (y 708 of 794 pt, x from 320 pt).
EVIDENCE = "Faivre R, Charbonnier B, Barral B, Huet Y, Simmonneau G: A clinical trial of"
EVIDENCE_PAGE = 3


@pytest.fixture
def passage(shared_data: Path) -> Passage:
    return Passage(
        ChunkId(1),
        DocId(1),
        PAPER,
        "DVT prophylaxis review",
        EVIDENCE,
        0,
        len(EVIDENCE),
        Location(LocationKind.PAGE, EVIDENCE_PAGE),
        ((0, len(EVIDENCE)),),
    )


def _view(qtbot: QtBot, width_px: int, height_px: int) -> DocumentView:
    view = DocumentView()
    qtbot.addWidget(view)
    view.resize(width_px, height_px)
    view.show()
    qtbot.waitExposed(view)
    return view


def _page_width_px(view: DocumentView) -> int:
    pixmap = view.page_image.pixmap()
    return round(pixmap.width() / pixmap.devicePixelRatio())


def _spare_px(view: DocumentView) -> int:
    scroll = view.page_scroll
    bar_px = scroll.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, scroll)
    return bar_px + 2 * PAGE_MARGIN_PX + 1


def _highlight_in_viewport(view: DocumentView) -> QRect:
    rect = view.highlight_rect()
    assert rect is not None
    viewport = view.page_scroll.viewport()
    return QRect(view.page_image.mapTo(viewport, rect.topLeft()), rect.size())


def test_page_fits_the_width_and_follows_the_panel(qtbot: QtBot, passage: Passage) -> None:
    view = _view(qtbot, 440, 700)
    view.show_passage(passage, (0, len(EVIDENCE)))
    assert view.showing_pdf_page and view.page_index == EVIDENCE_PAGE - 1
    assert view.fit_width and view.fit_width_action.isChecked()
    viewport = view.page_scroll.viewport()
    # The whole width of the page is in view: no sideways scrolling.
    assert 0 < _page_width_px(view) <= viewport.width()
    # All the width but the margins and the room kept for a vertical scroll bar.
    assert viewport.width() - _page_width_px(view) <= _spare_px(view)
    assert view.page_scroll.horizontalScrollBar().maximum() == 0
    assert view.zoom_label.text() == f"{round(view.zoom * 100)}%"
    narrow_zoom = view.zoom

    view.resize(760, 700)
    qtbot.waitUntil(lambda: view.zoom > narrow_zoom * 1.5, timeout=5000)
    assert view.page_scroll.viewport().width() - _page_width_px(view) <= _spare_px(view)
    assert view.page_scroll.horizontalScrollBar().maximum() == 0


def test_evidence_is_scrolled_into_view(qtbot: QtBot, passage: Passage) -> None:
    # Wide enough that the page is taller than the panel: the evidence starts off-screen.
    view = _view(qtbot, 640, 420)
    view.show_passage(passage, (0, len(EVIDENCE)))
    assert view.highlight_count == 1
    viewport = view.page_scroll.viewport()
    assert view.page_image.height() > viewport.height()
    assert view.page_scroll.verticalScrollBar().value() > 0
    assert viewport.rect().contains(_highlight_in_viewport(view))

    # Zoomed in, the next page and back: the evidence is found and scrolled to again.
    view.zoom_in_action.trigger()
    view.on_next_clicked()
    assert view.highlight_rect() is None and view.page_scroll.verticalScrollBar().value() == 0
    view.on_prev_clicked()
    assert viewport.rect().contains(_highlight_in_viewport(view))


def test_evidence_opened_in_a_hidden_tab_is_in_view_when_shown(
    qtbot: QtBot, passage: Passage
) -> None:
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    tabs.addTab(QLabel("sources"), "Sources")
    view = DocumentView()
    tabs.addTab(view, "Document")
    tabs.resize(640, 460)
    tabs.show()
    qtbot.waitExposed(tabs)
    view.show_passage(passage, (0, len(EVIDENCE)))  # laid out for a size it does not have yet
    tabs.setCurrentWidget(view)
    viewport = view.page_scroll.viewport()

    def in_view() -> None:
        assert abs(view.zoom - view.fit_zoom(595.276)) < 0.005
        assert viewport.rect().contains(_highlight_in_viewport(view))

    qtbot.waitUntil(in_view, timeout=5000)
    assert view.page_scroll.horizontalScrollBar().maximum() == 0


def test_zoom_shortcuts(qtbot: QtBot, passage: Passage) -> None:
    view = _view(qtbot, 500, 600)
    with qtbot.waitActive(view):
        view.activateWindow()
    view.show_passage(passage, (0, len(EVIDENCE)))
    fit = view.zoom
    ctrl = Qt.KeyboardModifier.ControlModifier
    qtbot.keyClick(view, Qt.Key.Key_Equal, ctrl)
    assert view.zoom == pytest.approx(fit * ZOOM_STEP) and not view.fit_width
    assert not view.fit_width_action.isChecked()
    assert abs(_page_width_px(view) - 595.276 * view.zoom) <= 1
    assert view.page_scroll.horizontalScrollBar().maximum() > 0  # wider than the panel now
    qtbot.keyClick(view, Qt.Key.Key_Minus, ctrl)
    qtbot.keyClick(view, Qt.Key.Key_Minus, ctrl)
    assert view.zoom == pytest.approx(fit / ZOOM_STEP)
    assert view.zoom_label.text() == f"{round(fit / ZOOM_STEP * 100)}%"
    # A resize does not undo the user's zoom ...
    view.resize(700, 600)
    qtbot.wait(200)
    assert view.zoom == pytest.approx(fit / ZOOM_STEP)
    # ... until Ctrl+0 fits the width again.
    qtbot.keyClick(view, Qt.Key.Key_0, ctrl)
    assert view.fit_width and view.fit_width_action.isChecked()
    assert view.zoom == pytest.approx(view.fit_zoom(595.276)) and view.zoom > fit


def test_clear_forgets_the_page(qtbot: QtBot, passage: Passage) -> None:
    view = _view(qtbot, 440, 600)
    view.show_passage(passage, (0, len(EVIDENCE)))
    assert view.zoom_in_action.isEnabled()
    view.clear()
    assert view.passage is None and not view.showing_pdf_page
    assert view.page_image.pixmap().isNull() and view.page_index == -1
    assert view.header.text() == EMPTY_HEADER and view.page_label.text() == ""
    assert not any(
        w.isEnabled()
        for w in (view.prev_button, view.next_button, view.open_button, view.zoom_in_action)
    )


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_highlight_is_the_evidence_and_its_start_is_in_view(
    qtbot: QtBot, case: Case, shared_data: Path
) -> None:
    passage, span = passage_and_span(case)
    view = _view(qtbot, 640, 420)
    view.show_passage(passage, span)
    assert view.evidence == passage.text[span[0] : span[1]]
    assert view.page_index == case.page_number - 1
    rects = view.highlight_rects
    assert view.highlight_count == len(rects) >= 2
    with pymupdf.open(case.path) as pdf:  # type: ignore[no-untyped-call]
        assert words(text_under(pdf[view.page_index], rects)) == case.sentence
    first = rects[0]
    start = QRectF(first.x0, first.y0, first.x1 - first.x0, first.y1 - first.y0)
    start_px = QRectF(start.topLeft() * view.zoom, start.size() * view.zoom).toAlignedRect()
    viewport = view.page_scroll.viewport()
    at = view.page_image.mapTo(viewport, start_px.topLeft())
    assert viewport.rect().contains(QRect(at, start_px.size()))
    if case.name != "across a column break":  # two columns apart: only its start can be shown
        assert viewport.rect().contains(_highlight_in_viewport(view))
