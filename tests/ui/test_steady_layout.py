"""The layout does not jump (issue 42, item 2): the panel widths stay where they are while a
colour check, an ingest or a model load writes long status lines, the History list gets no
horizontal scroll bar, and the legend wraps between its entries only ("Re-cited" stays whole).

The real window at the sizes it opens with on 1366x768 and 1600x1000 screens; the status lines
are those a self-check, an ingest and a first question write, made long (a long file name,
a long collection name) as they are in use."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSize
from PySide6.QtGui import QTextCursor
from pytestqt.qtbot import QtBot

from verifai_desktop.presentation import LABEL_STYLES
from verifai_desktop.ui.history_panel import HistoryEntry
from verifai_desktop.ui.main_window import MainWindow
from verifai_desktop.ui.reading_layout import window_size

LONG_NAME = "Proceedings_of_the_2024_conference_on_very_long_file_names_volume_2_part_3.pdf"
LONG_STATUS = f"Checking 132 of 190 pairs… reading {LONG_NAME}"


def _window(qtbot: QtBot, screen: QSize) -> MainWindow:
    window = MainWindow(offer_sample=False)
    qtbot.addWidget(window)
    window.resize(window_size(screen))
    window.show()
    qtbot.waitExposed(window)
    window.reading_layout.reset()
    qtbot.wait(20)
    return window


def _write_long_status(window: MainWindow) -> None:
    """What a colour check, an ingest and a model load show at once, with long names."""
    library = window.library
    check = library.self_check
    check.setVisible(True)
    check._show_running(True, LONG_STATUS)
    check.note.setText(f"The result is not kept: {LONG_NAME} is being written.")
    check.note.setVisible(True)
    frame = library.progress_frame
    frame.setVisible(True)
    frame.label.setText(f"Recognising the text of {LONG_NAME} p. 12 (scanned page 3 of 40)")
    frame.chunks_label.setText("1,234,567 chunks embedded so far in this collection")
    library.docs_title.setText(f"Documents in “{LONG_NAME}”")
    library.summary_frame.show_summary(
        f"Added to “papers”: 3 indexed; {LONG_NAME} failed.", collection=library.current
    )
    library.roots_label.setText(f"Built from:\n/home/someone/{LONG_NAME}/{LONG_NAME}")
    library.roots_label.setVisible(True)
    window.model_status.setText(f"Models: loading the generator from /opt/models/{LONG_NAME}…")


def _end_status(window: MainWindow) -> None:
    library = window.library
    library.self_check._show_running(False)
    library.progress_frame.setVisible(False)
    window.model_status.setText("Models: ready")


@pytest.mark.parametrize("screen", [QSize(1366, 728), QSize(1600, 960)])
def test_long_status_lines_leave_the_panel_widths_alone(qtbot: QtBot, screen: QSize) -> None:
    window = _window(qtbot, screen)
    before = window.splitter.sizes()
    width = window.width()
    _write_long_status(window)
    qtbot.wait(50)
    assert window.splitter.sizes() == before  # during
    assert window.width() == width
    _end_status(window)
    qtbot.wait(50)
    assert window.splitter.sizes() == before  # after
    # The user's own width is kept too: narrow the library, then write the status again.
    window.splitter.setSizes([before[0] - 20, before[1] + 20, before[2]])
    mine = window.splitter.sizes()
    _write_long_status(window)
    qtbot.wait(50)
    assert window.splitter.sizes() == mine
    # A cut status line says all of itself in its tooltip.
    label = window.library.self_check.progress_label
    assert label.width() < label.fontMetrics().horizontalAdvance(LONG_STATUS)
    assert LONG_STATUS in label.toolTip()


def test_history_rows_fit_the_list_without_a_horizontal_scroll_bar(qtbot: QtBot) -> None:
    window = _window(qtbot, QSize(1366, 728))
    history = window.history
    window.tabs.setCurrentWidget(history)
    history.collection = "papers"
    history.entries = [
        HistoryEntry(
            1, f"What does {LONG_NAME} say about heparin?", "2026-11-25 14:03", "2 supported", 0
        ),
        HistoryEntry(2, "A" * 120, "2026-11-25 14:05", "1 supported, 1 no evidence", 3),
    ]
    history._fill(None)
    qtbot.wait(50)
    view = history.list
    assert not view.horizontalScrollBar().isVisible()
    for row in range(view.count()):
        rect = view.visualItemRect(view.item(row))
        assert rect.right() <= view.viewport().width()


@pytest.mark.parametrize("screen", [QSize(1366, 728), QSize(1600, 960)])
def test_the_legend_wraps_between_entries_only(qtbot: QtBot, screen: QSize) -> None:
    window = _window(qtbot, screen)
    legend = window.legend
    doc = legend.document()
    entries = [f"{s.glyph}" for s in LABEL_STYLES.values()] + ["⇄", "↻"]
    for glyph in entries:
        found = doc.find(glyph)
        assert not found.isNull(), glyph
        start = QTextCursor(doc)
        start.setPosition(found.selectionStart())
        end = QTextCursor(doc)
        # The entry runs to the next run of ordinary spaces (its own are no-break spaces).
        text = doc.toPlainText()
        stop = text.find("   ", found.selectionStart())
        end.setPosition(stop if stop > 0 else len(text))
        assert legend.cursorRect(start).top() == legend.cursorRect(end).top(), glyph
    # Every line of the legend is shown: its height follows its lines.
    assert legend.height() >= int(doc.size().height())
