"""The reading layout (issue 29): the answer and the cited page side by side at 1366x768 and
1920x1080, the page fitted to its panel, the library hidden and shown from the View menu, and
the layout remembered. A real PDF of docs/clean is shown in the document view."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSize
from pytestqt.qtbot import QtBot

from tests.conftest import DOCS_CLEAN
from verifai_desktop.domain import ChunkId, DocId, Location, LocationKind, Passage
from verifai_desktop.settings import load_settings
from verifai_desktop.ui.main_window import MainWindow
from verifai_desktop.ui.reading_layout import (
    LIBRARY_MAX_PX,
    LIBRARY_MIN_PX,
    panel_widths,
    window_size,
)

PAPER = DOCS_CLEAN / "acl2020_specter.pdf"
PAGE_WIDTH_PT = 595  # the paper's A4 page


def test_panel_widths_share_the_rest_equally() -> None:
    for total in (760, 1256, 1366, 1766, 1920, 3000):
        library, answer, page = panel_widths(total)
        assert library + answer + page == total
        assert LIBRARY_MIN_PX <= library <= LIBRARY_MAX_PX
        assert abs(answer - page) <= 1
        hidden = panel_widths(total, library_shown=False)
        assert hidden[0] == 0 and sum(hidden) == total and abs(hidden[1] - hidden[2]) <= 1
    # A window too narrow for the library's minimum keeps two thirds for reading.
    assert panel_widths(600)[0] == 200


def test_the_first_window_fits_the_screen() -> None:
    assert window_size(QSize(1366, 728)) == QSize(1256, 669)
    assert window_size(QSize(1920, 1040)) == QSize(1400, 860)


def _window(qtbot: QtBot, width: int, height: int) -> MainWindow:
    window = MainWindow(offer_sample=False)
    qtbot.addWidget(window)
    window.resize(width, height)
    window.show()
    qtbot.waitExposed(window)
    window.reading_layout.reset()
    return window


def _show_page(qtbot: QtBot, window: MainWindow, shared_data: Path) -> float:
    """Open page 1 of the SPECTER paper in the document view; its fitted zoom (pixels per
    PDF point)."""
    text = "SPECTER"
    passage = Passage(
        ChunkId(1),
        DocId(1),
        PAPER,
        "SPECTER",
        text,
        0,
        len(text),
        Location(LocationKind.PAGE, 1),
        ((0, len(text)),),
    )
    window.tabs.setCurrentWidget(window.document_view)
    window.document_view.show_passage(passage, (0, len(text)))
    qtbot.waitUntil(lambda: window.document_view.showing_pdf_page, timeout=10_000)
    qtbot.wait(150)  # the re-fit after the tab's resize settles
    return window.document_view.zoom


@pytest.mark.parametrize(("width", "height", "min_zoom"), [(1256, 669, 0.75), (1766, 960, 1.1)])
def test_answer_and_page_side_by_side(
    qtbot: QtBot, shared_data: Path, width: int, height: int, min_zoom: float
) -> None:
    """The window a 1366x768 and a 1920x1080 screen give on first start (92 % of the free
    area): equal answer and page panels, and the page readable at its fitted width."""
    window = _window(qtbot, width, height)
    library, answer, page = window.splitter.sizes()
    assert abs(answer - page) <= 2, window.splitter.sizes()
    assert library <= LIBRARY_MAX_PX
    zoom = _show_page(qtbot, window, shared_data)
    assert window.document_view.fit_width
    assert zoom >= min_zoom
    assert zoom * PAGE_WIDTH_PT <= page  # the whole width of the page is on show


def test_hiding_the_library_gives_the_page_room_and_is_remembered(
    qtbot: QtBot, shared_data: Path
) -> None:
    window = _window(qtbot, 1256, 669)
    shown_zoom = _show_page(qtbot, window, shared_data)
    before = window.splitter.sizes()
    window.reading_layout.show_library_action.trigger()
    qtbot.wait(150)
    assert not window.library.isVisible()
    library, answer, page = window.splitter.sizes()
    assert library == 0
    assert answer + page >= sum(before)  # the library and its handle
    assert page > before[2] and answer > before[1]
    assert window.document_view.zoom > shown_zoom  # re-fitted to the wider panel
    window.save_state()
    assert load_settings().ui.library_shown is False

    again = MainWindow(offer_sample=False)
    qtbot.addWidget(again)
    again.show()
    qtbot.waitExposed(again)
    assert not again.library.isVisible()
    assert not again.reading_layout.show_library_action.isChecked()
    again.reading_layout.show_library_action.trigger()
    assert again.library.isVisible() and again.splitter.sizes()[0] >= LIBRARY_MIN_PX


def test_reset_undoes_a_drag(qtbot: QtBot) -> None:
    window = _window(qtbot, 1256, 669)
    default = window.splitter.sizes()
    window.splitter.setSizes([default[0], default[1] + 200, default[2] - 200])
    assert window.splitter.sizes() != default
    window.reading_layout.reset_action.trigger()
    assert window.splitter.sizes() == default


def test_the_view_shortcut_is_listed_in_help(qtbot: QtBot) -> None:
    from verifai_desktop.ui.help_menu import shortcut_rows

    window = MainWindow(offer_sample=False)
    qtbot.addWidget(window)
    assert ("Ctrl+Shift+L", "Show library") in shortcut_rows(window)
